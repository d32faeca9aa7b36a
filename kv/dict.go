package kv

import "math/rand/v2"

// dict is a hash table of string keys whose entries sit densely in one
// slice: a map from key to position, and the slots themselves. Deleting
// moves the last slot into the hole. The dense slice gives what Redis's
// dict gives with its reverse-binary cursor: a random entry in O(1) (SPOP,
// RANDOMKEY, expiry sampling), and a cursor that survives changes — a scan
// walks the slots from the end down, and a delete only ever moves a slot
// from the end to a lower position, so an entry present for a whole scan
// is never skipped (it may be seen twice).
type dict[V any] struct {
	index map[string]int32
	slots []dictSlot[V]
}

type dictSlot[V any] struct {
	key string
	val V
}

func newDict[V any](hint int) *dict[V] {
	return &dict[V]{index: make(map[string]int32, hint)}
}

func (d *dict[V]) len() int { return len(d.slots) }

// get returns key's value, or nil. The pointer is valid until the next
// insert or delete.
func (d *dict[V]) get(key []byte) *V {
	if i, ok := d.index[string(key)]; ok {
		return &d.slots[i].val
	}
	return nil
}

// put returns key's value, adding a zero one if key is absent, and reports
// whether it added it. The pointer is valid until the next put or delete.
func (d *dict[V]) put(key []byte) (v *V, added bool) {
	if i, ok := d.index[string(key)]; ok {
		return &d.slots[i].val, false
	}
	k := string(key)
	d.index[k] = int32(len(d.slots))
	var zero V
	d.slots = append(d.slots, dictSlot[V]{key: k, val: zero})
	return &d.slots[len(d.slots)-1].val, true
}

// delete removes key and reports whether it was there.
func (d *dict[V]) delete(key []byte) bool {
	i, ok := d.index[string(key)]
	if !ok {
		return false
	}
	d.deleteAt(int(i))
	return true
}

// deleteAt removes the entry at position i.
func (d *dict[V]) deleteAt(i int) {
	last := len(d.slots) - 1
	delete(d.index, d.slots[i].key)
	if i != last {
		d.slots[i] = d.slots[last]
		d.index[d.slots[i].key] = int32(i)
	}
	d.slots[last] = dictSlot[V]{}
	d.slots = d.slots[:last]
	if cap(d.slots) > 64 && len(d.slots) < cap(d.slots)/4 {
		d.slots = append([]dictSlot[V](nil), d.slots...)
	}
}

// at returns the entry at position i.
func (d *dict[V]) at(i int) (string, *V) { return d.slots[i].key, &d.slots[i].val }

// random returns the position of a random entry; the dict must not be
// empty.
func (d *dict[V]) random() int { return rand.IntN(len(d.slots)) }

// scan visits about count slots from cursor on and returns the cursor to
// continue from, 0 when the walk is complete. Cursor 0 starts a walk.
func (d *dict[V]) scan(cursor uint64, count int, fn func(key string, v *V)) uint64 {
	pos := len(d.slots) - 1
	if cursor != 0 && cursor-1 < uint64(pos) {
		pos = int(cursor - 1)
	}
	for ; pos >= 0 && count > 0; pos, count = pos-1, count-1 {
		fn(d.slots[pos].key, &d.slots[pos].val)
	}
	if pos < 0 {
		return 0
	}
	return uint64(pos) + 1
}

// clear removes every entry.
func (d *dict[V]) clear() {
	d.index = make(map[string]int32)
	d.slots = nil
}
