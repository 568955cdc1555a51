package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// defaultWorld is the world file a command reads when it is given none.
const defaultWorld = "seedfall.json"

// worldFileFlag is -c: it remembers that it was given, so that a world
// file given as an argument can be checked against it, and the default
// looked for up the tree only when neither was.
type worldFileFlag struct{ a *worldArgs }

func (f worldFileFlag) String() string {
	if f.a == nil || !f.a.given {
		return "" // the default is in the usage: it is looked for
	}
	return *f.a.cfg
}

func (f worldFileFlag) Set(v string) error {
	*f.a.cfg, f.a.given = v, true
	return nil
}

// worldOf returns the world flags of fs, or nil when its command reads no
// world file.
func worldOf(fs *flag.FlagSet) *worldArgs {
	if c := fs.Lookup("c"); c != nil {
		if f, ok := c.Value.(worldFileFlag); ok {
			return f.a
		}
	}
	return nil
}

// parseFlags parses and refuses stray arguments. A command that reads a
// world file takes it as an argument too, before or after the flags
// (seedfall run seedfall.fixed.json -seeds 1-3), and without either looks
// for seedfall.json in the working directory and the directories above.
func parseFlags(fs *flag.FlagSet, args []string) error {
	wa := worldOf(fs)
	positional := ""
	for {
		if err := parseArgs(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		if wa == nil || positional != "" {
			return fmt.Errorf("unexpected argument %q (flags go before it? see -h)", fs.Arg(0))
		}
		// The flag package stops at the first argument that is not a
		// flag: take it as the world file and parse the rest.
		positional, args = fs.Arg(0), fs.Args()[1:]
	}
	if wa == nil {
		return nil
	}
	if positional != "" {
		if wa.given && filepath.Clean(*wa.cfg) != filepath.Clean(positional) {
			return fmt.Errorf("two world files: -c %s and %s; give one", *wa.cfg, positional)
		}
		*wa.cfg, wa.given = positional, true
		return nil
	}
	if !wa.given {
		wa.findDefault(fs.Output())
	}
	return nil
}

// findDefault looks for seedfall.json as the go command looks for go.mod:
// in the working directory, then in each directory above it, up to the
// root of the git repository the directory is in (the first one with a
// .git) or of the file system. A file found above is used by a path
// relative to the working directory, so that the commands seedfall
// prints (replay -c ../seedfall.json) work from here, and it says so on
// stderr. When there is none, load says where it looked.
func (a *worldArgs) findDefault(stderr io.Writer) {
	wd, err := os.Getwd()
	if err != nil {
		return
	}
	if _, err := os.Stat(defaultWorld); err == nil || !errors.Is(err, os.ErrNotExist) {
		return // here (or there and unreadable: load says why)
	}
	for dir := wd; ; {
		if dir != wd {
			if _, err := os.Stat(filepath.Join(dir, defaultWorld)); err == nil {
				rel, err := filepath.Rel(wd, filepath.Join(dir, defaultWorld))
				if err != nil {
					rel = filepath.Join(dir, defaultWorld)
				}
				*a.cfg = rel
				fmt.Fprintf(stderr, "seedfall: using %s\n", rel)
				return
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			a.missing = fmt.Errorf("no %s in %s or a directory above it up to %s, the root of its git repository; name the world file with -c FILE (or as the first argument), or cd to its directory", defaultWorld, wd, dir)
			return
		}
		up := filepath.Dir(dir)
		if up == dir {
			a.missing = fmt.Errorf("no %s in %s or any directory above it; name the world file with -c FILE (or as the first argument), or cd to its directory", defaultWorld, wd)
			return
		}
		dir = up
	}
}
