package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mcpClient drives a server in-process over pipes, one request at a time.
type mcpClient struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
	id   int
}

func startMCP(t *testing.T, config string) *mcpClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := newMCPServer(config, outW, io.Discard)
	c := &mcpClient{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		err := srv.serve(inR)
		srv.close()
		outW.Close()
		c.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		io.Copy(io.Discard, outR)
		if err := <-c.done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return c
}

// send writes one line and returns the response to it; every line the
// server writes must be a JSON-RPC response.
func (c *mcpClient) send(line string) map[string]any {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
	resp, err := c.out.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("reading the response to %s: %v", line, err)
	}
	var m map[string]any
	if err := json.Unmarshal(resp, &m); err != nil || m["jsonrpc"] != "2.0" {
		c.t.Fatalf("not a JSON-RPC response: %s (%v)", resp, err)
	}
	return m
}

func (c *mcpClient) request(method string, params any) map[string]any {
	c.t.Helper()
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	m := c.send(string(b))
	if m["id"] != float64(c.id) {
		c.t.Fatalf("response id %v, want %d", m["id"], c.id)
	}
	return m
}

// callTool returns a tools/call result: its text and structured content.
func (c *mcpClient) callTool(name string, args map[string]any) (text string, structured map[string]any, isError bool) {
	c.t.Helper()
	m := c.request("tools/call", map[string]any{"name": name, "arguments": args})
	res, ok := m["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s: no result: %v", name, m)
	}
	for _, item := range res["content"].([]any) {
		text += item.(map[string]any)["text"].(string) + "\n"
	}
	structured, _ = res["structuredContent"].(map[string]any)
	isError, _ = res["isError"].(bool)
	return text, structured, isError
}

func (c *mcpClient) notify(method string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	if _, err := io.WriteString(c.in, string(b)+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// copyWorld copies the lossy programs (the server acknowledges before it
// syncs, as in failure.txtar) from the starlark package's test data, and
// testdata/mcp's world, into a directory of the test's own: tools write
// .seedfall/ next to the world.
func copyWorld(t *testing.T) string {
	dir := t.TempDir()
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

func TestMCPProtocol(t *testing.T) {
	c := startMCP(t, "seedfall.json")
	init := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	res := init["result"].(map[string]any)
	if res["protocolVersion"] != "2025-06-18" || res["serverInfo"].(map[string]any)["name"] != "seedfall" || res["capabilities"].(map[string]any)["tools"] == nil {
		t.Errorf("initialize: %v", res)
	}
	// A notification gets no answer: the next response is the ping's.
	c.notify("notifications/initialized")
	if ping := c.request("ping", nil); ping["result"] == nil {
		t.Errorf("ping: %v", ping)
	}

	// An unknown protocol version is answered with the server's.
	c.id++
	old := c.send(`{"jsonrpc":"2.0","id":"v","method":"initialize","params":{"protocolVersion":"1999-01-01"}}`)
	if v := old["result"].(map[string]any)["protocolVersion"]; v != mcpProtocol {
		t.Errorf("initialize 1999-01-01: version %v, want %s", v, mcpProtocol)
	}

	list := c.request("tools/list", nil)["result"].(map[string]any)["tools"].([]any)
	want := []string{"seedfall_run", "seedfall_replay", "seedfall_logs", "seedfall_faults_edit", "seedfall_shrink", "seedfall_cause", "seedfall_debug"}
	if len(list) != len(want) {
		t.Fatalf("tools/list: %d tools, want %d", len(list), len(want))
	}
	for i, item := range list {
		tool := item.(map[string]any)
		schema := tool["inputSchema"].(map[string]any)
		if tool["name"] != want[i] || schema["type"] != "object" || tool["description"] == "" {
			t.Errorf("tool %d: %v", i, tool)
		}
		if _, ok := schema["properties"].(map[string]any)["config"]; !ok {
			t.Errorf("%s takes no config", tool["name"])
		}
	}

	// Protocol errors are JSON-RPC errors.
	for _, tc := range []struct {
		line string
		code float64
		msg  string
	}{
		{`{"jsonrpc":"2.0","id":9,"method":"resources/list"}`, -32601, `method "resources/list" not found`},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"seedfall_nope","arguments":{}}}`, -32602, `unknown tool "seedfall_nope"`},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"seedfall_replay","arguments":{}}}`, -32602, `argument "seed" is required`},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"seedfall_replay","arguments":{"seed":"one"}}}`, -32602, `argument "seed": want a uint64, not a JSON string`},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"seedfall_replay","arguments":{"seed":1,"seeds":"1-5"}}}`, -32602, `unknown argument "seeds"`},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"seedfall_run","arguments":{"seeds":[1]}}}`, -32602, `"seeds" is a string like`},
		{`{"jsonrpc":"2.0","id":9,"method":`, -32700, "parse error"},
		{`[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, -32600, "batches are not supported"},
		{`{"id":9,"method":"ping"}`, -32600, "not a JSON-RPC 2.0 request"},
	} {
		m := c.send(tc.line)
		e, ok := m["error"].(map[string]any)
		if !ok || e["code"] != tc.code || !strings.Contains(e["message"].(string), tc.msg) {
			t.Errorf("%s:\n got %v\nwant code %v, message containing %q", tc.line, m, tc.code, tc.msg)
		}
	}
}

func TestMCPTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a world")
	}
	t.Setenv("SEEDFALL_CACHE", sharedCache)
	dir := copyWorld(t)
	cfg := filepath.Join(dir, "seedfall.json")
	c := startMCP(t, cfg)
	c.request("initialize", map[string]any{"protocolVersion": mcpProtocol})
	c.notify("notifications/initialized")

	// run: every seed of this world loses a write; each failure says how
	// to replay it, and its schedule is saved.
	text, run, isErr := c.callTool("seedfall_run", map[string]any{"seeds": "1-3", "parallel": 2})
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

	// replay: the saved schedule gives the run's digest again.
	text, replay, isErr := c.callTool("seedfall_replay", map[string]any{"seed": 1, "tail": 2})
	if isErr || replay["passed"] != false || replay["digest"] != first["digest"] {
		t.Errorf("seedfall_replay: error %v, digest %v, want %v\n%s", isErr, replay["digest"], first["digest"], text)
	}
	if lines := replay["last_lines"].([]any); len(lines) != 2 || !strings.Contains(lines[1].(string), "client#1 - exit 1") {
		t.Errorf("seedfall_replay last lines: %v", lines)
	}
	if !strings.Contains(text, "seed 1, 2 faults from ") || !strings.Contains(text, "crash server, restart at") {
		t.Errorf("seedfall_replay text:\n%s", text)
	}

	// faults_edit: list, then remove every crash into a file of its own;
	// without them seed 1 passes.
	text, list, isErr := c.callTool("seedfall_faults_edit", map[string]any{"seed": 1})
	n := len(list["fault_list"].([]any))
	if isErr || n == 0 || !strings.Contains(text, "replay: seedfall replay") {
		t.Fatalf("seedfall_faults_edit list: error %v, %v\n%s", isErr, list, text)
	}
	var remove []int
	for i := 1; i <= n; i++ {
		remove = append(remove, i)
	}
	none := filepath.Join(dir, "none.json")
	text, edited, isErr := c.callTool("seedfall_faults_edit", map[string]any{"seed": 1, "remove": remove, "out": none})
	if isErr || len(edited["fault_list"].([]any)) != 0 || !strings.Contains(text, "seed 1, 0 faults from") {
		t.Errorf("seedfall_faults_edit remove: error %v, %v\n%s", isErr, edited, text)
	}
	text, replay, _ = c.callTool("seedfall_replay", map[string]any{"seed": 1, "faults": none})
	if replay["passed"] != true {
		t.Errorf("seed 1 without its crashes: %v\n%s", replay, text)
	}

	// Tool errors carry the command line's message.
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
	} {
		text, structured, isErr := c.callTool(tc.tool, tc.args)
		if !isErr || structured != nil || !strings.Contains(text, tc.msg) {
			t.Errorf("%s %v: error %v, text %q, want an error saying %q", tc.tool, tc.args, isErr, text, tc.msg)
		}
	}
	if b, err := os.ReadFile(saved); err != nil || !strings.Contains(string(b), `"seed": 1`) {
		t.Errorf("a refused edit changed %s: %s %v", saved, b, err)
	}

	// logs and debug.
	text, _, isErr = c.callTool("seedfall_logs", map[string]any{"seed": 1, "node": "server", "tail": 0})
	if isErr || !strings.Contains(text, "server#1 - crash, restart at") || strings.Contains(text, "client#1 -") ||
		!strings.HasSuffix(text, "FAIL workload: client#1 exited with status 1\n\n") {
		t.Errorf("seedfall_logs:\n%s", text)
	}
	text, dbg, isErr := c.callTool("seedfall_debug", map[string]any{"seed": 1, "at": "500ms"})
	if isErr || dbg["state"] == nil || !strings.Contains(text, "world at 500ms") {
		t.Errorf("seedfall_debug: %v\n%s", dbg, text)
	}
}
