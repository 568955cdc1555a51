// Package mcpserver serves seedfall's commands as MCP tools: a skin over
// engine/session, as the command line is. Each tool runs the operation
// its command runs and gives the text the command prints and, as its
// structured result, the object the command's -json prints.
package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/session"
	"github.com/seedfall/seedfall/engine/world"
	"github.com/seedfall/seedfall/starlark"
)

// Limits on what a call brings and what its result carries (docs/agents.md).
const (
	mcpMaxArgs       = 64 << 10  // bytes of a tool call's arguments, as JSON
	mcpMaxText       = 128 << 10 // bytes of a result's text; the middle is cut
	mcpMaxSeedList   = 1000      // failed_seeds a run lists
	mcpProgressEvery = 250 * time.Millisecond
)

// Options say which world a call that names none uses, and where the
// server's files and log are.
type Options struct {
	Config string    // the world file of a call that names none (seedfall mcp -c)
	Root   string    // the working directory, symlinks resolved: paths stay in it
	Log    io.Writer // the process's stderr: a tool that panicked
}

// New returns a server that answers one client; Close it after.
func New(o Options) *Server {
	return &Server{config: o.Config, root: o.Root, log: o.Log}
}

// Serve answers one client over in and out until in closes; the calls
// still running then are cancelled.
func Serve(ctx context.Context, o Options, in io.ReadCloser, out io.Writer) error {
	m := New(o)
	defer m.Close()
	t := &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{out}}
	return m.Server().Run(ctx, t)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Server answers one client. The SDK runs tool calls concurrently;
// their worlds open in one engine kept for the session.
type Server struct {
	config string    // the world file of a call that names none (-c)
	root   string    // the working directory, symlinks resolved: paths stay in it
	log    io.Writer // the process's stderr

	engMu  sync.Mutex
	eng    *engine.Engine
	engErr error

	// Looks at one seed (seedfall_debug) fork from recordings of its run
	// (engine.Recordings), which need the same prepared world each time:
	// the engine gives it, as it prepares a world it kept again.
	recordings engine.Recordings
}

// Recordings are the recordings of runs that looks at one seed fork from.
func (m *Server) Recordings() *engine.Recordings { return &m.recordings }

// Close releases the engine; the SDK has waited for every call.
func (m *Server) Close() {
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
func (m *Server) engine() (*engine.Engine, error) {
	m.engMu.Lock()
	defer m.engMu.Unlock()
	if m.eng == nil && m.engErr == nil {
		m.eng, m.engErr = engine.New(context.Background(), engine.Options{})
	}
	return m.eng, m.engErr
}

func (m *Server) Server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "seedfall", Version: session.Version()}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.AddReceivingMiddleware(bounded)
	addTool(m, s, "seedfall_run", "run", "Run seeds",
		"Run a world under many seeds and report which fail. A failing seed's schedule is saved to .seedfall/seed-N.faults.json, and the result says how to replay it. Pinned regressions (seedfall pin) run first unless pinned is false.",
		func(p props) {
			p["seeds"].Type, p["seeds"].Types = "", []string{"string", "integer"}
			p["parallel"].Minimum = ptr(1.0)
			p["pinned"].Default = json.RawMessage("true")
		}, toolRun)
	addTool(m, s, "seedfall_replay", "replay", "Replay a seed",
		"Replay one seed exactly: its faults, verdict, last output lines and trace digest.",
		func(p props) { p["tail"].Default, p["tail"].Minimum = json.RawMessage("20"), ptr(0.0) }, toolReplay)
	addTool(m, s, "seedfall_logs", "logs", "A seed's logs",
		"Replay one seed and return its trace: every program's output and the faults as they happened, with virtual times, then the verdict.",
		func(p props) { p["tail"].Default, p["tail"].Minimum = json.RawMessage("200"), ptr(0.0) }, toolLogs)
	addTool(m, s, "seedfall_faults_edit", "faults", "List or edit a seed's faults",
		"List a seed's fault schedule, or edit it and write it back, as `seedfall faults` does: positions count from 1 as listed and refer to the schedule before the edit; the result is checked against the world before anything is written. Replay the seed afterwards to test the edit.",
		func(p props) {
			p["seed"].Description = "the seed whose schedule to list or edit"
			p["faults"].Description = "the schedule to start from; default: .seedfall/seed-N.faults.json next to the world file, else the faults the seed draws (one run)"
			p["remove"].Items.Minimum = ptr(1.0)
		}, toolFaults)
	addTool(m, s, "seedfall_shrink", "shrink", "Shrink a failing seed",
		"Find the smallest schedule of faults with which a seed still fails the same way, and save it as .seedfall/seed-N.faults.json; replay then uses it.",
		func(p props) { p["seed"].Description = "the failing seed" }, toolShrink)
	addTool(m, s, "seedfall_cause", "cause", "When a failure became inevitable",
		"Fork a failing run at many moments with fresh randomness and report when the failure became inevitable, with the faults and events just before.",
		nil, toolCause)
	addTool(m, s, "seedfall_debug", "debug", "The world at a moment",
		"Run a seed to a virtual time and show the world then: each program's state and incarnation, its connections, the writes a crash would lose, and the faults in force. Several times show several moments of one run, as seedfall cause's last line suggests.",
		func(p props) {
			p["at"].Type, p["at"].Types = "", []string{"string", "array"}
			p["at"].Items = &jsonschema.Schema{Type: "string"}
		}, toolDebug)
	return s
}

func ptr[T any](v T) *T { return &v }

const mcpInstructions = `seedfall runs Go programs as nodes of a simulated world and injects faults from a seed; a failing seed replays exactly. ` +
	`Start with seedfall_run over a range of seeds; for a failing seed, seedfall_replay or seedfall_logs show what happened, ` +
	`seedfall_shrink keeps only the faults the failure needs, seedfall_cause finds when it became inevitable, seedfall_debug shows the world at a moment, ` +
	`and seedfall_faults_edit removes, shifts or adds faults to test a hypothesis. A failing seed's schedule is kept in .seedfall/ next to the world file.`

// bounded refuses a tool call whose arguments are over mcpMaxArgs, before
// they are decoded, and cuts a result's text to mcpMaxText, whatever made
// it (a tool, or the SDK refusing arguments that do not fit the schema).
func bounded(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if call, ok := req.(*mcp.CallToolRequest); ok && len(call.Params.Arguments) > mcpMaxArgs {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: the arguments are %d bytes, over the limit of %d KiB: pass large inputs, such as many faults, in a file (faults)",
				capText(call.Params.Name, 100), len(call.Params.Arguments), mcpMaxArgs>>10)}}}, nil
		}
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					t.Text = capText(t.Text, mcpMaxText)
				}
			}
		}
		return res, err
	}
}

// capText keeps the first and last parts of s when it is over max bytes,
// with a line between them saying what was cut.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := s[:max/2], s[len(s)-max/2:]
	return fmt.Sprintf("%s\n[... %d bytes cut: a result's text is capped at %d KiB; ask for less (seedfall_logs takes tail and node) or run the same command with the seedfall command line, which prints it all ...]\n%s",
		strings.ToValidUTF8(head, ""), len(s)-len(head)-len(tail), max>>10, strings.ToValidUTF8(tail, ""))
}

// props are a tool's input properties, to adjust what the schema inferred
// from its Go type cannot say: defaults, minimums, two types.
type props map[string]*jsonschema.Schema

// addTool adds a tool whose input schema is inferred from In, with the
// descriptions of its fields' jsonschema tags, adjusted by patch.
func addTool[In any](m *Server, s *mcp.Server, name, verb, title, desc string, patch func(props), run func(*toolCall, In) (any, error)) {
	schema, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Type: "object"},
	}})
	if err != nil {
		panic(err)
	}
	for _, p := range schema.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" { // a list may be given as null
			p.Type, p.Types = p.Types[1], nil
		}
	}
	if patch != nil {
		patch(schema.Properties)
	}
	tool := &mcp.Tool{Name: name, Title: title, Description: desc, InputSchema: schema}
	mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		c := &toolCall{ctx: ctx, srv: m, req: req}
		return c.result(verb, func() (any, error) { return run(c, in) })
	})
}

// toolCall is one call: its context, which the client cancels, the text
// its result gives, and the notes its session writes (a schedule kept, a
// damaged cache entry made again), which the result gives first.
type toolCall struct {
	ctx   context.Context
	srv   *Server
	req   *mcp.CallToolRequest
	world worldIn // set by use
	text  bytes.Buffer
	notes syncWriter
}

// syncWriter is a buffer that calls running side by side may write to.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// result runs a tool and turns its outcome into a result. An error is a
// result too, with the message the command line gives, after the notes
// the command printed; a failing seed is not an error.
func (c *toolCall) result(verb string, run func() (any, error)) (res *mcp.CallToolResult, structured any, err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(c.srv.log, "seedfall mcp: %s panicked: %v\n%s", verb, p, debug.Stack())
			res, structured, err = nil, nil, fmt.Errorf("seedfall %s: internal error: %v", verb, p)
		}
	}()
	structured, err = run()
	var text []string
	if notes := strings.TrimSpace(c.notes.String()); notes != "" {
		text = append(text, notes)
	}
	if err != nil && !errors.Is(err, session.ErrFailed) {
		if c.ctx.Err() != nil {
			err = fmt.Errorf("cancelled: %w", err)
		}
		return nil, nil, errors.New(strings.Join(append(text, fmt.Sprintf("seedfall %s: %v", verb, err)), "\n"))
	}
	res = &mcp.CallToolResult{}
	for _, t := range append(text, c.text.String()) {
		res.Content = append(res.Content, &mcp.TextContent{Text: t})
	}
	return res, structured, nil
}

// The arguments tools share. A field without omitempty is required.
type worldIn struct {
	Config  string   `json:"config,omitempty" jsonschema:"the world file (.json, .toml or .star), in the server's working directory; default: the -c of seedfall mcp"`
	Profile string   `json:"profile,omitempty" jsonschema:"merge this entry of the world file's \"profiles\" over the world"`
	Set     []string `json:"set,omitempty" jsonschema:"override fields, as path=value: a JSON value or a bare string, such as faults.crash_per_sec=0.5"`
}

type seedIn struct {
	worldIn
	Seed   uint64 `json:"seed" jsonschema:"the seed"`
	Faults string `json:"faults,omitempty" jsonschema:"the schedule file to apply; default: .seedfall/seed-N.faults.json next to the world file if it exists, else the faults the seed draws"`
}

type runIn struct {
	worldIn
	Seeds    seedsArg `json:"seeds" jsonschema:"the seeds: \"1-500\", \"2-3,9\" or one number"`
	Parallel int      `json:"parallel,omitempty" jsonschema:"worlds run at once; default: one per core"`
	Pinned   bool     `json:"pinned,omitempty" jsonschema:"replay the pinned regressions first (default true)"`
	// What run's flags of the same names keep of the sweep.
	RequireCoverage bool   `json:"require_coverage,omitempty" jsonschema:"fail the sweep when a Sometimes never held, or a Reachable or Always was never reached (run -require-coverage)"`
	Baseline        string `json:"baseline,omitempty" jsonschema:"triage the failures against earlier results: a results directory that out wrote (run -baseline)"`
	Out             string `json:"out,omitempty" jsonschema:"write the results to this directory, for seedfall merge and baseline (run -out)"`
	JUnit           string `json:"junit,omitempty" jsonschema:"write the seeds as JUnit XML to this file (run -junit)"`
	Report          string `json:"report,omitempty" jsonschema:"write an HTML report of the sweep to this file (run -report)"`
}

type replayIn struct {
	seedIn
	Tail int `json:"tail,omitempty" jsonschema:"how many of the run's last output lines to return (default 20)"`
}

type logsIn struct {
	seedIn
	Node string `json:"node,omitempty" jsonschema:"only this program's lines"`
	Tail int    `json:"tail,omitempty" jsonschema:"only the last N lines (default 200; 0 for all)"`
}

type faultsIn struct {
	seedIn
	Remove []int             `json:"remove,omitempty" jsonschema:"positions of faults to remove"`
	Shift  []string          `json:"shift,omitempty" jsonschema:"moves, as \"N=AMOUNT\": a signed duration for a timed fault (\"2=-50ms\"), a signed count for one that fires at an operation (\"1=+2\")"`
	Add    []json.RawMessage `json:"add,omitempty" jsonschema:"faults to add, such as {\"at\":\"1s\",\"kind\":\"pause\",\"node\":\"server\",\"until\":\"1.5s\"}"`
	Out    string            `json:"out,omitempty" jsonschema:"write the result here, in the server's working directory; default: back to the file it came from"`
}

type shrinkIn struct {
	seedIn
	Budget string `json:"budget,omitempty" jsonschema:"the wall time shrinking may take, such as 30s (default 2m; 0 for no limit); when it runs out the smallest failing schedule so far is kept"`
}

type debugIn struct {
	seedIn
	At momentsArg `json:"at" jsonschema:"the virtual time to stop at, such as 1.5s, or a list of them: several moments of one run"`
}

// momentsArg is one virtual time or a list of them.
type momentsArg []string

func (m *momentsArg) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*m = momentsArg{one}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New(`"at" is a virtual time like "1.5s", or a list of them`)
	}
	*m = list
	return nil
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

// confine refuses a path that leaves the working directory once symlinks
// are resolved, those of the directories that exist for a file yet to be
// made. It returns the path as given, for the commands' messages.
func (c *toolCall) confine(arg, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	real := c.srv.root
	if filepath.IsAbs(path) {
		real = filepath.VolumeName(path) + string(filepath.Separator)
	}
	// One element at a time, so that ".." applies to a directory whose
	// links are resolved, as the system resolves it.
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i, p := range parts {
		r, err := filepath.EvalSymlinks(filepath.Join(real, p))
		if err != nil { // what does not exist yet is made as named
			real = filepath.Join(real, filepath.Join(parts[i:]...))
			break
		}
		real = r
	}
	if rel, err := filepath.Rel(c.srv.root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s %q is outside the working directory %s: seedfall mcp reads and writes only files under the directory it was started in", arg, capText(path, 200), c.srv.root)
	}
	return path, nil
}

// use checks the call's world and schedule paths and sets its world: -c,
// -profile and -set.
func (c *toolCall) use(w worldIn, schedule *string) error {
	cfg, err := c.confine("config", w.Config)
	if err != nil {
		return err
	}
	if schedule != nil {
		if *schedule, err = c.confine("faults", *schedule); err != nil {
			return err
		}
	}
	w.Config = cmp.Or(cfg, c.srv.config)
	c.world = w
	return nil
}

// load reads the call's world file with its profile and overrides, as
// the command line's -c, -profile and -set do. A .star world is the
// `world` global of the script.
func (c *toolCall) load() (*world.World, error) {
	o := world.Options{Profile: c.world.Profile, Set: c.world.Set}
	if strings.HasSuffix(c.world.Config, ".star") {
		return starlark.LoadWorldWith(c.world.Config, starlark.Options{Stdout: os.Stderr}, o)
	}
	return world.LoadWith(c.world.Config, o)
}

// options are how the call opens its world: in the session's engine,
// with its notes kept for the result.
func (c *toolCall) options() (session.Options, error) {
	e, err := c.srv.engine()
	return session.Options{Config: c.world.Config, Args: session.CommandArgs(c.world.Config, c.world.Profile, c.world.Set),
		Notes: &c.notes, Engine: e}, err
}

// session opens the call's world in the session's engine.
func (c *toolCall) session() (*session.Session, error) {
	o, err := c.options()
	if err != nil {
		return nil, err
	}
	w, err := c.load()
	if err != nil {
		return nil, err
	}
	return session.Open(c.ctx, w, o)
}

// open checks the call's paths, opens its world in the session's engine,
// and reads the schedule to apply: nil means the seed's own faults, from
// names the file.
func (c *toolCall) open(in *seedIn) (s *session.Session, sch *faults.Schedule, from string, err error) {
	if err := c.use(in.worldIn, &in.Faults); err != nil {
		return nil, nil, "", err
	}
	if s, err = c.session(); err != nil {
		return nil, nil, "", err
	}
	if sch, from, err = s.LoadSchedule(in.Faults, in.Seed); err != nil {
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
	// Coverage is the sim properties over the seeds, as run -json's last
	// {"coverage": ...} line gives them; Triage, with baseline, the
	// findings against it, as run -json's {"triage": ...} line.
	Coverage []*results.Prop `json:"coverage,omitempty"`
	Triage   *results.Triage `json:"triage,omitempty"`
	// Out is the results directory written, with out.
	Out string `json:"out,omitempty"`
}

// seedFailure is a failing seed, with how to replay it.
type seedFailure struct {
	results.Line
	Replay    string   `json:"replay"`
	LastLines []string `json:"last_lines"`
}

// mcpDetailedFailures is how many failing seeds of a sweep are detailed in
// the structured result (the text details as many as seedfall run does).
const mcpDetailedFailures = 20

// toolRun is seedfall run: the same sweep (session.Session.Sweep), printed to the
// call's text as run prints it, with its coverage, triage, report, JUnit
// file and results directory.
func toolRun(c *toolCall, in runIn) (any, error) {
	if err := c.use(in.worldIn, nil); err != nil {
		return nil, err
	}
	list, err := parseSeeds(string(in.Seeds))
	if err != nil {
		return nil, err
	}
	parallel := in.Parallel
	if parallel < 1 {
		parallel = session.DefaultParallel()
	}
	parallel = min(parallel, session.MaxParallel)
	a := session.SweepArgs{List: list, Parallel: parallel, Pinned: in.Pinned, RequireCoverage: in.RequireCoverage}
	for _, f := range []struct {
		arg  string
		path string
		to   *string
	}{{"out", in.Out, &a.Out}, {"junit", in.JUnit, &a.JUnit}, {"report", in.Report, &a.Report}, {"baseline", in.Baseline, nil}} {
		p, err := c.confine(f.arg, f.path)
		if err != nil {
			return nil, err
		}
		if f.to != nil {
			*f.to = p
		}
	}
	if a.Baseline, err = results.LoadBaseline(in.Baseline, &c.notes); err != nil {
		return nil, err
	}
	s, err := c.session()
	if err != nil {
		return nil, err
	}
	rep := runReport{Seeds: list.Len(), FailedSeeds: []uint64{}, Failures: []seedFailure{}, Out: a.Out}
	token := c.req.Params.GetProgressToken()
	last := time.Now()
	a.Each = func(rec *results.Record, res *engine.Result, done int) {
		if res.Passed {
			rep.Passed++
		} else {
			rep.Failed++
			if len(rep.FailedSeeds) < mcpMaxSeedList {
				rep.FailedSeeds = append(rep.FailedSeeds, res.Seed)
			}
			if rep.Failed <= mcpDetailedFailures {
				f := seedFailure{Line: rec.Line, Replay: rec.Replay, LastLines: []string{}}
				for _, l := range res.FailureLines(8) {
					f.LastLines = append(f.LastLines, l.String())
				}
				rep.Failures = append(rep.Failures, f)
			}
		}
		if token != nil && (time.Since(last) >= mcpProgressEvery || done == list.Len()) && c.ctx.Err() == nil {
			last = time.Now()
			c.req.Session.NotifyProgress(c.ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
				Progress: float64(done), Total: float64(list.Len()), Message: fmt.Sprintf("%d of %d seeds, %d failed", done, list.Len(), rep.Failed)})
		}
	}
	o, err := s.Sweep(c.ctx, a, &c.text, &c.notes)
	if o != nil {
		rep.PinnedFailing = o.PinnedFailing
		rep.Coverage = o.Coverage.Props()
		rep.Triage = o.Triaged
	}
	if err != nil && !errors.Is(err, session.ErrFailed) {
		return nil, err
	}
	return rep, err
}

// replayReport is seedfall_replay's structured result.
type replayReport struct {
	results.Line
	Faults    []string `json:"fault_list"`
	LastLines []string `json:"last_lines"`
}

func toolReplay(c *toolCall, in replayIn) (any, error) {
	s, sch, from, err := c.open(&in.seedIn)
	if err != nil {
		return nil, err
	}
	r, err := s.Replay(c.ctx, engine.RunOptions{Seed: in.Seed, Schedule: sch}, from)
	if err != nil {
		return nil, err
	}
	res := r.Result
	rep := replayReport{Line: results.NewLine(res, from), Faults: describeFaults(res.Schedule.Faults), LastLines: []string{}}
	r.WriteRun(&c.text)
	lines := engine.TailLines(res.Lines, "", in.Tail)
	if len(lines) > 0 {
		fmt.Fprintf(&c.text, "last %s of the run:\n", session.Plural(len(lines), "line"))
	}
	for _, l := range lines {
		fmt.Fprintf(&c.text, "  %s\n", l.String())
		rep.LastLines = append(rep.LastLines, l.String())
	}
	fmt.Fprintf(&c.text, "digest %s\n", res.Digest)
	return rep, nil
}

// describeFaults is the faults as lists show them, one string each.
func describeFaults(fs []faults.Fault) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, faults.Describe(f))
	}
	return out
}

func toolLogs(c *toolCall, in logsIn) (any, error) {
	s, sch, from, err := c.open(&in.seedIn)
	if err != nil {
		return nil, err
	}
	l, err := s.Logs(c.ctx, session.LogsOptions{Seed: in.Seed, Schedule: sch, From: from, Node: in.Node, Tail: in.Tail})
	if err != nil {
		return nil, err
	}
	if err := l.Write(&c.text); err != nil {
		return nil, err
	}
	// The lines are capped as the text is, at mcpMaxText: the last that
	// fit are kept, and total_lines still counts them all.
	rep, size := l.Report(), 0
	for i := len(rep.Lines) - 1; i >= 0; i-- {
		if size += len(rep.Lines[i]) + 1; size > mcpMaxText {
			rep.Lines = rep.Lines[i+1:]
			break
		}
	}
	return rep, nil
}

func toolFaults(c *toolCall, in faultsIn) (any, error) {
	if err := c.use(in.worldIn, &in.Faults); err != nil {
		return nil, err
	}
	out, err := c.confine("out", in.Out)
	if err != nil {
		return nil, err
	}
	// The edits as faults' flags read them, with their messages; the
	// schema already refused positions below 1.
	o := session.FaultsOptions{Seed: in.Seed, File: in.Faults, Out: out, Edits: faults.Edits{Remove: in.Remove}}
	for _, v := range in.Shift {
		if err := (*session.ShiftFlags)(&o.Edits.Shift).Set(v); err != nil {
			return nil, fmt.Errorf("invalid value %q for flag -shift: %v", v, err)
		}
	}
	for _, f := range in.Add {
		var b bytes.Buffer
		json.Compact(&b, f)
		if err := (*session.AddFlags)(&o.Edits.Add).Set(b.String()); err != nil {
			return nil, fmt.Errorf("invalid value %q for flag -add: %v", b.String(), err)
		}
	}
	opt, err := c.options()
	if err != nil {
		return nil, err
	}
	w, err := c.load()
	if err != nil {
		return nil, err
	}
	r, err := session.EditFaults(c.ctx, w, opt, o)
	if err != nil {
		return nil, err
	}
	if err := r.Write(&c.text); err != nil {
		return nil, err
	}
	return r.Report()
}

// shrinkReport is seedfall_shrink's structured result: shrink -json's
// object, with the faults of the schedule it saved.
type shrinkReport struct {
	session.ShrinkReport
	Faults []string `json:"fault_list"`
}

func toolShrink(c *toolCall, in shrinkIn) (any, error) {
	if err := c.use(in.worldIn, &in.Faults); err != nil {
		return nil, err
	}
	budget := 2 * time.Minute
	if in.Budget != "" {
		d, err := time.ParseDuration(in.Budget)
		if err != nil {
			return nil, fmt.Errorf("invalid value %q for flag -budget: parse error", in.Budget)
		}
		budget = d
	}
	if err := session.CheckBudget(budget); err != nil {
		return nil, err
	}
	s, err := c.session()
	if err != nil {
		return nil, err
	}
	r, err := s.Shrink(c.ctx, session.ShrinkOptions{Seed: in.Seed, File: in.Faults, Budget: budget, Parallel: runtime.NumCPU()})
	if err != nil {
		return nil, err
	}
	r.Write(&c.text)
	rep := shrinkReport{ShrinkReport: r.Report(), Faults: []string{}}
	if r.Schedule != nil {
		rep.Faults = describeFaults(r.Schedule.Faults)
	}
	return rep, nil
}

func toolCause(c *toolCall, in seedIn) (any, error) {
	s, sch, from, err := c.open(&in)
	if err != nil {
		return nil, err
	}
	opt := session.CauseDefaults
	res, err := s.Cause(c.ctx, in.Seed, sch, from, opt)
	if err != nil {
		return nil, err
	}
	res.Write(&c.text)
	return res.Report(), nil
}

func toolDebug(c *toolCall, in debugIn) (any, error) {
	var at session.Moments
	for _, a := range in.At {
		if err := at.Set(a); err != nil {
			return nil, fmt.Errorf("say when to stop: \"at\", a virtual time above 0 such as 1.5s, or a list of them, not %q (the failure's time is in seedfall_replay)", capText(a, 100))
		}
	}
	if len(at) == 0 {
		return nil, fmt.Errorf("say when to stop: \"at\", a virtual time above 0 such as 1.5s, or a list of them (the failure's time is in seedfall_replay)")
	}
	slices.Sort(at)
	at = slices.Compact(at)
	s, sch, from, err := c.open(&in.seedIn)
	if err != nil {
		return nil, err
	}
	o := session.DebugOptions{Seed: in.Seed, Schedule: sch, From: from, At: at}
	if sch != nil && len(at) == 1 {
		// Looking at one seed again forks from a recording of its run.
		p := s.Prepared() // the engine's, as the last call's was (engine.Engine.Prepare)
		o.Run = func(ctx context.Context, opt engine.RunOptions) (*engine.Result, error) {
			opt.From = c.srv.recordings.Look(ctx, p, in.Seed, sch, at[0])
			res, err := p.Run(ctx, opt)
			if err == nil {
				c.srv.recordings.Ran(p, in.Seed, sch, res)
			}
			return res, err
		}
	}
	d, err := s.Debug(c.ctx, o)
	if err != nil {
		return nil, err
	}
	d.Write(&c.text)
	return d.Report(), nil
}

// parseSeeds reads seeds as run's -seeds does: "7", "1-500" or "2-3,9".
func parseSeeds(spec string) (engine.Seeds, error) {
	seeds, err := engine.ParseSeeds(spec)
	if err != nil {
		return engine.Seeds{}, fmt.Errorf("-%w", err)
	}
	return seeds, nil
}
