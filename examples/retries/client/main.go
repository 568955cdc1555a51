// Command client deposits 1 into its account -n times, one deposit at a
// time, each with its own request id. A deposit that fails or times out
// (200ms) is sent again, with the same id, until it is answered: the client
// believes in exactly-once. At the end it reads the balance, which must be
// exactly the number of deposits; a larger balance means a retry was
// applied twice, and the client prints it and exits 1.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	server := flag.String("server", "server:8080", "the server's address")
	n := flag.Int("n", 100, "deposits to make")
	flag.Parse()
	host, _ := os.Hostname()
	account := "acct-" + host
	c := &http.Client{Timeout: 200 * time.Millisecond}
	time.Sleep(50 * time.Millisecond) // let the server start
	retries := 0
	for i := 1; i <= *n; i++ {
		url := fmt.Sprintf("http://%s/deposit?account=%s&amount=1&id=%s-%d", *server, account, account, i)
		for {
			resp, err := c.Post(url, "text/plain", nil)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			retries++
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var balance string
	for {
		resp, err := c.Get(fmt.Sprintf("http://%s/balance?account=%s", *server, account))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			balance = strings.TrimSpace(string(b))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("client: %d deposits, %d retries, balance %s\n", *n, retries, balance)
	if balance != fmt.Sprint(*n) {
		fmt.Printf("client: FAIL: balance %s after %d deposits: a retried deposit was applied twice\n", balance, *n)
		os.Exit(1)
	}
}
