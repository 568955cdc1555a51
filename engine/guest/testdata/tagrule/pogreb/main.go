// pogreb v0.10.2 calls syscall.Syscall(syscall.SYS_MADVISE, ...): it
// builds for wasip1 with compat_overlay's raw system calls.
package main

import (
	"fmt"

	"github.com/akrylysov/pogreb"
)

func main() {
	db, err := pogreb.Open("data", nil)
	if err != nil {
		fmt.Println("open:", err)
		return
	}
	fmt.Println(db.Put([]byte("k"), []byte("v")))
	v, err := db.Get([]byte("k"))
	fmt.Printf("got %s %v\n", v, err)
	fmt.Println(db.Close())
}
