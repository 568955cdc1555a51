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

// The log is a text file with one record per PUT, as kvlog's:
//
//	<len> <crc32> <key> <value>\n
//
// where len is the byte length of "<key> <value>" and crc32 its IEEE checksum in 8 hex
// digits. A crash can leave the last record half written, so replay stops at the first
// record that does not check out and cuts the file there.

func encodeRecord(key, value string) []byte {
	payload := key + " " + value
	return fmt.Appendf(nil, "%d %08x %s\n", len(payload), crc32.ChecksumIEEE([]byte(payload)), payload)
}

func decodeRecord(line string) (key, value string, ok bool) {
	n, rest, ok1 := strings.Cut(line, " ")
	sum, payload, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || n != strconv.Itoa(len(payload)) || sum != fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(payload))) {
		return "", "", false
	}
	key, value, ok = strings.Cut(payload, " ")
	if !ok || key == "" || value == "" || strings.Contains(value, " ") {
		return "", "", false
	}
	return key, value, true
}

// replay reads the intact records at the start of r: the key-value map they build and
// the length of that intact prefix. Anything after it is a torn tail.
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

// wal is the key-value map in memory and the log that rebuilds it after a restart.
type wal struct {
	path string
	cut  int64 // bytes of torn tail cut when the log was opened

	mu      sync.Mutex
	cond    *sync.Cond // broadcast when end or durable moves, or err is set
	f       *os.File
	data    map[string]string
	end     int64 // bytes appended to the log
	durable int64 // the log is on disk up to here
	err     error // a failed fsync: the server is going down

	// sync makes the log durable: f.Sync, replaced by tests.
	sync func() error
}

// openWAL opens or creates dir/wal.log, replays it, cuts off a torn tail and fsyncs
// what it keeps, so that all of it is durable.
func openWAL(dir string) (*wal, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "wal.log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	w, err := load(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	// A new file survives a crash only once its directory is fsynced (strict POSIX);
	// doing it on every start is cheap and covers the first one.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := syncDir(d); err != nil {
			f.Close()
			return nil, err
		}
	}
	return w, nil
}

func load(f *os.File, path string) (*wal, error) {
	buf, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	data, good, err := replay(bytes.NewReader(buf))
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", path, err)
	}
	if err := f.Truncate(good); err != nil {
		return nil, fmt.Errorf("cut torn tail of %s: %w", path, err)
	}
	// A restart after an exit finds records the page cache still holds: make them
	// durable before counting them so.
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("fsync %s: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		return nil, err
	}
	w := &wal{path: path, cut: int64(len(buf)) - good, f: f, data: data, end: good, durable: good, sync: f.Sync}
	w.cond = sync.NewCond(&w.mu)
	return w, nil
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

// put appends the record, applies it, and returns once the syncer has made it
// durable. It does not fsync itself: the syncer's next fsync covers every record
// appended by then.
func (w *wal) put(key, value string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	rec := encodeRecord(key, value)
	if _, err := w.f.Write(rec); err != nil {
		return fmt.Errorf("append to %s: %w", w.path, err)
	}
	w.end += int64(len(rec))
	mine := w.end
	// Applied in log order, so that memory agrees with what a replay rebuilds. A GET
	// may read it before it is durable; only the PUT's answer waits.
	w.data[key] = value
	w.cond.Broadcast() // wake the syncer
	for w.durable < mine && w.err == nil {
		w.cond.Wait()
	}
	return w.err
}

func (w *wal) get(key string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	v, ok := w.data[key]
	return v, ok
}

// syncLoop is the group commit: it waits for records, fsyncs the log without holding
// the lock, so that appenders keep writing meanwhile, and then moves the durable end,
// which releases the PUTs waiting for it. It returns only when an fsync fails.
//
// endAfterSync is the bug: it takes the log's end when the fsync returns, which
// includes the records appended while it ran. An fsync on Linux writes what was dirty
// when it started and may miss what comes later, so those records are acknowledged
// but not yet on disk, and stay so until the next fsync: a crash in between loses
// them. The fix takes the end before the fsync starts.
func (w *wal) syncLoop(endAfterSync bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		for w.durable == w.end {
			w.cond.Wait()
		}
		covered := w.end // what this fsync is sure to write
		w.mu.Unlock()
		err := w.sync()
		w.mu.Lock()
		if err != nil {
			w.err = fmt.Errorf("fsync %s: %w", w.path, err)
			w.cond.Broadcast()
			return w.err
		}
		if endAfterSync {
			covered = w.end
		}
		w.durable = covered
		w.cond.Broadcast()
	}
}
