package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/seedfall/seedfall/engine/session"
)

// errInterrupted is the cause of a context Ctrl-C cancelled. A command
// returns it bare once it has printed and written what finished before;
// wrapped (a run of seed 3 stopped at 1.2s: interrupted), it says where
// the command was when nothing had finished.
var errInterrupted = session.ErrInterrupted

// onInterrupt returns a context the first SIGINT or SIGTERM cancels, with
// errInterrupted as its cause: the runs in flight stop within a moment,
// and the command then shows what finished. A second signal exits at once
// with status 130. stop restores the default handling. Only the command
// line's commands use it: seedfall mcp's calls run with the call's context,
// which the client cancels.
func onInterrupt(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			cancel(errInterrupted)
		case <-done:
			return
		}
		select {
		case <-sig:
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel(nil)
	}
}

// interrupted reports whether ctx was cancelled by onInterrupt's signal.
func interrupted(ctx context.Context) bool { return session.Interrupted(ctx) }

// stoppedBy is err, or, when Ctrl-C caused it (a build or a run cut short
// before anything finished), an error that says only "interrupted".
func stoppedBy(ctx context.Context, err error) error {
	if err != nil && interrupted(ctx) {
		return fmt.Errorf("%w", errInterrupted)
	}
	return err
}
