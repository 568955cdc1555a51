package guest

import (
	"bytes"
	"strings"
	"testing"
)

func TestMergeDataGoBinary(t *testing.T) {
	raw := mustRawHello(t)
	merged, err := MergeData(raw)
	if err != nil {
		t.Fatalf("MergeData: %v", err)
	}
	before, after := segmentCount(t, raw), segmentCount(t, merged)
	if before < 10000 {
		t.Errorf("Go binary has %d data segments; expected tens of thousands (has the linker changed?)", before)
	}
	if after > 8 {
		t.Errorf("merged binary has %d data segments, want a handful", after)
	}
	t.Logf("data segments: %d -> %d; size %d -> %d", before, after, len(raw), len(merged))

	if !bytes.Equal(initialMemory(t, raw), initialMemory(t, merged)) {
		t.Error("initial linear memory differs after merging")
	}

	// Everything but the data and data count sections is kept byte for byte.
	if got, want := otherSections(t, merged), otherSections(t, raw); !equalSections(got, want) {
		t.Errorf("sections other than data changed: got %d sections, want %d", len(got), len(want))
	}

	// Merging is idempotent, so merging an already merged module is harmless.
	again, err := MergeData(merged)
	if err != nil {
		t.Fatalf("MergeData of merged module: %v", err)
	}
	if !bytes.Equal(again, merged) {
		t.Error("merging a merged module changed it")
	}
}

func otherSections(t *testing.T, bin []byte) [][]byte {
	t.Helper()
	secs, err := splitSections(bin)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, s := range secs {
		if s.id != sectionData && s.id != sectionDataCount {
			out = append(out, s.raw)
		}
	}
	return out
}

func equalSections(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// seg describes one data segment of a synthetic module.
type seg struct {
	flags uint32
	mem   uint32 // for flags 2
	expr  []byte // offset expression including end; nil for passive
	data  string
}

func i32(v int32) []byte { return append(append([]byte{opI32Const}, appendS32(nil, v)...), opEnd) }

func active(off int32, data string) seg { return seg{expr: i32(off), data: data} }

// module builds a module with one memory of pages pages, an optional data
// count section, the segments and a trailing custom section.
func module(pages uint32, dataCount bool, segs ...seg) []byte {
	b := bytes.Clone(wasmHeader)
	b = appendSection(b, 5, append([]byte{1, 0}, appendU32(nil, pages)...))
	if dataCount {
		b = appendSection(b, sectionDataCount, appendU32(nil, uint32(len(segs))))
	}
	var p []byte
	p = appendU32(p, uint32(len(segs)))
	for _, s := range segs {
		p = appendU32(p, s.flags)
		if s.flags == 2 {
			p = appendU32(p, s.mem)
		}
		p = append(p, s.expr...)
		p = appendU32(p, uint32(len(s.data)))
		p = append(p, s.data...)
	}
	b = appendSection(b, sectionData, p)
	return appendSection(b, sectionCustom, []byte("\x04keepsome bytes"))
}

func TestMergeDataSynthetic(t *testing.T) {
	tests := []struct {
		name      string
		in        []byte
		wantSegs  int  // after merging; -1: not countable here
		unchanged bool // MergeData must return the input as is
		noMemory  bool // cannot be instantiated to compare memory
	}{
		{"out of order", module(1, false, active(100, "bb"), active(0, "aa"), active(50, "cc")), 1, false, false},
		{"adjacent", module(1, false, active(0, "ab"), active(2, "cd")), 1, false, false},
		{"big gap stays split", module(2, false, active(0, "a"), active(70000, "b"), active(10, "c")), 2, false, false},
		{"data count rewritten", module(1, true, active(8, "x"), active(0, "y")), 1, false, false},
		{"explicit memory 0", module(1, false, seg{flags: 2, expr: i32(5), data: "m"}, active(0, "n")), 1, false, false},
		{"empty segments", module(1, false, active(3, ""), active(0, "z")), 1, false, false},
		{"no segments", module(1, false), 0, false, false},
		{"passive kept", module(1, true, active(0, "a"), seg{flags: 1, data: "p"}), 2, true, false},
		{"overlap kept", module(1, false, active(0, "abcd"), active(2, "XY")), 2, true, false},
		{"other memory kept", module(1, false, seg{flags: 2, mem: 1, expr: i32(0), data: "q"}), 1, true, true},
		{"global offset kept", module(1, false, seg{expr: []byte{0x23, 0, opEnd}, data: "g"}), 1, true, true},
		{"unknown expression kept", module(1, false, seg{expr: []byte{0x42, 0, opEnd}, data: "g"}), -1, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := MergeData(tt.in)
			if err != nil {
				t.Fatalf("MergeData: %v", err)
			}
			if tt.unchanged && !bytes.Equal(out, tt.in) {
				t.Errorf("module changed; want it returned as is")
			}
			if tt.wantSegs < 0 {
				return // this reader cannot count them
			}
			if got := segmentCount(t, out); got != tt.wantSegs {
				t.Errorf("%d segments after merging, want %d", got, tt.wantSegs)
			}
			if !equalSections(otherSections(t, out), otherSections(t, tt.in)) {
				t.Error("sections other than data changed")
			}
			secs, _ := splitSections(out)
			for _, s := range secs {
				if s.id == sectionDataCount {
					if n, _, _ := readU32(s.payload); int(n) != tt.wantSegs {
						t.Errorf("data count section says %d, want %d", n, tt.wantSegs)
					}
				}
			}
			if !tt.noMemory && !bytes.Equal(initialMemory(t, out), initialMemory(t, tt.in)) {
				t.Error("initial memory differs")
			}
		})
	}
}

func TestMergeDataMalformed(t *testing.T) {
	good := module(1, true, active(0, "abc"), active(10, "def"))
	withData := func(payload ...byte) []byte {
		return appendSection(bytes.Clone(wasmHeader), sectionData, payload)
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "not a WebAssembly module"},
		{"text", []byte("hello, world"), "not a WebAssembly module"},
		{"version 2", append([]byte("\x00asm"), 2, 0, 0, 0), "unsupported WebAssembly version"},
		{"section past end", append(bytes.Clone(wasmHeader), 1, 10, 0), "runs past the end"},
		{"truncated size", append(bytes.Clone(wasmHeader), 1, 0x80), "truncated"},
		{"overlong size", append(bytes.Clone(wasmHeader), 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0), "LEB128"},
		{"huge segment count", withData(0xff, 0xff, 0x03), "cannot fit"},
		{"segment past end", withData(1, 0, opI32Const, 0, opEnd, 9, 'a'), "past the end"},
		{"unknown flags", withData(1, 3, 0), "unknown flags"},
		{"missing end", withData(1, 0, opI32Const, 0, 1, 'a'), "does not end"},
		{"stray bytes", withData(0, 7), "stray bytes"},
		{"offset overflows", withData(1, 0, opI32Const, 0x80, 0x80, 0x80, 0x80, 0x10, opEnd, 0), "overflows"},
		{"data count mismatch", appendSection(appendSection(bytes.Clone(wasmHeader), sectionDataCount, []byte{3}), sectionData, []byte{1, 0, opI32Const, 0, opEnd, 1, 'a'}), "data count section says 3"},
		{"two data sections", appendSection(withData(0), sectionData, []byte{0}), "two data sections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := MergeData(tt.in)
			if err == nil {
				t.Fatalf("MergeData succeeded (%d bytes); want an error containing %q", len(out), tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}

	// Cutting a module anywhere inside a section must fail cleanly.
	secs, err := splitSections(good)
	if err != nil {
		t.Fatal(err)
	}
	boundary := map[int]bool{len(wasmHeader): true}
	for _, s := range secs {
		boundary[s.offset+len(s.raw)] = true
	}
	for n := 0; n < len(good); n++ {
		if boundary[n] {
			continue
		}
		if _, err := MergeData(good[:n]); err == nil {
			t.Errorf("MergeData of the first %d of %d bytes succeeded", n, len(good))
		}
	}
}

func TestMergeDataTruncatedGoBinary(t *testing.T) {
	raw := mustRawHello(t)
	secs, err := splitSections(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secs {
		if s.id != sectionData {
			continue
		}
		// Cut inside the data section at a few places.
		for _, frac := range []int{1, 2, 3, 5, 7, 9} {
			n := s.offset + len(s.raw)*frac/10
			if _, err := MergeData(raw[:n]); err == nil {
				t.Errorf("MergeData of a Go binary cut at byte %d succeeded", n)
			}
		}
	}
}

func TestLEB128(t *testing.T) {
	for _, v := range []uint32{0, 1, 63, 64, 127, 128, 300, 1<<21 + 5, 1<<32 - 1} {
		b := appendU32(nil, v)
		got, n, err := readU32(b)
		if err != nil || got != v || n != len(b) {
			t.Errorf("u32 %d: encoded % x, decoded %d (%d bytes, %v)", v, b, got, n, err)
		}
	}
	for _, v := range []int32{0, 1, -1, 63, 64, -64, -65, 1 << 20, -1 << 31, 1<<31 - 1} {
		b := appendS32(nil, v)
		got, n, err := readS32(b)
		if err != nil || got != v || n != len(b) {
			t.Errorf("s32 %d: encoded % x, decoded %d (%d bytes, %v)", v, b, got, n, err)
		}
	}
}

func FuzzMergeData(f *testing.F) {
	f.Add(module(1, true, active(0, "abc"), active(10, "def")))
	f.Add(module(1, false, active(9, "b"), seg{flags: 1, data: "p"}))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x0b\x01\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := MergeData(in)
		if err != nil {
			return
		}
		again, err := MergeData(out)
		if err != nil {
			t.Fatalf("merged module does not parse: %v", err)
		}
		if !bytes.Equal(again, out) {
			t.Fatal("merging is not idempotent")
		}
	})
}

func TestDataRanges(t *testing.T) {
	raw := mustRawHello(t)
	merged, err := MergeData(raw)
	if err != nil {
		t.Fatal(err)
	}
	for name, bin := range map[string][]byte{"raw": raw, "merged": merged} {
		rs := DataRanges(bin)
		if len(rs) == 0 {
			t.Fatalf("%s: no data ranges", name)
		}
		total := uint64(0)
		for i, r := range rs {
			if r[1] <= r[0] || (i > 0 && r[0] <= rs[i-1][1]) {
				t.Fatalf("%s: ranges not sorted, disjoint and non-empty: %v", name, rs)
			}
			total += uint64(r[1] - r[0])
		}
		// Every byte a data segment writes is inside the ranges, and the
		// initial memory is zero outside them.
		mem := initialMemory(t, bin)
		outside := 0
		from := uint32(0)
		for _, r := range append(rs, [2]uint32{uint32(len(mem)), uint32(len(mem))}) {
			for _, b := range mem[from:min(r[0], uint32(len(mem)))] {
				if b != 0 {
					outside++
				}
			}
			from = r[1]
		}
		if outside != 0 {
			t.Fatalf("%s: %d non-zero bytes outside the data ranges", name, outside)
		}
		if total < 100<<10 {
			t.Fatalf("%s: data ranges cover only %d bytes", name, total)
		}
	}
	if DataRanges([]byte("junk")) != nil {
		t.Fatal("junk has data ranges")
	}
}
