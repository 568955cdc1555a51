//go:build wasip1

package sim

import (
	"math"
	"unsafe"
)

// The host side lives in seedfall's "seedfall" host module. Calls are guarded
// by Enabled so that a wasip1 binary run outside seedfall never reaches them.

//go:wasmimport seedfall setup_complete
func setupComplete()

//go:wasmimport seedfall quiet_for
func quietFor(ns int64)

//go:wasmimport seedfall buggify
func hostBuggify(site unsafe.Pointer, siteLen uint32, probBits uint64) uint32

func buggifyHost(site string, p float64) bool {
	return hostBuggify(unsafe.Pointer(unsafe.StringData(site)), uint32(len(site)), math.Float64bits(p)) != 0
}
