// diskio exercises the disk the way a log does, and reports what each
// operation returned and what it finds on disk. On start it checks "log":
// page p must hold the byte p+1 throughout, so a lost, misdirected, torn
// or rotted page shows. Then it appends -pages pages, fsyncing after each
// (or only at the end with -sync-last), rereads the file and compares,
// and waits for -wait before it exits.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

const page = 4096

func kind(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, syscall.ENOSPC):
		return "ENOSPC"
	case errors.Is(err, syscall.EIO):
		return "EIO"
	}
	return err.Error()
}

func main() {
	pages := flag.Int("pages", 4, "pages to append")
	syncLast := flag.Bool("sync-last", false, "fsync once, after the last page")
	wait := flag.Duration("wait", time.Hour, "how long to wait before exiting")
	reads := flag.Int("reads", 1, "times to reread the file")
	flag.Parse()

	check()
	f, err := os.OpenFile("log", os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	for i := 0; i < *pages; i++ {
		st, _ := f.Stat()
		p := int(st.Size() / page)
		n, err := f.Write(bytes.Repeat([]byte{byte(p + 1)}, page))
		fmt.Printf("write page %d: %d %s\n", p, n, kind(err))
		if !*syncLast || i == *pages-1 {
			start := time.Now()
			err := f.Sync()
			fmt.Printf("sync: %s took %v\n", kind(err), time.Since(start))
		}
	}
	for i := 0; i < *reads; i++ {
		b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<30))
		fmt.Printf("reread %d bytes: %s, %s\n", len(b), kind(err), verify(b))
	}
	time.Sleep(*wait)
}

// check reports the log as a restart finds it.
func check() {
	b, err := os.ReadFile("log")
	if errors.Is(err, os.ErrNotExist) {
		fmt.Println("found no log")
		return
	}
	if err != nil {
		fmt.Println("read log:", kind(err))
		return
	}
	fmt.Printf("found %d bytes: %s\n", len(b), verify(b))
}

// verify says which pages do not hold their own byte.
func verify(b []byte) string {
	var bad []string
	for p := 0; p*page < len(b); p++ {
		pg := b[p*page : min(len(b), (p+1)*page)]
		want := byte(p + 1)
		if bytes.Count(pg, []byte{want}) != len(pg) {
			other, first := 0, byte(0)
			for _, c := range pg {
				if c != want {
					if other == 0 {
						first = c
					}
					other++
				}
			}
			bad = append(bad, fmt.Sprintf("page %d has %d wrong bytes (first %d)", p, other, first))
		}
	}
	if len(bad) == 0 {
		return "intact"
	}
	return fmt.Sprint(bad)
}
