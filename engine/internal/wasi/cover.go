package wasi

import (
	"context"
	"slices"

	"github.com/tetratelabs/wazero/api"
)

// Cover is where a guest built with coverage (pauseoverlay.Options.Cover)
// keeps what the host reads of it: each covered package's metadata blob,
// and the regions of its counters in linear memory. A guest tells it once,
// after package init; an incarnation restored from a snapshot has its
// boot's (Replay).
type Cover struct {
	Meta    []CoverMeta
	Regions []CoverRegion
}

// CoverMeta is one covered package: the ID its counters carry and its
// metadata blob, as internal/coverage/encodemeta writes it.
type CoverMeta struct {
	ID   uint32
	Blob []byte
}

// CoverRegion is a run of 32-bit counters at Ptr.
type CoverRegion struct {
	Ptr, Words uint32
}

// Most coverage a guest may declare: 64 MiB of metadata and of counters.
// Go's own packages need kilobytes; a bound keeps a hostile guest from
// making the host hold what it likes.
const maxCoverBytes = 64 << 20

func init() {
	seedfallFuncs = append(seedfallFuncs,
		// cover_meta(ptr, len, id)
		hostFunc{name: "cover_meta", params: vt(i32, i32, i32), fn: func(ctx context.Context, m api.Module, s []uint64) {
			c := proc(ctx).cover()
			n := uint32(s[1])
			if c.bytes()+int(n) > maxCoverBytes {
				return
			}
			if b, ok := m.Memory().Read(uint32(s[0]), n); ok {
				c.Meta = append(c.Meta, CoverMeta{ID: uint32(s[2]), Blob: slices.Clone(b)})
			}
		}},
		// cover_counters(ptr, nwords)
		hostFunc{name: "cover_counters", params: vt(i32, i32), fn: func(ctx context.Context, m api.Module, s []uint64) {
			c := proc(ctx).cover()
			ptr, words := uint32(s[0]), uint32(s[1])
			if uint64(words)*4 > maxCoverBytes || c.bytes()+int(words)*4 > maxCoverBytes {
				return
			}
			if _, ok := m.Memory().Read(ptr, words*4); ok {
				c.Regions = append(c.Regions, CoverRegion{Ptr: ptr, Words: words})
			}
		}},
	)
	bootAllowed["cover_meta"] = true
	bootAllowed["cover_counters"] = true
}

// cover is where the calls above put what they are told: the snapshot
// boot's log, or the process itself.
func (p *Process) cover() *Cover {
	if p.Boot != nil {
		if p.Boot.Cover == nil {
			p.Boot.Cover = &Cover{}
		}
		return p.Boot.Cover
	}
	if p.Cover == nil {
		p.Cover = &Cover{}
	}
	return p.Cover
}

func (c *Cover) bytes() int {
	n := 0
	for _, m := range c.Meta {
		n += len(m.Blob)
	}
	for _, r := range c.Regions {
		n += int(r.Words) * 4
	}
	return n
}

// Instance is the guest's instance as its last host call saw it (nil before
// the first): what the host reads the counters from, while the guest waits.
func (p *Process) Instance() api.Module {
	if p.parked != nil {
		return p.parked
	}
	return p.inst
}
