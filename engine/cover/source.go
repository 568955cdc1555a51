package cover

import (
	"fmt"
	"github.com/seedfall/seedfall/engine/fsutil"
	"os"
	"path/filepath"
	"strings"
)

// ModuleSource finds source files in the modules that hold dirs (each
// module's root is found by walking up from a dir to its go.mod): a file
// "example.com/m/server/store.go" of module example.com/m is
// server/store.go under that root. A file of another module is not found.
func ModuleSource(dirs ...string) Source {
	roots := map[string]string{} // module path -> root
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if root, mod := fsutil.ModuleOf(d); mod != "" {
			if _, ok := roots[mod]; !ok {
				roots[mod] = root
			}
		}
	}
	return func(importPath string) ([]byte, error) {
		// The longest module path that holds the file: a nested module
		// owns its files.
		best := ""
		for mod := range roots {
			if strings.HasPrefix(importPath, mod+"/") && len(mod) > len(best) {
				best = mod
			}
		}
		if best == "" {
			return nil, fmt.Errorf("%s is in none of the world's modules", importPath)
		}
		rel := strings.TrimPrefix(importPath, best+"/")
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return nil, fmt.Errorf("%s is not a file of module %s", importPath, best)
		}
		return os.ReadFile(filepath.Join(roots[best], filepath.FromSlash(rel)))
	}
}
