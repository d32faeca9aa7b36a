package kv

import (
	"bytes"
	"iter"

	"github.com/evloop/evloop/resp"
)

// list is a list value: a deque of items packed into nodes, as Redis's
// quicklist packs them into listpacks. A node keeps its items' bytes back
// to back in one buffer, with a 2-byte end offset each, so that an item
// costs its bytes and two more instead of a string of its own (16 bytes of
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

// listNode holds a run of items. Items are appended to a node's buffer
// only: a node made by pushes at the tail keeps its items in order, one
// made by pushes at the head keeps them in reverse (rev), and either is
// drained from both of its ends. An item longer than listNodeBytes is a
// node of its own, data being the item and ends nil.
type listNode struct {
	data []byte
	// ends[k] is where the k-th appended item ends in data; it begins
	// where the one before ends, or at 0.
	ends []uint16
	// first is how many items were taken from the front of the buffer (of
	// a node of one long item: 1 once it is taken); their bytes stay until
	// the node is repacked.
	first int
	rev   bool
}

// listNodeBytes is the most bytes of items a node packs (Redis's default
// list-max-listpack-size, -2, is 8 KiB) and listNodeItems the most items.
// With listNodeBytes at most 64 KiB, an end offset fits in 2 bytes.
const (
	listNodeBytes = 8 << 10
	listNodeItems = 1024
)

// listRewriteBatch is how many items one RPUSH of the log rewrite carries,
// as Redis's AOF_REWRITE_ITEMS_PER_CMD.
const listRewriteBatch = 64

func newList() *list { return &list{nodes: make([]*listNode, 1), curNode: -1} }

func (l *list) len() int { return l.n }

// size is the node's number of items.
func (nd *listNode) size() int {
	if nd.ends == nil {
		return 1 - nd.first
	}
	return len(nd.ends) - nd.first
}

// item returns the k-th item appended, capped so that appending to it
// cannot write into the node.
func (nd *listNode) item(k int) []byte {
	if nd.ends == nil {
		return nd.data[:len(nd.data):len(nd.data)]
	}
	start := 0
	if k > 0 {
		start = int(nd.ends[k-1])
	}
	end := int(nd.ends[k])
	return nd.data[start:end:end]
}

// get returns item j of the node, 0 <= j < size, in list order.
func (nd *listNode) get(j int) []byte {
	if nd.rev {
		return nd.item(len(nd.ends) - 1 - j)
	}
	return nd.item(nd.first + j)
}

// fits reports whether v can be appended to the node.
func (nd *listNode) fits(v []byte) bool {
	return nd.ends != nil && len(nd.ends) < listNodeItems && len(nd.data)+len(v) <= listNodeBytes
}

func (nd *listNode) add(v []byte) {
	nd.data = append(nd.data, v...)
	nd.ends = append(nd.ends, uint16(len(nd.data)))
}

// newListNode returns a node holding v alone: packed, unless v is too long
// to share a node. A packed node's buffers are made the size of like's,
// the node it is started next to, if any: a list's nodes tend to fill
// alike, and the buffers then need not grow step by step.
func newListNode(v []byte, rev bool, like *listNode) *listNode {
	if len(v) > listNodeBytes {
		return &listNode{data: bytes.Clone(v), rev: rev}
	}
	nd := &listNode{rev: rev}
	if like != nil && like.ends != nil {
		nd.data = make([]byte, 0, max(len(like.data), len(v)))
		nd.ends = make([]uint16, 0, len(like.ends))
	}
	nd.add(v)
	return nd
}

// takeFirst removes the item at the start of the buffer and takeLast the
// one at its end; the node must hold one. Neither writes over the item's
// bytes.
func (nd *listNode) takeFirst() {
	if nd.ends == nil {
		nd.first = 1
		return
	}
	nd.first++
	// Compact once the items taken are as many as those left: each item is
	// copied at most once per item taken.
	if nd.first >= 16 && 2*nd.first >= len(nd.ends) && nd.size() > 0 {
		nd.repack()
	}
}

func (nd *listNode) takeLast() {
	if nd.ends == nil {
		nd.first = 1
		return
	}
	k := len(nd.ends) - 1
	start := 0
	if k > 0 {
		start = int(nd.ends[k-1])
	}
	nd.data, nd.ends = nd.data[:start], nd.ends[:k]
	if cap(nd.data) > 256 && 4*len(nd.data) < cap(nd.data) && nd.size() > 0 {
		nd.repack()
	}
}

// repack copies the node's items to buffers of their size, dropping the
// bytes of items taken from the front. The old buffers are left as they
// were, so that slices of them stay valid.
func (nd *listNode) repack() {
	live := nd.data[nd.itemStart(nd.first):]
	data := bytes.Clone(live)
	base := nd.itemStart(nd.first)
	ends := make([]uint16, 0, nd.size())
	for _, e := range nd.ends[nd.first:] {
		ends = append(ends, e-uint16(base))
	}
	nd.data, nd.ends, nd.first = data, ends, 0
}

// itemStart is where the k-th item appended begins in data.
func (nd *listNode) itemStart(k int) int {
	if k == 0 {
		return 0
	}
	return int(nd.ends[k-1])
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
	k := l.curNode
	items := make([][]byte, 0, nd.size())
	for x := range nd.size() {
		if x == j {
			items = append(items, v)
		} else {
			items = append(items, nd.get(x))
		}
	}
	l.splice(k, items)
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
	items := make([][]byte, 0, nd.size()+1)
	for x := range nd.size() {
		if x == j {
			items = append(items, v)
		}
		items = append(items, nd.get(x))
	}
	l.splice(k, items)
	l.n++
}

// splice replaces node k with the items packed into new nodes, in order.
// The old node's buffers are not written to, so items may be slices of
// them.
func (l *list) splice(k int, items [][]byte) {
	var repl []*listNode
	for _, v := range items {
		if len(repl) > 0 && repl[len(repl)-1].fits(v) {
			repl[len(repl)-1].add(v)
		} else {
			repl = append(repl, newListNode(v, false, nil))
		}
	}
	nodes := make([]*listNode, 0, l.count-1+len(repl))
	for x := range l.count {
		if x == k {
			nodes = append(nodes, repl...)
		} else {
			nodes = append(nodes, l.node(x))
		}
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
		if like = l.node(l.count - 1); !like.rev && like.fits(v) {
			like.add(v)
			return
		}
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
		if like = l.node(0); like.rev && like.fits(v) {
			like.add(v)
			return
		}
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
	if nd.rev {
		nd.takeLast()
	} else {
		nd.takeFirst()
	}
	l.n--
	if nd.size() == 0 {
		l.nodes[l.head] = nil
		l.head = (l.head + 1) & (len(l.nodes) - 1)
		l.count--
		l.shrinkNodes()
	}
	return v
}

// popBack removes and returns the last item, valid until the list next
// changes; the list must not be empty.
func (l *list) popBack() []byte {
	l.curNode = -1
	nd := l.node(l.count - 1)
	v := nd.get(nd.size() - 1)
	if nd.rev {
		nd.takeFirst()
	} else {
		nd.takeLast()
	}
	l.n--
	if nd.size() == 0 {
		l.nodes[(l.head+l.count-1)&(len(l.nodes)-1)] = nil
		l.count--
		l.shrinkNodes()
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
	}
	l.shrinkNodes()
	return count
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
