package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// wazero keeps compiled code on disk, one file per module, and checks what
// it loads only in part: a CRC of the machine code, whose mismatch fails
// the compilation without removing the file (so every later run would fail
// too), and nothing over the table of function offsets that comes before
// it, whose damage would jump into the wrong code. So seedfall guards it.
// Each module is compiled in a runtime of its own whose compilation cache
// is a directory of its own,
//
//	<cache>/compiled/<first 32 hex digits of the wasm's sha256>-<flavour>/wazero-<version>-<arch>-<os>/<key>
//
// so that the one file there is known to be that module's (the flavour is
// budget or interruptible, with -profiled after it for the variant that a
// guest profile listens to, guestprof.go). Once compiled, the file's
// sha256 (compiledSum: all but the machine code, which wazero's CRC
// covers) is written beside it (<key>.sha256); before the next
// compilation the file is checked against it, and removed, with a note,
// when it does not match. A file without its hash (the process was killed
// between wazero's write and seedfall's) is removed too. When wazero's CRC
// fails, seedfall removes the file, says so and compiles again.

// compiledDir is the compilation cache directory of one module.
func (e *Engine) compiledDir(key modKey) string {
	flavour := "budget"
	if key.interruptible {
		flavour = "interruptible"
	}
	if key.profiled {
		flavour += "-profiled"
	}
	return filepath.Join(e.opts.CacheDir, "compiled", key.hash[:32]+"-"+flavour)
}

// compile compiles prog into c, in a runtime of its own.
func (e *Engine) compile(ctx context.Context, c *compiled, key modKey, prog *Program) error {
	bin := prog.bin
	if bin == nil {
		var err error
		if bin, err = os.ReadFile(prog.path); err != nil {
			return err
		}
		if sum := sha256.Sum256(bin); hex.EncodeToString(sum[:]) != prog.Hash {
			return fmt.Errorf("the module changed on disk after it was built (sha256 mismatch); run again")
		}
	}
	dir := e.compiledDir(key)
	unlock, err := guest.LockCompile(ctx, e.opts.CacheDir, key.hash)
	if err != nil {
		return err
	}
	defer unlock()
	if why := checkCompiled(dir, time.Now()); why != "" {
		e.note(fmt.Sprintf("seedfall: the cached compiled code of %s was corrupt (%s); compiling again", prog.Name, why))
	}
	cc, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return fmt.Errorf("compilation cache: %w", err)
	}
	c.cc = cc
	cfg := wazero.NewRuntimeConfigCompiler().WithCompilationCache(cc).WithCloseOnContextDone(key.interruptible)
	if key.profiled {
		// Both the guest and the host modules tell the profile of calls.
		ctx = experimental.WithFunctionListenerFactory(ctx, gpFactory{names: guest.GoFuncNames(bin)})
	}
	c.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
	if err := wasi.Instantiate(ctx, c.rt); err != nil {
		return err
	}
	// A module with the snapshot point is compiled without its data
	// segments (snapshot.go).
	c.pa, bin = newPausable(bin)
	c.m, err = c.rt.CompileModule(ctx, bin)
	if err != nil && strings.Contains(err.Error(), "compilationcache") {
		// Damage that the hash did not see (the file was never sealed):
		// wazero would fail on it forever.
		e.note(fmt.Sprintf("seedfall: the cached compiled code of %s was corrupt (%v); compiling again", prog.Name, err))
		clearCompiled(dir)
		c.m, err = c.rt.CompileModule(ctx, bin)
	}
	if err != nil {
		return err
	}
	if c.pa != nil {
		c.pa.setCompiled(c.m)
	}
	sealCompiled(dir)
	return nil
}

// compiledFiles calls f with the path and name of each file in the
// version directories that wazero makes in dir.
func compiledFiles(dir string, f func(path, name string)) {
	subs, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, sub := range subs {
		if !sub.IsDir() {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(dir, sub.Name()))
		if err != nil {
			continue
		}
		for _, ent := range ents {
			if !ent.IsDir() {
				f(filepath.Join(dir, sub.Name(), ent.Name()), ent.Name())
			}
		}
	}
}

// checkCompiled removes from dir every file that wazero must not load: a
// file whose hash does not match it (and then says why), one without its
// hash, a hash without its file, and wazero's temporary files of a writer
// that was killed.
func checkCompiled(dir string, now time.Time) (why string) {
	compiledFiles(dir, func(path, name string) {
		switch {
		case strings.HasSuffix(name, ".tmp"):
			removeOld(path, now)
		case strings.HasSuffix(name, ".sha256"):
			if _, err := os.Stat(strings.TrimSuffix(path, ".sha256")); os.IsNotExist(err) {
				os.Remove(path)
			}
		default:
			want, err := os.ReadFile(path + ".sha256")
			if err != nil {
				os.Remove(path)
				return
			}
			got, err := compiledSum(path)
			if err != nil || got != string(want) {
				os.Remove(path)
				os.Remove(path + ".sha256")
				why = "sha256 mismatch"
			}
		}
	})
	return why
}

// sealCompiled writes the hash of each compiled file in dir that has none.
func sealCompiled(dir string) {
	compiledFiles(dir, func(path, name string) {
		if strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".sha256") {
			return
		}
		if _, err := os.Stat(path + ".sha256"); err == nil {
			return
		}
		if sum, err := compiledSum(path); err == nil {
			fsutil.WriteFile(path+".sha256", []byte(sum), 0o644) // best effort: unsealed means compiled again
		}
	})
}

// clearCompiled removes every file of wazero's in dir.
func clearCompiled(dir string) {
	compiledFiles(dir, func(path, name string) {
		if !strings.HasSuffix(name, ".tmp") {
			os.Remove(path)
		}
	})
}

// compiledSum hashes a file of wazero's compiled code, all but the machine
// code in it: that is nearly the whole file (tens of megabytes for a big
// guest, which would cost a cached start as much again as loading it), and
// wazero checks it with a CRC of its own, stored after it and hashed here.
// wazero's format (wazevo, engine_cache.go) is
//
//	"WAZEVO", version length (1 byte), version, function count (4 bytes),
//	an offset per function (8 bytes each), code length (8 bytes), code,
//	CRC of the code (4 bytes), source map, exception tables.
//
// A file that does not parse as that is hashed whole.
func compiledSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := fi.Size()
	h := sha256.New()
	whole := func() (string, error) {
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	head := make([]byte, 7+255+4)
	if n, _ := f.ReadAt(head, 0); n < 7 || string(head[:6]) != "WAZEVO" || n < 7+int(head[6])+4 {
		return whole()
	}
	v := int64(head[6])
	nfunc := int64(binary.LittleEndian.Uint32(head[7+v:]))
	codeLenAt := 7 + v + 4 + 8*nfunc
	if codeLenAt+8 > size {
		return whole()
	}
	prefix := make([]byte, codeLenAt+8)
	if _, err := f.ReadAt(prefix, 0); err != nil {
		return "", err
	}
	codeLen := int64(binary.LittleEndian.Uint64(prefix[codeLenAt:]))
	codeEnd := codeLenAt + 8 + codeLen
	if codeLen < 0 || codeEnd < codeLenAt || codeEnd+4 > size {
		return whole()
	}
	h.Write(prefix)
	if _, err := io.Copy(h, io.NewSectionReader(f, codeEnd, size-codeEnd)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sweepAge: a temporary file this old has no live writer (each is written
// in one go).
const sweepAge = time.Minute

func removeOld(path string, now time.Time) {
	if fi, err := os.Lstat(path); err == nil && now.Sub(fi.ModTime()) >= sweepAge {
		os.Remove(path)
	}
}

// sweepEngineCache removes the temporary files that killed processes left
// in the engine's parts of the cache: wazero's half-written compiled code,
// and call-counting modules (preempt.go) half written. The build package
// sweeps its own parts.
func sweepEngineCache(cache string) {
	now := time.Now()
	if ents, err := os.ReadDir(filepath.Join(cache, "compiled")); err == nil {
		for _, ent := range ents {
			if ent.IsDir() {
				compiledFiles(filepath.Join(cache, "compiled", ent.Name()), func(path, name string) {
					if strings.HasSuffix(name, ".tmp") {
						removeOld(path, now)
					}
				})
			}
		}
	}
	if ents, err := os.ReadDir(filepath.Join(cache, "preempt")); err == nil {
		for _, ent := range ents {
			if strings.HasPrefix(ent.Name(), "calls-") {
				removeOld(filepath.Join(cache, "preempt", ent.Name()), now)
			}
		}
	}
}
