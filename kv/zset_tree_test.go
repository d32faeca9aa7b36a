package kv

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// zpair is an element of a sorted set as the tests keep it.
type zpair struct {
	m string
	s float64
}

// sortedPairs returns ref in a sorted set's order: by score, then member.
func sortedPairs(ref map[string]float64) []zpair {
	want := make([]zpair, 0, len(ref))
	for m, s := range ref {
		want = append(want, zpair{m, s})
	}
	slices.SortFunc(want, func(a, b zpair) int {
		switch {
		case less(a.s, a.m, b.s, b.m):
			return -1
		case a.s == b.s && a.m == b.m:
			return 0
		}
		return 1
	})
	return want
}

// checkZset checks z against ref: the elements in order through the
// leaves both ways, the dict, every rank both ways, and the tree's shape —
// each inner node's counts and bounds, every node's fill, and every leaf
// at the same depth. A node on the tree's right edge may hold fewer than
// the least, as appending ascending scores leaves it, but not none: a
// leaf holds an element, an inner node two children.
func checkZset(t *testing.T, z *zset, ref map[string]float64) {
	t.Helper()
	want := sortedPairs(ref)
	tr := &z.tree
	if tr.n != len(want) || z.members.len() != len(want) {
		t.Fatalf("length = %d, dict %d; want %d", tr.n, z.members.len(), len(want))
	}
	r := 0
	for c := tr.first(); c.ok(); c.next() {
		if r == len(want) {
			t.Fatalf("more than %d elements", len(want))
		}
		if p := want[r]; c.member() != p.m || c.score() != p.s {
			t.Fatalf("element %d = %v; want %v", r, c.entry(), p)
		}
		r++
	}
	if r != len(want) {
		t.Fatalf("%d elements forward; want %d", r, len(want))
	}
	for c := tr.last(); c.ok(); c.prev() {
		r--
		if p := want[r]; c.member() != p.m || c.score() != p.s {
			t.Fatalf("element %d backward = %v; want %v", r, c.entry(), p)
		}
	}
	for r, p := range want {
		if s, ok := z.score([]byte(p.m)); !ok || s != p.s {
			t.Fatalf("score(%q) = %v, %v; want %v", p.m, s, ok, p.s)
		}
		if got := tr.rank(p.s, p.m); got != r {
			t.Fatalf("rank(%v) = %d; want %d", p, got, r)
		}
		if c := tr.cursor(r); !c.ok() || c.member() != p.m {
			t.Fatalf("cursor(%d) = %v; want %v", r, c, p)
		}
	}
	if tr.root == nil {
		if tr.height != 0 || tr.head != tr.tail || tr.head.prev != nil || tr.head.next != nil {
			t.Fatalf("a tree without a root has height %d and more than one leaf", tr.height)
		}
		return
	}
	if tr.root.n < 2 {
		t.Fatalf("root has %d children", tr.root.n)
	}
	var leaves []*zleaf
	var walk func(n *zinner, h int, lo *zpair, edge bool) int
	walk = func(n *zinner, h int, lo *zpair, edge bool) int {
		total := 0
		for i := range n.n {
			bound := lo
			if i > 0 {
				bound = &zpair{n.members[i], n.scores[i]}
			}
			var got int
			var first, last zpair
			if h == 1 {
				l := n.leaves[i]
				if n.inner[i] != nil || l == nil {
					t.Fatalf("height 1: child %d is not a leaf", i)
				}
				if l.n < zLeafMin && !(edge && i == n.n-1 && l.n >= 1) || l.n > zLeafCap {
					t.Fatalf("leaf of %d elements", l.n)
				}
				for j := range zLeafCap {
					if j >= l.n && l.members[j] != "" {
						t.Fatalf("leaf keeps member %q past its end", l.members[j])
					}
				}
				leaves = append(leaves, l)
				got = l.n
				first, last = zpair{l.members[0], l.scores[0]}, zpair{l.members[l.n-1], l.scores[l.n-1]}
			} else {
				k := n.inner[i]
				if n.leaves[i] != nil || k == nil {
					t.Fatalf("height %d: child %d is not an inner node", h, i)
				}
				if k.n < zInnerMin && !(edge && i == n.n-1 && k.n >= 2) || k.n > zInnerCap {
					t.Fatalf("inner node of %d children", k.n)
				}
				if k.members[0] != "" {
					t.Fatalf("inner node keeps a bound before its first child")
				}
				got = walk(k, h-1, bound, edge && i == n.n-1)
				first, last = firstOf(k), lastOf(k)
			}
			if got != n.counts[i] {
				t.Fatalf("height %d: count of child %d = %d; want %d", h, i, n.counts[i], got)
			}
			if bound != nil && less(first.s, first.m, bound.s, bound.m) {
				t.Fatalf("height %d: child %d begins with %v, below its bound %v", h, i, first, *bound)
			}
			if i+1 < n.n && !less(last.s, last.m, n.scores[i+1], n.members[i+1]) {
				t.Fatalf("height %d: child %d ends with %v, not below the next bound", h, i, last)
			}
			total += got
		}
		for j := n.n; j < zInnerCap; j++ {
			if n.members[j] != "" || n.inner[j] != nil || n.leaves[j] != nil {
				t.Fatalf("inner node keeps references past its end")
			}
		}
		return total
	}
	if got := walk(tr.root, tr.height, nil, true); got != tr.n {
		t.Fatalf("counts add up to %d; want %d", got, tr.n)
	}
	for i, l := range leaves {
		if (i == 0) != (l.prev == nil) || (i > 0 && l.prev != leaves[i-1]) {
			t.Fatalf("leaf %d's prev is wrong", i)
		}
		if (i == len(leaves)-1) != (l.next == nil) || (i < len(leaves)-1 && l.next != leaves[i+1]) {
			t.Fatalf("leaf %d's next is wrong", i)
		}
	}
	if tr.head != leaves[0] || tr.tail != leaves[len(leaves)-1] {
		t.Fatalf("head or tail is not the first or last leaf")
	}
}

func firstOf(n *zinner) zpair {
	for n.leaves[0] == nil {
		n = n.inner[0]
	}
	l := n.leaves[0]
	return zpair{l.members[0], l.scores[0]}
}

func lastOf(n *zinner) zpair {
	for n.leaves[n.n-1] == nil {
		n = n.inner[n.n-1]
	}
	l := n.leaves[n.n-1]
	return zpair{l.members[l.n-1], l.scores[l.n-1]}
}

// TestZsetTree checks the tree's ranks and ranges against a sorted slice
// through random inserts, updates and deletes, on sets small enough for
// one leaf and large enough for three levels, growing and shrinking.
func TestZsetTree(t *testing.T) {
	for _, size := range []int{20, 300, 5000} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(size)))
			z := newZset(nil)
			ref := map[string]float64{}
			steps := 20 * size
			for i := range steps {
				m := "m" + strconv.Itoa(rng.IntN(size))
				// Grow in the first half, shrink in the second.
				grow := 3
				if i > steps/2 {
					grow = 1
				}
				switch k := rng.IntN(4); {
				case k < grow:
					sc := float64(rng.IntN(size/4+1)) / 2
					z.set([]byte(m), sc)
					ref[m] = sc
				default:
					_, had := ref[m]
					if got := z.remove([]byte(m)); got != had {
						t.Fatalf("step %d: remove(%s) = %v; want %v", i, m, got, had)
					}
					delete(ref, m)
				}
				if i%(size/4+1) != 0 {
					continue
				}
				checkZset(t, z, ref)
				lo, hi := float64(rng.IntN(size/8+1)), float64(rng.IntN(size/8+1))
				r := &scoreRange{min: lo, max: hi, minex: rng.IntN(2) == 0, maxex: rng.IntN(2) == 0}
				n := 0
				for _, s := range ref {
					if (s > lo || !r.minex && s == lo) && (s < hi || !r.maxex && s == hi) {
						n++
					}
				}
				if got := z.count(r); got != n {
					t.Fatalf("step %d: count(%+v) = %d; want %d", i, r, got, n)
				}
				if got := len(z.rangeIn(r, 0, -1, false)); got != n {
					t.Fatalf("step %d: rangeIn(%+v) has %d; want %d", i, r, got, n)
				}
			}
			for len(ref) > 0 {
				e := z.pop(nil, 1, rng.IntN(2) == 0)[0]
				if ref[e.member] != e.score {
					t.Fatalf("popped %v; its score is %v", e, ref[e.member])
				}
				delete(ref, e.member)
				if len(ref)%97 == 0 {
					checkZset(t, z, ref)
				}
			}
			checkZset(t, z, ref)
		})
	}
}

// TestZsetTreeAscending adds ascending and then descending scores, as time
// series do: the leaves split at the end stay full, and the tree stays
// sound.
func TestZsetTreeAscending(t *testing.T) {
	z := newZset(nil)
	ref := map[string]float64{}
	for i := range 10000 {
		m := "t" + strconv.Itoa(i)
		z.set([]byte(m), float64(i))
		ref[m] = float64(i)
	}
	checkZset(t, z, ref)
	leaves := 0
	for l := z.tree.head; l != nil; l = l.next {
		leaves++
	}
	if want := (10000 + zLeafCap - 1) / zLeafCap; leaves != want {
		t.Errorf("ascending inserts: %d leaves; want %d (full)", leaves, want)
	}
	for i := range 5000 {
		m := "d" + strconv.Itoa(i)
		z.set([]byte(m), float64(-i))
		ref[m] = float64(-i)
	}
	checkZset(t, z, ref)
}

// TestZsetUpdate checks an existing member's new score: in place when it
// stays between its neighbours in its leaf (members break ties), otherwise
// moved; the tree and ranks right after each.
func TestZsetUpdate(t *testing.T) {
	// In order: a 1, c 2, b 3, e 4, d 5.
	base := map[string]float64{"a": 1, "c": 2, "b": 3, "e": 4, "d": 5}
	tests := []struct {
		name   string
		member string
		score  float64
	}{
		{"between its neighbours", "b", 3.5},
		{"first, lower", "a", -10},
		{"first, up to just below the next", "a", 1.999},
		{"last, higher", "d", 100},
		{"prev's score, member after prev's", "e", 3},
		{"next's score, member before next's", "b", 4},
		{"prev's score, member before prev's", "b", 2},
		{"next's score, member after next's", "c", 3},
		{"next's score, member after next's, to the end", "e", 5},
		{"forward past next", "c", 3.5},
		{"forward to the end", "a", 6},
		{"backward past prev", "e", 2.5},
		{"backward to the front", "d", 0},
		{"the first's score from the end, member after the first's", "d", 1},
		{"-inf", "e", math.Inf(-1)},
		{"+inf", "a", math.Inf(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			z := newZset(nil)
			ref := map[string]float64{}
			for m, s := range base {
				z.set([]byte(m), s)
				ref[m] = s
			}
			z.set([]byte(tc.member), tc.score)
			ref[tc.member] = tc.score
			checkZset(t, z, ref)
		})
	}
}

// TestZsetRandomUpdates moves members of a large set about at random —
// within their neighbours, onto a neighbour's score, anywhere — and checks
// the tree against a sorted slice as it goes.
func TestZsetRandomUpdates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	z := newZset(nil)
	ref := map[string]float64{}
	members := make([]string, 3000)
	for i := range members {
		members[i] = "m" + strconv.Itoa(i)
		s := float64(rng.IntN(100))
		z.set([]byte(members[i]), s)
		ref[members[i]] = s
	}
	checkZset(t, z, ref)
	for i := range 30000 {
		m := members[rng.IntN(len(members))]
		r := z.tree.rank(ref[m], m)
		prev, next := z.tree.cursor(r-1), z.tree.cursor(r+1)
		var s float64
		switch k := rng.IntN(4); {
		case k == 0 && prev.ok() && next.ok():
			// Strictly between the neighbours' scores, when there is room.
			lo, hi := prev.score(), next.score()
			s = lo + (hi-lo)*rng.Float64()
		case k == 1 && prev.ok():
			s = prev.score()
		case k == 2 && next.ok():
			s = next.score()
		default:
			s = float64(rng.IntN(100))
			if rng.IntN(2) == 0 {
				s += float64(rng.IntN(4)) / 4
			}
		}
		z.set([]byte(m), s)
		ref[m] = s
		if i%1000 == 0 {
			checkZset(t, z, ref)
		}
	}
	checkZset(t, z, ref)
}

// TestZsetAllocs checks that adding a member allocates its string alone
// (leaves and inner nodes are rarely new), and that a new score allocates
// nothing, whether the member stays or moves.
func TestZsetAllocs(t *testing.T) {
	z := newZset(nil)
	for i := range 1100 {
		z.set([]byte("m"+strconv.Itoa(i)), float64(i))
	}
	fresh := make([][]byte, 0, 100)
	for i := range cap(fresh) {
		fresh = append(fresh, []byte("new-member-"+strconv.Itoa(i)))
	}
	next := 0
	if got := testing.AllocsPerRun(len(fresh)-1, func() {
		z.insert(fresh[next], float64(next%1000))
		next++
	}); got != 1 {
		t.Errorf("insert: %v allocations; want 1", got)
	}
	m := []byte("m500")
	score := 500.0
	if got := testing.AllocsPerRun(100, func() {
		score += 0.001 // stays between m499 and m501
		z.set(m, score)
	}); got != 0 {
		t.Errorf("update in place: %v allocations; want 0", got)
	}
	if got := testing.AllocsPerRun(100, func() {
		z.set(m, float64(rand.IntN(2000)))
	}); got != 0 {
		t.Errorf("update moving the member: %v allocations; want 0", got)
	}
}

// TestZsetTreeBorrow empties ranges of a set whose inner nodes are full,
// so that an inner node that runs short takes children from a neighbour
// too full to merge with — from its right and from its left — and checks
// the tree at every step, then the ranges both ways.
func TestZsetTreeBorrow(t *testing.T) {
	z := newZset(nil)
	ref := map[string]float64{}
	const n = 5 * zInnerCap * zLeafCap
	for i := range n {
		m := "e" + strconv.Itoa(i)
		z.set([]byte(m), float64(i))
		ref[m] = float64(i)
	}
	checkZset(t, z, ref)
	if z.tree.height < 2 {
		t.Fatalf("height %d; want inner nodes below the root", z.tree.height)
	}
	drop := func(lo, hi, step int) {
		for i := lo; i != hi; i += step {
			m := "e" + strconv.Itoa(i)
			if !z.remove([]byte(m)) {
				t.Fatalf("remove(%s) = false", m)
			}
			delete(ref, m)
			if i%97 == 0 {
				checkZset(t, z, ref)
			}
		}
		checkZset(t, z, ref)
	}
	per := zInnerCap * zLeafCap         // the elements under one full inner node
	drop(0, per-per/16, 1)              // the first node, from its start: borrows from the right
	drop(per+per/8, 2*per-per/8, 1)     // the second's middle: borrows from the left or right
	drop(3*per+per-1, 3*per+per/16, -1) // the fourth, from its end
	for _, r := range []*scoreRange{{min: 0, max: n}, {min: float64(per), max: float64(3 * per), minex: true}} {
		want := 0
		for _, s := range ref {
			if r.gteMin(s, "") && r.lteMax(s, "") {
				want++
			}
		}
		fwd, rev := z.rangeIn(r, 0, -1, false), z.rangeIn(r, 0, -1, true)
		if len(fwd) != want || len(rev) != want || z.count(r) != want {
			t.Fatalf("range %+v: %d forward, %d reverse, count %d; want %d", r, len(fwd), len(rev), z.count(r), want)
		}
		for i := range fwd {
			if fwd[i] != rev[len(rev)-1-i] {
				t.Fatalf("range %+v: forward and reverse differ at %d", r, i)
			}
		}
		if got := z.rangeIn(r, 10, 5, true); len(got) != 5 || got[0] != rev[10] {
			t.Fatalf("range %+v, offset 10, limit 5, reverse: %v; want from %v", r, got, rev[10])
		}
	}
}

// FuzzZsetTree runs the operations the input spells — add or rescore,
// remove, pop either end — on a set and a map, checks that a pop takes
// the map's lowest or highest element, and checks the tree after each
// batch.
func FuzzZsetTree(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(make([]byte, 600))
	f.Fuzz(func(t *testing.T, ops []byte) {
		z := newZset(nil)
		ref := map[string]float64{}
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], ops[i+1]
			m := "m" + strconv.Itoa(int(op>>2)*7+int(arg)) // members collide often
			switch op & 3 {
			case 0, 1:
				s := float64(arg%16) / 2
				z.set([]byte(m), s)
				ref[m] = s
			case 2:
				_, had := ref[m]
				if z.remove([]byte(m)) != had {
					t.Fatalf("remove(%s) disagrees with the map", m)
				}
				delete(ref, m)
			case 3:
				if len(ref) > 0 {
					want := sortedPairs(ref)
					p := want[0]
					if arg&1 == 1 {
						p = want[len(want)-1]
					}
					e := z.pop(nil, 1, arg&1 == 1)[0]
					if e.member != p.m || e.score != p.s {
						t.Fatalf("pop(fromMax %v) = %v; want %v", arg&1 == 1, e, p)
					}
					delete(ref, e.member)
				}
			}
			if i%64 == 0 {
				checkZset(t, z, ref)
			}
		}
		checkZset(t, z, ref)
	})
}
