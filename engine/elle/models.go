package elle

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The tables in this file are Elle's (src/elle/consistency_model.clj),
// written out again as data: which anomalies imply which, which models
// imply which, and which anomalies each model forbids. Elle cites the
// papers each relation comes from; the comments here keep the gist.

// dag is a directed acyclic graph of names, with its edges both ways.
type dag struct {
	out, in map[string][]string
}

func newDAG(edges [][2]string) *dag {
	d := &dag{out: map[string][]string{}, in: map[string][]string{}}
	for _, e := range edges {
		if !slices.Contains(d.out[e[0]], e[1]) {
			d.out[e[0]] = append(d.out[e[0]], e[1])
			d.in[e[1]] = append(d.in[e[1]], e[0])
		}
	}
	return d
}

// edgesOf lists a -> b for every b of every a.
func edgesOf(m [][]string) [][2]string {
	var es [][2]string
	for _, row := range m {
		for _, b := range row[1:] {
			es = append(es, [2]string{row[0], b})
		}
	}
	return es
}

// reach is every name reachable from start through next, start included.
func reach(next map[string][]string, start []string) map[string]bool {
	seen := map[string]bool{}
	todo := slices.Clone(start)
	for len(todo) > 0 {
		x := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[x] {
			continue
		}
		seen[x] = true
		todo = append(todo, next[x]...)
	}
	return seen
}

func sortedKeys(m map[string]bool) []string {
	var s []string
	for k, ok := range m {
		if ok {
			s = append(s, k)
		}
	}
	sort.Strings(s)
	return s
}

// impliedAnomalies: a -> b when a history with anomaly a also has b.
var impliedAnomalies = newDAG(edgesOf([][]string{
	{"G0", "G1c", "G0-process"},                  // Adya; G0 is a trivial G0-process
	{"G0-process", "G1c-process", "G0-realtime"}, // processes are single-threaded
	{"G0-realtime", "G1c-realtime"},
	// G1 is the union of G1a, G1b and G1c.
	{"G1a", "G1"},
	{"G1b", "G1"},
	{"G1c", "G1", "G1c-process"},
	{"G1c-process", "G1c-realtime", "G1-process"},
	{"G1c-realtime", "G1-realtime"},
	{"G1", "G1-process"},
	{"G1-process", "G1-realtime"},
	// G-single-item is G-single without predicates, and a G-nonadjacent-item.
	{"G-single-item", "G-single", "G-single-item-process", "G-nonadjacent-item"},
	{"G-single-item-process", "G-single-process", "G-single-item-realtime", "G-nonadjacent-item-process"},
	{"G-single-item-realtime", "G-single-realtime", "G-nonadjacent-item-realtime"},
	// G-single is a special case of G-nonadjacent, and GSIb (Adya).
	{"G-single", "G-nonadjacent", "GSIb", "G-single-process"},
	{"G-single-process", "G-nonadjacent-process", "G-single-realtime"},
	{"G-single-realtime", "G-nonadjacent-realtime"},
	// G-nonadjacent-item is G-nonadjacent over items: also G2-item.
	{"G-nonadjacent-item", "G-nonadjacent", "G2-item", "G-nonadjacent-item-process"},
	{"G-nonadjacent-item-process", "G-nonadjacent-process", "G2-item-process", "G-nonadjacent-item-realtime"},
	{"G-nonadjacent-item-realtime", "G2-item-realtime", "G-nonadjacent-realtime"},
	// G-nonadjacent is a G2 whose rw edges alternate.
	{"G-nonadjacent", "G2", "G-nonadjacent-process"},
	{"G-nonadjacent-process", "G2-process", "G-nonadjacent-realtime"},
	{"G-nonadjacent-realtime", "G2-realtime"},
	{"G2", "G2-process"},
	{"G2-item", "G2", "G2-item-process"},
	{"G2-item-process", "G2-process", "G2-item-realtime"},
	{"G2-item-realtime", "G2-realtime"},
	{"G2-process", "G2-realtime"},
	// Snapshot isolation's anomalies, per Adya.
	{"GSIa", "GSI"},
	{"GSIb", "GSI"},
	// Reads that no single timeline explains imply a dirty read.
	{"incompatible-order", "G1a"},
	// A future read is a trivial cycle: T1 -wr-> T1.
	{"future-read", "G1c"},
	// A dirty update is a dirty read that reaches a write.
	{"dirty-update", "G1a"},
	// Lost update is write skew on one key, hence G2-item (Bailis).
	{"lost-update", "write-skew", "G2-item"},
	{"write-skew", "G2"},
	// Not Elle's: a read of a list element nobody appended is a read of
	// state no committed transaction produced, as an aborted read is.
	{"garbage-read", "G1a"},
}))

// severityGraph adds to impliedAnomalies how bad anomalies are: G0 is not
// G-single, but worse. It orders the cycle searches.
var severityGraph = newDAG(edgesOf([][]string{
	{"G0", "G1c"},
	{"G0-process", "G1c-process"},
	{"G0-realtime", "G1c-realtime"},
	{"G1c", "G-single", "G2-item"},
	{"G1c-process", "G-single-process", "G2-item-process"},
	{"G1c-realtime", "G-single-realtime", "G2-item-realtime"},
	{"G2", "G0-process"}, // process anomalies are not as bad as pure data ones
	{"G2-process", "G0-realtime"},
}))

// canonicalModels maps the models' friendly names to Adya's.
var canonicalModels = map[string]string{
	"consistent-view":                 "PL-2+",
	"conflict-serializable":           "PL-3",
	"cursor-stability":                "PL-CS",
	"forward-consistent-view":         "PL-FCV",
	"monotonic-snapshot-read":         "PL-MSR",
	"monotonic-view":                  "PL-2L",
	"read-committed":                  "PL-2",
	"read-uncommitted":                "PL-1",
	"repeatable-read":                 "PL-2.99",
	"serializable":                    "PL-3", // conflict serializability
	"snapshot-isolation":              "PL-SI",
	"strict-serializable":             "PL-SS",
	"strong-serializable":             "PL-SS",
	"update-serializable":             "PL-3U",
	"strong-session-read-uncommitted": "strong-session-PL-1",
	"strong-session-read-committed":   "strong-session-PL-2",
	"strong-read-uncommitted":         "strong-PL-1",
	"strong-read-committed":           "strong-PL-2",
}

// friendlyModels maps Adya's names back. Elle inverts canonicalModels, so
// PL-SS reads "strong-serializable" (the name its hash order keeps) and
// PL-3 "serializable" (set on purpose): the output uses Elle's names.
var friendlyModels = func() map[string]string {
	m := map[string]string{}
	for f, c := range canonicalModels {
		m[c] = f
	}
	m["PL-3"] = "serializable"
	m["PL-SS"] = "strong-serializable"
	return m
}()

func canonicalModel(m string) string {
	if c, ok := canonicalModels[m]; ok {
		return c
	}
	return m
}

func friendlyModel(m string) string {
	if f, ok := friendlyModels[m]; ok {
		return f
	}
	return m
}

// modelGraph: a -> b when a history that satisfies a satisfies b.
var modelGraph = func() *dag {
	rows := [][]string{
		{"causal-cerone", "read-atomic"},
		{"consistent-view", "cursor-stability", "monotonic-view"},
		{"conflict-serializable", "view-serializable"},
		{"cursor-stability", "read-committed", "PL-2"},
		{"forward-consistent-view", "consistent-view"},
		{"PL-2", "PL-1"},
		{"PL-3", "repeatable-read", "update-serializable"},
		{"update-serializable", "forward-consistent-view"},
		{"monotonic-atomic-view", "read-committed"},
		{"monotonic-view", "PL-2"},
		{"monotonic-snapshot-read", "PL-2"},
		{"parallel-snapshot-isolation", "causal-cerone", "update-atomic"},
		{"prefix", "causal-cerone"},
		{"read-atomic", "monotonic-atomic-view"},
		{"read-committed", "read-uncommitted"},
		{"repeatable-read", "cursor-stability", "monotonic-atomic-view"},
		{"update-atomic", "read-atomic"},
		{"serializable", "repeatable-read", "snapshot-isolation", "view-serializable"},
		{"session-serializable", "1SR"},
		{"snapshot-isolation", "forward-consistent-view", "monotonic-atomic-view", "monotonic-snapshot-read", "parallel-snapshot-isolation", "prefix"},
		{"strict-serializable", "PL-3", "serializable", "linearizable", "snapshot-isolation", "strong-snapshot-isolation", "strong-session-serializable"},
		// Not in the literature, but intuitive generalizations.
		{"strong-session-PL-1", "PL-1"},
		{"strong-session-PL-2", "PL-2", "strong-session-PL-1"},
		{"strong-PL-1", "strong-session-PL-1"},
		{"strong-PL-2", "strong-session-PL-2", "strong-PL-1"},
		{"strong-session-serializable", "serializable", "strong-session-snapshot-isolation"},
		{"strong-session-snapshot-isolation", "snapshot-isolation", "strong-session-PL-2"},
		{"strong-serializable", "session-serializable"},
		{"strong-snapshot-isolation", "strong-session-snapshot-isolation", "strong-PL-2"},
		// Single-object models.
		{"linearizable", "sequential"},
		{"sequential", "causal"},
		{"causal", "writes-follow-reads", "PRAM"},
		{"PRAM", "monotonic-reads", "monotonic-writes", "read-your-writes"},
	}
	var es [][2]string
	for _, e := range edgesOf(rows) {
		es = append(es, [2]string{canonicalModel(e[0]), canonicalModel(e[1])})
	}
	return newDAG(es)
}()

// proscribed maps each (canonical) model to the anomalies it forbids
// directly; a model also forbids what the models it implies forbid.
var proscribed = func() *dag {
	rows := [][]string{
		{"causal-cerone", "internal", "G1a"},
		{"cursor-stability", "G1", "G-cursor", "lost-update"},
		{"monotonic-view", "G1", "G-monotonic"},
		{"monotonic-snapshot-read", "G1", "G-MSR"},
		{"consistent-view", "G1", "G-single"},
		{"forward-consistent-view", "G1", "G-SIb"},
		{"parallel-snapshot-isolation", "internal", "G1a"},
		{"PL-3", "G1", "G2", "predicate-read-miss", "PL-3-cycle-exists"},
		{"PL-2", "G1", "PL-2-cycle-exists"},
		{"PL-1", "G0", "duplicate-elements", "cyclic-versions", "PL-1-cycle-exists"},
		{"prefix", "internal", "G1a"},
		{"serializable", "internal"},
		{"snapshot-isolation", "internal", "G1", "G-SI", "G-nonadjacent", "PL-SI-cycle-exists"},
		{"read-atomic", "internal", "G1a", "future-read"},
		{"repeatable-read", "G1", "G2-item", "PL-2.99-cycle-exists", "lost-update"},
		{"update-atomic", "lost-update"},
		{"strict-serializable", "G1", "G1c-realtime", "G2-realtime", "PL-SS-cycle-exists"},
		{"strong-session-PL-1", "strong-session-PL-1-cycle-exists", "G0-process"},
		{"strong-session-PL-2", "strong-session-PL-2-cycle-exists", "G1c-process"},
		{"strong-PL-1", "strong-PL-1-cycle-exists", "G0-realtime"},
		{"strong-PL-2", "strong-PL-2-cycle-exists", "G1c-realtime"},
		{"strong-session-snapshot-isolation", "internal", "G1-process", "G-nonadjacent-process", "strong-session-snapshot-isolation-cycle-exists"},
		{"strong-snapshot-isolation", "internal", "G1-realtime", "G-nonadjacent-realtime", "strong-snapshot-isolation-cycle-exists"},
		{"strong-session-serializable", "G1-process", "G2-process", "strong-session-serializable-cycle-exists"},
		{"update-serializable", "G1", "G-update"},
	}
	var es [][2]string
	for _, e := range edgesOf(rows) {
		es = append(es, [2]string{canonicalModel(e[0]), e[1]})
	}
	return newDAG(es)
}()

// allModels is every model name Elle knows, friendly and canonical.
var allModels = func() map[string]bool {
	m := map[string]bool{}
	for v, out := range modelGraph.out {
		m[v] = true
		for _, w := range out {
			m[w] = true
		}
	}
	for f, c := range canonicalModels {
		m[f], m[c] = true, true
	}
	return m
}()

// KnownModels lists the consistency models Options.ConsistencyModels takes.
func KnownModels() []string {
	var names []string
	for m := range allModels {
		if _, canonical := friendlyModels[m]; !canonical {
			names = append(names, m)
		}
	}
	sort.Strings(names)
	return names
}

// ValidateModels returns an error naming the first model Elle does not
// know, with the model meant when the name is a slip of one.
func ValidateModels(models []string) error {
	for _, m := range models {
		if !allModels[m] {
			msg := fmt.Sprintf("unknown consistency model %q", m)
			if s := closest(m, KnownModels()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return fmt.Errorf("%s; the models are %s", msg, strings.Join(KnownModels(), ", "))
		}
	}
	return nil
}

// closest is the name within a few edits of s, if any.
func closest(s string, names []string) string {
	best, bestD := "", 4
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func canonicalAll(models []string) []string {
	var c []string
	for _, m := range models {
		c = append(c, canonicalModel(m))
	}
	return c
}

// impliedModels is every model the given ones imply, themselves included
// (canonical names).
func impliedModels(models []string) map[string]bool {
	return reach(modelGraph.out, canonicalAll(models))
}

// anomaliesProhibitedBy is every anomaly that cannot be present if all of
// models hold: what they and the models they imply forbid, and every
// anomaly that implies one of those.
func anomaliesProhibitedBy(models []string) map[string]bool {
	var direct []string
	for _, m := range sortedKeys(impliedModels(models)) {
		direct = append(direct, proscribed.out[m]...)
	}
	return reach(impliedAnomalies.in, direct)
}

// impossibleModels is every model (canonical) that anomalies rule out.
func impossibleModels(anomalies []string) map[string]bool {
	var direct []string
	for _, a := range sortedKeys(reach(impliedAnomalies.out, anomalies)) {
		direct = append(direct, proscribed.in[a]...)
	}
	return reach(modelGraph.in, direct)
}

// extremeModels keeps the models of ms that no other member of ms lies
// beyond in direction next: the weakest with modelGraph.out, the strongest
// with modelGraph.in.
func extremeModels(next map[string][]string, ms map[string]bool) []string {
	var keep []string
	for _, m := range sortedKeys(ms) {
		beyond := false
		for r := range reach(next, next[m]) {
			if r != m && ms[r] {
				beyond = true
				break
			}
		}
		if !beyond {
			keep = append(keep, m)
		}
	}
	return keep
}

func friendlySorted(ms []string) []string {
	var f []string
	for _, m := range ms {
		f = append(f, friendlyModel(m))
	}
	sort.Strings(f)
	return slices.Compact(f)
}

// boundary is Elle's: the weakest models the anomalies rule out (not),
// and the rest of those they rule out (also-not), in friendly names.
func boundary(anomalies []string) (not, alsoNot []string) {
	impossible := impossibleModels(anomalies)
	weakest := extremeModels(modelGraph.out, impossible)
	isNot := map[string]bool{}
	for _, m := range weakest {
		isNot[m] = true
	}
	var rest []string
	for _, m := range sortedKeys(impossible) {
		if !isNot[m] {
			rest = append(rest, m)
		}
	}
	return friendlySorted(weakest), friendlySorted(rest)
}

// strongestPossible is the strongest of the models checked (those given
// and those they imply) that the anomalies do not rule out. A model that
// forbids no anomaly Elle can see (linearizable, for one) is left out:
// saying it is possible would claim what was never checked.
func strongestPossible(models []string, anomalies []string) []string {
	impossible := impossibleModels(anomalies)
	possible := map[string]bool{}
	for m := range impliedModels(models) {
		if !impossible[m] && len(anomaliesProhibitedBy([]string{m})) > 0 {
			possible[m] = true
		}
	}
	// A model asked for keeps the name it was asked by (strict- rather
	// than strong-serializable).
	var names []string
	for _, m := range extremeModels(modelGraph.in, possible) {
		name := friendlyModel(m)
		for _, r := range models {
			if canonicalModel(r) == m {
				name = r
				break
			}
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// anomalyDepth is each anomaly's depth in the implication and severity
// graphs together (0 for those nothing implies): searching for cycles in
// order of depth finds the worst anomalies first and skips those that
// are implied by what was found.
var anomalyDepth = func() map[string]int {
	in := map[string][]string{}
	nodes := map[string]bool{}
	for _, d := range []*dag{impliedAnomalies, severityGraph} {
		for a, bs := range d.out {
			nodes[a] = true
			for _, b := range bs {
				nodes[b] = true
				if !slices.Contains(in[b], a) {
					in[b] = append(in[b], a)
				}
			}
		}
	}
	depth := map[string]int{}
	var visit func(string) int
	visit = func(a string) int {
		if d, ok := depth[a]; ok {
			return d
		}
		d := 0
		for _, p := range in[a] {
			d = max(d, visit(p)+1)
		}
		depth[a] = d
		return d
	}
	for a := range nodes {
		visit(a)
	}
	for _, as := range proscribed.out {
		for _, a := range as {
			if _, ok := depth[a]; !ok {
				depth[a] = 0
			}
		}
	}
	return depth
}()

// compareAnomalies orders anomalies by depth, then name.
func compareAnomalies(a, b string) int {
	if c := anomalyDepth[a] - anomalyDepth[b]; c != 0 {
		return c
	}
	return strings.Compare(a, b)
}
