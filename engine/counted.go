package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/world"
)

// countPrograms replaces every program of a world by its call-counting
// variant (guest.CountCalls), kept in the cache next to the build: counted
// calls are what CPU time and preemption are measured in. A program the
// engine cannot count (a prebuilt module without the loop budget) runs as
// built, with free CPU and no preemption, unless the world asks for a
// preemption strategy, which is then refused. Preemption needs the runtime
// layout of Go 1.26; under strategy none a program of another release is
// counted but never preempted.
func (e *Engine) countPrograms(w *world.World, progs []*Program) error {
	strategy := w.Preempt.Strategy != world.StrategyNone && w.Preempt.Strategy != ""
	key := "preempt.strategy"
	if w.Preempt.Interleave {
		key = "preempt.interleave"
	}
	dir := filepath.Join(e.opts.CacheDir, "preempt")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return guest.CacheErr(err)
	}
	for _, prog := range progs {
		bin := prog.bin
		verr := e.checkGoVersion(prog, bin)
		if strategy && verr != nil {
			return w.Errorf(key, "%v", verr)
		}
		if !prog.budget {
			if strategy {
				return w.Errorf(key, "cannot preempt %s: its module could not be instrumented; set preempt.strategy to none", prog.Name)
			}
			continue
		}
		counted, hash, err := rewritten(dir, bin, w.Preempt.Loops)
		if errors.Is(err, errCache) {
			return err
		}
		if err != nil {
			if strategy {
				return w.Errorf(key, "cannot preempt %s: %v; set preempt.strategy to none", prog.Name, err)
			}
			continue
		}
		path := filepath.Join(dir, hash+".wasm")
		prog.path, prog.Hash, prog.bin, prog.mem = path, hash, counted, e.memPool(hash, counted)
		prog.counted, prog.preempts = true, verr == nil
	}
	return nil
}

var goRelease = regexp.MustCompile(`go1\.[0-9]+\.[0-9]+`)

// checkGoVersion refuses a program built by a Go release whose runtime
// layout preemptGoroutine does not know.
func (e *Engine) checkGoVersion(prog *Program, bin []byte) error {
	var version string
	if prog.Pkg != "" {
		goroot, err := e.builder.GOROOT()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
		if err != nil {
			return fmt.Errorf("cannot read the Go version in %s: %v", goroot, err)
		}
		version, _, _ = strings.Cut(string(b), "\n")
	} else if v := goRelease.Find(bin); v != nil {
		version = string(v) // the runtime's buildVersion
	}
	version = strings.TrimSpace(version)
	if version != preemptGo && !strings.HasPrefix(version, preemptGo+".") {
		if version == "" {
			version = "an unknown Go release"
		}
		return fmt.Errorf("%s was built with %s, but preemption knows the runtime of %s only: build with %s, or set preempt.strategy to none", prog.Name, version, preemptGo, preemptGo)
	}
	return nil
}

// errCache wraps a failure to write the seedfall cache.
var errCache = errors.New("seedfall cache")

// rewritten is bin counted (guest.CountCalls) and, without loops, made to
// pause in host calls (guest.HostPauses), kept in dir as HASH.wasm, with
// HASH. The rewrite takes a good part of a second for a large guest, and
// every seedfall command that opens a world needs it, so it is looked up
// first: a file named for bin, loops and this seedfall's own build
// (rewriterID) holds the hash of the module the rewrite gave. A missing,
// unreadable or damaged entry costs a rewrite, nothing else.
func rewritten(dir string, bin []byte, loops bool) ([]byte, string, error) {
	variant := "calls"
	if loops {
		variant = "loops"
	}
	// Without a name for this build (its executable unreadable), nothing
	// is looked up or kept: another build's rewrite must not pass for it.
	id := rewriterID()
	in := sha256.Sum256(bin)
	key := sha256.Sum256(fmt.Appendf(nil, "%x %s %s", in, variant, id))
	ref := filepath.Join(dir, fmt.Sprintf("from-%x.ref", key))
	if b, err := os.ReadFile(ref); err == nil && id != "" {
		hash := strings.TrimSpace(string(b))
		if out, err := os.ReadFile(filepath.Join(dir, hash+".wasm")); err == nil {
			if sum := sha256.Sum256(out); hex.EncodeToString(sum[:]) == hash {
				return out, hash, nil
			}
			os.Remove(filepath.Join(dir, hash+".wasm")) // damaged: written again below
		}
	}
	counted, err := guest.CountCalls(bin, loops)
	if err != nil {
		return nil, "", err
	}
	if !loops {
		// Guests that pause instead of waiting in host calls
		// (wasi/pause.go). A module HostPauses cannot change (not Go's,
		// or without ExportPause's exports) waits in them.
		if paused, err := guest.HostPauses(counted); err == nil {
			counted = paused
		}
	}
	sum := sha256.Sum256(counted)
	hash := hex.EncodeToString(sum[:])
	path := filepath.Join(dir, hash+".wasm")
	if _, err := os.Stat(path); err != nil {
		if err := writeNew(dir, "calls-", path, counted); err != nil {
			return nil, "", fmt.Errorf("%w: %v", errCache, err)
		}
	}
	if id != "" {
		writeNew(dir, "ref-", ref, []byte(hash+"\n")) // without it, the next run rewrites again
	}
	return counted, hash, nil
}

// writeNew writes b to path through a temporary file in dir, so that a
// reader never sees it half written.
func writeNew(dir, prefix, path string, b []byte) error {
	tmp, err := os.CreateTemp(dir, prefix)
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// rewriterID names this seedfall's build, so that a rewrite cached by
// another build (another version of guest's rewriting) is not taken for
// this one's: Go's build ID, which the linker writes near the start of
// the executable, or failing that the executable's hash; "" when the
// executable cannot be read.
var rewriterID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	const mark = "\xff Go build ID: \""
	if i := bytes.Index(head[:n], []byte(mark)); i >= 0 {
		id := head[i+len(mark) : n]
		if j := bytes.IndexByte(id, '"'); j > 0 {
			return string(id[:j])
		}
	}
	h := sha256.New()
	h.Write(head[:n])
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
})
