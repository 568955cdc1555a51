package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(tidyM{m}, map[string]func(){
		"seedfall": func() { main() },
	})
}

// tidyM removes what the tests built outside their own temporary
// directories (docBinary's seedfall) once they have run.
type tidyM struct{ m *testing.M }

func (t tidyM) Run() int {
	code := t.m.Run()
	if docBinaryDir != "" {
		os.RemoveAll(docBinaryDir)
	}
	return code
}

// sharedCache keeps built guests across scripts and across the test
// packages: it is the cache seedfall itself uses ($SEEDFALL_CACHE, else the
// user cache directory), which the engine's tests fill with the same
// examples, so a cold `go test ./...` builds each guest once.
var sharedCache = func() string {
	if dir := os.Getenv("SEEDFALL_CACHE"); dir != "" {
		return dir
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "seedfall")
	}
	return filepath.Join(os.TempDir(), "seedfall-testscript-cache")
}()

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT", "GOPROXY", "GOFLAGS"} {
				v := os.Getenv(k)
				if v == "" {
					v = goEnv(k)
				}
				env.Setenv(k, v)
			}
			env.Setenv("SEEDFALL_CACHE", sharedCache)
			// Scripts copy bundled examples into $WORK, never run them in place.
			examples, err := filepath.Abs("../../examples")
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", examples)
			// The directory of the seedfall command testscript made, first
			// on PATH: a script can leave the rest of PATH out.
			env.Setenv("SEEDFALL_BINDIR", filepath.SplitList(env.Getenv("PATH"))[0])
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// flipbyte glob: damages each file that matches glob, as a
			// bad disk would: one bit of its middle byte.
			"flipbyte": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 || neg {
					ts.Fatalf("usage: flipbyte glob")
				}
				files, _ := filepath.Glob(ts.MkAbs(args[0]))
				if len(files) == 0 {
					ts.Fatalf("no file matches %s", args[0])
				}
				for _, f := range files {
					b, err := os.ReadFile(f)
					ts.Check(err)
					b[len(b)/2] ^= 0x10
					ts.Check(os.WriteFile(f, b, 0o644))
				}
			},
			// sameexcept regexp a b: the two files have the same lines
			// but for those that match regexp.
			// replace file old new: the one edit a user makes to a file,
			// as sed would (old must be in it, once).
			"replace": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 || neg {
					ts.Fatalf("usage: replace file old new")
				}
				b := []byte(ts.ReadFile(args[0]))
				if n := strings.Count(string(b), args[1]); n != 1 {
					ts.Fatalf("%s holds %q %d times, want once", args[0], args[1], n)
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Replace(string(b), args[1], args[2], 1)), 0o644))
			},
			"sameexcept": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 3 || neg {
					ts.Fatalf("usage: sameexcept regexp file1 file2")
				}
				re, err := regexp.Compile(args[0])
				ts.Check(err)
				var kept [2][]string
				for i, f := range args[1:] {
					for _, l := range strings.Split(ts.ReadFile(f), "\n") {
						if !re.MatchString(l) {
							kept[i] = append(kept[i], l)
						}
					}
				}
				if a, b := strings.Join(kept[0], "\n"), strings.Join(kept[1], "\n"); a != b {
					ts.Fatalf("%s and %s differ outside lines that match %s:\n%s\n---\n%s", args[1], args[2], args[0], a, b)
				}
			},
			// samedigest a b: the two files name the same trace digest.
			"samedigest": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: samedigest file1 file2")
				}
				a, b := digestOf(ts, args[0]), digestOf(ts, args[1])
				if (a == b) == neg {
					ts.Fatalf("digests %s and %s (neg=%v)", a, b, neg)
				}
			},
		},
	})
}

var digestRe = regexp.MustCompile(`(?:"digest":"|digest )([0-9a-f]{64})`)

func digestOf(ts *testscript.TestScript, file string) string {
	m := digestRe.FindStringSubmatch(ts.ReadFile(file))
	if m == nil {
		ts.Fatalf("%s names no digest", file)
	}
	return m[1]
}

// goEnv reads `go env` once: scripts set up in parallel.
var goEnvOnce = sync.OnceValue(func() map[string]string {
	out, err := execOutput("go", "env", "-json")
	if err != nil {
		panic(fmt.Sprintf("go env: %v", err))
	}
	m := map[string]string{}
	json.Unmarshal(out, &m)
	return m
})

func goEnv(k string) string { return goEnvOnce()[k] }

// seedfall help lists every command once, with its line.
func TestHelpListsEveryCommand(t *testing.T) {
	listed := map[string]int{}
	for _, g := range commandGroups {
		for _, name := range g.names {
			listed[name]++
		}
	}
	for _, c := range commands {
		if listed[c.name] != 1 {
			t.Errorf("seedfall help lists %q %d times, want once", c.name, listed[c.name])
		}
		if summaries[c.name] == "" {
			t.Errorf("%q has no line in seedfall help", c.name)
		}
		delete(listed, c.name)
	}
	for name := range listed {
		t.Errorf("seedfall help lists %q, which is no command", name)
	}
}
