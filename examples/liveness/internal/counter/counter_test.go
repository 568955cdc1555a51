package counter

import (
	"os"
	"path/filepath"
	"testing"
)

func appendAll(t *testing.T, s Store, rs ...Record) {
	t.Helper()
	for _, r := range rs {
		if err := s.Append(r); err != nil {
			t.Fatal(err)
		}
	}
}

func adds(client string, from, to uint64) []Record {
	var rs []Record
	for q := from; q <= to; q++ {
		rs = append(rs, Record{Client: client, Req: q, N: 1})
	}
	return rs
}

func wantState(t *testing.T, st *State, total int64, last uint64) {
	t.Helper()
	if st.Total != total || st.Last["w"] != last {
		t.Fatalf("total %d, last request of w %d; want %d and %d", st.Total, st.Last["w"], total, last)
	}
}

// A crash during an early flush leaves half a record on disk: reopening
// cuts it off, and the next record lands where it began.
func TestV1CutsATornRecord(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenV1(dir)
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, adds("w", 1, 3)...)
	s.f.WriteString("add w 4")
	s.f.Close()
	if s, err = OpenV1(dir); err != nil {
		t.Fatal(err)
	}
	wantState(t, s.State(), 3, 3)
	appendAll(t, s, adds("w", 4, 4)...)
	s.f.Close()
	if s, err = OpenV1(dir); err != nil {
		t.Fatal(err)
	}
	wantState(t, s.State(), 4, 4)
}

// The upgrade keeps the request ids: a resend that spans it is still
// recognised. A crash after the snapshot but before the v1 log is removed
// must not migrate the v1 log a second time.
func TestV2MigratesV1(t *testing.T) {
	dir := t.TempDir()
	v1, err := OpenV1(dir)
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, v1, adds("w", 1, 5)...)
	v1.f.Close()
	old, err := os.ReadFile(filepath.Join(dir, V1Log))
	if err != nil {
		t.Fatal(err)
	}
	v2, err := OpenV2(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v2.Migrated == "" {
		t.Fatal("OpenV2 did not say it migrated the v1 log")
	}
	wantState(t, v2.State(), 5, 5)
	if _, err := os.Stat(filepath.Join(dir, V1Log)); !os.IsNotExist(err) {
		t.Fatalf("the v1 log is still there after the migration: %v", err)
	}
	appendAll(t, v2, adds("w", 6, 7)...)
	v2.f.Close()
	// The crash state: snapshot in place, v1 log not yet removed.
	if err := os.WriteFile(filepath.Join(dir, V1Log), old, 0o644); err != nil {
		t.Fatal(err)
	}
	if v2, err = OpenV2(dir); err != nil {
		t.Fatal(err)
	}
	if v2.Migrated != "" {
		t.Fatalf("migrated again over a v2 snapshot: %s", v2.Migrated)
	}
	wantState(t, v2.State(), 7, 7)
}

// A crash between writing a snapshot and emptying the log leaves records
// the snapshot already holds: their sequence numbers keep them from
// counting twice.
func TestV2CompactionCrash(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenV2(dir)
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, adds("w", 1, 3)...)
	logged, err := os.ReadFile(filepath.Join(dir, V2Log))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.compact(); err != nil {
		t.Fatal(err)
	}
	s.f.Close()
	if err := os.WriteFile(filepath.Join(dir, V2Log), logged, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err = OpenV2(dir); err != nil {
		t.Fatal(err)
	}
	wantState(t, s.State(), 3, 3)
	appendAll(t, s, adds("w", 4, 4+compactEvery)...) // crosses a compaction
	s.f.Close()
	if s, err = OpenV2(dir); err != nil {
		t.Fatal(err)
	}
	wantState(t, s.State(), 4+compactEvery, 4+compactEvery)
}

// A damaged or torn v2 record ends the log: its checksum does not match.
func TestParseV2RejectsDamage(t *testing.T) {
	line := v2Line(7, Record{Client: "w", Req: 3, N: 1})
	if _, r, ok := parseV2(line[:len(line)-1]); !ok || r.Req != 3 {
		t.Fatalf("a whole record does not parse: %q", line)
	}
	for _, bad := range []string{line[:len(line)-4], "7 w 4 1" + line[7:len(line)-1]} {
		if _, _, ok := parseV2(bad); ok {
			t.Errorf("%q parsed as a record", bad)
		}
	}
}

// Only the deduplicating server answers a resend without applying it.
func TestServerDedup(t *testing.T) {
	for _, tc := range []struct {
		dedup bool
		total int64
	}{{false, 2}, {true, 1}} {
		s, err := OpenV1(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		srv := &Server{Store: s, Dedup: tc.dedup}
		srv.handle([]string{"ADD", "w", "1", "1"})
		answer, applied := srv.handle([]string{"ADD", "w", "1", "1"})
		if applied != !tc.dedup || s.State().Total != tc.total {
			t.Errorf("dedup=%v: the resend answered %q, applied=%v, total %d; want total %d", tc.dedup, answer, applied, s.State().Total, tc.total)
		}
		s.f.Close()
	}
}
