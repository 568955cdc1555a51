// Command client is the workload of the tidwallwal worlds. It appends
// distinct entries through the server, remembers the index of every entry
// the server acknowledged, and reads each one back at the end. It fails if
// an acknowledged entry is missing or different, or if the server stops
// answering: after a crash it must reopen its log. The server is crashed
// and restarted while this runs, so refused dials and broken connections
// are expected and retried.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

const (
	retryDelay     = 20 * time.Millisecond
	attemptTimeout = 500 * time.Millisecond
)

func main() {
	addr := flag.String("addr", "server:7000", "server address")
	n := flag.Int("entries", 120, "entries to append")
	size := flag.Int("size", 100, "bytes per entry")
	pause := flag.Duration("pause", 25*time.Millisecond, "pause between appends, so that crashes land among them")
	silence := flag.Duration("silence", 5*time.Second, "how long the server may stay silent before the run fails: it restarts within a second after a crash")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")

	cl := &client{addr: *addr, silence: *silence}
	acked := map[uint64]string{}
	var order []uint64
	for i := 1; i <= *n; i++ {
		data := entry(i, *size)
		reply := cl.request("PUT " + data)
		idx, ok := strings.CutPrefix(reply, "OK ")
		if !ok {
			log.Printf("entry %d was not acknowledged: %s", i, reply)
			continue
		}
		index, err := strconv.ParseUint(idx, 10, 64)
		if err != nil {
			log.Fatalf("FAIL: bad reply %q", reply)
		}
		if prev, ok := acked[index]; ok {
			log.Printf("FAIL: entry %d was acknowledged at index %d, where entry %s had been acknowledged: "+
				"the log lost acknowledged entries and reused their indexes", i, index, name(prev))
			os.Exit(1)
		}
		acked[index] = data
		order = append(order, index)
		time.Sleep(*pause)
	}
	if len(acked) == 0 {
		log.Fatalf("FAIL: none of %d appends was acknowledged", *n)
	}
	lost := 0
	for _, index := range order {
		want := acked[index]
		reply := cl.request(fmt.Sprintf("GET %d", index))
		if reply != "VALUE "+want {
			lost++
			if len(reply) > 60 {
				reply = reply[:60] + "..."
			}
			log.Printf("lost acknowledged entry %s at index %d: GET returned %q", name(want), index, reply)
		}
	}
	if lost > 0 {
		log.Printf("FAIL: %d of %d acknowledged entries lost", lost, len(acked))
		os.Exit(1)
	}
	fmt.Printf("ok: %d of %d appends acknowledged, all read back intact\n", len(acked), *n)
}

// entry is the data of the i-th append: its number, padded to size bytes.
func entry(i, size int) string {
	s := fmt.Sprintf("e%d-", i)
	return s + strings.Repeat("x", max(size-len(s), 0))
}

func name(data string) string { s, _, _ := strings.Cut(data, "-"); return s }

// client sends one request line at a time and reconnects whenever the
// connection fails.
type client struct {
	addr    string
	silence time.Duration
	conn    net.Conn
	r       *bufio.Reader
}

// request sends req until a reply arrives. A request without a reply may
// have been applied or not; resending a PUT can append the entry twice,
// which is harmless here since only acknowledged indexes are checked. It
// fails the run when the server has not answered for cl.silence.
func (cl *client) request(req string) string {
	start := time.Now()
	var last error
	for attempts := 1; ; attempts++ {
		reply, err := cl.try(req)
		if err == nil {
			return reply
		}
		cl.close()
		last = err
		if time.Since(start) > cl.silence {
			log.Fatalf("FAIL: the server has not answered %q for %v (%d attempts, last error: %v): it does not come back after a crash; see its log",
				req[:min(len(req), 12)], cl.silence, attempts, last)
		}
		time.Sleep(retryDelay)
	}
}

func (cl *client) try(req string) (string, error) {
	deadline := time.Now().Add(attemptTimeout)
	if cl.conn == nil {
		c, err := net.DialTimeout("tcp", cl.addr, attemptTimeout)
		if err != nil {
			return "", err
		}
		cl.conn, cl.r = c, bufio.NewReader(c)
	}
	if err := cl.conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	if _, err := io.WriteString(cl.conn, req+"\n"); err != nil {
		return "", err
	}
	line, err := cl.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

func (cl *client) close() {
	if cl.conn != nil {
		cl.conn.Close()
		cl.conn, cl.r = nil, nil
	}
}
