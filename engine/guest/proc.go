package guest

import (
	"context"
	"fmt"
	"os/exec"
)

// command returns the go command with args, run in dir with env, made so
// that it does not outlive seedfall (see proc_linux.go). A missing go
// command is said plainly.
func (b *Builder) command(ctx context.Context, dir string, env []string, args ...string) (*exec.Cmd, error) {
	goPath, err := exec.LookPath(b.goCmd())
	if err != nil {
		return nil, fmt.Errorf("cannot find the go command %q: seedfall builds nodes with Go; install Go 1.21 or later and put it on PATH", b.goCmd())
	}
	cmd := childCommand(ctx, goPath, args...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd, nil
}
