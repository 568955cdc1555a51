package main

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

	"github.com/seedfall/seedfall/cmd/seedfall/internal/report"
	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/trace"
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
	resultsMetaFile     = "run.json"
	resultsLinesFile    = "results.jsonl"
	resultsFailuresFile = "failures.jsonl"
	resultsPinnedFile   = "pinned.jsonl"
	resultsCoverageFile = "coverage.json"
	resultsTriageFile   = "triage.json"
	resultsCompleteFile = "complete.json"
	resultsSchedulesDir = "schedules"
	resultsHistoriesDir = "histories"
)

// resultsFormat names the layout in run.json; a reader refuses another.
const resultsFormat = "seedfall results 1"

// keptLines is how many failing seeds of a results directory keep their
// output lines (in failures.jsonl): as many as the HTML report draws, so
// that merge prints and draws what one sweep would. The first failures of
// a merged sweep are among the first of each shard's.
const keptLines = report.MaxDetailed

// resultsMeta is run.json: what the directory holds, and of what.
type resultsMeta struct {
	Format string `json:"format"`
	// Seedfall is the version that ran the seeds (seedfall version).
	Seedfall string        `json:"seedfall"`
	World    worldIdentity `json:"world"`
	// Build is each program's compiled module, in world order, upgrades
	// after the program they upgrade.
	Build []programBuild `json:"build"`
	// Seeds is the whole -seeds list, as -seeds takes it, and Total how
	// many seeds it names; a shard holds some of them.
	Seeds string     `json:"seeds"`
	Total int        `json:"total"`
	Shard *shardMeta `json:"shard,omitempty"`
	// Count is how many seeds this directory is to hold.
	Count int `json:"count"`
	// Pinned: the pinned regressions ran first (pinned.jsonl).
	Pinned bool `json:"pinned"`
	// Nodes are the world's programs, for the report's lanes.
	Nodes []string `json:"nodes"`
}

// worldIdentity says which world ran: two directories merge only when
// their Hash is the same.
type worldIdentity struct {
	Name string `json:"name"` // the world file's name, with -profile and -set (configName)
	Args string `json:"args"` // -c, -profile and -set as a command line, for printed commands
	// Hash is the SHA-256 of Resolved: the world after extends, the
	// profile, -set and the preset, paths relative to the world file.
	Hash     string          `json:"sha256"`
	Resolved json.RawMessage `json:"resolved"`
}

// programBuild is one program's compiled module.
type programBuild struct {
	Program string `json:"program"` // its name; "NAME upgrade_to" for an upgrade
	Hash    string `json:"sha256"`  // of the wasm module that ran
}

// shardMeta is -shard K/N.
type shardMeta struct {
	Index int    `json:"index"` // K, from 1
	Count int    `json:"count"` // N
	From  string `json:"from,omitempty"`
}

// completeMark is complete.json: every seed ran.
type completeMark struct {
	Seeds         int   `json:"seeds"`
	Passed        int   `json:"passed"`
	Failed        int   `json:"failed"`
	PinnedFailing int   `json:"pinned_failing"`
	WallNs        int64 `json:"wall_ns"` // the sweep's real time, start to end
}

// failureRecord is one line of failures.jsonl.
type failureRecord struct {
	Seed    uint64 `json:"seed"`
	Replay  string `json:"replay"`            // the command run printed
	History string `json:"history,omitempty"` // the history page run named, next to the world file
	// Lines are the run's output lines, for the first keptLines failing
	// seeds of the directory.
	Lines []lineRecord `json:"lines,omitempty"`
}

// lineRecord is a trace.Line.
type lineRecord struct {
	At   int64  `json:"at"`
	Node string `json:"node"`
	Inc  int    `json:"inc"`
	Kind string `json:"kind"`
	Text string `json:"text"`
}

func linesRecord(lines []trace.Line) []lineRecord {
	out := make([]lineRecord, len(lines))
	for i, l := range lines {
		out[i] = lineRecord{At: l.At, Node: l.Node, Inc: l.Inc, Kind: string(rune(l.Kind)), Text: l.Text}
	}
	return out
}

func (r *failureRecord) lines() []trace.Line {
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

// pinnedRecord is one line of pinned.jsonl: a pinned regression replayed.
type pinnedRecord struct {
	Name   string          `json:"name"`
	Path   string          `json:"path"`   // its schedule
	Replay string          `json:"replay"` // the command run printed
	Result json.RawMessage `json:"result"` // its run -json object
}

// identity is the world and build identity of a session, for run.json.
func (s *session) identity() (worldIdentity, []programBuild, error) {
	resolved, err := s.w.Resolved(false)
	if err != nil {
		return worldIdentity{}, nil, err
	}
	sum := sha256.Sum256(resolved)
	id := worldIdentity{Name: s.configName(), Args: s.args, Hash: hex.EncodeToString(sum[:]), Resolved: resolved}
	var build []programBuild
	for _, p := range s.p.Programs {
		build = append(build, programBuild{Program: p.Name, Hash: p.Hash})
		if p.Upgrade != nil {
			build = append(build, programBuild{Program: p.Name + " upgrade_to", Hash: p.Upgrade.Hash})
		}
	}
	return id, build, nil
}

// resultsWriter appends a sweep to a results directory as it runs.
type resultsWriter struct {
	dir                       string
	results, failures, pinned *os.File
	kept                      int // failing seeds whose lines were kept
	n                         int // seeds written
	err                       error
}

// createResults starts a results directory: it makes dir, removes what an
// earlier run left there (a task that runs again starts afresh), and
// writes run.json. Nothing but the files of a results directory is
// touched.
func createResults(dir string, meta *resultsMeta) (*resultsWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("-out: %w", err)
	}
	// complete.json first: a directory killed while it starts again must
	// not look complete.
	for _, f := range []string{resultsCompleteFile, resultsMetaFile, resultsLinesFile, resultsFailuresFile, resultsPinnedFile,
		resultsCoverageFile, resultsTriageFile, resultsSchedulesDir, resultsHistoriesDir} {
		if err := os.RemoveAll(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("-out: %w", err)
		}
	}
	meta.Format = resultsFormat
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := fsutil.WriteFile(filepath.Join(dir, resultsMetaFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("-out: %w", err)
	}
	w := &resultsWriter{dir: dir}
	for _, f := range []struct {
		name string
		to   **os.File
	}{{resultsLinesFile, &w.results}, {resultsFailuresFile, &w.failures}, {resultsPinnedFile, &w.pinned}} {
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

// seed adds one seed: its run -json line, and for a failing seed its
// record, schedule and history page (any may be nil). The first error
// stops the writing and is kept for done.
func (w *resultsWriter) seed(seed uint64, line []byte, fail *failureRecord, schedule, history []byte) {
	if w == nil || w.err != nil {
		return
	}
	w.err = func() error {
		if fail != nil {
			if schedule != nil {
				if err := writeReplacing(filepath.Join(w.dir, resultsSchedulesDir, fmt.Sprintf("seed-%d.faults.json", seed)), schedule); err != nil {
					return err
				}
			}
			if history != nil {
				if err := writeReplacing(filepath.Join(w.dir, resultsHistoriesDir, fmt.Sprintf("seed-%d.history.html", seed)), history); err != nil {
					return err
				}
			}
			rec := *fail
			if w.kept >= keptLines {
				rec.Lines = nil
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

// pinnedRun adds a pinned regression's replay.
func (w *resultsWriter) pinnedRun(rec pinnedRecord) {
	if w == nil || w.err != nil {
		return
	}
	b, err := json.Marshal(rec)
	if err == nil {
		err = appendLine(w.pinned, b)
	}
	w.err = err
}

// writeJSON writes one of the directory's JSON files whole.
func (w *resultsWriter) writeJSON(name string, v any) {
	if w == nil || w.err != nil {
		return
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = writeReplacing(filepath.Join(w.dir, name), append(b, '\n'))
	}
	w.err = err
}

// finish closes the files; with a mark, after syncing the lines, it writes
// complete.json. It returns the first error of the directory's writing.
func (w *resultsWriter) finish(mark *completeMark) error {
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
			w.err = fsutil.WriteFile(filepath.Join(w.dir, resultsCompleteFile), append(b, '\n'), 0o644)
		}
	}
	if err := w.close(); err != nil && w.err == nil {
		w.err = err
	}
	if w.err != nil {
		return fmt.Errorf("-out %s: %w", displayPath(w.dir), w.err)
	}
	return nil
}

func (w *resultsWriter) close() error {
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

// resultsDir is a results directory as a reader finds it.
type resultsDir struct {
	path     string // as found, for messages
	meta     resultsMeta
	complete *completeMark // nil: the run that wrote it did not finish
	pinned   []pinnedRecord
}

// errNotResults means a directory has no run.json.
var errNotResults = errors.New("not a results directory")

// readResultsDir reads a results directory's run.json, complete.json and
// pinned.jsonl; its seeds are read as they are merged (seedReader).
func readResultsDir(path string) (*resultsDir, error) {
	b, err := os.ReadFile(filepath.Join(path, resultsMetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNotResults
	} else if err != nil {
		return nil, err
	}
	d := &resultsDir{path: path}
	if err := json.Unmarshal(b, &d.meta); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(path, resultsMetaFile), err)
	}
	if d.meta.Format != resultsFormat {
		return nil, fmt.Errorf("%s: format %q, not %q: it was written by another seedfall; merge it with that one", filepath.Join(path, resultsMetaFile), d.meta.Format, resultsFormat)
	}
	if b, err := os.ReadFile(filepath.Join(path, resultsCompleteFile)); err == nil {
		var m completeMark
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(path, resultsCompleteFile), err)
		}
		d.complete = &m
	}
	err = eachLine(filepath.Join(path, resultsPinnedFile), func(line []byte, at string) error {
		var p pinnedRecord
		if err := json.Unmarshal(line, &p); err != nil {
			return fmt.Errorf("%s: %v", at, err)
		}
		d.pinned = append(d.pinned, p)
		return nil
	})
	return d, err
}

// name is how messages call the directory: "shard 2 of 3 (DIR)", or DIR.
func (d *resultsDir) name() string {
	if sh := d.meta.Shard; sh != nil {
		return fmt.Sprintf("shard %d of %d (%s)", sh.Index, sh.Count, displayPath(d.path))
	}
	return displayPath(d.path)
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
func (lr *lineReader) at() string { return fmt.Sprintf("%s:%d", displayPath(lr.path), lr.n) }

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

// seedReader reads the seeds of a results directory in order, each with
// what a sweep prints of it.
type seedReader struct {
	d                 *resultsDir
	results, failures *lineReader
	n                 int  // seeds read
	files             bool // read each failing seed's schedule and history page, to copy them
}

func (d *resultsDir) seeds(files bool) (*seedReader, error) {
	r := &seedReader{d: d, files: files}
	var err error
	if r.results, err = openLines(filepath.Join(d.path, resultsLinesFile)); err != nil {
		return nil, err
	}
	if r.failures, err = openLines(filepath.Join(d.path, resultsFailuresFile)); err != nil {
		r.results.close()
		return nil, err
	}
	return r, nil
}

func (r *seedReader) close() {
	r.results.close()
	r.failures.close()
}

// next returns the next seed, or nil at the end of the whole lines.
func (r *seedReader) next() (*seedOutcome, error) {
	line, err := r.results.next()
	if err != nil || line == nil {
		return nil, err
	}
	var jr jsonResult
	if err := json.Unmarshal(line, &jr); err != nil {
		return nil, fmt.Errorf("%s: %v: the directory is damaged", r.results.at(), err)
	}
	r.n++
	res := &engine.Result{Seed: jr.Seed, Passed: jr.Passed, Class: jr.Class, Reason: jr.Reason, Node: jr.Node,
		SimNs: jr.SimNs, WallNs: jr.WallNs, Steps: jr.Steps, Digest: jr.Digest, History: jr.History, Properties: jr.Properties,
		Schedule: &faults.Schedule{Seed: jr.Seed}}
	oc := &seedOutcome{res: res, line: bytes.Clone(line), schedule: jr.Schedule}
	if jr.Passed {
		return oc, nil
	}
	fl, err := r.failures.next()
	if err != nil {
		return nil, err
	}
	var fr failureRecord
	if fl == nil {
		return nil, fmt.Errorf("%s: seed %d failed but %s has no line for it: the directory is damaged", r.results.at(), jr.Seed, displayPath(r.failures.path))
	}
	if err := json.Unmarshal(fl, &fr); err != nil {
		return nil, fmt.Errorf("%s: %v: the directory is damaged", r.failures.at(), err)
	}
	if fr.Seed != jr.Seed {
		return nil, fmt.Errorf("%s is about seed %d, where %s has seed %d: the directory is damaged", r.failures.at(), fr.Seed, r.results.at(), jr.Seed)
	}
	oc.replay, oc.history = fr.Replay, fr.History
	res.Lines = fr.lines()
	// The report draws the schedules of the first failures, which are
	// among the first of each directory; a merged -out copies them all.
	if detailed := r.failures.n <= keptLines; detailed || r.files {
		if b, err := os.ReadFile(r.schedulePath(jr.Seed)); err == nil {
			if sch, err := faults.Parse(displayPath(r.schedulePath(jr.Seed)), b); err == nil && detailed {
				res.Schedule = sch
			}
			if r.files {
				oc.scheduleJSON = b
			}
		}
	}
	if r.files {
		if b, err := os.ReadFile(filepath.Join(r.d.path, resultsHistoriesDir, fmt.Sprintf("seed-%d.history.html", jr.Seed))); err == nil {
			oc.historyHTML = b
		}
	}
	return oc, nil
}

func (r *seedReader) schedulePath(seed uint64) string {
	return filepath.Join(r.d.path, resultsSchedulesDir, fmt.Sprintf("seed-%d.faults.json", seed))
}
