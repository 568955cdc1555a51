package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/session"
)

func init() {
	register(command{"merge", "DIR... [-json] [-report out.html] [-junit FILE] [-baseline DIR] [-out DIR] [-partial]", mergeCmd})
	descriptions["merge"] = "Merge results directories (run -out DIR, each shard's or a parent of shard-K-of-N dirs) and print what one sweep of their seeds prints: the failures, the summary, the coverage; with -report, -junit and -baseline as run has them. It refuses results of different worlds or builds, and says which seeds are missing."
}

// mergeCmd prints the union of results directories as run prints a sweep:
// exit status 0 when every seed passed, 1 when one failed, 2 when the
// directories could not be merged (different worlds or builds, seeds
// missing or there twice).
func mergeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per seed, as run -json")
	reportPath := fs.String("report", "", "write an HTML report of the merged sweep to this file")
	partial := fs.Bool("partial", false, "merge what there is of shards that are missing or did not finish, with run's exit status (default: exit status 2 after printing it)")
	cov := coverageFlags(fs)
	ra := resultsFlags(fs, "write the merged results to this `dir`, as one run -out of every seed would")
	var dirs []string
	for {
		if err := parseArgs(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		dirs, args = append(dirs, fs.Arg(0)), fs.Args()[1:]
	}
	if len(dirs) == 0 {
		return fmt.Errorf("say which results to merge: seedfall merge DIR..., each a directory of seedfall run -out (or a parent of its shard-K-of-N directories)")
	}
	set, err := results.LoadSet(dirs)
	if err != nil {
		return err
	}
	base, err := results.LoadBaseline(*ra.baseline, stderr)
	if err != nil {
		return err
	}
	m := set.Dirs[0].Meta
	o := session.NewSweepOutput(stdout, stderr, *asJSON, set.Total, *cov, session.NewSweepReport(*reportPath, m.World.Name, m.World.Args, m.Seedfall, m.Nodes), m.World, *ra.junit)
	o.Baseline, o.Findings = base, base.Findings()
	if *ra.out != "" {
		for _, d := range set.Dirs {
			if samePath(*ra.out, d.Path) || d.Meta.Shard != nil && samePath(*ra.out, filepath.Dir(d.Path)) {
				return fmt.Errorf("-out %s would replace the results it merges: write the merged results to another directory", *ra.out)
			}
		}
		meta := &results.Meta{Seedfall: m.Seedfall, World: m.World, Build: m.Build, Seeds: set.SeedsText(), Total: set.Total,
			Count: set.Total, Nodes: m.Nodes}
		for _, d := range set.Dirs {
			meta.Pinned = meta.Pinned || d.Meta.Pinned
		}
		if o.Out, err = results.Create(*ra.out, meta); err != nil {
			return err
		}
		set.Files = true
	}
	// The pinned regressions first, as run replays them (shard 1 has them).
	var pinned session.PinnedTally
	for _, d := range set.Dirs {
		for _, rec := range d.Pinned {
			var r results.Record
			if err := json.Unmarshal(rec.Result, &r.Line); err != nil {
				return fmt.Errorf("%s: %v", filepath.Join(d.Path, results.PinnedFile), err)
			}
			session.WritePinned(stdout, *asJSON, rec, &r.Line)
			o.Pinned(rec, &r)
			pinned.Add(&r.Line)
		}
	}
	session.WritePinnedTotal(stdout, *asJSON, pinned)
	ran := 0
	err = set.Each(func(rec *results.Record) {
		ran++
		o.Add(rec)
	})
	if err != nil {
		o.Out.Finish(nil)
		return err
	}
	// The shards' coverage of the user's code, merged: with -out, the
	// merged directory's coverage.out.
	if o.Code, err = set.Profile(); err != nil {
		o.Out.Finish(nil)
		return err
	}
	missing := set.Incomplete() // the merged -out is not complete either: ran < set.Total
	err = o.End(time.Duration(o.WallNs), false, ran, set.Total)
	if len(missing) == 0 {
		return err
	}
	for _, msg := range missing {
		fmt.Fprintf(stderr, "seedfall merge: %s\n", msg)
	}
	if *partial {
		return err
	}
	return fmt.Errorf("merged %d of %s; run what is missing again, or pass -partial to accept what there is", ran, plural(set.Total, "seed"))
}
