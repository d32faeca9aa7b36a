package kv

import (
	"bytes"
	"iter"
	"slices"

	"github.com/evloop/evloop/resp"
)

// list is a list value: a deque of items packed into nodes, as Redis's
// quicklist packs them into listpacks. A node keeps its items' bytes back
// to back in one buffer, with a 2-byte offset each, so that an item costs
// its bytes and two more instead of a string of its own (16 bytes of
// header and an allocation), and the collector has a few buffers to mark
// per 8 KiB of items rather than a pointer per item.
//
// Items are returned as slices of the nodes' buffers: valid until the list
// next changes, as the bytes of a popped item may be written over by the
// next push. Callers copy what they keep. Owned by the loop.
type list struct {
	n int

	// nodes is a ring of count nodes from head, its size a power of two.
	nodes []*listNode
	head  int
	count int

	// curNode and curBase are where find last found an item: the node's
	// place from the head and the position of its first item, so that
	// walking a range by position goes a node at a time. curNode is -1 when
	// not known; every change forgets it.
	curNode, curBase int
}

// listNode holds a run of items in both of its buffers' middles, with
// room on either side for pushes at either end: item j is
// data[offs[lo+j]:offs[lo+j+1]], the items end at offs[hi], and data's
// bytes before offs[lo] and after offs[hi] are free, as are offs[:lo] and
// offs[hi+1:]. An item longer than listNodeBytes is a node of its own:
// offs nil, data the item, lo 1 once it is taken.
type listNode struct {
	data   []byte
	offs   []uint16
	lo, hi int
}

// listNodeBytes is the most bytes of items a node packs (Redis's default
// list-max-listpack-size, -2, is 8 KiB) and listNodeItems the most items.
// A node's buffer is at most twice listNodeBytes, so that an offset fits
// in 2 bytes.
const (
	listNodeBytes = 8 << 10
	listNodeItems = 1024
)

// listRewriteBatch is how many items one RPUSH of the log rewrite carries,
// as Redis's AOF_REWRITE_ITEMS_PER_CMD.
const listRewriteBatch = 64

func newList() *list { return &list{nodes: make([]*listNode, 1), curNode: -1} }

func (l *list) len() int { return l.n }

func (nd *listNode) packed() bool { return nd.offs != nil }

// size is the node's number of items.
func (nd *listNode) size() int {
	if !nd.packed() {
		return 1 - nd.lo
	}
	return nd.hi - nd.lo
}

// used is how many bytes the node's items take.
func (nd *listNode) used() int {
	if !nd.packed() {
		return len(nd.data)
	}
	return int(nd.offs[nd.hi]) - int(nd.offs[nd.lo])
}

// get returns item j of the node, 0 <= j < size, capped so that appending
// to it cannot write into the node.
func (nd *listNode) get(j int) []byte {
	if !nd.packed() {
		return nd.data[:len(nd.data):len(nd.data)]
	}
	start, end := nd.offs[nd.lo+j], nd.offs[nd.lo+j+1]
	return nd.data[start:end:end]
}

// fits reports whether the node can take v within the node limits.
func (nd *listNode) fits(v []byte) bool {
	return nd.packed() && fitsOneNode(nd.size()+1, nd.used()+len(v))
}

// fitsOneNode reports whether n items of size bytes all told make one
// packed node.
func fitsOneNode(n, size int) bool { return n <= listNodeItems && size <= listNodeBytes }

// sizeOf is how many bytes items take.
func sizeOf(items [][]byte) int {
	size := 0
	for _, v := range items {
		size += len(v)
	}
	return size
}

// newListNode returns a node holding v alone, with room for more on the
// side pushes come from (the head if front): packed, unless v is too long
// to share a node. Started next to a full node like, its buffers are made
// the size like's items take: a list's nodes tend to fill alike.
func newListNode(v []byte, front bool, like *listNode) *listNode {
	if len(v) > listNodeBytes {
		return &listNode{data: bytes.Clone(v)}
	}
	dataCap, offsCap := 2*len(v), 8
	if like != nil && like.packed() {
		dataCap, offsCap = max(dataCap, like.used()), max(offsCap, like.size()+2)
	}
	nd := &listNode{data: fullSlice[byte](max(dataCap, 16)), offs: fullSlice[uint16](offsCap)}
	at, i := 0, 0
	if front {
		at, i = len(nd.data)-len(v), len(nd.offs)-2
	}
	copy(nd.data[at:], v)
	nd.lo, nd.hi = i, i+1
	nd.offs[i], nd.offs[i+1] = uint16(at), uint16(at+len(v))
	return nd
}

// fullSlice returns a slice of at least n, as long as the memory
// allocated for it allows.
func fullSlice[E any](n int) []E {
	b := slices.Grow([]E(nil), n)
	return b[:cap(b)]
}

// packedNode returns a node holding items exactly, without room: packed
// unless it is one long item. The items must fit one node.
func packedNode(items [][]byte) *listNode {
	if len(items) == 1 && len(items[0]) > listNodeBytes {
		return &listNode{data: bytes.Clone(items[0])}
	}
	nd := &listNode{data: make([]byte, 0, sizeOf(items)), offs: make([]uint16, 1, len(items)+1), hi: len(items)}
	for _, v := range items {
		nd.data = append(nd.data, v...)
		nd.offs = append(nd.offs, uint16(len(nd.data)))
	}
	return nd
}

// pushBack and pushFront add v at the node's tail or head; it must fit.
func (nd *listNode) pushBack(v []byte) {
	if nd.hi+1 == len(nd.offs) || int(nd.offs[nd.hi])+len(v) > len(nd.data) {
		nd.regrow(len(v), false)
	}
	end := int(nd.offs[nd.hi]) + len(v)
	copy(nd.data[nd.offs[nd.hi]:end], v)
	nd.hi++
	nd.offs[nd.hi] = uint16(end)
}

func (nd *listNode) pushFront(v []byte) {
	if nd.lo == 0 || int(nd.offs[nd.lo]) < len(v) {
		nd.regrow(len(v), true)
	}
	start := int(nd.offs[nd.lo]) - len(v)
	copy(nd.data[start:], v)
	nd.lo--
	nd.offs[nd.lo] = uint16(start)
}

// regrow moves the items to buffers half as large again as they need with
// an item of need bytes more, the room on the side not pushed to (front
// tells which is) kept up to half of what is free, the rest on the other.
// A node made by pushes at one end so has room at that end alone, and one
// pushed at both ends gets room at both within two moves; each move grows
// the room in proportion, so a push costs O(1) copying on average. The
// old buffers are left as they were, so that slices of them stay valid.
func (nd *listNode) regrow(need int, front bool) {
	used, items := nd.used(), nd.size()
	dataCap, offsCap := (used+need)*3/2, (items+2)*3/2+1
	keepData, keepOffs := len(nd.data)-int(nd.offs[nd.hi]), len(nd.offs)-1-nd.hi
	if !front {
		keepData, keepOffs = int(nd.offs[nd.lo]), nd.lo
	}
	data, offs := fullSlice[byte](max(dataCap, 16)), fullSlice[uint16](offsCap)
	keepData = min(keepData, (len(data)-used-need)/2)
	keepOffs = min(keepOffs, (len(offs)-items-2)/2)
	at, lo := keepData, keepOffs
	if front {
		at, lo = len(data)-keepData-used, len(offs)-keepOffs-items-1
	}
	nd.moveTo(data, offs, at, lo)
}

// moveTo copies the items to new buffers data and offs, their bytes from
// data[at] and their offsets from offs[lo].
func (nd *listNode) moveTo(data []byte, offs []uint16, at, lo int) {
	base := int(nd.offs[nd.lo])
	copy(data[at:], nd.data[base:nd.offs[nd.hi]])
	for k := nd.lo; k <= nd.hi; k++ {
		offs[lo+k-nd.lo] = uint16(int(nd.offs[k]) - base + at)
	}
	nd.data, nd.offs, nd.lo, nd.hi = data, offs, lo, lo+nd.hi-nd.lo
}

// compact moves the items to buffers of their size.
func (nd *listNode) compact() {
	nd.moveTo(make([]byte, nd.used()), make([]uint16, nd.size()+1), 0, 0)
}

// takeFront and takeBack remove the item at the node's head or tail; the
// node must hold one. Neither writes over the item's bytes.
func (nd *listNode) takeFront() {
	nd.lo++
	nd.tidy()
}

func (nd *listNode) takeBack() {
	if !nd.packed() {
		nd.lo = 1
		return
	}
	nd.hi--
	nd.tidy()
}

// tidy compacts a node whose items fill under a quarter of its buffers, so
// that one left with a few items after many were taken does not keep the
// buffers they needed. Each compaction copies fewer bytes than were taken
// since the buffers were last sized.
func (nd *listNode) tidy() {
	if !nd.packed() || nd.size() == 0 {
		return
	}
	if (len(nd.data) >= 64 && 4*nd.used() < len(nd.data)) || (len(nd.offs) >= 32 && 4*(nd.size()+1) < len(nd.offs)) {
		nd.compact()
	}
}

// seal compacts a node that its list has moved on from, if its buffers
// have room to spare: a node between others takes no more pushes.
func (nd *listNode) seal() {
	if nd.packed() && (len(nd.data)-nd.used() > nd.used()/8+8 || len(nd.offs)-nd.size()-1 > (nd.size()+1)/8+4) {
		nd.compact()
	}
}

// packNodes appends to out nodes holding items, in order: each long item
// alone, and each run of short ones between them in one node if it fits,
// else in its halves packed in turn, so that a node that overflows splits
// into two with room in each.
func packNodes(out []*listNode, items [][]byte) []*listNode {
	start := 0
	for i, v := range items {
		if len(v) > listNodeBytes {
			out = packRun(out, items[start:i])
			out = append(out, packedNode(items[i:i+1]))
			start = i + 1
		}
	}
	return packRun(out, items[start:])
}

func packRun(out []*listNode, items [][]byte) []*listNode {
	switch {
	case len(items) == 0:
		return out
	case fitsOneNode(len(items), sizeOf(items)):
		return append(out, packedNode(items))
	}
	half := len(items) / 2
	return packRun(packRun(out, items[:half]), items[half:])
}

// shortRun returns how many items from the start of items (from the end if
// back) come before a long one.
func shortRun(items [][]byte, back bool) int {
	for n := range items {
		i := n
		if back {
			i = len(items) - 1 - n
		}
		if len(items[i]) > listNodeBytes {
			return n
		}
	}
	return len(items)
}

// fitsWith reports whether the node's items and items make one packed node.
func (nd *listNode) fitsWith(items [][]byte) bool {
	return nd.packed() && fitsOneNode(nd.size()+len(items), nd.used()+sizeOf(items))
}

// nodeItems appends node nd's items to out.
func nodeItems(out [][]byte, nd *listNode) [][]byte {
	for j := range nd.size() {
		out = append(out, nd.get(j))
	}
	return out
}

// node returns the i-th node from the head.
func (l *list) node(i int) *listNode { return l.nodes[(l.head+i)&(len(l.nodes)-1)] }

// find returns the node holding item i, 0 <= i < len, and the item's
// place in it. It walks from the head, the tail or where it last stopped,
// whichever is nearest.
func (l *list) find(i int) (*listNode, int) {
	k, base := 0, 0
	if l.curNode >= 0 {
		k, base = l.curNode, l.curBase
		if i < base && i < base-i {
			k, base = 0, 0
		}
	}
	if i >= base && l.n-i < i-base {
		k = l.count - 1
		base = l.n - l.node(k).size()
	}
	for i < base {
		k--
		base -= l.node(k).size()
	}
	for nd := l.node(k); i >= base+nd.size(); nd = l.node(k) {
		base += nd.size()
		k++
	}
	l.curNode, l.curBase = k, base
	return l.node(k), i - base
}

// at returns item i, 0 <= i < len, valid until the list changes.
func (l *list) at(i int) []byte {
	nd, j := l.find(i)
	return nd.get(j)
}

// items yields items from to to, 0 <= from and to < len, in order, a
// node at a time; each is valid until the list changes, which it must not
// while they are yielded.
func (l *list) items(from, to int) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if from > to {
			return
		}
		nd, j := l.find(from)
		k, left := l.curNode, to-from+1
		for {
			for end := min(nd.size(), j+left); j < end; j++ {
				if !yield(nd.get(j)) {
					return
				}
				left--
			}
			if left == 0 {
				return
			}
			k++
			nd, j = l.node(k), 0
		}
	}
}

// set replaces item i, 0 <= i < len.
func (l *list) set(i int, v []byte) {
	nd, j := l.find(i)
	if old := nd.get(j); len(old) == len(v) {
		copy(old, v)
		return
	}
	items := nodeItems(make([][]byte, 0, nd.size()), nd)
	items[j] = v
	l.splice(l.curNode, items)
}

// insert puts v before item i, 0 <= i <= len.
func (l *list) insert(i int, v []byte) {
	switch i {
	case 0:
		l.pushFront(v)
		return
	case l.n:
		l.pushBack(v)
		return
	}
	nd, j := l.find(i)
	k := l.curNode
	items := nodeItems(make([][]byte, 0, nd.size()+1), nd)
	items = slices.Insert(items, j, v)
	l.splice(k, items)
	l.n++
}

// splice replaces node k with nodes holding items, in order, taking in a
// neighbour that fits in one node with the short items next to it. Old
// nodes' buffers are not written to, so items may be slices of them.
func (l *list) splice(k int, items [][]byte) {
	from, to := k, k+1
	if from > 0 {
		if prev := l.node(from - 1); prev.fitsWith(items[:shortRun(items, false)]) {
			items = append(nodeItems(make([][]byte, 0, prev.size()+len(items)), prev), items...)
			from--
		}
	}
	if to < l.count {
		if next := l.node(to); next.fitsWith(items[len(items)-shortRun(items, true):]) {
			items = nodeItems(slices.Clip(items), next)
			to++
		}
	}
	nodes := make([]*listNode, 0, l.count+len(items)/listNodeItems+2)
	for x := range from {
		nodes = append(nodes, l.node(x))
	}
	nodes = packNodes(nodes, items)
	for x := to; x < l.count; x++ {
		nodes = append(nodes, l.node(x))
	}
	l.setNodes(nodes)
}

// setNodes makes nodes, in order, the list's nodes.
func (l *list) setNodes(nodes []*listNode) {
	size := 1
	for size < len(nodes) {
		size *= 2
	}
	ring := make([]*listNode, size)
	copy(ring, nodes)
	l.nodes, l.head, l.count = ring, 0, len(nodes)
	l.curNode = -1
}

// growNodes makes room in the ring for one more node.
func (l *list) growNodes() {
	if l.count < len(l.nodes) {
		return
	}
	ring := make([]*listNode, 2*len(l.nodes))
	for i := range l.count {
		ring[i] = l.node(i)
	}
	l.nodes, l.head = ring, 0
}

// shrinkNodes halves the ring while it is less than a quarter full.
func (l *list) shrinkNodes() {
	if len(l.nodes) <= 4 || 4*l.count >= len(l.nodes) {
		return
	}
	size := len(l.nodes)
	for size > 4 && 4*l.count < size {
		size /= 2
	}
	ring := make([]*listNode, size)
	for i := range l.count {
		ring[i] = l.node(i)
	}
	l.nodes, l.head = ring, 0
}

func (l *list) pushBack(v []byte) {
	l.curNode = -1
	l.n++
	var like *listNode
	if l.count > 0 {
		if like = l.node(l.count - 1); like.fits(v) {
			like.pushBack(v)
			return
		}
		like.seal()
	}
	l.growNodes()
	l.nodes[(l.head+l.count)&(len(l.nodes)-1)] = newListNode(v, false, like)
	l.count++
}

func (l *list) pushFront(v []byte) {
	l.curNode = -1
	l.n++
	var like *listNode
	if l.count > 0 {
		if like = l.node(0); like.fits(v) {
			like.pushFront(v)
			return
		}
		like.seal()
	}
	l.growNodes()
	l.head = (l.head - 1) & (len(l.nodes) - 1)
	l.nodes[l.head] = newListNode(v, true, like)
	l.count++
}

// push adds v at the head (left) or the tail.
func (l *list) push(v []byte, left bool) {
	if left {
		l.pushFront(v)
	} else {
		l.pushBack(v)
	}
}

// popFront removes and returns the first item, valid until the list next
// changes; the list must not be empty.
func (l *list) popFront() []byte {
	l.curNode = -1
	nd := l.node(0)
	v := nd.get(0)
	nd.takeFront()
	l.n--
	if nd.size() == 0 {
		l.nodes[l.head] = nil
		l.head = (l.head + 1) & (len(l.nodes) - 1)
		l.count--
		l.shrinkNodes()
		l.tidyEnds()
	}
	return v
}

// popBack removes and returns the last item, valid until the list next
// changes; the list must not be empty.
func (l *list) popBack() []byte {
	l.curNode = -1
	nd := l.node(l.count - 1)
	v := nd.get(nd.size() - 1)
	nd.takeBack()
	l.n--
	if nd.size() == 0 {
		l.nodes[(l.head+l.count-1)&(len(l.nodes)-1)] = nil
		l.count--
		l.shrinkNodes()
		l.tidyEnds()
	}
	return v
}

// pop removes and returns the item at the head (left) or the tail, valid
// until the list next changes; the list must not be empty.
func (l *list) pop(left bool) []byte {
	if left {
		return l.popFront()
	}
	return l.popBack()
}

// index returns the position of the first item equal to v, or -1.
func (l *list) index(v []byte) int {
	i := 0
	for it := range l.items(0, l.n-1) {
		if bytes.Equal(it, v) {
			return i
		}
		i++
	}
	return -1
}

// remove deletes up to count items equal to v (all if count is 0), from
// the tail if count is negative, and returns how many it deleted.
func (l *list) remove(v []byte, count int64) int {
	limit := count
	if limit < 0 {
		limit = -limit // math.MinInt64 stays negative: no limit, as in Redis
	}
	drop := make([]bool, l.n)
	removed := 0
	for x := range l.n {
		i := x
		if count < 0 {
			i = l.n - 1 - x
		}
		if (limit <= 0 || int64(removed) < limit) && bytes.Equal(l.at(i), v) {
			drop[i] = true
			removed++
		}
	}
	if removed == 0 {
		return 0
	}
	// Pack what is kept into new nodes; the old buffers are not written to.
	kept, i := newList(), 0
	for it := range l.items(0, l.n-1) {
		if !drop[i] {
			kept.pushBack(it)
		}
		i++
	}
	*l = *kept
	return removed
}

// trim drops left items from the head and right from the tail.
func (l *list) trim(left, right int) {
	for range l.dropNodes(left, true) {
		l.popFront()
	}
	for range l.dropNodes(right, false) {
		l.popBack()
	}
}

// dropNodes removes whole nodes from the head (or the tail) while they
// hold no more than count items all told, and returns how many of count
// are still to be removed.
func (l *list) dropNodes(count int, head bool) int {
	l.curNode = -1
	removed := false
	for l.count > 0 {
		k := l.head
		if !head {
			k = (l.head + l.count - 1) & (len(l.nodes) - 1)
		}
		size := l.nodes[k].size()
		if size > count {
			break
		}
		count -= size
		l.n -= size
		l.nodes[k] = nil
		if head {
			l.head = (l.head + 1) & (len(l.nodes) - 1)
		}
		l.count--
		removed = true
	}
	if removed {
		l.shrinkNodes()
		l.tidyEnds()
	}
	return count
}

// tidyEnds tidies the end nodes after a node was removed: one started
// with buffers sized like a full neighbour may now be the list's only node.
func (l *list) tidyEnds() {
	if l.count > 0 {
		l.node(0).tidy()
		l.node(l.count - 1).tidy()
	}
}

// clone returns a deep copy.
func (l *list) clone() *list {
	c := newList()
	for it := range l.items(0, l.n-1) {
		c.pushBack(it)
	}
	return c
}

// rewrite writes the RPUSH commands that rebuild the list under key.
func (l *list) rewrite(w *resp.Writer, key []byte) {
	args := make([][]byte, 0, 2+listRewriteBatch)
	for it := range l.items(0, l.n-1) {
		if len(args) == 0 {
			args = append(args, []byte("RPUSH"), key)
		}
		if args = append(args, it); len(args) == 2+listRewriteBatch {
			w.Command(args...)
			args = args[:0]
		}
	}
	if len(args) > 0 {
		w.Command(args...)
	}
}

// encoding is what OBJECT ENCODING reports: Redis 7.0's lists are
// quicklists whatever their size.
func (l *list) encoding() string { return "quicklist" }
