package kv

import "github.com/evloop/evloop/resp"

// list is a list value: a deque of strings in a ring buffer whose size is a
// power of two, so that pushes and pops at either end and access by index
// are O(1). It shrinks when mostly empty. Owned by the loop.
type list struct {
	buf  []string
	head int // index in buf of the first item
	n    int
}

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

func newList() *list { return &list{buf: make([]string, minListCap)} }

func (l *list) len() int { return l.n }

// slot returns the index in buf of item i, 0 <= i < len.
func (l *list) slot(i int) int { return (l.head + i) & (len(l.buf) - 1) }

// at returns item i, 0 <= i < len.
func (l *list) at(i int) string { return l.buf[l.slot(i)] }

// set replaces item i, 0 <= i < len.
func (l *list) set(i int, v string) { l.buf[l.slot(i)] = v }

// resize moves the items to a ring of size capacity, a power of two of at
// least len.
func (l *list) resize(capacity int) {
	nb := make([]string, capacity)
	if l.n > 0 {
		end := l.head + l.n
		if end <= len(l.buf) {
			copy(nb, l.buf[l.head:end])
		} else {
			k := copy(nb, l.buf[l.head:])
			copy(nb[k:], l.buf[:end-len(l.buf)])
		}
	}
	l.buf, l.head = nb, 0
}

func (l *list) grow() {
	if l.n == len(l.buf) {
		l.resize(max(2*len(l.buf), minListCap))
	}
}

// shrink halves the ring while it is less than a quarter full.
func (l *list) shrink() {
	if len(l.buf) > listShrinkFloor && l.n < len(l.buf)/4 {
		c := len(l.buf)
		for c > listShrinkFloor && l.n < c/4 {
			c /= 2
		}
		l.resize(c)
	}
}

func (l *list) pushBack(v string) {
	l.grow()
	l.buf[l.slot(l.n)] = v
	l.n++
}

func (l *list) pushFront(v string) {
	l.grow()
	l.head = (l.head - 1) & (len(l.buf) - 1)
	l.buf[l.head] = v
	l.n++
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
	v := l.buf[l.head]
	l.buf[l.head] = ""
	l.head = (l.head + 1) & (len(l.buf) - 1)
	l.n--
	l.shrink()
	return v
}

// popBack removes and returns the last item; the list must not be empty.
func (l *list) popBack() string {
	i := l.slot(l.n - 1)
	v := l.buf[i]
	l.buf[i] = ""
	l.n--
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
	for i := w; i < l.n; i++ {
		l.set(i, "")
	}
	l.n = w
	l.shrink()
	return removed
}

// trim drops left items from the head and right from the tail.
func (l *list) trim(left, right int) {
	for i := 0; i < left; i++ {
		l.buf[l.slot(i)] = ""
	}
	for i := l.n - right; i < l.n; i++ {
		l.buf[l.slot(i)] = ""
	}
	l.head = l.slot(left)
	l.n -= left + right
	l.shrink()
}

// clone returns a deep copy.
func (l *list) clone() *list {
	c := &list{buf: make([]string, len(l.buf)), n: l.n}
	for i := 0; i < l.n; i++ {
		c.buf[i] = l.at(i)
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
