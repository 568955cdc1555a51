package counter

import (
	"os"
	"path/filepath"

	"github.com/seedfall/seedfall/sim"
)

// V1Log is the file format v1 keeps in its directory: one line per add.
const V1Log = "counter.log"

// V1 is the store of format v1: an append-only log, fsynced per record.
type V1 struct {
	f     *os.File
	state *State
}

// OpenV1 replays dir's v1 log and cuts off a torn last record.
func OpenV1(dir string) (*V1, error) {
	st, size, err := replayV1(dir)
	if err != nil {
		return nil, err
	}
	f, err := openForAppend(filepath.Join(dir, V1Log), size)
	if err != nil {
		return nil, err
	}
	return &V1{f: f, state: st}, nil
}

func replayV1(dir string) (*State, int64, error) {
	lines, size, err := readLog(filepath.Join(dir, V1Log), func(l string) bool { _, ok := parseV1(l); return ok })
	if err != nil {
		return nil, 0, err
	}
	st := newState()
	for _, l := range lines {
		r, _ := parseV1(l)
		st.apply(r)
	}
	return st, size, nil
}

func (s *V1) State() *State  { return s.state }
func (s *V1) Format() string { return "v1" }

func (s *V1) Append(r Record) error {
	line := []byte(v1Line(r))
	if sim.Buggify() {
		// Early flush: a buffered writer whose buffer fills mid-record
		// writes and syncs the first part alone. A crash before the rest
		// leaves a torn record, which OpenV1 must cut off.
		half := len(line) / 2
		if _, err := s.f.Write(line[:half]); err != nil {
			return err
		}
		if err := s.f.Sync(); err != nil {
			return err
		}
		line = line[half:]
	}
	if _, err := s.f.Write(line); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return err
	}
	s.state.apply(r)
	return nil
}
