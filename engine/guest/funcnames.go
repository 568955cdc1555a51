package guest

import (
	"bytes"
	"encoding/binary"
	"regexp"
)

// goNameChars is what Go's linker keeps of a function's name in the wasm
// name section (cmd/link/internal/wasm: every other character becomes an
// underscore).
var goNameChars = regexp.MustCompile(`[^\w.]`)

// pclntabMagic starts the runtime's function table on wasm: Go 1.20's magic
// number, two zero bytes, the instruction size 1 and the pointer size 8.
var pclntabMagic = []byte{0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8}

// GoFuncNames maps the names of a Go module's functions as its name section
// gives them, where Go's linker replaced every character other than a
// letter, digit, underscore or dot by an underscore ("main.__server_.handle"),
// to the names Go gives them ("main.(*server).handle"), read from the
// runtime's table of function names (funcnametab, in the pclntab the module's
// data carries). A name that two Go names would share is left out. It
// returns nil for a module without the table, such as one not built by Go.
// Names the linker kept as they are map to themselves.
func GoFuncNames(wasm []byte) map[string]string {
	segs, err := moduleData(wasm)
	if err != nil {
		return nil
	}
	// The linker splits the data where it has runs of zeros: join the
	// pieces again, with their zeros, to read the table whole.
	merged, ok := mergeSegments(segs, 1<<16)
	if !ok {
		return nil
	}
	for _, m := range merged {
		if names := funcNameTable(m.init); names != nil {
			return names
		}
	}
	return nil
}

// funcNameTable reads the function names of the pclntab in data, if any.
// The runtime's pcHeader (runtime/symtab.go) is the magic and four bytes,
// then nfunc, nfiles, an unused word, and the offsets from the header of
// funcnametab and of cutab, which follows it: 8 bytes each.
func funcNameTable(data []byte) map[string]string {
	at := bytes.Index(data, pclntabMagic)
	if at < 0 || len(data)-at < 48 {
		return nil
	}
	hdr := data[at:]
	nameOff, cuOff := binary.LittleEndian.Uint64(hdr[32:]), binary.LittleEndian.Uint64(hdr[40:])
	if nameOff < 48 || cuOff < nameOff || cuOff > uint64(len(hdr)) {
		return nil
	}
	names := map[string]string{}
	shared := map[string]bool{}
	for _, b := range bytes.Split(hdr[nameOff:cuOff], []byte{0}) {
		if len(b) == 0 {
			continue
		}
		name := string(b)
		key := goNameChars.ReplaceAllString(name, "_")
		if old, ok := names[key]; ok && old != name {
			shared[key] = true
		}
		names[key] = name
	}
	for key := range shared {
		delete(names, key)
	}
	return names
}
