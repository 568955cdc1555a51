// trappy traps after a while: it reads memory past the end of the wasm
// linear memory through an unsafe pointer, which wasm answers with an
// "out of bounds memory access" trap, not a Go panic.
package main

import (
	"fmt"
	"time"
	"unsafe"
)

func main() {
	fmt.Println("about to trap")
	time.Sleep(10 * time.Millisecond)
	p := (*uint64)(unsafe.Pointer(uintptr(0xfffffff0)))
	fmt.Println(*p)
}
