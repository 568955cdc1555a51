package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
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
		if err := fs.Parse(args); err != nil {
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
	set, err := loadResultSet(dirs)
	if err != nil {
		return err
	}
	base, err := loadBaseline(*ra.baseline, stderr)
	if err != nil {
		return err
	}
	m := set.dirs[0].meta
	o := newSweepOutput(stdout, stderr, *asJSON, set.total, cov, newSweepReportOf(*reportPath, m.World.Name, m.World.Args, m.Seedfall, m.Nodes), m.World, ra)
	o.base, o.findings = base, base.findingSet()
	if *ra.out != "" {
		for _, d := range set.dirs {
			if samePath(*ra.out, d.path) || d.meta.Shard != nil && samePath(*ra.out, filepath.Dir(d.path)) {
				return fmt.Errorf("-out %s would replace the results it merges: write the merged results to another directory", *ra.out)
			}
		}
		meta := &resultsMeta{Seedfall: m.Seedfall, World: m.World, Build: m.Build, Seeds: set.seedsText(), Total: set.total,
			Count: set.total, Nodes: m.Nodes}
		for _, d := range set.dirs {
			meta.Pinned = meta.Pinned || d.meta.Pinned
		}
		if o.out, err = createResults(*ra.out, meta); err != nil {
			return err
		}
		set.files = true
	}
	// The pinned regressions first, as run replays them (shard 1 has them).
	pinned, pinnedFailing := 0, 0
	for _, d := range set.dirs {
		for _, rec := range d.pinned {
			var jr jsonResult
			if err := json.Unmarshal(rec.Result, &jr); err != nil {
				return fmt.Errorf("%s: %v", filepath.Join(d.path, resultsPinnedFile), err)
			}
			res := &engine.Result{Seed: jr.Seed, Passed: jr.Passed, Class: jr.Class, Reason: jr.Reason, Node: jr.Node, SimNs: jr.SimNs, WallNs: jr.WallNs}
			printPinned(stdout, *asJSON, rec, res)
			o.pinnedRun(rec, res)
			pinned++
			if !jr.Passed {
				pinnedFailing++
			}
		}
	}
	printPinnedTotal(stdout, *asJSON, pinned, pinnedFailing)
	ran := 0
	err = set.each(func(oc *seedOutcome) {
		ran++
		o.seed(oc)
	})
	if err != nil {
		o.out.finish(nil)
		return err
	}
	missing := set.incomplete() // the merged -out is not complete either: ran < set.total
	err = o.finish(time.Duration(o.wallNs), false, ran, set.total)
	if len(missing) == 0 {
		return err
	}
	for _, msg := range missing {
		fmt.Fprintf(stderr, "seedfall merge: %s\n", msg)
	}
	if *partial {
		return err
	}
	return fmt.Errorf("merged %d of %s; run what is missing again, or pass -partial to accept what there is", ran, plural(set.total, "seed"))
}

// resultSet is the results directories to merge, in groups: the shards of
// one seed list, or one directory that holds a whole list.
type resultSet struct {
	dirs   []*resultsDir // every directory, group after group, shards in order
	groups []*resultGroup
	total  int  // seeds the groups' lists name
	files  bool // each hands over the failing seeds' schedules and history pages, for a merged -out
}

// resultGroup is one seed list's results: its N shards, or one directory.
type resultGroup struct {
	list   engine.Seeds
	n      int           // shards; 0 for a whole list in one directory
	shards []*resultsDir // [K-1], nil when missing; one, for a whole list
	read   []int         // seeds read of each, by each
}

var shardDirRe = regexp.MustCompile(`^shard-(\d+)-of-(\d+)$`)

// loadResultSet finds the results directories of paths (each one, or a
// parent of shard-K-of-N directories), checks that they ran one world and
// one build, and groups them.
func loadResultSet(paths []string) (*resultSet, error) {
	var dirs []*resultsDir
	for _, path := range paths {
		d, err := readResultsDir(path)
		if err == nil {
			dirs = append(dirs, d)
			continue
		}
		if !errors.Is(err, errNotResults) {
			return nil, err
		}
		if st, err := os.Stat(path); err != nil {
			return nil, err
		} else if !st.IsDir() {
			return nil, fmt.Errorf("%s is not a directory: give a results directory of seedfall run -out, or a parent of its shard-K-of-N directories", path)
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		var found []*resultsDir
		for _, e := range entries {
			if !e.IsDir() || !shardDirRe.MatchString(e.Name()) {
				continue
			}
			d, err := readResultsDir(filepath.Join(path, e.Name()))
			if errors.Is(err, errNotResults) {
				continue // a task that never started: its shard is missing
			} else if err != nil {
				return nil, err
			}
			found = append(found, d)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s is not a results directory: it has no %s and no shard-K-of-N directory that has one (seedfall run -out writes them)", path, resultsMetaFile)
		}
		dirs = append(dirs, found...)
	}
	for _, d := range dirs[1:] {
		if err := sameRun(dirs[0], d); err != nil {
			return nil, err
		}
	}
	set := &resultSet{}
	for _, d := range dirs {
		n := 0
		if d.meta.Shard != nil {
			n = d.meta.Shard.Count
		}
		list, err := engine.ParseSeeds(d.meta.Seeds)
		if err != nil || list.Len() != d.meta.Total || list.String() != d.meta.Seeds {
			return nil, fmt.Errorf("%s: seeds %q and total %d do not agree: the directory is damaged", filepath.Join(d.path, resultsMetaFile), d.meta.Seeds, d.meta.Total)
		}
		var g *resultGroup
		for _, h := range set.groups {
			if h.list.String() == d.meta.Seeds && h.n == n && n > 0 {
				g = h
			}
		}
		if g == nil {
			g = &resultGroup{list: list, n: n, shards: make([]*resultsDir, max(n, 1)), read: make([]int, max(n, 1))}
			set.groups = append(set.groups, g)
			set.total += list.Len()
		}
		k := 0
		if n > 0 {
			k = d.meta.Shard.Index - 1
			if k < 0 || k >= n {
				return nil, fmt.Errorf("%s: shard %d of %d: the directory is damaged", filepath.Join(d.path, resultsMetaFile), k+1, n)
			}
			if want := (shard{k: k + 1, n: n}).count(list.Len()); d.meta.Count != want {
				return nil, fmt.Errorf("%s: shard %d of %d of %s holds %d seeds, not %d: the directory is damaged", filepath.Join(d.path, resultsMetaFile), k+1, n, plural(list.Len(), "seed"), want, d.meta.Count)
			}
		}
		if old := g.shards[k]; old != nil {
			return nil, fmt.Errorf("%s and %s are the same results twice (%s of -seeds %s): merge one of them", displayPath(old.path), displayPath(d.path), strings.TrimSuffix(d.name(), " ("+displayPath(d.path)+")"), d.meta.Seeds)
		}
		g.shards[k] = d
	}
	// A seed in two groups would count twice.
	for i, g := range set.groups {
		for _, h := range set.groups[:i] {
			if a, b, ok := overlap(h.list, g.list); ok {
				what := fmt.Sprintf("seeds %d-%d", a, b)
				if a == b {
					what = fmt.Sprintf("seed %d", a)
				}
				return nil, fmt.Errorf("%s are in both %s and %s (%s): merge the results of each seed once", what, h.describe(), g.describe(), splitNote(h, g))
			}
		}
	}
	for _, g := range set.groups {
		for _, d := range g.shards {
			if d != nil {
				set.dirs = append(set.dirs, d)
			}
		}
	}
	return set, nil
}

// describe names a group by a directory of it.
func (g *resultGroup) describe() string {
	for _, d := range g.shards {
		if d != nil {
			if g.n > 0 {
				return displayPath(filepath.Dir(d.path))
			}
			return displayPath(d.path)
		}
	}
	return "?"
}

// splitNote says how two groups that share seeds split them.
func splitNote(a, b *resultGroup) string {
	split := func(g *resultGroup) string {
		if g.n == 0 {
			return "-seeds " + g.list.String() + " whole"
		}
		return fmt.Sprintf("-seeds %s in %d shards", g.list, g.n)
	}
	return split(a) + ", and " + split(b)
}

// overlap finds seeds that both lists name: the first span of them.
func overlap(a, b engine.Seeds) (lo, hi uint64, ok bool) {
	sa, sb := seedSpans(a), seedSpans(b)
	for _, x := range sa {
		for _, y := range sb {
			if x[0] <= y[1] && y[0] <= x[1] {
				return max(x[0], y[0]), min(x[1], y[1]), true
			}
		}
	}
	return 0, 0, false
}

// seedSpans are a list's spans, from its text.
func seedSpans(s engine.Seeds) [][2]uint64 {
	var out [][2]uint64
	for part := range strings.SplitSeq(s.String(), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, _ := strconv.ParseUint(lo, 10, 64)
		b := a
		if isRange {
			b, _ = strconv.ParseUint(hi, 10, 64)
		}
		out = append(out, [2]uint64{a, b})
	}
	return out
}

// seedsText is the merged seed list, as -seeds takes it.
func (set *resultSet) seedsText() string {
	var parts []string
	for _, g := range set.groups {
		parts = append(parts, g.list.String())
	}
	return strings.Join(parts, ",")
}

// each hands over every seed the directories hold, in the order of each
// group's list (seed i of a split list from shard i mod N + 1), group
// after group.
func (set *resultSet) each(fn func(oc *seedOutcome)) error {
	for _, g := range set.groups {
		if err := g.each(fn, set.files); err != nil {
			return err
		}
	}
	return nil
}

func (g *resultGroup) each(fn func(oc *seedOutcome), files bool) error {
	readers := make([]*seedReader, len(g.shards))
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.close()
			}
		}
	}()
	live := 0
	for k, d := range g.shards {
		if d == nil {
			continue
		}
		r, err := d.seeds(files)
		if err != nil {
			return err
		}
		readers[k] = r
		live++
	}
	i := 0
	for seed := range g.list.All() {
		if live == 0 {
			break
		}
		k := 0
		if g.n > 0 {
			k = i % g.n
		}
		i++
		r := readers[k]
		if r == nil {
			continue
		}
		oc, err := r.next()
		if err != nil {
			return err
		}
		if oc == nil { // the end of what this shard wrote
			g.read[k] = r.n
			r.close()
			readers[k] = nil
			live--
			continue
		}
		if oc.res.Seed != seed {
			return fmt.Errorf("%s holds seed %d where seed %d belongs: the directory is damaged", r.results.at(), oc.res.Seed, seed)
		}
		fn(oc)
	}
	for k, r := range readers {
		if r == nil {
			continue
		}
		g.read[k] = r.n
		if oc, err := r.next(); err != nil {
			return err
		} else if oc != nil {
			return fmt.Errorf("%s: seed %d is past the seeds %s is to hold: the directory is damaged", r.results.at(), oc.res.Seed, g.shards[k].name())
		}
	}
	return nil
}

// incomplete says, after each, which shards are missing or did not finish.
func (set *resultSet) incomplete() []string {
	var out []string
	for _, g := range set.groups {
		for k, d := range g.shards {
			if d == nil {
				want := (shard{k: k + 1, n: g.n}).count(g.list.Len())
				out = append(out, fmt.Sprintf("shard %d of %d of -seeds %s is missing: no shard-%d-of-%d directory in %s (%s)", k+1, g.n, g.list, k+1, g.n, g.describe(), plural(want, "seed")))
				continue
			}
			if g.read[k] < d.meta.Count || d.complete == nil {
				what := "is incomplete"
				if d.complete != nil {
					what = "is damaged: it says it finished, but it holds fewer seeds"
				}
				out = append(out, fmt.Sprintf("%s %s: %d of %s", d.name(), what, g.read[k], plural(d.meta.Count, "seed")))
			}
		}
	}
	return out
}

// sameRun says how b differs from a in what ran: the world, the build or
// seedfall's version, if it does.
func sameRun(a, b *resultsDir) error {
	both := fmt.Sprintf("%s and %s", a.name(), b.name())
	if a.meta.World.Hash != b.meta.World.Hash {
		diff := worldDiff(a.meta.World.Resolved, b.meta.World.Resolved)
		return fmt.Errorf("cannot merge %s: they ran different worlds (%s and %s)%s; merge only results of one world file, profile and -set",
			both, a.meta.World.Name, b.meta.World.Name, diff)
	}
	builds := func(m resultsMeta) map[string]string {
		out := map[string]string{}
		for _, p := range m.Build {
			out[p.Program] = p.Hash
		}
		return out
	}
	ba, bb := builds(a.meta), builds(b.meta)
	for _, p := range a.meta.Build {
		h, ok := bb[p.Program]
		switch {
		case !ok:
			return fmt.Errorf("cannot merge %s: they ran different builds: program %s is in the first only; run every shard from one build", both, p.Program)
		case h != p.Hash:
			return fmt.Errorf("cannot merge %s: they ran different builds: program %s is %s in the first and %s in the second (its code, or the Go that built it, changed between the runs); run every shard from one build",
				both, p.Program, shortHash(p.Hash), shortHash(h))
		}
	}
	for _, p := range b.meta.Build {
		if _, ok := ba[p.Program]; !ok {
			return fmt.Errorf("cannot merge %s: they ran different builds: program %s is in the second only; run every shard from one build", both, p.Program)
		}
	}
	if a.meta.Seedfall != b.meta.Seedfall {
		return fmt.Errorf("cannot merge %s: they were run by different seedfalls, %s and %s, whose digests need not agree; run every shard with one seedfall", both, a.meta.Seedfall, b.meta.Seedfall)
	}
	return nil
}

// shortHash is the first 12 digits of a hash, as a message names it.
func shortHash(h string) string {
	if len(h) > 12 {
		return "sha256 " + h[:12]
	}
	return "sha256 " + h
}

// worldDiff names the fields in which two resolved worlds differ: ": x.y
// is 1 in the first and 2 in the second", the first three of them.
func worldDiff(a, b json.RawMessage) string {
	fa, fb := map[string]string{}, map[string]string{}
	var order []string
	flattenJSON(a, fa, &order)
	flattenJSON(b, fb, &order)
	var diffs []string
	seen := map[string]bool{}
	for _, path := range order {
		if seen[path] {
			continue
		}
		seen[path] = true
		va, oka := fa[path]
		vb, okb := fb[path]
		switch {
		case !oka:
			diffs = append(diffs, fmt.Sprintf("%s is %s in the second only", path, vb))
		case !okb:
			diffs = append(diffs, fmt.Sprintf("%s is %s in the first only", path, va))
		case va != vb:
			diffs = append(diffs, fmt.Sprintf("%s is %s in the first and %s in the second", path, va, vb))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	more := ""
	if len(diffs) > 3 {
		more = fmt.Sprintf(", and %d more", len(diffs)-3)
		diffs = diffs[:3]
	}
	return ": " + strings.Join(diffs, "; ") + more
}

// flattenJSON adds each leaf of a JSON document to out, by its path
// (faults.crash_per_sec, nodes[0].args), and each path to order.
func flattenJSON(doc json.RawMessage, out map[string]string, order *[]string) {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, x[k])
			}
		case []any:
			b, _ := json.Marshal(x)
			out[path] = string(b) // a list differs as a whole: args, latency
			*order = append(*order, path)
		default:
			b, _ := json.Marshal(x)
			out[path] = string(b)
			*order = append(*order, path)
		}
	}
	walk("", v)
}
