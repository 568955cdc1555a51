package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

// A checkpoint that a run took on its way is a checkpoint of its parent:
// a later run that keeps the parent's past forks from it, even when the
// run that took it dropped a fault at an operation that fires after it
// (as shrink's candidates do), and is the run from scratch.
func TestForkFromAChildsCheckpoint(t *testing.T) {
	p := prepareFile(t, "../examples/kvlog/seedfall.fixed.json")
	// The parent: the server crashes at its 40th write of the log.
	parent := run(t, p, 1, &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{Kind: KindCrashIO, Node: "server", Op: 40, Path: "data/kv.log", Until: time.Millisecond},
	}}).Schedule
	i := slices.IndexFunc(parent.Faults, func(f faults.Fault) bool { return f.Kind == KindCrashIO })
	if i < 0 || parent.Faults[i].At <= 0 {
		t.Fatalf("the crash at the 40th write did not fire: %v", parent.Faults)
	}
	at := parent.Faults[i].At / 2
	forks := Forks{MinSaved: -1} // fork whatever it saves: kvlog's runs take milliseconds
	forks.Ran(p, 1, parent, run(t, p, 1, parent))

	// The first child drops the crash: it takes a checkpoint at its
	// first change (the fault's At is past it).
	child := *parent
	child.Faults = slices.Delete(slices.Clone(parent.Faults), i, i+1)
	fork := forks.From(p, 1, parent, at)
	if fork.From != nil {
		t.Fatal("the first child forked: no checkpoint was taken yet")
	}
	opt := RunOptions{Seed: 1, Schedule: &child}
	fork.Apply(&opt)
	if len(opt.Checkpoints) != 1 {
		t.Fatalf("the first child takes no checkpoint: %+v", opt)
	}
	res, err := p.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	fork.Done(res)
	if res.Checkpoints != nil {
		t.Error("the checkpoint stayed in the child's result")
	}

	// The second keeps the crash and branches a little later: it forks
	// from the first's checkpoint, and is the run from scratch.
	second := *parent
	second.Branches = append(slices.Clone(parent.Branches), faults.Branch{At: at + at/4, Key: 7})
	fork = forks.Branch(p, 1, &second)
	if fork.From == nil || fork.From.At != at {
		t.Fatalf("the second child does not fork from the checkpoint at %v: %+v", at, fork)
	}
	opt = RunOptions{Seed: 1, Schedule: &second}
	fork.Apply(&opt)
	forked, err := p.Run(context.Background(), opt)
	if err != nil {
		t.Fatalf("the fork from a child's checkpoint: %v", err)
	}
	if scratch := run(t, p, 1, &second); forked.Digest != scratch.Digest {
		t.Fatalf("the fork is not the run from scratch (%s %s; from scratch %s %s)", forked.Class, forked.Reason, scratch.Class, scratch.Reason)
	}
	if forks.Forked() != 1 {
		t.Errorf("%d runs forked; want the second", forks.Forked())
	}
}
