package results

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/trace"
	"github.com/seedfall/seedfall/engine/world"
)

// A results directory keeps a sweep (or one shard of it) as it runs, for
// seedfall merge, -baseline and any script: run -out DIR writes one. Its
// files (docs/scale.md describes them for users):
//
//	run.json                      what ran: the world and build identity, the seeds, the shard
//	results.jsonl                 one run -json object per seed, in the order of the list
//	failures.jsonl                per failing seed: its replay command, and its output lines for the first few
//	pinned.jsonl                  the pinned regressions replayed first (shard 1 only)
//	schedules/seed-N.faults.json  each failing seed's schedule
//	histories/seed-N.history.html each history that is not linearizable
//	coverage.json                 the sim properties over the seeds, at the end
//	coverage.out                  with coverage on: the blocks of the user's code the seeds reached, a Go coverprofile (engine/cover)
//	triage.json                   with -baseline: each finding, new, ongoing, resolved or regressed
//	complete.json                 written last: the directory holds every seed it was to hold
//
// A seedfall killed at any moment leaves a directory a reader can use:
// lines are appended whole, one write each, and a reader ignores a last
// line without its newline; every other file is written to a temporary
// name and renamed into place. A failing seed's schedule, history and
// failures.jsonl line are written before its results.jsonl line, so a seed
// in results.jsonl has them.
const (
	MetaFile     = "run.json"
	LinesFile    = "results.jsonl"
	FailuresFile = "failures.jsonl"
	PinnedFile   = "pinned.jsonl"
	CoverageFile = "coverage.json"
	ProfileFile  = "coverage.out"
	TriageFile   = "triage.json"
	CompleteFile = "complete.json"
	SchedulesDir = "schedules"
	HistoriesDir = "histories"
)

// Format names the layout in run.json; a reader refuses another.
const Format = "seedfall results 1"

// KeptLines is how many failing seeds of a results directory keep their
// output lines (in failures.jsonl): as many as the HTML report draws
// (report.MaxDetailed, which the CLI checks is the same), so that merge
// prints and draws what one sweep would. The first failures of a merged
// sweep are among the first of each shard's.
const KeptLines = 50

// Meta is run.json: what the directory holds, and of what.
type Meta struct {
	Format string `json:"format"`
	// Seedfall is the version that ran the seeds (seedfall version).
	Seedfall string        `json:"seedfall"`
	World    WorldIdentity `json:"world"`
	// Build is each program's compiled module, in world order, upgrades
	// after the program they upgrade.
	Build []ProgramBuild `json:"build"`
	// Seeds is the whole -seeds list, as -seeds takes it, and Total how
	// many seeds it names; a shard holds some of them.
	Seeds string     `json:"seeds"`
	Total int        `json:"total"`
	Shard *ShardMeta `json:"shard,omitempty"`
	// Count is how many seeds this directory is to hold.
	Count int `json:"count"`
	// Pinned: the pinned regressions ran first (pinned.jsonl).
	Pinned bool `json:"pinned"`
	// Nodes are the world's programs, for the report's lanes.
	Nodes []string `json:"nodes"`
}

// WorldIdentity says which world ran: two directories merge only when
// their Hash is the same.
type WorldIdentity struct {
	Name string `json:"name"` // the world file's name, with -profile and -set (configName)
	Args string `json:"args"` // -c, -profile and -set as a command line, for printed commands
	// Hash is the SHA-256 of Resolved: the world after extends, the
	// profile, -set and the preset, paths relative to the world file.
	Hash     string          `json:"sha256"`
	Resolved json.RawMessage `json:"resolved"`
}

// ProgramBuild is one program's compiled module.
type ProgramBuild struct {
	Program string `json:"program"` // its name; "NAME upgrade_to" for an upgrade
	Hash    string `json:"sha256"`  // of the wasm module that ran
}

// ShardMeta is -shard K/N.
type ShardMeta struct {
	Index int    `json:"index"` // K, from 1
	Count int    `json:"count"` // N
	From  string `json:"from,omitempty"`
}

// CompleteMark is complete.json: every seed ran.
type CompleteMark struct {
	Seeds         int   `json:"seeds"`
	Passed        int   `json:"passed"`
	Failed        int   `json:"failed"`
	PinnedFailing int   `json:"pinned_failing"`
	WallNs        int64 `json:"wall_ns"` // the sweep's real time, start to end
}

// FailureRecord is one line of failures.jsonl.
type FailureRecord struct {
	Seed    uint64 `json:"seed"`
	Replay  string `json:"replay"`            // the command run printed
	History string `json:"history,omitempty"` // the history page run named, next to the world file
	// Lines are the run's output lines, for the first KeptLines failing
	// seeds of the directory.
	Lines []LineRecord `json:"lines,omitempty"`
	// Heals are the run's moments at which every fault ended at once
	// (engine.Result.Heals), kept with the lines.
	Heals []int64 `json:"heals,omitempty"`
}

// LineRecord is a trace.Line.
type LineRecord struct {
	At   int64  `json:"at"`
	Node string `json:"node"`
	Inc  int    `json:"inc"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// LinesRecord is lines as failures.jsonl keeps them.
func LinesRecord(lines []trace.Line) []LineRecord {
	out := make([]LineRecord, len(lines))
	for i, l := range lines {
		out[i] = LineRecord{At: l.At, Node: l.Node, Inc: l.Inc, Kind: string(rune(l.Kind)), Text: l.Text}
	}
	return out
}

// TraceLines are the lines a failure record kept, as the run printed them.
func (r *FailureRecord) TraceLines() []trace.Line {
	if r == nil || len(r.Lines) == 0 {
		return nil
	}
	out := make([]trace.Line, len(r.Lines))
	for i, l := range r.Lines {
		k := trace.Event
		if len(l.Kind) == 1 {
			k = trace.Kind(l.Kind[0])
		}
		out[i] = trace.Line{At: l.At, Node: l.Node, Inc: l.Inc, Kind: k, Text: l.Text}
	}
	return out
}

// PinnedRecord is one line of pinned.jsonl: a pinned regression replayed.
type PinnedRecord struct {
	Name   string          `json:"name"`
	Path   string          `json:"path"`   // its schedule
	Replay string          `json:"replay"` // the command run printed
	Result json.RawMessage `json:"result"` // its run -json object
}

// Identity is the world and build identity of a prepared world, for
// run.json; args are the flags that name the world, as a command line.
func Identity(w *world.World, p *engine.Prepared, args string) (WorldIdentity, []ProgramBuild, error) {
	resolved, err := w.Resolved(false)
	if err != nil {
		return WorldIdentity{}, nil, err
	}
	sum := sha256.Sum256(resolved)
	id := WorldIdentity{Name: engine.ConfigName(w), Args: args, Hash: hex.EncodeToString(sum[:]), Resolved: resolved}
	var build []ProgramBuild
	for _, p := range p.Programs {
		build = append(build, ProgramBuild{Program: p.Name, Hash: p.Hash})
		if p.Upgrade != nil {
			build = append(build, ProgramBuild{Program: p.Name + " upgrade_to", Hash: p.Upgrade.Hash})
		}
	}
	return id, build, nil
}

// Writer appends a sweep to a results directory as it runs.
type Writer struct {
	dir                       string
	results, failures, pinned *os.File
	kept                      int // failing seeds whose lines were kept
	n                         int // seeds written
	err                       error
}

// Create starts a results directory: it makes dir, removes what an
// earlier run left there (a task that runs again starts afresh), and
// writes run.json. Nothing but the files of a results directory is
// touched.
func Create(dir string, meta *Meta) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("-out: %w", err)
	}
	// complete.json first: a directory killed while it starts again must
	// not look complete.
	for _, f := range []string{CompleteFile, MetaFile, LinesFile, FailuresFile, PinnedFile,
		CoverageFile, ProfileFile, TriageFile, SchedulesDir, HistoriesDir} {
		if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("-out: %w", err)
		}
	}
	meta.Format = Format
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := fsutil.WriteFile(filepath.Join(dir, MetaFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("-out: %w", err)
	}
	w := &Writer{dir: dir}
	for _, f := range []struct {
		name string
		to   **os.File
	}{{LinesFile, &w.results}, {FailuresFile, &w.failures}, {PinnedFile, &w.pinned}} {
		if *f.to, err = os.OpenFile(filepath.Join(dir, f.name), os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			w.close()
			return nil, fmt.Errorf("-out: %w", err)
		}
	}
	return w, nil
}

// appendLine writes b and a newline in one write.
func appendLine(f *os.File, b []byte) error {
	line := make([]byte, 0, len(b)+1)
	line = append(append(line, b...), '\n')
	_, err := f.Write(line)
	return err
}

// writeReplacing writes a file of the directory under a temporary name
// and renames it into place, so a reader never sees half of it. (Not
// synced: complete.json, written last, is, after the lines.)
func writeReplacing(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// Seed adds one seed: its run -json line, and for a failing seed its
// record, schedule and history page (any may be nil). The first error
// stops the writing and is kept for Finish.
func (w *Writer) Seed(seed uint64, line []byte, fail *FailureRecord, schedule, history []byte) {
	if w == nil || w.err != nil {
		return
	}
	w.err = func() error {
		if fail != nil {
			if schedule != nil {
				if err := writeReplacing(filepath.Join(w.dir, SchedulesDir, fmt.Sprintf("seed-%d.faults.json", seed)), schedule); err != nil {
					return err
				}
			}
			if history != nil {
				if err := writeReplacing(filepath.Join(w.dir, HistoriesDir, fmt.Sprintf("seed-%d.history.html", seed)), history); err != nil {
					return err
				}
			}
			rec := *fail
			if w.kept >= KeptLines {
				rec.Lines, rec.Heals = nil, nil
			}
			w.kept++
			b, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := appendLine(w.failures, b); err != nil {
				return err
			}
		}
		w.n++
		return appendLine(w.results, line)
	}()
}

// PinnedRun adds a pinned regression's replay.
func (w *Writer) PinnedRun(rec PinnedRecord) {
	if w == nil || w.err != nil {
		return
	}
	b, err := json.Marshal(rec)
	if err == nil {
		err = appendLine(w.pinned, b)
	}
	w.err = err
}

// WriteJSON writes one of the directory's JSON files whole.
func (w *Writer) WriteJSON(name string, v any) {
	if w == nil || w.err != nil {
		return
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = writeReplacing(filepath.Join(w.dir, name), append(b, '\n'))
	}
	w.err = err
}

// WriteFile writes one of the directory's files whole.
func (w *Writer) WriteFile(name string, data []byte) {
	if w == nil || w.err != nil {
		return
	}
	w.err = writeReplacing(filepath.Join(w.dir, name), data)
}

// Path is where one of the directory's files is.
func (w *Writer) Path(name string) string { return filepath.Join(w.dir, name) }

// Finish closes the files; with a mark, after syncing the lines, it writes
// complete.json. It returns the first error of the directory's writing.
func (w *Writer) Finish(mark *CompleteMark) error {
	if w == nil {
		return nil
	}
	if mark != nil && w.err == nil {
		for _, f := range []*os.File{w.results, w.failures, w.pinned} {
			if err := f.Sync(); err != nil && w.err == nil {
				w.err = err
			}
		}
		if w.err == nil {
			b, _ := json.MarshalIndent(mark, "", "  ")
			w.err = fsutil.WriteFile(filepath.Join(w.dir, CompleteFile), append(b, '\n'), 0o644)
		}
	}
	if err := w.close(); err != nil && w.err == nil {
		w.err = err
	}
	if w.err != nil {
		return fmt.Errorf("-out %s: %w", DisplayPath(w.dir), w.err)
	}
	return nil
}

func (w *Writer) close() error {
	var first error
	for _, f := range []*os.File{w.results, w.failures, w.pinned} {
		if f != nil {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	w.results, w.failures, w.pinned = nil, nil, nil
	return first
}

// Dir is a results directory as a reader finds it.
type Dir struct {
	Path     string // as found, for messages
	Meta     Meta
	Complete *CompleteMark // nil: the run that wrote it did not finish
	Pinned   []PinnedRecord
}

// ErrNotResults means a directory has no run.json.
var ErrNotResults = errors.New("not a results directory")

// ReadDir reads a results directory's run.json, complete.json and
// pinned.jsonl; its seeds are read as they are merged (SeedReader).
func ReadDir(path string) (*Dir, error) {
	b, err := os.ReadFile(filepath.Join(path, MetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotResults
	} else if err != nil {
		return nil, err
	}
	d := &Dir{Path: path}
	if err := json.Unmarshal(b, &d.Meta); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(path, MetaFile), err)
	}
	if d.Meta.Format != Format {
		return nil, fmt.Errorf("%s: format %q, not %q: it was written by another seedfall; merge it with that one", filepath.Join(path, MetaFile), d.Meta.Format, Format)
	}
	if b, err := os.ReadFile(filepath.Join(path, CompleteFile)); err == nil {
		var m CompleteMark
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(path, CompleteFile), err)
		}
		d.Complete = &m
	}
	err = eachLine(filepath.Join(path, PinnedFile), func(line []byte, at string) error {
		var p PinnedRecord
		if err := json.Unmarshal(line, &p); err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		d.Pinned = append(d.Pinned, p)
		return nil
	})
	return d, err
}

// Name is how messages call the directory: "shard 2 of 3 (DIR)", or DIR.
func (d *Dir) Name() string {
	if sh := d.Meta.Shard; sh != nil {
		return fmt.Sprintf("shard %d of %d (%s)", sh.Index, sh.Count, DisplayPath(d.Path))
	}
	return DisplayPath(d.Path)
}

// lineReader reads the whole lines of a JSON-lines file; a last line
// without its newline (the writer was killed in the middle of it) is not
// one. A missing file has no lines.
type lineReader struct {
	path string
	f    *os.File
	r    *bufio.Reader
	n    int // lines read
}

func openLines(path string) (*lineReader, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &lineReader{path: path}, nil
	} else if err != nil {
		return nil, err
	}
	return &lineReader{path: path, f: f, r: bufio.NewReaderSize(f, 1<<16)}, nil
}

// next returns the next whole line, without its newline, or nil at the end.
func (lr *lineReader) next() ([]byte, error) {
	if lr.r == nil {
		return nil, nil
	}
	line, err := lr.r.ReadBytes('\n')
	if err == io.EOF {
		return nil, nil // a partial last line, or none
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", lr.path, err)
	}
	lr.n++
	return line[:len(line)-1], nil
}

// at is "file:line" of the line last read.
func (lr *lineReader) at() string { return fmt.Sprintf("%s:%d", DisplayPath(lr.path), lr.n) }

func (lr *lineReader) close() {
	if lr.f != nil {
		lr.f.Close()
	}
}

// eachLine calls fn with each whole line of a JSON-lines file.
func eachLine(path string, fn func(line []byte, at string) error) error {
	lr, err := openLines(path)
	if err != nil {
		return err
	}
	defer lr.close()
	for {
		line, err := lr.next()
		if err != nil || line == nil {
			return err
		}
		if err := fn(line, lr.at()); err != nil {
			return err
		}
	}
}

// SeedReader reads the seeds of a results directory in order, each with
// what a sweep prints of it.
type SeedReader struct {
	d                 *Dir
	results, failures *lineReader
	n                 int  // seeds read
	files             bool // read each failing seed's schedule and history page, to copy them
}

// Seeds reads the directory's seeds in order; with files, each failing
// seed's record holds its schedule and history page as files, to copy.
func (d *Dir) Seeds(files bool) (*SeedReader, error) {
	r := &SeedReader{d: d, files: files}
	var err error
	if r.results, err = openLines(filepath.Join(d.Path, LinesFile)); err != nil {
		return nil, err
	}
	if r.failures, err = openLines(filepath.Join(d.Path, FailuresFile)); err != nil {
		r.results.close()
		return nil, err
	}
	return r, nil
}

// Close closes the directory's files.
func (r *SeedReader) Close() {
	r.results.close()
	r.failures.close()
}

// Next returns the next seed, or nil at the end of the whole lines.
func (r *SeedReader) Next() (*Record, error) {
	line, err := r.results.next()
	if err != nil || line == nil {
		return nil, err
	}
	var l Line
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, fmt.Errorf("%s: %v: the directory is damaged", r.results.at(), err)
	}
	r.n++
	rec := &Record{Line: l, Raw: bytes.Clone(line), Schedule: &faults.Schedule{Seed: l.Seed}}
	if l.Passed {
		return rec, nil
	}
	fl, err := r.failures.next()
	if err != nil {
		return nil, err
	}
	var fr FailureRecord
	if fl == nil {
		return nil, fmt.Errorf("%s: seed %d failed but %s has no line for it: the directory is damaged", r.results.at(), l.Seed, DisplayPath(r.failures.path))
	}
	if err := json.Unmarshal(fl, &fr); err != nil {
		return nil, fmt.Errorf("%s: %v: the directory is damaged", r.failures.at(), err)
	}
	if fr.Seed != l.Seed {
		return nil, fmt.Errorf("%s is about seed %d, where %s has seed %d: the directory is damaged", r.failures.at(), fr.Seed, r.results.at(), l.Seed)
	}
	rec.Replay, rec.History = fr.Replay, fr.History
	rec.Lines, rec.Heals = fr.TraceLines(), fr.Heals
	// The report draws the schedules of the first failures, which are
	// among the first of each directory; a merged -out copies them all.
	if detailed := r.failures.n <= KeptLines; detailed || r.files {
		if b, err := os.ReadFile(r.schedulePath(l.Seed)); err == nil {
			if sch, err := faults.Parse(DisplayPath(r.schedulePath(l.Seed)), b); err == nil && detailed {
				rec.Schedule = sch
			}
			if r.files {
				rec.ScheduleJSON = b
			}
		}
	}
	if r.files {
		if b, err := os.ReadFile(filepath.Join(r.d.Path, HistoriesDir, fmt.Sprintf("seed-%d.history.html", l.Seed))); err == nil {
			rec.HistoryHTML = b
		}
	}
	return rec, nil
}

// N is how many seeds the reader has read.
func (r *SeedReader) N() int { return r.n }

func (r *SeedReader) schedulePath(seed uint64) string {
	return filepath.Join(r.d.Path, SchedulesDir, fmt.Sprintf("seed-%d.faults.json", seed))
}
