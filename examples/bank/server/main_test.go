package main

import (
	"sync/atomic"
	"testing"
	"time"
)

// Two transfers from the same account, the second arriving while the first computes
// its receipt: without -lock it reads the balance the first has not written yet, and
// one of the two debits is lost. With -lock it waits for the first.
func TestTransferInTheMiddleOfAnother(t *testing.T) {
	for _, tc := range []struct {
		lock bool
		want []int64
	}{
		{true, []int64{70, 120, 110}},
		{false, []int64{80, 120, 110}}, // the 20 taken from account 0 by the first transfer is back
	} {
		b := newBank(3, 100, tc.lock)
		sign := b.sign
		second := make(chan string, 1)
		var first atomic.Bool
		b.sign = func(msg string) string {
			if first.CompareAndSwap(false, true) {
				// The first transfer has read the balances: send the second.
				go func() { second <- b.transfer(0, 2, 10) }()
				select {
				case reply := <-second:
					second <- reply // finished in the middle of the first: the race
				case <-time.After(500 * time.Millisecond): // waiting for the lock
				}
			}
			return sign(msg)
		}
		if reply := b.transfer(0, 1, 20); reply[:3] != "OK " {
			t.Fatalf("lock %v: first transfer answered %q", tc.lock, reply)
		}
		if reply := <-second; reply[:3] != "OK " {
			t.Fatalf("lock %v: second transfer answered %q", tc.lock, reply)
		}
		for a, want := range tc.want {
			if got := b.balance(a); got != want {
				t.Errorf("lock %v: account %d holds %d, want %d (all: %v)", tc.lock, a, got, want, b.balances)
			}
		}
	}
}

func TestHandleRefusesWhatIsNotATransfer(t *testing.T) {
	b := newBank(2, 50, true)
	for line, want := range map[string]string{
		"TRANSFER 0 1 60": "REFUSED insufficient funds",
		"TRANSFER 0 0 5":  "ERR the two accounts are the same",
		"TRANSFER 0 2 5":  `ERR no account "2": accounts are 0 to 1`,
		"TRANSFER 0 1 -5": "ERR the amount must be a whole number above 0",
		"BALANCE 1":       "BALANCE 50",
		"WITHDRAW 0 5":    "ERR expected TRANSFER <from> <to> <amount> or BALANCE <account>",
	} {
		if got := handle(b, line); got != want {
			t.Errorf("%s: %q, want %q", line, got, want)
		}
	}
	if got := handle(b, "TRANSFER 0 1 50"); got[:3] != "OK " || b.balance(0) != 0 || b.balance(1) != 100 {
		t.Errorf("TRANSFER 0 1 50: %q, balances %v", got, b.balances)
	}
}
