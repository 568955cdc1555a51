package world

import (
	"testing"
	"time"
)

// clock_skew and clock_jump_max are bounded at 100 years, so that the
// offsets drawn from them stay far from overflowing a node's wall clock.
func TestClockFieldBounds(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"skew past a century", withWorkload(`"faults": {"clock_skew": "876001h"}`),
			`seedfall.json:2: faults.clock_skew: want at most 100 years ("876000h"), got "876001h"`},
		{"jump max past a century", withWorkload(`"faults": {"clock_jump_max": "2562047h"}`),
			`seedfall.json:2: faults.clock_jump_max: want at most 100 years ("876000h"), got "2562047h"`},
		{"negative jump max", withWorkload(`"faults": {"clock_jump_max": "-1s"}`),
			`seedfall.json:2: faults.clock_jump_max: want a duration of 0 or more, got "-1s"`},
		{"skew not a duration", withWorkload(`"faults": {"clock_skew": 5}`),
			`seedfall.json:2: faults.clock_skew: want a duration such as "250ms", got 5`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.src)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
	w, err := parse(t, withWorkload(`"faults": {"clock_skew": "876000h", "clock_jump_max": "876000h"}`))
	if err != nil {
		t.Fatal(err)
	}
	if w.Faults.ClockSkew != MaxClockOffset || w.Faults.ClockJumpMax != 100*365*24*time.Hour {
		t.Errorf("clock_skew %v, clock_jump_max %v, want both 876000h", w.Faults.ClockSkew, w.Faults.ClockJumpMax)
	}
}
