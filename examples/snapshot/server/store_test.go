package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSavedStateIsLoadedOnRestart(t *testing.T) {
	for _, syncDir := range []bool{false, true} {
		dir := t.TempDir()
		s, err := openStore(dir, syncDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range [][2]string{{"k1", "v1"}, {"k2", "v2"}, {"k1", "v1b"}} {
			if err := s.set(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		s, err = openStore(dir, syncDir)
		if err != nil {
			t.Fatal(err)
		}
		if s.cur.Version != 3 || len(s.cur.Registers) != 2 || s.cur.Registers["k1"] != "v1b" || s.cur.Registers["k2"] != "v2" {
			t.Errorf("syncdir %v: reloaded %+v, want version 3 with k1=v1b k2=v2", syncDir, s.cur)
		}
		if _, err := os.Stat(filepath.Join(dir, "state.tmp")); !os.IsNotExist(err) {
			t.Errorf("syncdir %v: state.tmp still exists after a save (err %v)", syncDir, err)
		}
	}
}

func TestOpenStore(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		want    map[string]string
		wantErr string
	}{
		{"fresh disk", nil, map[string]string{}, ""},
		{"leftover tmp from a crash", map[string]string{"state.tmp": `{"version":`}, map[string]string{}, ""},
		{"tmp next to a snapshot", map[string]string{"state.json": `{"version":1,"registers":{"a":"1"}}`, "state.tmp": "junk"}, map[string]string{"a": "1"}, ""},
		{"null registers", map[string]string{"state.json": `{"version":0,"registers":null}`}, map[string]string{}, ""},
		{"corrupt snapshot", map[string]string{"state.json": `{"version":`}, nil, "state.json is not a valid snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := openStore(dir, true)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("openStore error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.cur.Registers) != len(tt.want) {
				t.Fatalf("registers = %v, want %v", s.cur.Registers, tt.want)
			}
			for k, v := range tt.want {
				if s.cur.Registers[k] != v {
					t.Errorf("register %s = %q, want %q", k, s.cur.Registers[k], v)
				}
			}
			// A set must work on top of whatever was loaded.
			if err := s.set("new", "x"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
