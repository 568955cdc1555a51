package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/world"
)

// TestBrowser writes the report of a real failing kvlog seed and loads it
// in headless Chromium: the page must render with a lane per program, the
// crash bars and the replay command, and its script must run to the end.
// SEEDFALL_REPORT_SHOT=path also saves a screenshot there (docs/report.png
// is made that way).
func TestBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		// CI installs it (.ci/run) and must not pass without looking.
		if os.Getenv("SEEDFALL_BROWSER_TESTS") != "" {
			t.Fatal("chromium is not installed but SEEDFALL_BROWSER_TESTS is set (apt-get install -y chromium)")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium; .ci/run does it)")
	}
	ctx := context.Background()
	w, err := world.Load("../../../examples/kvlog/seedfall.json")
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	p, err := e.Prepare(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(ctx, engine.RunOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed {
		t.Fatal("kvlog seed 1 passed: the report test needs a failing seed")
	}
	var nodes []string
	for _, prog := range w.Programs() {
		nodes = append(nodes, prog.Name)
	}
	crashes := 0
	for _, f := range res.Schedule.Faults {
		if f.Kind == "crash" && f.Node == "server" {
			crashes++
		}
	}
	if crashes == 0 {
		t.Fatal("kvlog seed 1 crashed nothing: the bars prove nothing")
	}
	const replay = "seedfall replay -c seedfall.json -seed 1"
	rep := Report{Title: "seedfall report: seedfall.json", Config: "-c seedfall.json", Runs: []Run{
		{Seed: 1, Class: res.Class, Reason: res.Reason, Node: res.Node, SimNs: res.SimNs,
			Lines: res.Lines, Schedule: res.Schedule, Replay: replay, Nodes: nodes},
		{Seed: 2, Passed: true},
	}}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, rep); err != nil {
		t.Fatal(err)
	}
	f.Close()

	args := []string{"--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--enable-logging=stderr", "--window-size=1280,900"}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append(args, "--dump-dom", "file://"+page)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v\n%s", err, stderr.String())
	}
	dom := string(out)
	// Chromium logs the page's console, uncaught errors included, as
	// CONSOLE lines among much noise about D-Bus.
	var console []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	if strings.Contains(strings.Join(console, "\n"), "Uncaught") {
		t.Errorf("the page's script threw:\n%s", strings.Join(console, "\n"))
	}
	if !strings.Contains(dom, `data-rendered="1"`) {
		t.Errorf("the script did not finish: <body> has no data-rendered=\"1\"\n%s", strings.Join(console, "\n"))
	}
	if strings.Contains(dom, `<div class="controls" hidden`) {
		t.Error("the script ran but left the zoom controls hidden")
	}

	// One lane per program, in world order, with the server's crashes as bars.
	lanes := map[string]string{}
	var order []string
	for _, seg := range strings.Split(dom, `<svg class="lane" data-node="`)[1:] {
		name, _, _ := strings.Cut(seg, `"`)
		body, _, _ := strings.Cut(seg, "</svg>")
		if _, dup := lanes[name]; dup {
			t.Errorf("two lanes for %s", name)
		}
		lanes[name] = body
		order = append(order, name)
	}
	if strings.Join(order, " ") != strings.Join(nodes, " ") {
		t.Errorf("lanes %v, want one per program: %v", order, nodes)
	}
	if got := strings.Count(lanes["server"], `class="bar b-crash"`); got != crashes {
		t.Errorf("server lane has %d crash bars, want %d", got, crashes)
	}
	if got := strings.Count(lanes["client"], `class="bar b-crash"`); got != 0 {
		t.Errorf("client lane has %d crash bars, want none", got)
	}
	if !strings.Contains(lanes[res.Node], `class="mark m-fail"`) {
		t.Errorf("the failure is not marked on %s's lane", res.Node)
	}
	if !strings.Contains(dom, "<code>"+replay+"</code>") {
		t.Error("the replay command is not on the page")
	}

	if shot := os.Getenv("SEEDFALL_REPORT_SHOT"); shot != "" {
		abs, _ := filepath.Abs(shot)
		cmd := exec.CommandContext(ctx, chromium, append(args, "--screenshot="+abs, "file://"+page)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("chromium --screenshot: %v\n%s", err, b)
		}
	}
}
