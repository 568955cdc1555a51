package engine

import (
	"os"
	"strconv"
	"strings"
)

// peakRSS is the process's peak resident memory in bytes (VmHWM).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10 // kB
		}
	}
	return 0
}

// resetPeakRSS sets the peak back to the memory in use now (Linux 4.0 and
// later) and returns it; false when it cannot.
func resetPeakRSS() (int64, bool) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	n := peakRSS()
	return n, n > 0
}
