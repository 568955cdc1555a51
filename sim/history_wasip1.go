//go:build wasip1

package sim

import "unsafe"

//go:wasmimport seedfall op_invoke
func hostOpInvoke(buf unsafe.Pointer, bufLen uint32) int64

//go:wasmimport seedfall op_return
func hostOpReturn(id int64, buf unsafe.Pointer, bufLen uint32)

func opInvoke(b []byte) int64 {
	return hostOpInvoke(unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)))
}

func opReturn(id int64, b []byte) {
	hostOpReturn(id, unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)))
}
