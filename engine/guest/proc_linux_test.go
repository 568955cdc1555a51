package guest

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The kernel sends the parent-death signal when the thread that started
// the child ends, not the process; Go ends the thread of a goroutine that
// exits while locked to it. A child that runCommand started must outlive
// any number of such threads.
func TestChildOutlivesEndedThreads(t *testing.T) {
	done := make(chan error, 1)
	go func() { done <- runCommand(childCommand(context.Background(), "sleep", "1")) }()
	deadline := time.Now().Add(800 * time.Millisecond)
	for time.Now().Before(deadline) {
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread() // and never unlocked: the thread ends with the goroutine
			}()
		}
		wg.Wait()
		runtime.Gosched()
	}
	if err := <-done; err != nil {
		t.Fatalf("the child was killed: %v", err)
	}
}

// A cancelled command dies with its whole process group.
func TestCancelKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cmd := childCommand(ctx, "sh", "-c", "sleep 10 & sleep 11")
	var out bytes.Buffer
	cmd.Stdout = &out // a pipe, which the sleeps hold open while they live
	time.AfterFunc(200*time.Millisecond, cancel)
	begin := time.Now()
	if err := runCommand(cmd); err == nil {
		t.Fatal("the cancelled command succeeded")
	}
	// Wait returns only once the pipes close, and the sleeps hold them
	// open: a quick return means they died too (WaitDelay is 10s).
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("the cancelled command took %v to end", took)
	}
}
