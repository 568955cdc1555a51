package guest

import (
	"errors"
	"fmt"
	"slices"
)

// mergeMaxGap is the largest run of zero bytes MergeData writes out to join
// two segments. Go's linker already cuts segments at every zero run of 8
// bytes or more, so most gaps are short; wazero pays per segment at every
// instantiation, while a zero byte costs one byte of copy. Larger gaps stay
// separate segments so that the file does not grow by the size of the heap
// arena's empty spans.
const mergeMaxGap = 4096

// MergeData returns wasm with its active data segments coalesced: segments
// for memory 0 with constant offsets are sorted by offset and every run whose
// gaps are at most a few KiB becomes one segment, the gaps filled with zeros.
// Go's linker emits tens of thousands of small segments and wazero applies
// each one separately at every instantiation; merging them makes
// instantiation several times faster while the initial linear memory stays
// byte-identical. Every section but the data and data count sections is
// copied byte for byte.
//
// Malformed input returns an error. A well-formed module that cannot be
// merged safely (passive segments, whose indices memory.init refers to;
// segments for other memories; non-constant or overlapping offsets) is
// returned unchanged.
func MergeData(wasm []byte) ([]byte, error) {
	secs, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	dataIdx, countIdx := -1, -1
	for i, s := range secs {
		switch s.id {
		case sectionData:
			if dataIdx >= 0 {
				return nil, fmt.Errorf("two data sections (offsets %d and %d)", secs[dataIdx].offset, s.offset)
			}
			dataIdx = i
		case sectionDataCount:
			if countIdx >= 0 {
				return nil, fmt.Errorf("two data count sections (offsets %d and %d)", secs[countIdx].offset, s.offset)
			}
			countIdx = i
		}
	}
	if dataIdx < 0 {
		return wasm, nil
	}
	segs, err := parseDataSection(secs[dataIdx].payload)
	if errors.Is(err, errUnsupported) {
		return wasm, nil
	}
	if err != nil {
		return nil, err
	}
	if countIdx >= 0 {
		p := secs[countIdx].payload
		n, size, err := readU32(p)
		if err != nil {
			return nil, fmt.Errorf("data count section: %w", err)
		}
		if size != len(p) {
			return nil, fmt.Errorf("data count section: %d stray bytes", len(p)-size)
		}
		if int(n) != len(segs) {
			return nil, fmt.Errorf("data count section says %d segments, data section has %d", n, len(segs))
		}
	}

	merged, ok := mergeSegments(segs, mergeMaxGap)
	if !ok {
		return wasm, nil
	}

	var payload []byte
	payload = appendU32(payload, uint32(len(merged)))
	for _, s := range merged {
		payload = append(payload, 0x00, opI32Const)
		payload = appendS32(payload, int32(s.offset))
		payload = append(payload, opEnd)
		payload = appendU32(payload, uint32(len(s.init)))
		payload = append(payload, s.init...)
	}

	out := make([]byte, 0, len(wasm))
	out = append(out, wasm[:len(wasmHeader)]...)
	for i, s := range secs {
		switch i {
		case dataIdx:
			out = appendSection(out, sectionData, payload)
		case countIdx:
			out = appendSection(out, sectionDataCount, appendU32(nil, uint32(len(merged))))
		default:
			out = append(out, s.raw...)
		}
	}
	return out, nil
}

// mergeSegments sorts segs by offset and joins neighbours separated by at
// most maxGap bytes. It reports false when the segments cannot be merged
// without changing what instantiation writes to memory.
func mergeSegments(segs []dataSegment, maxGap uint64) ([]dataSegment, bool) {
	for _, s := range segs {
		if s.mode == 1 || s.memory != 0 || !s.constOffset {
			return nil, false
		}
	}
	// Stable, so that equal offsets keep their order; overlaps are refused
	// below anyway, because sorting would change which write lands last.
	sorted := slices.Clone(segs)
	slices.SortStableFunc(sorted, func(a, b dataSegment) int {
		switch {
		case a.offset < b.offset:
			return -1
		case a.offset > b.offset:
			return 1
		}
		return 0
	})
	var out []dataSegment
	var end uint64 // end of the last segment in out
	for _, s := range sorted {
		off := uint64(s.offset)
		if len(out) > 0 {
			if off < end {
				return nil, false // overlap
			}
			if off-end <= maxGap {
				last := &out[len(out)-1]
				last.init = append(last.init, make([]byte, off-end)...)
				last.init = append(last.init, s.init...)
				end = off + uint64(len(s.init))
				continue
			}
		}
		// Copy, so that appending to init never writes into the input.
		out = append(out, dataSegment{offset: s.offset, constOffset: true, init: slices.Clone(s.init)})
		end = off + uint64(len(s.init))
	}
	return out, true
}

// DataRanges returns the ranges [start, end) of linear memory that a
// module's data segments write when it is instantiated, sorted and
// disjoint, or nil when that cannot be known statically (no data section,
// passive segments, computed offsets). The engine relies on it to skip
// clearing bytes the next instance overwrites anyway.
func DataRanges(wasm []byte) [][2]uint32 {
	segs, err := moduleData(wasm)
	if err != nil || segs == nil {
		return nil
	}
	merged, ok := mergeSegments(segs, 0)
	if !ok {
		return nil
	}
	var out [][2]uint32
	for _, m := range merged {
		if len(m.init) == 0 {
			continue
		}
		end := uint64(m.offset) + uint64(len(m.init))
		if end > 1<<32-1 {
			return nil
		}
		if n := len(out); n > 0 && out[n-1][1] == m.offset {
			out[n-1][1] = uint32(end)
			continue
		}
		out = append(out, [2]uint32{m.offset, uint32(end)})
	}
	return out
}
