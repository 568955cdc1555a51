package repl

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	starjson "go.starlark.net/lib/json"
	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// fakeEnv stands in for the workbench: worlds, runs and schedules with
// the contract's names, whose "digest" is a hash of the seed and schedule,
// so that replaying a session can be checked without running a simulation.
type fakeEnv struct {
	out     io.Writer
	cancels int
	runs    int
	// progress hears "run seed N" before each run, which then takes slow,
	// as starlark.Options.Progress does.
	progress func(string)
	slow     time.Duration
}

func (e *fakeEnv) Cancel() { e.cancels++ }

func (e *fakeEnv) NewThread(name string) *sl.Thread {
	th := &sl.Thread{Name: name, Print: func(_ *sl.Thread, msg string) { fmt.Fprintln(e.out, msg) }}
	th.Load = func(th *sl.Thread, module string) (sl.StringDict, error) {
		return sl.ExecFileOptions(FileOptions, th, module, nil, e.Predeclared())
	}
	return th
}

func (e *fakeEnv) Predeclared() sl.StringDict {
	return sl.StringDict{
		"json": starjson.Module,
		"load_config": sl.NewBuiltin("load_config", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			var path string
			if err := sl.UnpackArgs(b.Name(), args, kw, "path", &path); err != nil {
				return nil, err
			}
			return fakeWorld(path), nil
		}),
		"world": sl.NewBuiltin("world", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			return fakeWorld("inline"), nil
		}),
		"run": sl.NewBuiltin("run", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			var w sl.Value
			var seed int
			var sch sl.Value = sl.None
			if err := sl.UnpackArgs(b.Name(), args, kw, "w", &w, "seed?", &seed, "schedule?", &sch); err != nil {
				return nil, err
			}
			e.runs++
			if e.progress != nil {
				e.progress(fmt.Sprintf("run seed %d", seed))
			}
			time.Sleep(e.slow)
			s := &fakeSchedule{s: faults.Schedule{Seed: uint64(seed), Duration: 10 * time.Second, Faults: []faults.Fault{
				{At: 300 * time.Millisecond, Kind: "crash", Node: "server", Until: 350 * time.Millisecond},
				{At: 900 * time.Millisecond, Kind: "pause", Node: "client", Until: 950 * time.Millisecond},
			}}}
			if fs, ok := sch.(*fakeSchedule); ok {
				s = fs
			}
			return &fakeRun{seed: seed, sch: s}, nil
		}),
		"replay": sl.NewBuiltin("replay", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			var r *fakeRun
			var sch sl.Value = sl.None
			if err := sl.UnpackArgs(b.Name(), args, kw, "r", &r, "schedule?", &sch); err != nil {
				return nil, err
			}
			e.runs++
			out := &fakeRun{seed: r.seed, sch: r.sch}
			if fs, ok := sch.(*fakeSchedule); ok {
				out.sch = fs
			}
			return out, nil
		}),
		"fault": sl.NewBuiltin("fault", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			m := map[string]any{}
			for _, p := range kw {
				k, _ := sl.AsString(p[0])
				if s, ok := sl.AsString(p[1]); ok {
					m[k] = s
				} else {
					m[k] = p[1].String()
				}
			}
			j, _ := json.Marshal(m)
			var f faults.Fault
			if err := json.Unmarshal(j, &f); err != nil {
				return nil, fmt.Errorf("fault: %v", err)
			}
			return &fakeFault{f}, nil
		}),
	}
}

func fakeWorld(file string) sl.Value {
	return starlarkstruct.FromStringDict(sl.String("world"), sl.StringDict{
		"file":     sl.String(file),
		"nodes":    sl.NewList([]sl.Value{starlarkstruct.FromStringDict(starlarkstruct.Default, sl.StringDict{"name": sl.String("server")})}),
		"workload": sl.NewDict(0),
	})
}

type fakeFault struct{ f faults.Fault }

func (f *fakeFault) String() string        { return faults.Describe(f.f) }
func (f *fakeFault) Type() string          { return "fault" }
func (f *fakeFault) Freeze()               {}
func (f *fakeFault) Truth() sl.Bool        { return true }
func (f *fakeFault) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable") }

type fakeSchedule struct{ s faults.Schedule }

func (s *fakeSchedule) String() string {
	return fmt.Sprintf("<schedule of seed %d, %d faults>", s.s.Seed, len(s.s.Faults))
}
func (s *fakeSchedule) Type() string          { return "schedule" }
func (s *fakeSchedule) Freeze()               {}
func (s *fakeSchedule) Truth() sl.Bool        { return true }
func (s *fakeSchedule) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable") }
func (s *fakeSchedule) AttrNames() []string {
	return []string{"add", "duration", "faults", "remove", "seed", "shift", "to_json"}
}

func (s *fakeSchedule) Attr(name string) (sl.Value, error) {
	edit := func(e faults.Edits) (sl.Value, error) {
		out, err := faults.Edit(&s.s, e)
		if err != nil {
			return nil, err
		}
		return &fakeSchedule{*out}, nil
	}
	switch name {
	case "seed":
		return sl.MakeUint64(s.s.Seed), nil
	case "faults":
		var l []sl.Value
		for _, f := range s.s.Faults {
			l = append(l, &fakeFault{f})
		}
		return sl.NewList(l), nil
	case "to_json":
		return sl.NewBuiltin("to_json", func(*sl.Thread, *sl.Builtin, sl.Tuple, []sl.Tuple) (sl.Value, error) {
			b, err := json.Marshal(&s.s)
			return sl.String(b), err
		}).BindReceiver(s), nil
	case "remove":
		return sl.NewBuiltin("remove", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			var i int
			if err := sl.UnpackArgs(b.Name(), args, kw, "i", &i); err != nil {
				return nil, err
			}
			return edit(faults.Edits{Remove: []int{i}})
		}).BindReceiver(s), nil
	case "shift":
		return sl.NewBuiltin("shift", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			var i int
			var by string
			if err := sl.UnpackArgs(b.Name(), args, kw, "i", &i, "by", &by); err != nil {
				return nil, err
			}
			sh, err := faults.ParseShift(fmt.Sprintf("%d=%s", i, by))
			if err != nil {
				return nil, err
			}
			return edit(faults.Edits{Shift: []faults.Shift{sh}})
		}), nil // unbound, as the workbench's methods are
	case "add":
		return sl.NewBuiltin("add", func(th *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			var f *fakeFault
			if err := sl.UnpackArgs(b.Name(), args, kw, "f", &f); err != nil {
				return nil, err
			}
			return edit(faults.Edits{Add: []faults.Fault{f.f}})
		}).BindReceiver(s), nil
	}
	return nil, nil
}

type fakeRun struct {
	seed int
	sch  *fakeSchedule
}

func (r *fakeRun) digest() string {
	b, _ := json.Marshal(&r.sch.s)
	return fmt.Sprintf("%x", sha256.Sum256(append(b, byte(r.seed))))[:16]
}
func (r *fakeRun) String() string {
	return fmt.Sprintf("<run seed %d, %d faults, digest %s>", r.seed, len(r.sch.s.Faults), r.digest())
}
func (r *fakeRun) Type() string          { return "run" }
func (r *fakeRun) Freeze()               {}
func (r *fakeRun) Truth() sl.Bool        { return true }
func (r *fakeRun) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable") }
func (r *fakeRun) AttrNames() []string   { return []string{"digest", "schedule", "seed"} }
func (r *fakeRun) Attr(name string) (sl.Value, error) {
	switch name {
	case "seed":
		return sl.MakeInt(r.seed), nil
	case "digest":
		return sl.String(r.digest()), nil
	case "schedule":
		return r.sch, nil
	}
	return nil, nil
}
