package kv

import (
	"hash/maphash"
	"math/rand/v2"
	"unsafe"
)

// dict is a hash table of string keys whose entries sit densely in
// numbered slots, with an open-addressing index over them. Deleting moves
// the last slot into the hole. The dense slots give what Redis's dict gives
// with its reverse-binary cursor: a random entry in O(1) (SPOP, RANDOMKEY,
// expiry sampling), and a cursor that survives changes — a scan walks the
// slots from the end down, and a delete only ever moves a slot from the end
// to a lower position, so an entry present for a whole scan is never
// skipped (it may be seen twice).
//
// It is built for memory: a Go map of a million string keys costs about 40
// bytes a key besides the keys; the index here costs 8 to 16. The slots
// live in chunks, so growing never copies more than one chunk, and a dict
// of up to dictLinear entries has no index at all: it is searched in
// order, as Redis's listpacks are.
type dict[V any] struct {
	// index is nil while the dict is small. Otherwise each element is 0
	// (empty) or an entry's hash in the high 32 bits and its slot number
	// plus one in the low 32; an entry's home is the low bits of its hash.
	// Collisions probe linearly, and deletion shifts entries back, so
	// there are no tombstones.
	index []uint64
	// chunks holds the slots: slot i is chunks[i>>dictChunkBits][i&mask].
	// The first chunk grows by appending until it is full size; the later
	// ones are allocated full.
	chunks [][]dictSlot[V]
	n      int
}

type dictSlot[V any] struct {
	key string
	val V
}

const (
	dictLinear    = 8  // entries searched in order before there is an index
	dictChunkBits = 10 // slots per chunk: 1024
	dictChunk     = 1 << dictChunkBits
	dictMinIndex  = 16 // smallest index, in elements
)

var dictSeed = maphash.MakeSeed()

func dictHash(key []byte) uint32 { return uint32(maphash.Bytes(dictSeed, key) >> 32) }

func dictHashString(key string) uint32 { return uint32(maphash.String(dictSeed, key) >> 32) }

func newDict[V any](hint int) *dict[V] {
	d := &dict[V]{}
	if hint > dictLinear {
		d.rebuild(indexSize(hint))
	}
	return d
}

// indexSize returns the index length that holds n entries at most 3/4
// full.
func indexSize(n int) int {
	size := dictMinIndex
	for size*3/4 < n {
		size *= 2
	}
	return size
}

func (d *dict[V]) len() int { return d.n }

func (d *dict[V]) slot(i int) *dictSlot[V] {
	return &d.chunks[i>>dictChunkBits][i&(dictChunk-1)]
}

// find returns key's slot number and, when there is an index, the index
// position that names it; slot -1 if key is absent.
func (d *dict[V]) find(key []byte) (slot, pos int) {
	if d.index == nil {
		return d.findHashed(key, 0)
	}
	return d.findHashed(key, dictHash(key))
}

// findHashed is find for a key whose hash, h, the caller has already
// computed (dictHash; any value while the dict has no index).
func (d *dict[V]) findHashed(key []byte, h uint32) (slot, pos int) {
	if d.index == nil {
		for i := range d.n {
			if d.slot(i).key == string(key) {
				return i, -1
			}
		}
		return -1, -1
	}
	mask := len(d.index) - 1
	for p := int(h) & mask; ; p = (p + 1) & mask {
		e := d.index[p]
		if e == 0 {
			return -1, -1
		}
		if uint32(e>>32) == h {
			i := int(uint32(e)) - 1
			if d.slot(i).key == string(key) {
				return i, p
			}
		}
	}
}

// get returns key's value, or nil. The pointer is valid until the next
// insert or delete.
func (d *dict[V]) get(key []byte) *V {
	if i, _ := d.find(key); i >= 0 {
		return &d.slot(i).val
	}
	return nil
}

// put returns key's value, adding a zero one if key is absent, and reports
// whether it added it. The pointer is valid until the next put or delete.
func (d *dict[V]) put(key []byte) (v *V, added bool) {
	if i, _ := d.find(key); i >= 0 {
		return &d.slot(i).val, false
	}
	return d.add(string(key)), true
}

// putShared is put for a key the dict keeps as it is, not a copy: the
// string under which another dict holds the same key, so that the two
// share its bytes.
func (d *dict[V]) putShared(key string) (v *V, added bool) {
	if i, _ := d.find(stringBytes(key)); i >= 0 {
		return &d.slot(i).val, false
	}
	return d.add(key), true
}

// keyOf returns the string under which the dict holds key, which must be
// present.
func (d *dict[V]) keyOf(key []byte) string {
	i, _ := d.find(key)
	return d.slot(i).key
}

// add adds key, which must be absent, with a zero value and returns the
// value. The dict keeps key itself, not a copy. The pointer is valid until
// the next put or delete.
func (d *dict[V]) add(key string) *V {
	i := d.n
	c := i >> dictChunkBits
	if c == len(d.chunks) {
		size := dictChunk
		if c == 0 {
			size = 0
		}
		d.chunks = append(d.chunks, make([]dictSlot[V], size))
	}
	if c == 0 && i == len(d.chunks[0]) {
		// The first chunk grows as a slice does, up to full size.
		d.chunks[0] = append(d.chunks[0], dictSlot[V]{})
		d.chunks[0] = d.chunks[0][:cap(d.chunks[0])]
		if len(d.chunks[0]) > dictChunk {
			d.chunks[0] = d.chunks[0][:dictChunk:dictChunk]
		}
	}
	s := d.slot(i)
	s.key = key
	d.n++
	switch {
	case d.index != nil:
		if d.n > len(d.index)*3/4 {
			d.rebuild(len(d.index) * 2)
		}
		d.insert(dictHashString(key), i)
	case d.n > dictLinear:
		d.rebuild(indexSize(d.n))
	}
	return &s.val
}

// insert adds slot i, whose key hashes to h, to the index.
func (d *dict[V]) insert(h uint32, i int) {
	mask := len(d.index) - 1
	p := int(h) & mask
	for d.index[p] != 0 {
		p = (p + 1) & mask
	}
	d.index[p] = uint64(h)<<32 | uint64(i+1)
}

// rebuild replaces the index with one of size elements (none if size is
// 0). The entries of the index there was are moved with the hashes they
// hold, so that no key is read or hashed again: shrinking the index of a
// million keys, a quarter of them left, took a deletion 20 to 80 ms on the
// machine of BENCHMARKS.md, about as long as the slow expiry cycle, where
// reading the old index takes a few. Without an index, every key is
// hashed. A slot the old index lacks (the one add has just filled) is
// for the caller to insert.
func (d *dict[V]) rebuild(size int) {
	old := d.index
	if size == 0 {
		d.index = nil
		return
	}
	d.index = make([]uint64, size)
	if old != nil {
		for _, e := range old {
			if e != 0 {
				d.insert(uint32(e>>32), int(uint32(e))-1)
			}
		}
		return
	}
	for i := range d.n {
		d.insert(dictHashString(d.slot(i).key), i)
	}
}

// delete removes key and reports whether it was there.
func (d *dict[V]) delete(key []byte) bool {
	_, ok := d.take(key)
	return ok
}

// take removes key and returns its value, if it was there.
func (d *dict[V]) take(key []byte) (v V, ok bool) {
	i, pos := d.find(key)
	if i < 0 {
		return v, false
	}
	v = d.slot(i).val
	d.remove(i, pos)
	return v, true
}

// deleteAt removes the entry at position i.
func (d *dict[V]) deleteAt(i int) {
	pos := -1
	if d.index != nil {
		pos = d.indexOf(dictHashString(d.slot(i).key), i)
	}
	d.remove(i, pos)
}

// deleteAtHashed is deleteAt for an entry whose key's hash, h, the caller
// has already computed.
func (d *dict[V]) deleteAtHashed(i int, h uint32) {
	pos := -1
	if d.index != nil {
		pos = d.indexOf(h, i)
	}
	d.remove(i, pos)
}

// indexOf returns the index position naming slot i, whose key hashes to
// h.
func (d *dict[V]) indexOf(h uint32, i int) int {
	mask := len(d.index) - 1
	want := uint64(h)<<32 | uint64(i+1)
	p := int(h) & mask
	for d.index[p] != want {
		p = (p + 1) & mask
	}
	return p
}

// remove deletes slot i, named by index position pos, moving the last slot
// into its place.
func (d *dict[V]) remove(i, pos int) {
	if d.index != nil {
		d.unindex(pos)
	}
	last := d.n - 1
	if i != last {
		ls := d.slot(last)
		if d.index != nil {
			p := d.indexOf(dictHashString(ls.key), last)
			d.index[p] = d.index[p]&^(1<<32-1) | uint64(i+1)
		}
		*d.slot(i) = *ls
	}
	*d.slot(last) = dictSlot[V]{}
	d.n--
	d.shrink()
}

// unindex empties index position pos and shifts back the entries after it
// that would otherwise no longer be found.
func (d *dict[V]) unindex(pos int) {
	mask := len(d.index) - 1
	hole := pos
	for p := (pos + 1) & mask; d.index[p] != 0; p = (p + 1) & mask {
		home := int(uint32(d.index[p]>>32)) & mask
		// The entry at p may fill the hole if its home is not in the
		// cyclic range (hole, p].
		if (p-home)&mask >= (p-hole)&mask {
			d.index[hole] = d.index[p]
			hole = p
		}
	}
	d.index[hole] = 0
}

// shrink gives memory back when the dict has become much smaller.
func (d *dict[V]) shrink() {
	switch {
	case d.index == nil:
	case d.n <= dictLinear/2:
		d.index = nil
	case len(d.index) > dictMinIndex && d.n < len(d.index)/8:
		d.rebuild(indexSize(d.n))
	}
	// Keep the chunks in use, and one more when the slots in use come
	// within half a chunk of it, so adding and deleting at a boundary
	// does not allocate every time.
	if keep := (d.n + dictChunk/2 + dictChunk - 1) >> dictChunkBits; keep < len(d.chunks) {
		clear(d.chunks[keep:])
		d.chunks = d.chunks[:keep]
	}
	if len(d.chunks) == 1 && cap(d.chunks[0]) > 64 && d.n < cap(d.chunks[0])/4 {
		d.chunks[0] = append([]dictSlot[V](nil), d.chunks[0][:d.n]...)
	}
	if d.n == 0 {
		d.chunks = nil
	}
}

// at returns the entry at position i.
func (d *dict[V]) at(i int) (string, *V) {
	s := d.slot(i)
	return s.key, &s.val
}

// random returns the position of a random entry; the dict must not be
// empty.
func (d *dict[V]) random() int { return rand.IntN(d.n) }

// scan visits about count slots from cursor on and returns the cursor to
// continue from, 0 when the walk is complete. Cursor 0 starts a walk.
func (d *dict[V]) scan(cursor uint64, count int, fn func(key string, v *V)) uint64 {
	pos := d.n - 1
	if cursor != 0 && cursor-1 < uint64(d.n) {
		pos = int(cursor - 1)
	}
	for ; pos >= 0 && count > 0; pos, count = pos-1, count-1 {
		s := d.slot(pos)
		fn(s.key, &s.val)
	}
	if pos < 0 {
		return 0
	}
	return uint64(pos) + 1
}

// clear removes every entry.
func (d *dict[V]) clear() {
	d.index = nil
	d.chunks = nil
	d.n = 0
}

// footprint returns the bytes the index and slots take, keys and values'
// own memory aside.
func (d *dict[V]) footprint() int {
	n := len(d.index) * 8
	for _, c := range d.chunks {
		n += cap(c) * int(unsafe.Sizeof(dictSlot[V]{}))
	}
	return n
}

// warm loads the index entries, slots and key bytes that finding the keys
// of hashes will read, each level for all keys before the next, so that
// the processor overlaps their cache misses (see warm.go), and sets
// vals[i] to the value of the key that hashes[i] probably names (nil if
// it is absent or not found at once). It returns a sum of what it loaded,
// which means nothing.
func (d *dict[V]) warm(hashes []uint32, vals []*V) uint64 {
	clear(vals)
	if d.index == nil || len(hashes) > warmBatch {
		return 0
	}
	var (
		sum   uint64
		slots [warmBatch]int32
		keys  [warmBatch]string
	)
	mask := uint32(len(d.index) - 1)
	for i, h := range hashes {
		e := d.index[h&mask]
		slots[i] = -1
		if uint32(e>>32) == h {
			slots[i] = int32(uint32(e)) - 1
		}
	}
	for i := range hashes {
		if s := slots[i]; s >= 0 && int(s) < d.n {
			sl := d.slot(int(s))
			keys[i], vals[i] = sl.key, &sl.val
		}
	}
	for _, k := range keys[:len(hashes)] {
		if len(k) > 0 {
			sum += uint64(k[0])
		}
	}
	return sum
}
