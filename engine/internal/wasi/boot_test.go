package wasi

import "testing"

// A snapshot boot lets through only what a copy of the snapshot can stand
// for, and names the first call that it cannot.
func TestBootLogAllowsOnlyWhatACopyRepeats(t *testing.T) {
	for _, c := range []struct {
		calls []string // name, then its first two arguments
		args  [][2]uint64
		taint string
	}{
		{[]string{"args_sizes_get", "environ_get", "fd_prestat_get", "clock_time_get"}, [][2]uint64{{}, {}, {3, 0}, {clockMonotonic, 0}}, ""},
		{[]string{"clock_time_get"}, [][2]uint64{{clockRealtime, 0}}, "its init calls clock_time_get (the wall clock)"},
		{[]string{"random_get", "random_get"}, [][2]uint64{{0, 16}, {0, 16}}, ""},
		{[]string{"random_get", "random_get"}, [][2]uint64{{0, 32}, {0, 8}}, "its init calls random_get (40 random bytes, more than the runtime's 32)"},
		{[]string{"fd_write", "fd_write"}, [][2]uint64{{1, 0}, {2, 0}}, ""},
		{[]string{"fd_write"}, [][2]uint64{{5, 0}}, "its init calls fd_write (to descriptor 5)"},
		{[]string{"fd_fdstat_set_flags"}, [][2]uint64{{1, 4}}, ""},
		{[]string{"fd_fdstat_set_flags"}, [][2]uint64{{4, 4}}, "its init calls fd_fdstat_set_flags (on descriptor 4)"},
		{[]string{"path_open"}, [][2]uint64{{3, 0}}, "its init calls path_open"},
		{[]string{"poll_oneoff"}, [][2]uint64{{0, 0}}, "its init calls poll_oneoff"},
	} {
		b := &BootLog{}
		ok := true
		for i, name := range c.calls {
			s := []uint64{c.args[i][0], c.args[i][1], 0, 0}
			if !b.check(name, s) {
				ok = false
				break
			}
		}
		if b.Taint != c.taint || ok != (c.taint == "") {
			t.Errorf("%v: taint %q (let through: %v), want %q", c.calls, b.Taint, ok, c.taint)
		}
	}
	// Flags init set are kept, to be replayed.
	b := &BootLog{}
	b.check("fd_fdstat_set_flags", []uint64{1, 4})
	if len(b.Flags) != 1 || b.Flags[0] != (BootFlags{Fd: 1, Flags: 4}) {
		t.Errorf("flags kept: %+v", b.Flags)
	}
	// An init that works too long is stopped.
	b = &BootLog{}
	for i := 0; i <= maxBootYields; i++ {
		b.check("sched_yield", []uint64{0})
	}
	if b.Taint == "" {
		t.Errorf("%d refills of the loop budget let through", maxBootYields+1)
	}
	// Nothing runs after the snapshot point.
	b = &BootLog{Paused: true}
	if b.check("args_get", []uint64{0, 0}) {
		t.Error("a call after the snapshot point let through")
	}
}
