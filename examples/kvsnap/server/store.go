package main

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// The log and the snapshot are text files in kvlog's format, one record per key:
//
//	<len> <crc32> <key> <value>\n
//
// where len is the byte length of "<key> <value>" and crc32 its IEEE checksum in 8 hex
// digits. Replay stops at the first record that does not check out: a crash can leave
// the last one half written.

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

// store is the key-value map in memory plus the log (and, with checkpoints, the
// snapshot) that rebuild it after a restart.
type store struct {
	mu   sync.Mutex
	path string
	log  *os.File
	data map[string]string
	size int64 // bytes in the log
	ckpt checkpointing
}

// openStore opens or creates dir/kv.log, loads the snapshot if checkpoints are on,
// replays the log over it and cuts off a torn tail; then, if rewrite is set, rewrites
// the log. It returns the store and how many bytes it cut.
func openStore(dir string, ckpt checkpointing, rewrite string) (*store, int64, error) {
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
	b, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	data, good, err := replay(bytes.NewReader(b))
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("replay %s: %w", path, err)
	}
	size := int64(len(b))
	if size > good {
		// A new record must never land after garbage, or the next replay would
		// stop before it.
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
	s := &store{path: path, log: f, data: data, size: good, ckpt: ckpt}
	if ckpt.every > 0 {
		// The snapshot holds what the log held before its last checkpoint; the
		// log's records are newer.
		snap, err := loadSnapshot(s.snapPath())
		if err != nil {
			f.Close()
			return nil, 0, err
		}
		for k, v := range data {
			snap[k] = v
		}
		s.data = snap
	}
	if rewrite != "" && good > 0 {
		if err := s.rewriteLog(rewrite == "inplace"); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("rewrite %s: %w", path, err)
		}
	}
	return s, size - good, nil
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

// put appends the record, fsyncs it and applies it, then takes a checkpoint if the
// log has grown past its size. Any error leaves the log in a state the server must
// not build on, so the caller exits and the restart replays what the disk kept.
func (s *store) put(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := encodeRecord(key, value)
	if _, err := s.log.Write(rec); err != nil {
		return fmt.Errorf("append to %s: %w", s.path, err)
	}
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", s.path, err)
	}
	s.size += int64(len(rec))
	s.data[key] = value
	if s.ckpt.every > 0 && s.size >= s.ckpt.every {
		return s.checkpoint()
	}
	return nil
}

func (s *store) get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	return v, ok
}
