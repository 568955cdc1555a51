package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
)

// Two ways to keep the log short, each with a bug on a path that runs only now and then.
//
// A checkpoint (-checkpoint-every) runs when the log passes a size: the server writes
// every live key to kv.snap and empties the log, and a start loads kv.snap before it
// replays the log. The snapshot must be on disk before the log is emptied. With
// -checkpoint-order=log-first the server empties the log and fsyncs it first, then
// fsyncs the snapshot: a crash between the two fsyncs finds the log empty and the
// snapshot's records still in the page cache, gone.
//
// A rewrite on start (-rewrite-on-start) runs after each replay, that is after every
// crash: the server rewrites the log with one record per live key, so that the next
// replay has less to read. With -rewrite-on-start=inplace it truncates kv.log and writes
// the records back into it: a second crash before that rewrite is fsynced keeps only a
// prefix of it, and everything past the prefix was in the log the truncate threw away.
// -rewrite-on-start=rename writes a new file, fsyncs it and renames it over the log, so
// a crash finds either the old log or the whole new one.

// checkpointing is how the store takes checkpoints.
type checkpointing struct {
	every    int64 // take a checkpoint when the log reaches this many bytes; 0: never
	logFirst bool  // empty the log before the snapshot is fsynced (the bug)
}

func (s *store) snapPath() string { return filepath.Join(filepath.Dir(s.path), "kv.snap") }

// records returns the log records for every live key, in key order.
func records(data map[string]string) []byte {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b []byte
	for _, k := range keys {
		b = append(b, encodeRecord(k, data[k])...)
	}
	return b
}

// loadSnapshot reads the records of a snapshot. A missing snapshot is an empty one.
func loadSnapshot(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	data, good, err := replay(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", path, err)
	}
	if good < int64(len(b)) {
		// A snapshot is renamed into place whole, so a damaged one means its
		// records never reached the disk: say so, and serve what is left.
		log.Printf("snapshot %s is damaged after byte %d of %d", path, good, len(b))
	}
	log.Printf("loaded %d keys from %s", len(data), path)
	return data, nil
}

// checkpoint writes every live key to the snapshot and empties the log. The caller
// holds s.mu.
func (s *store) checkpoint() error {
	snap := s.snapPath()
	tmp := snap + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(records(s.data)); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if !s.ckpt.logFirst {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", tmp, err)
		}
	}
	if err := os.Rename(tmp, snap); err != nil {
		return err
	}
	if !s.ckpt.logFirst {
		if err := syncDir(filepath.Dir(snap)); err != nil {
			return err
		}
	}
	if err := s.log.Truncate(0); err != nil {
		return fmt.Errorf("empty %s: %w", s.path, err)
	}
	if _, err := s.log.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", s.path, err)
	}
	s.size = 0
	log.Printf("checkpoint: %d keys in %s, log emptied", len(s.data), snap)
	if s.ckpt.logFirst {
		// The bug: until this fsync the snapshot's records are only in the page
		// cache, and the log that also held them is already empty on disk.
		if err := f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", snap, err)
		}
		if err := syncDir(filepath.Dir(snap)); err != nil {
			return err
		}
	}
	return nil
}

// rewriteLog replaces the log with one record per live key, in place (the bug) or
// through a new file renamed over it (the fix), and leaves s.log open at its end.
func (s *store) rewriteLog(inplace bool) error {
	b := records(s.data)
	if inplace {
		if err := s.log.Truncate(0); err != nil {
			return err
		}
		if _, err := s.log.Seek(0, io.SeekStart); err != nil {
			return err
		}
		// One write per record, as a buffered writer flushing small pieces would.
		for rest := b; len(rest) > 0; {
			n := bytes.IndexByte(rest, '\n') + 1
			if _, err := s.log.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
		if err := s.log.Sync(); err != nil {
			return err
		}
		s.size = int64(len(b))
		log.Printf("rewrote %s in place: %d keys", s.path, len(s.data))
		return nil
	}
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	for rest := b; len(rest) > 0; {
		n := bytes.IndexByte(rest, '\n') + 1
		if _, err := f.Write(rest[:n]); err != nil {
			f.Close()
			return err
		}
		rest = rest[n:]
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		f.Close()
		return err
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		f.Close()
		return err
	}
	s.log.Close()
	s.log, s.size = f, int64(len(b))
	log.Printf("rewrote %s through %s: %d keys", s.path, tmp, len(s.data))
	return nil
}
