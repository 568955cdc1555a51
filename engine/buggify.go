package engine

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// KindBuggify is a sim.Buggify site that fired: node site op(hit number).
const KindBuggify = "buggify"

// buggifyEnabled is the share of runs in which a site is enabled at all, so
// that most runs keep most rare paths shut and each run differs in which.
const buggifyEnabled = 0.25

func init() {
	register(familyDef{name: "buggify", open: openBuggify})
	faults.Register(faults.KindInfo{Name: KindBuggify, AtOp: true})
	Implemented["faults.buggify"] = true
	Implemented["faults_after_setup"] = true // held in run.go: r.held
}

// buggifyKey names one hit of one site in one node.
type buggifyKey struct {
	node, site string
	hit        uint64
}

// buggifyFamily is the buggify state of one run. Hits are counted per
// node and site across incarnations, so a hit number names the same call
// in a replay.
type buggifyFamily struct {
	*env
	enabled map[string]bool       // site -> enabled in this run (decided at its first hit)
	hits    map[buggifyKey]uint64 // (node, site, 0) -> hits so far
	fires   map[buggifyKey]bool   // a replay's firings
}

func openBuggify(e *env) (family, error) {
	b := &buggifyFamily{env: e, enabled: map[string]bool{}, hits: map[buggifyKey]uint64{}}
	if e.given != nil {
		b.fires = map[buggifyKey]bool{}
		for _, f := range e.given.Faults {
			if f.Kind == KindBuggify {
				b.fires[buggifyKey{f.Node, f.Site, f.Op}] = true
			}
		}
	}
	return family{process: b.process}, nil
}

// process answers the node's sim.Buggify calls. Sites fire in a node even
// when "faults": false keeps other faults away from it: the user marked
// them in their own code.
func (b *buggifyFamily) process(n *node, p *wasi.Process) {
	if !b.w.Faults.Buggify && b.given == nil {
		return
	}
	p.Buggify = func(site string, prob float64) bool { return b.buggify(n, site, prob) }
}

// buggify decides one hit of a site: in a replay exactly the schedule's
// firings; otherwise the site must be enabled in this run (a draw keyed by
// the seed and the site) and then the hit fires at prob (a draw keyed by
// the node, the site and the hit number), so other faults never move it.
func (b *buggifyFamily) buggify(n *node, site string, prob float64) bool {
	k := buggifyKey{node: n.prog.Name, site: site}
	b.hits[k]++
	k.hit = b.hits[k]
	if b.over() {
		return false
	}
	fire := false
	if b.fires != nil {
		fire = b.fires[k]
	} else if b.faultsActive() {
		on, ok := b.enabled[site]
		if !ok {
			s := rng.ForName(b.seed, KindBuggify, site)
			on = s.Float64() < buggifyEnabled
			b.enabled[site] = on
		}
		if on {
			s := rng.ForName(b.seed, KindBuggify, k.node, siteHash(site), k.hit)
			fire = s.Float64() < prob
		}
	}
	if fire {
		b.record(faults.Fault{At: time.Duration(b.now()), Kind: KindBuggify, Node: k.node, Site: site, Op: k.hit})
		b.event(n, fmt.Sprintf("fault buggify: %s hit %d fires", site, k.hit))
	}
	return fire
}

// siteHash turns a site into a stream key.
func siteHash(site string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(site))
	return h.Sum64()
}
