// Package session is what every skin of seedfall (the command line, the
// MCP server, and later the REPL) does with a world: a Session is a
// prepared world bound to its world file, with the schedules kept next to
// it, and its methods are the typed operations the skins share (a sweep,
// a seed's logs, a schedule edited, a shrink, a cause, a look at a moment,
// the pinned regressions). Each returns its result with the text the
// command line prints and the object its -json prints beside the data, so
// that every skin prints and reports the same.
//
// A skin loads the world file (JSON, TOML or a .star script) and owns its
// flags, its progress lines and its exit codes; this package imports the
// engine and its public packages only.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/world"
)

// ErrFailed means a seed failed: the output already says how.
var ErrFailed = errors.New("a seed failed")

// ErrInterrupted is the cause of a context Ctrl-C cancelled. An operation
// returns it bare once it has printed and written what finished before;
// wrapped (a run of seed 3 stopped at 1.2s: interrupted), it says where
// the operation was when nothing had finished. A skin cancels its context
// with it as the cause (context.WithCancelCause).
var ErrInterrupted = errors.New("interrupted")

// Interrupted reports whether ctx was cancelled with ErrInterrupted as
// its cause.
func Interrupted(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrInterrupted)
}

// Session is a loaded, prepared world and the engine that runs it.
type Session struct {
	cfg    string    // the world file as given, for messages
	args   string    // -c, -profile and -set as a command line, for printed commands
	stderr io.Writer // notes: a damaged cache entry, a schedule kept
	w      *world.World
	e      *engine.Engine
	p      *engine.Prepared
	own    bool // e belongs to this session, and closes with it
}

// Options say how a session names its world and where its notes go, and
// which engine prepares the world.
type Options struct {
	// Config is the world file as the user gave it, for messages.
	Config string
	// Args is the command line that gives the world (-c, -profile and
	// -set: CommandArgs), for the commands a result prints.
	Args string
	// Notes takes the notes: a schedule kept instead of replaced, a
	// schedule of another world left alone. nil: discarded.
	Notes io.Writer
	// Engine prepares the world when not nil, and outlives the session:
	// seedfall mcp keeps one for every call, so that a world opened again
	// costs only the hashing of its programs.
	Engine *engine.Engine
	// NewEngine makes an engine of the session's own when Engine is nil,
	// closed with the session; done, if not nil, is called once the world
	// is prepared or failed to be (a skin ends its progress line there).
	NewEngine func(ctx context.Context) (e *engine.Engine, done func(), err error)
}

// Open prepares w as o says.
func Open(ctx context.Context, w *world.World, o Options) (*Session, error) {
	s := &Session{cfg: o.Config, args: o.Args, stderr: o.Notes, w: w, e: o.Engine}
	if s.stderr == nil {
		s.stderr = io.Discard
	}
	done := func() {}
	if s.e == nil {
		if o.NewEngine == nil {
			return nil, errors.New("session.Open: no engine")
		}
		e, d, err := o.NewEngine(ctx)
		if d != nil {
			done = d
		}
		if err != nil {
			done()
			return nil, err
		}
		s.e, s.own = e, true
	}
	p, err := s.e.Prepare(ctx, w)
	done()
	if err != nil {
		s.Close()
		return nil, err
	}
	s.p = p
	return s, nil
}

// unprepared is a session of a world that is not prepared: what editing a
// schedule needs, which runs nothing unless it must draw the seed's faults.
func unprepared(w *world.World, o Options) *Session {
	s := &Session{cfg: o.Config, args: o.Args, stderr: o.Notes, w: w}
	if s.stderr == nil {
		s.stderr = io.Discard
	}
	return s
}

// Close releases the engine, when it is the session's own.
func (s *Session) Close() {
	if s.own {
		s.e.Close(context.Background())
	}
}

// World is the session's world.
func (s *Session) World() *world.World { return s.w }

// Prepared is the world as the engine prepared it, to run.
func (s *Session) Prepared() *engine.Prepared { return s.p }

// Engine is the engine that prepared the world.
func (s *Session) Engine() *engine.Engine { return s.e }

// Config is the world file as the user gave it.
func (s *Session) Config() string { return s.cfg }

// Args is the command line that gives the world, for printed commands.
func (s *Session) Args() string { return s.args }

// Notes is where the session's notes go.
func (s *Session) Notes() io.Writer { return s.stderr }

// CommandArgs writes a world's flags back as a command line, for printed
// commands: -c FILE, then -profile and each -set.
func CommandArgs(cfg, profile string, sets []string) string {
	out := "-c " + ShellQuote(cfg)
	if profile != "" {
		out += " -profile " + ShellQuote(profile)
	}
	for _, s := range sets {
		out += " -set " + ShellQuote(s)
	}
	return out
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string { return engine.ShellQuote(s) }

// SchedulePath is where a failing seed's schedule is kept: in the world
// file's artifact directory next to it (engine.SchedulePath).
func (s *Session) SchedulePath(seed uint64) string { return engine.SchedulePath(s.w, seed) }

// SaveSchedule writes a failing seed's schedule next to the config, unless
// a shrunk or explored schedule, or another world's, is there: then it
// keeps that one, writes seed-N.run.faults.json, and says so
// (engine.SaveFailure).
func (s *Session) SaveSchedule(res *engine.Result) (string, error) {
	sv, err := engine.SaveFailure(s.w, res)
	if err != nil {
		return "", err
	}
	s.NoteSaved(sv)
	return sv.Path, nil
}

// HistoryPath is where a seed's history that is not linearizable is drawn,
// next to its schedule.
func (s *Session) HistoryPath(seed uint64) string { return engine.HistoryPath(s.w, seed) }

// ConfigName names the world a schedule belongs to: the file, and the
// profile and overrides that changed it, since they share its schedules.
func (s *Session) ConfigName() string { return engine.ConfigName(s.w) }

// LoadSchedule reads -faults, or the seed's saved schedule when path is
// "" and one exists; nil means "draw the seed's own faults". It returns
// where the schedule came from, as messages name it.
func (s *Session) LoadSchedule(path string, seed uint64) (*faults.Schedule, string, error) {
	implicit := path == ""
	if implicit {
		def := s.SchedulePath(seed)
		if _, err := os.Stat(def); err != nil {
			return nil, "", nil
		}
		path = def
	}
	sch, err := faults.Load(path, CheckConfig(s.w))
	if err != nil {
		return nil, "", err
	}
	if sch.Seed != seed {
		return nil, "", fmt.Errorf("%s holds the schedule of seed %d, not seed %d", path, sch.Seed, seed)
	}
	// The world's profiles and -set overrides share its schedules: a
	// schedule another of them saved is used only when asked for by name.
	if own := s.ConfigName(); implicit && sch.Config != "" && sch.Config != own {
		fmt.Fprintf(s.stderr, "note: %s was saved by %s, not %s; drawing seed %d's own faults (pass -faults %s to apply it)\n",
			DisplayPath(path), sch.Config, own, seed, DisplayPath(path))
		return nil, "", nil
	}
	return sch, DisplayPath(path), nil
}

// CheckConfig is what faults.Check needs to know of a world.
func CheckConfig(w *world.World) faults.CheckConfig {
	c := faults.CheckConfig{Duration: w.Duration, PreemptPCT: w.Preempt.Strategy == world.StrategyPCT}
	for _, p := range w.Programs() {
		c.Programs = append(c.Programs, p.Name)
	}
	return c
}

// NoteSaved prints what engine.SaveKeeping kept or replaced, on the
// session's notes.
func (s *Session) NoteSaved(sv engine.Saved) {
	if sv.Kept != "" {
		fmt.Fprintf(s.stderr, "note: kept %s (%s); wrote %s instead\n", DisplayPath(sv.Kept), sv.Why, DisplayPath(sv.Path))
	}
	if sv.Replaced != "" {
		fmt.Fprintf(s.stderr, "note: replaced %s, %s\n", DisplayPath(sv.Path), sv.Replaced)
	}
}

// ReplayCommand is the command that replays seed.
func (s *Session) ReplayCommand(seed uint64) string {
	return fmt.Sprintf("seedfall replay %s -seed %d", s.args, seed)
}

// ReplayWith is the command that replays seed with the schedule at path:
// -faults names it unless it is where replay looks by default.
func (s *Session) ReplayWith(seed uint64, path string) string {
	cmd := s.ReplayCommand(seed)
	if !SamePath(path, s.SchedulePath(seed)) {
		cmd += " -faults " + ShellQuote(DisplayPath(path))
	}
	return cmd
}

// KeepFailure is a sweep's work for a failing seed: it saves the seed's
// schedule next to the world file, or says on the session's notes why it
// could not, and returns the file as -json names it ("" when not saved),
// the command that replays the seed, and the page of its history that is
// not linearizable, if one is drawn.
func (s *Session) KeepFailure(res *engine.Result) (schedule, replay, history string) {
	replay = s.ReplayCommand(res.Seed)
	if path, err := s.SaveSchedule(res); err != nil {
		fmt.Fprintf(s.stderr, "seedfall: could not save the schedule of seed %d: %v\n", res.Seed, err)
	} else {
		schedule, replay = DisplayPath(path), s.ReplayWith(res.Seed, path)
	}
	return schedule, replay, s.HistoryShown(res, replay)
}

// HistoryShown is the page of res's history that is not linearizable, as a
// verdict with a replay command names it, or "".
func (s *Session) HistoryShown(res *engine.Result, replay string) string {
	if replay != "" && res.History != nil && len(res.History.HTML) > 0 {
		if _, err := os.Stat(s.HistoryPath(res.Seed)); err == nil {
			return DisplayPath(s.HistoryPath(res.Seed))
		}
	}
	return ""
}

// WriteVerdict prints one seed's outcome for a person.
func (s *Session) WriteVerdict(w io.Writer, res *engine.Result, replay string) {
	WriteResult(w, res, replay, s.HistoryShown(res, replay))
}

// WriteResult is WriteRecord for a run.
func WriteResult(w io.Writer, res *engine.Result, replay, history string) {
	WriteRecord(w, results.NewRecord(res, "", ""), replay, history)
}

// WriteRecord prints one seed's outcome for a person, with the command
// that replays it and the page of its history that is not linearizable,
// when they are not "".
func WriteRecord(w io.Writer, rec *results.Record, replay, history string) {
	res := &rec.Line
	if res.Passed {
		fmt.Fprintf(w, "PASS seed %d at t=%s (%s; %d scheduler steps, %s real)\n", res.Seed, SimTime(res.SimNs), res.Reason, res.Steps, WallTime(res.WallNs))
		return
	}
	if res.Class == engine.ClassInconclusive {
		fmt.Fprintf(w, "INCONCLUSIVE seed %d at t=%s (%d scheduler steps, %s real)\n", res.Seed, SimTime(res.SimNs), res.Steps, WallTime(res.WallNs))
		fmt.Fprintf(w, "  %s\n", res.Reason)
		if replay != "" {
			fmt.Fprintf(w, "  replay: %s\n", replay)
		}
		return
	}
	fmt.Fprintf(w, "FAIL seed %d at t=%s (%d scheduler steps, %s real)\n", res.Seed, SimTime(res.SimNs), res.Steps, WallTime(res.WallNs))
	fmt.Fprintf(w, "  %s: %s\n", res.Class, res.Reason)
	if a := firstAnomaly(res); a != nil {
		writeExplanation(w, a.Explanation)
	}
	for _, l := range rec.FailureLines(8) {
		fmt.Fprintf(w, "  %s\n", l.String())
	}
	if replay != "" {
		fmt.Fprintf(w, "  replay: %s\n", replay)
		if history != "" {
			fmt.Fprintf(w, "  history: %s (open it in a browser)\n", history)
		}
	}
}

// explanationLines and explanationWidth bound what a verdict shows of an
// anomaly's explanation: a long cycle, or reads of long lists, would bury
// the trace. The result's JSON has all of it.
const (
	explanationLines = 12
	explanationWidth = 300
)

func writeExplanation(w io.Writer, lines []string) {
	for i, l := range lines {
		if i == explanationLines {
			fmt.Fprintf(w, "    ... %d more lines (run -json has them all, in history.anomalies)\n", len(lines)-i)
			break
		}
		if r := []rune(l); len(r) > explanationWidth {
			l = string(r[:explanationWidth]) + " ..."
		}
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// firstAnomaly is the anomaly an isolation failure's reason names: the
// first that is not an inconclusive one.
func firstAnomaly(res *results.Line) *engine.TxnAnomaly {
	if res.Class != engine.ClassIsolation || res.History == nil {
		return nil
	}
	for i, a := range res.History.Anomalies {
		if a.Type != "empty-transaction-graph" && a.Type != "cycle-search-timeout" {
			return &res.History.Anomalies[i]
		}
	}
	return nil
}

// WriteSource says where a run's faults come from.
func WriteSource(w io.Writer, seed uint64, sch *faults.Schedule, from string) {
	if from != "" {
		fmt.Fprintf(w, "seed %d, %s from %s\n", seed, Plural(len(sch.Faults), "fault"), from)
	} else {
		fmt.Fprintf(w, "seed %d, faults drawn from the seed\n", seed)
	}
}

// WriteMutantLine says which mutant a run of one seed ran under, and what
// it weakened.
func WriteMutantLine(w io.Writer, res *engine.Result) {
	if res.Mutant.Kind != "" {
		fmt.Fprintf(w, "mutant %s: %s; %s\n", res.Mutant, res.Mutant.Describe(), WeakenedText(res.Mutant, res.Weakened))
	}
}

// WeakenedText says how much a mutant weakened: "12 calls weakened", "3
// renames torn".
func WeakenedText(m engine.Mutant, n uint64) string {
	if m.Kind == engine.MutantRename {
		return Plural(int(n), "rename") + " torn"
	}
	return Plural(int(n), "call") + " weakened"
}

// DisplayPath shortens a path under the working directory to a relative one.
func DisplayPath(path string) string { return results.DisplayPath(path) }

// SamePath reports whether a and b name the same file.
func SamePath(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
}

// Plural writes "1 fault", "3 faults" (results.Plural).
func Plural(n int, what string) string { return results.Plural(n, what) }

// SimTime writes a virtual time.
func SimTime(ns int64) string { return time.Duration(ns).String() }

// WallTime writes a real time, rounded as verdicts show it.
func WallTime(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
