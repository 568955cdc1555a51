//go:build wasip1

package sim

import "unsafe"

//go:wasmimport seedfall assert
func hostAssert(kind, cond uint32, msg unsafe.Pointer, msgLen uint32, site unsafe.Pointer, siteLen uint32, details unsafe.Pointer, detailsLen uint32)

func assertHost(kind int, cond bool, message, site, details string) bool {
	c := uint32(0)
	if cond {
		c = 1
	}
	hostAssert(uint32(kind), c,
		unsafe.Pointer(unsafe.StringData(message)), uint32(len(message)),
		unsafe.Pointer(unsafe.StringData(site)), uint32(len(site)),
		unsafe.Pointer(unsafe.StringData(details)), uint32(len(details)))
	return true
}
