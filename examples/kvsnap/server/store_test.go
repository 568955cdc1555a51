package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Without a crash every way of keeping the log short keeps every key: after a reopen
// the store holds all of them, and a checkpoint has left the log shorter than its size.
func TestReopenKeepsEveryKey(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ckpt    checkpointing
		rewrite string
	}{
		{"checkpoint snapshot-first", checkpointing{every: 200}, ""},
		{"checkpoint log-first", checkpointing{every: 200, logFirst: true}, ""},
		{"rewrite inplace", checkpointing{}, "inplace"},
		{"rewrite rename", checkpointing{}, "rename"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			s, _, err := openStore(dir, tc.ckpt, tc.rewrite)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 30; i++ {
				if err := s.put(fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			// The same key again: a rewrite keeps only its last value.
			if err := s.put("k1", "again"); err != nil {
				t.Fatal(err)
			}
			s.log.Close()
			for range 2 { // the second reopen reads what the first one's rewrite wrote
				s, _, err = openStore(dir, tc.ckpt, tc.rewrite)
				if err != nil {
					t.Fatal(err)
				}
				if len(s.data) != 30 || s.data["k1"] != "again" || s.data["k30"] != "v30" {
					t.Fatalf("reopened with %d keys, k1=%q, k30=%q", len(s.data), s.data["k1"], s.data["k30"])
				}
				s.log.Close()
			}
			fi, err := os.Stat(filepath.Join(dir, "kv.log"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.ckpt.every > 0 && fi.Size() >= tc.ckpt.every {
				t.Errorf("the log is %d bytes after checkpoints every %d", fi.Size(), tc.ckpt.every)
			}
			if tc.rewrite != "" && fi.Size() != int64(len(records(s.data))) {
				t.Errorf("the log is %d bytes, want one record per key, %d bytes", fi.Size(), len(records(s.data)))
			}
		})
	}
}
