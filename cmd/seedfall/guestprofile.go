package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/seedfall/seedfall/engine"
)

// guestProfileArg is the -guestprofile flag of run and replay: a pprof
// profile of where the guests' time goes, by guest function, over every
// run of the command (engine.GuestProfile).
type guestProfileArg struct {
	path *string
	f    *os.File
	gp   *engine.GuestProfile
}

func guestProfileFlag(fs *flag.FlagSet) *guestProfileArg {
	return &guestProfileArg{path: fs.String("guestprofile", "", "write a pprof profile of the guests' time, by guest function, to this `file` (read it with go tool pprof)")}
}

// open creates the file, so that a path that cannot be written fails
// before the runs do. Without the flag it does nothing.
func (a *guestProfileArg) open() error {
	if *a.path == "" {
		return nil
	}
	f, err := os.Create(*a.path)
	if err != nil {
		return fmt.Errorf("-guestprofile: %v", err)
	}
	a.f, a.gp = f, engine.NewGuestProfile()
	return nil
}

// profile is the profile runs add to, nil without the flag.
func (a *guestProfileArg) profile() *engine.GuestProfile { return a.gp }

// runOptions says how a sweep runs each seed: nil (the default) without
// the flag.
func (a *guestProfileArg) runOptions() func(seed uint64) (engine.RunOptions, error) {
	if a.gp == nil {
		return nil
	}
	return func(seed uint64) (engine.RunOptions, error) {
		return engine.RunOptions{Seed: seed, GuestProfile: a.gp}, nil
	}
}

// write writes the profile and says where it is, on stderr.
func (a *guestProfileArg) write(stderr io.Writer) {
	if a.f == nil {
		return
	}
	_, err := a.gp.WriteTo(a.f)
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "seedfall: -guestprofile: writing %s: %v\n", *a.path, err)
		return
	}
	fmt.Fprintf(stderr, "guest profile of %s written to %s (go tool pprof -top %s)\n", plural(a.gp.Runs(), "run"), *a.path, *a.path)
}
