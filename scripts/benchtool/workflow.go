package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// PrintWorkflow times the debugging workflow on a copy of examples/kvlog:
// shrinking seed 3 (three crashes), explaining it with cause, and writing
// the HTML report of twenty seeds. Each is a whole command, start-up
// included, with the build cached.
func PrintWorkflow(cache string) {
	dir, err := os.MkdirTemp("", "seedfall-bench-workflow")
	check(err)
	defer os.RemoveAll(dir)
	// The example's module is examples/: copy it whole, so kvlog builds.
	check(os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(*root, "examples"))))
	os.RemoveAll(filepath.Join(dir, "examples/kvlog/.seedfall"))
	cfg := filepath.Join(dir, "examples/kvlog/seedfall.json")
	step := func(args ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(*bin, args...)
		cmd.Env = append(os.Environ(), "SEEDFALL_CACHE="+cache)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
			fmt.Fprintf(os.Stderr, "%v: %v\n%s", cmd.Args, err, out.String())
			os.Exit(1)
		}
		return time.Since(start)
	}
	fmt.Printf("\n%-40s %9s\n", "debugging examples/kvlog seed 3", "wall")
	fmt.Printf("%-40s %9s\n", "run (finds it, saves the schedule)", step("run", "-c", cfg, "-seed", "3").Round(time.Millisecond))
	fmt.Printf("%-40s %9s\n", "shrink (3 crashes to 1)", step("shrink", "-c", cfg, "-seed", "3", "-parallel", "1").Round(time.Millisecond))
	fmt.Printf("%-40s %9s\n", "cause (16 moments x 8 forks, refined)", step("cause", "-c", cfg, "-seed", "3", "-parallel", "1").Round(time.Millisecond))
	fmt.Printf("%-40s %9s\n", "debug -at 5.999ms", step("debug", "-c", cfg, "-seed", "3", "-at", "5.999ms").Round(time.Millisecond))
	fmt.Printf("%-40s %9s\n", "report of seeds 1-20", step("report", "-c", cfg, "-seeds", "1-20", "-o", filepath.Join(dir, "r.html")).Round(time.Millisecond))
}
