//go:build !wasip1

package sim

import (
	"io/fs"
	"strings"
	"testing"
)

func TestSource(t *testing.T) {
	src := Source()
	mod, err := fs.ReadFile(src, "go.mod")
	if err != nil {
		t.Fatalf("Source() has no go.mod: %v", err)
	}
	if !strings.Contains(string(mod), "module github.com/seedfall/seedfall/sim\n") {
		t.Errorf("go.mod in Source() does not declare the sim module:\n%s", mod)
	}
	for _, name := range []string{"sim.go", "host_wasip1.go", "host_other.go", "source.go"} {
		b, err := fs.ReadFile(src, name)
		if err != nil {
			t.Errorf("Source() lacks %s: %v", name, err)
			continue
		}
		if !strings.Contains(string(b), "package sim") {
			t.Errorf("%s in Source() is not part of package sim", name)
		}
	}
	// A guest build must find the wasmimport, or SetupComplete would be a
	// no-op inside seedfall too.
	host, _ := fs.ReadFile(src, "host_wasip1.go")
	if !strings.Contains(string(host), "//go:wasmimport seedfall setup_complete") {
		t.Errorf("host_wasip1.go does not import seedfall.setup_complete")
	}
	if !strings.Contains(string(host), "//go:wasmimport seedfall buggify") {
		t.Errorf("host_wasip1.go does not import seedfall.buggify")
	}
}
