//go:build !wasip1

package sim

// Native builds have no simulator to talk to.

func setupComplete() {}

func buggifyHost(site string, p float64) bool { return false }

func quietFor(ns int64) {}
