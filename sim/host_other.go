//go:build !wasip1

package sim

// Native builds have no simulator to talk to.

func setupComplete() {}
