package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without checksums a flipped bit in a value is believed; with them replay stops there.
func TestReplayWithoutChecksumBelievesAFlippedValue(t *testing.T) {
	log := string(encodeRecord("k1", "v1")) + strings.Replace(string(encodeRecord("k2", "v2")), "v2", "v6", 1)
	data, good, err := replayWith(strings.NewReader(log), false)
	if err != nil || data["k2"] != "v6" || good != int64(len(log)) {
		t.Fatalf("unchecked replay = %v up to %d (%v), want k2=v6 to the end", data, good, err)
	}
	data, _, _ = replayWith(strings.NewReader(log), true)
	if _, ok := data["k2"]; ok {
		t.Fatalf("checked replay kept the damaged record: %v", data)
	}
}

// A torn tail reads the same every time: re-reading it ends, and the tail is cut.
func TestRereadEndsOnATornTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	os.MkdirAll(dir, 0o755)
	whole := encodeRecord("k1", "v1")
	torn := encodeRecord("k2", "v2")[:5]
	if err := os.WriteFile(filepath.Join(dir, "kv.log"), append(whole, torn...), 0o644); err != nil {
		t.Fatal(err)
	}
	s, cut, err := openStoreWith(dir, options{syncEachPut: true, checksum: true, rereads: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.log.Close()
	if v, _ := s.get("k1"); v != "v1" || cut != 5 {
		t.Fatalf("k1 = %q, cut %d; want v1 and the 5-byte tail cut", v, cut)
	}
}
