package kv

import (
	"math/rand/v2"
	"strings"

	"github.com/evloop/evloop/resp"
)

// Redis's thresholds for a sorted set's compact encoding
// (zset-max-listpack-entries and zset-max-listpack-value).
const (
	zsetListpackEntries = 128
	zsetListpackValue   = 64
)

// zset is a sorted set value: an order-statistic skiplist for the order,
// and a dict from member to score.
type zset struct {
	scores *dict[float64]
	zsl    *skiplist
	// big is set once the set outgrew Redis's listpack encoding, which
	// Redis never converts back to.
	big bool
}

func newZset() *zset {
	return &zset{scores: newDict[float64](0), zsl: newSkiplist()}
}

func (z *zset) len() int { return z.zsl.length }

// score returns member's score.
func (z *zset) score(member []byte) (float64, bool) {
	if p := z.scores.get(member); p != nil {
		return *p, true
	}
	return 0, false
}

// set gives member score, adding it if absent, and reports whether it
// added it.
func (z *zset) set(member []byte, score float64) bool {
	p, added := z.scores.put(member)
	if !added {
		if score = z.normalize(score); *p != score {
			z.zsl.delete(*p, string(member))
			z.zsl.insert(score, string(member))
			*p = score
		}
		return false
	}
	if len(member) > zsetListpackValue || z.zsl.length+1 > zsetListpackEntries {
		z.big = true
	}
	score = z.normalize(score)
	*p = score
	z.zsl.insert(score, string(member))
	return true
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
	p := z.scores.get(member)
	if p == nil {
		return false
	}
	z.zsl.delete(*p, string(member))
	z.scores.delete(member)
	return true
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
				*z.scores.get([]byte(x.member)) = 0
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
	member string
	score  float64
	back   *zslNode
	level  []zslLevel // in the same allocation as the node: see newNode
}

// Nodes are allocated with their levels after them, in one object, as
// Redis's are: a walk along a level then touches one place in memory per
// node, not two. One type per size class of levels.
type (
	zslNode1 struct {
		n zslNode
		l [1]zslLevel
	}
	zslNode2 struct {
		n zslNode
		l [2]zslLevel
	}
	zslNode4 struct {
		n zslNode
		l [4]zslLevel
	}
	zslNode8 struct {
		n zslNode
		l [8]zslLevel
	}
	zslNodeMax struct {
		n zslNode
		l [zslMaxLevel]zslLevel
	}
)

func newNode(score float64, member string, lvl int) *zslNode {
	var x *zslNode
	switch {
	case lvl <= 1:
		b := new(zslNode1)
		x = &b.n
		x.level = b.l[:lvl]
	case lvl <= 2:
		b := new(zslNode2)
		x = &b.n
		x.level = b.l[:lvl]
	case lvl <= 4:
		b := new(zslNode4)
		x = &b.n
		x.level = b.l[:lvl]
	case lvl <= 8:
		b := new(zslNode8)
		x = &b.n
		x.level = b.l[:lvl]
	default:
		b := new(zslNodeMax)
		x = &b.n
		x.level = b.l[:lvl]
	}
	x.score, x.member = score, member
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

func randomLevel() int {
	lvl := 1
	for lvl < zslMaxLevel && rand.Float64() < zslP {
		lvl++
	}
	return lvl
}

// insert adds (score, member), which must not be present.
func (l *skiplist) insert(score float64, member string) {
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	x := l.head
	for i := l.level - 1; i >= 0; i-- {
		if i < l.level-1 {
			rank[i] = rank[i+1]
		}
		for x.level[i].next != nil && before(x.level[i].next, score, member) {
			rank[i] += x.level[i].span
			x = x.level[i].next
		}
		update[i] = x
	}
	lvl := randomLevel()
	if lvl > l.level {
		for i := l.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = l.head
			l.head.level[i].span = l.length
		}
		l.level = lvl
	}
	x = newNode(score, member, lvl)
	for i := range lvl {
		x.level[i].next = update[i].level[i].next
		update[i].level[i].next = x
		x.level[i].span = update[i].level[i].span - (rank[0] - rank[i])
		update[i].level[i].span = rank[0] - rank[i] + 1
	}
	for i := lvl; i < l.level; i++ {
		update[i].level[i].span++
	}
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

// delete removes (score, member) and reports whether it was there.
func (l *skiplist) delete(score float64, member string) bool {
	var update [zslMaxLevel]*zslNode
	x := l.head
	for i := l.level - 1; i >= 0; i-- {
		for x.level[i].next != nil && before(x.level[i].next, score, member) {
			x = x.level[i].next
		}
		update[i] = x
	}
	x = x.level[0].next
	if x == nil || x.score != score || x.member != member {
		return false
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
	return true
}

// rank returns the 1-based rank of (score, member), 0 if absent.
func (l *skiplist) rank(score float64, member string) int {
	x := l.head
	r := 0
	for i := l.level - 1; i >= 0; i-- {
		for n := x.level[i].next; n != nil && (before(n, score, member) || (n.score == score && n.member == member)); n = x.level[i].next {
			r += x.level[i].span
			x = n
		}
		if x != l.head && x.score == score && x.member == member {
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
	return l.rank(last.score, last.member) - l.rank(first.score, first.member) + 1
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
