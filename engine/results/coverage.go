package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/seedfall/seedfall/engine"
)

// Coverage adds up the sim properties of a sweep's seeds, in the manner
// of Antithesis's property report: which properties held across the
// sweep, and which never did (a Sometimes never true, a Reachable or an
// Always never reached).
//
// An unmet property does not fail the sweep by default: one seed, or a
// short sweep, cannot be expected to reach every rare case, and a red
// sweep for that would teach people to ignore red. -require-coverage makes
// it fail (exit 1), for long CI sweeps that must prove their faults reach
// the code.
type Coverage struct {
	Require bool // -require-coverage: an unmet property fails the sweep
	seeds   int
	props   []*Prop // in order of first appearance, seeds in sweep order
	index   map[[2]string]*Prop
}

// Prop is one property over the sweep.
type Prop struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Site    string `json:"site"`
	Status  string `json:"status"`  // ok, unmet or failed
	Seeds   int    `json:"seeds"`   // seeds in the sweep
	Reached int    `json:"reached"` // seeds that reached it
	True    int    `json:"true"`    // seeds in which its condition held at least once
	Failed  int    `json:"failed"`  // seeds it failed
	Hits    uint64 `json:"hits"`    // evaluations over the sweep
}

// NewCoverage starts a sweep's coverage; with require, an unmet property
// fails the sweep.
func NewCoverage(require bool) *Coverage {
	return &Coverage{Require: require, index: map[[2]string]*Prop{}}
}

// Seeds is how many seeds were added.
func (c *Coverage) Seeds() int { return c.seeds }

// Props are the properties over the sweep, in the order Settle left them.
func (c *Coverage) Props() []*Prop { return c.props }

// Add counts one seed's properties; call it in sweep order.
func (c *Coverage) Add(props []engine.Property) {
	c.seeds++
	for _, p := range props {
		k := [2]string{p.Kind, p.Message}
		cp := c.index[k]
		if cp == nil {
			cp = &Prop{Kind: p.Kind, Message: p.Message, Site: p.Site}
			c.index[k] = cp
			c.props = append(c.props, cp)
		}
		if cp.Reached == 0 && p.Hits > 0 {
			cp.Site = p.Site // where it is reached, rather than declared
		}
		cp.Hits += p.Hits
		if p.Hits > 0 {
			cp.Reached++
		}
		if p.True > 0 {
			cp.True++
		}
		if p.Failed {
			cp.Failed++
		}
	}
}

// Settle orders the properties, reached ones in the order the sweep met
// them, then the rest, and sets their status; it returns why each has it,
// in words, and how many are unmet. The table, the JSON and the HTML
// report show the same.
func (c *Coverage) Settle() (whys []string, unmet int) {
	slices.SortStableFunc(c.props, func(a, b *Prop) int { return cmp.Compare(min(a.Reached, 1), min(b.Reached, 1)) * -1 })
	whys = make([]string, len(c.props))
	for i, p := range c.props {
		p.Seeds = c.seeds
		p.Status, whys[i] = p.status()
		if p.Status == "unmet" {
			unmet++
		}
	}
	return whys, unmet
}

// status says how a property fared over the sweep, and why in words.
func (p *Prop) status() (status, why string) {
	reached := fmt.Sprintf("reached in %d of %d seeds", p.Reached, p.Seeds)
	switch p.Kind {
	case engine.PropAlways, engine.PropAlwaysOrUnreachable:
		switch {
		case p.Failed > 0:
			return "failed", fmt.Sprintf("false in %d of %d seeds", p.Failed, p.Seeds)
		case p.Reached == 0 && p.Kind == engine.PropAlways:
			return "unmet", "never reached"
		case p.Reached == 0:
			return "ok", "never reached (allowed)"
		}
		return "ok", reached + ", never false"
	case engine.PropSometimes:
		switch {
		case p.True > 0:
			return "ok", fmt.Sprintf("true in %d of %d seeds", p.True, p.Seeds)
		case p.Reached == 0:
			return "unmet", "never reached"
		}
		return "unmet", reached + ", never true"
	case engine.PropReachable:
		if p.Reached == 0 {
			return "unmet", "never reached"
		}
		return "ok", reached
	case engine.PropUnreachable:
		if p.Reached > 0 {
			return "failed", reached
		}
		return "ok", "never reached"
	}
	return "ok", reached
}

// Write prints the coverage table (or, with asJSON, one final
// {"coverage": [...]} object) when the sweep has properties, and says
// whether -require-coverage fails the sweep.
func (c *Coverage) Write(stdout, stderr io.Writer, asJSON bool) (fail bool) {
	if len(c.props) == 0 {
		return false
	}
	whys, unmet := c.Settle()
	note := ""
	if unmet > 0 {
		note = "1 property never held across the sweep"
		if unmet > 1 {
			note = fmt.Sprintf("%d properties never held across the sweep", unmet)
		}
		if c.Require {
			note += " (-require-coverage)"
		} else {
			note += "; this does not fail the sweep, -require-coverage would"
		}
	}
	if asJSON {
		b, _ := json.Marshal(struct {
			Coverage []*Prop `json:"coverage"`
		}{c.props})
		fmt.Fprintf(stdout, "%s\n", b)
		if note != "" {
			fmt.Fprintf(stderr, "seedfall: %s\n", note)
		}
		return unmet > 0 && c.Require
	}
	fmt.Fprintf(stdout, "property coverage over %s:\n", Plural(c.seeds, "seed"))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for i, p := range c.props {
		mark := "  ok"
		if p.Status != "ok" {
			mark = "  " + strings.ToUpper(p.Status)
		}
		fmt.Fprintf(tw, "%s\t%s\t%q\t%s\t%s\n", mark, p.Kind, p.Message, whys[i], p.Site)
	}
	tw.Flush()
	if note != "" {
		fmt.Fprintln(stdout, note)
	}
	return unmet > 0 && c.Require
}
