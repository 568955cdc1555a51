//go:build unix

package guest

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f, waiting for it when wait is set.
// The kernel drops it when the process dies, however it dies.
func lockFile(f *os.File, wait bool) bool {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err == nil
		}
	}
}

// fileLocks: lockFile excludes other processes here.
const fileLocks = true
