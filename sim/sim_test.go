package sim

import (
	"os"
	"testing"
)

func TestEnabled(t *testing.T) {
	tests := []struct {
		name  string
		value string
		set   bool
		want  bool
	}{
		{"unset", "", false, false},
		{"one", "1", true, true},
		{"zero", "0", true, false},
		{"empty", "", true, false},
		{"true is not 1", "true", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.set {
				t.Setenv("SEEDFALL", tt.value)
			} else {
				unsetenv(t, "SEEDFALL")
			}
			if got := Enabled(); got != tt.want {
				t.Errorf("Enabled() with SEEDFALL=%q = %v, want %v", tt.value, got, tt.want)
			}
		})
	}
}

func TestNode(t *testing.T) {
	unsetenv(t, "SEEDFALL_NODE")
	if got := Node(); got != "" {
		t.Errorf("Node() without SEEDFALL_NODE = %q, want empty", got)
	}
	t.Setenv("SEEDFALL_NODE", "server-2")
	if got := Node(); got != "server-2" {
		t.Errorf("Node() = %q, want %q", got, "server-2")
	}
}

// Natively there is no host to call: SetupComplete must return normally
// whether or not the environment claims to be inside seedfall.
func TestSetupCompleteNative(t *testing.T) {
	for _, v := range []string{"", "1"} {
		t.Setenv("SEEDFALL", v)
		SetupComplete()
	}
}

// unsetenv removes key for the duration of the test and restores it after.
func unsetenv(t *testing.T, key string) {
	t.Setenv(key, "") // registers the restore
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}

// Natively no site ever fires, inside seedfall's environment or not.
func TestBuggifyNative(t *testing.T) {
	for _, v := range []string{"", "1"} {
		t.Setenv("SEEDFALL", v)
		if Buggify() || BuggifyWithProb(1) {
			t.Errorf("a buggify site fired natively with SEEDFALL=%q", v)
		}
	}
}
