package main

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"log"
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

// decodeUnchecked parses one log line as decodeRecord does, but trusts the length and
// the checksum: what a log without checksums can do.
func decodeUnchecked(line string) (key, value string, ok bool) {
	f := strings.Split(line, " ")
	if len(f) != 4 || f[2] == "" || f[3] == "" {
		return "", "", false
	}
	return f[2], f[3], true
}

// replay reads the intact records at the start of r. It returns the resulting key-value
// map and the length of that intact prefix; anything after it is a torn tail.
func replay(r io.Reader) (map[string]string, int64, error) { return replayWith(r, true) }

// replayWith is replay, verifying each record's length and checksum only if checksum.
func replayWith(r io.Reader, checksum bool) (map[string]string, int64, error) {
	decode := decodeRecord
	if !checksum {
		decode = decodeUnchecked
	}
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
		key, value, ok := decode(strings.TrimSuffix(line, "\n"))
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
	retrySync   int  // after a failed fsync, try again this many times (the bug of -fsync-error=retry)
}

// options are the server's choices about durability and damage.
type options struct {
	syncEachPut bool
	checksum    bool // verify each record's checksum on replay
	// rereads is how many times at most to read the log again when replay stops before
	// its end, until three reads in a row return the same bytes: a read can return a flipped bit
	// (read_corrupt), while a torn or damaged record reads the same every time.
	rereads   int
	retrySync int
}

// openStore opens or creates dir/kv.log, replays it and cuts off a torn tail. It
// returns the store and how many bytes it cut.
func openStore(dir string, syncEachPut bool) (*store, int64, error) {
	return openStoreWith(dir, options{syncEachPut: syncEachPut, checksum: true})
}

// openStoreWith is openStore with every option.
func openStoreWith(dir string, opt options) (*store, int64, error) {
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
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	buf, err := io.ReadAll(io.NewSectionReader(f, 0, size))
	var data map[string]string
	var good int64
	if err == nil {
		data, good, err = replayWith(bytes.NewReader(buf), opt.checksum)
	}
	agree := 0
	for i := 0; err == nil && good < size && i < opt.rereads; i++ {
		// Replay stopped early. A torn or damaged record reads the same every time;
		// a bit flipped on the way from the disk does not. Read until three reads in a
		// row agree: two can, rarely, flip the same bit.
		again, e := io.ReadAll(io.NewSectionReader(f, 0, size))
		switch {
		case e != nil:
			err = e
		case bytes.Equal(again, buf):
			agree++
		default:
			agree = 0
			buf = again
			data, good, err = replayWith(bytes.NewReader(buf), opt.checksum)
		}
		if agree == 2 {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("replay %s: %w", path, err)
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
	return &store{path: path, log: f, data: data, syncEachPut: opt.syncEachPut, retrySync: opt.retrySync}, size - good, nil
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
		err := s.log.Sync()
		for i := 0; err != nil && i < s.retrySync; i++ {
			// The bug of -fsync-error=retry: on Linux the failed pages are already
			// dropped from the disk, so this fsync succeeds without them.
			log.Printf("fsync %s: %v; retrying", s.path, err)
			err = s.log.Sync()
		}
		if err != nil {
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
