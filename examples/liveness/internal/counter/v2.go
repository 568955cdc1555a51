package counter

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seedfall/seedfall/sim"
)

// Format v2 keeps a snapshot of the state and a log of the records since,
// each numbered and checksummed. A v2 store opened over v1 data migrates
// it: the v1 log becomes the first snapshot.
const (
	V2Snapshot = "snapshot.v2"
	V2Log      = "counter.v2.log"
	// compactEvery is how many log records a snapshot absorbs at once.
	compactEvery = 64
)

// V2 is the store of format v2.
type V2 struct {
	dir      string
	f        *os.File
	state    *State
	inLog    int    // records in the log since the snapshot
	Migrated string // what OpenV2 found to migrate, for the logs; "" if nothing
}

// OpenV2 loads dir's v2 snapshot and log, or migrates its v1 log.
func OpenV2(dir string) (*V2, error) {
	s := &V2{dir: dir}
	st, err := readSnapshot(filepath.Join(dir, V2Snapshot))
	if err != nil {
		return nil, err
	}
	v1 := filepath.Join(dir, V1Log)
	if st == nil {
		// No snapshot: this is a fresh disk or one written by v1. The
		// snapshot is written first and v1's log removed after it, so a
		// crash in between finds the snapshot and removes the log again.
		if st, _, err = replayV1(dir); err != nil {
			return nil, err
		}
		if st.Applied > 0 {
			s.Migrated = fmt.Sprintf("migrated %d v1 records", st.Applied)
		}
		if err := writeSnapshot(dir, st); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(v1); err == nil {
		if err := os.Remove(v1); err != nil {
			return nil, err
		}
		if err := syncDir(dir); err != nil {
			return nil, err
		}
	}
	// Records the snapshot already holds (a crash between writing it and
	// emptying the log) are skipped by their sequence number.
	lines, size, err := readLog(filepath.Join(dir, V2Log), func(l string) bool { _, _, ok := parseV2(l); return ok })
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		seq, r, _ := parseV2(l)
		if seq > st.Applied {
			st.apply(r)
		}
	}
	s.state, s.inLog = st, len(lines)
	if s.f, err = openForAppend(filepath.Join(dir, V2Log), size); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *V2) State() *State  { return s.state }
func (s *V2) Format() string { return "v2" }

func (s *V2) Append(r Record) error {
	if _, err := s.f.WriteString(v2Line(s.state.Applied+1, r)); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return err
	}
	s.state.apply(r)
	s.inLog++
	// Early compaction: a snapshot is legal at any record, only rare.
	if s.inLog >= compactEvery || sim.Buggify() {
		return s.compact()
	}
	return nil
}

// compact writes the state as the new snapshot and empties the log.
func (s *V2) compact() error {
	if err := writeSnapshot(s.dir, s.state); err != nil {
		return err
	}
	if err := s.f.Truncate(0); err != nil {
		return err
	}
	if _, err := s.f.Seek(0, 0); err != nil {
		return err
	}
	s.inLog = 0
	return s.f.Sync()
}

// writeSnapshot replaces the snapshot atomically: a temporary file,
// fsynced, renamed over the old one, and the directory fsynced.
func writeSnapshot(dir string, st *State) error {
	var b strings.Builder
	fmt.Fprintf(&b, "counter v2\ntotal %d\napplied %d\n", st.Total, st.Applied)
	clients := make([]string, 0, len(st.Last))
	for c := range st.Last {
		clients = append(clients, c)
	}
	sort.Strings(clients)
	for _, c := range clients {
		fmt.Fprintf(&b, "last %s %d\n", c, st.Last[c])
	}
	b.WriteString("end\n")
	tmp := filepath.Join(dir, V2Snapshot+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, V2Snapshot)); err != nil {
		return err
	}
	return syncDir(dir)
}

// readSnapshot returns nil, nil when there is no snapshot.
func readSnapshot(path string) (*State, error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	st := newState()
	sc := bufio.NewScanner(f)
	header, end := false, false
	for sc.Scan() {
		line := sc.Text()
		var c string
		var v int64
		var q uint64
		switch {
		case line == "counter v2":
			header = true
		case line == "end":
			end = true
		case strings.HasPrefix(line, "total "):
			_, err = fmt.Sscanf(line, "total %d", &st.Total)
		case strings.HasPrefix(line, "applied "):
			_, err = fmt.Sscanf(line, "applied %d", &v)
			st.Applied = v
		case strings.HasPrefix(line, "last "):
			_, err = fmt.Sscanf(line, "last %s %d", &c, &q)
			st.Last[c] = q
		default:
			err = fmt.Errorf("unknown line %q", line)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !header || !end {
		return nil, fmt.Errorf("%s is incomplete: it was renamed into place before it was whole", path)
	}
	return st, nil
}
