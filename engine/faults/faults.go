// Package faults owns fault kinds, the planning of timed faults from a seed's
// rates, and the schedule file: the list of faults a run applied, which a
// replay applies instead of drawing new ones.
package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/seedfall/seedfall/engine/rng"
)

// Kinds this build knows how to apply.
const (
	Crash = "crash" // the node dies at At and restarts at Until
)

// Fault is one fault of a schedule.
type Fault struct {
	At    time.Duration
	Kind  string
	Node  string
	Until time.Duration
}

// String is the one-line form used in listings: "427.268ms  crash server, restart at 791.388ms".
func (f Fault) String() string {
	switch f.Kind {
	case Crash:
		return fmt.Sprintf("%v  crash %s, restart at %v", f.At, f.Node, f.Until)
	}
	return fmt.Sprintf("%v  %s %s until %v", f.At, f.Kind, f.Node, f.Until)
}

type faultJSON struct {
	At    string `json:"at"`
	Kind  string `json:"kind"`
	Node  string `json:"node,omitempty"`
	Until string `json:"until"`
}

// MarshalJSON writes the spec's form: {"at": "1.2s", "kind": "crash", "node": "n1", "until": "1.5s"}.
func (f Fault) MarshalJSON() ([]byte, error) {
	return json.Marshal(faultJSON{At: f.At.String(), Kind: f.Kind, Node: f.Node, Until: f.Until.String()})
}

// UnmarshalJSON reads the spec's form and refuses fields it does not know.
func (f *Fault) UnmarshalJSON(b []byte) error {
	var j faultJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return err
	}
	var err error
	if f.At, err = parseDur("at", j.At); err != nil {
		return err
	}
	if f.Until, err = parseDur("until", j.Until); err != nil {
		return err
	}
	f.Kind, f.Node = j.Kind, j.Node
	return nil
}

func parseDur(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a duration like \"1.5s\"", field, s)
	}
	return d, nil
}

// Schedule is what a run applied, and what a replay applies.
type Schedule struct {
	Seed     uint64
	Config   string        // the world file, as given on the command line
	Duration time.Duration // the run's horizon
	Faults   []Fault
}

type scheduleJSON struct {
	Seed     uint64  `json:"seed"`
	Config   string  `json:"config,omitempty"`
	Duration string  `json:"duration"`
	Faults   []Fault `json:"faults"`
}

// MarshalJSON writes one fault per line, so schedules diff well.
func (s *Schedule) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"seed\": %d,\n", s.Seed)
	if s.Config != "" {
		c, _ := json.Marshal(s.Config)
		fmt.Fprintf(&b, "  \"config\": %s,\n", c)
	}
	fmt.Fprintf(&b, "  \"duration\": %q,\n  \"faults\": [", s.Duration.String())
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

// UnmarshalJSON reads a schedule file.
func (s *Schedule) UnmarshalJSON(b []byte) error {
	var j scheduleJSON
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return err
	}
	dur, err := parseDur("duration", j.Duration)
	if err != nil {
		return err
	}
	*s = Schedule{Seed: j.Seed, Config: j.Config, Duration: dur, Faults: j.Faults}
	return nil
}

// Load reads a schedule file and checks its faults against the world's
// program names.
func Load(path string, programs []string) (*Schedule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Schedule
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for i, f := range s.Faults {
		if err := f.check(programs); err != nil {
			return nil, fmt.Errorf("%s: fault %d (%s): %v", path, i+1, f.Kind, err)
		}
	}
	return &s, nil
}

func (f Fault) check(programs []string) error {
	switch f.Kind {
	case Crash:
	default:
		return fmt.Errorf("unknown fault kind %q (this build knows: crash)", f.Kind)
	}
	known := false
	for _, p := range programs {
		known = known || p == f.Node
	}
	if !known {
		return fmt.Errorf("node %q is not in the world (it has %v)", f.Node, programs)
	}
	if f.At < 0 {
		return fmt.Errorf("at %v is negative", f.At)
	}
	if f.Until < f.At {
		return fmt.Errorf("until %v is before at %v", f.Until, f.At)
	}
	return nil
}

// Save writes the schedule as JSON, creating the directory if needed.
func (s *Schedule) Save(path string) error {
	b, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
