package engine

import "testing"

// A freed memory comes back zeroed except where the module's data segments
// will write again.
func TestMemPoolClearsAllButTheDataRanges(t *testing.T) {
	pool := newMemPool([][2]uint32{{100, 200}, {300, 400}}).(*memPool)
	m := pool.Allocate(0, 1<<20)
	buf := m.Reallocate(1000)
	for i := range buf {
		buf[i] = 0xff
	}
	grown := m.Reallocate(4096)
	if &grown[0] != &buf[0] {
		t.Fatal("growing moved the memory")
	}
	m.Free()
	again := pool.Allocate(0, 1<<20)
	if again != m {
		t.Fatal("the pool did not hand back the freed memory")
	}
	b := again.Reallocate(4096)
	for i, v := range b {
		kept := (i >= 100 && i < 200) || (i >= 300 && i < 400)
		if kept && v != 0xff || !kept && v != 0 {
			t.Fatalf("byte %d = %#x after Free (kept=%v)", i, v, kept)
		}
	}
	again.Free()
}
