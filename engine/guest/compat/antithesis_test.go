package compat

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sdkDir is where the go command keeps version v of the Antithesis SDK, or
// "" when it has not downloaded it (the test then skips that version: it
// does not reach the network).
func sdkDir(t *testing.T, v string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("go env: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "github.com", "antithesishq", "antithesis-sdk-go@"+v)
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return ""
	}
	return dir
}

// copySDK copies the SDK's go.mod and the packages a program uses.
func copySDK(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	for _, d := range []string{".", "internal", "internal/json", "assert", "lifecycle", "random"} {
		entries, err := os.ReadDir(filepath.Join(from, d))
		if err != nil {
			continue // internal/json is new in v0.9.0
		}
		os.MkdirAll(filepath.Join(to, d), 0o755)
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !(strings.HasSuffix(name, ".go") || name == "go.mod") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(from, d, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to, d, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return to
}

func antithesisShim(t *testing.T) *Shim {
	for _, s := range Shims() {
		if s.Module == AntithesisSDK {
			return s
		}
	}
	t.Fatal("no shim registered for the Antithesis SDK")
	return nil
}

func TestAntithesisShimIsAlwaysOn(t *testing.T) {
	s := antithesisShim(t)
	if !s.Always {
		t.Error("the SDK shim must apply without compat_overlay")
	}
	if !Wanted([]byte("module x\n\nrequire github.com/antithesishq/antithesis-sdk-go v0.9.0\n")) {
		t.Error("a go.mod requiring the SDK does not want the overlay")
	}
	if !known(s, "v0.9.0") || known(s, "v0.3.8") {
		t.Errorf("versions %v: want v0.9.0 and not v0.3.8", s.Versions)
	}
}

// Every verified version that the module cache holds: the shim's files
// build for wasip1 (where the bridge applies) and for linux (where the
// overlay never applies, but its files must not break the package), and
// the bridge is what wasip1 compiles.
func TestAntithesisShimBuildsEveryVersion(t *testing.T) {
	s := antithesisShim(t)
	built := 0
	for _, v := range s.Versions {
		dir := sdkDir(t, v)
		if dir == "" {
			t.Logf("%s: not in the module cache, skipped", v)
			continue
		}
		built++
		t.Run(v, func(t *testing.T) {
			// The go command refuses an overlay of files beneath
			// GOMODCACHE: build a copy of the packages.
			dir := copySDK(t, dir)
			files, err := s.Files(Module{Path: AntithesisSDK, Version: v, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(v, "-default-no-op") {
				if len(files) != 0 {
					t.Errorf("%s is a no-op build of the SDK, yet the shim patches %d files", v, len(files))
				}
				return
			}
			for _, rel := range []string{"internal/seedfall_wasip1.go", "internal/seedfall.go", "internal/voidstar_handler_noop.go", "assert/tracker.go"} {
				if files[rel] == nil {
					t.Errorf("no %s", rel)
				}
			}
			if !strings.HasSuffix(strings.SplitN(string(files["internal/voidstar_handler_noop.go"]), "\n", 2)[0], "&& !wasip1") {
				t.Errorf("the no-op handler still builds for wasip1")
			}
			if n := strings.Count(string(files["assert/tracker.go"]), "internal.SeedfallEveryHit"); n < 2 {
				t.Errorf("tracker.go mentions SeedfallEveryHit %d times, want 2 or more", n)
			}
			tmp := t.TempDir()
			replace := map[string]string{}
			for rel, b := range files {
				p := filepath.Join(tmp, strings.ReplaceAll(rel, "/", "_"))
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				replace[filepath.Join(dir, filepath.FromSlash(rel))] = p
			}
			ovl, _ := json.Marshal(map[string]any{"Replace": replace})
			ovlPath := filepath.Join(tmp, "overlay.json")
			if err := os.WriteFile(ovlPath, ovl, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, target := range [][2]string{{"wasip1", "wasm"}, {"linux", "amd64"}} {
				cmd := exec.Command("go", "vet", "-overlay", ovlPath, "./internal", "./assert", "./lifecycle", "./random")
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOOS="+target[0], "GOARCH="+target[1], "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s/%s: go vet: %v\n%s", target[0], target[1], err, out)
				}
			}
			// wasip1 compiles the bridge and not the no-op handler.
			cmd := exec.Command("go", "list", "-overlay", ovlPath, "-f", "{{.GoFiles}}", "./internal")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "seedfall_wasip1.go") || strings.Contains(string(out), "voidstar_handler_noop.go") {
				t.Errorf("wasip1 compiles %s", out)
			}
		})
	}
	if built == 0 {
		t.Skip("no verified version of the SDK in the module cache")
	}
}

func TestAntithesisShimRefusesUnknownShapes(t *testing.T) {
	if _, err := everyHit("package assert\n\nfunc emit() {}\n"); err == nil {
		t.Error("a tracker without a known gate was patched")
	}
	dir := t.TempDir()
	for rel, s := range map[string]string{
		"internal/emit.go":                  "package internal\n\ntype libHandler interface{ output(message []rune) }\n",
		"internal/voidstar_handler_noop.go": "//go:build !linux\n\npackage internal\n",
		"assert/tracker.go":                 "package assert\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
		os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644)
	}
	if _, err := antithesisFiles(Module{Path: AntithesisSDK, Version: "v9.9.9", Dir: dir}); err == nil {
		t.Error("an SDK of an unknown shape got a shim")
	}
}
