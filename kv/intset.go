package kv

import (
	"encoding/binary"
	"math"
	"sort"
)

// intset is a sorted array of distinct integers, each stored in the
// fewest bytes (2, 4 or 8) that hold every one of them, as Redis's intset
// stores a small set of integers: 2 bytes a member for numbers below
// 32,768 in magnitude, where a table of strings takes some 70.
//
// Inserting and removing move the members after the place, as Redis's do:
// the set holds no more than set-max-intset-entries members, so that is
// at most 4 KiB at its default.
//
// The width is data's first byte, so that an intset is a slice and a set
// 32 bytes, a size class below what a field of its own would make it.
type intset struct {
	data []byte // the width (2, 4 or 8), then the members, little-endian; nil while empty
}

// intWidth returns the bytes v needs: 2, 4 or 8.
func intWidth(v int64) int {
	switch {
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 4
	}
	return 8
}

// width returns the bytes a member takes: 2, 4 or 8, or 0 while empty.
func (s *intset) width() int {
	if len(s.data) == 0 {
		return 0
	}
	return int(s.data[0])
}

func (s *intset) len() int {
	if len(s.data) == 0 {
		return 0
	}
	return (len(s.data) - 1) / int(s.data[0])
}

// at returns the i-th smallest member.
func (s *intset) at(i int) int64 {
	m := s.data[1:]
	switch s.data[0] {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(m[2*i:])))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(m[4*i:])))
	}
	return int64(binary.LittleEndian.Uint64(m[8*i:]))
}

// put stores v as the i-th member, in the set's width.
func (s *intset) put(i int, v int64) {
	m := s.data[1:]
	switch s.data[0] {
	case 2:
		binary.LittleEndian.PutUint16(m[2*i:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(m[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(m[8*i:], uint64(v))
	}
}

// search returns where v is, or where it would go, and whether it is
// there.
func (s *intset) search(v int64) (int, bool) {
	n := s.len()
	if n == 0 || intWidth(v) > s.width() {
		// Wider than every member: past one end.
		if v < 0 {
			return 0, false
		}
		return n, false
	}
	i := sort.Search(n, func(i int) bool { return s.at(i) >= v })
	return i, i < n && s.at(i) == v
}

func (s *intset) has(v int64) bool {
	_, ok := s.search(v)
	return ok
}

// add inserts v and reports whether it was new.
func (s *intset) add(v int64) bool {
	if w := intWidth(v); w > s.width() {
		s.widen(w)
	}
	i, found := s.search(v)
	if found {
		return false
	}
	w := s.width()
	s.data = resizePacked(s.data, len(s.data)+w)
	copy(s.data[1+(i+1)*w:], s.data[1+i*w:len(s.data)-w])
	s.put(i, v)
	return true
}

// resizePacked returns b at length n, its bytes kept up to the shorter
// length, reallocated with a quarter more room when n is past its
// capacity. The packed encodings (intsets, small hashes) grow an element
// at a time and are kept for long, so their spare room stays small.
func resizePacked(b []byte, n int) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	grown := make([]byte, n, n+n/4)
	copy(grown, b)
	return grown
}

// shrinkPacked returns b in a smaller array once it is under a quarter
// full, a packed encoding's counterpart of resizePacked.
func shrinkPacked(b []byte) []byte {
	if n := len(b); cap(b) > 64 && n < cap(b)/4 {
		return append(make([]byte, 0, n+n/4), b...)
	}
	return b
}

// widen rewrites every member in w bytes, with room for one more.
func (s *intset) widen(w int) {
	n := s.len()
	old := *s
	s.data = make([]byte, 1+n*w, 1+(n+1)*w)
	s.data[0] = byte(w)
	for i := range n {
		s.put(i, old.at(i))
	}
}

// remove removes v and reports whether it was there. The width stays, as
// Redis's does; the array shrinks once it is under a quarter full.
func (s *intset) remove(v int64) bool {
	i, found := s.search(v)
	if !found {
		return false
	}
	w := s.width()
	copy(s.data[1+i*w:], s.data[1+(i+1)*w:])
	s.data = shrinkPacked(s.data[:len(s.data)-w])
	return true
}

func (s *intset) clone() intset {
	return intset{data: append([]byte(nil), s.data...)}
}
