package guest

import (
	"context"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// supervisor runs the go command as a job of a shell, in a process group of
// their own. The shell's parent-death signal (SIGTERM, sent by the kernel
// when seedfall dies, even by SIGKILL) makes it kill the whole group: the go
// command and the compilers and linker it started. A parent-death signal on
// the go command alone would leave those running.
const supervisor = `trap 'kill -KILL 0' TERM; "$@" & wait $!`

// childCommand returns a command that dies with seedfall, its children with
// it, and whose whole process group is killed when ctx is done. Without
// /bin/sh the program runs directly, with a parent-death signal of its own.
func childCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if _, err := exec.LookPath("/bin/sh"); err == nil {
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", supervisor, "sh", name}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	} else {
		cmd = exec.CommandContext(ctx, name, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// runCommand runs cmd to its end. A parent-death signal is sent when the
// thread that started the child exits, not the process, and Go may end
// threads; so the child starts from a goroutine locked to its thread until
// the child has exited, and that thread lives as long as the child.
func runCommand(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		done <- cmd.Run()
	}()
	return <-done
}
