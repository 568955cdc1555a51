package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A record appended while an fsync runs must wait for the next one: with
// -durable-end=after-sync it is acknowledged though no fsync started after it was
// written, which a crash before the next fsync turns into a lost write.
func TestAcknowledgedRecordsWereWrittenBeforeAnFsyncStarted(t *testing.T) {
	for _, tc := range []struct {
		name         string
		endAfterSync bool
		wantCovered  bool
	}{{"before-sync", false, true}, {"after-sync", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := openWAL(filepath.Join(t.TempDir(), "data"))
			if err != nil {
				t.Fatal(err)
			}
			defer w.f.Close()
			var starts []int64 // where the log ended when each fsync started
			k2 := make(chan error)
			w.sync = func() error {
				w.mu.Lock()
				starts = append(starts, w.end)
				first, end := len(starts) == 1, w.end
				w.mu.Unlock()
				if first {
					// Another PUT comes in while this fsync runs.
					go func() { k2 <- w.put("k2", "v2") }()
					for {
						w.mu.Lock()
						appended := w.end > end
						w.mu.Unlock()
						if appended {
							break
						}
						time.Sleep(time.Millisecond)
					}
				}
				return nil
			}
			go w.syncLoop(tc.endAfterSync)
			if err := w.put("k1", "v1"); err != nil {
				t.Fatal(err)
			}
			if err := <-k2; err != nil {
				t.Fatal(err)
			}
			k2End := int64(len(encodeRecord("k1", "v1")) + len(encodeRecord("k2", "v2")))
			w.mu.Lock()
			defer w.mu.Unlock()
			covered := false
			for _, s := range starts {
				covered = covered || s >= k2End
			}
			if covered != tc.wantCovered {
				t.Errorf("k2 (log end %d) was acknowledged after fsyncs starting at %v: covered %v, want %v", k2End, starts, covered, tc.wantCovered)
			}
		})
	}
}

// A crash can leave half a record at the end of the log: opening it cuts that tail, and
// a record appended afterwards survives the next open.
func TestOpenCutsATornTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	torn := encodeRecord("k2", "v2")[:6]
	if err := os.WriteFile(filepath.Join(dir, "wal.log"), append(encodeRecord("k1", "v1"), torn...), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := openWAL(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.cut != int64(len(torn)) || len(w.data) != 1 {
		t.Fatalf("open kept %v and cut %d bytes, want k1 only and %d cut", w.data, w.cut, len(torn))
	}
	go w.syncLoop(false)
	if err := w.put("k3", "v3"); err != nil {
		t.Fatal(err)
	}
	w.f.Close()
	w, err = openWAL(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.f.Close()
	if w.cut != 0 || w.data["k1"] != "v1" || w.data["k3"] != "v3" || len(w.data) != 2 {
		t.Fatalf("second open kept %v and cut %d, want k1 and k3, nothing cut", w.data, w.cut)
	}
}
