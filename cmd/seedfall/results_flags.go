package main

import (
	"flag"
)

// resultsArgs are the flags with which run and merge keep a sweep:
// -out, -junit and -baseline.
type resultsArgs struct {
	out, junit, baseline *string
}

func resultsFlags(fs *flag.FlagSet, outUsage string) *resultsArgs {
	return &resultsArgs{
		out:      fs.String("out", "", outUsage),
		junit:    fs.String("junit", "", "write the seeds as JUnit XML to this `file`, one testcase per seed, for CI"),
		baseline: fs.String("baseline", "", "triage the failures against earlier results (a results `dir` of -out, or a parent of shard dirs): each finding new, ongoing, resolved or regressed; the exit status is 1 only for a new or regressed one"),
	}
}

// coverageFlags is -require-coverage (results.Coverage).
func coverageFlags(fs *flag.FlagSet) *bool {
	return fs.Bool("require-coverage", false, "fail the sweep when a Sometimes never held, or a Reachable or Always was never reached")
}
