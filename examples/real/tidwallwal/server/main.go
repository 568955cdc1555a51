// Command server is a small append-only log service over TCP that keeps its
// entries in a github.com/tidwall/wal log, used as the library's README
// shows: wal.Open, Write at LastIndex()+1, Read, with NoSync false (the
// library fsyncs the segment after every write). Small segments make the
// log start a new segment file every few dozen entries.
//
// Protocol, one line each way:
//
//	PUT <data>   ->  OK <index>
//	GET <index>  ->  VALUE <data> | NOTFOUND | ERR <message>
//
// An entry is acknowledged only once wal.Write has returned, that is after
// the library's fsync. Two workarounds for the library's crash bugs are
// flags, both off by default:
//
//   - -sync-dir=open fsyncs the log's directory and its parents once, after
//     wal.Open, which may have created them and the first segment file.
//     -sync-dir=write also fsyncs the log's directory after each write, so
//     that a segment file the library started for it stays in the
//     directory after a crash. The library never fsyncs a directory.
//   - -repair-torn-tail: when wal.Open reports "log corrupt", shortens the
//     last segment file from its end until wal.Open accepts it. A crash in
//     the middle of an append leaves a partial entry at the end of the last
//     segment, the library refuses to open such a log, and offers no call
//     to repair it. Only bytes of a write that was never acknowledged are
//     cut: an acknowledged entry was fsynced whole.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/wal"
)

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	dir := flag.String("dir", "data/wal", "directory of the log")
	segSize := flag.Int("segment-size", 4096, "target size of a segment file (wal.Options.SegmentSize)")
	syncDir := flag.String("sync-dir", "never", "workaround: fsync the log directory and its parents after wal.Open (open), and the log directory after each write as well (write)")
	repair := flag.Bool("repair-torn-tail", false, "workaround: cut a torn tail off the last segment when wal.Open reports the log corrupt")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if *syncDir != "never" && *syncDir != "open" && *syncDir != "write" {
		log.Fatalf("-sync-dir is %q; use never, open or write", *syncDir)
	}

	opts := *wal.DefaultOptions // NoSync false: fsync after every write
	opts.SegmentSize = *segSize
	l, err := wal.Open(*dir, &opts)
	if errors.Is(err, wal.ErrCorrupt) && *repair {
		l, err = repairTornTail(*dir, &opts)
	}
	if err != nil {
		log.Fatalf("wal.Open %s: %v", *dir, err)
	}
	if *syncDir != "never" {
		// Open may have created the directory, its parents and the first
		// segment: fsync the log directory and every parent up to ".".
		for d := *dir; ; d = filepath.Dir(d) {
			if err := fsyncDir(d); err != nil {
				log.Fatal(err)
			}
			if d == "." || d == "/" {
				break
			}
		}
	}
	first, _ := l.FirstIndex()
	last, _ := l.LastIndex()
	log.Printf("opened %s: entries %d to %d", *dir, first, last)

	s := &service{log: l, dir: *dir, syncDir: *syncDir == "write"}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go s.serve(c)
	}
}

type service struct {
	mu      sync.Mutex
	log     *wal.Log
	dir     string
	syncDir bool
}

func (s *service) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd, arg, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		var reply string
		switch cmd {
		case "PUT":
			reply = s.put(arg)
		case "GET":
			reply = s.get(arg)
		default:
			reply = "ERR unknown command " + strconv.Quote(cmd)
		}
		if _, err := fmt.Fprintln(c, reply); err != nil {
			return
		}
	}
}

func (s *service) put(data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	last, err := s.log.LastIndex()
	if err != nil {
		return "ERR " + err.Error()
	}
	if err := s.log.Write(last+1, []byte(data)); err != nil {
		// The log may now hold part of the entry: start again from what
		// the disk has.
		log.Fatalf("write %d: %v", last+1, err)
	}
	if s.syncDir {
		if err := fsyncDir(s.dir); err != nil {
			log.Fatal(err)
		}
	}
	return fmt.Sprintf("OK %d", last+1)
}

func (s *service) get(arg string) string {
	i, err := strconv.ParseUint(arg, 10, 64)
	if err != nil {
		return "ERR bad index " + strconv.Quote(arg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := s.log.Read(i)
	switch {
	case errors.Is(err, wal.ErrNotFound):
		return "NOTFOUND"
	case err != nil:
		return "ERR " + err.Error()
	}
	return "VALUE " + string(data)
}

func fsyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// repairTornTail shortens the last segment file one byte at a time until
// wal.Open accepts the log. It knows nothing of the library's format: it
// only relies on segment files being named by 20 digits, as the library's
// directory shows, and on wal.Open to say when the log is whole again.
func repairTornTail(dir string, opts *wal.Options) (*wal.Log, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []string
	for _, e := range ents {
		if _, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && len(e.Name()) == 20 {
			segs = append(segs, e.Name())
		}
	}
	if len(segs) == 0 {
		return nil, wal.ErrCorrupt
	}
	sort.Strings(segs)
	path := filepath.Join(dir, segs[len(segs)-1])
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	for size := fi.Size() - 1; size >= 0; size-- {
		if err := os.Truncate(path, size); err != nil {
			return nil, err
		}
		l, err := wal.Open(dir, opts)
		if errors.Is(err, wal.ErrCorrupt) {
			continue
		}
		if err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			err = f.Sync()
			f.Close()
		}
		if err != nil {
			return nil, err
		}
		log.Printf("cut a torn tail of %d bytes off %s", fi.Size()-size, path)
		return l, nil
	}
	return nil, wal.ErrCorrupt
}
