// Package hist is a small log-linear histogram of durations in nanoseconds:
// each power of two is split into 128 equal buckets, so a quantile is read
// to within 0.8%, and histograms from several workers or processes merge
// exactly.
package hist

import (
	"math"
	"math/bits"
)

const (
	subBits = 7
	sub     = 1 << subBits
	// buckets covers every positive int64: 64 powers of two, each split.
	buckets = (64 - subBits + 1) * sub
)

// H counts values (nanoseconds). The zero value is not usable; use New.
type H struct {
	counts []uint64
	n      uint64
	sum    float64
	max    int64
}

// New returns an empty histogram.
func New() *H { return &H{counts: make([]uint64, buckets)} }

// index maps v >= 0 to its bucket: values below 2*sub get a bucket each;
// above that, the top subBits+1 bits pick the bucket.
func index(v int64) int {
	if v < 0 {
		v = 0
	}
	u := uint64(v)
	if u < 2*sub {
		return int(u)
	}
	shift := bits.Len64(u) - subBits - 1
	return (shift+1)*sub + int(u>>uint(shift)) - sub
}

// lowest returns the smallest value that falls in bucket i.
func lowest(i int) int64 {
	if i < 2*sub {
		return int64(i)
	}
	shift := i/sub - 1
	return int64(uint64(i%sub+sub) << uint(shift))
}

// Record adds one value.
func (h *H) Record(v int64) {
	h.counts[index(v)]++
	h.n++
	h.sum += float64(v)
	if v > h.max {
		h.max = v
	}
}

// Merge adds every count of o to h.
func (h *H) Merge(o *H) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	if o.max > h.max {
		h.max = o.max
	}
}

// Count is the number of values recorded.
func (h *H) Count() uint64 { return h.n }

// Max is the largest value recorded.
func (h *H) Max() int64 { return h.max }

// Mean is the average value, 0 when empty.
func (h *H) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}

// Quantile returns the value at quantile q (0..1): the midpoint of the
// bucket holding the ceil(q*n)-th smallest value, capped at Max. 0 when
// empty.
func (h *H) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo := lowest(i)
			hi := lowest(i + 1)
			v := lo + (hi-lo)/2
			if v > h.max {
				v = h.max
			}
			return v
		}
	}
	return h.max
}

// Sparse is the histogram as JSON-friendly pairs {bucket, count} of its
// non-empty buckets, plus sum and max; FromSparse reverses it.
type Sparse struct {
	Buckets [][2]uint64 `json:"buckets"`
	Sum     float64     `json:"sum"`
	Max     int64       `json:"max"`
}

// Sparse returns h in its sparse form.
func (h *H) Sparse() Sparse {
	s := Sparse{Sum: h.sum, Max: h.max, Buckets: [][2]uint64{}}
	for i, c := range h.counts {
		if c != 0 {
			s.Buckets = append(s.Buckets, [2]uint64{uint64(i), c})
		}
	}
	return s
}

// FromSparse rebuilds a histogram; buckets out of range are ignored.
func FromSparse(s Sparse) *H {
	h := New()
	for _, b := range s.Buckets {
		if b[0] < buckets {
			h.counts[b[0]] += b[1]
			h.n += b[1]
		}
	}
	h.sum = s.Sum
	h.max = s.Max
	return h
}
