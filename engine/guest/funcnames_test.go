package guest

import (
	"testing"
)

// The name section of a Go module has the linker's mangled names; the
// runtime's table has Go's, which a profile shows.
func TestGoFuncNames(t *testing.T) {
	names := GoFuncNames(mustRawHello(t)) // data in thousands of segments, as the linker writes it
	for mangled, want := range map[string]string{
		"main.main":                 "main.main",
		"fmt.__pp_.doPrintln":       "fmt.(*pp).doPrintln",
		"internal_poll.__FD_.Write": "internal/poll.(*FD).Write",
	} {
		if got := names[mangled]; got != want {
			t.Errorf("%s: got %q, want %q", mangled, got, want)
		}
	}
	if names := GoFuncNames(helloNoData(t)); names != nil {
		t.Errorf("a module without Go's table: got %d names, want none", len(names))
	}
}

// helloNoData is the hello module without its data section.
func helloNoData(t *testing.T) []byte {
	secs, err := splitSections(mustRawHello(t))
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), wasmHeader...)
	for _, s := range secs {
		if s.id != sectionData {
			out = append(out, s.raw...)
		}
	}
	return out
}
