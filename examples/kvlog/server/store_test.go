package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplayKeepsEveryCompleteRecordOfATornLog(t *testing.T) {
	recs := [][]byte{encodeRecord("k1", "v1"), encodeRecord("k2", "value-two"), encodeRecord("k3", "v3")}
	var full []byte
	var ends []int // offset just past each record
	for _, r := range recs {
		full = append(full, r...)
		ends = append(ends, len(full))
	}
	// A crash can cut the log at any byte.
	for cut := 0; cut <= len(full); cut++ {
		wantKeys, wantGood := 0, 0
		for i, end := range ends {
			if end <= cut {
				wantKeys, wantGood = i+1, end
			}
		}
		data, good, err := replay(strings.NewReader(string(full[:cut])))
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if len(data) != wantKeys || good != int64(wantGood) {
			t.Errorf("cut at %d: replayed %d keys up to offset %d, want %d keys up to %d", cut, len(data), good, wantKeys, wantGood)
		}
	}
}

func TestReplayStopsAtADamagedRecord(t *testing.T) {
	first, last := encodeRecord("k1", "v1"), encodeRecord("k3", "v3")
	tests := []struct {
		name string
		bad  string
	}{
		{"flipped payload byte", strings.Replace(string(encodeRecord("k2", "v2")), "v2", "v3", 1)},
		{"wrong length", "6 " + string(encodeRecord("k2", "v2"))[2:]},
		{"bad checksum", "5 zzzzzzzz k2 v2\n"},
		{"zeros", "\x00\x00\x00\x00\n"},
		{"no value", string(encodeRecord("k2", "")) /* "k2 " */},
		{"empty line", "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := string(first) + tt.bad + string(last)
			data, good, err := replay(strings.NewReader(log))
			if err != nil {
				t.Fatal(err)
			}
			if good != int64(len(first)) || len(data) != 1 || data["k1"] != "v1" {
				t.Errorf("replay = %v up to %d, want only k1=v1 up to %d", data, good, len(first))
			}
		})
	}
}

func TestOpenStoreCutsTheTornTailAndAppendsAfterIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	torn := encodeRecord("k2", "v2")[:7]
	if err := os.WriteFile(filepath.Join(dir, "kv.log"), append(encodeRecord("k1", "v1"), torn...), 0o644); err != nil {
		t.Fatal(err)
	}

	s, cut, err := openStore(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if cut != int64(len(torn)) {
		t.Errorf("cut %d bytes, want %d", cut, len(torn))
	}
	if err := s.put("k3", "v3"); err != nil {
		t.Fatal(err)
	}
	s.log.Close()

	// The record written after the cut must survive the next replay.
	s, cut, err = openStore(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.log.Close()
	if cut != 0 {
		t.Errorf("second open cut %d bytes, want 0", cut)
	}
	for key, want := range map[string]string{"k1": "v1", "k3": "v3"} {
		if got, ok := s.get(key); !ok || got != want {
			t.Errorf("after reopen %s = %q, %v; want %q", key, got, ok, want)
		}
	}
	if _, ok := s.get("k2"); ok {
		t.Errorf("torn record k2 was replayed")
	}
}

func TestPutBeforeSyncLeavesRecordsForTheFlush(t *testing.T) {
	s, _, err := openStore(filepath.Join(t.TempDir(), "data"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.log.Close()
	if err := s.put("k1", "v1"); err != nil {
		t.Fatal(err)
	}
	if !s.dirty {
		t.Fatalf("put with -ack=before-sync left nothing for the flush")
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if s.dirty {
		t.Errorf("flush left records unsynced")
	}
}
