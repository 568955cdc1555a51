package guest

import (
	"errors"
	"fmt"
)

// A tiny reader for the WebAssembly binary format: just enough to split a
// module into sections and to decode and re-encode the data section. Every
// read is bounds-checked, so malformed input yields an error, never a panic.

const (
	sectionCustom    = 0
	sectionData      = 11
	sectionDataCount = 12

	opI32Const = 0x41
	opEnd      = 0x0b
)

// errUnsupported marks well-formed input that this reader cannot handle.
var errUnsupported = errors.New("unsupported")

var wasmHeader = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// section is one section of a module. raw is the whole section as it appears
// in the input (id, size and payload), so untouched sections are copied back
// byte for byte.
type section struct {
	id      byte
	offset  int // of the id byte in the module
	raw     []byte
	payload []byte
}

// withSections reassembles a module from its sections, with the payloads
// of the sections in repl, by id, replaced.
func withSections(secs []section, repl map[byte][]byte) []byte {
	out := append([]byte(nil), wasmHeader...)
	for _, s := range secs {
		if p, ok := repl[s.id]; ok && s.id != sectionCustom {
			out = appendSection(out, s.id, p)
			continue
		}
		out = append(out, s.raw...)
	}
	return out
}

// sectionOf is the section of secs with the given id (not a custom one,
// which may repeat), or nil.
func sectionOf(secs []section, id byte) *section {
	for i := range secs {
		if secs[i].id == id {
			return &secs[i]
		}
	}
	return nil
}

// splitSections checks the module header and cuts the rest into sections.
func splitSections(bin []byte) ([]section, error) {
	if len(bin) < len(wasmHeader) || string(bin[:4]) != string(wasmHeader[:4]) {
		return nil, errors.New("not a WebAssembly module (missing \\0asm magic)")
	}
	if string(bin[4:8]) != string(wasmHeader[4:8]) {
		return nil, fmt.Errorf("unsupported WebAssembly version % x (want 1)", bin[4:8])
	}
	var secs []section
	pos := len(wasmHeader)
	for pos < len(bin) {
		start := pos
		id := bin[pos]
		pos++
		size, n, err := readU32(bin[pos:])
		if err != nil {
			return nil, fmt.Errorf("section %d at offset %d: size: %w", id, start, err)
		}
		pos += n
		if uint64(size) > uint64(len(bin)-pos) {
			return nil, fmt.Errorf("section %d at offset %d: size %d runs past the end of the module", id, start, size)
		}
		end := pos + int(size)
		secs = append(secs, section{id: id, offset: start, raw: bin[start:end], payload: bin[pos:end]})
		pos = end
	}
	return secs, nil
}

// dataSegment is one entry of the data section. Only active segments for
// memory 0 whose offset is a lone i32.const can be merged; the rest are kept
// as they are and disable merging.
type dataSegment struct {
	mode   uint32 // 0 active memory 0, 1 passive, 2 active with explicit memory index
	memory uint32
	// constOffset is true when the offset expression is `i32.const N; end`.
	constOffset bool
	offset      uint32
	init        []byte
}

// parseDataSection decodes the payload of a data section.
func parseDataSection(p []byte) ([]dataSegment, error) {
	count, n, err := readU32(p)
	if err != nil {
		return nil, fmt.Errorf("data section: segment count: %w", err)
	}
	p = p[n:]
	// Every segment takes at least 3 bytes; refuse absurd counts before
	// allocating for them.
	if uint64(count) > uint64(len(p)) {
		return nil, fmt.Errorf("data section: %d segments cannot fit in %d bytes", count, len(p))
	}
	segs := make([]dataSegment, 0, count)
	for i := uint32(0); i < count; i++ {
		var s dataSegment
		mode, n, err := readU32(p)
		if err != nil {
			return nil, fmt.Errorf("data segment %d: flags: %w", i, err)
		}
		p = p[n:]
		s.mode = mode
		switch mode {
		case 0, 2:
			if mode == 2 {
				mem, n, err := readU32(p)
				if err != nil {
					return nil, fmt.Errorf("data segment %d: memory index: %w", i, err)
				}
				p = p[n:]
				s.memory = mem
			}
			n, off, isConst, err := readConstExpr(p)
			if err != nil {
				return nil, fmt.Errorf("data segment %d: offset: %w", i, err)
			}
			p = p[n:]
			s.constOffset, s.offset = isConst, off
		case 1:
		default:
			return nil, fmt.Errorf("data segment %d: unknown flags %d", i, mode)
		}
		size, n, err := readU32(p)
		if err != nil {
			return nil, fmt.Errorf("data segment %d: size: %w", i, err)
		}
		p = p[n:]
		if uint64(size) > uint64(len(p)) {
			return nil, fmt.Errorf("data segment %d: %d bytes run past the end of the data section", i, size)
		}
		s.init = p[:size]
		p = p[size:]
		segs = append(segs, s)
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("data section: %d stray bytes after the last segment", len(p))
	}
	return segs, nil
}

// readConstExpr reads an offset expression up to its end opcode and reports
// its value when it is exactly `i32.const N; end`. A lone `global.get G; end`
// is read but has no value known here. Anything else is errUnsupported: this
// reader does not decode general instruction sequences, so it cannot even
// find where such an expression ends.
func readConstExpr(p []byte) (n int, value uint32, isConst bool, err error) {
	if len(p) == 0 {
		return 0, 0, false, errors.New("missing expression")
	}
	switch p[0] {
	case opI32Const:
		v, m, err := readS32(p[1:])
		if err != nil {
			return 0, 0, false, fmt.Errorf("i32.const: %w", err)
		}
		n = 1 + m
		if n >= len(p) || p[n] != opEnd {
			return 0, 0, false, errors.New("expression does not end after i32.const")
		}
		return n + 1, uint32(v), true, nil
	case 0x23: // global.get
		_, m, err := readU32(p[1:])
		if err != nil {
			return 0, 0, false, fmt.Errorf("global.get: %w", err)
		}
		n = 1 + m
		if n >= len(p) || p[n] != opEnd {
			return 0, 0, false, errors.New("expression does not end after global.get")
		}
		return n + 1, 0, false, nil
	default:
		return 0, 0, false, fmt.Errorf("%w: offset expression starting with opcode 0x%02x", errUnsupported, p[0])
	}
}

// readU32 decodes an unsigned LEB128 number of at most 32 bits.
func readU32(p []byte) (uint32, int, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if i >= len(p) {
			return 0, 0, errors.New("truncated LEB128 number")
		}
		b := p[i]
		if i == 4 && b&0xf0 != 0 {
			return 0, 0, errors.New("LEB128 number overflows 32 bits")
		}
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("LEB128 number longer than 5 bytes")
}

// readS32 decodes a signed LEB128 number of at most 32 bits.
func readS32(p []byte) (int32, int, error) {
	var v int64
	for i := 0; i < 5; i++ {
		if i >= len(p) {
			return 0, 0, errors.New("truncated LEB128 number")
		}
		b := p[i]
		v |= int64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			shift := 7 * (i + 1)
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift // sign-extend
			}
			if v < -1<<31 || v > 1<<31-1 {
				return 0, 0, errors.New("LEB128 number overflows 32 bits")
			}
			return int32(v), i + 1, nil
		}
	}
	return 0, 0, errors.New("LEB128 number longer than 5 bytes")
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendS32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// appendSection appends a section with a minimal-length size prefix.
func appendSection(b []byte, id byte, payload []byte) []byte {
	b = append(b, id)
	b = appendU32(b, uint32(len(payload)))
	return append(b, payload...)
}

// moduleData decodes the data section of wasm: its segments, or nil when
// it has none.
func moduleData(wasm []byte) ([]dataSegment, error) {
	secs, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	data := sectionOf(secs, sectionData)
	if data == nil {
		return nil, nil
	}
	return parseDataSection(data.payload)
}
