package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/cover"
)

// TestCoverSweep: a sweep of kvlog with coverage on keeps coverage.out
// next to the world, the same bytes twice and at any -parallel; the
// shards of the sweep, merged by seedfall cover or seedfall merge, are
// the whole sweep's coverage; seedfall cover shows what never ran.
func TestCoverSweep(t *testing.T) {
	dir, res := copyExample(t), t.TempDir()
	world := []string{"-c", "kvlog/seedfall.json", "-seeds", "1-8", "-set", "coverage=true"}
	out := filepath.Join(dir, "kvlog", ".seedfall", "coverage.out")

	_, errOut, _ := sf(t, dir, "cover", "-c", "kvlog/seedfall.json")
	if want := "make it with seedfall run -c kvlog/seedfall.json -seeds 1-100 -set coverage=true"; !strings.Contains(errOut, want) {
		t.Errorf("seedfall cover before any sweep says:\n%s\nwant it to say %q", errOut, want)
	}

	var whole []byte
	for _, parallel := range []string{"1", "1", "3", "3"} {
		_, errOut, _ := sf(t, dir, append([]string{"run", "-parallel", parallel}, world...)...)
		if !regexp.MustCompile(`(?m)^coverage: \d+ of \d+ statements \(\d+\.\d%\) in kvlog/\.seedfall/coverage\.out; seedfall cover -c kvlog/seedfall.json shows them$`).MatchString(errOut) {
			t.Fatalf("run -parallel %s does not say where the coverage is:\n%s", parallel, errOut)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if whole == nil {
			whole = b
		} else if !bytes.Equal(b, whole) {
			t.Fatalf("coverage.out of run -parallel %s differs from the first sweep's", parallel)
		}
	}
	p, err := cover.ReadProfile(bytes.NewReader(whole))
	if err != nil {
		t.Fatal(err)
	}
	if hit, all := p.Stmts(); hit == 0 || hit == all {
		t.Fatalf("coverage.out: %d of %d statements reached; want some and not all", hit, all)
	}

	// The shards' coverage is the whole sweep's.
	for k := 1; k <= 2; k++ {
		sf(t, dir, append([]string{"run", "-shard", fmt.Sprintf("%d/2", k), "-out", res}, world...)...)
	}
	summary := mustSF(t, 0, dir, "cover", "-c", "kvlog/seedfall.json")
	if merged := mustSF(t, 0, dir, "cover", "-c", "kvlog/seedfall.json", res); merged != summary {
		t.Errorf("seedfall cover of the shards:\n%s\nof the whole sweep:\n%s", merged, summary)
	}
	sf(t, dir, "merge", res, "-out", filepath.Join(res, "union"))
	if b, err := os.ReadFile(filepath.Join(res, "union", "coverage.out")); err != nil || !bytes.Equal(b, whole) {
		t.Errorf("merge -out's coverage.out (%v) is not the whole sweep's", err)
	}

	// The summary names the files, and the blocks never reached by
	// function with their lines.
	for _, want := range []string{"\n  kvlog/server/store.go ", "never reached (", "\n  kvlog/server/store.go\n    "} {
		if !strings.Contains(summary, want) {
			t.Errorf("seedfall cover lacks %q:\n%s", want, summary)
		}
	}

	// On the page, a line of store.go no seed reached is red, one that
	// every seed reached green.
	page := filepath.Join(res, "cover.html")
	if got := mustSF(t, 0, dir, "cover", "-c", "kvlog/seedfall.json", "-html", page); !strings.HasSuffix(got, "wrote "+page+"\n") {
		t.Errorf("seedfall cover -html printed:\n%s", got)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// store.go's <pre> is the one whose option names it.
	id := regexp.MustCompile(`value="(file\d+)">kvlog/server/store\.go`).FindSubmatch(html)
	if id == nil {
		t.Fatalf("no store.go on the page")
	}
	pre := html[bytes.Index(html, []byte(`<pre class="file" id="`+string(id[1])+`"`)):]
	pre = pre[:bytes.Index(pre, []byte("</pre>"))]
	checked := map[bool]int{}
	for i, b := range p.Blocks {
		if !strings.HasSuffix(b.File, "kvlog/server/store.go") || b.EnLine < b.StLine+2 || i+1 < len(p.Blocks) && p.Blocks[i+1].StLine <= b.StLine+1 {
			continue // a line inside the block, no other block's
		}
		line := b.StLine + 1
		got := regexp.MustCompile(fmt.Sprintf(`(?m)^<span class="ln"> *%d</span>.*$`, line)).Find(pre)
		want := `class="cov0"`
		if b.Hit {
			want = `class="cov8"`
		}
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("store.go line %d (block %d.%d-%d.%d, ran %v) on the page: %s; want %s", line, b.StLine, b.StCol, b.EnLine, b.EnCol, b.Hit, got, want)
		}
		checked[b.Hit]++
	}
	if checked[true] == 0 || checked[false] == 0 {
		t.Errorf("checked %d lines reached and %d never reached on the page; want some of each", checked[true], checked[false])
	}
}
