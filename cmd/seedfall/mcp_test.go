package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedfall/seedfall/cmd/seedfall/internal/mcpserver"
	"github.com/seedfall/seedfall/engine/results"
)

// mcpProc is a `seedfall mcp` subprocess (the test binary, which
// TestMain puts on $PATH as seedfall) driven by the SDK's own client.
type mcpProc struct {
	t        *testing.T
	cmd      *exec.Cmd
	cs       *mcp.ClientSession
	stdin    io.WriteCloser
	exited   chan struct{} // closed once the process has exited
	progress chan *mcp.ProgressNotificationParams
	stderr   *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startMCP starts `seedfall mcp args...` in dir and initializes a session.
func startMCP(t *testing.T, dir string, args ...string) *mcpProc {
	t.Helper()
	t.Setenv("SEEDFALL_CACHE", sharedCache)
	p := &mcpProc{t: t, progress: make(chan *mcp.ProgressNotificationParams, 1000), stderr: &syncBuffer{}}
	p.cmd = exec.Command("seedfall", append([]string{"mcp"}, args...)...)
	p.cmd.Dir = dir
	p.cmd.Stderr = p.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case p.progress <- req.Params:
			default:
			}
		},
	})
	// Pipes of the test's own, not mcp.CommandTransport: closing the
	// client waits for the calls in flight, and the test closes stdin
	// during one.
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.stdin, p.exited = stdin, make(chan struct{})
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		p.cmd.Process.Kill()
		t.Fatalf("connecting to seedfall mcp: %v", err)
	}
	p.cs = cs
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("seedfall mcp still running 10s after stdin closed")
			p.cmd.Process.Kill()
			<-p.exited
		}
		cs.Close()
		if t.Failed() {
			t.Logf("seedfall mcp's stderr:\n%s", p.stderr)
		}
	})
	return p
}

// call returns a tool's result: its text and structured content.
func (p *mcpProc) call(name string, args map[string]any) (text string, structured map[string]any, isError bool) {
	p.t.Helper()
	res, err := p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		p.t.Fatalf("%s: %v", name, err)
	}
	for _, c := range res.Content {
		text += c.(*mcp.TextContent).Text + "\n"
	}
	structured, _ = res.StructuredContent.(map[string]any)
	return text, structured, res.IsError
}

// cpuTicks is the CPU time the process has used, in clock ticks.
func cpuTicks(t *testing.T, pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which ends with ')': state is the
	// first, utime and stime the 12th and 13th.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// copyWorld copies the lossy programs (the server acknowledges before it
// syncs, as in failure.txtar) from the starlark package's test data, and
// testdata/mcp's world, into a directory of the test's own: tools write
// .seedfall/ next to the world.
func copyWorld(t *testing.T) string {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	copyTree := func(from string) {
		err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == ".seedfall" {
				return filepath.SkipDir // what other tests' runs saved there
			}
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(from, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
			return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	copyTree("../../starlark/testdata/lossy")
	copyTree("testdata/mcp") // its seedfall.json replaces the lossy one
	return dir
}

var mcpToolNames = []string{"seedfall_run", "seedfall_replay", "seedfall_logs", "seedfall_faults_edit", "seedfall_shrink", "seedfall_cause", "seedfall_debug"}

func TestMCPTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a world")
	}
	dir := copyWorld(t)
	cfg := filepath.Join(dir, "seedfall.json")
	p := startMCP(t, dir, "-c", cfg)
	ctx := context.Background()

	if init := p.cs.InitializeResult(); init.ServerInfo.Name != "seedfall" || init.Capabilities.Tools == nil || init.Instructions == "" {
		t.Errorf("initialize: %+v", init)
	}
	list, err := p.cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != len(mcpToolNames) {
		t.Fatalf("tools/list: %v %v", list, err)
	}
	for i, tool := range list.Tools { // the SDK lists them by name
		schema := tool.InputSchema.(map[string]any)
		if tool.Name != slices.Sorted(slices.Values(mcpToolNames))[i] || schema["type"] != "object" || tool.Description == "" || tool.Title == "" {
			t.Errorf("tool %d: %+v", i, tool)
		}
		if _, ok := schema["properties"].(map[string]any)["config"]; !ok {
			t.Errorf("%s takes no config", tool.Name)
		}
	}

	// run: every seed of this world loses a write; each failure says how
	// to replay it, and its schedule is saved.
	text, run, isErr := p.call("seedfall_run", map[string]any{"seeds": "1-3", "parallel": 2})
	if isErr || run["failed"] != 3.0 || run["passed"] != 0.0 {
		t.Fatalf("seedfall_run: error %v, %v\n%s", isErr, run, text)
	}
	first := run["failures"].([]any)[0].(map[string]any)
	if first["seed"] != 1.0 || first["class"] != "workload" || first["replay"] != "seedfall replay -c "+cfg+" -seed 1" {
		t.Errorf("seedfall_run: first failure %v", first)
	}
	for _, want := range []string{"FAIL seed 1 at t=", "client#1 ! lost acknowledged writes", "3 seeds: 0 passed, 3 failed (seeds 1 2 3)"} {
		if !strings.Contains(text, want) {
			t.Errorf("seedfall_run text lacks %q:\n%s", want, text)
		}
	}
	saved := filepath.Join(dir, ".seedfall", "seed-1.faults.json")
	if _, err := os.Stat(saved); err != nil {
		t.Errorf("seedfall_run saved no schedule: %v", err)
	}
	// A seed given as a number is one seed.
	if text, run, isErr := p.call("seedfall_run", map[string]any{"seeds": 2, "pinned": false}); isErr || run["seeds"] != 1.0 {
		t.Errorf("seedfall_run seeds 2: error %v, %v\n%s", isErr, run, text)
	}

	// replay: the saved schedule gives the run's digest again.
	text, replay, isErr := p.call("seedfall_replay", map[string]any{"seed": 1, "tail": 2})
	if isErr || replay["passed"] != false || replay["digest"] != first["digest"] {
		t.Errorf("seedfall_replay: error %v, digest %v, want %v\n%s", isErr, replay["digest"], first["digest"], text)
	}
	if lines := replay["last_lines"].([]any); len(lines) != 2 || !strings.Contains(lines[1].(string), "client#1 - exit 1") {
		t.Errorf("seedfall_replay last lines: %v", lines)
	}
	if !strings.Contains(text, "seed 1, 2 faults from ") || !strings.Contains(text, "crash server, restart at") {
		t.Errorf("seedfall_replay text:\n%s", text)
	}
	// Without tail, the last 20 lines: this run has fewer.
	if text, replay, _ := p.call("seedfall_replay", map[string]any{"seed": 1}); len(replay["last_lines"].([]any)) < 3 || !strings.Contains(text, "last 8 lines of the run") {
		t.Errorf("seedfall_replay without tail: %v\n%s", replay["last_lines"], text)
	}

	// faults_edit: list, then remove every crash into a file of its own;
	// without them seed 1 passes.
	text, faultList, isErr := p.call("seedfall_faults_edit", map[string]any{"seed": 1})
	n := len(faultList["fault_list"].([]any))
	if isErr || n == 0 || !strings.Contains(text, "replay: seedfall replay") {
		t.Fatalf("seedfall_faults_edit list: error %v, %v\n%s", isErr, faultList, text)
	}
	var remove []int
	for i := 1; i <= n; i++ {
		remove = append(remove, i)
	}
	none := filepath.Join(dir, "none.json")
	text, edited, isErr := p.call("seedfall_faults_edit", map[string]any{"seed": 1, "remove": remove, "out": none})
	if isErr || len(edited["fault_list"].([]any)) != 0 || !strings.Contains(text, "seed 1, 0 faults from") {
		t.Errorf("seedfall_faults_edit remove: error %v, %v\n%s", isErr, edited, text)
	}
	text, replay, _ = p.call("seedfall_replay", map[string]any{"seed": 1, "faults": "none.json"})
	if replay["passed"] != true {
		t.Errorf("seed 1 without its crashes: %v\n%s", replay, text)
	}

	// Paths leave the working directory neither by name nor by a link.
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outside, "seedfall.json"), []byte("{}"), 0o644)

	// Tool errors carry the command line's message; arguments that do
	// not fit the schema are errors too.
	for _, tc := range []struct {
		tool string
		args map[string]any
		msg  string
	}{
		{"seedfall_faults_edit", map[string]any{"seed": 1, "remove": []int{n + 1}}, "seedfall faults: -remove"},
		{"seedfall_faults_edit", map[string]any{"seed": 1, "add": []any{map[string]any{"at": "1s", "kind": "pause", "node": "nobody", "until": "2s"}}}, "nothing written"},
		{"seedfall_faults_edit", map[string]any{"seed": 1, "shift": []string{"x"}}, "write it as N=AMOUNT"},
		{"seedfall_replay", map[string]any{"seed": 7, "faults": none}, "holds the schedule of seed 1, not seed 7"},
		{"seedfall_logs", map[string]any{"seed": 1, "node": "nobody"}, "no such program"},
		{"seedfall_debug", map[string]any{"seed": 1, "at": "soon"}, `seedfall debug: say when to stop`},
		{"seedfall_run", map[string]any{"seeds": "1-3", "config": filepath.Join(dir, "missing.json")}, "seedfall run: "},
		{"seedfall_run", map[string]any{"seeds": "x"}, "seedfall run: -seeds"},
		{"seedfall_run", map[string]any{"seeds": []int{1}}, `validating /properties/seeds`},
		{"seedfall_replay", map[string]any{}, `missing properties: ["seed"]`},
		{"seedfall_replay", map[string]any{"seed": "one"}, `validating /properties/seed`},
		{"seedfall_replay", map[string]any{"seed": 1, "seeds": "1-5"}, `unexpected additional properties ["seeds"]`},
		{"seedfall_faults_edit", map[string]any{"seed": 1, "remove": []int{1}, "out": filepath.Join(outside, "x.json")}, `out "` + filepath.Join(outside, "x.json") + `" is outside the working directory ` + dir},
		{"seedfall_faults_edit", map[string]any{"seed": 1, "remove": []int{1}, "out": "link/x.json"}, `out "link/x.json" is outside the working directory`},
		{"seedfall_faults_edit", map[string]any{"seed": 1, "remove": []int{1}, "out": "new/../../x.json"}, `is outside the working directory`},
		{"seedfall_replay", map[string]any{"seed": 1, "faults": "../none.json"}, `faults "../none.json" is outside the working directory`},
		{"seedfall_run", map[string]any{"seeds": "1", "config": "link/seedfall.json"}, `config "link/seedfall.json" is outside the working directory`},
	} {
		text, structured, isErr := p.call(tc.tool, tc.args)
		if !isErr || structured != nil || !strings.Contains(text, tc.msg) {
			t.Errorf("%s %v: error %v, text %q, want an error saying %q", tc.tool, tc.args, isErr, text, tc.msg)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("a refused call wrote outside the working directory: %v", entries)
	}
	if b, err := os.ReadFile(saved); err != nil || !strings.Contains(string(b), `"seed": 1`) {
		t.Errorf("a refused edit changed %s: %s %v", saved, b, err)
	}

	// An argument too big is refused without being echoed back.
	text, _, isErr = p.call("seedfall_logs", map[string]any{"seed": 1, "node": strings.Repeat("x", 1<<20)})
	if !isErr || !strings.Contains(text, "over the limit of 64 KiB") || len(text) > 1000 {
		t.Errorf("a 1 MiB argument: error %v, %d bytes of text: %.300s", isErr, len(text), text)
	}
	if _, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "seedfall_nope"}); err == nil || !strings.Contains(err.Error(), `unknown tool "seedfall_nope"`) {
		t.Errorf("an unknown tool: %v", err)
	}

	// logs and debug.
	text, _, isErr = p.call("seedfall_logs", map[string]any{"seed": 1, "node": "server", "tail": 0})
	if isErr || !strings.Contains(text, "server#1 - crash, restart at") || strings.Contains(text, "client#1 -") ||
		!strings.HasSuffix(text, "FAIL workload: client#1 exited with status 1\n\n") {
		t.Errorf("seedfall_logs:\n%s", text)
	}
	text, dbg, isErr := p.call("seedfall_debug", map[string]any{"seed": 1, "at": "500ms"})
	if isErr || dbg["state"] == nil || !strings.Contains(text, "world at 500ms") {
		t.Errorf("seedfall_debug: %v\n%s", dbg, text)
	}
}

// TestMCPCancel cancels a long sweep and sees the server go idle, then
// closes stdin during another and sees the server exit.
func TestMCPCancel(t *testing.T) {
	if testing.Short() || runtime.GOOS != "linux" {
		t.Skip("builds and runs a world; reads /proc")
	}
	dir := copyWorld(t)
	p := startMCP(t, dir)
	pid := p.cmd.Process.Pid

	// sweep starts 100,000 seeds and returns once a progress notification
	// came; its context cancels the call.
	sweep := func(token string) (context.CancelFunc, chan error) {
		ctx, cancel := context.WithCancel(context.Background())
		params := &mcp.CallToolParams{Name: "seedfall_run", Arguments: map[string]any{"seeds": "1-100000", "parallel": 2}}
		params.SetProgressToken(token)
		done := make(chan error, 1)
		go func() {
			_, err := p.cs.CallTool(ctx, params)
			done <- err
		}()
		for {
			select {
			case n := <-p.progress:
				if n.ProgressToken != token {
					continue
				}
				if n.Total != 100000 || n.Progress < 1 || n.Progress >= n.Total {
					t.Errorf("progress %+v", n)
				}
				return cancel, done
			case err := <-done:
				t.Fatalf("the sweep ended before any progress: %v", err)
			case <-time.After(3 * time.Minute):
				t.Fatal("no progress notification in 3 minutes")
			}
		}
	}

	cancel, done := sweep("sweep-1")
	// Notifications come at most four times a second.
	start, count := time.Now(), 0
	for time.Since(start) < time.Second {
		select {
		case <-p.progress:
			count++
		case <-time.After(100 * time.Millisecond):
		}
	}
	if count > 5 {
		t.Errorf("%d progress notifications in a second", count)
	}
	cancel()
	cancelled := time.Now()
	if err := <-done; err == nil {
		t.Errorf("the cancelled call returned no error")
	}
	// Idle: at most a tick (10ms) of CPU in 500ms; it went idle when
	// its CPU time last grew.
	ticks, grew := cpuTicks(t, pid), time.Now()
	for time.Since(grew) < 500*time.Millisecond {
		time.Sleep(20 * time.Millisecond)
		if now := cpuTicks(t, pid); now > ticks+1 {
			ticks, grew = now, time.Now()
		}
		if time.Since(cancelled) > 10*time.Second {
			t.Fatalf("seedfall mcp still busy 10s after the cancel")
		}
	}
	t.Logf("idle %v after the cancel", grew.Sub(cancelled).Round(10*time.Millisecond))
	before := cpuTicks(t, pid)
	time.Sleep(time.Second)
	if used := cpuTicks(t, pid) - before; used > 5 {
		t.Errorf("seedfall mcp used %d ticks of CPU in the second after going idle", used)
	}
	asked := time.Now()
	if _, replay, isErr := p.call("seedfall_replay", map[string]any{"seed": 5, "tail": 1}); isErr || replay["seed"] != 5.0 {
		t.Errorf("a call after the cancel: %v", replay)
	}
	t.Logf("a replay after the cancel answered in %v", time.Since(asked).Round(time.Millisecond))

	// Closing stdin during a sweep: the server stops it and exits.
	sweep("sweep-2")
	closed := time.Now()
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(3 * time.Second):
		t.Fatalf("seedfall mcp still running 3s after stdin closed")
	}
	t.Logf("exited %v after stdin closed: %v", time.Since(closed).Round(time.Millisecond), p.cmd.ProcessState)
	if !p.cmd.ProcessState.Success() {
		t.Errorf("seedfall mcp exited with %v", p.cmd.ProcessState)
	}
}

// Looking at one seed again and again (seedfall_debug) forks from a
// recording of its run, and says what `seedfall debug -json` says from
// t=0 at each moment.
func TestMCPDebugForks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a world")
	}
	t.Setenv("SEEDFALL_CACHE", sharedCache)
	dir, err := filepath.EvalSymlinks(copyWorld(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "seedfall.json")
	m := mcpserver.New(mcpserver.Options{Config: cfg, Root: dir, Log: io.Discard})
	m.Recordings().MinSaved = -1 // fork whatever it saves: the world's runs take milliseconds
	ctx := context.Background()
	cs := connect(t, m)
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s %v: %v %+v", name, args, err, res)
		}
		return res.StructuredContent.(map[string]any)
	}
	// The failing seed's schedule is saved: looks at it fork.
	if run := call("seedfall_run", map[string]any{"seeds": "1"}); run["failed"] != 1.0 {
		t.Fatalf("seed 1 did not fail: %v", run)
	}
	// The last: several moments of one run, from t=0.
	for _, at := range [][]string{{"300ms"}, {"700ms"}, {"1.1s"}, {"900ms"}, {"1.2s"}, {"1.19s"}, {"400ms"}, {"30s"}, {"1.19s", "96ms", "30s"}} {
		var arg any = at
		args := []string{"-c", cfg, "-seed", "1", "-json"}
		for _, a := range at {
			args = append(args, "-at", a)
		}
		if len(at) == 1 {
			arg = at[0]
		}
		got, err := json.Marshal(call("seedfall_debug", map[string]any{"seed": 1, "at": arg}))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := debugCmd(args, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var a, b map[string]any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out.Bytes(), &b); err != nil {
			t.Fatal(err)
		}
		for _, m := range []map[string]any{a, b} {
			if ended, ok := m["ended"].(map[string]any); ok {
				delete(ended, "wall_ns") // the only thing that may differ
			}
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("at %s, seedfall_debug says\n%s\nand seedfall debug -json\n%s", at, got, out.Bytes())
		}
		if states, _ := a["states"].([]any); len(states) != len(at)-1 {
			t.Errorf("at %s: %d states before the last", at, len(states))
		}
	}
	if n := m.Recordings().Forked(); n == 0 {
		t.Errorf("no look forked")
	} else {
		t.Logf("%d of 8 looks at one moment forked", n)
	}
}

// Each tool calls the function its command calls: its structured result
// is what the command prints with -json for the same call, and its text
// what the command prints without.
func TestMCPMatchesJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a world")
	}
	t.Setenv("SEEDFALL_CACHE", sharedCache)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) // the commands lower it, as they do in a process of their own
	dir := copyWorld(t)
	cfg := filepath.Join(dir, "seedfall.json")
	m := mcpserver.New(mcpserver.Options{Config: cfg, Root: dir, Log: io.Discard})
	ctx := context.Background()
	cs := connect(t, m)
	// tool returns a tool's text and structured result, as JSON decodes it.
	tool := func(name string, args map[string]any) (string, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		text := ""
		for _, c := range res.Content {
			text += c.(*mcp.TextContent).Text
		}
		if res.IsError {
			t.Fatalf("%s %v: %s", name, args, text)
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		return text, got
	}
	// command returns what a command prints on stdout; a failing seed is
	// no error.
	command := func(run func([]string, io.Writer, io.Writer) error, args ...string) string {
		t.Helper()
		var out, errs bytes.Buffer
		if err := run(append([]string{"-c", cfg, "-seed", "1"}, args...), &out, &errs); err != nil && err != errFailed {
			t.Fatalf("%v: %v\n%s", args, err, errs.String())
		}
		return out.String()
	}
	// object decodes a -json line.
	object := func(line string) map[string]any {
		t.Helper()
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		return v
	}
	// same reports whether every field of want is in got, the same, but
	// for the real time a run took and the version -json names.
	same := func(what string, got, want map[string]any) {
		t.Helper()
		for _, m := range []map[string]any{got, want} {
			dropWallTime(m)
		}
		delete(want, "seedfall")
		for k, v := range want {
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s: %q is %v as a tool's result, %v as -json", what, k, got[k], v)
			}
		}
	}

	// run: each failure of the result is the seed's run -json line.
	_, run := tool("seedfall_run", map[string]any{"seeds": "1-3", "pinned": false})
	lines := strings.Split(strings.TrimSpace(command(runCmd, "-seeds", "1-3", "-json", "-pinned=false")), "\n")
	failures := run["failures"].([]any)
	if len(lines) != 3 || len(failures) != 3 {
		t.Fatalf("run: %d -json lines, %d failures", len(lines), len(failures))
	}
	for i, l := range lines {
		same(fmt.Sprintf("run, seed %d", i+1), failures[i].(map[string]any), object(l))
	}

	// run keeps what the command keeps: with out, a results directory;
	// with baseline, the triage, as run -json's last line gives it; and
	// its text is what run prints, but for real times.
	out := filepath.Join(dir, "mcp-results")
	text, _ := tool("seedfall_run", map[string]any{"seeds": "1-3", "pinned": false, "out": out})
	if _, err := results.ReadDir(out); err != nil {
		t.Errorf("run with out: %v", err)
	}
	realTime := regexp.MustCompile(`[0-9.]+(µs|ms|s) real| in [0-9.]+(µs|ms|s) \([0-9]+ seeds/s\)`)
	if cli := command(runCmd, "-seeds", "1-3", "-pinned=false"); realTime.ReplaceAllString(text, "") != realTime.ReplaceAllString(cli, "") {
		t.Errorf("run: the tool's text\n%s\nthe command's\n%s", text, cli)
	}
	_, triaged := tool("seedfall_run", map[string]any{"seeds": "1-4", "pinned": false, "baseline": out})
	lines = strings.Split(strings.TrimSpace(command(runCmd, "-seeds", "1-4", "-json", "-pinned=false", "-baseline", out)), "\n")
	if want := object(lines[len(lines)-1])["triage"]; want == nil || !reflect.DeepEqual(triaged["triage"], want) {
		t.Errorf("run with baseline: triage %v as a tool's result, %v as -json", triaged["triage"], want)
	}

	// replay: the result is replay -json's object, with more.
	_, replay := tool("seedfall_replay", map[string]any{"seed": 1})
	same("replay", replay, object(command(replayCmd, "-json")))

	// logs, of a program and of all, cut and not.
	for _, tc := range []struct {
		node string
		tail int
	}{{"server", 3}, {"", 0}} {
		text, logs := tool("seedfall_logs", map[string]any{"seed": 1, "node": tc.node, "tail": tc.tail})
		args := []string{"-node", tc.node, "-tail", strconv.Itoa(tc.tail)}
		want := object(command(logsCmd, append(args, "-json")...))
		same(fmt.Sprintf("logs %v", args), logs, want)
		if len(logs) != len(want) {
			t.Errorf("logs %v: the result has %d fields, -json %d", args, len(logs), len(want))
		}
		if cli := command(logsCmd, args...); text != cli {
			t.Errorf("logs %v: the tool's text\n%s\nthe command's\n%s", args, text, cli)
		}
		if n := len(logs["lines"].([]any)); tc.tail > 0 && (n != tc.tail || logs["total_lines"].(float64) <= float64(n)) {
			t.Errorf("logs %v: %d of %v lines", args, n, logs["total_lines"])
		}
	}

	// faults: a list, then an edit written to a file of its own.
	text, list := tool("seedfall_faults_edit", map[string]any{"seed": 1})
	same("faults", list, object(command(faultsCmd, "-json")))
	if cli := command(faultsCmd); text != cli {
		t.Errorf("faults: the tool's text\n%s\nthe command's\n%s", text, cli)
	}
	one := filepath.Join(dir, "one.json")
	_, edited := tool("seedfall_faults_edit", map[string]any{"seed": 1, "remove": []int{1}, "shift": []string{"2=+1ms"}, "out": one})
	same("faults -remove", edited, object(command(faultsCmd, "-remove", "1", "-shift", "2=+1ms", "-out", one, "-json")))
	if n := len(edited["fault_list"].([]any)); n != len(list["fault_list"].([]any))-1 || edited["file"] != one {
		t.Errorf("faults -remove 1: %v", edited)
	}

	// shrink: the first shrink starts from the schedule run saved; later
	// ones from the seed's own faults, which give the same file.
	tool("seedfall_shrink", map[string]any{"seed": 1})
	_, shrunk := tool("seedfall_shrink", map[string]any{"seed": 1})
	same("shrink", shrunk, object(command(shrinkCmd, "-json")))
	if shrunk["schedule"] != filepath.Join(dir, ".seedfall", "seed-1.faults.json") || len(shrunk["fault_list"].([]any)) != int(shrunk["faults"].(float64)) {
		t.Errorf("shrink: %v", shrunk)
	}

	// cause, of the shrunk schedule.
	_, cause := tool("seedfall_cause", map[string]any{"seed": 1})
	want := object(command(causeCmd, "-json"))
	same("cause", cause, want)
	if len(cause) != len(want) || cause["moments"] == nil {
		t.Errorf("cause: %v", cause)
	}

	// debug.
	_, dbg := tool("seedfall_debug", map[string]any{"seed": 1, "at": "500ms"})
	same("debug", dbg, object(command(debugCmd, "-at", "500ms", "-json")))
}

// dropWallTime deletes the real time a run took, wherever it is in v.
func dropWallTime(v any) {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "wall_ns")
		for _, x := range v {
			dropWallTime(x)
		}
	case []any:
		for _, x := range v {
			dropWallTime(x)
		}
	}
}

// connect starts a session of m in memory, and a client of it; the
// test's end closes them, then m.
func connect(t *testing.T, m *mcpserver.Server) *mcp.ClientSession {
	t.Helper()
	t.Cleanup(m.Close)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := m.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
