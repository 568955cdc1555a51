package cover

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testRun is a run of two programs that share a package: the server ran
// blocks 0 and 2 of store.go, the client block 1.
func testRun() *Run {
	m := &Map{
		Pkgs:  []Pkg{{Path: "example.com/m/store", Name: "store", Module: "example.com/m"}},
		Funcs: []Func{{Pkg: 0, Name: "Put", File: "example.com/m/store/store.go"}, {Pkg: 0, Name: "Get", File: "example.com/m/store/store.go"}},
		Units: []Unit{
			{Func: 0, StLine: 5, StCol: 29, EnLine: 7, EnCol: 12, Stmts: 2},
			{Func: 0, StLine: 7, StCol: 12, EnLine: 9, EnCol: 3, Stmts: 1},
			{Func: 1, StLine: 13, StCol: 27, EnLine: 16, EnCol: 2, Stmts: 2},
		},
	}
	hit := NewSet()
	hit.Add("server", 0)
	hit.Add("server", 2)
	hit.Add("client", 1)
	return &Run{Maps: map[string]*Map{"server": m, "client": m}, Hit: hit}
}

func TestProfileWriteIsGoFormat(t *testing.T) {
	var b bytes.Buffer
	if err := testRun().WriteProfile(&b); err != nil {
		t.Fatal(err)
	}
	// One line per block though two programs have it, and a block ran
	// if it ran in either.
	want := "mode: set\n" +
		"example.com/m/store/store.go:5.29,7.12 2 1\n" +
		"example.com/m/store/store.go:7.12,9.3 1 1\n" +
		"example.com/m/store/store.go:13.27,16.2 2 1\n"
	if b.String() != want {
		t.Fatalf("profile:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestProfileRoundTripAndMerge(t *testing.T) {
	a := "mode: set\nx.com/a.go:1.1,2.2 1 0\nx.com/a.go:3.1,4.2 2 1\nx.com/b.go:1.1,1.9 1 0\n"
	b := "mode: count\nx.com/b.go:1.1,1.9 1 7\nx.com/a.go:1.1,2.2 1 0\n"
	pa, err := ReadProfile(strings.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(pa.Bytes()); got != a {
		t.Fatalf("read then written:\n%s\nwant:\n%s", got, a)
	}
	pb, err := ReadProfile(strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(pa, nil, pb)
	want := "mode: set\nx.com/a.go:1.1,2.2 1 0\nx.com/a.go:3.1,4.2 2 1\nx.com/b.go:1.1,1.9 1 1\n"
	if got := string(m.Bytes()); got != want {
		t.Fatalf("merged:\n%s\nwant:\n%s", got, want)
	}
	if hit, all := m.Stmts(); hit != 3 || all != 4 {
		t.Fatalf("merged stmts %d of %d, want 3 of 4", hit, all)
	}
	// The order of the inputs does not matter.
	if !bytes.Equal(Merge(pb, pa).Bytes(), m.Bytes()) {
		t.Fatal("merge depends on the order of its inputs")
	}
}

func TestReadProfileErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "line 1: the file is empty"},
		{"hello\n", `line 1: "hello" is not a coverage profile's first line`},
		{"mode: fancy\n", `line 1: mode "fancy"`},
		{"mode: set\nx.go:1.1,2.1 1 1\nx.go 1 1\n", "line 3: no file name"},
		{"mode: set\nx.go:1.1,2.x 1 1\n", `line 2: end column "x" is not a number`},
		{"mode: set\nx.go:3.1,2.1 1 1\n", "line 2: the block ends before it starts"},
		{"mode: set\nx.go:1.1;2.1 1 1\n", "line 2: no comma"},
		{"mode: set\nx.go:1.1,2.1 1\n", "line 2: not three fields"},
		{"mode: set\nx.go:0.1,2.1 1 1\n", "line 2: lines and columns count from 1"},
		{"mode: set\n" + strings.Repeat("x", 5000) + "\n", "line 2: a line longer than 4096 bytes"},
	} {
		_, err := ReadProfile(strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ReadProfile(%.30q) = %v, want an error starting %q", c.in, err, c.want)
		}
		var pe *ProfileError
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("ReadProfile(%.30q): %T, not a *ProfileError", c.in, err)
		}
	}
	// With the file's name, the error is file:line.
	pe := &ProfileError{Path: "out/coverage.out", Line: 3, Msg: "no file name"}
	if pe.Error() != "out/coverage.out:3: no file name" {
		t.Errorf("ProfileError = %q", pe.Error())
	}
}

// TestReadProfileBounded: a file of endless blocks is refused, not read
// into memory whole.
func TestReadProfileBounded(t *testing.T) {
	defer func(n int) { maxProfileBlocks = n }(maxProfileBlocks)
	maxProfileBlocks = 1000
	line := []byte("x.go:1.1,2.1 1 1\n")
	r := &repeatReader{head: []byte("mode: set\n"), line: line, left: maxProfileBlocks + 10}
	_, err := ReadProfile(r)
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("err = %v, want too many blocks", err)
	}
}

type repeatReader struct {
	head, line []byte
	left       int
	buf        []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && (len(r.head) > 0 || r.left > 0) {
		if len(r.head) > 0 {
			r.buf, r.head = append(r.buf, r.head...), nil
			continue
		}
		r.buf = append(r.buf, r.line...)
		r.left--
	}
	if len(r.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func TestMergeRun(t *testing.T) {
	a := testRun()
	b := testRun()
	b.Hit = NewSet()
	b.Hit.Add("server", 1)
	m := MergeRun(MergeRun(nil, a), b)
	if got := m.Hit.Units("server"); fmt.Sprint(got) != "[0 1 2]" {
		t.Fatalf("server units %v, want [0 1 2]", got)
	}
	// A program whose binary changed keeps its own numbering.
	c := &Run{Maps: map[string]*Map{"server": {Funcs: a.Maps["server"].Funcs[:1], Units: a.Maps["server"].Units[:1]}}, Hit: NewSet()}
	c.Hit.Add("server", 0)
	m = MergeRun(m, c)
	if len(m.Maps) != 3 || m.Maps["server#2"] != c.Maps["server"] || !m.Hit.Has("server#2", 0) {
		t.Fatalf("maps %v: want server#2 for the changed binary", m.Maps)
	}
}

// TestGoToolCoverReads: `go tool cover -func` reads what WriteProfile
// writes, as it reads `go test -coverprofile`.
func TestGoToolCoverReads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go tool cover")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "store"), 0o755)
	os.WriteFile(filepath.Join(dir, "store", "store.go"), []byte(storeSrc), 0o644)
	prof := filepath.Join(dir, "coverage.out")
	os.WriteFile(prof, testRun().Profile().Bytes(), 0o644)
	cmd := exec.Command(goBin, "tool", "cover", "-func="+prof)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool cover -func: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "total:") || !strings.Contains(string(out), "100.0%") {
		t.Fatalf("go tool cover -func printed:\n%s", out)
	}
}

const storeSrc = `package store

var m = map[string]string{}

func Put(k, v string) error {
	m[k] = v
	if v == "" {
		return nil
	}
	return nil
}

func Get(k string) string {
	v := m[k]
	return v
}
`
