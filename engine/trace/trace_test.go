package trace

import (
	"strings"
	"testing"
)

func TestRenderAndDigest(t *testing.T) {
	a, b := New(), New()
	for _, tr := range []*Trace{a, b} {
		tr.Add(Line{At: 0, Node: "server", Inc: 1, Kind: Event, Text: "start"})
		tr.Add(Line{At: 1204518233, Node: "server", Inc: 1, Kind: Stdout, Text: "listening"})
		tr.Add(Line{At: 61e9, Node: "client", Inc: 2, Kind: Stderr, Text: "oops"})
	}
	got := Render(a.Lines(), "")
	want := "     0.000000000 server#1 - start\n" +
		"     1.204518233 server#1 | listening\n" +
		"    61.000000000 client#2 ! oops\n"
	if got != want {
		t.Fatalf("render:\n%s\nwant:\n%s", got, want)
	}
	if only := Render(a.Lines(), "client"); strings.Contains(only, "server") {
		t.Fatalf("filter by node kept other nodes: %q", only)
	}
	if a.Digest("x") != b.Digest("x") {
		t.Fatal("same lines, different digests")
	}
	if a.Digest("x") == a.Digest("y") {
		t.Fatal("summary does not reach the digest")
	}
	d := a.Digest("x")
	b.Add(Line{At: 62e9, Node: "client", Inc: 2, Kind: Event, Text: "exit 0"})
	if b.Digest("x") == d {
		t.Fatal("an extra line does not change the digest")
	}
	if a.Digest("x") != d {
		t.Fatal("Digest changed the running state")
	}
}

func TestAppendTime(t *testing.T) {
	for ns, want := range map[int64]string{0: "0.000000000", 5: "0.000000005", 1e9: "1.000000000", 123456789012: "123.456789012", -5e8: "-0.500000000"} {
		if got := string(AppendTime(nil, ns, 0)); got != want {
			t.Errorf("AppendTime(%d) = %q, want %q", ns, got, want)
		}
	}
}
