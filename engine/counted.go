package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

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
		counted, err := guest.CountCalls(bin, w.Preempt.Loops)
		if err != nil {
			if strategy {
				return w.Errorf(key, "cannot preempt %s: %v; set preempt.strategy to none", prog.Name, err)
			}
			continue
		}
		if !w.Preempt.Loops {
			// Guests that pause instead of waiting in host calls
			// (wasi/pause.go). A module HostPauses cannot change (not
			// Go's, or without ExportPause's exports) waits in them.
			if paused, err := guest.HostPauses(counted); err == nil {
				counted = paused
			}
		}
		sum := sha256.Sum256(counted)
		hash := hex.EncodeToString(sum[:])
		path := filepath.Join(dir, hash+".wasm")
		if _, err := os.Stat(path); err != nil {
			tmp, err := os.CreateTemp(dir, "calls-")
			if err != nil {
				return err
			}
			_, err = tmp.Write(counted)
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(tmp.Name(), path)
			}
			if err != nil {
				os.Remove(tmp.Name())
				return fmt.Errorf("seedfall cache: %v", err)
			}
		}
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
