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
		case a.s < b.s || (a.s == b.s && a.m < b.m):
			return -1
		case a.s == b.s && a.m == b.m:
			return 0
		}
		return 1
	})
	return want
}

// checkZset checks z against ref: the order, the back links and tail,
// every rank both ways, the dict, and every link of every level — where it
// leads and the span it records.
func checkZset(t *testing.T, z *zset, ref map[string]float64) {
	t.Helper()
	want := sortedPairs(ref)
	l := z.zsl
	if l.length != len(want) || z.members.len() != len(want) {
		t.Fatalf("length = %d, dict %d; want %d", l.length, z.members.len(), len(want))
	}
	rank := map[*zslNode]int{l.head: 0}
	var last [zslMaxLevel]*zslNode // the last node seen with each level
	for i := range last {
		last[i] = l.head
	}
	height := 1
	x, prev := l.first(), (*zslNode)(nil)
	for r, p := range want {
		if x == nil || x.member != p.m || x.score != p.s {
			t.Fatalf("element %d = %v; want %v", r, x, p)
		}
		if x.back != prev {
			t.Fatalf("back of %v = %v; want %v", p, x.back, prev)
		}
		if got := z.node([]byte(p.m)); got != x {
			t.Fatalf("node(%q) = %p; want %p", p.m, got, x)
		}
		if got := l.rank(x); got != r+1 {
			t.Fatalf("rank(%v) = %d; want %d", p, got, r+1)
		}
		if got := l.byRank(r + 1); got != x {
			t.Fatalf("byRank(%d) = %v; want %v", r+1, got, x)
		}
		rank[x] = r + 1
		for i := range x.levels {
			if n := last[i].lv(i).next; n != x {
				t.Fatalf("level %d after %q leads to %v; want %v", i, last[i].member, n, p)
			}
			last[i] = x
		}
		height = max(height, x.levels)
		prev, x = x, x.next()
	}
	if x != nil || l.tail != prev {
		t.Fatalf("after the last element: %v, tail %v; want nil, %v", x, l.tail, prev)
	}
	if l.level != height {
		t.Fatalf("level = %d; want %d", l.level, height)
	}
	for i := range l.level {
		if n := last[i].lv(i).next; n != nil {
			t.Fatalf("level %d after %q leads to %v; want nil", i, last[i].member, n)
		}
	}
	// A span is the number of ranks a link skips; the last link of a level
	// reaches past the end.
	for n := l.head; n != nil; n = n.next() {
		for i := range min(n.levels, l.level) {
			want := l.length + 1 - rank[n]
			if next := n.lv(i).next; next != nil {
				want = rank[next] - rank[n]
			} else {
				want--
			}
			if n.lv(i).span != want {
				t.Fatalf("span of %q at level %d = %d; want %d", n.member, i, n.lv(i).span, want)
			}
			if next := n.lv(i).next; next != nil && n.lv(i).score != next.score {
				t.Fatalf("link of %q at level %d carries score %v; %q has %v", n.member, i, n.lv(i).score, next.member, next.score)
			}
		}
	}
}

// zslLinks is every link of a skiplist without the scores it carries, to
// see whether an update left the structure as it was.
func zslLinks(l *skiplist) []zslLevel {
	var links []zslLevel
	for n := l.head; n != nil; n = n.next() {
		for i := range n.levels {
			links = append(links, zslLevel{next: n.lv(i).next, span: n.lv(i).span})
		}
		links = append(links, zslLevel{next: n.back})
	}
	return links
}

// TestSkiplist checks the skiplist's ranks and ranges against a sorted
// slice through random inserts, updates and deletes.
func TestSkiplist(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	z := newZset()
	ref := map[string]float64{}
	for i := range 5000 {
		m := "m" + strconv.Itoa(rng.IntN(300))
		switch rng.IntN(3) {
		case 0, 1:
			sc := float64(rng.IntN(50)) / 2
			z.set([]byte(m), sc)
			ref[m] = sc
		case 2:
			_, had := ref[m]
			if got := z.remove([]byte(m)); got != had {
				t.Fatalf("step %d: remove(%s) = %v; want %v", i, m, got, had)
			}
			delete(ref, m)
		}
		if i%97 != 0 {
			continue
		}
		checkZset(t, z, ref)
		lo, hi := float64(rng.IntN(30)), float64(rng.IntN(30))
		r := &scoreRange{min: lo, max: hi, minex: rng.IntN(2) == 0, maxex: rng.IntN(2) == 0}
		n := 0
		for _, s := range ref {
			if (s > lo || !r.minex && s == lo) && (s < hi || !r.maxex && s == hi) {
				n++
			}
		}
		if got := z.zsl.count(r); got != n {
			t.Fatalf("step %d: count(%+v) = %d; want %d", i, r, got, n)
		}
	}
}

// TestSkiplistUpdate checks an existing member's new score: in place when
// the member stays between its neighbours (members break ties), otherwise
// the same node moved; ranks right after each.
func TestSkiplistUpdate(t *testing.T) {
	// In order: a 1, c 2, b 3, e 4, d 5.
	base := map[string]float64{"a": 1, "c": 2, "b": 3, "e": 4, "d": 5}
	tests := []struct {
		name    string
		member  string
		score   float64
		inPlace bool
	}{
		{"between its neighbours", "b", 3.5, true},
		{"first, lower", "a", -10, true},
		{"first, up to just below the next", "a", 1.999, true},
		{"last, higher", "d", 100, true},
		{"prev's score, member after prev's", "e", 3, true},
		{"next's score, member before next's", "b", 4, true},
		{"prev's score, member before prev's", "b", 2, false},
		{"next's score, member after next's", "c", 3, false},
		{"next's score, member after next's, to the end", "e", 5, false},
		{"forward past next", "c", 3.5, false},
		{"forward to the end", "a", 6, false},
		{"backward past prev", "e", 2.5, false},
		{"backward to the front", "d", 0, false},
		{"the first's score from the end, member after the first's", "d", 1, false},
		{"-inf", "e", math.Inf(-1), false},
		{"+inf", "a", math.Inf(1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			z := newZset()
			ref := map[string]float64{}
			for m, s := range base {
				z.set([]byte(m), s)
				ref[m] = s
			}
			x := z.node([]byte(tc.member))
			links := zslLinks(z.zsl)
			z.update(x, tc.score)
			ref[tc.member] = tc.score
			if got := z.node([]byte(tc.member)); got != x {
				t.Errorf("update(%q, %v) replaced the node", tc.member, tc.score)
			}
			if got := slices.Equal(zslLinks(z.zsl), links); got != tc.inPlace {
				t.Errorf("update(%q, %v): links unchanged = %v; want %v", tc.member, tc.score, got, tc.inPlace)
			}
			checkZset(t, z, ref)
		})
	}
}

// TestSkiplistRandomUpdates moves members of a large set about at random —
// within their neighbours, onto a neighbour's score, anywhere — and checks
// every link and span against a sorted slice as it goes.
func TestSkiplistRandomUpdates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	z := newZset()
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
		x := z.node([]byte(m))
		var s float64
		switch k := rng.IntN(4); {
		case k == 0 && x.back != nil && x.next() != nil:
			// Strictly between the neighbours' scores, when there is room.
			lo, hi := x.back.score, x.next().score
			s = lo + (hi-lo)*rng.Float64()
		case k == 1 && x.back != nil:
			s = x.back.score
		case k == 2 && x.next() != nil:
			s = x.next().score
		default:
			s = float64(rng.IntN(100))
			if rng.IntN(2) == 0 {
				s += float64(rng.IntN(4)) / 4
			}
		}
		z.update(x, s)
		ref[m] = s
		if i%1000 == 0 {
			checkZset(t, z, ref)
		}
	}
	checkZset(t, z, ref)
}

// TestZsetAllocs checks that adding a member allocates once (its node, with
// the member and levels in it) and that a new score allocates nothing,
// whether the node stays or moves.
func TestZsetAllocs(t *testing.T) {
	z := newZset()
	for i := range 1100 {
		z.set([]byte("m"+strconv.Itoa(i)), float64(i))
	}
	fresh := make([][]byte, 0, 100)
	for i := range cap(fresh) {
		fresh = append(fresh, []byte("new-member-"+strconv.Itoa(i)))
	}
	next := 0
	if got := testing.AllocsPerRun(len(fresh)-1, func() {
		z.insert(fresh[next], float64(next))
		next++
	}); got != 1 {
		t.Errorf("insert: %v allocations; want 1", got)
	}
	x := z.node([]byte("m500"))
	score := 500.0
	if got := testing.AllocsPerRun(100, func() {
		score += 0.001 // stays between m499 and m501
		z.update(x, score)
	}); got != 0 {
		t.Errorf("update in place: %v allocations; want 0", got)
	}
	if got := testing.AllocsPerRun(100, func() {
		score = float64(rand.IntN(2000))
		z.update(x, score)
	}); got != 0 {
		t.Errorf("update moving the node: %v allocations; want 0", got)
	}
}
