package main

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The log is a text file with one record per PUT:
//
//	<len> <crc32> <key> <value>\n
//
// where len is the byte length of "<key> <value>" and crc32 its IEEE checksum in 8 hex
// digits. A crash can leave the last record half written, so replay stops at the first
// record that does not check out and cuts the file there: a new record must never land
// after garbage, or the next replay would stop before it.

// encodeRecord returns the log line for one PUT.
func encodeRecord(key, value string) []byte {
	payload := key + " " + value
	return fmt.Appendf(nil, "%d %08x %s\n", len(payload), crc32.ChecksumIEEE([]byte(payload)), payload)
}

// decodeRecord parses one log line without its newline.
func decodeRecord(line string) (key, value string, ok bool) {
	n, rest, ok1 := strings.Cut(line, " ")
	sum, payload, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || n != strconv.Itoa(len(payload)) {
		return "", "", false
	}
	if sum != fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(payload))) {
		return "", "", false
	}
	key, value, ok = strings.Cut(payload, " ")
	if !ok || key == "" || value == "" || strings.Contains(value, " ") {
		return "", "", false
	}
	return key, value, true
}

// replay reads the intact records at the start of r. It returns the resulting key-value
// map and the length of that intact prefix; anything after it is a torn tail.
func replay(r io.Reader) (map[string]string, int64, error) {
	br := bufio.NewReader(r)
	data := map[string]string{}
	var good int64
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF {
			return data, good, nil // a last line without its newline is torn
		}
		if err != nil {
			return nil, 0, err
		}
		key, value, ok := decodeRecord(strings.TrimSuffix(line, "\n"))
		if !ok {
			return data, good, nil
		}
		data[key] = value
		good += int64(len(line))
	}
}

// store is the key-value map in memory plus the log that rebuilds it after a restart.
type store struct {
	mu          sync.Mutex
	path        string
	log         *os.File
	data        map[string]string
	syncEachPut bool
	dirty       bool // records written since the last fsync
}

// openStore opens or creates dir/kv.log, replays it and cuts off a torn tail. It
// returns the store and how many bytes it cut.
func openStore(dir string, syncEachPut bool) (*store, int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, 0, err
	}
	path := filepath.Join(dir, "kv.log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, err
	}
	// A new file or directory survives a crash only once its parent directory is
	// fsynced (strict POSIX). Doing it on every start is cheap and covers the first one.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := syncDir(d); err != nil {
			f.Close()
			return nil, 0, err
		}
	}
	data, good, err := replay(f)
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("replay %s: %w", path, err)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if size > good {
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("cut torn tail of %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("fsync %s: %w", path, err)
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, 0, err
	}
	return &store{path: path, log: f, data: data, syncEachPut: syncEachPut}, size - good, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// put appends the record and applies it. With syncEachPut it returns only once the
// record is on disk; otherwise the record waits in the page cache for the next flush.
//
// Any error leaves the log in a state the server must not build on: a short write
// leaves a torn record in the middle, and after a failed fsync Linux may already have
// dropped the unsynced pages while reads still return them. The caller exits, and the
// restart replays what the disk really kept.
func (s *store) put(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.log.Write(encodeRecord(key, value)); err != nil {
		return fmt.Errorf("append to %s: %w", s.path, err)
	}
	if s.syncEachPut {
		if err := s.log.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", s.path, err)
		}
	} else {
		s.dirty = true
	}
	s.data[key] = value
	return nil
}

func (s *store) get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	return v, ok
}

// flush fsyncs the records written since the last flush.
func (s *store) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirty {
		return nil
	}
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", s.path, err)
	}
	s.dirty = false
	return nil
}

// flushEvery is the group commit of -ack=before-sync: one fsync per interval for all
// the records acknowledged since the last one.
func (s *store) flushEvery(interval time.Duration, fatal func(error)) {
	for range time.Tick(interval) {
		if err := s.flush(); err != nil {
			fatal(err)
		}
	}
}
