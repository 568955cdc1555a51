package engine

import (
	"compress/gzip"
	"encoding/binary"
	"io"
)

// A small encoder of pprof's profile.proto (github.com/google/pprof,
// proto/profile.proto), enough for the guest profile: sample types,
// samples with labels, one location per function, functions and the string
// table. go tool pprof reads it gzipped.

// pprofSample is one sample: its stack, leaf first, as function names,
// its values in the order of the profile's sample types, and its string
// labels as key, value pairs.
type pprofSample struct {
	stack  []string
	values []int64
	labels [][2]string
}

// pprofProfile is what writePprof encodes.
type pprofProfile struct {
	types    [][2]string // sample types: (type, unit)
	deflt    string      // the default sample type
	samples  []pprofSample
	comments []string
}

// pprofStrings is a profile's string table: index 0 is "".
type pprofStrings struct {
	list []string
	idx  map[string]int64
}

func (s *pprofStrings) id(v string) int64 {
	if s.idx == nil {
		s.idx = map[string]int64{"": 0}
		s.list = []string{""}
	}
	if i, ok := s.idx[v]; ok {
		return i
	}
	i := int64(len(s.list))
	s.idx[v] = i
	s.list = append(s.list, v)
	return i
}

// protoBuf appends protocol buffer fields.
type protoBuf []byte

func (b *protoBuf) varint(field int, v uint64) {
	*b = binary.AppendUvarint(binary.AppendUvarint(*b, uint64(field)<<3), v)
}

func (b *protoBuf) bytes(field int, v []byte) {
	*b = binary.AppendUvarint(binary.AppendUvarint(*b, uint64(field)<<3|2), uint64(len(v)))
	*b = append(*b, v...)
}

// packed appends a packed repeated varint field.
func (b *protoBuf) packed(field int, vs []uint64) {
	var inner []byte
	for _, v := range vs {
		inner = binary.AppendUvarint(inner, v)
	}
	b.bytes(field, inner)
}

// encode returns the profile as profile.proto bytes, not compressed.
// Functions and locations are numbered from 1 in the order their names
// first appear in the samples: the same samples give the same bytes.
func (p *pprofProfile) encode() []byte {
	var strs pprofStrings
	strs.id("")
	var out protoBuf
	for _, t := range p.types { // 1: sample_type
		var vt protoBuf
		vt.varint(1, uint64(strs.id(t[0])))
		vt.varint(2, uint64(strs.id(t[1])))
		out.bytes(1, vt)
	}
	funcs := map[string]uint64{}
	var names []string
	for _, s := range p.samples { // 2: sample
		var sb protoBuf
		locs := make([]uint64, len(s.stack))
		for i, name := range s.stack {
			id, ok := funcs[name]
			if !ok {
				id = uint64(len(names) + 1)
				funcs[name] = id
				names = append(names, name)
			}
			locs[i] = id
		}
		sb.packed(1, locs)
		vals := make([]uint64, len(s.values))
		for i, v := range s.values {
			vals[i] = uint64(v)
		}
		sb.packed(2, vals)
		for _, l := range s.labels {
			var lb protoBuf
			lb.varint(1, uint64(strs.id(l[0])))
			lb.varint(2, uint64(strs.id(l[1])))
			sb.bytes(3, lb)
		}
		out.bytes(2, sb)
	}
	for i, name := range names { // 4: location, one per function
		id := uint64(i + 1)
		var line protoBuf
		line.varint(1, id) // function_id
		var loc protoBuf
		loc.varint(1, id)
		loc.bytes(4, line)
		out.bytes(4, loc)
		var fn protoBuf // 5: function
		fn.varint(1, id)
		fn.varint(2, uint64(strs.id(name)))
		fn.varint(3, uint64(strs.id(name)))
		out.bytes(5, fn)
	}
	var comments []uint64
	for _, c := range p.comments {
		comments = append(comments, uint64(strs.id(c)))
	}
	if len(comments) > 0 {
		out.packed(13, comments) // 13: comment
	}
	if p.deflt != "" {
		out.varint(14, uint64(strs.id(p.deflt))) // 14: default_sample_type
	}
	for _, s := range strs.list { // 6: string_table, every string now known
		out.bytes(6, []byte(s))
	}
	return out
}

// writePprof writes the profile gzipped, as go tool pprof reads it.
func writePprof(w io.Writer, p *pprofProfile) error {
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(p.encode()); err != nil {
		return err
	}
	return zw.Close()
}
