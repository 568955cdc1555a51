// Command client is the counter's workload. As a writer (-mode write) it
// makes -n adds of 1, one at a time, each with the next request id, and
// keeps its progress on its own disk, fsynced after every answer. Restarted
// after a crash, it resumes from there and sends the add that was in flight
// again, with the same request id, because it cannot know whether the
// server applied it. At the end the total must equal the adds it made.
//
// As a reader (-mode read) it watches the total: it must never go back (an
// acknowledged add lost) nor pass -n (an add applied twice), and must
// settle at exactly -n.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	mode := flag.String("mode", "write", "write: make the adds; read: watch the total")
	server := flag.String("server", "server:7000", "the server's address")
	n := flag.Int64("n", 100, "adds the writer makes")
	id := flag.String("id", "", "client id for request deduplication (default: the node's name or host name)")
	dir := flag.String("dir", "data", "directory of the writer's progress file")
	timeout := flag.Duration("timeout", 300*time.Millisecond, "how long to wait for an answer before sending again")
	every := flag.Duration("every", 10*time.Millisecond, "pause between requests")
	quiet := flag.Duration("quiet", 2*time.Second, "how long to ask seedfall to hold faults off before the final check")
	flag.Parse()
	log.SetFlags(0)
	c := &conn{addr: *server, timeout: *timeout, every: *every}
	switch *mode {
	case "write":
		if *id == "" {
			*id = sim.Node()
		}
		if *id == "" {
			*id, _ = os.Hostname()
		}
		os.Exit(write(c, *id, *dir, *n, *quiet))
	case "read":
		os.Exit(read(c, *n, *quiet))
	}
	log.Fatalf("client: -mode is %q; want write or read", *mode)
}

// progress is what the writer keeps on its disk: the request id of the add
// to make next, and how many adds it has made.
type progress struct{ next, done int64 }

func write(c *conn, id, dir string, n int64, quiet time.Duration) int {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatalf("writer: %v", err)
	}
	p := load(dir)
	if p.done > 0 {
		log.Printf("writer: resuming at request %d after %d adds; sending it again", p.next, p.done)
	}
	resends := 0
	for p.done < n {
		c.call(fmt.Sprintf("ADD %s %d 1", id, p.next), "OK", &resends)
		p.next++
		p.done++
		save(dir, p)
		time.Sleep(c.every)
	}
	// The check needs a server that is up and reachable.
	sim.QuietFor(quiet)
	total := c.call("GET", "TOTAL", &resends)
	log.Printf("writer: %d adds, %d resends in this run, total %d", p.done, resends, total)
	switch {
	case total > p.done:
		log.Printf("writer: FAIL: total %d after %d adds: an add was applied twice", total, p.done)
		return 1
	case total < p.done:
		log.Printf("writer: FAIL: total %d after %d acknowledged adds: an add was lost", total, p.done)
		return 1
	}
	return 0
}

func read(c *conn, n int64, quiet time.Duration) int {
	var last int64
	retries := 0
	for {
		total := c.call("GET", "TOTAL", &retries)
		// Under seedfall a total that goes back fails the run at once,
		// with the reason in the trace; natively it is logged and the
		// check below fails too.
		sim.Always(total >= last, "the total never goes back", map[string]any{"last": last, "total": total})
		switch {
		case total < last:
			log.Printf("reader: FAIL: the total went back from %d to %d: an acknowledged add was lost", last, total)
			return 1
		case total > n:
			log.Printf("reader: FAIL: total %d, but the writer makes only %d adds: an add was applied twice", total, n)
			return 1
		case total == n:
			// The writer is done; give it time to resend whatever it had
			// in flight, with faults held off, and look once more.
			sim.QuietFor(quiet)
			time.Sleep(quiet / 2)
			if total = c.call("GET", "TOTAL", &retries); total != n {
				log.Printf("reader: FAIL: the total moved from %d to %d after the writer finished", n, total)
				return 1
			}
			log.Printf("reader: total settled at %d", total)
			return 0
		}
		last = total
		time.Sleep(5 * c.every)
	}
}

// conn is one connection to the server, redialed after any error.
type conn struct {
	addr    string
	timeout time.Duration
	every   time.Duration
	c       net.Conn
	in      *bufio.Reader
}

// call sends req until an answer "<want> <number>" comes back, and counts
// the resends. A timeout or an error drops the connection: the request may
// have been applied, so it is sent again as it is.
func (c *conn) call(req, want string, resends *int) int64 {
	for try := 0; ; try++ {
		if try > 0 {
			*resends++
			time.Sleep(c.every)
		}
		if c.c == nil {
			nc, err := net.DialTimeout("tcp", c.addr, c.timeout)
			if err != nil {
				continue
			}
			c.c, c.in = nc, bufio.NewReader(nc)
		}
		c.c.SetDeadline(time.Now().Add(c.timeout))
		line, err := "", error(nil)
		if _, err = fmt.Fprintln(c.c, req); err == nil {
			line, err = c.in.ReadString('\n')
		}
		if err != nil {
			c.c.Close()
			c.c = nil
			continue
		}
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == want {
			if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return v
			}
		}
		log.Fatalf("client: %s: unexpected answer %q", req, strings.TrimSpace(line))
	}
}

const progressFile = "progress"

func load(dir string) progress {
	data, err := os.ReadFile(filepath.Join(dir, progressFile))
	if os.IsNotExist(err) {
		return progress{next: 1}
	}
	var p progress
	if err == nil {
		_, err = fmt.Sscanf(string(data), "next %d done %d\n", &p.next, &p.done)
	}
	if err != nil {
		log.Fatalf("writer: reading my progress: %v", err)
	}
	return p
}

// save replaces the progress file atomically and durably: a temporary
// file, fsynced, renamed over the old one, then the directory fsynced.
func save(dir string, p progress) {
	tmp := filepath.Join(dir, progressFile+".tmp")
	f, err := os.Create(tmp)
	if err == nil {
		_, err = fmt.Fprintf(f, "next %d done %d\n", p.next, p.done)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, progressFile))
	}
	if err == nil {
		var d *os.File
		if d, err = os.Open(dir); err == nil {
			err = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		log.Fatalf("writer: saving my progress: %v", err)
	}
}
