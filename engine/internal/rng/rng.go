// Package rng owns seedfall's keyed random streams. A draw is a pure function
// of (seed, stream, node, extra key, counter), so adding, removing or
// reordering draws on one stream never moves the draws of another, and a run
// can be replayed or re-keyed stream by stream.
package rng

import (
	"math"
	"math/bits"
	"time"
)

// Stream is one keyed sequence of draws. The zero value is a valid stream
// keyed by zero; use New to key it.
type Stream struct {
	key uint64
	n   uint64
}

// New keys a stream by the run's seed, the stream's name, a node index (use -1
// for world-wide streams) and any extra key parts (an incarnation, a fault
// kind's operation number).
func New(seed uint64, stream string, node int, extra ...uint64) Stream {
	k := mix(seed ^ 0x5eedfa11)
	k = mix(k ^ hashString(stream))
	k = mix(k ^ uint64(int64(node)))
	for _, e := range extra {
		k = mix(k ^ e)
	}
	return Stream{key: k}
}

// Rekey derives the seed a branch gives the streams it re-keys: a pure
// function of the seed before the branch and the branch's key.
func Rekey(seed, key uint64) uint64 { return mix(mix(seed^0xb4a9c4) ^ key) }

// Uint64 returns the next draw.
func (s *Stream) Uint64() uint64 {
	s.n++
	return mix(s.key + s.n*0x9e3779b97f4a7c15)
}

// Count is how many draws the stream has made.
func (s *Stream) Count() uint64 { return s.n }

// Intn returns a draw in [0, n); n must be positive.
func (s *Stream) Intn(n int) int {
	hi, _ := bits.Mul64(s.Uint64(), uint64(n))
	return int(hi)
}

// Float64 returns a draw in [0, 1).
func (s *Stream) Float64() float64 {
	return float64(s.Uint64()>>11) / (1 << 53)
}

// Between returns a duration drawn uniformly from [lo, hi].
func (s *Stream) Between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	span := uint64(hi-lo) + 1
	h, _ := bits.Mul64(s.Uint64(), span)
	return lo + time.Duration(h)
}

// Exp returns the wait until the next event of a Poisson process with the
// given rate per second, rounded to a nanosecond. A rate of zero never fires
// and returns the largest duration.
func (s *Stream) Exp(ratePerSec float64) time.Duration {
	if ratePerSec <= 0 {
		return time.Duration(math.MaxInt64)
	}
	u := 1 - s.Float64() // (0, 1]
	secs := -math.Log(u) / ratePerSec
	if secs*1e9 >= math.MaxInt64/2 {
		return time.Duration(math.MaxInt64 / 2)
	}
	return time.Duration(secs * 1e9)
}

// Fill writes draws into p, eight bytes per draw.
func (s *Stream) Fill(p []byte) {
	for len(p) >= 8 {
		v := s.Uint64()
		p[0], p[1], p[2], p[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		p[4], p[5], p[6], p[7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
		p = p[8:]
	}
	if len(p) > 0 {
		v := s.Uint64()
		for i := range p {
			p[i] = byte(v >> (8 * i))
		}
	}
}

// mix is SplitMix64's finalizer: a bijection with good avalanche.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// hashString is FNV-1a, stable across machines and Go versions.
func hashString(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// ForName keys a stream by a node's name rather than its position, so that
// adding a node to a world does not move the draws of the others.
func ForName(seed uint64, stream, name string, extra ...uint64) Stream {
	return New(seed, stream, -1, append([]uint64{hashString(name)}, extra...)...)
}
