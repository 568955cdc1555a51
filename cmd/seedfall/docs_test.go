package main

// TestDocTranscripts runs every transcript in README.md, docs/*.md and
// docs/real/*.md against a seedfall built from this package and compares what
// it prints with what the document shows, so a stale document fails.
//
// A transcript is a fenced block with lines that start with "$ ": each is a
// command, and the lines up to the next command are its output (stdout and
// stderr together). A line "..." in the output stands for any number of
// lines. Wall times (“49.62ms real”, “in 284ms (70 seeds/s)”, "wall_ns") are
// compared as placeholders.
//
// Each document runs in a fresh copy of examples/ and sim/, from the top of
// that copy, one block after another: `cd DIR` moves the following commands,
// and files the commands write (.seedfall/) stay for the next block. HTML
// comments just before a block's fence say what the prose gives only in words:
//
//	<!-- transcript: dir=examples/kvlog -->  run from this directory (made if missing)
//	<!-- transcript: file=PATH -->           (above any block) the block is this file's text: write it
//	<!-- transcript: txtar=PATH -->          extract this archive (a path in the repository) there
//	<!-- transcript: setup: CMD -->          run CMD (sh -c) there first, output unchecked; $REPO is the repository
//	<!-- transcript: after 1: CMD -->        run CMD after the block's first command
//	<!-- transcript: excerpt: CMD -->        the block (no "$ " lines) is an excerpt of what CMD prints
//	<!-- transcript: slow -->                run only with SEEDFALL_DOCS=all
//	<!-- transcript: skip: REASON -->        never run (say why)
//
// An excerpt is a block of output shown without its command, such as a few
// lines of a trace. Its excerpt: annotation gives the command, run (sh -c) the
// same way and in the same place as a transcript's, after the block's other
// annotations (a cd inside CMD moves only CMD); every line of the block must
// then be a line of the output, in order, with any lines of output between
// them (matchExcerpt). Lines compare normalised as in transcripts and without
// their leading spaces; a line "..." says that lines are left out and matches
// nothing itself. A failure names the first line not found and the output
// lines closest to it.
//
// SEEDFALL_DOCS=all runs the slow blocks too (scripts/check-docs).
// go test -run 'TestDocTranscripts/docs/real/pebble.md' runs one document.
// UPDATE_DOCS=1 (or -update) rewrites the output lines with what the build
// prints, keeping "..." lines and the document's wall times where the rest of
// a line is unchanged; in an excerpt, it replaces a line not found with the
// output line of the same shape (equal but for its numbers) in its place. Read
// the diff before committing.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

var updateDocs = flag.Bool("update", false, "rewrite the transcripts in README.md and docs/ with what the build prints")

// docFiles are the documents whose transcripts are checked, relative to the
// repository root.
func docFiles(t *testing.T, root string) []string {
	files := []string{"README.md"}
	for _, pat := range []string{"docs/*.md", "docs/real/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	return files
}

type docStep struct {
	line int // 1-based line of the "$ " line in the document
	cmd  string
	want []string // output lines as the document shows them
}

type docBlock struct {
	file       string
	line       int // 1-based line of the opening fence
	indent     string
	bodyStart  int // 0-based index of the first line inside the fence
	bodyEnd    int // 0-based index of the closing fence
	steps      []docStep
	dir        string
	setup      []string
	after      map[int][]string
	slow       bool
	skip       string
	fileTo     string   // file=: the block's text is this file's content
	txtar      []string // txtar=: archives (repository paths) extracted first
	body       []string // the block's lines, for file= and excerpt:
	excerpt    string   // excerpt: the command whose output the block is an excerpt of
	annotation int      // 1-based line of the first annotation, 0 when none
}

var (
	fenceRe      = regexp.MustCompile("^([ \t]*)(```+|~~~+)")
	annotationRe = regexp.MustCompile(`^\s*<!--\s*transcript:\s*(.*?)\s*-->\s*$`)
	afterRe      = regexp.MustCompile(`^after (\d+):\s*(.*)$`)
)

// parseDoc finds the transcripts of one document.
func parseDoc(file string, lines []string) ([]*docBlock, error) {
	var blocks []*docBlock
	for i := 0; i < len(lines); i++ {
		m := fenceRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence := m[1], m[2]
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[end], " \t"), fence) {
			end++
		}
		b := &docBlock{file: file, line: i + 1, indent: indent, bodyStart: i + 1, bodyEnd: end}
		for j := i + 1; j < end; j++ {
			l := strings.TrimPrefix(lines[j], indent)
			if strings.HasPrefix(l, "$ ") {
				b.steps = append(b.steps, docStep{line: j + 1, cmd: strings.TrimPrefix(l, "$ ")})
			} else if len(b.steps) > 0 {
				s := &b.steps[len(b.steps)-1]
				s.want = append(s.want, l)
			}
		}
		// Annotations: the comment lines just above the fence.
		for k := i - 1; k >= 0; k-- {
			am := annotationRe.FindStringSubmatch(lines[k])
			if am == nil {
				break
			}
			b.annotation = k + 1
			d := am[1]
			switch {
			case d == "slow":
				b.slow = true
			case strings.HasPrefix(d, "skip:"):
				b.skip = strings.TrimSpace(strings.TrimPrefix(d, "skip:"))
			case strings.HasPrefix(d, "dir="):
				b.dir = strings.TrimPrefix(d, "dir=")
			case strings.HasPrefix(d, "file="):
				b.fileTo = strings.TrimPrefix(d, "file=")
			case strings.HasPrefix(d, "txtar="):
				b.txtar = append([]string{strings.TrimPrefix(d, "txtar=")}, b.txtar...)
			case strings.HasPrefix(d, "excerpt:"):
				b.excerpt = strings.TrimSpace(strings.TrimPrefix(d, "excerpt:"))
			case strings.HasPrefix(d, "setup:"):
				b.setup = append([]string{strings.TrimSpace(strings.TrimPrefix(d, "setup:"))}, b.setup...)
			case afterRe.MatchString(d):
				am := afterRe.FindStringSubmatch(d)
				n, _ := strconv.Atoi(am[1])
				if b.after == nil {
					b.after = map[int][]string{}
				}
				b.after[n] = append([]string{am[2]}, b.after[n]...)
			default:
				return nil, fmt.Errorf("%s:%d: unknown transcript annotation %q (want dir=, file=, txtar=, setup:, after N:, excerpt:, slow or skip:)", file, k+1, d)
			}
		}
		for j := i + 1; j < end; j++ {
			b.body = append(b.body, strings.TrimPrefix(lines[j], indent))
		}
		switch {
		case len(b.steps) > 0 && b.fileTo != "":
			return nil, fmt.Errorf("%s:%d: file= above a transcript", file, b.annotation)
		case b.excerpt != "" && (len(b.steps) > 0 || b.fileTo != ""):
			return nil, fmt.Errorf("%s:%d: excerpt: above a transcript or a file= block", file, b.annotation)
		case len(b.steps) > 0 || b.fileTo != "" || b.excerpt != "":
			blocks = append(blocks, b)
		case b.annotation > 0:
			return nil, fmt.Errorf("%s:%d: a transcript annotation above a block with no \"$ \" command, no file= and no excerpt:", file, b.annotation)
		}
		i = end
	}
	return blocks, nil
}

// Wall times and other things that differ from machine to machine.
var (
	durPat  = `(?:[0-9]+h)?(?:[0-9]+m)?[0-9]+(?:\.[0-9]+)?(?:ns|µs|us|ms|s)`
	normRes = []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(durPat + ` real\b`), "<T> real"},
		{regexp.MustCompile(`\bin ` + durPat + ` \([0-9.]+ seeds/s\)`), "in <T> (<N> seeds/s)"},
		{regexp.MustCompile(`"wall_ns":[0-9]+`), `"wall_ns":<N>`},
		{regexp.MustCompile(`(\d+ runs?, [a-z_]+), ` + durPat + `;`), "$1, <T>;"},
		{regexp.MustCompile(`(\d+ runs?(?:, [0-9.]+ of work)? \([a-z_./]+), ` + durPat + `;`), "$1, <T>;"}, // seedfall explore
		{regexp.MustCompile(`"seedfall":"[^"]*"`), `"seedfall":"<V>"`},
		{regexp.MustCompile(`^seedfall \S+ \((?:commit [0-9a-f]+(?:\+dirty)?, )?go\S+ \S+/\S+\)$`), "seedfall <VERSION>"},
		// go test's times: "--- FAIL: TestKV/seed=1 (0.07s)", "ok  \tpkg\t1.2s".
		{regexp.MustCompile(`^(\s*--- (?:PASS|FAIL|SKIP): \S+) \([0-9.]+s\)$`), "$1 (<T>)"},
		{regexp.MustCompile(`^((?:ok  |FAIL)\t\S+\t)(?:[0-9.]+s|\(cached\))$`), "$1<T>"},
	}
	// progressRe is a line a slow build or sweep prints every few seconds
	// to a stderr that is not a terminal (logprogress.go): how many there
	// are depends on the machine, so transcripts leave them out.
	progressRe = regexp.MustCompile(`(?m)^seedfall: .* \((?:[0-9]+[hms])+\)\n`)
)

// keepWall returns got with the wall times of want, when both have the same
// number of each, so that an update changes only what differs.
func keepWall(want, got string) string {
	for _, n := range normRes {
		w, g := n.re.FindAllString(want, -1), n.re.FindAllString(got, -1)
		if len(w) == 0 || len(w) != len(g) {
			continue
		}
		k := 0
		got = n.re.ReplaceAllStringFunc(got, func(string) string { k++; return w[k-1] })
	}
	return got
}

func normLine(s string) string {
	s = strings.TrimRight(s, " \t")
	for _, n := range normRes {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// docEnv is the environment of every command: the CLI tests' Go settings and
// build cache, and PATH with the seedfall built for this test first.
func docEnv(t *testing.T, bin string) []string {
	env := os.Environ()
	set := func(k, v string) {
		for i, e := range env {
			if strings.HasPrefix(e, k+"=") {
				env[i] = k + "=" + v
				return
			}
		}
		env = append(env, k+"="+v)
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT", "GOPROXY", "GOFLAGS"} {
		v := os.Getenv(k)
		if v == "" {
			v = goEnv(k)
		}
		set(k, v)
	}
	set("SEEDFALL_CACHE", sharedCache)
	set("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	set("GOWORK", "off")
	set("TERM", "dumb")
	return env
}

// docBinary builds seedfall once per test process, in docBinaryDir, which
// TestMain removes.
var docBinaryDir string

var docBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "seedfall-docs-bin-")
	if err != nil {
		return "", err
	}
	docBinaryDir = dir
	name := "seedfall"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, nil
})

func TestDocTranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the transcripts run seedfall")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	all := os.Getenv("SEEDFALL_DOCS") == "all"
	update := *updateDocs || os.Getenv("UPDATE_DOCS") != ""
	bin, err := docBinary()
	if err != nil {
		t.Fatal(err)
	}
	env := append(docEnv(t, bin), "REPO="+root)
	for _, file := range docFiles(t, root) {
		t.Run(file, func(t *testing.T) {
			// Each document runs in a copy of its own: two at a time, the
			// commands of one overlap the other's waits for seedfall to start.
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data), "\n")
			blocks, err := parseDoc(file, lines)
			if err != nil {
				t.Fatal(err)
			}
			var run []*docBlock
			transcripts := 0
			for _, b := range blocks {
				if b.skip == "" && (all || !b.slow) {
					run = append(run, b)
					if len(b.steps) > 0 || b.excerpt != "" {
						transcripts++
					}
				}
			}
			if transcripts == 0 {
				t.Skip("no transcript to run")
			}
			work := t.TempDir()
			// Resolve symlinks so that the normalisation below finds the
			// directory however a command spells it.
			if w, err := filepath.EvalSymlinks(work); err == nil {
				work = w
			}
			for _, d := range []string{"examples", "sim"} {
				if err := copyTree(filepath.Join(root, d), filepath.Join(work, d)); err != nil {
					t.Fatal(err)
				}
			}
			dir := work
			changed := false
			for _, b := range run {
				start := time.Now()
				if b.dir != "" {
					dir = filepath.Join(work, filepath.FromSlash(b.dir))
					if err := os.MkdirAll(dir, 0o777); err != nil {
						t.Fatal(err)
					}
				}
				for _, a := range b.txtar {
					if err := extractTxtar(filepath.Join(root, filepath.FromSlash(a)), dir); err != nil {
						t.Fatalf("%s:%d: txtar=%s: %v", file, b.line, a, err)
					}
				}
				if b.fileTo != "" {
					p := filepath.Join(dir, filepath.FromSlash(b.fileTo))
					os.MkdirAll(filepath.Dir(p), 0o777)
					if err := os.WriteFile(p, []byte(strings.Join(b.body, "\n")+"\n"), 0o666); err != nil {
						t.Fatal(err)
					}
					continue
				}
				for _, s := range b.setup {
					docSetup(t, b, "setup", s, dir, env)
				}
				if b.excerpt != "" {
					d := dir // the command's own cd does not move the blocks after it
					got := docRun(t, b, docStep{line: b.line, cmd: b.excerpt}, &d, work, env)
					merged, msg, ok := matchExcerpt(b.body, got, update)
					switch {
					case ok && !slices.Equal(merged, b.body):
						b.body = merged
						changed = true
					case !ok:
						t.Errorf("%s:%d: the excerpt is not what `%s` prints (UPDATE_DOCS=1 rewrites lines that differ only in their numbers):\n%s",
							file, b.line, b.excerpt, msg)
					}
					t.Logf("%s:%d: excerpt of `%s` in %v", file, b.line, b.excerpt, time.Since(start).Round(time.Millisecond))
					continue
				}
				var got [][]string
				for i, s := range b.steps {
					out := docRun(t, b, s, &dir, work, env)
					got = append(got, out)
					for _, a := range b.after[i+1] {
						docSetup(t, b, fmt.Sprintf("after %d", i+1), a, dir, env)
					}
				}
				var diffs []string
				for i, s := range b.steps {
					merged, diff, ok := matchOutput(s.want, got[i])
					if ok {
						continue
					}
					if update {
						b.steps[i].want = merged
						changed = true
						continue
					}
					diffs = append(diffs, fmt.Sprintf("%s:%d: $ %s\n%s", file, s.line, s.cmd, diff))
				}
				if len(diffs) > 0 {
					t.Errorf("%s:%d: the transcript differs from what the build prints (- document, + build; UPDATE_DOCS=1 rewrites it):\n%s",
						file, b.line, strings.Join(diffs, "\n"))
				}
				t.Logf("%s:%d: %d commands in %v", file, b.line, len(b.steps), time.Since(start).Round(time.Millisecond))
			}
			if changed {
				// Blocks keep their line count only by chance: rewrite from the
				// last block up.
				for i := len(run) - 1; i >= 0; i-- {
					b := run[i]
					if len(b.steps) == 0 && b.excerpt == "" {
						continue
					}
					var body []string
					if b.excerpt != "" {
						for _, l := range b.body {
							body = append(body, indentLine(b.indent, l))
						}
					}
					for _, s := range b.steps {
						body = append(body, indentLine(b.indent, "$ "+s.cmd))
						for _, w := range s.want {
							body = append(body, indentLine(b.indent, w))
						}
					}
					lines = append(lines[:b.bodyStart], append(body, lines[b.bodyEnd:]...)...)
				}
				if err := os.WriteFile(filepath.Join(root, file), []byte(strings.Join(lines, "\n")), 0o666); err != nil {
					t.Fatal(err)
				}
				t.Logf("updated %s", file)
			}
		})
	}
}

func indentLine(indent, l string) string {
	if l == "" {
		return ""
	}
	return indent + l
}

// docRun runs one command of a transcript and returns its output lines,
// normalised so that the temporary directory reads as the document would
// show it.
func docRun(t *testing.T, b *docBlock, s docStep, dir *string, work string, env []string) []string {
	cmd := strings.TrimSpace(s.cmd)
	// `go run ./cmd/seedfall` is the binary on PATH.
	cmd = strings.ReplaceAll(cmd, "go run ./cmd/seedfall", "seedfall")
	if f := strings.Fields(cmd); len(f) == 2 && f[0] == "cd" {
		d := f[1]
		if !filepath.IsAbs(d) {
			d = filepath.Join(*dir, d)
		}
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s:%d: %v", b.file, s.line, err)
		}
		*dir = d
		return nil
	}
	out, err := docShell(b, cmd, *dir, env)
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("%s:%d: $ %s: %v\n%s", b.file, s.line, s.cmd, err, out)
		}
	}
	text := strings.ReplaceAll(string(out), work+string(filepath.Separator), "")
	text = strings.ReplaceAll(text, work, ".")
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// docSetup runs a setup: or after N: command. Its exit status is only
// logged: a setup that fails shows in the transcript that follows.
func docSetup(t *testing.T, b *docBlock, what, cmd, dir string, env []string) {
	out, err := docShell(b, cmd, dir, env)
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("%s:%d: %s: %s: %v\n%s", b.file, b.line, what, cmd, err, out)
		}
		t.Logf("%s:%d: %s: %s: %v\n%s", b.file, b.line, what, cmd, err, out)
	}
}

func docShell(b *docBlock, cmd, dir string, env []string) ([]byte, error) {
	timeout := 3 * time.Minute
	if b.slow {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Dir = dir
	c.Env = env
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.WaitDelay = 10 * time.Second
	err := c.Run()
	got := progressRe.ReplaceAll(out.Bytes(), nil)
	if ctx.Err() != nil {
		return got, fmt.Errorf("timed out after %v", timeout)
	}
	return got, err
}

// digits are the numbers (and hex digests) two lines may differ in and
// still be the same line of output.
var digits = regexp.MustCompile(`[0-9a-f]{16,}|[0-9]+`)

// matchOutput compares a command's output with what the document shows. A
// line "..." in want stands for any number of lines. It returns the document's
// lines rewritten to what the build printed (keeping "..." and the document's
// wording of lines equal after normalisation), a readable diff, and whether
// they matched.
func matchOutput(want, got []string) (merged []string, diff string, ok bool) {
	for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
		want = want[:len(want)-1]
	}
	isEllipsis := func(l string) bool { return strings.TrimSpace(l) == "..." }
	nw, ng := make([]string, len(want)), make([]string, len(got))
	for i, w := range want {
		nw[i] = normLine(w)
	}
	for i, g := range got {
		ng[i] = normLine(g)
	}
	// cost[i][j]: edits to match want[i:] with got[j:]. An ellipsis absorbs
	// got lines for free; a line only the build printed costs 2, one only
	// the document has 4; a substitution costs 1 when the two lines differ
	// only in their numbers (a time, a digest, a count) and 3 otherwise. So a
	// rewrite keeps a changed line in its place rather than letting an
	// ellipsis swallow what the build printed and dropping the document's
	// line.
	sub := func(i, j int) int {
		switch {
		case nw[i] == ng[j]:
			return 0
		case digits.ReplaceAllString(nw[i], "#") == digits.ReplaceAllString(ng[j], "#"):
			return 1
		}
		return 3
	}
	W, G := len(want), len(got)
	cost := make([][]int, W+1)
	for i := range cost {
		cost[i] = make([]int, G+1)
	}
	for i := W; i >= 0; i-- {
		for j := G; j >= 0; j-- {
			switch {
			case i == W:
				cost[i][j] = 2 * (G - j)
			case isEllipsis(want[i]):
				c := cost[i+1][j] // absorbs nothing
				if j < G && cost[i][j+1] < c {
					c = cost[i][j+1]
				}
				cost[i][j] = c
			case j == G:
				cost[i][j] = 4 + cost[i+1][j]
			default:
				c := 4 + cost[i+1][j]
				if d := 2 + cost[i][j+1]; d < c {
					c = d
				}
				if d := sub(i, j) + cost[i+1][j+1]; d < c {
					c = d
				}
				cost[i][j] = c
			}
		}
	}
	ok = cost[0][0] == 0
	var d strings.Builder
	i, j := 0, 0
	for i < W || j < G {
		switch {
		case i < W && isEllipsis(want[i]):
			if j < G && cost[i][j] == cost[i][j+1] {
				j++ // absorbed
				continue
			}
			merged = append(merged, want[i])
			d.WriteString("  " + want[i] + "\n")
			i++
		case i < W && j < G && nw[i] == ng[j] && cost[i][j] == cost[i+1][j+1]:
			merged = append(merged, want[i])
			d.WriteString("  " + want[i] + "\n")
			i, j = i+1, j+1
		case i < W && j < G && nw[i] != ng[j] && cost[i][j] == sub(i, j)+cost[i+1][j+1]:
			merged = append(merged, keepWall(want[i], got[j]))
			d.WriteString("- " + want[i] + "\n+ " + got[j] + "\n")
			i, j = i+1, j+1
		case j < G && cost[i][j] == 2+cost[i][j+1]:
			merged = append(merged, got[j])
			d.WriteString("+ " + got[j] + "\n")
			j++
		default:
			d.WriteString("- " + want[i] + "\n")
			i++
		}
	}
	return merged, d.String(), ok
}

// matchExcerpt checks an excerpt: every line of want, but "..." and blank
// lines at its end, must be a line of got, in order, with any lines of got
// between them. Lines compare normalised (normLine) and without their leading
// spaces. When they do not match and update is set, each line not found is
// replaced by a line of got of the same shape (equal once its numbers are
// ignored, as matchOutput substitutes), keeping the document's indentation
// and wall times; ok then says whether every line was found either way, and
// merged is the rewritten excerpt. msg says which line is missing and which
// lines of got come closest.
func matchExcerpt(block, got []string, update bool) (merged []string, msg string, ok bool) {
	want := block
	for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
		want = want[:len(want)-1]
	}
	key := func(l string) string { return strings.TrimLeft(normLine(l), " \t") }
	nw, ng := make([]string, len(want)), make([]string, len(got))
	sw, sg := make([]string, len(want)), make([]string, len(got))
	for i, w := range want {
		nw[i] = key(w)
		sw[i] = shape(nw[i])
	}
	for i, g := range got {
		ng[i] = key(g)
		sg[i] = shape(ng[i])
	}
	skip := func(i int) bool { return nw[i] == "..." }
	exact := func(i, j int) bool { return nw[i] == ng[j] }
	sameShape := func(i, j int) bool { return sw[i] == sg[j] }
	// first returns the first line of want that is not found when each is
	// matched at its earliest place after the one before it (which finds
	// them all if anything does), and where the search for it started.
	first := func(eq func(i, j int) bool) (miss, from int) {
		j := 0
		for i := range nw {
			if skip(i) {
				continue
			}
			k := j
			for k < len(ng) && !eq(i, k) {
				k++
			}
			if k == len(ng) {
				return i, j
			}
			j = k + 1
		}
		return -1, j
	}
	if i, j := first(exact); i < 0 {
		return block, "", true
	} else if !update {
		return block, excerptMiss(want, got, nw, ng, i, j), false
	} else if i, j := first(sameShape); i >= 0 {
		return block, excerptMiss(want, got, nw, ng, i, j), false
	}

	// An update: find the lines that are not in the output by their shape,
	// each where the fewest numbers change (so that a stale "FAIL seed 20"
	// line after "..." stays seed 20's), else at its earliest place.
	// cost[i][j]: how many numbers change when want[i:] is matched in
	// got[j:]; inf when some line cannot be found at all.
	const inf = 1 << 30
	W, G := len(nw), len(ng)
	cost := make([][]int, W+1)
	for i := range cost {
		cost[i] = make([]int, G+1)
	}
	match := func(i, j int) int {
		switch {
		case exact(i, j):
			return 0
		case sameShape(i, j):
			c := 1
			if n, gn := digits.FindAllString(nw[i], -1), digits.FindAllString(ng[j], -1); len(n) == len(gn) {
				for k := range n {
					if n[k] != gn[k] {
						c++
					}
				}
			}
			return c
		}
		return inf
	}
	for i := W - 1; i >= 0; i-- {
		cost[i][G] = inf
		if skip(i) {
			cost[i][G] = cost[i+1][G]
		}
		for j := G - 1; j >= 0; j-- {
			if skip(i) {
				cost[i][j] = cost[i+1][j]
				continue
			}
			cost[i][j] = cost[i][j+1]
			if m := match(i, j); m < inf && m+cost[i+1][j+1] < cost[i][j] {
				cost[i][j] = m + cost[i+1][j+1]
			}
		}
	}
	merged = slices.Clone(block)
	for i, j := 0, 0; i < W; {
		if skip(i) {
			i++
			continue
		}
		if m := match(i, j); m < inf && m+cost[i+1][j+1] == cost[i][j] {
			if m > 0 {
				indent := want[i][:len(want[i])-len(strings.TrimLeft(want[i], " \t"))]
				merged[i] = indent + strings.TrimLeft(keepWall(want[i], got[j]), " \t")
			}
			i, j = i+1, j+1
			continue
		}
		j++
	}
	return merged, "", true
}

// excerptMiss says that line i of an excerpt is not in the output after line
// j, and shows the output lines closest to it.
func excerptMiss(want, got, nw, ng []string, i, j int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "line %d of the block is not in the output", i+1)
	if j > 0 {
		fmt.Fprintf(&b, " after line %d (%q, the match of the line before it)", j, got[j-1])
	}
	fmt.Fprintf(&b, ":\n  %s\n", want[i])
	if k := slices.Index(ng[:j], nw[i]); k >= 0 {
		fmt.Fprintf(&b, "it is line %d of the output, before the lines above it\n", k+1)
	}
	// Closest: most words in common, the same shape counting most.
	words := func(l string) map[string]int {
		m := map[string]int{}
		for _, f := range strings.Fields(l) {
			m[f]++
		}
		return m
	}
	ww := words(nw[i])
	score := func(k int) int {
		s := 0
		for f, n := range words(ng[k]) {
			s += min(n, ww[f])
		}
		if digits.ReplaceAllString(ng[k], "#") == digits.ReplaceAllString(nw[i], "#") {
			s += 1000
		}
		return s
	}
	from := j
	if from == len(ng) {
		from = 0
	}
	var near []int
	for k := from; k < len(ng); k++ {
		if score(k) > 0 {
			near = append(near, k)
		}
	}
	slices.SortStableFunc(near, func(a, b int) int { return score(b) - score(a) })
	if len(near) > 3 {
		near = near[:3]
	}
	slices.Sort(near)
	if len(near) == 0 {
		fmt.Fprintf(&b, "no line of the output (%d lines) comes close; it starts:\n", len(got))
		for _, l := range got[:min(len(got), 3)] {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	for _, k := range near {
		fmt.Fprintf(&b, "closest, output line %d:\n  %s\n", k+1, got[k])
	}
	return b.String()
}

// A duration (0s, 662ns, 1.5s) and a hex number (0x1541a0) are each one
// number of a shape.
var (
	durRe = regexp.MustCompile(`\b` + durPat + `\b`)
	hexRe = regexp.MustCompile(`\b0x[0-9a-f]+\b`)
)

// shape is a line with each of its numbers, durations and digests replaced
// by "#", and its runs of spaces by one: two lines of one shape say the same
// but for their numbers (and the padding of a table's columns).
func shape(l string) string {
	l = hexRe.ReplaceAllString(durRe.ReplaceAllString(l, "#"), "#")
	return strings.Join(strings.Fields(digits.ReplaceAllString(l, "#")), " ")
}

// extractTxtar writes the files of a txtar archive into dir.
func extractTxtar(archive, dir string) error {
	a, err := txtar.ParseFile(archive)
	if err != nil {
		return err
	}
	for _, f := range a.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o666); err != nil {
			return err
		}
	}
	return nil
}

// copyTree copies a directory, leaving out what runs leave behind.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if e.IsDir() {
			if e.Name() == ".seedfall" {
				return filepath.SkipDir
			}
			return os.MkdirAll(dst, 0o777)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, info.Mode().Perm())
	})
}

// A rewrite keeps each changed line in its place: the ellipsis before it
// does not swallow the build's new line and drop the document's.
func TestMatchOutputRewritesChangedLines(t *testing.T) {
	want := []string{"FAIL seed 1 at t=2.46s", "...", "  2.46 client#1 - exit 1", "digest 633a21e63e7a1e74c903272938563ced", "...", "10 seeds: 6 passed, 4 failed (seeds 1 3 5 7)"}
	got := []string{"FAIL seed 1 at t=2.47s", "  1.0 client#1 | a", "  2.0 client#1 | b", "  2.47 client#1 - exit 1", "digest 366ee547107a0280960471d9c44d5070", "FAIL seed 2", "10 seeds: 8 passed, 2 failed (seeds 1 2)"}
	merged, _, ok := matchOutput(want, got)
	if ok {
		t.Fatal("different output matched")
	}
	wantMerged := []string{"FAIL seed 1 at t=2.47s", "...", "  2.47 client#1 - exit 1", "digest 366ee547107a0280960471d9c44d5070", "...", "10 seeds: 8 passed, 2 failed (seeds 1 2)"}
	if !slices.Equal(merged, wantMerged) {
		t.Fatalf("merged\n%q\nwant\n%q", merged, wantMerged)
	}
	if merged, _, ok := matchOutput(wantMerged, got); !ok || !slices.Equal(merged, wantMerged) {
		t.Fatalf("the rewritten lines do not match what they were made from: %q", merged)
	}
}

func TestMatchExcerpt(t *testing.T) {
	got := []string{
		"FAIL seed 3 at t=1.2s (40 scheduler steps, 21.5ms real)",
		"     0.000000000 server#1 - start",
		"     0.100000000 client#1 | put k1",
		"     0.250000000 server#1 - crash, restart at 300ms",
		"     0.300000000 server#1 - start",
		"digest 633a21e63e7a1e74c903272938563ced",
	}
	for _, c := range []struct {
		name  string
		block []string
		ok    bool
	}{
		{"in order, lines between", []string{"     0.000000000 server#1 - start", "     0.250000000 server#1 - crash, restart at 300ms"}, true},
		{"ellipsis and no indentation", []string{"FAIL seed 3 at t=1.2s (40 scheduler steps, 9ms real)", "...", "0.300000000 server#1 - start", "...", ""}, true},
		{"out of order", []string{"     0.300000000 server#1 - start", "     0.100000000 client#1 | put k1"}, false},
		{"a line twice needs it twice", []string{"digest 633a21e63e7a1e74c903272938563ced", "digest 633a21e63e7a1e74c903272938563ced"}, false},
		{"not a substring", []string{"server#1 - start"}, false},
	} {
		merged, msg, ok := matchExcerpt(c.block, got, false)
		if ok != c.ok || !slices.Equal(merged, c.block) {
			t.Errorf("%s: ok %v, want %v; merged %q\n%s", c.name, ok, c.ok, merged, msg)
		}
	}

	// The message names the line and the output lines closest to it.
	_, msg, _ := matchExcerpt([]string{"     0.100000000 client#1 | put k1", "     0.250000000 server#1 - crash, restart at 900ms"}, got, false)
	for _, w := range []string{"line 2 of the block", "0.250000000 server#1 - crash, restart at 900ms", "closest, output line 4:\n       0.250000000 server#1 - crash, restart at 300ms"} {
		if !strings.Contains(msg, w) {
			t.Errorf("the message does not say %q:\n%s", w, msg)
		}
	}

	// An update replaces a stale line by the output line of its shape, in
	// order, and keeps the rest of the block as it is.
	stale := []string{
		"FAIL seed 3 at t=1.1s (38 scheduler steps, 9ms real)",
		"...",
		"  0.250000000 server#1 - crash, restart at 310ms",
		"     0.300000000 server#1 - start",
		"digest 00000000000000000000000000000000",
		"",
	}
	merged, _, ok := matchExcerpt(stale, got, true)
	want := []string{
		"FAIL seed 3 at t=1.2s (40 scheduler steps, 9ms real)",
		"...",
		"  0.250000000 server#1 - crash, restart at 300ms",
		"     0.300000000 server#1 - start",
		"digest 633a21e63e7a1e74c903272938563ced",
		"",
	}
	if !ok || !slices.Equal(merged, want) {
		t.Fatalf("update: ok %v, merged\n%q\nwant\n%q", ok, merged, want)
	}
	if _, msg, ok := matchExcerpt(merged, got, false); !ok {
		t.Fatalf("the updated excerpt does not match:\n%s", msg)
	}
	// A line of no shape in the output fails the update too.
	if _, _, ok := matchExcerpt([]string{"0.3 server#1 - stop"}, got, true); ok {
		t.Fatal("an update matched a line with no line of its shape")
	}
}
