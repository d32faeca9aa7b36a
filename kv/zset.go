package kv

import (
	"math/rand/v2"
	"strings"
	"unsafe"

	"github.com/evloop/evloop/resp"
)

// Redis's thresholds for a sorted set's compact encoding
// (zset-max-listpack-entries and zset-max-listpack-value).
const (
	zsetListpackEntries = 128
	zsetListpackValue   = 64
)

// zset is a sorted set value: an order-statistic skiplist for the order,
// and a dict from member to its node, as Redis's dict points at the
// node's score. The dict's key is the node's own member string.
type zset struct {
	members *dict[*zslNode]
	zsl     *skiplist
	// big is set once the set outgrew Redis's listpack encoding, which
	// Redis never converts back to.
	big bool
}

func newZset() *zset {
	return &zset{members: newDict[*zslNode](0), zsl: newSkiplist()}
}

func (z *zset) len() int { return z.zsl.length }

// node returns member's node, or nil.
func (z *zset) node(member []byte) *zslNode {
	if p := z.members.get(member); p != nil {
		return *p
	}
	return nil
}

// score returns member's score.
func (z *zset) score(member []byte) (float64, bool) {
	if x := z.node(member); x != nil {
		return x.score, true
	}
	return 0, false
}

// set gives member score, adding it if absent, and reports whether it
// added it.
func (z *zset) set(member []byte, score float64) bool {
	if x := z.node(member); x != nil {
		z.update(x, score)
		return false
	}
	z.insert(member, score)
	return true
}

// insert adds member, which must be absent, with score.
func (z *zset) insert(member []byte, score float64) {
	if len(member) > zsetListpackValue || z.zsl.length+1 > zsetListpackEntries {
		z.big = true
	}
	x := z.zsl.insert(z.normalize(score), member)
	*z.members.add(x.member) = x
}

// update gives x, a node of the set, score.
func (z *zset) update(x *zslNode, score float64) {
	if score = z.normalize(score); x.score != score {
		z.zsl.updateScore(x, score)
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
	x, ok := z.members.take(member)
	if ok {
		z.zsl.unlink(x)
	}
	return ok
}

// removeNode deletes x, a node of the set.
func (z *zset) removeNode(x *zslNode) {
	// The dict only reads the key it is given, so the member's own bytes
	// serve, uncopied.
	z.members.delete(unsafe.Slice(unsafe.StringData(x.member), len(x.member)))
	z.zsl.unlink(x)
}

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
	z.big = z.len() > zsetListpackEntries
	for x := z.zsl.first(); x != nil && !z.big; x = x.next() {
		z.big = len(x.member) > zsetListpackValue
	}
	if !z.big {
		for x := z.zsl.first(); x != nil; x = x.next() {
			if x.score == 0 {
				x.score = 0
			}
		}
	}
}

func (z *zset) clone() *zset {
	n := newZset()
	for x := z.zsl.first(); x != nil; x = x.next() {
		n.set([]byte(x.member), x.score)
	}
	n.big = z.big
	return n
}

// rewrite writes the ZADD commands that rebuild the set, 64 members each.
func (z *zset) rewrite(w *resp.Writer, key []byte) {
	args := [][]byte{[]byte("ZADD"), key}
	x := z.zsl.first()
	for x != nil {
		args = args[:2]
		for ; x != nil && len(args) < 2+2*64; x = x.next() {
			args = append(args, []byte(formatScore(x.score)), []byte(x.member))
		}
		w.Command(args...)
	}
}

// The skiplist is Redis's zskiplist: ordered by score, then member; each
// link records its span, the number of level-0 steps it skips, so ranks
// are found in O(log n).
const (
	zslMaxLevel = 32
	zslP        = 0.25
)

type zslNode struct {
	member string // in the same allocation as the node when short: see newNode
	score  float64
	back   *zslNode
	level  []zslLevel // in the same allocation as the node: see newNode
}

// zslAlloc is a node with its levels and its member's bytes after it, in
// one object: L is an array of levels and B one of bytes. A walk along a
// level then touches one place in memory per node, not two, as in Redis,
// and adding a member costs one allocation (the dict's key is the node's
// member too).
type zslAlloc[L, B any] struct {
	n zslNode
	l L
	b B
}

// newNode returns a node of lvl levels holding a copy of member.
func newNode(score float64, member []byte, lvl int) *zslNode {
	switch {
	case lvl <= 1:
		return newNodeLevels[[1]zslLevel](score, member, lvl)
	case lvl <= 2:
		return newNodeLevels[[2]zslLevel](score, member, lvl)
	case lvl <= 4:
		return newNodeLevels[[4]zslLevel](score, member, lvl)
	case lvl <= 8:
		return newNodeLevels[[8]zslLevel](score, member, lvl)
	default:
		return newNodeLevels[[zslMaxLevel]zslLevel](score, member, lvl)
	}
}

// newNodeLevels is newNode for levels L, picking the member's size class.
// A member longer than a listpack's longest is allocated on its own.
func newNodeLevels[L any](score float64, member []byte, lvl int) *zslNode {
	switch n := len(member); {
	case n <= 8:
		return allocNode[L, [8]byte](score, member, lvl)
	case n <= 16:
		return allocNode[L, [16]byte](score, member, lvl)
	case n <= 24:
		return allocNode[L, [24]byte](score, member, lvl)
	case n <= 32:
		return allocNode[L, [32]byte](score, member, lvl)
	case n <= 48:
		return allocNode[L, [48]byte](score, member, lvl)
	case n <= zsetListpackValue:
		return allocNode[L, [zsetListpackValue]byte](score, member, lvl)
	default:
		x := allocNode[L, [0]byte](score, nil, lvl)
		x.member = string(member)
		return x
	}
}

// allocNode returns a node in a zslAlloc[L, B]; member must fit in B.
func allocNode[L, B any](score float64, member []byte, lvl int) *zslNode {
	a := new(zslAlloc[L, B])
	x := &a.n
	x.level = unsafe.Slice((*zslLevel)(unsafe.Pointer(&a.l)), lvl)
	if len(member) > 0 {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&a.b)), len(member))
		copy(b, member)
		x.member = unsafe.String(&b[0], len(b))
	}
	x.score = score
	return x
}

type zslLevel struct {
	next *zslNode
	span int
}

type skiplist struct {
	head   *zslNode
	tail   *zslNode
	length int
	level  int
}

func newSkiplist() *skiplist {
	return &skiplist{head: &zslNode{level: make([]zslLevel, zslMaxLevel)}, level: 1}
}

func (x *zslNode) next() *zslNode { return x.level[0].next }

// first returns the lowest element, or nil.
func (l *skiplist) first() *zslNode { return l.head.level[0].next }

// before reports whether n sorts before (score, member).
func before(n *zslNode, score float64, member string) bool {
	return n.score < score || (n.score == score && n.member < member)
}

// after reports whether n sorts after (score, member).
func after(n *zslNode, score float64, member string) bool {
	return n.score > score || (n.score == score && n.member > member)
}

func randomLevel() int {
	lvl := 1
	for lvl < zslMaxLevel && rand.Float64() < zslP {
		lvl++
	}
	return lvl
}

// insert adds (score, member), which must not be present, and returns its
// node.
func (l *skiplist) insert(score float64, member []byte) *zslNode {
	x := newNode(score, member, randomLevel())
	l.link(x)
	return x
}

// link puts x, which is in no list, in its place by its score and member.
func (l *skiplist) link(x *zslNode) {
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	p := l.head
	for i := l.level - 1; i >= 0; i-- {
		if i < l.level-1 {
			rank[i] = rank[i+1]
		}
		for p.level[i].next != nil && before(p.level[i].next, x.score, x.member) {
			rank[i] += p.level[i].span
			p = p.level[i].next
		}
		update[i] = p
	}
	lvl := len(x.level)
	if lvl > l.level {
		for i := l.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = l.head
			l.head.level[i].span = l.length
		}
		l.level = lvl
	}
	for i := range lvl {
		x.level[i].next = update[i].level[i].next
		update[i].level[i].next = x
		x.level[i].span = update[i].level[i].span - (rank[0] - rank[i])
		update[i].level[i].span = rank[0] - rank[i] + 1
	}
	for i := lvl; i < l.level; i++ {
		update[i].level[i].span++
	}
	x.back = nil
	if update[0] != l.head {
		x.back = update[0]
	}
	if x.level[0].next != nil {
		x.level[0].next.back = x
	} else {
		l.tail = x
	}
	l.length++
}

// unlink takes x, an element of the list, out of it.
func (l *skiplist) unlink(x *zslNode) {
	var update [zslMaxLevel]*zslNode
	p := l.head
	for i := l.level - 1; i >= 0; i-- {
		// The nodes before x at this level, then x or one after it.
		for n := p.level[i].next; n != nil && n != x && before(n, x.score, x.member); n = p.level[i].next {
			p = n
		}
		update[i] = p
	}
	for i := range l.level {
		if update[i].level[i].next == x {
			update[i].level[i].span += x.level[i].span - 1
			update[i].level[i].next = x.level[i].next
		} else {
			update[i].level[i].span--
		}
	}
	if x.level[0].next != nil {
		x.level[0].next.back = x.back
	} else {
		l.tail = x.back
	}
	for l.level > 1 && l.head.level[l.level-1].next == nil {
		l.level--
	}
	l.length--
}

// updateScore gives x, an element of the list, score. If x stays between
// its neighbours, only the score changes: no link, span or rank does.
// Otherwise x is taken out and put back in its new place, the same node
// with the same levels. This is Redis's zslUpdateScore, except that the
// check needs no walk (the dict gives the node itself) and members break
// ties, so more updates stay in place.
func (l *skiplist) updateScore(x *zslNode, score float64) {
	if (x.back == nil || before(x.back, score, x.member)) &&
		(x.level[0].next == nil || after(x.level[0].next, score, x.member)) {
		x.score = score
		return
	}
	l.unlink(x)
	x.score = score
	l.link(x)
}

// rank returns the 1-based rank of x, an element of the list.
func (l *skiplist) rank(x *zslNode) int {
	p := l.head
	r := 0
	for i := l.level - 1; i >= 0; i-- {
		for n := p.level[i].next; n != nil && (n == x || before(n, x.score, x.member)); n = p.level[i].next {
			r += p.level[i].span
			p = n
		}
		if p == x {
			return r
		}
	}
	return 0
}

// byRank returns the element of 1-based rank r, or nil.
func (l *skiplist) byRank(r int) *zslNode {
	x := l.head
	traversed := 0
	for i := l.level - 1; i >= 0; i-- {
		for x.level[i].next != nil && traversed+x.level[i].span <= r {
			traversed += x.level[i].span
			x = x.level[i].next
		}
		if traversed == r {
			return x
		}
	}
	return nil
}

// zrange is a range of scores or of members.
type zrange interface {
	empty() bool
	gteMin(n *zslNode) bool
	lteMax(n *zslNode) bool
}

// scoreRange is a range of scores, as ZRANGEBYSCORE takes it.
type scoreRange struct {
	min, max     float64
	minex, maxex bool
}

func (r *scoreRange) empty() bool {
	return r.min > r.max || (r.min == r.max && (r.minex || r.maxex))
}

func (r *scoreRange) gteMin(n *zslNode) bool {
	if r.minex {
		return n.score > r.min
	}
	return n.score >= r.min
}

func (r *scoreRange) lteMax(n *zslNode) bool {
	if r.maxex {
		return n.score < r.max
	}
	return n.score <= r.max
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

func (r *lexRange) gteMin(n *zslNode) bool {
	c := r.min.cmp(n.member)
	return c > 0 || (c == 0 && !r.min.ex)
}

func (r *lexRange) lteMax(n *zslNode) bool {
	c := r.max.cmp(n.member)
	return c < 0 || (c == 0 && !r.max.ex)
}

// firstIn returns the lowest element in r, or nil.
func (l *skiplist) firstIn(r zrange) *zslNode {
	if r.empty() || l.tail == nil || !r.gteMin(l.tail) || !r.lteMax(l.first()) {
		return nil
	}
	x := l.head
	for i := l.level - 1; i >= 0; i-- {
		for x.level[i].next != nil && !r.gteMin(x.level[i].next) {
			x = x.level[i].next
		}
	}
	x = x.level[0].next
	if x == nil || !r.lteMax(x) {
		return nil
	}
	return x
}

// lastIn returns the highest element in r, or nil.
func (l *skiplist) lastIn(r zrange) *zslNode {
	if r.empty() || l.tail == nil || !r.gteMin(l.tail) || !r.lteMax(l.first()) {
		return nil
	}
	x := l.head
	for i := l.level - 1; i >= 0; i-- {
		for x.level[i].next != nil && r.lteMax(x.level[i].next) {
			x = x.level[i].next
		}
	}
	if x == l.head || !r.gteMin(x) {
		return nil
	}
	return x
}

// count returns the number of elements in r.
func (l *skiplist) count(r zrange) int {
	first := l.firstIn(r)
	if first == nil {
		return 0
	}
	last := l.lastIn(r)
	return l.rank(last) - l.rank(first) + 1
}

// A compact set is searched as Redis searches a listpack: linearly. The
// result differs from the skiplist's only for a range of members in a set
// whose scores differ, where Redis's own results depend on the encoding.

// firstIn returns the lowest element in r, or nil.
func (z *zset) firstIn(r zrange) *zslNode {
	l := z.zsl
	if z.big || r.empty() || l.tail == nil || !r.gteMin(l.tail) || !r.lteMax(l.first()) {
		return l.firstIn(r)
	}
	for x := l.first(); x != nil; x = x.next() {
		if r.gteMin(x) {
			if r.lteMax(x) {
				return x
			}
			return nil
		}
	}
	return nil
}

// lastIn returns the highest element in r, or nil.
func (z *zset) lastIn(r zrange) *zslNode {
	l := z.zsl
	if z.big || r.empty() || l.tail == nil || !r.gteMin(l.tail) || !r.lteMax(l.first()) {
		return l.lastIn(r)
	}
	for x := l.tail; x != nil; x = x.back {
		if r.lteMax(x) {
			if r.gteMin(x) {
				return x
			}
			return nil
		}
	}
	return nil
}

// count returns the number of elements in r.
func (z *zset) count(r zrange) int {
	if z.big {
		return z.zsl.count(r)
	}
	n := 0
	for x := z.firstIn(r); x != nil && r.lteMax(x); x = x.next() {
		n++
	}
	return n
}
