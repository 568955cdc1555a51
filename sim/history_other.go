//go:build !wasip1

package sim

// Native builds record nothing: there is no history to check.

func opInvoke(b []byte) int64 { return 0 }

func opReturn(id int64, b []byte) {}
