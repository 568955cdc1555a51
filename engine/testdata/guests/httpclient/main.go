// httpclient makes requests with net/http's default client and keep-alive.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() {
	client := &http.Client{Timeout: 2 * time.Second}
	for i := 0; i < 50; i++ {
		resp, err := client.Get("http://server:8080/inc")
		if err != nil {
			fmt.Println("get:", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.Status, string(b))
		if i >= 5 {
			return
		}
	}
	os.Exit(1)
}
