//go:build !linux

package guest

import (
	"context"
	"os/exec"
	"time"
)

// childCommand returns a command killed when ctx is done. Only Linux has a
// parent-death signal: elsewhere a go command of a killed seedfall runs to
// its end, and its leftovers are swept by the next run.
func childCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

func runCommand(cmd *exec.Cmd) error { return cmd.Run() }
