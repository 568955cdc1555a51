//go:build !wasip1

package sim

import (
	"strings"
	"testing"
)

func TestTxnEncoding(t *testing.T) {
	mops := []Mop{Append(3, 7), ReadList(4), Append(-1, 0)}
	f, err := packFields(mops[0].workload(), len(mops), func(i int, b []byte) []byte { return mops[i].encode(b) })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(f, "|"), "list-append|append 3 7;r 4;append -1 0"; got != want {
		t.Errorf("invocation fields %q, want %q", got, want)
	}
	for _, tc := range []struct {
		reads []ReadResult
		want  string
	}{
		{nil, "ok"},
		{[]ReadResult{List()}, "ok|"},
		{[]ReadResult{List(1, 2, 7), List()}, "ok|1 2 7;"},
		{[]ReadResult{Value(5), None(), Value(-2)}, "ok|5;nil;-2"},
	} {
		f, err := packFields("ok", len(tc.reads), func(i int, b []byte) []byte { return tc.reads[i].encode(b) })
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(f, "|"); got != tc.want {
			t.Errorf("results %v: fields %q, want %q", tc.reads, got, tc.want)
		}
	}
}

// A long read is cut into fields of at most txnChunk bytes, which join
// back to the text; one too long for a record is refused.
func TestTxnEncodingSpansFields(t *testing.T) {
	long := make([]int, 30000)
	for i := range long {
		long[i] = 1000000 + i
	}
	reads := []ReadResult{List(long...), List(1)}
	f, err := packFields("ok", len(reads), func(i int, b []byte) []byte { return reads[i].encode(b) })
	if err != nil {
		t.Fatal(err)
	}
	if len(f) < 4 {
		t.Fatalf("%d fields, want the read cut into several", len(f))
	}
	for _, x := range f[1:] {
		if len(x) > txnChunk {
			t.Fatalf("a field of %d bytes, more than %d", len(x), txnChunk)
		}
	}
	if !strings.HasSuffix(strings.Join(f[1:], ""), " 1029999;1") {
		t.Errorf("the fields do not join back to the results")
	}
	huge := make([]int, 600000)
	for i := range huge {
		huge[i] = 1000000
	}
	hugeReads := []ReadResult{List(huge...)}
	if _, err := packFields("ok", 1, func(i int, b []byte) []byte { return hugeReads[i].encode(b) }); err == nil || !strings.Contains(err.Error(), "read shorter lists") {
		t.Errorf("a 4.8 MB read: %v, want an error", err)
	}
}

func TestTxnRefusesMisuse(t *testing.T) {
	t.Setenv("SEEDFALL", "")
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"empty", func() { Txn() }, "sim.Txn: a transaction without micro-operations"},
		{"mixed", func() { Txn(Append(1, 2), Read(3)) }, "sim.Txn: Append(1, 2) is list-append and Read(3) is rw-register: a transaction mixes only one workload's micro-operations"},
		{"zero", func() { Txn(Write(1, 2), Mop{}) }, "micro-operation 1 is a zero Mop"},
		{"too few results", func() { Txn(ReadList(1), Append(2, 3), ReadList(2)).Ok(List()) }, "the transaction has 2 reads and Ok got 1 result"},
		{"value for a list", func() { Txn(ReadList(1)).Ok(Value(3)) }, "result 0 is Value(3) for ReadList(1), which returns a list: give List(...)"},
		{"list for a register", func() { Txn(Write(1, 2), Read(1)).Ok(List(2)) }, "result 0 is List(2) for Read(1), which returns a register: give Value(v) or None()"},
		{"ok twice", func() { t := Txn(Write(1, 2)); t.Ok(); t.Ok() }, "finished twice"},
		{"fail after ok", func() { t := Txn(Write(1, 2)); t.Ok(); t.Fail() }, "finished twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Errorf("panic %v, want one with %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

// Natively a transaction records nothing, and the calls a client makes
// work unchanged.
func TestNativeTxnIsANoOp(t *testing.T) {
	t.Setenv("SEEDFALL", "")
	tx := Txn(Append(1, 1), ReadList(1), ReadList(2))
	tx.Ok(List(1), List())
	tx = Txn(Write(1, 5), Read(2))
	tx.Ok(None())
	Txn(Read(1)).Fail()
	Txn(Read(1)) // left open
	if got := List(1, 2).String() + Value(3).String() + None().String(); got != "List(1, 2)Value(3)None()" {
		t.Errorf("String = %q", got)
	}
}

// List copies its values: a client may reuse its slice.
func TestListCopies(t *testing.T) {
	s := []int{1, 2}
	r := List(s...)
	s[0] = 9
	if r.list[0] != 1 {
		t.Errorf("List kept the caller's slice")
	}
}
