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
				z.zsl.updateScore(x, 0) // the links' copies too
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

// A node's levels lie just before it in its allocation, level 0 nearest:
// see zslAlloc and lv.
type zslNode struct {
	member string // in the same allocation as the node when short: see newNode
	score  float64
	back   *zslNode
	levels int
}

// zslAlloc is a node with its levels before it and its member's bytes
// after it, in one object: L is an array of levels and B one of bytes.
// Level i of the node is the i-th of L counting from its end, so that
// finding a level needs nothing read from the node: a descent reads the
// one link it follows (next, span and next's score together) from each
// node it steps to, where a slice of levels in the node would cost a read
// of the slice first and put the link farther from the node's start.
// Adding a member costs one allocation (the dict's key is the node's
// member too).
type zslAlloc[L, B any] struct {
	_ L // reached only through lv
	n zslNode
	b B
}

// lv returns x's link at level i, 0 <= i < x.levels.
func (x *zslNode) lv(i int) *zslLevel {
	return (*zslLevel)(unsafe.Add(unsafe.Pointer(x), -(i+1)*int(unsafe.Sizeof(zslLevel{}))))
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
	x.levels = lvl
	if len(member) > 0 {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&a.b)), len(member))
		copy(b, member)
		x.member = unsafe.String(&b[0], len(b))
	}
	x.score = score
	return x
}

// zslLevel is a node's link at one level. It carries the score of the node
// it leads to, so that a walk decides whether to step without loading that
// node: of the nodes a descent meets, about a third are ones it does not
// step to, and each is a cache miss in a large set. Redis's links have no
// such copy.
type zslLevel struct {
	next  *zslNode
	span  int
	score float64 // next's score when next is not nil
}

type skiplist struct {
	head   *zslNode
	tail   *zslNode
	length int
	level  int
}

func newSkiplist() *skiplist {
	return &skiplist{head: allocNode[[zslMaxLevel]zslLevel, [0]byte](0, nil, zslMaxLevel), level: 1}
}

func (x *zslNode) next() *zslNode { return x.lv(0).next }

// first returns the lowest element, or nil.
func (l *skiplist) first() *zslNode { return l.head.lv(0).next }

// before reports whether n sorts before (score, member).
func before(n *zslNode, score float64, member string) bool {
	return n.score < score || (n.score == score && n.member < member)
}

// leadsBefore reports whether lv leads to a node that sorts before
// (score, member), loading that node only when the scores tie.
func (lv *zslLevel) leadsBefore(score float64, member string) bool {
	return lv.next != nil && (lv.score < score || (lv.score == score && lv.next.member < member))
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
		for lv := p.lv(i); lv.leadsBefore(x.score, x.member); lv = p.lv(i) {
			rank[i] += lv.span
			p = lv.next
		}
		update[i] = p
	}
	lvl := x.levels
	if lvl > l.level {
		for i := l.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = l.head
			l.head.lv(i).span = l.length
		}
		l.level = lvl
	}
	for i := range lvl {
		u, xl := update[i].lv(i), x.lv(i)
		xl.next, xl.score, xl.span = u.next, u.score, u.span-(rank[0]-rank[i])
		u.next, u.score, u.span = x, x.score, rank[0]-rank[i]+1
	}
	for i := lvl; i < l.level; i++ {
		update[i].lv(i).span++
	}
	x.back = nil
	if update[0] != l.head {
		x.back = update[0]
	}
	if x.lv(0).next != nil {
		x.lv(0).next.back = x
	} else {
		l.tail = x
	}
	l.length++
}

// unlink takes x, an element of the list, out of it.
func (l *skiplist) unlink(x *zslNode) {
	var update [zslMaxLevel]*zslNode
	l.predecessors(x, &update)
	for i := range l.level {
		if u := update[i].lv(i); u.next == x {
			xl := x.lv(i)
			u.span += xl.span - 1
			u.next, u.score = xl.next, xl.score
		} else {
			u.span--
		}
	}
	if x.lv(0).next != nil {
		x.lv(0).next.back = x.back
	} else {
		l.tail = x.back
	}
	for l.level > 1 && l.head.lv(l.level-1).next == nil {
		l.level--
	}
	l.length--
}

// predecessors sets update[i] to the last node before x at level i, for
// every level of the list.
func (l *skiplist) predecessors(x *zslNode, update *[zslMaxLevel]*zslNode) {
	p := l.head
	for i := l.level - 1; i >= 0; i-- {
		// The nodes before x at this level, then x or one after it.
		for lv := p.lv(i); lv.next != x && lv.leadsBefore(x.score, x.member); lv = p.lv(i) {
			p = lv.next
		}
		update[i] = p
	}
}

// updateScore gives x, an element of the list, score. If x stays between
// its neighbours, only the score changes: no link, span or rank does.
// Otherwise x is taken out and put back in its new place, the same node
// with the same levels. This is Redis's zslUpdateScore, except that the
// check needs no walk (the dict gives the node itself) and members break
// ties, so more updates stay in place.
func (l *skiplist) updateScore(x *zslNode, score float64) {
	if (x.back == nil || before(x.back, score, x.member)) &&
		(x.lv(0).next == nil || after(x.lv(0).next, score, x.member)) {
		// The links that lead to x carry its score too.
		if x.levels == 1 {
			p := x.back
			if p == nil {
				p = l.head
			}
			p.lv(0).score = score
		} else {
			var update [zslMaxLevel]*zslNode
			l.predecessors(x, &update)
			for i := range x.levels {
				update[i].lv(i).score = score
			}
		}
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
		for lv := p.lv(i); lv.next == x || lv.leadsBefore(x.score, x.member); lv = p.lv(i) {
			r += lv.span
			p = lv.next
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
		for x.lv(i).next != nil && traversed+x.lv(i).span <= r {
			traversed += x.lv(i).span
			x = x.lv(i).next
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
		for x.lv(i).next != nil && !r.gteMin(x.lv(i).next) {
			x = x.lv(i).next
		}
	}
	x = x.lv(0).next
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
		for x.lv(i).next != nil && r.lteMax(x.lv(i).next) {
			x = x.lv(i).next
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
