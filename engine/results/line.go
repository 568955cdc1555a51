package results

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

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
	// linearizability check's verdict; transactions recorded with sim.Txn,
	// and the isolation check's verdict and anomalies.
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
	n := 0
	if res.Schedule != nil { // a result that drew no schedule has no faults
		n = len(res.Schedule.Faults)
	}
	return Line{Seed: res.Seed, Passed: res.Passed, Class: res.Class, Reason: res.Reason, Node: res.Node,
		SimNs: res.SimNs, WallNs: res.WallNs, Steps: res.Steps, Digest: res.Digest, Faults: n, Schedule: schedule,
		History: res.History, Properties: res.Properties, Mutant: res.Mutant.String(), Weakened: res.Weakened}
}

// Marshal is res's line as run -json prints it, run by seedfall version.
func Marshal(res *engine.Result, schedule, version string) []byte {
	l := NewLine(res, schedule)
	l.Seedfall = version
	b, _ := json.Marshal(l)
	return b
}

// LineJSONSchema is the JSON Schema of Line, inferred from the Go type and
// titled with LineSchema: docs/result-line.schema.json, which a test keeps
// equal to it.
func LineJSONSchema() ([]byte, error) {
	s, err := jsonschema.For[Line](nil)
	if err != nil {
		return nil, err
	}
	openSchema(s)
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.Title = fmt.Sprintf("seedfall result line, schema %d", LineSchema)
	s.Description = "One seed's result: a line of seedfall run -json and replay -json, and of results.jsonl in a results directory. " +
		"Fields may be added within a schema version; a field removed, renamed or retyped bumps it."
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// openSchema lets s and the objects in it have fields past those it names: a
// reader of one schema version reads lines that added fields.
func openSchema(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.AdditionalProperties = nil
	for _, p := range s.Properties {
		openSchema(p)
	}
	openSchema(s.Items)
}
