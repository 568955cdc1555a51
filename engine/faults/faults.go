// Package faults owns fault kinds, the planning of timed faults from a seed's
// rates, and the schedule file: the list of faults a run applied, which a
// replay applies instead of drawing new ones.
package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/internal/rng"
)

// Crash is the kind of a planned crash: the node dies at At and restarts at
// Until. Other kinds register themselves with Register.
const Crash = "crash"

// KindInfo describes a fault kind this build can apply.
type KindInfo struct {
	Name string
	// AtOp is true for faults that fire at an operation (a disk op, a
	// datagram, a buggify hit): their At only records when it happened,
	// and Op says where they fire.
	AtOp bool
	// Lasts is true for faults with a duration: Until must not be before At.
	Lasts bool
	// NoNode is true for kinds that name no single node (partitions,
	// link clogs).
	NoNode bool
	// Factor is true for kinds whose factor must be at least 1 (slow).
	Factor bool
}

var kinds = map[string]KindInfo{
	Crash: {Name: Crash, Lasts: true},
}

// Register adds a fault kind. It is called from init functions.
func Register(k KindInfo) { kinds[k.Name] = k }

// Lookup returns a registered kind.
func Lookup(name string) (KindInfo, bool) {
	k, ok := kinds[name]
	return k, ok
}

// Known lists the registered kinds, sorted.
func Known() []string {
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Fault is one fault of a schedule, in the spec's JSON form. Fields a kind
// does not use stay zero and are left out of the JSON.
type Fault struct {
	At     time.Duration
	Kind   string
	Node   string
	From   string     // a link's sender (clog), or a datagram's sender
	To     string     // a link's receiver (clog), or where a datagram went
	Side   []string   // one side of a partition
	Groups [][]string // a partition as groups; two nodes talk if a group holds both
	Dir    string     // clog of a node: in, out or both
	Mode   string     // clog: stop, slow or jam
	Delay  time.Duration
	Factor float64 // slowdown factor
	Op     uint64  // the operation number the fault fires at
	Path   string  // the file a disk fault hit
	Offset int64   // where in the file
	Target int64   // where a misdirected write landed
	Site   string  // buggify site
	Until  time.Duration
}

// String is the one-line form used in listings: "427.268ms  crash server, restart at 791.388ms".
func (f Fault) String() string {
	switch f.Kind {
	case Crash:
		return fmt.Sprintf("%v  crash %s, restart at %v", f.At, f.Node, f.Until)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v  %s", f.At, f.Kind)
	for _, s := range []string{f.Node, f.From, f.To} {
		if s != "" {
			b.WriteString(" " + s)
		}
	}
	if len(f.Side) > 0 {
		fmt.Fprintf(&b, " side %v", f.Side)
	}
	if len(f.Groups) > 0 {
		fmt.Fprintf(&b, " groups %v", f.Groups)
	}
	for _, kv := range [][2]string{{"dir", f.Dir}, {"mode", f.Mode}, {"path", f.Path}, {"site", f.Site}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s %s", kv[0], kv[1])
		}
	}
	if f.Delay != 0 {
		fmt.Fprintf(&b, " delay %v", f.Delay)
	}
	if f.Factor != 0 {
		fmt.Fprintf(&b, " factor %v", f.Factor)
	}
	if f.Op != 0 {
		fmt.Fprintf(&b, " op #%d", f.Op)
	}
	if f.Offset != 0 {
		fmt.Fprintf(&b, " offset %d", f.Offset)
	}
	if f.Target != 0 {
		fmt.Fprintf(&b, " target %d", f.Target)
	}
	if f.Until > f.At {
		fmt.Fprintf(&b, " until %v", f.Until)
	}
	return b.String()
}

type faultJSON struct {
	At     string     `json:"at"`
	Kind   string     `json:"kind"`
	Node   string     `json:"node,omitempty"`
	From   string     `json:"from,omitempty"`
	To     string     `json:"to,omitempty"`
	Side   []string   `json:"side,omitempty"`
	Groups [][]string `json:"groups,omitempty"`
	Dir    string     `json:"dir,omitempty"`
	Mode   string     `json:"mode,omitempty"`
	Delay  string     `json:"delay,omitempty"`
	Factor float64    `json:"factor,omitempty"`
	Op     uint64     `json:"op,omitempty"`
	Path   string     `json:"path,omitempty"`
	Offset int64      `json:"offset,omitempty"`
	Target int64      `json:"target,omitempty"`
	Site   string     `json:"site,omitempty"`
	Until  string     `json:"until"`
}

// FieldNames are a fault's JSON fields, in the order a schedule writes
// them.
func FieldNames() []string {
	t := reflect.TypeFor[faultJSON]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}

// MarshalJSON writes the spec's form: {"at": "1.2s", "kind": "crash", "node": "n1", "until": "1.5s"}.
func (f Fault) MarshalJSON() ([]byte, error) {
	j := faultJSON{At: f.At.String(), Kind: f.Kind, Node: f.Node, From: f.From, To: f.To, Side: f.Side, Groups: f.Groups,
		Dir: f.Dir, Mode: f.Mode, Factor: f.Factor, Op: f.Op, Path: f.Path, Offset: f.Offset, Target: f.Target, Site: f.Site,
		Until: f.Until.String()}
	if f.Delay != 0 {
		j.Delay = f.Delay.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the spec's form and refuses fields it does not know.
func (f *Fault) UnmarshalJSON(b []byte) error {
	src := newJSource("", b)
	v, err := src.parse()
	if err != nil {
		return err
	}
	g, err := (&jdecoder{src}).fault(v, "")
	if err != nil {
		return err
	}
	*f = g
	return nil
}

// Schedule is what a run applied, and what a replay applies.
type Schedule struct {
	Seed     uint64
	Config   string        // the world file, as given on the command line
	Duration time.Duration // the run's horizon (with liveness: the end of the fault period)
	Faults   []Fault
	// ShrunkFrom and ShrinkRuns are what seedfall shrink records: the
	// number of faults it started from and the runs it took. An edit drops
	// them.
	ShrunkFrom int
	ShrinkRuns int
	// Branches re-key the seed's random streams during the run, in order.
	Branches []Branch
}

// Changed returns a copy of s to change: its own faults and branches, and
// no ShrunkFrom or ShrinkRuns, since a changed schedule is no longer what
// shrink found.
func (s *Schedule) Changed() *Schedule {
	c := *s
	c.Faults = slices.Clone(s.Faults)
	c.Branches = slices.Clone(s.Branches)
	c.ShrunkFrom, c.ShrinkRuns = 0, 0
	return &c
}

// Before is what of s comes before at: its seed and duration, and its
// faults and branches before at.
func (s *Schedule) Before(at time.Duration) *Schedule {
	b := &Schedule{Seed: s.Seed, Duration: s.Duration}
	for _, f := range s.Faults {
		if f.At < at {
			b.Faults = append(b.Faults, f)
		}
	}
	for _, br := range s.Branches {
		if br.At < at {
			b.Branches = append(b.Branches, br)
		}
	}
	return b
}

// Keeps reports whether a run under s is the run under parent until at:
// the same duration, and the same faults and branches before at (seeds
// aside); and every fault of s that fires at an operation is one of
// parent's, since its At only records when it fired in some run, and
// changed it may fire before at.
func (s *Schedule) Keeps(parent *Schedule, at time.Duration) bool {
	a, b := parent.Before(at), s.Before(at)
	a.Seed, b.Seed = 0, 0
	if !reflect.DeepEqual(a, b) {
		return false
	}
	for _, f := range s.Faults {
		if k, _ := Lookup(f.Kind); k.AtOp && !slices.ContainsFunc(parent.Faults, func(g Fault) bool { return reflect.DeepEqual(f, g) }) {
			return false
		}
	}
	return true
}

// ForkAt is the schedule of a fork of s at at: what of s comes before at,
// and a branch of every stream at at, re-keyed with key. The fork keeps
// the past and draws another future.
func (s *Schedule) ForkAt(at time.Duration, key uint64) *Schedule {
	f := s.Before(at)
	f.Branches = append(f.Branches, Branch{At: at, Key: key})
	return f
}

// Branch re-keys the seed's random streams at the first scheduler step at
// or after At: every stream, or only Stream (sched, net, disk, io, udp,
// disklatency, mutant, random, cpu, poll).
type Branch struct {
	At     time.Duration
	Key    uint64
	Stream string
}

type branchJSON struct {
	At     string `json:"at"`
	Key    uint64 `json:"key"`
	Stream string `json:"stream,omitempty"`
}

// BranchStreams are the streams a branch may name.
var BranchStreams = []string{"sched", "net", "disk", "io", "udp", "disklatency", "mutant", "random", "cpu", "poll"}

// MarshalJSON writes one fault per line, so schedules diff well.
func (s *Schedule) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"seed\": %d,\n", s.Seed)
	if s.Config != "" {
		c, _ := json.Marshal(s.Config)
		fmt.Fprintf(&b, "  \"config\": %s,\n", c)
	}
	if s.Duration > 0 { // none: the world's
		fmt.Fprintf(&b, "  \"duration\": %q,\n", s.Duration.String())
	}
	if s.ShrunkFrom > 0 {
		fmt.Fprintf(&b, "  \"shrunk_from\": %d,\n  \"shrink_runs\": %d,\n", s.ShrunkFrom, s.ShrinkRuns)
	}
	if len(s.Branches) > 0 {
		b.WriteString("  \"branches\": [")
		for i, br := range s.Branches {
			if i > 0 {
				b.WriteString(", ")
			}
			j, _ := json.Marshal(branchJSON{At: br.At.String(), Key: br.Key, Stream: br.Stream})
			b.Write(j)
		}
		b.WriteString("],\n")
	}
	b.WriteString("  \"faults\": [")
	for i, f := range s.Faults {
		if i > 0 {
			b.WriteByte(',')
		}
		j, err := f.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.WriteString("\n    ")
		b.Write(j)
	}
	if len(s.Faults) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]\n}\n")
	return b.Bytes(), nil
}

// UnmarshalJSON reads a schedule file's contents. Its errors name the line
// and field path, as Load's do, but no file.
func (s *Schedule) UnmarshalJSON(b []byte) error {
	got, _, err := decodeSchedule("", b)
	if err != nil {
		return err
	}
	*s = *got
	return nil
}

// Load reads a schedule file and checks its faults against the world: its
// program names, and the end of the run (the schedule's duration, else the
// world's). Errors name the file, the line and the field path.
func Load(path string, c CheckConfig) (*Schedule, error) {
	b, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, top, err := decodeSchedule(path, b)
	if err != nil {
		return nil, err
	}
	end := s.Duration
	if end <= 0 {
		end = c.Duration
	}
	for i, f := range s.Faults {
		if errs := f.rules(c.Programs, checkRun{end: end}); len(errs) > 0 {
			return nil, &Error{File: path, Line: faultLine(top, i), Path: fmt.Sprintf("faults[%d]", i),
				Msg: fmt.Sprintf("%v (fault %d, %s)", errs[0], i+1, f.Kind)}
		}
	}
	return s, nil
}

// Save writes the schedule as JSON, atomically, creating the directory if
// needed.
func (s *Schedule) Save(path string) error {
	b, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFile(path, b, 0o644)
}

// CrashPlan says who may crash and how often.
type CrashPlan struct {
	Nodes        []string // eligible programs, in world order
	PerSec       float64
	RestartAfter [2]time.Duration
	Horizon      time.Duration
}

// PlanCrashes draws each node's crashes as a Poisson process from the node's
// own `crash` stream: the next crash comes an exponential wait after the
// previous restart. Faults are sorted by time, then by world order.
func PlanCrashes(seed uint64, p CrashPlan) []Fault {
	var out []Fault
	if p.PerSec <= 0 {
		return nil
	}
	for _, name := range p.Nodes {
		s := rng.ForName(seed, "crash", name)
		t := time.Duration(0)
		for {
			w := s.Exp(p.PerSec)
			if w >= p.Horizon-t {
				break
			}
			t += w
			down := s.Between(p.RestartAfter[0], p.RestartAfter[1])
			out = append(out, Fault{At: t, Kind: Crash, Node: name, Until: t + down})
			t += down
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}
