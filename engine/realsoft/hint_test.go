package realsoft

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/world"
)

// A bbolt program built without compat_overlay fails with the compiler's
// message and the hint docs/compat.md shows.
func TestBboltWithoutCompatOverlaySaysSo(t *testing.T) {
	t.Parallel()
	w, err := world.Load("../../examples/real/bboltkv/seedfall.fixed.json")
	if err != nil {
		t.Fatal(err)
	}
	w.CompatOverlay = false
	_, err = testEngine(t).Prepare(context.Background(), w)
	if err == nil {
		t.Fatal("bbolt built without compat_overlay")
	}
	hint := `go.etcd.io/bbolt v1.5.0: seedfall has a shim for it under compat_overlay; set "compat_overlay": true in the world file (docs/compat.md)`
	if !strings.Contains(err.Error(), "undefined array length MaxAllocSize") || !strings.HasSuffix(err.Error(), "\n    "+hint) {
		t.Errorf("error:\n%v\nwant the compiler's message, then:\n%s", err, hint)
	}
	doc, err := os.ReadFile("../../docs/compat.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "\n"+hint+"\n") {
		t.Errorf("docs/compat.md does not show the hint as it is")
	}
}
