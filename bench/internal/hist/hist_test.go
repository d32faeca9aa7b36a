package hist

import (
	"math/rand"
	"sort"
	"testing"
)

func TestIndexMonotoneAndLowest(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 2, 255, 256, 257, 1000, 1 << 20, 1<<20 + 12345, 1 << 40, 1<<62 + 7} {
		i := index(v)
		if i < prev {
			t.Fatalf("index(%d)=%d < previous %d", v, i, prev)
		}
		prev = i
		if lo := lowest(i); lo > v || lowest(i+1) <= v {
			t.Fatalf("value %d in bucket %d = [%d, %d)", v, i, lo, lowest(i+1))
		}
	}
}

func TestQuantileWithinOnePercent(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	h := New()
	vals := make([]int64, 100000)
	for i := range vals {
		vals[i] = int64(r.ExpFloat64() * 50000)
		h.Record(vals[i])
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := vals[int(q*float64(len(vals)))-1]
		got := h.Quantile(q)
		if d := float64(got-want) / float64(want); d > 0.01 || d < -0.01 {
			t.Errorf("q%.3f = %d, want %d within 1%%", q, got, want)
		}
	}
}

func TestMergeAndSparseRoundTrip(t *testing.T) {
	a, b := New(), New()
	for i := int64(1); i <= 1000; i++ {
		a.Record(i * 1000)
		b.Record(i * 3000)
	}
	a.Merge(b)
	c := FromSparse(a.Sparse())
	if c.Count() != 2000 || c.Max() != a.Max() || c.Quantile(0.5) != a.Quantile(0.5) || c.Mean() != a.Mean() {
		t.Fatalf("round trip changed the histogram: %d %d %d", c.Count(), c.Max(), c.Quantile(0.5))
	}
}
