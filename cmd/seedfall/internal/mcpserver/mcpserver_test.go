package mcpserver

import (
	"strings"
	"testing"
)

func TestCapText(t *testing.T) {
	if s := capText("short", 100); s != "short" {
		t.Errorf("capText kept %q", s)
	}
	long := strings.Repeat("a", 1000) + strings.Repeat("z", 1000)
	s := capText(long, 200)
	if !strings.HasPrefix(s, strings.Repeat("a", 100)+"\n[... 1800 bytes cut") || !strings.HasSuffix(s, "...]\n"+strings.Repeat("z", 100)) {
		t.Errorf("capText: %s", s)
	}
}
