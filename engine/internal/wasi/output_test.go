package wasi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/disk"
)

// outputOf feeds writes to one stream of a process in pieces of size bytes
// and returns the lines it passes on, the partial last line flushed.
func outputOf(stream int, size int, writes ...string) []string {
	var lines []string
	p := &Process{Output: func(s int, line []byte) {
		if s != stream {
			panic("wrong stream")
		}
		lines = append(lines, string(line))
	}}
	for _, w := range writes {
		for len(w) > 0 {
			n := min(size, len(w))
			p.writeOutput(stream, []byte(w[:n]))
			w = w[n:]
		}
	}
	p.FlushOutput()
	return lines
}

// A line longer than MaxLine reaches the output once, cut to MaxLine bytes
// (back to a rune start) and marked with the bytes left out; shorter lines
// pass whole, whatever the sizes of the writes.
func TestLongLinesAreCut(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name   string
		writes []string
		want   []string
	}{
		{"exactly MaxLine", []string{x(MaxLine) + "\nnext\n"}, []string{x(MaxLine), "next"}},
		{"one byte more", []string{x(MaxLine+1) + "\nnext\n"}, []string{x(MaxLine) + "…(cut, 1 bytes)", "next"}},
		{"3 MiB", []string{x(3<<20) + "\n"}, []string{x(MaxLine) + fmt.Sprintf("…(cut, %d bytes)", 2<<20)}},
		{"over many writes", []string{"a", x(MaxLine), x(MaxLine), "\nb"}, []string{"a" + x(MaxLine-1) + fmt.Sprintf("…(cut, %d bytes)", MaxLine+1), "b"}},
		{"unfinished at the end", []string{"start\n", x(2 * MaxLine)}, []string{"start", x(MaxLine) + fmt.Sprintf("…(cut, %d bytes)", MaxLine)}},
		// "é" is two bytes: one straddling the limit is left out whole.
		{"a rune at the limit", []string{x(MaxLine-1) + "éé\n"}, []string{x(MaxLine-1) + "…(cut, 4 bytes)"}},
		{"a rune just fits", []string{x(MaxLine-2) + "éé\n"}, []string{x(MaxLine-2) + "é…(cut, 2 bytes)"}},
		{"short lines", []string{"a\nb", "c\n\nd"}, []string{"a", "bc", "", "d"}},
	} {
		for _, size := range []int{1 << 30, 4096, 7} {
			for _, stream := range []int{1, 2} {
				got := outputOf(stream, size, tc.writes...)
				if len(got) != len(tc.want) {
					t.Fatalf("%s, writes of %d: %d lines, want %d", tc.name, size, len(got), len(tc.want))
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("%s, writes of %d: line %d is %d bytes ending %q, want %d bytes ending %q", tc.name, size, i,
							len(got[i]), got[i][max(0, len(got[i])-20):], len(tc.want[i]), tc.want[i][max(0, len(tc.want[i])-20):])
					}
				}
			}
		}
	}
}

// A long line costs the host MaxLine+1 bytes, however long it is.
func TestLongLineBuffer(t *testing.T) {
	p := &Process{Output: func(int, []byte) {}}
	chunk := []byte(strings.Repeat("y", 64<<10))
	for i := 0; i < 1000; i++ { // 64 MB
		p.writeOutput(1, chunk)
	}
	if n := cap(p.lineBuf[1]); n > 2*(MaxLine+1) {
		t.Fatalf("the line buffer grew to %d bytes", n)
	}
	if want := 1000*len(chunk) - (MaxLine + 1); p.lineCut[1] != want {
		t.Fatalf("counted %d bytes left out, want %d", p.lineCut[1], want)
	}
}

// A host call of a process the watchdog stopped ends the guest before the
// call does anything; without the watchdog it runs as it is.
func TestWatchedStopsOverdue(t *testing.T) {
	h := newHostile(t, 1)
	calls := 0
	w := watched("fd_write", "wasi_snapshot_preview1/fd_write", func(context.Context, api.Module, []uint64) { calls++ }, false)
	w(h.ctx, h.m, nil)
	if calls != 1 {
		t.Fatalf("%d calls, want 1", calls)
	}
	h.p.Interrupt()
	func() {
		defer func() {
			var ee *sys.ExitError
			if err, _ := recover().(error); !errors.As(err, &ee) || ee.ExitCode() != ExitKilled {
				t.Fatalf("an overdue call did not end the guest: %v", err)
			}
		}()
		w(h.ctx, h.m, nil)
	}()
	if calls != 1 {
		t.Fatal("the call ran although the process was overdue")
	}
}

// BenchmarkWatched is what the watchdog's check adds to a host call: the
// process found in the context and one atomic load. The context is built
// as the engine builds it, a value over the process.
func BenchmarkWatched(b *testing.B) {
	type other struct{}
	p := &Process{Name: "bench", Disk: disk.New(disk.Options{})}
	ctx := context.WithValue(WithProcess(context.Background(), p), other{}, 1)
	var calls int
	f := api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) { calls++ })
	s := make([]uint64, 1)
	b.Run("plain", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f(ctx, nil, s)
		}
	})
	w := watched("fd_write", "wasi_snapshot_preview1/fd_write", f, false)
	b.Run("watched", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w(ctx, nil, s)
		}
	})
}
