package cover

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reportProfile is store.go with Put's error path never run, and a file
// whose source is nowhere.
func reportProfile(t *testing.T) *Profile {
	p, err := ReadProfile(strings.NewReader("mode: set\n" +
		"example.com/m/store/store.go:5.29,7.12 2 1\n" +
		"example.com/m/store/store.go:7.12,9.3 1 0\n" +
		"example.com/m/store/store.go:13.27,16.2 2 1\n" +
		"example.com/m/gone/gone.go:3.14,5.2 1 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testSource(path string) ([]byte, error) {
	if path == "example.com/m/store/store.go" {
		return []byte(storeSrc), nil
	}
	return nil, errors.New("not found")
}

func TestReportText(t *testing.T) {
	var b bytes.Buffer
	r := NewReport(reportProfile(t), testSource)
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"coverage: 4 of 6 statements (66.7%) in 2 files of example.com/m\n",
		"  store/store.go  4/5   80.0%\n",
		"  gone/gone.go    0/1    0.0%\n",
		"never reached (2 statements):\n",
		"  store/store.go\n    Put  1 statement: lines 7-9\n",
		"  gone/gone.go (source not found)\n    -  1 statement: lines 3-5\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// Get ran whole: it is not listed as never reached.
	if strings.Contains(out, "Get") {
		t.Errorf("summary lists Get, which ran:\n%s", out)
	}
	// The JSON says the same.
	j, _ := json.Marshal(r)
	for _, want := range []string{`"stmts_reached":4,"stmts":6`, `"func":"Put","lines":[{"from":7,"to":9}]`, `"source_found":false`} {
		if !strings.Contains(string(j), want) {
			t.Errorf("JSON lacks %s: %s", want, j)
		}
	}
}

// TestHTMLMarksLines: on the page, a line that ran is green, one that
// never ran is red, the source is escaped, and a file without source is
// named, not shown.
func TestHTMLMarksLines(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, reportProfile(t), testSource, "seedfall.json"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	line := func(n string) string {
		m := regexp.MustCompile(`(?m)^<span class="ln"> *` + n + `</span>.*$`).FindString(page)
		if m == "" {
			t.Fatalf("no line %s on the page:\n%s", n, page)
		}
		return m
	}
	if l := line("8"); !strings.Contains(l, `<span class="cov0">		return nil</span>`) {
		t.Errorf("line 8 (never run) is not marked never reached: %s", l)
	}
	if l := line("14"); !strings.Contains(l, `<span class="cov8">	v := m[k]</span>`) {
		t.Errorf("line 14 (run) is not marked reached: %s", l)
	}
	if l := line("1"); strings.Contains(l, "cov") {
		t.Errorf("line 1 (no block) is marked: %s", l)
	}
	// The map literal's quotes are escaped.
	if l := line("3"); !strings.Contains(l, "map[string]string{}") || strings.Contains(page, `"string"`) {
		t.Errorf("line 3: %s", l)
	}
	for _, want := range []string{
		`<option value="file0">store/store.go (80.0%)</option>`,
		"Source not found, not shown: example.com/m/gone/gone.go",
		"seedfall.json: 4 of 6 statements (66.7%)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, `value="file1"`) {
		t.Error("the page shows a file whose source was not found")
	}
}

func TestHTMLEscapes(t *testing.T) {
	src := "package x\n\nfunc F() string {\n\treturn \"<script>&\"\n}\n"
	p, _ := ReadProfile(strings.NewReader("mode: set\nx.com/<b>/x.go:3.18,5.2 1 1\n"))
	var b bytes.Buffer
	if err := WriteHTML(&b, p, func(string) ([]byte, error) { return []byte(src), nil }, "<world>"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<script>&") || strings.Contains(page, "<b>") || strings.Contains(page, "<world>") {
		t.Fatalf("unescaped text on the page:\n%s", page)
	}
	if !strings.Contains(page, "&lt;script&gt;&amp;") {
		t.Fatalf("the source is not on the page:\n%s", page)
	}
}

func TestModuleSource(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m // the module\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "store"), 0o755)
	os.WriteFile(filepath.Join(dir, "store", "store.go"), []byte(storeSrc), 0o644)
	src := ModuleSource(filepath.Join(dir, "store"))
	if b, err := src("example.com/m/store/store.go"); err != nil || string(b) != storeSrc {
		t.Fatalf("store.go: %v", err)
	}
	for _, p := range []string{"example.com/other/x.go", "example.com/m/../../etc/passwd", "example.com/m/nope.go"} {
		if _, err := src(p); err == nil {
			t.Errorf("%s was found", p)
		}
	}
}
