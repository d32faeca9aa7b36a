package kv

import (
	"strings"
	"unsafe"

	"github.com/evloop/evloop/resp"
)

// encodingLimits are the thresholds of the compact encodings, as
// CONFIG SET leaves them: zset-max-listpack-entries and -value (a sorted
// set with more members, or a member longer, is a "skiplist" for good, as
// Redis converts it, else a "listpack": OBJECT ENCODING, and the RDB
// file's format for it), hash-max-listpack-entries and -value (a hash
// past them leaves its pack for a dict; values longer than hashPackMax
// never go in a pack, whatever the setting) and set-max-intset-entries.
type encodingLimits struct {
	zsetEntries, zsetValue int
	hashEntries, hashValue int
	intsetEntries          int
}

// defaultLimits are Redis 7.0's defaults, for values made without a
// server's (tests).
var defaultLimits = encodingLimits{zsetEntries: 128, zsetValue: 64, hashEntries: 512, hashValue: 64, intsetEntries: 512}

// zset is a sorted set value: a dict from member to score, and a counted
// B+tree of (score, member) for the order and ranks. The tree's member
// strings are the dict's keys, one allocation for both.
type zset struct {
	members *dict[float64]
	tree    ztree
	// big is set once the set outgrew Redis's listpack encoding, which
	// Redis never converts back to.
	big bool
	lim *encodingLimits // the server's, as CONFIG SET leaves them
}

// zentry is an element of a sorted set.
type zentry struct {
	member string
	score  float64
}

func newZset(lim *encodingLimits) *zset {
	if lim == nil {
		lim = &defaultLimits
	}
	z := &zset{members: newDict[float64](0), lim: lim}
	z.tree.init()
	return z
}

func (z *zset) len() int { return z.tree.n }

// score returns member's score.
func (z *zset) score(member []byte) (float64, bool) {
	if p := z.members.get(member); p != nil {
		return *p, true
	}
	return 0, false
}

// set gives member score, adding it if absent, and reports whether it
// added it.
func (z *zset) set(member []byte, score float64) bool {
	if p := z.members.get(member); p != nil {
		z.update(member, p, score)
		return false
	}
	z.insert(member, score)
	return true
}

// insert adds member, which must be absent, with score.
func (z *zset) insert(member []byte, score float64) {
	if len(member) > z.lim.zsetValue || z.tree.n+1 > z.lim.zsetEntries {
		z.big = true
	}
	m := string(member)
	score = z.normalize(score)
	*z.members.add(m) = score
	z.tree.insert(score, m)
}

// update gives member, whose score the dict holds at p, score.
func (z *zset) update(member []byte, p *float64, score float64) {
	if score = z.normalize(score); *p != score {
		z.tree.move(*p, score, bytesString(member))
		*p = score
	}
}

// normalize turns -0 into 0 in a compact set, as Redis's listpack does
// (it stores the score as text and reads "-0" back as the integer 0).
func (z *zset) normalize(score float64) float64 {
	if score == 0 && !z.big {
		return 0
	}
	return score
}

// remove deletes member and reports whether it was there.
func (z *zset) remove(member []byte) bool {
	score, ok := z.members.take(member)
	if ok {
		z.tree.delete(score, bytesString(member))
	}
	return ok
}

// removeEntry deletes e, an element of the set.
func (z *zset) removeEntry(e zentry) {
	z.members.delete(stringBytes(e.member))
	z.tree.delete(e.score, e.member)
}

// bytesString returns b's bytes as a string, uncopied: for a look-up that
// does not keep it, or for new bytes handed over, never written again but
// by a strBuf's edits.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// stringBytes returns s's bytes, uncopied, for a look-up that does not
// write them (the dict takes its keys as bytes).
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// encoding is what Redis 7.0's OBJECT ENCODING reports for the set.
func (z *zset) encoding() string {
	if z.big {
		return "skiplist"
	}
	return "listpack"
}

// fitsListpack recomputes big from the contents, as Redis does for the
// result of ZRANGESTORE and ZUNIONSTORE.
func (z *zset) fitsListpack() {
	z.big = z.len() > z.lim.zsetEntries
	for c := z.tree.first(); c.ok() && !z.big; c.next() {
		z.big = len(c.member()) > z.lim.zsetValue
	}
	if !z.big {
		for c := z.tree.first(); c.ok(); c.next() {
			if c.score() == 0 {
				c.l.scores[c.i] = 0 // -0 to 0: the order is the same
				*z.members.get(stringBytes(c.member())) = 0
			}
		}
	}
}

func (z *zset) clone() *zset {
	n := newZset(z.lim)
	for c := z.tree.first(); c.ok(); c.next() {
		n.set([]byte(c.member()), c.score())
	}
	n.big = z.big
	return n
}

// rewrite writes the ZADD commands that rebuild the set, 64 members each.
func (z *zset) rewrite(w *resp.Writer, key []byte) {
	args := [][]byte{[]byte("ZADD"), key}
	c := z.tree.first()
	for c.ok() {
		args = args[:2]
		for ; c.ok() && len(args) < 2+2*64; c.next() {
			args = append(args, []byte(formatScore(c.score())), []byte(c.member()))
		}
		w.Command(args...)
	}
}

// The order of a sorted set is a B+tree counted by subtree: elements in
// leaves, sorted by score then member, the leaves linked both ways; inner
// nodes hold each child's size, so ranks are found in O(log n), and a
// bound between neighbouring children. Where Redis's skiplist reads a node
// per step of a descent, each a cache miss in a large set, a descent here
// reads one node per level, three for a set of 100,000, and searches its
// scores, which lie together. A leaf holds up to zLeafCap elements, an
// inner node up to zInnerCap children; a node other than the root keeps at
// least a quarter of that.
const (
	zLeafCap   = 32
	zInnerCap  = 64
	zLeafMin   = zLeafCap / 4
	zInnerMin  = zInnerCap / 4
	zMaxHeight = 16 // zInnerMin^16 elements are more than an int counts
)

type zleaf struct {
	n          int
	scores     [zLeafCap]float64
	members    [zLeafCap]string
	prev, next *zleaf
}

// zinner is an inner node. Its children are leaves when it is at height 1
// (just above the leaves), inner nodes otherwise; the other array is
// unused. For i > 0, (scores[i], members[i]) is a bound between child i-1
// and child i: every element of child i-1 sorts before it and none of
// child i does.
type zinner struct {
	n       int
	scores  [zInnerCap]float64
	members [zInnerCap]string
	counts  [zInnerCap]int // elements under each child
	inner   [zInnerCap]*zinner
	leaves  [zInnerCap]*zleaf
}

type ztree struct {
	root   *zinner // nil while the elements fit in one leaf
	height int     // of root above the leaves; 0 without a root
	n      int
	head   *zleaf // the lowest leaf; the only one without a root
	tail   *zleaf
}

func (t *ztree) init() {
	t.head = new(zleaf)
	t.tail = t.head
}

// less reports whether (s1, m1) sorts before (s2, m2).
func less(s1 float64, m1 string, s2 float64, m2 string) bool {
	return s1 < s2 || (s1 == s2 && m1 < m2)
}

// search returns the position of the first element of l that does not
// sort before (score, member).
func (l *zleaf) search(score float64, member string) int {
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if less(l.scores[m], l.members[m], score, member) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// child returns the child of n where (score, member) is or belongs.
func (n *zinner) child(score float64, member string) int {
	lo, hi := 1, n.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if less(score, member, n.scores[m], n.members[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo - 1
}

// zpath is the way down to a leaf: the inner nodes from the root and the
// child taken at each.
type zpath struct {
	h     int
	nodes [zMaxHeight]*zinner
	idx   [zMaxHeight]int
}

func (p *zpath) push(n *zinner, i int) {
	p.nodes[p.h], p.idx[p.h] = n, i
	p.h++
}

// find returns the leaf where (score, member) is or belongs and its
// position there, recording the way down in p, and the rank of that
// position.
func (t *ztree) find(score float64, member string, p *zpath) (l *zleaf, i, rank int) {
	p.h = 0
	l = t.head
	if n := t.root; n != nil {
		for h := t.height; ; h-- {
			c := n.child(score, member)
			p.push(n, c)
			rank += sum(n.counts[:c])
			if h == 1 {
				l = n.leaves[c]
				break
			}
			n = n.inner[c]
		}
	}
	i = l.search(score, member)
	return l, i, rank + i
}

// at returns the leaf holding the element of 0-based rank r, which must be
// below t.n, and its position there, recording the way down in p.
func (t *ztree) at(r int, p *zpath) (*zleaf, int) {
	p.h = 0
	n := t.root
	if n == nil {
		return t.head, r
	}
	for h := t.height; ; h-- {
		c := 0
		for ; c < n.n-1 && r >= n.counts[c]; c++ {
			r -= n.counts[c]
		}
		p.push(n, c)
		if h == 1 {
			return n.leaves[c], r
		}
		n = n.inner[c]
	}
}

// insert adds (score, member), which must be absent.
func (t *ztree) insert(score float64, member string) {
	var p zpath
	l, i, _ := t.find(score, member, &p)
	for k := range p.h {
		p.nodes[k].counts[p.idx[k]]++
	}
	t.n++
	if l.n < zLeafCap {
		l.insertAt(i, score, member)
		return
	}
	// Split the leaf in half, or, appending to the highest leaf, start a
	// new one so that ascending scores fill their leaves.
	mid := zLeafCap / 2
	if l.next == nil && i == l.n {
		mid = zLeafCap
	}
	r := new(zleaf)
	r.n = copy(r.scores[:], l.scores[mid:l.n])
	copy(r.members[:], l.members[mid:l.n])
	clear(l.members[mid:l.n])
	l.n = mid
	r.prev, r.next = l, l.next
	if l.next != nil {
		l.next.prev = r
	} else {
		t.tail = r
	}
	l.next = r
	if i <= mid && mid < zLeafCap {
		l.insertAt(i, score, member)
	} else {
		r.insertAt(i-mid, score, member)
	}
	t.grow(&p, l.n, r.n, r.scores[0], r.members[0], nil, r)
}

func (l *zleaf) insertAt(i int, score float64, member string) {
	copy(l.scores[i+1:l.n+1], l.scores[i:l.n])
	copy(l.members[i+1:l.n+1], l.members[i:l.n])
	l.scores[i], l.members[i] = score, member
	l.n++
}

// grow puts a new node, the right half of a split one, into the parent of
// the split one (the last node of p), which now has left elements under
// it, the new one right; the new node's elements sort from (score,
// member). Splitting the parent in turn goes up the path, and splitting
// the root adds a level.
func (t *ztree) grow(p *zpath, left, right int, score float64, member string, in *zinner, leaf *zleaf) {
	for k := p.h - 1; k >= 0; k-- {
		n, c := p.nodes[k], p.idx[k]
		if n.n < zInnerCap {
			n.insertAt(c+1, left, right, score, member, in, leaf)
			return
		}
		// Split n, as a leaf splits.
		mid := zInnerCap / 2
		if c+1 == n.n && t.rightmost(p, k) {
			mid = zInnerCap - 1
		}
		r := new(zinner)
		r.n = n.n - mid
		copy(r.scores[:], n.scores[mid:n.n])
		copy(r.members[:], n.members[mid:n.n])
		copy(r.counts[:], n.counts[mid:n.n])
		copy(r.inner[:], n.inner[mid:n.n])
		copy(r.leaves[:], n.leaves[mid:n.n])
		rs, rm := r.scores[0], r.members[0] // bounds r's elements from below
		r.members[0] = ""
		n.clearFrom(mid)
		n.n = mid
		if c < mid {
			n.insertAt(c+1, left, right, score, member, in, leaf)
		} else {
			r.insertAt(c+1-mid, left, right, score, member, in, leaf)
		}
		left, right, score, member, in, leaf = n.total(), r.total(), rs, rm, r, nil
	}
	// The root split: a new root above the old one and its new sibling.
	root := new(zinner)
	root.n = 2
	if t.root == nil {
		root.leaves[0], root.leaves[1] = t.head, leaf
	} else {
		root.inner[0], root.inner[1] = t.root, in
	}
	root.counts[0], root.counts[1] = left, right
	root.scores[1], root.members[1] = score, member
	t.root = root
	t.height++
}

// rightmost reports whether the node at depth k of p is the highest of
// its level.
func (t *ztree) rightmost(p *zpath, k int) bool {
	for j := range k {
		if p.idx[j] != p.nodes[j].n-1 {
			return false
		}
	}
	return true
}

// insertAt puts a child at position i of n: the node in or leaf, with
// right elements under it, bounded below by (score, member); the child
// before it now has left elements.
func (n *zinner) insertAt(i, left, right int, score float64, member string, in *zinner, leaf *zleaf) {
	copy(n.scores[i+1:n.n+1], n.scores[i:n.n])
	copy(n.members[i+1:n.n+1], n.members[i:n.n])
	copy(n.counts[i+1:n.n+1], n.counts[i:n.n])
	copy(n.inner[i+1:n.n+1], n.inner[i:n.n])
	copy(n.leaves[i+1:n.n+1], n.leaves[i:n.n])
	n.scores[i], n.members[i], n.counts[i] = score, member, right
	n.inner[i], n.leaves[i] = in, leaf
	n.counts[i-1] = left
	n.n++
}

// clearFrom drops n's references from child i on.
func (n *zinner) clearFrom(i int) {
	clear(n.members[i:n.n])
	clear(n.inner[i:n.n])
	clear(n.leaves[i:n.n])
}

// total returns the number of elements under n.
func (n *zinner) total() int { return sum(n.counts[:n.n]) }

// delete removes (score, member) and reports whether it was there.
func (t *ztree) delete(score float64, member string) bool {
	var p zpath
	l, i, _ := t.find(score, member, &p)
	if i == l.n || l.scores[i] != score || l.members[i] != member {
		return false
	}
	t.removeAt(l, i, &p)
	return true
}

// deleteAt removes the element of 0-based rank r, which must be below t.n,
// and returns it.
func (t *ztree) deleteAt(r int) zentry {
	var p zpath
	l, i := t.at(r, &p)
	e := zentry{l.members[i], l.scores[i]}
	t.removeAt(l, i, &p)
	return e
}

// move gives member, which has score from, score to: in its place when it
// stays between its neighbours in its leaf (Redis's zslUpdateScore does
// the same), otherwise taken out and put back.
func (t *ztree) move(from, to float64, member string) {
	var p zpath
	l, i, _ := t.find(from, member, &p)
	m := l.members[i]
	if i > 0 && i < l.n-1 &&
		less(l.scores[i-1], l.members[i-1], to, m) && less(to, m, l.scores[i+1], l.members[i+1]) {
		l.scores[i] = to
		return
	}
	t.removeAt(l, i, &p)
	t.insert(to, m)
}

// removeAt removes element i of l, reached by p, and restores the fill of
// the nodes on the way.
func (t *ztree) removeAt(l *zleaf, i int, p *zpath) {
	copy(l.scores[i:], l.scores[i+1:l.n])
	copy(l.members[i:], l.members[i+1:l.n])
	l.n--
	l.members[l.n] = ""
	t.n--
	for k := range p.h {
		p.nodes[k].counts[p.idx[k]]--
	}
	for k := p.h - 1; k >= 0; k-- {
		n, c := p.nodes[k], p.idx[k]
		if k == p.h-1 {
			if n.leaves[c].n >= zLeafMin {
				return
			}
			t.fixLeaf(n, c)
		} else {
			if n.inner[c].n >= zInnerMin {
				return
			}
			fixInner(n, c)
		}
	}
	// The root keeps at least two children.
	for t.root != nil && t.root.n == 1 {
		if t.height == 1 {
			t.root = nil
		} else {
			t.root = t.root.inner[0]
		}
		t.height--
	}
}

// siblings returns the positions of n's child c, which has too few
// elements or children, and of a neighbour, left one first.
func siblings(n *zinner, c int) (a, b int) {
	if c > 0 {
		return c - 1, c
	}
	return c, c + 1
}

// fixLeaf restores the fill of leaf c of n, which has lost an element,
// merging it with a neighbour or moving elements from one.
func (t *ztree) fixLeaf(n *zinner, c int) {
	if n.n < 2 {
		return // the root's only child: the root goes next
	}
	ai, bi := siblings(n, c)
	a, b := n.leaves[ai], n.leaves[bi]
	if a.n+b.n <= zLeafCap {
		copy(a.scores[a.n:], b.scores[:b.n])
		copy(a.members[a.n:], b.members[:b.n])
		a.n += b.n
		a.next = b.next
		if b.next != nil {
			b.next.prev = a
		} else {
			t.tail = a
		}
		n.counts[ai] += n.counts[bi]
		n.removeAt(bi)
		return
	}
	// Even them out.
	want := (a.n + b.n) / 2
	if a.n < want {
		k := want - a.n
		copy(a.scores[a.n:], b.scores[:k])
		copy(a.members[a.n:], b.members[:k])
		copy(b.scores[:], b.scores[k:b.n])
		copy(b.members[:], b.members[k:b.n])
		clear(b.members[b.n-k : b.n])
		a.n, b.n = a.n+k, b.n-k
	} else {
		k := a.n - want
		copy(b.scores[k:], b.scores[:b.n])
		copy(b.members[k:], b.members[:b.n])
		copy(b.scores[:k], a.scores[want:a.n])
		copy(b.members[:k], a.members[want:a.n])
		clear(a.members[want:a.n])
		a.n, b.n = want, b.n+k
	}
	n.counts[ai], n.counts[bi] = a.n, b.n
	n.scores[bi], n.members[bi] = b.scores[0], b.members[0]
}

// fixInner restores the fill of inner child c of n, which has lost a
// child, as fixLeaf does for a leaf. The bound between the two neighbours
// goes down into the merged node, or moves with the children.
func fixInner(n *zinner, c int) {
	if n.n < 2 {
		return
	}
	ai, bi := siblings(n, c)
	a, b := n.inner[ai], n.inner[bi]
	if a.n+b.n <= zInnerCap {
		b.scores[0], b.members[0] = n.scores[bi], n.members[bi]
		a.appendFrom(b, 0, b.n)
		n.counts[ai] += n.counts[bi]
		n.removeAt(bi)
		return
	}
	want := (a.n + b.n) / 2
	if a.n < want {
		k := want - a.n
		b.scores[0], b.members[0] = n.scores[bi], n.members[bi]
		a.appendFrom(b, 0, k)
		moved := sum(b.counts[:k])
		n.scores[bi], n.members[bi] = b.scores[k], b.members[k]
		b.shiftDown(k)
		n.counts[ai], n.counts[bi] = n.counts[ai]+moved, n.counts[bi]-moved
	} else {
		k := a.n - want
		b.shiftUp(k)
		b.scores[k], b.members[k] = n.scores[bi], n.members[bi]
		copy(b.scores[:k], a.scores[want:a.n])
		copy(b.members[:k], a.members[want:a.n])
		copy(b.counts[:k], a.counts[want:a.n])
		copy(b.inner[:k], a.inner[want:a.n])
		copy(b.leaves[:k], a.leaves[want:a.n])
		moved := sum(a.counts[want:a.n])
		n.scores[bi], n.members[bi] = a.scores[want], a.members[want]
		b.members[0] = ""
		a.clearFrom(want)
		a.n = want
		n.counts[ai], n.counts[bi] = n.counts[ai]-moved, n.counts[bi]+moved
	}
}

func sum(s []int) int {
	t := 0
	for _, k := range s {
		t += k
	}
	return t
}

// appendFrom appends children i to j of b to n.
func (n *zinner) appendFrom(b *zinner, i, j int) {
	copy(n.scores[n.n:], b.scores[i:j])
	copy(n.members[n.n:], b.members[i:j])
	copy(n.counts[n.n:], b.counts[i:j])
	copy(n.inner[n.n:], b.inner[i:j])
	copy(n.leaves[n.n:], b.leaves[i:j])
	n.n += j - i
}

// shiftDown drops n's first k children.
func (n *zinner) shiftDown(k int) {
	copy(n.scores[:], n.scores[k:n.n])
	copy(n.members[:], n.members[k:n.n])
	copy(n.counts[:], n.counts[k:n.n])
	copy(n.inner[:], n.inner[k:n.n])
	copy(n.leaves[:], n.leaves[k:n.n])
	n.clearFrom(n.n - k)
	n.n -= k
	n.members[0] = ""
}

// shiftUp makes room for k children at the front of n.
func (n *zinner) shiftUp(k int) {
	copy(n.scores[k:], n.scores[:n.n])
	copy(n.members[k:], n.members[:n.n])
	copy(n.counts[k:], n.counts[:n.n])
	copy(n.inner[k:], n.inner[:n.n])
	copy(n.leaves[k:], n.leaves[:n.n])
	n.n += k
}

// removeAt drops child i of n, i > 0.
func (n *zinner) removeAt(i int) {
	copy(n.scores[i:], n.scores[i+1:n.n])
	copy(n.members[i:], n.members[i+1:n.n])
	copy(n.counts[i:], n.counts[i+1:n.n])
	copy(n.inner[i:], n.inner[i+1:n.n])
	copy(n.leaves[i:], n.leaves[i+1:n.n])
	n.clearFrom(n.n - 1)
	n.n--
}

// zcursor is a position in the tree's elements.
type zcursor struct {
	l *zleaf
	i int
}

func (c *zcursor) ok() bool       { return c.l != nil }
func (c *zcursor) score() float64 { return c.l.scores[c.i] }
func (c *zcursor) member() string { return c.l.members[c.i] }
func (c *zcursor) entry() zentry  { return zentry{c.l.members[c.i], c.l.scores[c.i]} }

// next moves to the following element, or past the last.
func (c *zcursor) next() {
	if c.i++; c.i == c.l.n {
		c.l, c.i = c.l.next, 0
	}
}

// prev moves to the element before, or before the first.
func (c *zcursor) prev() {
	if c.i--; c.i < 0 {
		c.l = c.l.prev
		if c.l != nil {
			c.i = c.l.n - 1
		}
	}
}

// first returns a cursor at the lowest element, past the end if none.
func (t *ztree) first() zcursor {
	if t.n == 0 {
		return zcursor{}
	}
	return zcursor{t.head, 0}
}

// last returns a cursor at the highest element.
func (t *ztree) last() zcursor {
	if t.n == 0 {
		return zcursor{}
	}
	return zcursor{t.tail, t.tail.n - 1}
}

// cursor returns a cursor at the element of 0-based rank r, past the end
// if there is none.
func (t *ztree) cursor(r int) zcursor {
	if r < 0 || r >= t.n {
		return zcursor{}
	}
	var p zpath
	l, i := t.at(r, &p)
	return zcursor{l, i}
}

// rank returns the 0-based rank of (score, member), an element.
func (t *ztree) rank(score float64, member string) int {
	var p zpath
	_, _, r := t.find(score, member, &p)
	return r
}

// zrange is a range of scores or of members.
type zrange interface {
	empty() bool
	gteMin(score float64, member string) bool
	lteMax(score float64, member string) bool
}

// scoreRange is a range of scores, as ZRANGEBYSCORE takes it.
type scoreRange struct {
	min, max     float64
	minex, maxex bool
}

func (r *scoreRange) empty() bool {
	return r.min > r.max || (r.min == r.max && (r.minex || r.maxex))
}

func (r *scoreRange) gteMin(score float64, _ string) bool {
	if r.minex {
		return score > r.min
	}
	return score >= r.min
}

func (r *scoreRange) lteMax(score float64, _ string) bool {
	if r.maxex {
		return score < r.max
	}
	return score <= r.max
}

// lexBound is an end of a range of members: "-" (inf -1), "+" (inf 1),
// "[s" or "(s" (ex).
type lexBound struct {
	s   string
	inf int
	ex  bool
}

// cmp compares a member with the bound.
func (b *lexBound) cmp(member string) int {
	if b.inf != 0 {
		return -b.inf
	}
	return strings.Compare(member, b.s)
}

// lexRange is a range of members, as ZRANGEBYLEX takes it.
type lexRange struct{ min, max lexBound }

func (r *lexRange) empty() bool {
	var c int
	switch {
	case r.min.inf != 0 && r.min.inf == r.max.inf:
		c = 0
	case r.min.inf < 0 || r.max.inf > 0:
		c = -1
	case r.min.inf > 0 || r.max.inf < 0:
		c = 1
	default:
		c = strings.Compare(r.min.s, r.max.s)
	}
	return c > 0 || (c == 0 && (r.min.ex || r.max.ex))
}

func (r *lexRange) gteMin(_ float64, member string) bool {
	c := r.min.cmp(member)
	return c > 0 || (c == 0 && !r.min.ex)
}

func (r *lexRange) lteMax(_ float64, member string) bool {
	c := r.max.cmp(member)
	return c < 0 || (c == 0 && !r.max.ex)
}

// seek returns the 0-based rank of the first element past r's lower end
// (gteMin holds), or with past, past its upper end (lteMax fails); t.n if
// there is none. Both tests hold from some element on, in the order of a
// set, except a range of members in a set whose scores differ, where the
// answer is some element, as Redis's skiplist gives some element.
func (t *ztree) seek(r zrange, past bool) int {
	holds := func(score float64, member string) bool {
		if past {
			return !r.lteMax(score, member)
		}
		return r.gteMin(score, member)
	}
	rank := 0
	l := t.head
	if n := t.root; n != nil {
		for h := t.height; ; h-- {
			// The last child whose lower bound does not hold: the first
			// element that does is in it, or begins the next child.
			lo, hi := 1, n.n
			for lo < hi {
				m := int(uint(lo+hi) >> 1)
				if holds(n.scores[m], n.members[m]) {
					hi = m
				} else {
					lo = m + 1
				}
			}
			c := lo - 1
			rank += sum(n.counts[:c])
			if h == 1 {
				l = n.leaves[c]
				break
			}
			n = n.inner[c]
		}
	}
	lo, hi := 0, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if holds(l.scores[m], l.members[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return rank + lo
}

// firstIn returns a cursor at the lowest element in r and its 0-based
// rank, or one past the end. A compact set is searched as Redis searches a
// listpack: linearly. The result differs from the tree's only for a range
// of members in a set whose scores differ, where Redis's own results
// depend on the encoding.
func (z *zset) firstIn(r zrange) (zcursor, int) {
	t := &z.tree
	if !z.overlaps(r) {
		return zcursor{}, 0
	}
	if z.big {
		rank := t.seek(r, false)
		c := t.cursor(rank)
		if !c.ok() || !r.lteMax(c.score(), c.member()) {
			return zcursor{}, 0
		}
		return c, rank
	}
	rank := 0
	for c := t.first(); c.ok(); c.next() {
		if r.gteMin(c.score(), c.member()) {
			if r.lteMax(c.score(), c.member()) {
				return c, rank
			}
			break
		}
		rank++
	}
	return zcursor{}, 0
}

// lastIn returns a cursor at the highest element in r and its 0-based
// rank, or one past the end, searching as firstIn does.
func (z *zset) lastIn(r zrange) (zcursor, int) {
	t := &z.tree
	if !z.overlaps(r) {
		return zcursor{}, 0
	}
	if z.big {
		rank := t.seek(r, true) - 1
		c := t.cursor(rank)
		if !c.ok() || !r.gteMin(c.score(), c.member()) {
			return zcursor{}, 0
		}
		return c, rank
	}
	rank := t.n - 1
	for c := t.last(); c.ok(); c.prev() {
		if r.lteMax(c.score(), c.member()) {
			if r.gteMin(c.score(), c.member()) {
				return c, rank
			}
			break
		}
		rank--
	}
	return zcursor{}, 0
}

// overlaps reports whether r may hold elements of the set: it is not
// empty, the highest element is not below it nor the lowest above it.
func (z *zset) overlaps(r zrange) bool {
	t := &z.tree
	if r.empty() || t.n == 0 {
		return false
	}
	lc, fc := t.last(), t.first()
	return r.gteMin(lc.score(), lc.member()) && r.lteMax(fc.score(), fc.member())
}

// count returns the number of elements in r: between the first and the
// last in a large set, as Redis counts in a skiplist; from the first on
// while they are in r in a compact one, as Redis counts in a listpack.
func (z *zset) count(r zrange) int {
	first, lo := z.firstIn(r)
	if !first.ok() {
		return 0
	}
	if z.big {
		last, hi := z.lastIn(r)
		if !last.ok() {
			return 0
		}
		return max(hi-lo+1, 0)
	}
	n := 0
	for c := first; c.ok() && r.lteMax(c.score(), c.member()); c.next() {
		n++
	}
	return n
}
