// Command client asks the symswap server for its current generation every
// -every for -for, through the server's crashes, and exits 1 if the server
// ever reports that "current" leads nowhere.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "server:7000", "server address")
	every := flag.Duration("every", 50*time.Millisecond, "how often to ask")
	total := flag.Duration("for", time.Second, "how long to keep asking")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")

	end := time.Now().Add(*total)
	answers, highest := 0, 0
	for time.Now().Before(end) {
		reply, err := ask(*addr)
		switch {
		case err != nil:
			// The server is down or restarting: expected, try again.
		case strings.HasPrefix(reply, "ERR "):
			log.Printf("FAIL: after %d answers (highest generation %d) the server says: %s", answers, highest, strings.TrimPrefix(reply, "ERR "))
			os.Exit(1)
		default:
			var gen int
			if _, err := fmt.Sscanf(reply, "GEN %d", &gen); err != nil {
				log.Fatalf("FAIL: unexpected reply %q", reply)
			}
			answers++
			highest = max(highest, gen)
		}
		time.Sleep(*every)
	}
	if answers == 0 {
		log.Fatalf("FAIL: the server never answered; is it running at %s?", *addr)
	}
	fmt.Printf("ok: %d answers, highest generation %d, current always led to its generation\n", answers, highest)
}

func ask(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := fmt.Fprintln(c, "GET"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}
