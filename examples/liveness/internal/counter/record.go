// Package counter is the counter service shared by server (on-disk format
// v1) and serverv2 (format v2, which reads v1 when it upgrades): the
// records both formats log, the state they rebuild, and the TCP line
// protocol.
package counter

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Record is one applied add: client's request req added n.
type Record struct {
	Client string
	Req    uint64
	N      int64
}

// State is what a log rebuilds: the total, and for each client the highest
// request id applied, which is what deduplication needs because a client
// has one add in flight at a time.
type State struct {
	Total   int64
	Applied int64 // records applied so far; v2 numbers its log records with it
	Last    map[string]uint64
}

func newState() *State { return &State{Last: map[string]uint64{}} }

func (s *State) apply(r Record) {
	s.Total += r.N
	s.Applied++
	if r.Req > s.Last[r.Client] {
		s.Last[r.Client] = r.Req
	}
}

// Store keeps the state durably.
type Store interface {
	// State is the state including every record Append has returned for.
	State() *State
	// Append makes r durable, then applies it to State.
	Append(r Record) error
	// Format names the on-disk format, for the logs.
	Format() string
}

// v1Line is a record in format v1: "add <client> <req> <n>\n".
func v1Line(r Record) string { return fmt.Sprintf("add %s %d %d\n", r.Client, r.Req, r.N) }

func parseV1(line string) (Record, bool) {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "add" {
		return Record{}, false
	}
	return parseFields(f[1], f[2], f[3])
}

// v2Line is a record in format v2: its sequence number, the record, and a
// CRC-32 of the rest of the line, so that a torn or damaged tail is told
// apart from a record.
func v2Line(seq int64, r Record) string {
	body := fmt.Sprintf("%d %s %d %d", seq, r.Client, r.Req, r.N)
	return fmt.Sprintf("%s %08x\n", body, crc32.ChecksumIEEE([]byte(body)))
}

func parseV2(line string) (int64, Record, bool) {
	i := strings.LastIndexByte(line, ' ')
	if i < 0 || line[i+1:] != fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(line[:i]))) {
		return 0, Record{}, false
	}
	f := strings.Fields(line[:i])
	if len(f) != 4 {
		return 0, Record{}, false
	}
	seq, err := strconv.ParseInt(f[0], 10, 64)
	r, ok := parseFields(f[1], f[2], f[3])
	return seq, r, ok && err == nil
}

func parseFields(client, req, n string) (Record, bool) {
	q, err1 := strconv.ParseUint(req, 10, 64)
	v, err2 := strconv.ParseInt(n, 10, 64)
	if client == "" || err1 != nil || err2 != nil {
		return Record{}, false
	}
	return Record{Client: client, Req: q, N: v}, true
}

// readLog reads a log and returns its complete lines and the length of the
// prefix they fill, so the caller can cut off a torn tail before appending.
func readLog(path string, valid func(string) bool) (lines []string, size int64, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, 0, nil
		}
		return nil, 0, err
	}
	for len(data) > 0 {
		i := strings.IndexByte(string(data), '\n')
		if i < 0 || !valid(string(data[:i])) {
			break
		}
		lines = append(lines, string(data[:i]))
		size += int64(i + 1)
		data = data[i+1:]
	}
	return lines, size, nil
}

// openForAppend opens path, cuts it to size (dropping a torn tail) and
// leaves the offset at the end. A new file's directory entry is synced.
func openForAppend(path string, size int64) (*os.File, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*os.File, error) { f.Close(); return nil, err }
	if fi, err := f.Stat(); err != nil {
		return fail(err)
	} else if fi.Size() != size {
		if err := f.Truncate(size); err != nil {
			return fail(err)
		}
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Seek(size, 0); err != nil {
		return fail(err)
	}
	if os.IsNotExist(statErr) {
		if err := syncDir(filepath.Dir(path)); err != nil {
			return fail(err)
		}
	}
	return f, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
