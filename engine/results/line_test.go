package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

// schemaFile is the committed JSON Schema of Line.
var schemaFile = filepath.Join("..", "..", "docs", "result-line.schema.json")

// The committed schema is the one the Go type gives. UPDATE=1 rewrites
// it, but refuses when a field of the committed schema was removed or
// retyped and LineSchema was not bumped: a reader of the old lines would
// misread the new ones.
func TestLineSchema(t *testing.T) {
	got, err := LineJSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(schemaFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if string(old) == string(got) {
		return
	}
	if os.Getenv("UPDATE") == "" {
		t.Fatalf("%s is not the schema of results.Line: run UPDATE=1 go test ./engine/results -run TestLineSchema, and bump LineSchema if a field was removed or retyped\nwant:\n%s", schemaFile, got)
	}
	if old != nil {
		type doc struct {
			Title      string                     `json:"title"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		var o, n doc
		if err := json.Unmarshal(old, &o); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &n); err != nil {
			t.Fatal(err)
		}
		if o.Title == n.Title {
			for name, p := range o.Properties {
				if q, ok := n.Properties[name]; !ok || string(q) != string(p) {
					t.Fatalf("field %q of the result line was removed or retyped: bump LineSchema (now %d)", name, LineSchema)
				}
			}
		}
	}
	if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A result's line is the object run -json has always printed, byte for
// byte, and a record read back from it prints the same verdict lines.
func TestLineBytes(t *testing.T) {
	res := &engine.Result{Seed: 7, Passed: false, Class: "property", Reason: `property "x" failed in client#1`, Node: "client",
		SimNs: 1500000000, WallNs: 2000000, Steps: 42, Digest: "abcd", Schedule: &faults.Schedule{Seed: 7, Faults: make([]faults.Fault, 2)},
		Properties: []engine.Property{{Kind: engine.PropAlways, Message: "x", Site: "main.go:3", Hits: 2, True: 1, False: 1, Failed: true}},
		Lines:      []trace.Line{{At: 5, Node: "client", Inc: 1, Kind: trace.Stdout, Text: "hello"}}}
	const want = `{"seed":7,"passed":false,"class":"property","reason":"property \"x\" failed in client#1","node":"client","sim_ns":1500000000,"wall_ns":2000000,"steps":42,"digest":"abcd","faults":2,"schedule":".seedfall/seed-7.faults.json","properties":[{"kind":"always","message":"x","site":"main.go:3","hits":2,"true":1,"false":1,"failed":true}],"seedfall":"v1.2.3"}`
	if got := string(Marshal(res, ".seedfall/seed-7.faults.json", "v1.2.3")); got != want {
		t.Errorf("the line of a result:\n got %s\nwant %s", got, want)
	}
	rec := NewRecord(res, ".seedfall/seed-7.faults.json", "v1.2.3")
	if string(rec.Raw) != want {
		t.Errorf("NewRecord's Raw:\n got %s\nwant %s", rec.Raw, want)
	}
	if got := rec.FailureLines(8); len(got) != 1 || got[0].Text != "hello" {
		t.Errorf("FailureLines: %v", got)
	}
}
