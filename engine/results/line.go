package results

import (
	"encoding/json"

	"github.com/seedfall/seedfall/engine"
)

// LineSchema is the version of Line's JSON schema
// (docs/result-line.schema.json). Fields may be added to the line without
// changing it; a field removed, renamed or retyped bumps it.
const LineSchema = 1

// Line is a seed's result line: the object run -json and replay -json
// print, and results.jsonl keeps, one per seed.
type Line struct {
	Seed     uint64 `json:"seed"`
	Passed   bool   `json:"passed"`
	Class    string `json:"class"`
	Reason   string `json:"reason"`
	Node     string `json:"node,omitempty"`
	SimNs    int64  `json:"sim_ns"`
	WallNs   int64  `json:"wall_ns"`
	Steps    uint64 `json:"steps"`
	Digest   string `json:"digest"`
	Faults   int    `json:"faults"`
	Schedule string `json:"schedule,omitempty"`
	// History: operations recorded with sim.Put, Get and Invoke, and the
	// linearizability check's verdict.
	History *engine.HistorySummary `json:"history,omitempty"`
	// Properties: each sim assertion the run reached, with its counts.
	Properties []engine.Property `json:"properties,omitempty"`
	// Seedfall is the version that ran the seed (seedfall version): a
	// digest is the same on any machine for the same version. Lines of
	// run -json and replay -json carry it.
	Seedfall string `json:"seedfall,omitempty"`
	// Mutant is the mutant the seed ran under (replay -mutant), and
	// Weakened how many calls it weakened.
	Mutant   string `json:"mutant,omitempty"`
	Weakened uint64 `json:"weakened,omitempty"`
}

// NewLine is res's line, with schedule the saved schedule as the line
// names it ("" for none). Seedfall is left for the caller to set.
func NewLine(res *engine.Result, schedule string) Line {
	return Line{Seed: res.Seed, Passed: res.Passed, Class: res.Class, Reason: res.Reason, Node: res.Node,
		SimNs: res.SimNs, WallNs: res.WallNs, Steps: res.Steps, Digest: res.Digest, Faults: len(res.Schedule.Faults), Schedule: schedule,
		History: res.History, Properties: res.Properties, Mutant: res.Mutant.String(), Weakened: res.Weakened}
}

// Marshal is res's line as run -json prints it, run by seedfall version.
func Marshal(res *engine.Result, schedule, version string) []byte {
	l := NewLine(res, schedule)
	l.Seedfall = version
	b, _ := json.Marshal(l)
	return b
}
