//go:build wasip1

package sim

// The host side lives in seedfall's "seedfall" host module. Calls are guarded
// by Enabled so that a wasip1 binary run outside seedfall never reaches them.

//go:wasmimport seedfall setup_complete
func setupComplete()
