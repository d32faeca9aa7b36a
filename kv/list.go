package kv

import "github.com/evloop/evloop/resp"

// list is a list value: a deque of strings, O(1) at both ends and by
// index. A list of up to listBlock items is one ring buffer whose size is a
// power of two; a longer one is a ring of blocks of listBlock items each,
// so that it grows and shrinks a block at a time: growing a flat ring of a
// million items would copy 16 MB in one step, and allocating it while the
// collector runs charges the loop for marking as much. Owned by the loop.
type list struct {
	n int

	// While blocks is nil: the items are ring[head:], then ring[:...].
	ring []string
	head int

	// Otherwise: the items start at index off of blocks[first] and run on
	// through the blocks that follow it, blocks being a ring of block
	// pointers whose size is a power of two. Only blocks holding items are
	// allocated.
	blocks []*listBlockItems
	first  int
	off    int
}

// listBlock is the size of a long list's blocks (16 KiB) and the most items
// a flat ring holds. A list of blocks becomes a flat ring again when it is
// down to a quarter of a block.
const listBlock = 1024

type listBlockItems [listBlock]string

// minListCap is the ring a new list starts with; a ring is not shrunk
// below listShrinkFloor, so that a queue that fills and drains does not
// reallocate each time.
const (
	minListCap      = 8
	listShrinkFloor = 64
)

// listRewriteBatch is how many items one RPUSH of the log rewrite carries,
// as Redis's AOF_REWRITE_ITEMS_PER_CMD.
const listRewriteBatch = 64

func newList() *list { return &list{ring: make([]string, minListCap)} }

func (l *list) len() int { return l.n }

// ref returns the place of item i, 0 <= i < len (or i == len when the
// place is allocated).
func (l *list) ref(i int) *string {
	if l.blocks == nil {
		return &l.ring[(l.head+i)&(len(l.ring)-1)]
	}
	p := l.off + i
	return &l.blocks[(l.first+p/listBlock)&(len(l.blocks)-1)][p%listBlock]
}

// at returns item i, 0 <= i < len.
func (l *list) at(i int) string { return *l.ref(i) }

// set replaces item i, 0 <= i < len.
func (l *list) set(i int, v string) { *l.ref(i) = v }

// usedBlocks is how many blocks hold items.
func (l *list) usedBlocks() int { return (l.off + l.n + listBlock - 1) / listBlock }

// resize moves the items of a flat list, or of a list of blocks that is
// down to a quarter of a block, to a flat ring of size capacity, a power
// of two of at least len.
func (l *list) resize(capacity int) {
	nb := make([]string, capacity)
	for i := range l.n {
		nb[i] = *l.ref(i)
	}
	l.ring, l.head = nb, 0
	l.blocks, l.first, l.off = nil, 0, 0
}

// toBlocks turns a full flat ring of listBlock items into one block.
func (l *list) toBlocks() {
	b := new(listBlockItems)
	for i := range l.n {
		b[i] = *l.ref(i)
	}
	l.blocks = make([]*listBlockItems, 4)
	l.blocks[0], l.first, l.off = b, 0, 0
	l.ring, l.head = nil, 0
}

// growBlocks makes room in the ring of blocks for one more block.
func (l *list) growBlocks() {
	if l.usedBlocks() < len(l.blocks) {
		return
	}
	nb := make([]*listBlockItems, 2*len(l.blocks))
	for i := range len(l.blocks) {
		nb[i] = l.blocks[(l.first+i)&(len(l.blocks)-1)]
	}
	l.blocks, l.first = nb, 0
}

// grow makes room for one more item at either end of a flat ring, turning
// a full one of listBlock items into blocks.
func (l *list) grow() {
	if l.blocks != nil || l.n < len(l.ring) {
		return
	}
	if len(l.ring) < listBlock {
		l.resize(max(2*len(l.ring), minListCap))
		return
	}
	l.toBlocks()
}

// shrink halves a flat ring while it is less than a quarter full, and
// turns blocks back into a flat ring at a quarter of a block.
func (l *list) shrink() {
	if l.blocks != nil {
		if l.n <= listBlock/4 {
			l.resize(listBlock / 2)
		}
		return
	}
	if len(l.ring) > listShrinkFloor && l.n < len(l.ring)/4 {
		c := len(l.ring)
		for c > listShrinkFloor && l.n < c/4 {
			c /= 2
		}
		l.resize(c)
	}
}

func (l *list) pushBack(v string) {
	l.grow()
	if l.blocks != nil && (l.off+l.n)%listBlock == 0 {
		l.growBlocks()
		l.blocks[(l.first+l.usedBlocks())&(len(l.blocks)-1)] = new(listBlockItems)
	}
	*l.ref(l.n) = v
	l.n++
}

func (l *list) pushFront(v string) {
	l.grow()
	if l.blocks == nil {
		l.head = (l.head - 1) & (len(l.ring) - 1)
		l.ring[l.head] = v
		l.n++
		return
	}
	if l.off == 0 {
		l.growBlocks()
		l.first = (l.first - 1) & (len(l.blocks) - 1)
		l.blocks[l.first] = new(listBlockItems)
		l.off = listBlock
	}
	l.off--
	l.n++
	*l.ref(0) = v
}

// push adds v at the head (left) or the tail.
func (l *list) push(v string, left bool) {
	if left {
		l.pushFront(v)
	} else {
		l.pushBack(v)
	}
}

// popFront removes and returns the first item; the list must not be empty.
func (l *list) popFront() string {
	r := l.ref(0)
	v := *r
	*r = ""
	l.n--
	if l.blocks == nil {
		l.head = (l.head + 1) & (len(l.ring) - 1)
	} else if l.off++; l.off == listBlock {
		l.blocks[l.first] = nil
		l.first = (l.first + 1) & (len(l.blocks) - 1)
		l.off = 0
	}
	l.shrink()
	return v
}

// popBack removes and returns the last item; the list must not be empty.
func (l *list) popBack() string {
	r := l.ref(l.n - 1)
	v := *r
	*r = ""
	l.n--
	if l.blocks != nil && (l.off+l.n)%listBlock == 0 {
		l.blocks[(l.first+l.usedBlocks())&(len(l.blocks)-1)] = nil
	}
	l.shrink()
	return v
}

// pop removes and returns the item at the head (left) or the tail; the
// list must not be empty.
func (l *list) pop(left bool) string {
	if left {
		return l.popFront()
	}
	return l.popBack()
}

// insert puts v before item i, 0 <= i <= len, moving the shorter side.
func (l *list) insert(i int, v string) {
	if i <= l.n/2 {
		l.pushFront(v)
		for j := 0; j < i; j++ {
			l.set(j, l.at(j+1))
		}
	} else {
		l.pushBack(v)
		for j := l.n - 1; j > i; j-- {
			l.set(j, l.at(j-1))
		}
	}
	l.set(i, v)
}

// index returns the position of the first item equal to v, or -1.
func (l *list) index(v string) int {
	for i := 0; i < l.n; i++ {
		if l.at(i) == v {
			return i
		}
	}
	return -1
}

// remove deletes up to count items equal to v (all if count is 0), from
// the tail if count is negative, and returns how many it deleted.
func (l *list) remove(v string, count int64) int {
	limit := count
	if limit < 0 {
		limit = -limit // math.MinInt64 stays negative: no limit, as in Redis
	}
	removed := 0
	keep := make([]bool, l.n)
	if count >= 0 {
		for i := 0; i < l.n; i++ {
			if l.at(i) == v && (limit == 0 || int64(removed) < limit) {
				removed++
			} else {
				keep[i] = true
			}
		}
	} else {
		for i := l.n - 1; i >= 0; i-- {
			if l.at(i) == v && (limit < 0 || int64(removed) < limit) {
				removed++
			} else {
				keep[i] = true
			}
		}
	}
	if removed == 0 {
		return 0
	}
	w := 0
	for i := 0; i < l.n; i++ {
		if keep[i] {
			l.set(w, l.at(i))
			w++
		}
	}
	for l.n > w {
		l.popBack()
	}
	return removed
}

// trim drops left items from the head and right from the tail.
func (l *list) trim(left, right int) {
	for range left {
		l.popFront()
	}
	for range right {
		l.popBack()
	}
}

// clone returns a deep copy.
func (l *list) clone() *list {
	c := newList()
	for i := range l.n {
		c.pushBack(l.at(i))
	}
	return c
}

// rewrite writes the RPUSH commands that rebuild the list under key.
func (l *list) rewrite(w *resp.Writer, key []byte) {
	args := make([][]byte, 0, 2+listRewriteBatch)
	for i := 0; i < l.n; {
		args = append(args[:0], []byte("RPUSH"), key)
		for ; i < l.n && len(args) < 2+listRewriteBatch; i++ {
			args = append(args, []byte(l.at(i)))
		}
		w.Command(args...)
	}
}

// encoding is what OBJECT ENCODING reports: Redis 7.0's lists are
// quicklists whatever their size.
func (l *list) encoding() string { return "quicklist" }
