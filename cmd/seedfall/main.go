// Command seedfall runs Go programs compiled for wasip1 as the nodes of a
// simulated world, injects faults from a seed, and replays any seed exactly.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/seedfall/seedfall/engine/session"
)

// usage is seedfall help: the commands by what they are for, a line each,
// and where a newcomer starts.
func usage() string {
	var b strings.Builder
	b.WriteString("seedfall: deterministic simulation testing for Go services\n\n")
	b.WriteString("Start with run, then replay, shrink and debug a seed that failed:\n")
	b.WriteString("  seedfall run -seeds 1-100 → seedfall replay -seed N → seedfall shrink -seed N → seedfall debug -seed N -at T\n")
	for _, g := range commandGroups {
		fmt.Fprintf(&b, "\n%s:\n", g.title)
		for _, name := range g.names {
			fmt.Fprintf(&b, "  %-9s %s\n", name, summaries[name])
		}
	}
	b.WriteString("\nRun 'seedfall help <command>' (or 'seedfall <command> -h') for what a command does and its flags.\n")
	return b.String()
}

// exit statuses
const (
	exitPass  = 0
	exitFail  = 1
	exitUsage = 2
	// exitInterrupted is a command stopped by Ctrl-C (SIGINT) or SIGTERM,
	// even after it found a failure: 128+2, as a shell reports a program
	// SIGINT killed. See onInterrupt.
	exitInterrupted = 130
)

// errFailed means a seed failed: the output already says how.
var errFailed = session.ErrFailed

type command struct {
	name     string
	synopsis string // the flags, for the usage text
	run      func(args []string, stdout, stderr io.Writer) error
}

// commands are the subcommands. A command in a file of its own adds itself
// with an init function that calls register.
var commands = []command{
	{"run", "-c seedfall.json -seeds 1-500 [-parallel K] [-json] [-report out.html] [-pinned=false] [-shard K/N|auto] [-out DIR] [-junit FILE] [-baseline DIR] [-guestprofile FILE]", runCmd},
	{"replay", "-c seedfall.json -seed N [-faults FILE] [-mutant M] [-json] [-guestprofile FILE]", replayCmd},
	{"logs", "-c seedfall.json -seed N [-node NAME] [-tail N] [-faults FILE] [-mutant M]", logsCmd},
	{"inspect", "-c seedfall.json -seed N [-node NAME] [-at T] [-faults FILE] [-mutant M]", inspectCmd},
	{"config", "-c seedfall.json [-profile P] [-set path=value]... [-json]", configCmd},
}

// register adds a command; call it from an init function.
func register(c command) { commands = append(commands, c) }

func main() {
	// Guests' linear memories live outside the Go heap, but every run
	// allocates a burst of short-lived host objects; collecting less often
	// is worth ~15% of throughput (measured by scripts/bench).
	debug.SetGCPercent(400)
	command := ""
	if len(os.Args) > 1 {
		command = os.Args[1]
	}
	os.Exit(Main(os.Args[1:], terminalStdout(command), os.Stderr))
}

// Main runs the command line and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || len(args) == 1 && args[0] == "help" {
		fmt.Fprint(stdout, usage())
		if len(args) == 0 {
			return exitUsage
		}
		return exitPass
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			switch {
			case err == nil:
				return exitPass
			case errors.Is(err, errFailed):
				return exitFail
			case errors.Is(err, flag.ErrHelp):
				return exitPass
			case errors.Is(err, errInterrupted):
				// Bare, the command has said what finished before.
				if err != errInterrupted {
					fmt.Fprintf(stderr, "seedfall %s: %v\n", c.name, err)
				}
				return exitInterrupted
			default:
				fmt.Fprintf(stderr, "seedfall %s: %v\n", c.name, err)
				return exitUsage
			}
		}
	}
	fmt.Fprintf(stderr, "seedfall: %v\n", unknownCommand(args[0]))
	return exitUsage
}
