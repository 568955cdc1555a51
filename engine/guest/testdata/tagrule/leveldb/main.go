// A program on goleveldb, whose file storage is in file_storage_unix.go,
// tagged for darwin, freebsd, linux and others but not wasip1: it builds
// for wasip1 only with the tag rule (engine/guest/tagrule.go) and
// compat_overlay's flock.
package main

import (
	"fmt"

	"github.com/syndtr/goleveldb/leveldb"
)

func main() {
	db, err := leveldb.OpenFile("data", nil)
	if err != nil {
		fmt.Println("open:", err)
		return
	}
	defer db.Close()
	if err := db.Put([]byte("k"), []byte("v"), nil); err != nil {
		fmt.Println("put:", err)
		return
	}
	v, err := db.Get([]byte("k"), nil)
	fmt.Printf("got %s %v\n", v, err)
}
