// Command server keeps account balances over HTTP: POST /deposit?account=A&amount=N
// adds N to A and answers the new balance; GET /balance?account=A reads it.
//
// A deposit is not idempotent. A client that times out does not know
// whether its deposit was applied, and when it sends it again, the server
// without -dedup applies it twice. With -dedup the client's request id
// (the "id" parameter) is remembered with its answer, and a retry with the
// same id gets that answer again without depositing twice.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"sync"
)

func main() {
	listen := flag.String("listen", ":8080", "address to serve on")
	dedup := flag.Bool("dedup", false, "remember request ids and apply each request once")
	flag.Parse()
	log.SetFlags(0)
	var (
		mu       sync.Mutex
		balances = map[string]int64{}
		answers  = map[string]string{} // request id -> the answer it got
	)
	http.HandleFunc("/deposit", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		amount, err := strconv.ParseInt(q.Get("amount"), 10, 64)
		if r.Method != http.MethodPost || err != nil {
			http.Error(w, "POST /deposit?account=A&amount=N&id=ID", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		id := q.Get("id")
		if *dedup && id != "" {
			if a, ok := answers[id]; ok {
				fmt.Fprint(w, a)
				return
			}
		}
		balances[q.Get("account")] += amount
		a := strconv.FormatInt(balances[q.Get("account")], 10)
		if *dedup && id != "" {
			answers[id] = a
		}
		fmt.Fprint(w, a)
	})
	http.HandleFunc("/balance", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprint(w, balances[r.URL.Query().Get("account")])
	})
	log.Printf("server: serving on %s, dedup=%v", *listen, *dedup)
	if err := http.ListenAndServe(*listen, nil); err != nil {
		log.Print(err)
		os.Exit(1)
	}
}
