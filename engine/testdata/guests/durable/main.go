// durable reports what survived on its disk from earlier incarnations, then
// writes a synced file, an unsynced file, a synced file in a synced new
// directory and a synced file in an unsynced new directory, and waits to be
// crashed.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

func main() {
	var found []string
	filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			found = append(found, fmt.Sprintf("%s=%q", path, b))
		}
		return nil
	})
	sort.Strings(found)
	fmt.Println("found", found)

	write := func(path, data string, sync bool) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(1)
		}
		f.WriteString(data)
		if sync {
			f.Sync()
		}
		f.Close()
	}
	syncDir := func(path string) {
		d, err := os.Open(path)
		if err != nil {
			fmt.Println("open dir:", err)
			os.Exit(1)
		}
		if err := d.Sync(); err != nil {
			fmt.Println("sync dir:", err)
		}
		d.Close()
	}
	write("synced", "s", true)
	write("unsynced", "u", false)
	os.MkdirAll("a", 0o755)
	write("a/synced", "x", true)
	syncDir("a")
	os.MkdirAll("b", 0o755)
	write("b/synced", "y", true)
	syncDir(".")
	os.Mkdir("c", 0o755) // created after the last sync of "."
	write("c/synced", "z", true)
	syncDir("c")
	fmt.Println("wrote")
	time.Sleep(time.Hour)
}
