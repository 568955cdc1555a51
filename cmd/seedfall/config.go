package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
)

// configCmd prints the fully resolved world: every field with its value
// after extends, the profile, -set and the preset, defaults included. It
// builds nothing, and reports a field this build does not support after
// printing, so a user can still see what a preset or a parent file sets.
func configCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("config", stderr)
	wa := worldFlags(fs)
	asJSON := fs.Bool("json", false, "print one JSON object: the files read, the profile, the overrides, and the world with absolute paths")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	w, err := wa.load()
	if err != nil {
		return err
	}
	if *asJSON {
		resolved, err := w.Resolved(true)
		if err != nil {
			return err
		}
		sets := w.Sets
		if sets == nil {
			sets = []string{}
		}
		b, err := json.Marshal(struct {
			File    string          `json:"file"`
			Files   []string        `json:"files"`
			Profile string          `json:"profile,omitempty"`
			Sets    []string        `json:"sets"`
			World   json.RawMessage `json:"world"`
		}{w.File, w.Files, w.Profile, sets, resolved})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		resolved, err := w.Resolved(false)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", resolved)
	}
	if err := w.Unsupported(engine.Implemented); err != nil {
		fmt.Fprintf(stderr, "note: this build would refuse the world: %v\n", err)
	}
	return nil
}
