// Package timer keeps deadlines in a 4-ary min-heap: add, cancel and
// reschedule in O(log n), the earliest deadline in O(1).
//
// It is plain data: no goroutines, no clock. Deadlines are int64 instants on
// whatever monotonic scale the caller uses (the event loop uses nanoseconds
// since it started), and the caller passes "now" when it asks what is due.
//
// A Queue is not safe for concurrent use; the event loop owns its Queue.
//
// Timers live in a slab of slots reused through a free list, so a program
// that keeps adding and cancelling timers holds memory for the most timers it
// ever had live at once, not for every timer it ever made, and adding a timer
// allocates only when the slab grows.
package timer

// ID names a timer in its Queue. The zero ID names no timer. An ID stays
// valid until its timer is removed; after that the Queue's methods report it
// as not found, even once its slot holds another timer: a slot's 32-bit
// generation counts its timers, and a slot whose generation would wrap
// around is retired rather than reused (a slot's worth of memory per 2^32
// timers made in it).
type ID uint64

func makeID(slot int32, gen uint32) ID { return ID(uint64(gen)<<32 | uint64(slot+1)) }

func (id ID) slot() int32 { return int32(uint32(id)) - 1 }
func (id ID) gen() uint32 { return uint32(id >> 32) }

// Queue is a set of timers ordered by deadline; timers with the same deadline
// are ordered by when they were added or last rescheduled.
type Queue[T any] struct {
	heap  []entry
	slots []slot[T]
	free  int32 // first free slot, or -1
	seq   uint64
}

// entry is a heap element. It carries the sort key itself, so that sifting
// compares without touching the slots.
type entry struct {
	when int64
	seq  uint64
	slot int32
}

type slot[T any] struct {
	val  T
	pos  int32 // index in heap while live; next free slot while free
	gen  uint32
	live bool
}

func (a *entry) before(b *entry) bool {
	return a.when < b.when || (a.when == b.when && a.seq < b.seq)
}

// Len returns the number of live timers.
func (q *Queue[T]) Len() int { return len(q.heap) }

// Add adds a timer due at when, carrying v, and returns its ID.
func (q *Queue[T]) Add(when int64, v T) ID {
	if q.slots == nil {
		q.free = -1
	}
	var s int32
	if q.free >= 0 {
		s = q.free
		q.free = q.slots[s].pos
	} else {
		q.slots = append(q.slots, slot[T]{})
		s = int32(len(q.slots) - 1)
	}
	sl := &q.slots[s]
	sl.val = v
	sl.live = true
	sl.pos = int32(len(q.heap))
	q.seq++
	q.heap = append(q.heap, entry{when: when, seq: q.seq, slot: s})
	q.up(int(sl.pos))
	return makeID(s, sl.gen)
}

func (q *Queue[T]) lookup(id ID) *slot[T] {
	s := id.slot()
	if s < 0 || int(s) >= len(q.slots) {
		return nil
	}
	sl := &q.slots[s]
	if !sl.live || sl.gen != id.gen() {
		return nil
	}
	return sl
}

// Get returns the value of timer id and whether it is live.
func (q *Queue[T]) Get(id ID) (T, bool) {
	sl := q.lookup(id)
	if sl == nil {
		var zero T
		return zero, false
	}
	return sl.val, true
}

// When returns the deadline of timer id and whether it is live.
func (q *Queue[T]) When(id ID) (int64, bool) {
	sl := q.lookup(id)
	if sl == nil {
		return 0, false
	}
	return q.heap[sl.pos].when, true
}

// Remove cancels timer id and returns its value. It reports false, and
// changes nothing, if id is not live.
func (q *Queue[T]) Remove(id ID) (T, bool) {
	sl := q.lookup(id)
	var zero T
	if sl == nil {
		return zero, false
	}
	v := sl.val
	i := int(sl.pos)
	last := len(q.heap) - 1
	if i != last {
		q.move(i, q.heap[last])
	}
	q.heap = q.heap[:last]
	if i != last {
		if !q.up(i) {
			q.down(i)
		}
	}
	s := id.slot()
	// A slot whose generation wraps around is retired, not freed: a new
	// timer in it would answer to the IDs of its first ones.
	gen := sl.gen + 1
	*sl = slot[T]{pos: q.free, gen: gen}
	if gen != 0 {
		q.free = s
	}
	return v, true
}

// Reset moves timer id to deadline when, after every other timer due at the
// same instant. It reports false if id is not live.
func (q *Queue[T]) Reset(id ID, when int64) bool {
	sl := q.lookup(id)
	if sl == nil {
		return false
	}
	i := int(sl.pos)
	q.seq++
	q.heap[i].when, q.heap[i].seq = when, q.seq
	if !q.up(i) {
		q.down(i)
	}
	return true
}

// Peek returns the timer with the earliest deadline, without removing it.
func (q *Queue[T]) Peek() (id ID, when int64, ok bool) {
	if len(q.heap) == 0 {
		return 0, 0, false
	}
	e := &q.heap[0]
	return makeID(e.slot, q.slots[e.slot].gen), e.when, true
}

// move puts e at heap index i and records the position in its slot.
func (q *Queue[T]) move(i int, e entry) {
	q.heap[i] = e
	q.slots[e.slot].pos = int32(i)
}

// up sifts the entry at i toward the root and reports whether it moved.
func (q *Queue[T]) up(i int) bool {
	e := q.heap[i]
	start := i
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&q.heap[p]) {
			break
		}
		q.move(i, q.heap[p])
		i = p
	}
	q.move(i, e)
	return i != start
}

// down sifts the entry at i toward the leaves.
func (q *Queue[T]) down(i int) {
	n := len(q.heap)
	e := q.heap[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if q.heap[k].before(&q.heap[m]) {
				m = k
			}
		}
		if !q.heap[m].before(&e) {
			break
		}
		q.move(i, q.heap[m])
		i = m
	}
	q.move(i, e)
}
