package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

func init() {
	register(command{"mcp", "[-c seedfall.json]", mcpCmd})
}

// mcpProtocol is the MCP revision this server speaks; it also answers
// clients that ask for an older revision with the same tools.
const mcpProtocol = "2025-06-18"

var mcpProtocols = []string{mcpProtocol, "2025-03-26", "2024-11-05"}

// mcpCmd serves seedfall's commands as MCP tools over stdin and stdout, one
// JSON-RPC message per line, until stdin closes.
func mcpCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mcp", stderr)
	cfg := fs.String("c", "seedfall.json", "the world file a tool call uses when it names none")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if stdout == io.Writer(os.Stdout) {
		// stdout carries the protocol alone: anything else that prints to
		// os.Stdout in this process would corrupt it.
		os.Stdout = os.Stderr
	}
	srv := newMCPServer(*cfg, stdout, stderr)
	defer srv.close()
	return srv.serve(os.Stdin)
}

// mcpServer answers one client. Tool calls run concurrently, each in its
// own goroutine; their worlds open in one engine kept for the session.
type mcpServer struct {
	config string    // the world file of a call that names none (-c)
	log    io.Writer // the process's stderr

	outMu sync.Mutex
	out   *bufio.Writer
	calls sync.WaitGroup

	engMu  sync.Mutex
	eng    *engine.Engine
	engErr error
}

func newMCPServer(config string, stdout, stderr io.Writer) *mcpServer {
	return &mcpServer{config: config, log: stderr, out: bufio.NewWriter(stdout)}
}

// close releases the engine once every call has answered.
func (m *mcpServer) close() {
	m.calls.Wait()
	m.engMu.Lock()
	defer m.engMu.Unlock()
	if m.eng != nil {
		m.eng.Close(context.Background())
	}
}

// engine returns the session's engine, made on first use. One engine
// serves every world: it keeps compiled programs by content hash, so a
// world prepared again after its programs changed rebuilds only what
// changed, and one whose programs did not change costs only the hashing.
func (m *mcpServer) engine(ctx context.Context) (*engine.Engine, error) {
	m.engMu.Lock()
	defer m.engMu.Unlock()
	if m.eng == nil && m.engErr == nil {
		m.eng, m.engErr = engine.New(ctx, engine.Options{})
	}
	return m.eng, m.engErr
}

// JSON-RPC 2.0 messages.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"` // absent in a notification
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcNoMethod       = -32601
	rpcInvalidParams  = -32602
)

// serve reads requests until in closes, then waits for the calls still
// running to answer.
func (m *mcpServer) serve(in io.Reader) error {
	r := bufio.NewReaderSize(in, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			m.handle(line)
		}
		if err == io.EOF {
			m.calls.Wait()
			return nil
		}
		if err != nil {
			m.calls.Wait()
			return err
		}
	}
}

// handle answers one message; a tools/call answers from its own goroutine.
func (m *mcpServer) handle(line []byte) {
	var req rpcRequest
	if err := json.Unmarshal(line, &req); err != nil {
		if line[0] == '[' && json.Valid(line) {
			m.reply(json.RawMessage("null"), nil, &rpcError{rpcInvalidRequest, "batches are not supported: send one request per line"})
			return
		}
		m.reply(json.RawMessage("null"), nil, &rpcError{rpcParseError, "parse error: " + err.Error()})
		return
	}
	notification := len(req.ID) == 0
	if req.JSONRPC != "2.0" || req.Method == "" {
		if !notification {
			m.reply(req.ID, nil, &rpcError{rpcInvalidRequest, `not a JSON-RPC 2.0 request: it needs "jsonrpc": "2.0" and a "method"`})
		}
		return
	}
	if notification {
		// notifications/initialized and notifications/cancelled need no
		// answer; a call cannot be stopped halfway, so it runs to its end.
		return
	}
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p)
		version := mcpProtocol
		if slices.Contains(mcpProtocols, p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
		m.reply(req.ID, map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "seedfall", "version": seedfallVersion()},
			"instructions":    mcpInstructions,
		}, nil)
	case "ping":
		m.reply(req.ID, struct{}{}, nil)
	case "tools/list":
		tools := make([]map[string]any, len(mcpTools))
		for i, t := range mcpTools {
			tools[i] = map[string]any{"name": t.name, "title": t.title, "description": t.description, "inputSchema": t.schema()}
		}
		m.reply(req.ID, map[string]any{"tools": tools}, nil)
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			m.reply(req.ID, nil, &rpcError{rpcInvalidParams, "tools/call params: " + err.Error()})
			return
		}
		t := findTool(p.Name)
		if t == nil {
			m.reply(req.ID, nil, &rpcError{rpcInvalidParams, fmt.Sprintf("unknown tool %q (tools/list names them)", p.Name)})
			return
		}
		args, err := t.parse(p.Arguments)
		if err != nil {
			m.reply(req.ID, nil, &rpcError{rpcInvalidParams, fmt.Sprintf("%s: %v", t.name, err)})
			return
		}
		m.calls.Add(1)
		go func() {
			defer m.calls.Done()
			m.reply(req.ID, m.call(t, args), nil)
		}()
	default:
		m.reply(req.ID, nil, &rpcError{rpcNoMethod, fmt.Sprintf("method %q not found: this server has initialize, ping, tools/list and tools/call", req.Method)})
	}
}

// reply writes one response line.
func (m *mcpServer) reply(id json.RawMessage, result any, e *rpcError) {
	b, err := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Result: result, Error: e})
	if err != nil {
		b, _ = json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Error: &rpcError{-32603, "internal error: " + err.Error()}})
	}
	m.outMu.Lock()
	defer m.outMu.Unlock()
	m.out.Write(b)
	m.out.WriteByte('\n')
	if err := m.out.Flush(); err != nil {
		fmt.Fprintf(m.log, "seedfall mcp: writing a response: %v\n", err)
	}
}

func seedfallVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

const mcpInstructions = `seedfall runs Go programs as nodes of a simulated world and injects faults from a seed; a failing seed replays exactly. ` +
	`Start with seedfall_run over a range of seeds; for a failing seed, seedfall_replay or seedfall_logs show what happened, ` +
	`seedfall_shrink keeps only the faults the failure needs, seedfall_cause finds when it became inevitable, seedfall_debug shows the world at a moment, ` +
	`and seedfall_faults_edit removes, shifts or adds faults to test a hypothesis. A failing seed's schedule is kept in .seedfall/ next to the world file.`

// toolResult is a tools/call result: the text a person would read, and
// the same facts as JSON where a program would want them.
type toolResult struct {
	Content    []toolContent `json:"content"`
	Structured any           `json:"structuredContent,omitempty"`
	IsError    bool          `json:"isError,omitempty"`
}

type toolContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// toolCall is one call's arguments and what its commands write to stderr.
type toolCall struct {
	srv  *mcpServer
	args toolArgs
	text bytes.Buffer // what the call prints, as the command would to stdout

	logMu sync.Mutex
	logs  bytes.Buffer // notes the commands write to stderr
}

// Write takes what a command writes to stderr: notes, kept for the result.
func (c *toolCall) Write(p []byte) (int, error) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	return c.logs.Write(p)
}

// keptEngine makes open (common.go) prepare the call's worlds in the
// session's engine: a toolCall is the stderr of the commands it runs.
func (c *toolCall) keptEngine(ctx context.Context) (*engine.Engine, error) {
	return c.srv.engine(ctx)
}

// world is the call's world as -c, -profile and -set.
func (c *toolCall) world() *worldArgs {
	cfg := cmp.Or(c.args.Config, c.srv.config)
	profile := c.args.Profile
	return &worldArgs{cfg: &cfg, profile: &profile, sets: c.args.Set}
}

// call runs a tool and turns its outcome into a result. An error is a
// result too, with the message the command line gives, so that the agent
// sees it; a failing seed is not an error.
func (m *mcpServer) call(t *mcpTool, args toolArgs) (res *toolResult) {
	c := &toolCall{srv: m, args: args}
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(m.log, "seedfall mcp: %s panicked: %v\n%s", t.name, p, debug.Stack())
			res = &toolResult{Content: []toolContent{{"text", fmt.Sprintf("seedfall %s: internal error: %v", t.verb, p)}}, IsError: true}
		}
	}()
	structured, err := t.run(c)
	res = &toolResult{Structured: structured}
	if notes := strings.TrimSpace(c.logs.String()); notes != "" {
		res.Content = append(res.Content, toolContent{"text", notes})
	}
	if err != nil && !errors.Is(err, errFailed) {
		res.IsError, res.Structured = true, nil
		res.Content = append(res.Content, toolContent{"text", fmt.Sprintf("seedfall %s: %v", t.verb, err)})
		return res
	}
	res.Content = append(res.Content, toolContent{"text", c.text.String()})
	return res
}

// cli runs a command of the command line for the call, with its stdout
// going to the call's text. A flag the command refused prints its usage
// on stderr: that is dropped, since the error says what is wrong.
func (c *toolCall) cli(run func([]string, io.Writer, io.Writer) error, args ...string) error {
	wa := c.world()
	full := append([]string{"-c", *wa.cfg}, args...)
	if *wa.profile != "" {
		full = append(full, "-profile", *wa.profile)
	}
	for _, s := range wa.sets {
		full = append(full, "-set", s)
	}
	err := run(full, &c.text, c)
	if err != nil && !errors.Is(err, errFailed) {
		c.logMu.Lock()
		var keep []string
		for _, l := range strings.Split(c.logs.String(), "\n") {
			if strings.HasPrefix(l, "note: ") {
				keep = append(keep, l)
			}
		}
		c.logs.Reset()
		c.logs.WriteString(strings.Join(keep, "\n"))
		c.logMu.Unlock()
	}
	return err
}

// toolArgs holds every tool's arguments; a tool's schema says which it
// takes, and parse refuses the others.
type toolArgs struct {
	Config   string            `json:"config"`
	Profile  string            `json:"profile"`
	Set      []string          `json:"set"`
	Seed     *uint64           `json:"seed"`
	Seeds    seedsArg          `json:"seeds"`
	Parallel int               `json:"parallel"`
	Pinned   *bool             `json:"pinned"`
	Faults   string            `json:"faults"`
	Node     string            `json:"node"`
	Tail     *int              `json:"tail"`
	Remove   []int             `json:"remove"`
	Shift    []string          `json:"shift"`
	Add      []json.RawMessage `json:"add"`
	Out      string            `json:"out"`
	Budget   string            `json:"budget"`
	At       string            `json:"at"`
}

// seedsArg is "1-500", "2-3,9" or a bare number.
type seedsArg string

func (s *seedsArg) UnmarshalJSON(b []byte) error {
	var n uint64
	if json.Unmarshal(b, &n) == nil {
		*s = seedsArg(strconv.FormatUint(n, 10))
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return errors.New(`"seeds" is a string like "1-500" or "2-3,9", or one seed number`)
	}
	*s = seedsArg(str)
	return nil
}

// mcpTool is one tool: its schema and what a call does.
type mcpTool struct {
	name, verb, title, description string
	props                          []prop
	required                       []string
	run                            func(c *toolCall) (structured any, err error)
}

type prop struct {
	name   string
	schema map[string]any
}

func (t *mcpTool) schema() map[string]any {
	props := map[string]any{}
	for _, p := range t.props {
		props[p.name] = p.schema
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(t.required) > 0 {
		s["required"] = t.required
	}
	return s
}

// parse checks the arguments against the schema's names and required
// fields, and decodes them; types are checked by decoding.
func (t *mcpTool) parse(raw json.RawMessage) (toolArgs, error) {
	var args toolArgs
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return args, errors.New("arguments must be a JSON object")
	}
	var names []string
	for _, p := range t.props {
		names = append(names, p.name)
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(names, k) {
			return args, fmt.Errorf("unknown argument %q (it takes %s)", k, strings.Join(names, ", "))
		}
	}
	for _, r := range t.required {
		if _, ok := fields[r]; !ok {
			return args, fmt.Errorf("argument %q is required", r)
		}
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return args, fmt.Errorf("argument %q: want a %s, not a JSON %s", te.Field, te.Type, te.Value)
		}
		return args, err
	}
	return args, nil
}

func findTool(name string) *mcpTool {
	for _, t := range mcpTools {
		if t.name == name {
			return t
		}
	}
	return nil
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
func integer(desc string, min int) map[string]any {
	return map[string]any{"type": "integer", "minimum": min, "description": desc}
}

// The arguments tools share.
var (
	pConfig  = prop{"config", str("the world file (.json, .toml or .star), relative to the server's working directory; default: the -c of seedfall mcp")}
	pProfile = prop{"profile", str(`merge this entry of the world file's "profiles" over the world`)}
	pSet     = prop{"set", map[string]any{"type": "array", "items": map[string]any{"type": "string"},
		"description": "override fields, as path=value: a JSON value or a bare string, such as faults.crash_per_sec=0.5"}}
	pSeed   = prop{"seed", integer("the seed", 0)}
	pFaults = prop{"faults", str("the schedule file to apply; default: .seedfall/seed-N.faults.json next to the world file if it exists, else the faults the seed draws")}
)

var world3 = []prop{pConfig, pProfile, pSet}

var mcpTools = []*mcpTool{
	{name: "seedfall_run", verb: "run", title: "Run seeds",
		description: "Run a world under many seeds and report which fail. A failing seed's schedule is saved to .seedfall/seed-N.faults.json, and the result says how to replay it. Pinned regressions (seedfall pin) run first unless pinned is false.",
		props: append(slices.Clip(world3),
			prop{"seeds", map[string]any{"type": []string{"string", "integer"}, "description": `the seeds: "1-500", "2-3,9" or one number`}},
			prop{"parallel", integer("worlds run at once; default: one per core", 1)},
			prop{"pinned", map[string]any{"type": "boolean", "description": "replay the pinned regressions first (default true)"}}),
		required: []string{"seeds"}, run: toolRun},
	{name: "seedfall_replay", verb: "replay", title: "Replay a seed",
		description: "Replay one seed exactly: its faults, verdict, last output lines and trace digest.",
		props:       append(slices.Clip(world3), pSeed, pFaults, prop{"tail", integer("how many of the run's last output lines to return (default 20)", 0)}),
		required:    []string{"seed"}, run: toolReplay},
	{name: "seedfall_logs", verb: "logs", title: "A seed's logs",
		description: "Replay one seed and return its trace: every program's output and the faults as they happened, with virtual times, then the verdict.",
		props: append(slices.Clip(world3), pSeed, pFaults,
			prop{"node", str("only this program's lines")},
			prop{"tail", integer("only the last N lines (default 200; 0 for all)", 0)}),
		required: []string{"seed"}, run: toolLogs},
	{name: "seedfall_faults_edit", verb: "faults", title: "List or edit a seed's faults",
		description: "List a seed's fault schedule, or edit it and write it back, as `seedfall faults` does: positions count from 1 as listed and refer to the schedule before the edit; the result is checked against the world before anything is written. Replay the seed afterwards to test the edit.",
		props: append(slices.Clip(world3), prop{"seed", integer("the seed whose schedule to list or edit", 0)},
			prop{"faults", str("the schedule to start from; default: .seedfall/seed-N.faults.json next to the world file, else the faults the seed draws (one run)")},
			prop{"remove", map[string]any{"type": "array", "items": map[string]any{"type": "integer", "minimum": 1}, "description": "positions of faults to remove"}},
			prop{"shift", map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": `moves, as "N=AMOUNT": a signed duration for a timed fault ("2=-50ms"), a signed count for one that fires at an operation ("1=+2")`}},
			prop{"add", map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": `faults to add, such as {"at":"1s","kind":"pause","node":"server","until":"1.5s"}`}},
			prop{"out", str("write the result here; default: back to the file it came from")}),
		required: []string{"seed"}, run: toolFaults},
	{name: "seedfall_shrink", verb: "shrink", title: "Shrink a failing seed",
		description: "Find the smallest schedule of faults with which a seed still fails the same way, and save it as .seedfall/seed-N.faults.json; replay then uses it.",
		props: append(slices.Clip(world3), prop{"seed", integer("the failing seed", 0)}, pFaults,
			prop{"budget", str("the wall time shrinking may take, such as 30s (default 2m; 0 for no limit); when it runs out the smallest failing schedule so far is kept")}),
		required: []string{"seed"}, run: toolShrink},
	{name: "seedfall_cause", verb: "cause", title: "When a failure became inevitable",
		description: "Fork a failing run at many moments with fresh randomness and report when the failure became inevitable, with the faults and events just before.",
		props:       append(slices.Clip(world3), pSeed, pFaults),
		required:    []string{"seed"}, run: toolCause},
	{name: "seedfall_debug", verb: "debug", title: "The world at a moment",
		description: "Run a seed to a virtual time and show the world then: each program's state and incarnation, its connections, the writes a crash would lose, and the faults in force.",
		props:       append(slices.Clip(world3), pSeed, pFaults, prop{"at", str("the virtual time to stop at, such as 1.5s")}),
		required:    []string{"seed", "at"}, run: toolDebug},
}

// open opens the call's world in the session's engine, and the schedule
// to apply: nil means the seed's own faults, from names the file.
func (c *toolCall) open(ctx context.Context) (s *session, sch *faults.Schedule, from string, err error) {
	if s, err = open(ctx, c.world(), c); err != nil {
		return nil, nil, "", err
	}
	if c.args.Seed == nil {
		return s, nil, "", nil
	}
	if sch, from, err = s.loadSchedule(c.args.Faults, *c.args.Seed); err != nil {
		return nil, nil, "", err
	}
	return s, sch, from, nil
}

// runReport is seedfall_run's structured result.
type runReport struct {
	Seeds         int           `json:"seeds"`
	Passed        int           `json:"passed"`
	Failed        int           `json:"failed"`
	FailedSeeds   []uint64      `json:"failed_seeds"`
	Failures      []seedFailure `json:"failures"`
	PinnedFailing int           `json:"pinned_failing,omitempty"`
}

// seedFailure is a failing seed, with how to replay it.
type seedFailure struct {
	jsonResult
	Replay    string   `json:"replay"`
	LastLines []string `json:"last_lines"`
}

// mcpDetailedFailures is how many failing seeds of a sweep are detailed in
// the structured result (the text details as many as seedfall run does).
const mcpDetailedFailures = 20

func toolRun(c *toolCall) (any, error) {
	list, err := parseSeeds(string(c.args.Seeds))
	if err != nil {
		return nil, err
	}
	parallel := c.args.Parallel
	if parallel < 1 {
		parallel = defaultParallel()
	}
	parallel = min(parallel, maxParallel)
	ctx := context.Background()
	s, _, _, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	rep := runReport{Seeds: list.Len(), FailedSeeds: []uint64{}, Failures: []seedFailure{}}
	if c.args.Pinned == nil || *c.args.Pinned {
		if rep.PinnedFailing, err = s.runPinned(ctx, &c.text, false); err != nil {
			return nil, err
		}
	}
	var failed seedTally
	_, err = s.sweep(ctx, list, parallel, nil, func(res *engine.Result) {
		if res.Passed {
			rep.Passed++
			return
		}
		rep.Failed++
		rep.FailedSeeds = append(rep.FailedSeeds, res.Seed)
		failed.add(res.Seed)
		schedule := ""
		if path, err := s.saveSchedule(res); err != nil {
			fmt.Fprintf(c, "seedfall: could not save the schedule of seed %d: %v\n", res.Seed, err)
		} else {
			schedule = displayPath(path)
		}
		if rep.Failed <= detailedFailures {
			s.printVerdict(&c.text, res, s.replayCommand(res.Seed))
		} else {
			// Past the first few, one line each keeps a long sweep readable.
			fmt.Fprintf(&c.text, "FAIL seed %d at t=%s: %s: %s\n", res.Seed, simTime(res.SimNs), res.Class, res.Reason)
		}
		if rep.Failed > mcpDetailedFailures {
			return
		}
		f := seedFailure{jsonResult: newJSONResult(res, schedule), Replay: s.replayCommand(res.Seed), LastLines: []string{}}
		for _, l := range tailLines(res.Lines, res.Node, 8) {
			f.LastLines = append(f.LastLines, l.String())
		}
		rep.Failures = append(rep.Failures, f)
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&c.text, "%d seeds: %d passed, %d failed%s\n", list.Len(), rep.Passed, rep.Failed, &failed)
	return rep, nil
}

// replayReport is seedfall_replay's structured result.
type replayReport struct {
	jsonResult
	Faults    []string `json:"fault_list"`
	LastLines []string `json:"last_lines"`
}

func toolReplay(c *toolCall) (any, error) {
	ctx := context.Background()
	s, sch, from, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	seed := *c.args.Seed
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: sch})
	if err != nil {
		return nil, err
	}
	rep := replayReport{jsonResult: newJSONResult(res, from), Faults: []string{}, LastLines: []string{}}
	for _, f := range res.Schedule.Faults {
		rep.Faults = append(rep.Faults, faults.Describe(f))
	}
	s.printReplay(&c.text, res, sch, from)
	tail := 20
	if c.args.Tail != nil {
		tail = *c.args.Tail
	}
	lines := tailLines(res.Lines, "", tail)
	if len(lines) > 0 {
		fmt.Fprintf(&c.text, "last %s of the run:\n", plural(len(lines), "line"))
	}
	for _, l := range lines {
		fmt.Fprintf(&c.text, "  %s\n", l.String())
		rep.LastLines = append(rep.LastLines, l.String())
	}
	fmt.Fprintf(&c.text, "digest %s\n", res.Digest)
	return rep, nil
}

func toolLogs(c *toolCall) (any, error) {
	ctx := context.Background()
	s, sch, _, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	node := c.args.Node
	if node != "" && s.w.Program(node) == nil {
		var names []string
		for _, p := range s.w.Programs() {
			names = append(names, p.Name)
		}
		return nil, fmt.Errorf("-node %q: no such program in %s (it has %v)", node, s.cfg, names)
	}
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: *c.args.Seed, Schedule: sch})
	if err != nil {
		return nil, err
	}
	tail := 200
	if c.args.Tail != nil {
		tail = *c.args.Tail
	}
	lines := res.Lines
	total := len(tailLines(lines, node, len(lines)))
	if tail > 0 && total > tail {
		lines = tailLines(lines, node, tail)
		fmt.Fprintf(&c.text, "(the last %d of %d lines; tail 0 gives them all)\n", tail, total)
	}
	fmt.Fprint(&c.text, trace.Render(lines, node))
	verdict := "PASS"
	if !res.Passed {
		verdict = "FAIL " + res.Class + ":"
	}
	fmt.Fprintf(&c.text, "%s %s\n", verdict, res.Reason)
	return nil, nil
}

// faultsReport is seedfall_faults_edit's structured result: the schedule
// file as it now stands.
type faultsReport struct {
	File     string          `json:"file"`
	Faults   []string        `json:"fault_list"`
	Schedule json.RawMessage `json:"schedule"`
}

func toolFaults(c *toolCall) (any, error) {
	a := c.args
	args := []string{"-seed", strconv.FormatUint(*a.Seed, 10)}
	if a.Faults != "" {
		args = append(args, "-faults", a.Faults)
	}
	for _, n := range a.Remove {
		args = append(args, "-remove", strconv.Itoa(n))
	}
	for _, sh := range a.Shift {
		args = append(args, "-shift", sh)
	}
	for _, f := range a.Add {
		var b bytes.Buffer
		json.Compact(&b, f)
		args = append(args, "-add", b.String())
	}
	if a.Out != "" {
		args = append(args, "-out", a.Out)
	}
	if err := c.cli(faultsCmd, args...); err != nil {
		return nil, err
	}
	// The file the command read or wrote: -out, else -faults, else the
	// seed's own file, which it wrote when the faults were drawn.
	file := cmp.Or(a.Out, a.Faults)
	if file == "" {
		w, err := c.world().load()
		if err != nil {
			return nil, err
		}
		file = (&session{w: w}).schedulePath(*a.Seed)
	}
	return readScheduleReport(file)
}

func readScheduleReport(file string) (*faultsReport, error) {
	b, err := faults.ReadFile(file)
	if err != nil {
		return nil, err
	}
	sch, err := faults.Parse(displayPath(file), b)
	if err != nil {
		return nil, err
	}
	rep := &faultsReport{File: displayPath(file), Faults: []string{}, Schedule: json.RawMessage(bytes.TrimSpace(b))}
	for _, f := range sch.Faults {
		rep.Faults = append(rep.Faults, faults.Describe(f))
	}
	return rep, nil
}

func toolShrink(c *toolCall) (any, error) {
	a := c.args
	args := []string{"-seed", strconv.FormatUint(*a.Seed, 10)}
	if a.Faults != "" {
		args = append(args, "-faults", a.Faults)
	}
	if a.Budget != "" {
		args = append(args, "-budget", a.Budget)
	}
	err := c.cli(shrinkCmd, args...)
	if !errors.Is(err, errFailed) {
		return nil, err // a seed that passes has nothing to shrink: the text says so
	}
	w, lerr := c.world().load()
	if lerr != nil {
		return nil, err
	}
	rep, rerr := readScheduleReport((&session{w: w}).schedulePath(*a.Seed))
	if rerr != nil {
		return nil, err
	}
	return rep, err
}

func toolCause(c *toolCall) (any, error) {
	args := []string{"-seed", strconv.FormatUint(*c.args.Seed, 10)}
	if c.args.Faults != "" {
		args = append(args, "-faults", c.args.Faults)
	}
	return nil, c.cli(causeCmd, args...)
}

// debugReport is seedfall_debug's structured result, as debug -json.
type debugReport struct {
	Seed   uint64         `json:"seed"`
	Ended  *jsonResult    `json:"ended,omitempty"`
	State  *engine.State  `json:"state"`
	Faults []faults.Fault `json:"faults"`
}

func toolDebug(c *toolCall) (any, error) {
	at, err := time.ParseDuration(c.args.At)
	if err != nil || at <= 0 {
		return nil, fmt.Errorf("say when to stop: \"at\", a virtual time above 0 such as 1.5s, not %q (the failure's time is in seedfall_replay)", c.args.At)
	}
	ctx := context.Background()
	s, sch, from, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	seed := *c.args.Seed
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: sch, StopAt: at, State: true})
	if err != nil {
		return nil, err
	}
	rep := debugReport{Seed: seed, State: res.State, Faults: slices.Clip(res.Schedule.Faults)}
	if rep.Faults == nil {
		rep.Faults = []faults.Fault{}
	}
	printSource(&c.text, seed, sch, from)
	if !strings.HasPrefix(res.Reason, "stopped at") {
		j := newJSONResult(res, from)
		rep.Ended = &j
		fmt.Fprintf(&c.text, "the run ended before %v: ", at)
		s.printVerdict(&c.text, res, "")
	}
	writeState(&c.text, res.State, res.Schedule)
	return rep, nil
}
