package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// The log is a sequence of blocks of a fixed size. A record is written as one or more
// fragments, each with a 7-byte header:
//
//	crc32 (4 bytes, of the type and the data) | length of the data (2) | type (1) | data
//
// A record that fits in what is left of the block is one full fragment; otherwise its
// first fragment fills the block, middle fragments fill whole blocks, and a last
// fragment ends it. When fewer than 7 bytes are left in a block, the writer fills them
// with zeros and starts the next fragment in the next block. When exactly 7 are left it
// writes a first fragment there with no data, as LevelDB does.
const headerSize = 7

const (
	fullType   = 1
	firstType  = 2
	middleType = 3
	lastType   = 4
)

// appendRecord appends the fragments of rec to buf, whose length is the log's size, and
// returns the new buffer.
func appendRecord(buf []byte, block int, rec []byte) []byte {
	first := true
	for {
		left := block - len(buf)%block
		if left < headerSize {
			buf = append(buf, make([]byte, left)...) // the trailer: zeros
			left = block
		}
		n := min(len(rec), left-headerSize)
		end := n == len(rec)
		typ := byte(middleType)
		switch {
		case first && end:
			typ = fullType
		case first:
			typ = firstType
		case end:
			typ = lastType
		}
		var h [headerSize]byte
		binary.LittleEndian.PutUint16(h[4:], uint16(n))
		h[6] = typ
		crc := crc32.ChecksumIEEE(append([]byte{typ}, rec[:n]...))
		binary.LittleEndian.PutUint32(h[:4], crc)
		buf = append(append(buf, h[:]...), rec[:n]...)
		rec, first = rec[n:], false
		if end {
			return buf
		}
	}
}

// readRecords returns the records at the start of log and the length of the prefix that
// holds them, complete; anything after it is a torn tail or damage. inclusive is the bug:
// it takes the last 7 bytes of a block for a trailer, although the writer puts an empty
// first fragment there.
func readRecords(log []byte, block int, inclusive bool) (recs [][]byte, good int) {
	var cur []byte // the record being assembled; nil between records
	off := 0
	for {
		left := block - off%block
		if left < headerSize || (inclusive && left == headerSize) {
			off += left // the trailer
			continue
		}
		if off+headerSize > len(log) {
			return recs, good
		}
		h := log[off : off+headerSize]
		n, typ := int(binary.LittleEndian.Uint16(h[4:])), h[6]
		if off+headerSize+n > len(log) || n > left-headerSize {
			return recs, good
		}
		data := log[off+headerSize : off+headerSize+n]
		if binary.LittleEndian.Uint32(h[:4]) != crc32.ChecksumIEEE(append([]byte{typ}, data...)) {
			return recs, good
		}
		off += headerSize + n
		switch {
		case typ == fullType && cur == nil:
			recs, good = append(recs, data), off
		case typ == firstType && cur == nil:
			cur = append([]byte{}, data...)
		case (typ == middleType || typ == lastType) && cur != nil:
			cur = append(cur, data...)
			if typ == lastType {
				recs, good, cur = append(recs, cur), off, nil
			}
		default:
			// A fragment out of its order: the log is damaged here.
			return recs, good
		}
	}
}

// store is the key-value map in memory plus the log that rebuilds it after a restart.
type store struct {
	mu      sync.Mutex
	path    string
	log     *os.File
	block   int
	size    int // bytes in the log, trailers included
	records int // records replayed at the start
	data    map[string]string
}

// openStore opens or creates dir/wal.log, replays it and cuts what follows its last
// complete record. It returns the store and how many bytes it cut.
func openStore(dir string, block int, inclusive bool) (*store, int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, 0, err
	}
	path := filepath.Join(dir, "wal.log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, err
	}
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
	recs, good := readRecords(b, block, inclusive)
	data := map[string]string{}
	for _, r := range recs {
		k, v, ok := strings.Cut(string(r), " ")
		if !ok {
			f.Close()
			return nil, 0, fmt.Errorf("%s holds a record without a value: %q", path, r)
		}
		data[k] = v
	}
	if good < len(b) {
		// A new record must not land after bytes replay cannot read.
		if err := f.Truncate(int64(good)); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("cut %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("fsync %s: %w", path, err)
		}
	}
	if _, err := f.Seek(int64(good), io.SeekStart); err != nil {
		f.Close()
		return nil, 0, err
	}
	return &store{path: path, log: f, block: block, size: good, records: len(recs), data: data}, len(b) - good, nil
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

// put appends the record, fsyncs the log and applies the record.
func (s *store) put(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// appendRecord needs the offset within the block: give it a buffer of the log's
	// length and write only what it appended.
	frag := appendRecord(make([]byte, s.size%s.block), s.block, []byte(key+" "+value))[s.size%s.block:]
	if _, err := s.log.Write(frag); err != nil {
		return fmt.Errorf("append to %s: %w", s.path, err)
	}
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", s.path, err)
	}
	s.size += len(frag)
	s.data[key] = value
	return nil
}

func (s *store) get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	return v, ok
}
