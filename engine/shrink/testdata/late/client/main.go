// client first computes for a while (a setup phase: hashing 2 MiB, tens
// of milliseconds of real time and next to none of virtual time), waits a
// second, writes three records, counting the acknowledged ones, then
// checks the server still has at least that many: only a crash after its
// first write can fail it, so shrinking moves a crash no earlier than
// about a second into a run of little more, and every candidate keeps the
// setup in its past.
package main

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

func ask(msg string) (string, error) {
	c, err := net.DialTimeout("tcp", "server:7000", 200*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	fmt.Fprintln(c, msg)
	return bufio.NewReader(c).ReadString('\n')
}

func main() {
	buf := make([]byte, 1<<20)
	for i := range 2 {
		sum := sha256.Sum256(buf)
		buf[i] = sum[0]
	}
	time.Sleep(time.Second)
	acked := 0
	for i := 0; i < 3; i++ {
		if r, err := ask(fmt.Sprint("rec ", i)); err == nil && strings.TrimSpace(r) == "OK" {
			acked++
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	for try := 0; try < 100; try++ {
		r, err := ask("COUNT")
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSpace(r))
		if n < acked {
			fmt.Fprintf(os.Stderr, "lost acknowledged writes: %d acked, %d kept\n", acked, n)
			os.Exit(1)
		}
		fmt.Println("ok", acked, n)
		return
	}
	os.Exit(2)
}
