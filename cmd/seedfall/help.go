package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/seedfall/seedfall/engine/world"
)

// descriptions say what each command does: the first lines of its -h and
// of seedfall help CMD.
var descriptions = map[string]string{
	"run":     "Run a world under many seeds and report which fail. A failing seed's schedule is saved to .seedfall/seed-N.faults.json next to the world file, and the output says how to replay it.",
	"replay":  "Run one seed again, exactly as before, with the faults saved for it (or those of -faults), and print its verdict.",
	"logs":    "Replay a seed and print the output of its programs, with the virtual time of each line.",
	"inspect": "Replay a seed and show each disk as the run left it, or as it was at -at: its files, how much of each is durable, and the ranges faults damaged.",
	"config":  "Print the world as seedfall reads it: every field after extends, the profile, -set and the preset, defaults included. It builds nothing.",
	"cause":   "Fork a failing run at many moments and report when the failure became inevitable, with what happened just before.",
	"debug":   "Run a seed to the virtual time -at and show the world then: each program's state and incarnation, its connections, the writes a crash would lose, and the faults in force.",
	"explore": "Search for failures with a strategy written in Starlark (one of the stdlib's by name, or a file's strategy function); every failure found is saved as a schedule that seedfall replay -faults reproduces.",
	"faults":  "List a seed's fault schedule, or edit it (-remove, -shift, -add) and write it back, checked against the world; replay the seed afterwards to test the edit.",
	"mcp":     "Serve seedfall's commands as MCP tools over stdin and stdout, for a coding agent, until stdin closes.",
	"pin":     "Keep a failing seed's schedule as a regression: seedfall run replays it before any new seed and says whether it still fails.",
	"repl":    "Open the interactive workbench on a world: run seeds, look at traces, edit faults, from Starlark.",
	"report":  "Run seeds and write an HTML report with a timeline of each failing run's faults and output.",
	"script":  "Run a Starlark script against the workbench builtins; exit status 1 when it calls fail(...).",
	"shrink":  "Remove the faults a failing seed does not need, keeping the failure, and save the smaller schedule.",
	"sim-mod": "Copy the sim module this binary carries into a directory of your module and point go.mod at it, so that code importing sim builds natively (go build, go vet, go test) too.",
	"version": "Print seedfall's version, the commit it was built from, and the Go that built it.",
	"help":    "Print the list of commands, or what one command does and its flags.",
	"init":    "Write a minimal server, client and world file that build and pass (and a go.mod when there is none, and .seedfall/ in .gitignore), to start from: break the server and seedfall finds it. It overwrites nothing.",
}

// commandGroups are seedfall help's sections, in order; every command is
// in one (TestHelpListsEveryCommand).
var commandGroups = []struct {
	title string
	names []string
}{
	{"Find and fix a failure", []string{"run", "replay", "shrink", "debug", "logs", "inspect", "cause", "faults", "history"}},
	{"Search and keep", []string{"explore", "pin", "mutate", "cover", "report", "merge"}},
	{"Workbench and agents", []string{"repl", "script", "mcp"}},
	{"Set up", []string{"init", "config", "doctor", "sim-mod", "version", "help"}},
}

// summaries are the one line seedfall help gives each command.
var summaries = map[string]string{
	"run":     "run a world under many seeds; say which fail and how to replay them",
	"replay":  "run one seed again exactly, with the faults saved for it",
	"shrink":  "remove the faults a failing seed does not need",
	"debug":   "show the world at a moment: programs, connections, writes a crash would lose",
	"logs":    "print a seed's program output, with virtual times",
	"inspect": "show each disk as a run left it, or at a moment",
	"cause":   "find when a failure became inevitable, and what happened just before",
	"faults":  "list a seed's fault schedule, or edit it",
	"history": "check a history of transactions for isolation anomalies, as Jepsen's Elle",
	"explore": "search for failures with a strategy (guided, random_seeds, ... or your own)",
	"pin":     "keep a failing schedule as a regression that run replays first",
	"mutate":  "plant durability bugs and check that the workload notices",
	"cover":   "show the lines of your code the runs reached, and those they never did",
	"report":  "write an HTML report of the failing runs",
	"merge":   "merge the results of shards into one",
	"repl":    "the interactive workbench",
	"script":  "run a Starlark script against the workbench",
	"mcp":     "serve the commands as MCP tools, for a coding agent",
	"init":    "write a minimal server, client and world to start from",
	"config":  "print the world as seedfall reads it",
	"doctor":  "check that this machine can build and run worlds",
	"sim-mod": "put the sim module in your module, so it builds natively too",
	"version": "print seedfall's version and commit",
	"help":    "print this, or what one command does and its flags",
}

func init() {
	register(command{"help", "[command]", helpCmd})
	lookupCommand = findCommand
}

// lookupCommand is findCommand, set by init: the commands' own functions
// reach it through newFlags, and commands lists them.
var lookupCommand func(name string) (command, bool)

// helpCmd prints the overview, or one command's -h.
func helpCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("help", stderr)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprint(stdout, usage())
		return nil
	}
	if len(args) > 1 {
		return fmt.Errorf("help takes one command, not %d (seedfall help %s)", len(args), args[0])
	}
	c, ok := findCommand(args[0])
	if !ok {
		return unknownCommand(args[0])
	}
	// The command prints its description and flags to stdout, as -h does
	// to stderr: asked for, help is the output.
	err := c.run([]string{"-h"}, stdout, stdout)
	if err == flag.ErrHelp {
		return nil
	}
	return err
}

func findCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// unknownCommand names the command meant, when the name is a slip of one.
func unknownCommand(name string) error {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	if s := world.Suggest(name, names); s != "" {
		return fmt.Errorf("unknown command %q (did you mean %q?)", name, s)
	}
	return fmt.Errorf("unknown command %q (commands: %s)", name, strings.Join(names, ", "))
}

// commandUsage is a command's -h: what it does, its synopsis, its flags.
func commandUsage(name string, fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		if d := descriptions[name]; d != "" {
			fmt.Fprintf(w, "%s\n\n", wrap(d, 76))
		}
		if c, ok := lookupCommand(name); ok {
			fmt.Fprintf(w, "%s\n", strings.TrimRight("usage: seedfall "+name+" "+c.synopsis, " "))
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nflags:\n")
			fs.PrintDefaults()
		}
	}
}

// wrap breaks s into lines of at most width characters, between words.
func wrap(s string, width int) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		if i > 0 && line+1+len(word) > width {
			b.WriteByte('\n')
			line = 0
		} else if i > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}
