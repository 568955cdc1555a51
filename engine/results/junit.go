package results

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/fsutil"
)

// JUnit is a sweep as JUnit XML (-junit FILE), which CI systems
// show as tests: one testcase per seed, named seed=N, of the class named
// after the world; a failing seed's failure has its class as type, its
// reason as message, and its last lines and replay command as text. Each
// pinned regression is a testcase pinned=NAME. A nil *JUnit ignores
// everything.
type JUnit struct {
	name     string // the world, with -profile and -set (configName)
	cases    []junitCase
	failures int
	wallNs   int64
}

// The XML (JUnitXML the document), in the schema that Jenkins, GitLab and GitHub's JUnit actions
// read.
type (
	JUnitXML struct {
		XMLName  xml.Name        `xml:"testsuites"`
		Name     string          `xml:"name,attr"`
		Tests    int             `xml:"tests,attr"`
		Failures int             `xml:"failures,attr"`
		Errors   int             `xml:"errors,attr"`
		Time     string          `xml:"time,attr"`
		Suites   []junitXMLSuite `xml:"testsuite"`
	}
	junitXMLSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",cdata"` // xmlText: lines as they are, to read in the file
	}
)

// seconds writes a wall time as JUnit does: seconds, to the millisecond.
func seconds(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e9) }

// NewJUnit starts the JUnit file of a sweep of the world named name
// (engine.ConfigName).
func NewJUnit(name string) *JUnit { return &JUnit{name: name} }

// Add adds one seed's (or pinned regression's) testcase.
func (j *JUnit) Add(name string, rec *Record, replay, schedule string) {
	if j == nil {
		return
	}
	res := &rec.Line
	c := junitCase{Name: name, Classname: j.name, Time: seconds(res.WallNs)}
	j.wallNs += res.WallNs
	if !res.Passed {
		j.failures++
		var b strings.Builder
		verb := "failed"
		if res.Class == engine.ClassInconclusive { // no verdict, and no pass
			verb = "was inconclusive"
		}
		fmt.Fprintf(&b, "seed %d %s at t=%s: %s: %s\n", res.Seed, verb, time.Duration(res.SimNs), res.Class, res.Reason)
		for _, l := range rec.FailureLines(8) {
			fmt.Fprintf(&b, "  %s\n", l.String())
		}
		if replay != "" {
			fmt.Fprintf(&b, "replay: %s\n", replay)
		}
		if schedule != "" {
			fmt.Fprintf(&b, "schedule: %s\n", schedule)
		}
		c.Failure = &junitFailure{Message: res.Class + ": " + res.Reason, Type: res.Class, Text: xmlText(b.String())}
	}
	j.cases = append(j.cases, c)
}

// Write writes the file whole, atomically.
func (j *JUnit) Write(path string) error {
	doc := JUnitXML{Name: "seedfall", Tests: len(j.cases), Failures: j.failures, Time: seconds(j.wallNs),
		Suites: []junitXMLSuite{{Name: j.name, Tests: len(j.cases), Failures: j.failures, Time: seconds(j.wallNs), Cases: j.cases}}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("-junit: %w", err)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("-junit: %w", err)
		}
	}
	if err := fsutil.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644); err != nil {
		return fmt.Errorf("-junit: %w", err)
	}
	return nil
}

// xmlText replaces what XML 1.0 cannot hold, even in CDATA (control
// characters a program printed, say), with U+FFFD.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}
