//go:build !linux

package engine

func peakRSS() int64 { return 0 }

func resetPeakRSS() (int64, bool) { return 0, false }
