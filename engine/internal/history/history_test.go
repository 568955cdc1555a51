package history

import (
	"strings"
	"testing"
	"time"
)

// step is one host call of a hand-written history: an invocation (in set)
// or a completion (out set) of operation op (1-based, in order of
// invocation) at virtual time ms.
type step struct {
	ms     int64
	client string
	op     int
	in     []string
	out    []string
}

func inv(ms int64, client string, fields ...string) step {
	return step{ms: ms, client: client, in: fields}
}
func ret(ms int64, op int, fields ...string) step { return step{ms: ms, op: op, out: fields} }

func build(t *testing.T, steps []step) *History {
	t.Helper()
	h := New()
	for _, s := range steps {
		now := s.ms * int64(time.Millisecond)
		if s.in != nil {
			if _, err := h.Invoke(s.client, now, s.in); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := h.Return(int64(s.op), now, s.out); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []step
		verdict string
		reason  string // a substring of the reason when not linearizable
	}{
		{"sequential", []step{
			inv(0, "c#1", "kv", "put", "k", "a"), ret(10, 1, "ok"),
			inv(20, "c#1", "kv", "get", "k"), ret(30, 2, "ok", "a", "true"),
		}, Linearizable, ""},
		{"concurrent read may see either value", []step{
			inv(0, "c#1", "kv", "put", "k", "a"), ret(10, 1, "ok"),
			inv(20, "c#1", "kv", "put", "k", "b"),
			inv(25, "c#2", "kv", "get", "k"), ret(30, 3, "ok", "a", "true"),
			ret(40, 2, "ok"),
		}, Linearizable, ""},
		{"stale read", []step{
			inv(0, "c#1", "kv", "put", "k3", "v1"), ret(800, 1, "ok"),
			inv(1100, "c#1", "kv", "put", "k3", "v2"), ret(1200, 2, "ok"),
			inv(1500, "c#2", "kv", "get", "k3"), ret(1500, 3, "ok", "v1", "true"),
		}, NotLinearizable, `key "k3": get returned "v1" after put "v2" completed (put by c#1 at 1.1s-1.2s, get by c#2 at 1.5s; "v1" was written by c#1 at 0s-800ms)`},
		{"stale read at the same virtual time", []step{
			inv(0, "c#1", "kv", "put", "k", "v1"), ret(10, 1, "ok"),
			inv(10, "c#1", "kv", "put", "k", "v2"), ret(20, 2, "ok"),
			inv(20, "c#1", "kv", "get", "k"), ret(20, 3, "ok", "v1", "true"),
		}, NotLinearizable, `get returned "v1" after put "v2" completed`},
		{"read found nothing after a put completed", []step{
			inv(0, "c#1", "kv", "put", "k", "a"), ret(10, 1, "ok"),
			inv(20, "c#2", "kv", "get", "k"), ret(30, 2, "ok", "", "false"),
		}, NotLinearizable, `key "k": get found nothing after put "a" completed`},
		{"value nobody wrote", []step{
			inv(0, "c#1", "kv", "get", "k"), ret(10, 1, "ok", "zz", "true"),
		}, NotLinearizable, `get returned "zz", which no put wrote`},
		{"failed put never took effect", []step{
			inv(0, "c#1", "kv", "put", "k", "a"), ret(10, 1, "fail"),
			inv(20, "c#2", "kv", "get", "k"), ret(30, 2, "ok", "a", "true"),
		}, NotLinearizable, `get returned "a", which no put wrote`},
		{"read before the write started", []step{
			inv(0, "c#2", "kv", "get", "k"), ret(10, 1, "ok", "a", "true"),
			inv(20, "c#1", "kv", "put", "k", "a"), ret(30, 2, "ok"),
		}, NotLinearizable, `get returned "a" before put "a" started`},
		{"open put may take effect late", []step{
			inv(0, "c#1", "kv", "put", "k", "a"),
			inv(500, "c#2", "kv", "get", "k"), ret(510, 2, "ok", "", "false"),
			inv(900, "c#2", "kv", "get", "k"), ret(910, 3, "ok", "a", "true"),
		}, Linearizable, ""},
		{"open put cannot take effect before it started", []step{
			inv(0, "c#2", "kv", "get", "k"), ret(10, 1, "ok", "a", "true"),
			inv(20, "c#1", "kv", "put", "k", "a"),
		}, NotLinearizable, `get returned "a" before put "a" started (get by c#2 at 0s-10ms, put by c#1 from 20ms, never finished)`},
		{"open reads are dropped", []step{
			inv(0, "c#1", "kv", "put", "k", "a"), ret(10, 1, "ok"),
			inv(20, "c#2", "kv", "get", "k"),
		}, Linearizable, ""},
		{"keys are checked apart", []step{
			inv(0, "c#1", "kv", "put", "a", "1"), ret(10, 1, "ok"),
			inv(0, "c#2", "kv", "put", "b", "2"), ret(10, 2, "ok"),
			inv(20, "c#1", "kv", "get", "b"), ret(30, 3, "ok", "2", "true"),
			inv(20, "c#2", "kv", "get", "a"), ret(30, 4, "ok", "1", "true"),
		}, Linearizable, ""},
		{"reads go back in time", []step{
			inv(0, "c#1", "kv", "put", "k", "a"), ret(10, 1, "ok"),
			inv(20, "c#1", "kv", "put", "k", "b"),
			inv(30, "c#2", "kv", "get", "k"), ret(40, 3, "ok", "b", "true"),
			inv(50, "c#3", "kv", "get", "k"), ret(60, 4, "ok", "a", "true"),
			ret(100, 2, "ok"),
		}, NotLinearizable, `key "k": no order of its 4 operations explains every answer`},
		{"counter", []step{
			inv(0, "c#1", "counter", "add 2"), ret(10, 1, "ok", ""),
			inv(5, "c#2", "counter", "add 3"),
			inv(20, "c#1", "counter", "read"), ret(30, 3, "ok", "5"),
		}, Linearizable, ""},
		{"counter lost an add", []step{
			inv(0, "c#1", "counter", "add 2"), ret(10, 1, "ok", ""),
			inv(20, "c#2", "counter", "add 3"), ret(30, 2, "ok", ""),
			inv(40, "c#1", "counter", "read"), ret(50, 3, "ok", "3"),
		}, NotLinearizable, `counter: no order of its 3 operations explains every answer: the longest that does ends after add 3 (c#2 at 20ms-30ms) with the value 5, and read returned 3 (c#1 at 40ms-50ms) does not fit`},
		{"named counters are apart", []step{
			inv(0, "c#1", "counter:a", "add 2"), ret(10, 1, "ok", ""),
			inv(20, "c#1", "counter:b", "read"), ret(30, 2, "ok", "2"),
		}, NotLinearizable, `counter "b": no order of its 1 operation explains every answer: the longest that does ends from the start with the value 0, and read returned 2 (c#1 at 20ms-30ms) does not fit`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := build(t, tc.steps)
			out := h.Check(5 * time.Second)
			if out.Verdict != tc.verdict {
				t.Fatalf("verdict %q (%s), want %q", out.Verdict, out.Reason, tc.verdict)
			}
			if out.Ops != len(h.Ops()) {
				t.Errorf("Ops = %d, want %d", out.Ops, len(h.Ops()))
			}
			if tc.verdict != NotLinearizable {
				return
			}
			if !strings.Contains(out.Reason, tc.reason) {
				t.Errorf("reason\n  %s\nwant it to contain\n  %s", out.Reason, tc.reason)
			}
			if !strings.Contains(string(out.HTML), "<html") {
				t.Errorf("no visualization for a failing history")
			}
			// The same history, checked again, gives the same words.
			if again := build(t, tc.steps).Check(5 * time.Second); again.Reason != out.Reason {
				t.Errorf("second check: %q, first %q", again.Reason, out.Reason)
			}
		})
	}
}

func TestRecordingMistakes(t *testing.T) {
	h := New()
	if _, err := h.Invoke("c#1", 0, []string{"queue", "push"}); err == nil || !strings.Contains(err.Error(), "unknown operation") {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := h.Invoke("c#1", 0, []string{"counter", "inc"}); err == nil || !strings.Contains(err.Error(), `want "add N" or "read"`) {
		t.Errorf("bad counter input: %v", err)
	}
	id, err := h.Invoke("c#1", 0, []string{"counter", "read"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Return(id, 1, []string{"ok", "five"}); err == nil || !strings.Contains(err.Error(), "decimal") {
		t.Errorf("non-numeric read: %v", err)
	}
	if err := h.Return(id, 1, []string{"ok", "5"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Return(id, 2, []string{"ok", "5"}); err == nil || !strings.Contains(err.Error(), "finished twice") {
		t.Errorf("finished twice: %v", err)
	}
	if err := h.Return(9, 2, []string{"ok"}); err == nil {
		t.Errorf("unknown id accepted")
	}
}

func TestInFlight(t *testing.T) {
	h := build(t, []step{
		inv(0, "c#1", "kv", "put", "k", "a"),
		inv(0, "c#1", "kv", "get", "k"),
		inv(0, "c#1", "kv", "put", "k", "b"), ret(1, 3, "ok"),
		inv(0, "c#2", "kv", "put", "k", "c"),
	})
	if n := h.InFlight("c#1"); n != 2 {
		t.Errorf("c#1 has %d operations in flight, want 2", n)
	}
	if n := h.InFlight("c#3"); n != 0 {
		t.Errorf("c#3 has %d operations in flight, want 0", n)
	}
}

// A check out of time is unknown, never a failure: whether it runs out
// depends on the host.
func TestCheckOutOfTimeIsUnknown(t *testing.T) {
	h := build(t, []step{
		inv(0, "c#1", "kv", "put", "k", "v1"), ret(10, 1, "ok"),
		inv(10, "c#1", "kv", "put", "k", "v2"), ret(20, 2, "ok"),
		inv(20, "c#1", "kv", "get", "k"), ret(20, 3, "ok", "v1", "true"),
	})
	if out := h.Check(0); out.Verdict != Unknown || out.Reason != "" {
		t.Errorf("Check(0) = %q %q, want unknown and no reason", out.Verdict, out.Reason)
	}
}
