package guest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
)

// buildHint is what to add to the output of a wasip1 build that failed:
// the compat_overlay shim that would fix it, else whether the package
// builds natively, which means the error is one of wasip1's and not a
// mistake in the code (undefined: syscall.Uname).
func (b *Builder) buildHint(ctx context.Context, p *buildPlan, req Request, env []string, output []byte) string {
	if bytes.Contains(output, []byte("no space left on device")) {
		return "\nthe disk is full: free space, or point SEEDFALL_CACHE (and GOCACHE) at a disk with room"
	}
	if h := b.cgoHint(ctx, p.pkg, env, output); h != "" {
		return h
	}
	if h := b.compatHint(ctx, p, req, env, output); h != "" {
		return h
	}
	return b.nativeHint(ctx, p.pkg, env, req.Compat)
}

// cgoHint names the packages the build needs that are written in cgo (the
// files that do their work import "C"), when the failed build's output
// names one of them: GOOS=wasip1 builds without cgo, so such a package
// loses the files that define what the program calls (go-sqlite3 keeps a
// mock without cgo, and the program fails with undefined:
// sqlite3.Version). Packages of the standard library with cgo files (net,
// os/user) have pure-Go twins and are left out.
func (b *Builder) cgoHint(ctx context.Context, dir string, env []string, output []byte) string {
	if ctx.Err() != nil {
		return ""
	}
	// The host's target with cgo on, where the cgo files count: the last
	// of a variable wins.
	cmd, err := b.command(ctx, dir, append(slices.Clip(env), "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH, "CGO_ENABLED=1"),
		"list", "-e", "-deps", "-f", "{{if and .CgoFiles (not .Standard)}}{{.ImportPath}} {{.Name}}{{end}}", ".")
	if err != nil {
		return ""
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := runCommand(cmd); err != nil {
		return ""
	}
	out := stdout.Bytes()
	var named []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, name, ok := strings.Cut(line, " ")
		if ok && (bytes.Contains(output, []byte(name+".")) || bytes.Contains(output, []byte(path))) {
			named = append(named, path)
		}
	}
	if len(named) == 0 {
		return ""
	}
	return fmt.Sprintf("\n%s uses cgo (its files that define what the program calls import \"C\"), and a program for GOOS=wasip1 is built without cgo, so it cannot call C: use a pure-Go package instead (for SQLite there is none that builds for wasip1 yet: modernc.org/sqlite is pure Go but has no wasip1 libc), or keep the C part out of the programs seedfall runs (docs/compat.md)",
		strings.Join(named, ", "))
}

// nativeHint builds the package in dir for the host, output discarded,
// in the environment of the failed build (its workspace included); when
// that succeeds it says the package is fine except under wasip1, and,
// unless compat_overlay is on already (compat), that it adds mmap and
// flock.
func (b *Builder) nativeHint(ctx context.Context, dir string, env []string, compat bool) string {
	if ctx.Err() != nil {
		return ""
	}
	// The last of a variable wins: the host's target over wasip1's.
	cmd, err := b.command(ctx, dir, append(slices.Clip(env), "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH), "build", "-o", os.DevNull, ".")
	if err != nil || runCommand(cmd) != nil {
		return ""
	}
	more := "; \"compat_overlay\": true adds mmap and flock"
	if compat {
		more = "; compat_overlay is on, and does not cover it"
	}
	return fmt.Sprintf("\nthis package builds for %s/%s but not for GOOS=wasip1: some of what it uses does not exist there (see docs/compat.md%s)",
		runtime.GOOS, runtime.GOARCH, more)
}
