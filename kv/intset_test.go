package kv

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestIntsetModel runs random adds and removes against a sorted slice,
// with values drawn so that the width changes in the middle of a set's
// life: every member must stay where the model has it.
func TestIntsetModel(t *testing.T) {
	edges := []int64{0, 1, -1, math.MaxInt16, math.MinInt16, math.MaxInt16 + 1, math.MinInt16 - 1,
		math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, math.MinInt32 - 1, math.MaxInt64, math.MinInt64}
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func() int64 {
		switch rng.IntN(5) {
		case 0:
			return edges[rng.IntN(len(edges))]
		case 1:
			return rng.Int64N(1<<31) - 1<<30
		case 2:
			return int64(rng.Uint64())
		}
		return int64(rng.IntN(200)) - 100
	}
	for round := range 200 {
		var s intset
		var model []int64
		for range rng.IntN(600) {
			v := draw()
			i, found := slices.BinarySearch(model, v)
			if rng.IntN(3) == 0 {
				if got := s.remove(v); got != found {
					t.Fatalf("round %d: remove(%d) = %v, model %v", round, v, got, found)
				}
				if found {
					model = slices.Delete(model, i, i+1)
				}
				continue
			}
			if got := s.add(v); got == found {
				t.Fatalf("round %d: add(%d) = %v, model had it: %v", round, v, got, found)
			}
			if !found {
				model = slices.Insert(model, i, v)
			}
		}
		if s.len() != len(model) {
			t.Fatalf("round %d: len %d, model %d", round, s.len(), len(model))
		}
		want := 0
		for _, v := range model {
			want = max(want, intWidth(v))
		}
		if s.width() < want {
			t.Fatalf("round %d: width %d for members needing %d", round, s.width(), want)
		}
		for i, v := range model {
			if got := s.at(i); got != v {
				t.Fatalf("round %d: at(%d) = %d, want %d", round, i, got, v)
			}
			if !s.has(v) {
				t.Fatalf("round %d: has(%d) false", round, v)
			}
		}
		for _, v := range edges {
			_, in := slices.BinarySearch(model, v)
			if s.has(v) != in {
				t.Fatalf("round %d: has(%d) = %v, want %v", round, v, !in, in)
			}
		}
	}
}

// TestIntsetWidth checks the bytes a member takes, as Redis's encodings
// take them, and that removing the wide member keeps the width.
func TestIntsetWidth(t *testing.T) {
	var s intset
	for i := range 100 {
		s.add(int64(i))
	}
	if s.width() != 2 || len(s.data) != 1+200 {
		t.Fatalf("100 small members: width %d, %d bytes", s.width(), len(s.data))
	}
	s.add(1 << 20)
	if s.width() != 4 || len(s.data) != 1+404 {
		t.Fatalf("with 1<<20: width %d, %d bytes", s.width(), len(s.data))
	}
	s.add(math.MinInt64)
	if s.width() != 8 || s.at(0) != math.MinInt64 || s.at(101) != 1<<20 {
		t.Fatalf("with MinInt64: width %d, first %d, last %d", s.width(), s.at(0), s.at(101))
	}
	s.remove(math.MinInt64)
	if s.width() != 8 || s.len() != 101 || s.at(0) != 0 {
		t.Fatalf("after removing MinInt64: width %d, len %d, first %d", s.width(), s.len(), s.at(0))
	}
	for i := range 100 {
		s.remove(int64(i))
	}
	if s.len() != 1 || cap(s.data) > 64 {
		t.Fatalf("one member left: len %d, capacity %d", s.len(), cap(s.data))
	}
}

// TestSetIntsetConversion follows a set from intset to table: at the
// member that is not an integer, past set-max-intset-entries members, and never
// back; and checks that members read the same either way.
func TestSetIntsetConversion(t *testing.T) {
	setMaxIntset := defaultLimits.intsetEntries
	o := newSet([]byte("7"))
	for i := range setMaxIntset {
		o.add([]byte(strconv.Itoa(setMaxIntset-i)), setMaxIntset)
	}
	if !o.isIntset() || o.len() != setMaxIntset {
		t.Fatalf("%d integers: intset %v, len %d", setMaxIntset, o.isIntset(), o.len())
	}
	if got := o.list(); got[0] != "1" || got[setMaxIntset-1] != strconv.Itoa(setMaxIntset) {
		t.Fatalf("not in numeric order: %v ... %v", got[0], got[setMaxIntset-1])
	}
	for _, m := range []string{"01", "+1", "-0", " 1", "1.0", "99999999999999999999", ""} {
		if o.has([]byte(m)) {
			t.Errorf("has(%q) in a set of 1..%d", m, setMaxIntset)
		}
	}
	if o.add([]byte("7"), setMaxIntset) {
		t.Fatal("7 added twice")
	}
	o.add([]byte("1000"), setMaxIntset)
	if o.isIntset() {
		t.Fatal("still an intset past setMaxIntset members")
	}
	for i := 1; i <= setMaxIntset; i++ {
		if !o.has([]byte(strconv.Itoa(i))) {
			t.Fatalf("%d lost in the conversion", i)
		}
	}
	o2 := newSet([]byte("1"))
	o2.add([]byte("1"), setMaxIntset)
	o2.add([]byte("x"), setMaxIntset)
	o2.remove([]byte("x"))
	if o2.isIntset() || o2.len() != 1 || !o2.has([]byte("1")) {
		t.Fatalf("after a member that is not an integer: intset %v, len %d", o2.isIntset(), o2.len())
	}
	if c := o.clone(); c.len() != o.len() || c.isIntset() {
		t.Fatal("clone of a table differs")
	}
	o3 := newSet([]byte("-5"))
	o3.add([]byte("-5"), setMaxIntset)
	c := o3.clone()
	c.add([]byte("6"), setMaxIntset)
	if o3.len() != 1 || c.len() != 2 || !c.isIntset() {
		t.Fatalf("clone of an intset shares its members: %d and %d", o3.len(), c.len())
	}
}
