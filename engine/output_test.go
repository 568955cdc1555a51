package engine

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/internal/wasi"
	"github.com/seedfall/seedfall/engine/trace"
)

// What a program prints costs the host bounded memory and bounded real
// time (issue 12, docs/limits.md "Output and the watchdog"). Each test here
// measures the host's peak memory where memory is the point (peakRSS, from
// /proc/self/status on Linux; elsewhere the memory checks are skipped).

// measured runs seed 1 of p and returns its result, the real time it took
// and how far the process's peak resident memory rose above what it was
// when the run began (-1 where that cannot be measured).
func measured(t *testing.T, p *Prepared) (*Result, time.Duration, int64) {
	t.Helper()
	// The GC is asked to keep what it manages within 192 MiB of what it
	// holds now, so that the figure measures what the run keeps rather
	// than how much garbage a GC paced for the other tests' heap lets pile
	// up; and to a fixed GOGC, so that it does not depend on the
	// environment.
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(ms.Sys-ms.HeapReleased) + 192<<20))
	base, ok := resetPeakRSS()
	start := time.Now()
	res, err := p.Run(context.Background(), RunOptions{Seed: 1})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	rise := int64(-1)
	if ok {
		rise = peakRSS() - base
	}
	return res, took, rise
}

// A line of 300 MB without a newline, in writes of 4 KiB and of 64 KiB:
// the host keeps 1 MiB of it, counts the rest as it passes, and the line
// reaches the trace once, cut, with the count of bytes left out. Each byte
// is looked at once, so it takes well under a second.
func TestLongLineIsCut(t *testing.T) {
	const total = 300_000_000
	for _, write := range []string{"4096", "65536"} {
		t.Run(write, func(t *testing.T) {
			p := prepare(t, `{"watchdog": "2s", "nodes": [], "workload": {"name": "c", "pkg": "./flood", "args": ["-bytes", "300000000", "-write", "`+write+`"]}}`)
			res, took, rise := measured(t, p)
			if !res.Passed {
				t.Fatalf("%s %s after %v\n%s", res.Class, res.Reason, took, short(res))
			}
			var long []trace.Line
			for _, l := range res.Lines {
				if l.Kind == trace.Stdout && len(l.Text) > 100 {
					long = append(long, l)
				}
			}
			marker := fmt.Sprintf("…(cut, %d bytes)", total-wasi.MaxLine)
			if len(long) != 1 || len(long[0].Text) != wasi.MaxLine+len(marker) || !strings.HasSuffix(long[0].Text, marker) || !strings.HasPrefix(long[0].Text, "abcdefghijklmnopqrstuvwxyzabc") {
				t.Fatalf("want one line of %d bytes ending %q; got %d long lines\n%s", wasi.MaxLine, marker, len(long), short(res))
			}
			if !strings.Contains(output(res, "c"), "c#1 | flooded 300000000 bytes\n") {
				t.Fatalf("the line after the long one is missing:\n%s", short(res))
			}
			t.Logf("%d bytes in writes of %s: %v, peak memory +%d MiB", total, write, took, rise>>20)
			if took > 10*time.Second {
				t.Errorf("took %v: the long line is handled in more than linear time", took)
			}
			if rise > 64<<20 {
				t.Errorf("peak memory rose by %d MiB: more than the 1 MiB of the line is kept", rise>>20)
			}
		})
	}
}

// A program that writes without end, 64 MiB a call and never a newline,
// is stopped by a 2s watchdog within a few seconds: the watchdog's check
// at the entry of every host call stops it, where its loop budget alone
// would let it run for about a minute.
func TestWatchdogStopsHostCalls(t *testing.T) {
	p := prepare(t, `{"watchdog": "2s", "nodes": [], "workload": {"name": "c", "pkg": "./flood", "args": ["-write", "67108864"]}}`)
	if !p.Programs[0].budget {
		t.Fatal("the flood guest carries no loop budget")
	}
	res, took, rise := measured(t, p)
	t.Logf("stopped after %v, peak memory +%d MiB", took, rise>>20)
	if res.Passed || res.Class != ClassWatchdog || !strings.HasPrefix(res.Reason, "c#1 ran for more than 2s of real time without yielding") {
		t.Fatalf("got %v %q %q\n%s", res.Passed, res.Class, res.Reason, short(res))
	}
	if took > 10*time.Second {
		t.Fatalf("the watchdog of 2s stopped the program after %v", took)
	}
	out := output(res, "c")
	if !strings.Contains(out, "c#1 - stopped by the watchdog") || !strings.Contains(out, "…(cut, ") {
		t.Fatalf("want the cut line and the watchdog's stop:\n%s", short(res))
	}
}

// A gigabyte printed in lines of 1000 bytes: the run keeps the first
// trace.KeepHead and the last trace.KeepTail bytes of its lines, one line
// in between says what was not kept, and the digest, computed over every
// line, is the same run after run. Under -short, 200 MB.
func TestFloodOfLinesKeepsBoundedMemory(t *testing.T) {
	total := 1_000_000_000
	if testing.Short() {
		total = 200_000_000
	}
	p := prepare(t, fmt.Sprintf(`{"nodes": [], "workload": {"name": "c", "pkg": "./flood", "args": ["-bytes", "%d", "-write", "64000", "-line", "1000"]}}`, total))
	var digest string
	for i := 0; i < 2; i++ {
		res, took, rise := measured(t, p)
		t.Logf("%d bytes in lines: %v, peak memory +%d MiB", total, took, rise>>20)
		if !res.Passed {
			t.Fatalf("%s %s\n%s", res.Class, res.Reason, short(res))
		}
		if i == 1 && res.Digest != digest {
			t.Fatalf("the same seed ran twice with digests %s and %s", digest, res.Digest)
		}
		digest = res.Digest
		if rise > 320<<20 {
			t.Errorf("peak memory rose by %d MiB for %d MB of output", rise>>20, total/1e6)
		}
		// Every line is either kept or counted by the gap line.
		var gaps []trace.Line
		kept, keptBytes := 0, 0
		for _, l := range res.Lines {
			switch {
			case l.Gap():
				gaps = append(gaps, l)
			case l.Kind == trace.Stdout:
				kept++
				keptBytes += len(l.Text)
			}
		}
		if len(gaps) != 1 {
			t.Fatalf("%d gap lines, want 1", len(gaps))
		}
		t.Logf("the gap: %s", gaps[0].String())
		var lost, lostBytes int
		if _, err := fmt.Sscanf(gaps[0].Text, "%d lines (%d bytes)", &lost, &lostBytes); err != nil {
			t.Fatalf("gap line %q: %v", gaps[0].Text, err)
		}
		// The guest's lines, then "" and "flooded N bytes".
		if lines := total/1000 + 2; kept+lost != lines {
			t.Errorf("%d lines kept and %d not kept, want %d in all", kept, lost, lines)
		}
		if textBytes := total/1000*999 + len(fmt.Sprintf("flooded %d bytes", total)); keptBytes+lostBytes != textBytes {
			t.Errorf("%d bytes kept and %d not kept, want %d in all", keptBytes, lostBytes, textBytes)
		}
		if !strings.HasSuffix(gaps[0].Text, "not kept: a run keeps the first 48 MiB and the last 16 MiB of its lines in memory; the digest covers every line") || gaps[0].Node != "world" || gaps[0].Kind != trace.Event {
			t.Errorf("gap line %q", gaps[0].String())
		}
		first, last := res.Lines[0], res.Lines[len(res.Lines)-1]
		if first.Text != "start" || last.Text != "exit 0" || res.Lines[len(res.Lines)-2].Text != fmt.Sprintf("flooded %d bytes", total) {
			t.Errorf("the run's start and end are not kept: first %q, last %q", first.String(), last.String())
		}
		// Logs of one program show the gap too.
		if !strings.Contains(output(res, "c"), " world - "+gaps[0].Text) {
			t.Errorf("the gap line is missing from the program's logs")
		}
	}
}

// short is a run's trace for a failure message, without its long lines.
func short(res *Result) string {
	var b strings.Builder
	for _, l := range res.Lines {
		s := l.String()
		if len(s) > 200 {
			s = s[:100] + fmt.Sprintf("...(%d bytes)...", len(s)-200) + s[len(s)-100:]
		}
		b.WriteString(s + "\n")
	}
	return b.String()
}
