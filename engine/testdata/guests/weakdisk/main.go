// weakdisk reports what survived on its disk, then, on its first start,
// makes two things durable in ways that only seedfall's mutants tell apart
// from a plain fsync: it writes "ds" and fdatasyncs it, and replaces
// "current" (durable, holding v1) by renaming a fsynced "current.tmp"
// (holding v2) over it, without fsyncing the directory afterwards. Then it
// waits to be crashed.
package main

import (
	"fmt"
	"os"
	"sort"
	"time"
)

//go:wasmimport wasi_snapshot_preview1 fd_datasync
func fdDatasync(fd int32) uint32

func main() {
	names, _ := os.ReadDir(".")
	var found []string
	for _, e := range names {
		if e.Type().IsRegular() {
			b, _ := os.ReadFile(e.Name())
			found = append(found, fmt.Sprintf("%s=%q", e.Name(), b))
		}
	}
	sort.Strings(found)
	fmt.Println("found", found)
	if len(found) > 0 {
		time.Sleep(time.Hour)
	}
	write("current", "v1", true)
	syncDir()
	f := create("ds", "d")
	if e := fdDatasync(int32(f.Fd())); e != 0 {
		fmt.Println("fdatasync:", e)
		os.Exit(1)
	}
	f.Close()
	write("current.tmp", "v2", true)
	syncDir()
	if err := os.Rename("current.tmp", "current"); err != nil {
		fmt.Println("rename:", err)
		os.Exit(1)
	}
	fmt.Println("wrote")
	time.Sleep(time.Hour)
}

func create(path, data string) *os.File {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	if _, err := f.WriteString(data); err != nil {
		fmt.Println("write:", err)
		os.Exit(1)
	}
	return f
}

func write(path, data string, sync bool) {
	f := create(path, data)
	if sync {
		if err := f.Sync(); err != nil {
			fmt.Println("fsync:", err)
			os.Exit(1)
		}
	}
	f.Close()
}

func syncDir() {
	d, err := os.Open(".")
	if err != nil {
		fmt.Println("open dir:", err)
		os.Exit(1)
	}
	if err := d.Sync(); err != nil {
		fmt.Println("sync dir:", err)
		os.Exit(1)
	}
	d.Close()
}
