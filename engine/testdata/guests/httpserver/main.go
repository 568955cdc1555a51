// httpserver is a plain net/http server keeping a counter.
package main

import (
	"fmt"
	"net/http"
	"sync"
)

func main() {
	var mu sync.Mutex
	count := 0
	http.HandleFunc("/inc", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		count++
		n := count
		mu.Unlock()
		fmt.Fprintf(w, "%d from %s", n, r.RemoteAddr)
	})
	fmt.Println("serving")
	if err := http.ListenAndServe(":8080", nil); err != nil {
		fmt.Println(err)
	}
}
