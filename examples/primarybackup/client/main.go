// Command client checks the primary/backup store: it writes k1=v1 ... kN=vN
// 20ms apart, each to whichever replica says it is primary, retrying a
// write a few times before giving up on it (its outcome is then unknown and
// not checked). Then it waits for the network to settle and reads every
// acknowledged key back from the primary. A missing or wrong value is an
// acknowledged write the store lost: the client prints it and exits 1.
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

var (
	replicas []string
	client   = &http.Client{Timeout: 300 * time.Millisecond}
	guess    int // the replica we think is primary
)

func main() {
	list := flag.String("replicas", "a:8080,b:8080", "the replicas' addresses")
	n := flag.Int("n", 60, "keys to write")
	settle := flag.Duration("settle", 2*time.Second, "time to wait before reading back")
	flag.Parse()
	replicas = strings.Split(*list, ",")
	time.Sleep(100 * time.Millisecond) // let the replicas start
	var acked []int
	unknown := 0
	for i := 1; i <= *n; i++ {
		if put(fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)) {
			acked = append(acked, i)
		} else {
			unknown++
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("client: %d writes acknowledged, %d unknown\n", len(acked), unknown)
	time.Sleep(*settle)
	lost := 0
	for _, i := range acked {
		k, want := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		got, status := get(k)
		if status != http.StatusOK || got != want {
			fmt.Printf("client: lost acknowledged write %s=%s: GET answered %d %q\n", k, want, status, got)
			lost++
		}
	}
	if lost > 0 {
		fmt.Printf("client: FAIL: %d of %d acknowledged writes lost\n", lost, len(acked))
		os.Exit(1)
	}
	fmt.Printf("client: all %d acknowledged writes read back\n", len(acked))
}

// do sends one request to the primary, trying the replicas in turn until one
// answers as primary or attempts run out.
func do(method, key, body string, attempts int) (string, int) {
	for a := 0; a < attempts; a++ {
		if a > 0 {
			time.Sleep(30 * time.Millisecond)
		}
		req, _ := http.NewRequest(method, "http://"+replicas[guess]+"/kv/"+key, strings.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			guess = (guess + 1) % len(replicas)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusConflict, http.StatusServiceUnavailable:
			guess = (guess + 1) % len(replicas)
			continue
		}
		return string(b), resp.StatusCode
	}
	return "", 0
}

func put(key, val string) bool {
	_, status := do(http.MethodPut, key, val, 6)
	return status == http.StatusOK
}

func get(key string) (string, int) { return do(http.MethodGet, key, "", 100) }
