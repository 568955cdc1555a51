package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/seedfall/seedfall/engine/doctor"
)

func init() {
	descriptions["doctor"] = "Check that this machine can run seedfall: the Go installation against the overlays seedfall patches into it, a build and a run for GOOS=wasip1, the cache, and the browser the report tests use. Each check prints ok, or what is wrong and what to do; the exit status is 1 when one failed."
	register(command{"doctor", "[-json] [-build=false] [-verify]", doctorCmd})
}

// doctorJSON is doctor -json's output.
type doctorJSON struct {
	OK     bool           `json:"ok"`
	Checks []doctor.Check `json:"checks"`
}

func doctorCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("doctor", stderr)
	asJSON := fs.Bool("json", false, "print the checks as one JSON object")
	build := fs.Bool("build", true, "build and run a small program for GOOS=wasip1 (seconds, or a minute when the standard library for wasip1 is not compiled yet)")
	verify := fs.Bool("verify", false, "hash every module in the cache against its sha256 (reads the whole cache)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := onInterrupt(context.Background())
	defer stop()
	checks := doctor.Run(ctx, doctor.Options{Build: *build, Verify: *verify})
	if interrupted(ctx) {
		return errInterrupted
	}
	failed := doctor.Failed(checks)
	if *asJSON {
		b, err := json.Marshal(doctorJSON{OK: !failed, Checks: checks})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		width := 0
		for _, c := range checks {
			width = max(width, len(c.Name))
		}
		for _, c := range checks {
			status := map[string]string{doctor.OK: "ok", doctor.Warn: "warn", doctor.Fail: "FAIL"}[c.Status]
			pad := strings.Repeat(" ", 6+width+2)
			fmt.Fprintf(stdout, "%-4s  %-*s  %s\n", status, width, c.Name, strings.ReplaceAll(c.Detail, "\n", "\n"+pad))
			if c.Fix != "" && c.Status != doctor.OK {
				fmt.Fprintf(stdout, "%sfix: %s\n", pad, c.Fix)
			}
		}
	}
	if failed {
		return errFailed
	}
	return nil
}
