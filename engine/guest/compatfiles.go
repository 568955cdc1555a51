package guest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine/guest/compat"
)

// compatFiles returns the build's GOROOT overlay with compat_overlay's
// files added, and the directories of the patched copies of modules that
// the build's workspace uses in place of the originals. It asks the go
// command which packages the program depends on, and in which module
// versions, since shims are matched to versions.
func (b *Builder) compatFiles(ctx context.Context, p *buildPlan, req Request, env []string) (map[string][]byte, []string, error) {
	pkgs, err := b.listDeps(ctx, p.pkg, env)
	if err != nil {
		// go build will say what is wrong with the module, better than go
		// list would.
		return req.Overlay, nil, nil
	}
	files, err := compat.Overlay(p.env.GOROOT, pkgs, req.Compat)
	if err != nil {
		var ve *compat.VersionError
		if errors.As(err, &ve) {
			return nil, nil, p.userErr("%v", err)
		}
		return nil, nil, err
	}
	overlay := maps.Clone(req.Overlay)
	if overlay == nil {
		overlay = map[string][]byte{}
	}
	maps.Copy(overlay, files.GOROOT)
	var dirs []string
	for _, patch := range files.Modules {
		dir, err := patchedModule(p.cache, patch, b.note)
		if err != nil {
			return nil, nil, err
		}
		dirs = append(dirs, dir)
	}
	return overlay, dirs, nil
}

// patchedModule makes, once, a copy of a module with a shim's files in
// <cache>/compat/<hash>, and returns its directory. Test files, testdata,
// hidden files and nested modules are left out: a build never reads them.
func patchedModule(cache string, patch compat.Patch, note func(string)) (string, error) {
	m := patch.Module
	h := sha256.New()
	keyField(h, "module", m.Path+"@"+m.Version)
	keyField(h, "files", overlayHash(patch.Files))
	if m.Version == "" {
		// A local replacement (the tag rule takes files from those too)
		// changes as the user edits it: its files are part of the key.
		if err := hashTree(h, m.Dir); err != nil {
			return "", err
		}
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	return ensureDir(filepath.Join(cache, "compat", key), note, func(dir string) error {
		err := filepath.WalkDir(m.Dir, func(src string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(m.Dir, src)
			if err != nil || rel == "." {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if strings.HasPrefix(name, ".") || name == "testdata" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(src, "go.mod")); err == nil {
					return filepath.SkipDir
				}
				return os.MkdirAll(filepath.Join(dir, rel), 0o755)
			}
			if strings.HasSuffix(name, "_test.go") || !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
		})
		if err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
			// A module from before modules: the go command made up its
			// go.mod from the path alone, and so does the copy.
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+m.Path+"\n"), 0o644); err != nil {
				return err
			}
		}
		for _, rel := range sortedKeys(patch.Files) {
			dst := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, patch.Files[rel], 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}

// compatHint explains a failed build that compat_overlay would fix: a
// dependency seedfall has a shim for, or a call the generic shim adds.
func (b *Builder) compatHint(ctx context.Context, p *buildPlan, req Request, env []string, output []byte) string {
	if req.Compat {
		return ""
	}
	if pkgs, err := b.listDeps(ctx, p.pkg, env); err == nil {
		if mods := compat.Needing(pkgs); len(mods) > 0 {
			return fmt.Sprintf("\n%s: seedfall has a shim for it under compat_overlay; set \"compat_overlay\": true in the world file (docs/compat.md)",
				strings.Join(mods, ", "))
		}
	}
	if compat.GenericMissing(string(output)) {
		return "\nseedfall's compat_overlay adds mmap, flock and their constants to syscall and golang.org/x/sys/unix for wasip1; set \"compat_overlay\": true in the world file (docs/compat.md)"
	}
	return ""
}

// listDeps runs go list -deps on the package in dir for wasip1.
func (b *Builder) listDeps(ctx context.Context, dir string, env []string) ([]compat.Package, error) {
	cmd, err := b.command(ctx, dir, env, "list", "-e", "-deps", "-json=ImportPath,Dir,Module", ".")
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runCommand(cmd); err != nil {
		return nil, err
	}
	out := stdout.Bytes()
	type module struct {
		Path, Version, Dir string
		Replace            *module
	}
	var pkgs []compat.Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var lp struct {
			ImportPath, Dir string
			Module          *module
		}
		if err := dec.Decode(&lp); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		pkg := compat.Package{ImportPath: lp.ImportPath, Dir: lp.Dir}
		if m := lp.Module; m != nil {
			cm := &compat.Module{Path: m.Path, Version: m.Version, Dir: m.Dir}
			if r := m.Replace; r != nil {
				// A replacement by another module version is that version's
				// code; a local directory has no version.
				cm.Version, cm.Dir = r.Version, r.Dir
			}
			pkg.Module = cm
		}
		pkgs = append(pkgs, pkg)
	}
	return pkgs, nil
}
