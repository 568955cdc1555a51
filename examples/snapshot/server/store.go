package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
)

// snapshot is the whole state of the service, written as one JSON file.
type snapshot struct {
	Version   int               `json:"version"` // number of saved writes
	Registers map[string]string `json:"registers"`
}

// store holds the current snapshot and saves every change as a new state.json.
type store struct {
	mu      sync.Mutex
	dir     string
	syncDir bool
	cur     snapshot
}

// openStore loads dir/state.json, or starts empty when there is none yet. A state.tmp
// left by a crash is ignored: it was never renamed, so no write in it was acknowledged.
func openStore(dir string, syncDir bool) (*store, error) {
	s := &store{dir: dir, syncDir: syncDir, cur: snapshot{Registers: map[string]string{}}}
	path := filepath.Join(dir, "state.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	// The file is fsynced before it is renamed into place, so it is never torn: a
	// parse error here is a real bug, not a crash artefact to skip over.
	if err := json.Unmarshal(b, &s.cur); err != nil {
		return nil, fmt.Errorf("%s is not a valid snapshot: %v", path, err)
	}
	if s.cur.Registers == nil {
		s.cur.Registers = map[string]string{}
	}
	return s, nil
}

// set saves a snapshot with key=value and only then makes it current, so a reader
// never sees a value that is not on disk.
func (s *store) set(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := snapshot{Version: s.cur.Version + 1, Registers: maps.Clone(s.cur.Registers)}
	next.Registers[key] = value
	if err := s.save(next); err != nil {
		return err
	}
	s.cur = next
	return nil
}

func (s *store) get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.cur.Registers[key]
	return v, ok
}

// save replaces state.json atomically: write state.tmp, fsync it, rename it over
// state.json. The fsync makes the new bytes durable, but the rename is a change to the
// directory, and the directory is a file of its own: until it is fsynced too, a crash
// can bring back the old state.json (or none at all). Only -syncdir does that.
func (s *store) save(snap snapshot) error {
	b, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	tmp, path := filepath.Join(s.dir, "state.tmp"), filepath.Join(s.dir, "state.json")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if !s.syncDir {
		return nil
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", s.dir, err)
	}
	return nil
}
