package wasi

import (
	"encoding/binary"
	"slices"
	"sort"
	"testing"
)

// FuzzHostCalls drives every host function of both modules with arguments
// drawn from the input, against a guest of one 64 KiB page, and checks
// that the host never panics and that no call allocates more than
// smallAlloc. Its seed corpus holds issue 12's calls; as a normal test it
// runs just those and a few more, in well under a second.
//
// Input: a sequence of calls, each one byte choosing the function (modulo
// their number), then one byte per parameter choosing an interesting value
// or, for 0xff, the next 8 bytes as the raw value.
func FuzzHostCalls(f *testing.F) {
	names := fuzzNames()
	idx := func(name string) byte {
		i := slices.Index(names, name)
		if i < 0 {
			f.Fatalf("no host function %s", name)
		}
		return byte(i)
	}
	raw := func(v uint64) []byte { return append([]byte{0xff}, binary.LittleEndian.AppendUint64(nil, v)...) }
	call := func(name string, args ...[]byte) []byte {
		return slices.Concat(append([][]byte{{idx(name)}}, args...)...)
	}
	v := func(x uint64) []byte { return raw(x) }
	// The cases.
	f.Add(call("wasi_snapshot_preview1.poll_oneoff", v(0), v(4096), v(0x55555556), v(8192)))
	f.Add(call("wasi_snapshot_preview1.poll_oneoff", v(0), v(4096), v(0x5555556), v(8192)))
	f.Add(call("wasi_snapshot_preview1.fd_write", v(1), v(0), v(0x20000000), v(512)))
	f.Add(call("wasi_snapshot_preview1.fd_readdir", v(3), v(0), v(0xffffffff), v(0), v(100)))
	f.Add(call("seedfall.assert", v(0), v(1), v(0), v(64<<20), v(0), v(64<<20), v(0), v(64<<20)))
	f.Add(call("seedfall.event", v(0), v(0xffffffff), v(0), v(0xffffffff)))
	f.Add(call("seedfall.op_invoke", v(0), v(0xffff)))
	// Every function once with edge values, and with its interesting ones.
	for _, name := range names {
		f.Add(call(name, v(0xffffffff), v(0xffffffff), v(0xffffffff), v(0xffffffff), v(0xffffffff), v(0xffffffff), v(0xffffffff), v(0xffffffff), v(0xffffffff)))
		f.Add(call(name, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8}))
		f.Add(call(name, []byte{9, 10, 11, 12, 13, 14, 15, 16, 17}))
	}
	h := newHostile(f, 1)
	f.Fuzz(func(t *testing.T, in []byte) {
		h.reset(t)
		mem := h.m.Memory()
		b, _ := mem.Read(0, mem.Size())
		clear(b)
		mem.WriteString(0x100, "f")
		mem.WriteString(0x200, "2:kv,3:put,1:k,1:v,")
		for calls := 0; len(in) > 0 && calls < 16; calls++ {
			name := names[int(in[0])%len(names)]
			in = in[1:]
			fn := funcsByName[name]
			args := make([]uint64, len(fn.params))
			for i := range args {
				args[i], in = fuzzValue(in, uint64(mem.Size()))
			}
			var got uint64
			if r := h.within(func() {
				got = allocated(func() { h.call(name, args...) })
			}); r != nil {
				t.Fatalf("%s%#x: host panicked: %v", name, args, r)
			}
			if got > smallAlloc {
				t.Fatalf("%s%#x: host allocated %d bytes", name, args, got)
			}
			if name == "wasi_snapshot_preview1.proc_exit" || h.p.Killed() {
				return
			}
		}
	})
}

// fuzzNames is every host function's "module.name", sorted.
func fuzzNames() []string {
	if funcsByName == nil {
		funcsByName = hostFuncs()
	}
	var out []string
	for n := range funcsByName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// fuzzValue takes one argument from in: a selector byte for an interesting
// value, or 0xff and 8 raw bytes.
func fuzzValue(in []byte, size uint64) (uint64, []byte) {
	if len(in) == 0 {
		return 0, nil
	}
	sel := in[0]
	in = in[1:]
	if sel == 0xff {
		var b [8]byte
		n := copy(b[:], in)
		return binary.LittleEndian.Uint64(b[:]), in[n:]
	}
	vals := []uint64{0, 1, 2, 3, 4, 5, 0x100, 0x200, 19, size - 1, size, size - 48, size - 32, size - 8, size - 4,
		0xffffffff, 0x7fffffff, 0x80000000, 1 << 63, 1<<64 - 1, 48, 1024, 1025, 4096, 0x55555556, 0x5555556, 0x20000000}
	return vals[int(sel)%len(vals)], in
}
