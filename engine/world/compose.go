package world

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options say what is composed over a world file after the files it
// extends: a profile, then -set overrides in order. A preset named in the
// result is expanded last, under the fields set next to it.
type Options struct {
	Profile string   // a name from "profiles", or ""
	Set     []string // "path=value", such as "faults.crash_per_sec=0.5"
}

func (m member) pos() pos { return pos{m.src, m.line} }

// compose reads src and the files it extends, merges them, then the
// profile, the -set overrides and the preset, into one value tree whose
// values each remember the source they come from. It returns the tree and
// the files read, src first.
func compose(src *source, o Options) (*value, []string, error) {
	root, files, err := readChain(src, nil)
	if err != nil {
		return nil, nil, err
	}
	if root.kind != kindObject {
		return root, files, nil // the decoder says what is wrong
	}
	if err := checkProfiles(root, src, o.Profile); err != nil {
		return nil, nil, err
	}
	if o.Profile != "" {
		if root, err = applyProfile(root, src, o.Profile); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range o.Set {
		if err := applySet(root, src, s); err != nil {
			return nil, nil, err
		}
	}
	if err := applyPreset(root); err != nil {
		return nil, nil, err
	}
	return root, files, nil
}

// readChain parses src and, when it extends another file, merges it over
// that file's own chain. chain holds the absolute paths of the files that
// extend src, to catch cycles.
func readChain(src *source, chain []string) (*value, []string, error) {
	root, err := src.parse()
	if err != nil {
		return nil, nil, err
	}
	if root.kind != kindObject {
		return root, []string{src.file}, nil
	}
	if err := checkRepeats(root, ""); err != nil {
		return nil, nil, err
	}
	normalizeFaults(root)
	if p := root.find("profiles"); p != nil && p.val.kind == kindObject {
		for _, m := range p.val.members {
			if m.val.kind == kindObject {
				normalizeFaults(m.val)
			}
		}
	}
	ext := root.find("extends")
	if ext == nil || ext.val.kind != kindString || ext.val.str == "" {
		return root, []string{src.file}, nil // the decoder reports a bad "extends"
	}
	abs := filepath.Join(src.dir, filepath.FromSlash(ext.val.str))
	if filepath.IsAbs(filepath.FromSlash(ext.val.str)) {
		abs = filepath.Clean(filepath.FromSlash(ext.val.str))
	}
	self, _ := filepath.Abs(filepath.Join(src.dir, filepath.Base(src.file)))
	chain = append(slices.Clone(chain), self)
	if slices.Contains(chain, abs) {
		names := make([]string, 0, len(chain)+1)
		for _, c := range append(chain, abs) {
			names = append(names, filepath.Base(c))
		}
		return nil, nil, errIn(src, ext.line, "extends", fmt.Sprintf("%q closes a cycle (%s); a world cannot extend itself",
			ext.val.str, strings.Join(names, " -> ")))
	}
	data, err := ReadBounded(abs, MaxConfigBytes)
	if err != nil {
		return nil, nil, errIn(src, ext.line, "extends", fmt.Sprintf("cannot read %q: %s; the path is relative to %s",
			ext.val.str, err, src.file))
	}
	// Name the parent as the child names it, relative to where the child
	// was named from, so its errors read like the -c path.
	name := ext.val.str
	if !filepath.IsAbs(filepath.FromSlash(name)) {
		name = filepath.Join(filepath.Dir(src.file), filepath.FromSlash(name))
	}
	parent := newSource(name, data)
	parent.dir, parent.toml = filepath.Dir(abs), isTOML(abs)
	base, files, err := readChain(parent, chain)
	if err != nil {
		return nil, nil, err
	}
	if base.kind != kindObject {
		return nil, nil, errIn(parent, parent.line(base.start), "", "want a JSON object at the top of the file, got "+describe(base))
	}
	return merge(base, root), append([]string{src.file}, files...), nil
}

// find returns the member of an object with the given key, or nil.
func (v *value) find(key string) *member {
	for i := range v.members {
		if v.members[i].key == key {
			return &v.members[i]
		}
	}
	return nil
}

// checkRepeats refuses a key set twice in one object, before merging could
// hide it.
func checkRepeats(v *value, path string) error {
	switch v.kind {
	case kindObject:
		for i, m := range v.members {
			for _, prev := range v.members[:i] {
				if prev.key == m.key {
					return errIn(m.src, m.line, mapKey(path, m.key), fmt.Sprintf("set twice; it is already set on line %d", prev.line))
				}
			}
			if err := checkRepeats(m.val, mapKey(path, m.key)); err != nil {
				return err
			}
		}
	case kindArray:
		for i, e := range v.elems {
			if err := checkRepeats(e, index(path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// normalizeFaults turns the shorthand "faults": "resilient" into
// {"preset": "resilient"}, so that it merges with a faults object. A name
// that is no preset stays as it is for the decoder to report.
func normalizeFaults(obj *value) {
	m := obj.find("faults")
	if m == nil || m.val.kind != kindString || !slices.Contains(Presets, Preset(m.val.str)) {
		return
	}
	s := m.val
	m.val = &value{src: s.src, kind: kindObject, start: s.start, end: s.end,
		members: []member{{key: "preset", line: s.src.line(s.start), src: s.src, val: s}}}
}

// merge lays over on top of base: objects merge key by key, anything else
// (lists included) is replaced. Keys keep base's order, new ones follow.
func merge(base, over *value) *value {
	if base.kind != kindObject || over.kind != kindObject {
		return over
	}
	out := *over
	out.members = nil
	for _, bm := range base.members {
		if om := over.find(bm.key); om != nil {
			m := *om
			m.val = merge(bm.val, om.val)
			out.members = append(out.members, m)
		} else {
			out.members = append(out.members, bm)
		}
	}
	for _, om := range over.members {
		if base.find(om.key) == nil {
			out.members = append(out.members, om)
		}
	}
	return &out
}

// withSource copies a value tree, moving each value to the source that
// remap gives for its own.
func withSource(v *value, remap func(*source) *source) *value {
	out := *v
	out.src = remap(v.src)
	out.members = make([]member, len(v.members))
	for i, m := range v.members {
		m.src = remap(m.src)
		m.val = withSource(m.val, remap)
		out.members[i] = m
	}
	out.elems = make([]*value, len(v.elems))
	for i, e := range v.elems {
		out.elems[i] = withSource(e, remap)
	}
	return &out
}

// applyProfile merges the named profile over the world. Errors in its
// values name their place in the file: profiles.ci.duration.
func applyProfile(root *value, top *source, name string) (*value, error) {
	var names []string
	var prof *member
	if p := root.find("profiles"); p != nil && p.val.kind == kindObject {
		for i, m := range p.val.members {
			names = append(names, m.key)
			if m.key == name {
				prof = &p.val.members[i]
			}
		}
	}
	if prof == nil {
		msg := fmt.Sprintf("-profile %q: %s has no such profile", name, top.file)
		switch {
		case len(names) == 0:
			msg += `; it defines none (add "profiles": {"` + name + `": {...}})`
		case Suggest(name, names) != "":
			msg += fmt.Sprintf(" (did you mean %q?)", Suggest(name, names))
		default:
			msg += "; its profiles are " + strings.Join(names, ", ")
		}
		return nil, &Error{File: top.file, Msg: msg}
	}
	if prof.val.kind != kindObject {
		return nil, errIn(prof.src, prof.line, mapKey("profiles", name), "want an object with the fields this profile changes, got "+describe(prof.val))
	}
	for _, key := range []string{"extends", "profiles"} {
		if m := prof.val.find(key); m != nil {
			return nil, errIn(m.src, m.line, mapKey("profiles", name)+"."+key, "a profile cannot set "+key+"; set it at the top of the file")
		}
	}
	moved := map[*source]*source{}
	val := withSource(prof.val, func(s *source) *source {
		if moved[s] == nil {
			c := *s
			c.prefix = mapKey("profiles", name) + "." + s.prefix
			moved[s] = &c
		}
		return moved[s]
	})
	return merge(root, val), nil
}

// checkProfiles decodes the world under every profile but the selected one
// (which the caller decodes), so a mistake in a profile is reported
// whichever profile a run picks. It leaves root as it was: merging copies.
func checkProfiles(root *value, top *source, selected string) error {
	p := root.find("profiles")
	if p == nil || p.val.kind != kindObject {
		return nil
	}
	for _, m := range p.val.members {
		if m.key == selected || m.key == "" {
			continue
		}
		merged, err := applyProfile(root, top, m.key)
		if err != nil {
			return err
		}
		if err := applyPreset(merged); err != nil {
			return err
		}
		d := &decoder{top: top}
		w, err := d.world(merged)
		if err == nil {
			err = w.check()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// applySet applies one -set path=value. The value is JSON, or else a bare
// string; relative paths in it resolve against the world file's directory.
func applySet(root *value, top *source, arg string) error {
	path, text, ok := strings.Cut(arg, "=")
	if !ok || path == "" {
		return fmt.Errorf("-set %q: want path=value, such as faults.crash_per_sec=0.5 or nodes[1].args='[\"-x\"]'", arg)
	}
	src := newSource("-set", []byte(text))
	src.dir, src.noLine = top.dir, true
	v, err := src.parse()
	if err != nil {
		v = &value{src: src, kind: kindString, str: text, end: len(text)}
	}
	segs, err := splitPath(path)
	if err != nil {
		return fmt.Errorf("-set %s: %v", path, err)
	}
	for _, s := range segs {
		if s.key == "extends" || s.key == "profiles" {
			return fmt.Errorf("-set %s: %s cannot be set from the command line; use -c to pick the file, -profile to pick a profile", path, s.key)
		}
	}
	cur := root
	done := ""
	for i, s := range segs {
		last := i == len(segs)-1
		if s.isIndex {
			if cur.kind != kindArray {
				return fmt.Errorf("-set %s: %s is %s, not a list", path, done, describe(cur))
			}
			if s.index >= len(cur.elems) {
				return fmt.Errorf("-set %s: %s has %d entries, so [%d] is out of range; set the whole list to add one", path, done, len(cur.elems), s.index)
			}
			done = index(done, s.index)
			if last {
				cur.elems[s.index] = v
				return nil
			}
			cur = cur.elems[s.index]
			continue
		}
		if cur.kind != kindObject {
			return fmt.Errorf("-set %s: %s is %s, not an object", path, done, describe(cur))
		}
		if s.key == "faults" {
			normalizeFaults(cur)
		}
		done = mapKey(done, s.key)
		m := cur.find(s.key)
		if m == nil && !last && segs[i+1].isIndex {
			return fmt.Errorf("-set %s: %s is not set, so it has no [%d]; set the whole list", path, done, segs[i+1].index)
		}
		if m == nil {
			cur.members = append(cur.members, member{key: s.key, src: src, val: &value{src: src, kind: kindObject}})
			m = &cur.members[len(cur.members)-1]
		}
		if last {
			m.src, m.line, m.val = src, 0, v
			if s.key == "faults" {
				normalizeFaults(cur)
			}
			return nil
		}
		cur = m.val
	}
	return nil
}

type pathSeg struct {
	key     string
	index   int
	isIndex bool
}

// splitPath reads a key path: keys joined by dots, list indices in
// brackets, and odd keys quoted in brackets, as errors print them:
// nodes[1].env.GOGC, nodes[0].files["data/seed.db"].
func splitPath(p string) ([]pathSeg, error) {
	var out []pathSeg
	for i := 0; i < len(p); {
		switch {
		case p[i] == '[':
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unclosed '[' in the key path")
			}
			inner := p[i+1 : i+j]
			if strings.HasPrefix(inner, `"`) {
				k, err := strconv.Unquote(inner)
				if err != nil {
					return nil, fmt.Errorf("bad quoted key %s in the key path", inner)
				}
				out = append(out, pathSeg{key: k})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("[%s] is not a list index such as [0]", inner)
				}
				out = append(out, pathSeg{index: n, isIndex: true})
			}
			i += j + 1
			if i < len(p) && p[i] == '.' {
				i++
			}
		default:
			j := strings.IndexAny(p[i:], ".[")
			if j < 0 {
				j = len(p) - i
			}
			if j == 0 {
				return nil, fmt.Errorf("empty key in the key path")
			}
			out = append(out, pathSeg{key: p[i : i+j]})
			i += j
			if i < len(p) && p[i] == '.' {
				i++
				if i == len(p) {
					return nil, fmt.Errorf("the key path ends with '.'")
				}
			}
		}
	}
	if len(out) == 0 || out[0].isIndex {
		return nil, fmt.Errorf("want a key path such as faults.crash_per_sec")
	}
	return out, nil
}

// applyPreset lays the faults the world sets over the values of the preset
// it names, so fields set next to "preset" override it.
func applyPreset(root *value) error {
	f := root.find("faults")
	if f == nil || f.val.kind != kindObject {
		return nil
	}
	pm := f.val.find("preset")
	if pm == nil || pm.val.kind != kindString || !slices.Contains(Presets, Preset(pm.val.str)) {
		return nil // no preset, or one the decoder reports
	}
	name := Preset(pm.val.str)
	src := newSource(pm.val.src.file, []byte(presetJSON(name)))
	src.dir, src.at, src.noLine = pm.val.src.dir, pm.val.src.line(pm.val.start), pm.val.src.noLine
	src.via = fmt.Sprintf("set by preset %q", name)
	pv, err := src.parse()
	if err != nil {
		return fmt.Errorf("preset %q does not parse: %v", name, err) // a bug in presets.go
	}
	f.val = merge(pv, f.val)
	return nil
}

// Resolved returns the world as a world file, every field with its value
// after extends, the profile, -set and the preset: what `seedfall config`
// prints. Host paths are relative to the world file's directory, as a user
// writes them, unless absolute is set. Program fields that are unset
// (disk, files, upgrade_to, faults) are left out; every other field is
// there, defaults included. Fed back to seedfall from the same directory,
// it describes the same world.
func (w *World) Resolved(absolute bool) ([]byte, error) {
	hostPath := func(p string) string {
		if absolute || p == "" {
			return p
		}
		rel, err := filepath.Rel(w.Dir, p)
		if err != nil {
			return p
		}
		rel = filepath.ToSlash(rel)
		up := strings.Count(rel+"/", "../")
		if up > 0 && up >= strings.Count(filepath.ToSlash(w.Dir), "/") {
			return p // shares only the root with the world file: keep it absolute
		}
		if up == 0 {
			rel = "./" + rel
		}
		return rel
	}
	prog := func(p *Program) *jsonProgram {
		j := &jsonProgram{Name: p.Name, Pkg: hostPath(p.Pkg), Wasm: hostPath(p.Wasm), Args: p.Args, Env: p.Env,
			Faults: p.Faults, Disk: hostPath(p.Disk), UpgradeTo: hostPath(p.UpgradeTo)}
		if p.MemoryLimit > 0 {
			j.MemoryLimit = SizeText(p.MemoryLimit)
		}
		if j.Args == nil {
			j.Args = []string{}
		}
		if j.Env == nil {
			j.Env = []string{}
		}
		if len(p.Files) > 0 {
			j.Files = &orderedStrings{}
			for _, f := range p.Files {
				j.Files.keys = append(j.Files.keys, f.Path)
				j.Files.vals = append(j.Files.vals, hostPath(f.Host))
			}
		}
		return j
	}
	out := jsonWorld{
		Nodes:    []*jsonProgram{},
		Liveness: jsonLiveness{dur(w.Liveness.Within)},
		Duration: dur(w.Duration), Latency: rng(w.Latency), Links: []jsonLink{},
		FaultsAfterSetup: w.FaultsAfterSetup, Supervise: w.Supervise, NetOverlay: w.NetOverlay,
		CompatOverlay: w.CompatOverlay, Coverage: w.Coverage, CoveragePackages: w.CoveragePackages, Watchdog: dur(w.Watchdog), MemoryLimit: SizeText(w.MemoryLimit),
		Preempt:     jsonPreempt{string(w.Preempt.Strategy), w.Preempt.Interleave, w.Preempt.Depth, stepsJSON(w.Preempt.Steps), w.Preempt.Calls, w.Preempt.Loops},
		CPU:         jsonCPU{w.CPU.NsPerCall, w.CPU.Jitter},
		Consistency: w.Consistency,
	}
	for i := range w.Nodes {
		out.Nodes = append(out.Nodes, prog(&w.Nodes[i]))
	}
	for i := range w.Workloads {
		if p := &w.Workloads[i]; p.Path == "workload" {
			out.Workload = prog(p)
		} else {
			out.Workloads = append(out.Workloads, prog(p))
		}
	}
	if w.Finally != nil {
		out.Finally = prog(w.Finally)
	}
	for _, l := range w.Links {
		out.Links = append(out.Links, jsonLink{l.From, l.To, rng(l.Latency)})
	}
	f := &w.Faults
	out.Faults = jsonFaults{
		Preset: string(f.Preset), CrashPerSec: f.CrashPerSec, RestartAfter: rng(f.RestartAfter),
		PartitionPerSec: f.PartitionPerSec, PartitionFor: rng(f.PartitionFor), PartitionTopologies: stringsOf(f.PartitionTopologies),
		ClogPerSec: f.ClogPerSec, ClogFor: rng(f.ClogFor), ClogModes: stringsOf(f.ClogModes), ClogDelay: rng(f.ClogDelay),
		SwizzlePerSec: f.SwizzlePerSec, ResetPerSec: f.ResetPerSec, UDPLoss: f.UDPLoss, UDPDup: f.UDPDup,
		SlowPerSec: f.SlowPerSec, SlowFor: rng(f.SlowFor), SlowFactor: f.SlowFactor,
		TornWrites: f.TornWrites, ReorderWrites: f.ReorderWrites, SectorBytes: f.SectorBytes,
		CrashOnIO: f.CrashOnIO, FsyncEIO: f.FsyncEIO, DiskBytes: f.DiskBytes,
		WriteEIO: f.WriteEIO, WriteENOSPC: f.WriteENOSPC, ReadEIO: f.ReadEIO, ReadCorrupt: f.ReadCorrupt,
		LostWrite: f.LostWrite, MisdirectedWrite: f.MisdirectedWrite, CorruptOnCrash: f.CorruptOnCrash,
		BitrotPerSec: f.BitrotPerSec, DiskLatency: rng(f.DiskLatency), MmapEarlyWriteback: f.MmapEarlyWriteback,
		StrictDirs: f.StrictDirs, ClockSkew: dur(f.ClockSkew), PausePerSec: f.PausePerSec, PauseFor: rng(f.PauseFor),
		ClockJumpPerSec: f.ClockJumpPerSec, ClockJumpMax: dur(f.ClockJumpMax),
		Buggify: f.Buggify, IncludeWorkload: f.IncludeWorkload, Swarm: f.Swarm,
	}
	if f.ReorderWrites {
		// fs_model without reorder_writes is refused, so leave it out
		// with it: the resolved world must load again.
		out.Faults.FSModel = string(f.FSModel)
	}
	return json.MarshalIndent(out, "", "  ")
}

func dur(d time.Duration) string { return d.String() }

func rng(r Range) [2]string { return [2]string{r.Min.String(), r.Max.String()} }

// The resolved world's JSON form, fields in the order of the spec's tables.
type jsonWorld struct {
	Nodes            []*jsonProgram `json:"nodes"`
	Workload         *jsonProgram   `json:"workload,omitempty"`
	Workloads        []*jsonProgram `json:"workloads,omitempty"`
	Finally          *jsonProgram   `json:"finally,omitempty"`
	Liveness         jsonLiveness   `json:"liveness"`
	Duration         string         `json:"duration"`
	Latency          [2]string      `json:"latency"`
	Links            []jsonLink     `json:"links"`
	FaultsAfterSetup bool           `json:"faults_after_setup"`
	Supervise        bool           `json:"supervise"`
	NetOverlay       bool           `json:"net_overlay"`
	CompatOverlay    bool           `json:"compat_overlay"`
	Coverage         bool           `json:"coverage,omitempty"`
	CoveragePackages []string       `json:"coverage_packages,omitempty"`
	Watchdog         string         `json:"watchdog"`
	MemoryLimit      string         `json:"memory_limit"`
	Preempt          jsonPreempt    `json:"preempt"`
	CPU              jsonCPU        `json:"cpu"`
	Faults           jsonFaults     `json:"faults"`
	Consistency      []string       `json:"consistency,omitempty"`
}

type jsonProgram struct {
	Name        string          `json:"name"`
	Pkg         string          `json:"pkg,omitempty"`
	Wasm        string          `json:"wasm,omitempty"`
	Args        []string        `json:"args"`
	Env         []string        `json:"env"`
	Faults      *bool           `json:"faults,omitempty"`
	Disk        string          `json:"disk,omitempty"`
	Files       *orderedStrings `json:"files,omitempty"`
	UpgradeTo   string          `json:"upgrade_to,omitempty"`
	MemoryLimit string          `json:"memory_limit,omitempty"`
}

// orderedStrings is a JSON object of strings in a fixed key order.
type orderedStrings struct{ keys, vals []string }

func (o *orderedStrings) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(o.vals[i])
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

type jsonLiveness struct {
	Within string `json:"within"`
}

type jsonLink struct {
	From    string    `json:"from,omitempty"`
	To      string    `json:"to,omitempty"`
	Latency [2]string `json:"latency"`
}

type jsonCPU struct {
	NsPerCall float64 `json:"ns_per_call"`
	Jitter    float64 `json:"jitter"`
}

// stepsJSON is preempt.steps as a world file writes it.
func stepsJSON(n int) any {
	if n == StepsAuto {
		return "auto"
	}
	return n
}

type jsonPreempt struct {
	Strategy   string `json:"strategy"`
	Interleave bool   `json:"interleave"`
	Depth      int    `json:"depth"`
	Steps      any    `json:"steps"` // a count, or "auto"
	Calls      int    `json:"calls"`
	Loops      bool   `json:"loops"`
}

type jsonFaults struct {
	Preset              string    `json:"preset,omitempty"`
	CrashPerSec         float64   `json:"crash_per_sec"`
	RestartAfter        [2]string `json:"restart_after"`
	PartitionPerSec     float64   `json:"partition_per_sec"`
	PartitionFor        [2]string `json:"partition_for"`
	PartitionTopologies []string  `json:"partition_topologies"`
	ClogPerSec          float64   `json:"clog_per_sec"`
	ClogFor             [2]string `json:"clog_for"`
	ClogModes           []string  `json:"clog_modes"`
	ClogDelay           [2]string `json:"clog_delay"`
	SwizzlePerSec       float64   `json:"swizzle_per_sec"`
	ResetPerSec         float64   `json:"reset_per_sec"`
	UDPLoss             float64   `json:"udp_loss"`
	UDPDup              float64   `json:"udp_dup"`
	SlowPerSec          float64   `json:"slow_per_sec"`
	SlowFor             [2]string `json:"slow_for"`
	SlowFactor          float64   `json:"slow_factor"`
	TornWrites          bool      `json:"torn_writes"`
	ReorderWrites       bool      `json:"reorder_writes"`
	FSModel             string    `json:"fs_model,omitempty"`
	SectorBytes         int64     `json:"sector_bytes"`
	CrashOnIO           float64   `json:"crash_on_io"`
	FsyncEIO            float64   `json:"fsync_eio"`
	DiskBytes           int64     `json:"disk_bytes"`
	WriteEIO            float64   `json:"write_eio"`
	WriteENOSPC         float64   `json:"write_enospc"`
	ReadEIO             float64   `json:"read_eio"`
	ReadCorrupt         float64   `json:"read_corrupt"`
	LostWrite           float64   `json:"lost_write"`
	MisdirectedWrite    float64   `json:"misdirected_write"`
	CorruptOnCrash      bool      `json:"corrupt_on_crash"`
	BitrotPerSec        float64   `json:"bitrot_per_sec"`
	DiskLatency         [2]string `json:"disk_latency"`
	MmapEarlyWriteback  float64   `json:"mmap_early_writeback"`
	StrictDirs          bool      `json:"strict_dirs"`
	ClockSkew           string    `json:"clock_skew"`
	PausePerSec         float64   `json:"pause_per_sec"`
	PauseFor            [2]string `json:"pause_for"`
	ClockJumpPerSec     float64   `json:"clock_jump_per_sec"`
	ClockJumpMax        string    `json:"clock_jump_max"`
	Buggify             bool      `json:"buggify"`
	IncludeWorkload     bool      `json:"include_workload"`
	Swarm               bool      `json:"swarm"`
}
