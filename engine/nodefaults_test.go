package engine

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

const ms = time.Millisecond

// rounds parses clockwatch's lines: wall, mono and slept in ms, per round.
func rounds(t *testing.T, out string) [][3]int64 {
	t.Helper()
	re := regexp.MustCompile(`round (\d+) wall=(-?\d+)ms mono=(\d+)ms slept=(\d+)ms`)
	var got [][3]int64
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		var v [3]int64
		for i := range v {
			v[i], _ = strconv.ParseInt(m[i+2], 10, 64)
		}
		got = append(got, v)
	}
	return got
}

// What a program reads from its clocks under each node fault, against a
// schedule given by hand.
func TestNodeFaultsAsTheProgramSeesThem(t *testing.T) {
	p := prepare(t, `{"cpu": {"ns_per_call": 0}, "nodes": [], "workload": {"name": "w", "pkg": "./clockwatch", "args": ["-n", "4", "-every", "100ms"]}}`)
	for _, tc := range []struct {
		name   string
		faults []faults.Fault
		want   [][3]int64 // wall, mono, slept per round
	}{
		{"none", nil, [][3]int64{{100, 100, 100}, {200, 200, 100}, {300, 300, 100}, {400, 400, 100}}},
		{"skew and a jump move the wall clock only", []faults.Fault{
			{At: 0, Kind: KindClockSkew, Node: "w", Delay: -2 * time.Second},
			{At: 250 * ms, Kind: KindClockJump, Node: "w", Delay: 5 * time.Second},
		}, [][3]int64{{-1900, 100, 100}, {-1800, 200, 100}, {3300, 300, 100}, {3400, 400, 100}}},
		{"a backward jump does not shorten a sleep", []faults.Fault{
			{At: 150 * ms, Kind: KindClockJump, Node: "w", Delay: -time.Second},
		}, [][3]int64{{100, 100, 100}, {-800, 200, 100}, {-700, 300, 100}, {-600, 400, 100}}},
		{"a slowdown stretches sleeps, the clock stays true", []faults.Fault{
			{At: 0, Kind: KindSlow, Node: "w", Factor: 3, Until: 500 * ms},
		}, [][3]int64{{300, 300, 300}, {600, 600, 300}, {700, 700, 100}, {800, 800, 100}}},
		{"a pause holds timers until it ends", []faults.Fault{
			{At: 150 * ms, Kind: KindPause, Node: "w", Until: time.Second},
		}, [][3]int64{{100, 100, 100}, {1000, 1000, 900}, {1100, 1100, 100}, {1200, 1200, 100}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: tc.faults})
			out := output(r, "")
			if !r.Passed {
				t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
			}
			got := rounds(t, out)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d rounds, want %d\n%s", len(got), len(tc.want), out)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("round %d: wall, mono, slept = %v, want %v", i, got[i], tc.want[i])
				}
			}
			if len(r.Schedule.Faults) != len(tc.faults) {
				t.Errorf("recorded %d faults, want %d: %v", len(r.Schedule.Faults), len(tc.faults), r.Schedule.Faults)
			}
			if t.Failed() {
				t.Log(out)
			}
		})
	}
}

// A paused server is slow to answer, not gone: its peer's connection stays
// open and the echo in flight comes back once the pause ends.
func TestPauseIsLatencyNotAReset(t *testing.T) {
	p := prepare(t, `{"net_overlay": true, "latency": ["1ms", "2ms"],
		"nodes": [{"name": "server", "pkg": "./echoserver"}],
		"workload": {"name": "client", "pkg": "./echoclient", "args": ["-n", "100"]}}`)
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: 50 * ms, Kind: KindPause, Node: "server", Until: 650 * ms}}}
	r := twice(t, p, 1, sch)
	out := output(r, "")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	if strings.Contains(out, "reset") || strings.Contains(out, "refused") {
		t.Fatalf("the client saw the pause as a failure:\n%s", out)
	}
	longest := time.Duration(0)
	for _, m := range regexp.MustCompile(`rtt (\S+)`).FindAllStringSubmatch(out, -1) {
		if d, err := time.ParseDuration(m[1]); err == nil && d > longest {
			longest = d
		}
	}
	if longest < 500*ms || longest > 700*ms {
		t.Fatalf("longest round trip %v, want about the 600ms pause\n%s", longest, out)
	}
}

// A slow node's messages take factor times their latency, both ways.
func TestSlowdownStretchesLatency(t *testing.T) {
	p := prepare(t, `{"net_overlay": true, "latency": ["10ms", "10ms"],
		"nodes": [{"name": "server", "pkg": "./echoserver"}],
		"workload": {"name": "client", "pkg": "./echoclient", "args": ["-n", "3"]},
		"cpu": {"ns_per_call": 0}}`) // exact round trips: free CPU
	for _, tc := range []struct {
		name   string
		faults []faults.Fault
		rtt    string
	}{
		{"none", nil, "rtt 20ms"},
		{"slow server", []faults.Fault{{At: 0, Kind: KindSlow, Node: "server", Factor: 4, Until: 10 * time.Second}}, "rtt 80ms"},
		{"slow client and server", []faults.Fault{
			{At: 0, Kind: KindSlow, Node: "server", Factor: 2, Until: 10 * time.Second},
			{At: 0, Kind: KindSlow, Node: "client", Factor: 1.5, Until: 10 * time.Second},
		}, "rtt 60ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: tc.faults})
			out := output(r, "client")
			if !r.Passed || !strings.Contains(out, "echo 2 "+tc.rtt+"\n") {
				t.Fatalf("want %q; %s %s\n%s", tc.rtt, r.Class, r.Reason, out)
			}
		})
	}
}

// A slow node's fsyncs take factor times their disk_latency.
func TestSlowdownStretchesDiskLatency(t *testing.T) {
	p := prepare(t, `{"cpu": {"ns_per_call": 0}, "faults": {"disk_latency": ["10ms", "10ms"]},
		"nodes": [{"name": "d", "pkg": "./diskio", "args": ["-pages", "3", "-wait", "0s"]}],
		"workload": {"name": "w", "pkg": "./clockwatch", "args": ["-n", "1", "-every", "1s"]}}`)
	exitAt := func(r *Result) time.Duration {
		for _, l := range r.Lines {
			if l.Node == "d" && l.Text == "exit 0" {
				return time.Duration(l.At)
			}
		}
		t.Fatalf("d never exited 0:\n%s", output(r, ""))
		return 0
	}
	base := exitAt(twice(t, p, 1, &faults.Schedule{Seed: 1}))
	slow := exitAt(twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: 0, Kind: KindSlow, Node: "d", Factor: 2.5, Until: time.Hour}}}))
	if base < 30*ms || slow*2 != base*5 {
		t.Fatalf("the fsyncs took %v without the slowdown and %v with a 2.5x one; want at least 30ms, then 2.5 times that", base, slow)
	}
}

// When the finally check starts, pauses and slowdowns end at once.
func TestFinallyCheckHealsPausesAndSlowdowns(t *testing.T) {
	p := prepare(t, `{"cpu": {"ns_per_call": 0}, "nodes": [{"name": "n", "pkg": "./clockwatch", "args": ["-n", "4"]}, {"name": "m", "pkg": "./clockwatch", "args": ["-n", "4"]}],
		"workload": {"name": "w", "pkg": "./clockwatch", "args": ["-n", "2"]},
		"finally": {"name": "f", "pkg": "./clockwatch", "args": ["-n", "15"]}}`)
	r := twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 150 * ms, Kind: KindPause, Node: "n", Until: time.Hour},
		{At: 50 * ms, Kind: KindSlow, Node: "m", Factor: 10, Until: time.Hour},
	}})
	out := output(r, "")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	for _, want := range []string{
		"0.200000000 n#1 - pause ends for the finally check",
		"0.200000000 m#1 - slowdown ends for the finally check",
		"0.200000000 n#1 | round 1 wall=200ms mono=200ms slept=100ms",
		"0.300000000 n#1 | round 2 wall=300ms mono=300ms slept=100ms",
		// m's second sleep began slowed (1s) and keeps its length; the next is true.
		"0.100000000 m#1 | round 0 wall=100ms mono=100ms slept=100ms",
		"1.100000000 m#1 | round 1 wall=1100ms mono=1100ms slept=1000ms",
		"1.200000000 m#1 | round 2 wall=1200ms mono=1200ms slept=100ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// Drawn from the rates: every kind happens, the fault-free node and the
// workload get none, the same seed runs the same twice, and the saved
// schedule replays exactly.
func TestNodeFaultsDrawnAndReplayed(t *testing.T) {
	p := prepare(t, `{"duration": "10s", "net_overlay": true, "latency": ["1ms", "2ms"],
		"faults": {"clock_skew": "1s", "clock_jump_per_sec": 2, "clock_jump_max": "3s",
			"pause_per_sec": 2, "pause_for": ["50ms", "200ms"], "slow_per_sec": 2, "slow_for": ["100ms", "1s"], "slow_factor": 4},
		"nodes": [{"name": "server", "pkg": "./echoserver"}, {"name": "w", "pkg": "./clockwatch", "args": ["-n", "1000"]},
			{"name": "calm", "pkg": "./clockwatch", "faults": false, "args": ["-n", "30"]}],
		"workload": {"name": "client", "pkg": "./echoclient", "args": ["-n", "300"]}}`)
	r := twice(t, p, 7, nil)
	out := output(r, "")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	kinds := map[string]int{}
	for _, f := range r.Schedule.Faults {
		kinds[f.Kind]++
		if f.Node == "calm" || f.Node == "client" {
			t.Errorf("the fault-free node got %v", f)
		}
		if f.Kind == KindSlow && (f.Factor < 1 || f.Factor > 4) {
			t.Errorf("factor outside [1, slow_factor]: %v", f)
		}
		if f.Kind == KindClockSkew && (f.Delay < -time.Second || f.Delay > time.Second) {
			t.Errorf("skew outside [-1s, 1s]: %v", f)
		}
		if f.Kind == KindClockJump && (f.Delay < -3*time.Second || f.Delay > 3*time.Second) {
			t.Errorf("jump beyond clock_jump_max: %v", f)
		}
	}
	for _, k := range []string{KindPause, KindSlow, KindClockSkew, KindClockJump} {
		if kinds[k] == 0 {
			t.Errorf("no %s fault in %v", k, r.Schedule.Faults)
		}
	}
	for i, v := range rounds(t, output(r, "calm")) {
		if v[0] != v[1] || v[2] != 100 {
			t.Errorf("calm round %d saw wall, mono, slept = %v: its clock and sleeps must be true", i, v)
		}
	}
	if other := run(t, p, 8, nil); other.Digest == r.Digest {
		t.Error("seeds 7 and 8 gave the same trace")
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := r.Schedule.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := faults.Load(path, faults.CheckConfig{Programs: []string{"server", "w", "calm", "client"}, Duration: p.World.Duration})
	if err != nil {
		t.Fatal(err)
	}
	if replayed := twice(t, p, 7, loaded); replayed.Digest != r.Digest {
		t.Fatalf("replaying the saved schedule changed the trace:\n%s\n---\n%s", out, output(replayed, ""))
	}
	if t.Failed() {
		t.Log(out)
	}
}

// Clock skew and jumps saturate: two jumps of -2562047h (each near the
// most a duration can hold) leave the node's clock at the Unix epoch, not
// wrapped round to the year 2317, and two forward ones stop it at the
// largest time an int64 of nanoseconds can hold (2262). Run twice: the
// digest is the same.
func TestClockJumpsSaturate(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "w", "pkg": "./clockwatch", "args": ["-n", "3", "-every", "100ms"]}}`)
	huge := -2562047 * time.Hour
	const (
		epoch1970 = -1735689600000                                    // ms from 2025-01-01 back to 1970-01-01
		max2262   = (math.MaxInt64 - 1735689600*1000000000) / 1000000 // ms from 2025-01-01 to the largest int64 ns
	)
	for _, tc := range []struct {
		name   string
		faults []faults.Fault
		want   []int64 // wall ms past 2025 per round
	}{
		{"two jumps back stop at the epoch", []faults.Fault{
			{At: 50 * ms, Kind: KindClockJump, Node: "w", Delay: huge},
			{At: 150 * ms, Kind: KindClockJump, Node: "w", Delay: huge},
		}, []int64{epoch1970, epoch1970, epoch1970}},
		{"skew and jumps forward stop in 2262", []faults.Fault{
			{At: 0, Kind: KindClockSkew, Node: "w", Delay: -huge},
			{At: 50 * ms, Kind: KindClockJump, Node: "w", Delay: -huge},
			{At: 150 * ms, Kind: KindClockJump, Node: "w", Delay: -huge},
		}, []int64{max2262, max2262, max2262}},
		{"back then forth saturates each way", []faults.Fault{
			{At: 50 * ms, Kind: KindClockJump, Node: "w", Delay: huge},
			{At: 60 * ms, Kind: KindClockJump, Node: "w", Delay: huge},
			{At: 150 * ms, Kind: KindClockJump, Node: "w", Delay: -huge},
			{At: 160 * ms, Kind: KindClockJump, Node: "w", Delay: -huge},
		}, []int64{epoch1970, max2262, max2262}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: tc.faults})
			out := output(r, "")
			if !r.Passed {
				t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
			}
			got := rounds(t, out)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d rounds, want %d\n%s", len(got), len(tc.want), out)
			}
			for i := range got {
				if got[i][0] != tc.want[i] {
					t.Errorf("round %d: wall %dms past 2025 (%v), want %dms", i, got[i][0],
						time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(got[i][0])*ms).Year(), tc.want[i])
				}
			}
		})
	}
}

func TestAddSat(t *testing.T) {
	for _, tc := range []struct{ a, b, want int64 }{
		{1, 2, 3},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MinInt64, -1, math.MinInt64},
		{math.MinInt64 + 5, -10, math.MinInt64},
		{math.MinInt64, math.MaxInt64, -1},
		{-5, 3, -2},
	} {
		if got := addSat(tc.a, tc.b); got != tc.want {
			t.Errorf("addSat(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
