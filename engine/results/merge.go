package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cover"
)

// Set is the results directories to merge, in groups: the shards of
// one seed list, or one directory that holds a whole list.
type Set struct {
	Dirs   []*Dir // every directory, group after group, shards in order
	groups []*group
	Total  int  // seeds the groups' lists name
	Files  bool // Each hands over the failing seeds' schedules and history pages, for a merged -out
}

// group is one seed list's results: its N shards, or one directory.
type group struct {
	list   engine.Seeds
	n      int    // shards; 0 for a whole list in one directory
	shards []*Dir // [K-1], nil when missing; one, for a whole list
	read   []int  // seeds read of each, by each
}

var shardDirRe = regexp.MustCompile(`^shard-(\d+)-of-(\d+)$`)

// LoadSet finds the results directories of paths (each one, or a
// parent of shard-K-of-N directories), checks that they ran one world and
// one build, and groups them.
func LoadSet(paths []string) (*Set, error) {
	var dirs []*Dir
	for _, path := range paths {
		d, err := ReadDir(path)
		if err == nil {
			dirs = append(dirs, d)
			continue
		}
		if !errors.Is(err, ErrNotResults) {
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
		var found []*Dir
		for _, e := range entries {
			if !e.IsDir() || !shardDirRe.MatchString(e.Name()) {
				continue
			}
			d, err := ReadDir(filepath.Join(path, e.Name()))
			if errors.Is(err, ErrNotResults) {
				continue // a task that never started: its shard is missing
			} else if err != nil {
				return nil, err
			}
			found = append(found, d)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s is not a results directory: it has no %s and no shard-K-of-N directory that has one (seedfall run -out writes them)", path, MetaFile)
		}
		dirs = append(dirs, found...)
	}
	for _, d := range dirs[1:] {
		if err := sameRun(dirs[0], d); err != nil {
			return nil, err
		}
	}
	set := &Set{}
	for _, d := range dirs {
		n := 0
		if d.Meta.Shard != nil {
			n = d.Meta.Shard.Count
		}
		list, err := engine.ParseSeeds(d.Meta.Seeds)
		if err != nil || list.Len() != d.Meta.Total || list.String() != d.Meta.Seeds {
			return nil, fmt.Errorf("%s: seeds %q and total %d do not agree: the directory is damaged", filepath.Join(d.Path, MetaFile), d.Meta.Seeds, d.Meta.Total)
		}
		var g *group
		for _, h := range set.groups {
			if h.list.String() == d.Meta.Seeds && h.n == n && n > 0 {
				g = h
			}
		}
		if g == nil {
			g = &group{list: list, n: n, shards: make([]*Dir, max(n, 1)), read: make([]int, max(n, 1))}
			set.groups = append(set.groups, g)
			set.Total += list.Len()
		}
		k := 0
		if n > 0 {
			k = d.Meta.Shard.Index - 1
			if k < 0 || k >= n {
				return nil, fmt.Errorf("%s: shard %d of %d: the directory is damaged", filepath.Join(d.Path, MetaFile), k+1, n)
			}
			if want := (Shard{K: k + 1, N: n}).Count(list.Len()); d.Meta.Count != want {
				return nil, fmt.Errorf("%s: shard %d of %d of %s holds %d seeds, not %d: the directory is damaged", filepath.Join(d.Path, MetaFile), k+1, n, Plural(list.Len(), "seed"), want, d.Meta.Count)
			}
		}
		if old := g.shards[k]; old != nil {
			return nil, fmt.Errorf("%s and %s are the same results twice (%s of -seeds %s): merge one of them", DisplayPath(old.Path), DisplayPath(d.Path), strings.TrimSuffix(d.Name(), " ("+DisplayPath(d.Path)+")"), d.Meta.Seeds)
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
				set.Dirs = append(set.Dirs, d)
			}
		}
	}
	return set, nil
}

// describe names a group by a directory of it.
func (g *group) describe() string {
	for _, d := range g.shards {
		if d != nil {
			if g.n > 0 {
				return DisplayPath(filepath.Dir(d.Path))
			}
			return DisplayPath(d.Path)
		}
	}
	return "?"
}

// splitNote says how two groups that share seeds split them.
func splitNote(a, b *group) string {
	split := func(g *group) string {
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

// SeedsText is the merged seed list, as -seeds takes it.
func (set *Set) SeedsText() string {
	var parts []string
	for _, g := range set.groups {
		parts = append(parts, g.list.String())
	}
	return strings.Join(parts, ",")
}

// Each hands over every seed the directories hold, in the order of each
// group's list (seed i of a split list from shard i mod N + 1), group
// after group.
func (set *Set) Each(fn func(rec *Record)) error {
	for _, g := range set.groups {
		if err := g.each(fn, set.Files); err != nil {
			return err
		}
	}
	return nil
}

func (g *group) each(fn func(rec *Record), files bool) error {
	readers := make([]*SeedReader, len(g.shards))
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.Close()
			}
		}
	}()
	live := 0
	for k, d := range g.shards {
		if d == nil {
			continue
		}
		r, err := d.Seeds(files)
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
		oc, err := r.Next()
		if err != nil {
			return err
		}
		if oc == nil { // the end of what this shard wrote
			g.read[k] = r.n
			r.Close()
			readers[k] = nil
			live--
			continue
		}
		if oc.Line.Seed != seed {
			return fmt.Errorf("%s holds seed %d where seed %d belongs: the directory is damaged", r.results.at(), oc.Line.Seed, seed)
		}
		fn(oc)
	}
	for k, r := range readers {
		if r == nil {
			continue
		}
		g.read[k] = r.n
		if oc, err := r.Next(); err != nil {
			return err
		} else if oc != nil {
			return fmt.Errorf("%s: seed %d is past the seeds %s is to hold: the directory is damaged", r.results.at(), oc.Line.Seed, g.shards[k].Name())
		}
	}
	return nil
}

// Incomplete says, after Each, which shards are missing or did not finish.
func (set *Set) Incomplete() []string {
	var out []string
	for _, g := range set.groups {
		for k, d := range g.shards {
			if d == nil {
				want := (Shard{K: k + 1, N: g.n}).Count(g.list.Len())
				out = append(out, fmt.Sprintf("shard %d of %d of -seeds %s is missing: no shard-%d-of-%d directory in %s (%s)", k+1, g.n, g.list, k+1, g.n, g.describe(), Plural(want, "seed")))
				continue
			}
			if g.read[k] < d.Meta.Count || d.Complete == nil {
				what := "is incomplete"
				if d.Complete != nil {
					what = "is damaged: it says it finished, but it holds fewer seeds"
				}
				out = append(out, fmt.Sprintf("%s %s: %d of %s", d.Name(), what, g.read[k], Plural(d.Meta.Count, "seed")))
			}
		}
	}
	return out
}

// sameRun says how b differs from a in what ran: the world, the build or
// seedfall's version, if it does.
func sameRun(a, b *Dir) error {
	both := fmt.Sprintf("%s and %s", a.Name(), b.Name())
	if a.Meta.World.Hash != b.Meta.World.Hash {
		diff := worldDiff(a.Meta.World.Resolved, b.Meta.World.Resolved)
		return fmt.Errorf("cannot merge %s: they ran different worlds (%s and %s)%s; merge only results of one world file, profile and -set",
			both, a.Meta.World.Name, b.Meta.World.Name, diff)
	}
	builds := func(m Meta) map[string]string {
		out := map[string]string{}
		for _, p := range m.Build {
			out[p.Program] = p.Hash
		}
		return out
	}
	ba, bb := builds(a.Meta), builds(b.Meta)
	for _, p := range a.Meta.Build {
		h, ok := bb[p.Program]
		switch {
		case !ok:
			return fmt.Errorf("cannot merge %s: they ran different builds: program %s is in the first only; run every shard from one build", both, p.Program)
		case h != p.Hash:
			return fmt.Errorf("cannot merge %s: they ran different builds: program %s is %s in the first and %s in the second (its code, or the Go that built it, changed between the runs); run every shard from one build",
				both, p.Program, shortHash(p.Hash), shortHash(h))
		}
	}
	for _, p := range b.Meta.Build {
		if _, ok := ba[p.Program]; !ok {
			return fmt.Errorf("cannot merge %s: they ran different builds: program %s is in the second only; run every shard from one build", both, p.Program)
		}
	}
	if a.Meta.Seedfall != b.Meta.Seedfall {
		return fmt.Errorf("cannot merge %s: they were run by different seedfalls, %s and %s, whose digests need not agree; run every shard with one seedfall", both, a.Meta.Seedfall, b.Meta.Seedfall)
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

// Profile is the merged coverage.out of the directories: the blocks of
// the user's code that any of their seeds reached. It is nil when none
// has one (their world had coverage off).
func (set *Set) Profile() (*cover.Profile, error) {
	var ps []*cover.Profile
	for _, d := range set.Dirs {
		p, err := ReadProfileFile(filepath.Join(d.Path, ProfileFile))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return nil, nil
	}
	return cover.Merge(ps...), nil
}

// ReadProfileFile reads a coverage profile; what is wrong with it is said
// as file:line.
func ReadProfileFile(path string) (*cover.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := cover.ReadProfile(f)
	if pe, ok := err.(*cover.ProfileError); ok {
		pe.Path = DisplayPath(path)
		return nil, pe
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", DisplayPath(path), err)
	}
	return p, nil
}

// ReadProfiles reads and merges the coverage profiles of paths: each a
// coverage.out (or any Go coverprofile), a results directory of run -out
// or a parent of its shard-K-of-N directories, or a directory that holds
// a coverage.out (.seedfall/).
func ReadProfiles(paths []string) (*cover.Profile, error) {
	var ps []*cover.Profile
	for _, path := range paths {
		st, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			p, err := ReadProfileFile(path)
			if err != nil {
				return nil, err
			}
			ps = append(ps, p)
			continue
		}
		if p, err := ReadProfileFile(filepath.Join(path, ProfileFile)); err == nil {
			ps = append(ps, p)
			continue
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		set, err := LoadSet([]string{path})
		if err != nil {
			return nil, fmt.Errorf("%s has no %s: %w", DisplayPath(path), ProfileFile, err)
		}
		p, err := set.Profile()
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, fmt.Errorf("%s has no %s: its seeds ran with coverage off; run them again with -set coverage=true", DisplayPath(path), ProfileFile)
		}
		ps = append(ps, p)
	}
	return cover.Merge(ps...), nil
}
