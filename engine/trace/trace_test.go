package trace

import (
	"fmt"
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

// A bounded trace keeps its first lines, then its last, with one line in
// between for the rest; its digest is the one of a trace that keeps all.
func TestBoundedLines(t *testing.T) {
	all, kept := New(), NewBounded(10*LineCost, 5*LineCost)
	for i := 0; i < 100; i++ {
		node := []string{"a", "b"}[i%2]
		l := Line{At: int64(i) * 1e6, Node: node, Inc: 1, Kind: Stdout, Text: strings.Repeat("x", i%3)}
		all.Add(l)
		kept.Add(l)
	}
	if all.Digest("v") != kept.Digest("v") {
		t.Fatal("the digest depends on what the trace keeps")
	}
	lines := kept.Lines()
	var gaps []Line
	for _, l := range lines {
		if l.Gap() {
			gaps = append(gaps, l)
		}
	}
	if len(gaps) != 1 {
		t.Fatalf("%d gap lines:\n%s", len(gaps), Render(lines, ""))
	}
	// Each line costs LineCost and up to 2 bytes of text: 9 fit the head
	// for sure, and 4 the tail.
	head, tail := lines[:len(lines)-1], lines
	for i, l := range lines {
		if l.Gap() {
			head, tail = lines[:i], lines[i+1:]
		}
	}
	if len(head) < 9 || len(tail) < 4 || head[0].At != 0 || tail[len(tail)-1].At != 99e6 {
		t.Fatalf("head %d lines, tail %d:\n%s", len(head), len(tail), Render(lines, ""))
	}
	for _, part := range [][]Line{head, tail} {
		for i := 1; i < len(part); i++ {
			if part[i].At != part[i-1].At+1e6 {
				t.Fatalf("lines missing inside the kept part:\n%s", Render(lines, ""))
			}
		}
	}
	n, bytes := kept.Dropped()
	wantBytes := int64(0)
	for i := len(head); i < 100-len(tail); i++ {
		wantBytes += int64(i % 3)
	}
	if n != 100-len(head)-len(tail) || bytes != wantBytes {
		t.Fatalf("Dropped() = %d lines, %d bytes; want %d, %d", n, bytes, 100-len(head)-len(tail), wantBytes)
	}
	g := gaps[0]
	want := fmt.Sprintf("%d lines (%d bytes) from %s to %s not kept: a run keeps the first 640 bytes and the last 320 bytes of its lines in memory; the digest covers every line",
		n, bytes, AppendTime(nil, int64(len(head))*1e6, 0), AppendTime(nil, int64(99-len(tail))*1e6, 0))
	if g.Text != want || g.At != int64(len(head))*1e6 || g.Node != "world" || g.Kind != Event {
		t.Fatalf("gap line %q\nwant text %q", g.String(), want)
	}
	// Logs of one node show the gap, which is about every node.
	if out := Render(lines, "a"); !strings.Contains(out, "world - "+want) || strings.Contains(out, " b#1 ") {
		t.Fatalf("Render for node a:\n%s", out)
	}
	// A trace that kept everything has no gap line.
	for _, l := range all.Lines() {
		if l.Gap() {
			t.Fatal("an unbounded trace has a gap line")
		}
	}
	if len(all.Lines()) != 100 {
		t.Fatalf("%d lines kept of 100", len(all.Lines()))
	}
}

// The tail is a queue: however many lines pass through it, it holds no
// more than about twice what it keeps, and Lines is the same whether asked
// once or often.
func TestBoundedTailStaysSmall(t *testing.T) {
	tr := NewBounded(0, 100*LineCost)
	for i := 0; i < 1_000_000; i++ {
		tr.Add(Line{At: int64(i), Node: "n", Kind: Stdout})
		if cap(tr.tail) > 4096 {
			t.Fatalf("after %d lines the tail's slice holds %d", i, cap(tr.tail))
		}
	}
	a, b := tr.Lines(), tr.Lines()
	if len(a) != 101 || len(b) != 101 || !a[0].Gap() || a[1].At != 1_000_000-100 || a[100].At != 999_999 {
		t.Fatalf("got %d lines, first %q", len(a), a[0].String())
	}
	if n, _ := tr.Dropped(); n != 1_000_000-100 {
		t.Fatalf("Dropped() = %d", n)
	}
}
