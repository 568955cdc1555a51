package compat

import (
	"bytes"
	"embed"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// The Antithesis SDK (github.com/antithesishq/antithesis-sdk-go) builds for
// wasip1, but there its internal package picks the local handler: records
// go to $ANTITHESIS_SDK_LOCAL_OUTPUT or nowhere, so a false assert.Always
// would pass every seed. The shim gives the internal package a wasip1
// handler that turns what the SDK emits into seedfall's host calls (see
// shims/antithesis/seedfall_wasip1.go.in), and makes the assert package
// emit every evaluation under seedfall rather than only the first true and
// first false one, so that hits count as sim's do.
//
// Files of the module it writes (paths relative to the module):
//
//	internal/seedfall_wasip1.go        new: the handler (wasip1 only)
//	internal/seedfall.go               new: SeedfallEveryHit
//	internal/voidstar_handler_noop.go  its build constraint gains !wasip1
//	assert/tracker.go                  its emission gate yields to SeedfallEveryHit
//
// Every verified version has the same internal package: a libHandler
// interface with output and random, a localHandler type, and
// init_in_antithesis defined in voidstar_handler_noop.go for
// non-linux/amd64. They differ in output's parameter ([]byte from v0.9.0,
// string before), in whether that file declares sdkRunningInDegradedMode
// (v0.8.0 on), and in the tracker's gate (counts before v0.8.0, flags and
// an early trackerEmitted from v0.8.0). v0.3.8 and older have no
// voidstar_handler_noop.go (their emit.go needs cgo) and do not build for
// wasip1 at all. v0.8.0-default-no-op compiles every call to nothing
// without the enable_antithesis_sdk tag, and is left as it is.

//go:embed shims/antithesis/*.go.in
var antithesisFS embed.FS

// AntithesisSDK is the module path of the Antithesis Go SDK.
const AntithesisSDK = "github.com/antithesishq/antithesis-sdk-go"

func init() {
	register(&Shim{
		Module:   AntithesisSDK,
		Versions: []string{"v0.5.0", "v0.6.0", "v0.7.0", "v0.7.2", "v0.8.0", "v0.8.0-default-no-op", "v0.9.0"},
		Always:   true,
		What:     "assertions, lifecycle and random of the Antithesis SDK go to seedfall",
		Files:    antithesisFiles,
	})
}

// antithesisFiles writes the shim's files for the SDK whose files are in
// m.Dir.
func antithesisFiles(m Module) (map[string][]byte, error) {
	if strings.HasSuffix(m.Version, "-default-no-op") {
		// The variant NATS requires: its assert, lifecycle and random
		// packages are no-ops unless built with -tags enable_antithesis_sdk,
		// which seedfall never sets, so there is nothing to bridge.
		return nil, nil
	}
	read := func(rel string) (string, error) {
		b, err := os.ReadFile(filepath.Join(m.Dir, filepath.FromSlash(rel)))
		return string(b), err
	}
	emit, err := read("internal/emit.go")
	if err != nil {
		return nil, err
	}
	noop, err := read("internal/voidstar_handler_noop.go")
	if err != nil {
		return nil, err
	}
	tracker, err := read("assert/tracker.go")
	if err != nil {
		return nil, err
	}

	var data struct {
		Version  string
		Output   string // the type of libHandler.output's parameter
		Degraded bool   // declare sdkRunningInDegradedMode
	}
	data.Version = m.Version
	switch {
	case strings.Contains(emit, "output(message []byte)"):
		data.Output = "[]byte"
	case strings.Contains(emit, "output(message string)"):
		data.Output = "string"
	default:
		return nil, fmt.Errorf("internal/emit.go: no libHandler.output of a known shape")
	}
	if !strings.Contains(emit, "type localHandler struct") || !strings.Contains(noop, "func init_in_antithesis() libHandler") {
		return nil, fmt.Errorf("internal: no localHandler or init_in_antithesis of a known shape")
	}
	data.Degraded = strings.Contains(noop, "sdkRunningInDegradedMode")

	out := map[string][]byte{}
	for name, tmpl := range map[string]string{
		"internal/seedfall_wasip1.go": "seedfall_wasip1.go.in",
		"internal/seedfall.go":        "seedfall.go.in",
	} {
		src, err := antithesisFS.ReadFile("shims/antithesis/" + tmpl)
		if err != nil {
			return nil, err
		}
		t, err := template.New(tmpl).Parse(string(src))
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return nil, err
		}
		formatted, err := format.Source(b.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s: %v", tmpl, err)
		}
		out[name] = formatted
	}

	// The no-op handler is for every platform but linux/amd64, wasip1
	// included: leave wasip1 to seedfall's.
	first, rest, _ := strings.Cut(noop, "\n")
	constraint, ok := strings.CutPrefix(first, "//go:build ")
	if !ok {
		return nil, fmt.Errorf("internal/voidstar_handler_noop.go: no //go:build line first")
	}
	out["internal/voidstar_handler_noop.go"] = []byte("//go:build (" + constraint + ") && !wasip1\n" + rest)

	patched, err := everyHit(tracker)
	if err != nil {
		return nil, fmt.Errorf("assert/tracker.go: %v", err)
	}
	out["assert/tracker.go"] = []byte(patched)
	return out, nil
}

// everyHit opens the assert package's emission gate when
// internal.SeedfallEveryHit is set. Two shapes are known: counts of passes
// and failures (before v0.8.0), and flags with trackerEmitted, the early
// test of the assertion functions (v0.8.0 on).
func everyHit(src string) (string, error) {
	const on = "internal.SeedfallEveryHit"
	patches := []struct{ old, new string }{
		{"if ti.PassCount == 0 {", "if ti.PassCount == 0 || " + on + " {"},
		{"if ti.FailCount == 0 {", "if ti.FailCount == 0 || " + on + " {"},
		{"if flag.Load() {", "if flag.Load() && !" + on + " {"},
		{"func trackerEmitted(id string, condition bool) bool {\n",
			"func trackerEmitted(id string, condition bool) bool {\n\tif " + on + " {\n\t\treturn false\n\t}\n"},
	}
	applied := map[string]bool{}
	for _, p := range patches {
		if strings.Contains(src, p.old) {
			src = strings.ReplaceAll(src, p.old, p.new)
			applied[p.old] = true
		}
	}
	counts := applied[patches[0].old] && applied[patches[1].old] && !applied[patches[2].old] && !applied[patches[3].old]
	flags := applied[patches[2].old] && applied[patches[3].old] && !applied[patches[0].old] && !applied[patches[1].old]
	if !counts && !flags {
		return "", fmt.Errorf("no emission gate of a known shape")
	}
	if !strings.Contains(src, `"github.com/antithesishq/antithesis-sdk-go/internal"`) {
		return "", fmt.Errorf("does not import the internal package")
	}
	return src, nil
}
