// Package pauseoverlay makes guests that pause (issue 15): the
// `go build -overlay` files that make a GOOS=wasip1 guest return to its host
// after package init and, optionally, whenever it is idle, instead of
// blocking a host goroutine; and the host side that snapshots a paused
// guest and restores it into fresh instances of the same compiled module.
// The engine uses the snapshot point, Program.Take, Restore and Reset to
// start every program from its post-init snapshot (engine/snapshot.go).
// The idle pause (Options.Idle) is the prototype's, whose host side
// (booting under wazero's WASI, copy-on-write snapshots, and a toy world
// of guests that pause when idle) is in scripts/experiments/pause/proto.
//
// # How a Go wasm guest pauses
//
// Go's wasm port keeps every goroutine's state in linear memory: the
// WebAssembly stack is a cache that the runtime unwinds on every goroutine
// switch, and wasm_pc_f_loop (runtime/asm_wasm.s) calls the function whose
// resume point is stored at -8(SP) until the PAUSE global is set. js/wasm
// uses runtime.pause to return to JavaScript while idle; wasip1 never
// pauses. The overlay adds runtime/pause_seedfall_wasip1.go, whose
// seedfallPause sets SP to its caller's frame and calls pause: every
// WebAssembly frame unwinds, wasm_pc_f_loop returns, and so does the export
// the host called (_start at first). guest.ExportPause exports
// wasm_pc_f_loop as guest.ResumeExport and every mutable global; calling
// the export continues the guest right after its seedfallPause.
//
// Patches, each inserted after one exact line of the installed GOROOT:
//
//   - src/runtime/proc.go, runtime.main: after `fn := main_main`, every
//     package's init done, seedfallBeforeMain asks the host whether to pause
//     there (the snapshot point). After each resume it re-seeds the
//     runtime's random state from random_get (seedfallReseed), so that a
//     copy of the snapshot draws map order and select choices from its own
//     stream.
//   - src/runtime/proc.go, gopreempt_m: a goroutine preempted (by the
//     engine's preempt strategies, engine/preempt.go) first lets in the
//     goroutines that the network readied meanwhile: seedfallPollAtPreempt
//     (runtime/preempt_seedfall_wasip1.go) polls without blocking and puts
//     them on the run queue ahead of it, as another core would run them on
//     Linux. Without it the runtime polls only when it has nothing to run.
//   - src/runtime/netpoll_wasip1.go, netpoll (with Options.Idle): when the
//     scheduler has nothing to run and would block in poll_oneoff
//     (delay != 0), it offers the host to pause instead. Once resumed, the
//     netpoll returns no goroutine, as after an interrupted poll; the
//     scheduler then runs due timers and polls without waiting.
//   - with Options.Cover, for a guest built with -cover: src/runtime/proc.go
//     calls seedfallCover before the snapshot point (cover_meta and
//     cover_counters below), and internal/coverage/cfile's InitHook returns
//     at once: the guest writes no coverage files.
//
// # Host ABI: module "seedfall"
//
// snapshot_point() -> i32
//
//	Called once after package init, and again after every resume from it.
//	Nonzero: the guest pauses (the export returns). Zero: main.main runs.
//	Between the pause and the resume the host may copy the memory and the
//	exported mutable globals, and resume any number of new instances of
//	the same compiled module from the copy (Snapshot, Restore).
//
// cover_meta(ptr, len, id), cover_counters(ptr, nwords) (with Options.Cover)
//
//	Called after package init, before snapshot_point: once for each
//	covered package, its metadata blob and the ID its counters carry; then
//	once for each region of 32-bit counters. Nothing is returned.
//
// idle(subs_ptr, nsubs) -> i32 (with Options.Idle)
//
//	The guest has nothing to run and would now block in poll_oneoff on
//	nsubs 48-byte WASI subscriptions at subs_ptr (the first a relative
//	clock when a timer is pending). Nonzero: the guest pauses instead; the
//	host resumes it when it chooses, normally once one subscription is due
//	(a resume with nothing due is harmless: the guest pauses again). Zero:
//	it blocks in poll_oneoff as without the overlay.
//
// # Host side
//
// A Program is a module compiled without data segments, to restore into.
// Program.Take copies a paused instance (memory and exported mutable
// globals); Program.Restore makes a new instance from the copy,
// Program.RestoreFrom one from a copy held in another form, and
// Program.Reset and Program.RestoreInto put a live one back to a copy in
// place; the function of ResumeFunc runs either on. The engine boots the
// instance that pauses (engine/snapshot.go), its WASI (engine/internal/wasi)
// answering snapshot_point.
//
// What the host must keep equal between a snapshot and its copies, what
// cannot be, and the measurements, are in
// scripts/experiments/pause/README.md.
package pauseoverlay

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TestedWith is the Go release the anchors were taken from.
const TestedWith = "go1.26"

// NewFile is the GOROOT-relative file the overlay adds.
const NewFile = "src/runtime/pause_seedfall_wasip1.go"

//go:embed pause_seedfall_wasip1.go.in
var newFile []byte

// CoverFile is the file Options.Cover adds.
const CoverFile = "src/runtime/cover_seedfall_wasip1.go"

//go:embed cover_seedfall_wasip1.go.in
var coverFile []byte

// PollFile is the GOROOT-relative file the overlay adds for the poll at a
// preemption.
const PollFile = "src/runtime/preempt_seedfall_wasip1.go"

//go:embed preempt_seedfall_wasip1.go.in
var pollFile []byte

// hook inserts text after the one line of a file that equals anchor
// (leading and trailing blanks ignored).
type hook struct {
	file   string // GOROOT-relative, slash-separated
	anchor string
	insert string
	idle   bool // only with Options.Idle
	cover  bool // only with Options.Cover
}

var hooks = []hook{
	{
		file:   "src/runtime/proc.go",
		anchor: "fn := main_main // make an indirect call, as the linker doesn't know the address of the main package when laying down the runtime",
		insert: "\tseedfallBeforeMain() // seedfall: the snapshot point, after every package's init\n",
	},
	{
		file:   "src/runtime/netpoll_wasip1.go",
		anchor: "clear(evts)",
		insert: "\t// seedfall: pause instead of blocking, if the host wants it.\n" +
			"\tif delay != 0 && seedfallIdle(unsafe.Pointer(&pollsubs[0]), uint32(len(pollsubs))) != 0 {\n" +
			"\t\tseedfallPause()\n" +
			"\t\tunlock(&mtx)\n" +
			"\t\treturn gList{}, 0\n" +
			"\t}\n",
		idle: true,
	},
	{
		file:   "src/runtime/proc.go",
		anchor: "fn := main_main // make an indirect call, as the linker doesn't know the address of the main package when laying down the runtime",
		insert: "\tseedfallCover() // seedfall: where the coverage counters are\n",
		cover:  true,
	},
	{
		// The host reads the counters: the guest writes no coverage files
		// (and, without GOCOVERDIR, would warn on stderr that it cannot).
		file:   "src/internal/coverage/cfile/hooks.go",
		anchor: "func InitHook(istest bool) {",
		insert: "\tif true {\n\t\treturn // seedfall: the host reads the counters from memory\n\t}\n",
		cover:  true,
	},
	{
		file:   "src/runtime/proc.go",
		anchor: "func gopreempt_m(gp *g) {",
		insert: "\tseedfallPollAtPreempt() // seedfall: let goroutines that the network readied run before gp\n",
	},
}

// Options selects the optional parts of the overlay.
type Options struct {
	// Idle makes the runtime offer to pause when it would block in
	// poll_oneoff. The guest then imports seedfall.idle.
	Idle bool
	// Cover is for a guest built with -cover: after package init, before
	// the snapshot point, it calls seedfall.cover_meta for each covered
	// package and seedfall.cover_counters for each counter region, and it
	// writes no coverage files of its own.
	Cover bool
}

// Files returns the overlay for `go build -overlay`, keyed by
// GOROOT-relative slash path, for the Go installation at goroot. It fails,
// naming the Go version and the file, when the sources lack a line a hook
// goes after.
func Files(goroot string, opts Options) (map[string][]byte, error) {
	version := goVersion(goroot)
	out := map[string][]byte{NewFile: bytes.Clone(newFile), PollFile: bytes.Clone(pollFile)}
	if opts.Cover {
		out[CoverFile] = bytes.Clone(coverFile)
	}
	for _, h := range hooks {
		if h.idle && !opts.Idle || h.cover && !opts.Cover {
			continue
		}
		src, ok := out[h.file]
		if !ok {
			var err error
			if src, err = os.ReadFile(filepath.Join(goroot, filepath.FromSlash(h.file))); err != nil {
				return nil, fmt.Errorf("pause overlay: %s: cannot read %s: %v (is %s a Go installation?)", version, h.file, err, goroot)
			}
			if bytes.Contains(src, []byte("seedfall")) {
				return nil, fmt.Errorf("pause overlay: %s: %s is already patched by seedfall (the GOROOT itself was modified)", version, h.file)
			}
		}
		patched, err := insertAfter(src, h.anchor, h.insert)
		if err != nil {
			return nil, fmt.Errorf("pause overlay: %s: %s: %v; the overlay was made for %s", version, h.file, err, TestedWith)
		}
		out[h.file] = patched
	}
	return out, nil
}

// insertAfter inserts text after the one line of src equal to anchor.
func insertAfter(src []byte, anchor, text string) ([]byte, error) {
	lines := strings.SplitAfter(string(src), "\n")
	at, count := -1, 0
	for i, l := range lines {
		if strings.TrimSpace(l) == anchor {
			at, count = i, count+1
		}
	}
	if count != 1 {
		return nil, fmt.Errorf("the line `%s` appears %d times, want exactly once", anchor, count)
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i == at {
			if !strings.HasSuffix(l, "\n") {
				b.WriteString("\n")
			}
			b.WriteString(text)
		}
	}
	return []byte(b.String()), nil
}

// goVersion reads the release from GOROOT/VERSION ("go1.26.8").
func goVersion(goroot string) string {
	b, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return "unknown Go version"
	}
	v, _, _ := strings.Cut(string(b), "\n")
	if v = strings.TrimSpace(v); v == "" {
		return "unknown Go version"
	}
	return v
}
