// Package world owns the world file, seedfall.json (or its TOML form): its
// typed form, parsing with file:line errors, the spec's defaults, and the
// checks that span fields.
package world

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Range is an inclusive range of durations, written ["1ms", "10ms"].
type Range struct{ Min, Max time.Duration }

// Role is what a program is for in the world.
type Role int

const (
	RoleNode     Role = iota // a crashable node: nodes[]
	RoleWorkload             // a checker: workload, workloads[]
	RoleFinally              // the check after every workload passed: finally
)

func (r Role) String() string {
	switch r {
	case RoleNode:
		return "node"
	case RoleWorkload:
		return "workload"
	case RoleFinally:
		return "finally"
	}
	return "unknown role"
}

// FileCopy is one entry of a program's "files": a host file copied onto the
// node's disk before it first starts.
type FileCopy struct {
	Path string // on the node's disk, slash-separated, relative, cleaned
	Host string // absolute, cleaned host path
}

// Program is a node, a workload or the finally check.
type Program struct {
	Name      string
	Pkg, Wasm string   // absolute, cleaned; exactly one is set
	Args      []string // passed after the program name
	Env       []string // "K=V"
	Faults    *bool    // nil: the role's default (see World.NodeFaults)
	Disk      string   // absolute host directory copied onto the disk, or ""
	Files     []FileCopy
	UpgradeTo string // absolute package directory run from the first restart on, or ""
	// MemoryLimit is the most linear memory the program may grow to, in
	// bytes; 0: the world's (World.MemoryLimitOf).
	MemoryLimit int64
	Role        Role
	Path        string // key path in the file, such as "nodes[1]" or "workload"
	Line        int    // line of the program's object
}

// Link overrides the latency of traffic from one program to another. An
// empty From or To matches any program.
type Link struct {
	From, To string
	Latency  Range
	Line     int
}

// Strategy says where the running goroutine of a node is preempted.
type Strategy string

const (
	StrategyNone   Strategy = "none"
	StrategyRandom Strategy = "random"
	StrategyPCT    Strategy = "pct"
	StrategyCalls  Strategy = "calls"
)

// MaxPreemptCalls is the largest preempt.calls, the length of the time
// slice that ends every node's run even under StrategyNone.
const MaxPreemptCalls = 4194304

// StepsAuto is preempt.steps "auto": pct sizes each node's span from the
// calls it really makes. It goes beyond the spec, whose default is
// 1048576 (SpecSteps): most programs make far fewer calls, and change
// points past a node's last call never fire.
const StepsAuto = 0

// SpecSteps is the spec's default for preempt.steps.
const SpecSteps = 1048576

// Preempt is the "preempt" object.
type Preempt struct {
	// Strategy is the effective strategy: StrategyRandom whenever
	// Interleave is true, since interleave is shorthand for it.
	Strategy   Strategy
	Interleave bool
	Depth      int // pct: bug depth d, giving d-1 change points per node
	// Steps is pct's span: change points fall in each node's first Steps
	// counted calls. StepsAuto, the default, sizes each node's span from
	// the calls it made in a calibration run of the world (engine/preempt.go).
	Steps int
	Calls int // calls: counted calls between preemptions
	Loops bool
}

// CPU is the "cpu" object: how guest work takes virtual time. It goes
// beyond the spec, which keeps CPU free (docs/how-it-works.md#cpu-time).
type CPU struct {
	// NsPerCall is the virtual time, in nanoseconds, that each counted call
	// (a function entry, and a loop iteration with preempt.loops) costs the
	// node; 0 makes CPU free.
	NsPerCall float64
	// Jitter spreads each stretch of work over NsPerCall times 1 - Jitter
	// to 1 + Jitter, drawn from the node's own stream.
	Jitter float64
}

// DefaultCPU returns the "cpu" object with nothing set.
func DefaultCPU() CPU { return CPU{NsPerCall: DefaultNsPerCall, Jitter: DefaultCPUJitter} }

// The defaults of the "cpu" object (measured: docs/how-it-works.md#cpu-time).
const (
	DefaultNsPerCall = 5
	DefaultCPUJitter = 0.25
	MaxNsPerCall     = 1e6
)

// Liveness is the "liveness" object. Within 0 means liveness mode is off.
type Liveness struct{ Within time.Duration }

// Profile is one entry of "profiles": a partial world merged over the
// world when -profile names it.
type Profile struct {
	Name string
	File string // the world file that defines it (or the last one to change it)
	Line int
}

// World is a parsed seedfall.json with every default applied.
type World struct {
	File string // path of the config as given
	Dir  string // its directory, absolute

	Nodes     []Program
	Workloads []Program // "workload" first, then "workloads" in order
	Finally   *Program

	Duration         time.Duration
	Latency          Range
	Links            []Link
	FaultsAfterSetup bool
	Supervise        bool
	NetOverlay       bool
	CompatOverlay    bool
	// Coverage builds every program with Go's coverage counters for
	// CoveragePackages (default: the program's own module), which the
	// host reads from the guest's memory (engine/cover).
	Coverage         bool
	CoveragePackages []string
	Watchdog         time.Duration
	MemoryLimit      int64 // bytes of linear memory each program may grow to, unless it sets its own
	Preempt          Preempt
	CPU              CPU
	Liveness         Liveness
	Faults           Faults
	// Consistency is the consistency models (Elle's names) that the
	// transactions recorded with sim.Txn must satisfy; nil means
	// DefaultConsistency.
	Consistency []string

	Extends  string    // as written in File, not resolved; "" when absent
	Files    []string  // the world files read: File, then the one it extends, and so on
	Profiles []Profile // every profile the files define
	Profile  string    // the profile merged over the world, or ""
	Sets     []string  // the -set overrides applied, as given

	set  []setField     // fields set to a non-default value, in file order
	line map[string]pos // where every key path the world sets is written
}

// pos is where a key is written: its source and line.
type pos struct {
	src  *source
	line int
}

// setField is a field the world sets to something other than its default.
type setField struct {
	path    string // with indices: "nodes[1].disk"
	generic string // with "[]": "nodes[].disk"
	at      pos
}

// Defaults of the world's own fields.
const (
	DefaultDuration = 30 * time.Second
	DefaultWatchdog = 30 * time.Second
	// DefaultConsistency is what transactions are checked for when the
	// world does not say: the strongest model, as in Elle.
	DefaultConsistency = "strict-serializable"
)

// DefaultMemoryLimit is memory_limit when the world does not set it: the
// linear memory one program may grow to. docs/limits.md has the peaks of the
// bundled examples it was chosen against.
const DefaultMemoryLimit = 512 << 20

// DefaultLatency is the default per-chunk network delay.
var DefaultLatency = Range{time.Millisecond, 10 * time.Millisecond}

// DefaultPreempt returns the "preempt" object with nothing set.
func DefaultPreempt() Preempt {
	return Preempt{Strategy: StrategyNone, Depth: 3, Steps: StepsAuto, Calls: 4096}
}

// Load reads and parses the world file at path, with the files it extends.
// Relative paths inside each file resolve against that file's directory.
// A file whose name ends in .toml is read as TOML, any other as JSON.
func Load(path string) (*World, error) {
	return LoadWith(path, Options{})
}

// LoadWith is Load with a profile and -set overrides merged over the world.
func LoadWith(path string, o Options) (*World, error) {
	data, err := ReadBounded(path, MaxConfigBytes)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read the world file: " + err.Error()}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return ParseWith(data, path, filepath.Dir(abs), o)
}

func unwrapPathError(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse parses a world file's contents. file names it in errors, and says
// its format: TOML when it ends in .toml, JSON otherwise; dir is the
// directory that relative paths in it, and the file it extends, resolve
// against.
func Parse(data []byte, file, dir string) (*World, error) {
	return ParseWith(data, file, dir, Options{})
}

// ParseWith is Parse with a profile and -set overrides.
func ParseWith(data []byte, file, dir string, o Options) (*World, error) {
	if !filepath.IsAbs(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, &Error{File: file, Msg: err.Error()}
		}
		dir = abs
	}
	if bytes.HasPrefix(data, []byte("\uFEFF")) {
		// Some editors start a file with a byte order mark; blank it
		// rather than cut it, so offsets and lines stay those of the file.
		data = append([]byte("   "), data[3:]...)
	}
	if len(data) > MaxConfigBytes {
		return nil, &Error{File: file, Msg: fmt.Sprintf("the world file has %d bytes, over the limit of %s", len(data), SizeText(MaxConfigBytes))}
	}
	src := newSource(file, data)
	src.dir, src.toml = filepath.Clean(dir), isTOML(file)
	root, files, err := compose(src, o)
	if err != nil {
		return nil, err
	}
	d := &decoder{top: src}
	w, err := d.world(root)
	if err != nil {
		return nil, err
	}
	w.Files, w.Profile, w.Sets = files, o.Profile, o.Set
	if err := w.check(); err != nil {
		return nil, err
	}
	return w, nil
}

// Programs returns every program: nodes, then workloads, then finally.
func (w *World) Programs() []*Program {
	ps := make([]*Program, 0, len(w.Nodes)+len(w.Workloads)+1)
	for i := range w.Nodes {
		ps = append(ps, &w.Nodes[i])
	}
	for i := range w.Workloads {
		ps = append(ps, &w.Workloads[i])
	}
	if w.Finally != nil {
		ps = append(ps, w.Finally)
	}
	return ps
}

// Program returns the program with the given name, or nil.
func (w *World) Program(name string) *Program {
	for _, p := range w.Programs() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// NodeFaults reports whether p takes the per-node faults: crashes, pauses,
// clock skew and jumps, slowdowns, connection resets and disk faults.
// Nodes do unless "faults": false; workloads only with "faults": true or
// faults.include_workload; the finally check never does.
func (w *World) NodeFaults(p *Program) bool {
	switch p.Role {
	case RoleNode:
		return p.Faults == nil || *p.Faults
	case RoleWorkload:
		if p.Faults != nil {
			return *p.Faults
		}
		return w.Faults.IncludeWorkload
	}
	return false
}

// MemoryLimitOf returns the bytes of linear memory p may grow to: its own
// memory_limit, else the world's.
func (w *World) MemoryLimitOf(p *Program) int64 {
	if p.MemoryLimit > 0 {
		return p.MemoryLimit
	}
	return w.MemoryLimit
}

// MemoryLimitField names the key that sets p's memory limit, for messages:
// "nodes[0].memory_limit" when p sets its own, else "memory_limit".
func (w *World) MemoryLimitField(p *Program) string {
	if p.MemoryLimit > 0 {
		return p.Path + ".memory_limit"
	}
	return "memory_limit"
}

// NetFaults reports whether partitions and clogs may cut p's links. They
// reach nodes and workloads alike unless "faults": false; the finally check
// runs on a healed network.
func (w *World) NetFaults(p *Program) bool {
	if p.Role == RoleFinally {
		return false
	}
	return p.Faults == nil || *p.Faults
}

// Line returns the line where the file sets the key path, such as
// "nodes[1].pkg" or "faults.crash_per_sec", or 0 when it does not.
func (w *World) Line(path string) int {
	return w.line[path].line
}

// Errorf returns an *Error about the key path, located at its line, for
// problems found after parsing (a package that does not build, say).
func (w *World) Errorf(path, format string, args ...any) error {
	at, ok := w.line[path]
	if !ok {
		return &Error{File: w.File, Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	return errIn(at.src, at.line, path, fmt.Sprintf(format, args...))
}
