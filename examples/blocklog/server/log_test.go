package main

import (
	"fmt"
	"strings"
	"testing"
)

// Records of every length, written one after another across several blocks, read back
// whole with the exact trailer; the inclusive reader loses them exactly when a record
// ends one header short of a block's end.
func TestRecordsReadBackAcrossBlocks(t *testing.T) {
	const block = 64
	for pad := 0; pad < 3*block; pad++ {
		var log []byte
		var want []string
		exactFit := false
		for i := range 6 {
			rec := fmt.Sprintf("k%d %s", i, strings.Repeat("x", (pad*(i+1))%(2*block)))
			log = appendRecord(log, block, []byte(rec))
			want = append(want, rec)
			if block-len(log)%block == headerSize && i < 5 {
				exactFit = true
			}
		}
		recs, good := readRecords(log, block, false)
		if good != len(log) || len(recs) != len(want) {
			t.Fatalf("pad %d: read %d records up to %d of %d bytes, want %d", pad, len(recs), good, len(log), len(want))
		}
		for i, r := range recs {
			if string(r) != want[i] {
				t.Fatalf("pad %d: record %d = %q, want %q", pad, i, r, want[i])
			}
		}
		recs, _ = readRecords(log, block, true)
		if lost := len(recs) < len(want); lost != exactFit {
			t.Fatalf("pad %d: inclusive reader read %d of %d records; a record ends one header short of a block: %v", pad, len(recs), len(want), exactFit)
		}
	}
}

// A torn tail stops the replay at the last complete record.
func TestTornTailStopsAtLastRecord(t *testing.T) {
	const block = 64
	log := appendRecord(nil, block, []byte("k1 v1"))
	end := len(log)
	log = appendRecord(log, block, []byte("k2 "+strings.Repeat("y", 100)))
	for cut := end; cut < len(log); cut++ {
		recs, good := readRecords(log[:cut], block, false)
		if len(recs) != 1 || good != end {
			t.Fatalf("cut at %d: %d records up to %d, want 1 up to %d", cut, len(recs), good, end)
		}
	}
}
