package guest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
)

// buildHint is what to add to the output of a wasip1 build that failed:
// the compat_overlay shim that would fix it, else whether the package
// builds natively, which means the error is one of wasip1's and not a
// mistake in the code (undefined: syscall.Uname).
func (b *Builder) buildHint(ctx context.Context, p *buildPlan, req Request, env []string, output []byte) string {
	if bytes.Contains(output, []byte("no space left on device")) {
		return "\nthe disk is full: free space, or point SEEDFALL_CACHE (and GOCACHE) at a disk with room"
	}
	if h := b.compatHint(ctx, p, req, env, output); h != "" {
		return h
	}
	return b.nativeHint(ctx, p.pkg, env)
}

// nativeHint builds the package in dir for the host, output discarded,
// in the environment of the failed build (its workspace included); when
// that succeeds it says the package is fine except under wasip1.
func (b *Builder) nativeHint(ctx context.Context, dir string, env []string) string {
	if ctx.Err() != nil {
		return ""
	}
	cmd := exec.CommandContext(ctx, b.goCmd(), "build", "-o", os.DevNull, ".")
	cmd.Dir = dir
	// The last of a variable wins: the host's target over wasip1's.
	cmd.Env = append(slices.Clip(env), "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	if err := cmd.Run(); err != nil {
		return ""
	}
	return fmt.Sprintf("\nthis package builds for %s/%s but not for GOOS=wasip1: some of what it uses does not exist there (see docs/compat.md; \"compat_overlay\": true adds mmap and flock)",
		runtime.GOOS, runtime.GOARCH)
}
