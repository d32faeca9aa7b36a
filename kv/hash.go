package kv

import (
	"iter"
	"math/rand/v2"
	"slices"
	"unsafe"

	"github.com/evloop/evloop/resp"
)

// hashPackMax is the longest field or value a hash's pack holds, whatever
// hash-max-listpack-value says: a pair's length must fit the low byte of
// its tag.
const hashPackMax = 126

// hashRewriteBatch is how many fields each HSET of a log rewrite sets.
const hashRewriteBatch = 64

// hash is a hash value. A small hash is its fields and values packed in
// one buffer, field, value, field, value... each a length byte and its
// bytes, in insertion order and searched linearly, as Redis's listpack
// is: its order is the one Redis replies in, a delete keeps the order of
// the rest, and a pair costs its bytes and two more (where two Go
// strings would cost 32 bytes of headers and two allocations). Once it
// outgrows Redis's listpack encoding it becomes a dict, and stays one, as
// Redis never converts back.
//
// Beside the pack, a small hash keeps a word for each pair: 24 bits of
// the field's hash and, in the low byte, the pair's length in the pack
// (at most 130). A lookup scans those words, summing lengths to know
// where each pair starts, and compares bytes only where the hashes
// agree: it never walks the pack itself.
//
// The bytes get and at return are the hash's own: they must not be
// written, and hold only until the hash next changes.
type hash struct {
	pack []byte          // while small: length, field, length, value, ...
	tags []uint32        // while small: each pair's field hash and length
	ht   *dict[string]   // once big: field → value
	lim  *encodingLimits // the server's, as CONFIG SET leaves them
}

// tagHash is the part of a tag that is the field's hash; the rest is the
// pair's length.
const tagHash = ^uint32(0xff)

func pairTag(field []byte, pairLen int) uint32 {
	return dictHash(field)&tagHash | uint32(pairLen)
}

// tagLen returns the length in the pack of the pair whose tag t is.
func tagLen(t uint32) int { return int(t &^ tagHash) }

func newHash(lim *encodingLimits) *hash {
	if lim == nil {
		lim = &defaultLimits
	}
	return &hash{lim: lim}
}

// packValue is the longest field or value the pack takes:
// hash-max-listpack-value, at most hashPackMax.
func (h *hash) packValue() int { return min(h.lim.hashValue, hashPackMax) }

func (h *hash) big() bool { return h.ht != nil }

func (h *hash) len() int {
	if h.ht != nil {
		return h.ht.len()
	}
	return len(h.tags)
}

// offset returns where pair i of a small hash starts in pack.
func (h *hash) offset(i int) int {
	off := 0
	for _, t := range h.tags[:i] {
		off += tagLen(t)
	}
	return off
}

// pairAt returns the field and value of the pair at off in pack.
func (h *hash) pairAt(off int) (field, value []byte) {
	n := int(h.pack[off])
	field = h.pack[off+1 : off+1+n : off+1+n]
	off += 1 + n
	n = int(h.pack[off])
	return field, h.pack[off+1 : off+1+n : off+1+n]
}

// find returns the position of field in a small hash and where its pair
// starts in pack, or -1, -1.
func (h *hash) find(field []byte) (i, off int) {
	tag := dictHash(field) & tagHash
	for i, t := range h.tags {
		if t&tagHash == tag {
			if f, _ := h.pairAt(off); string(f) == string(field) {
				return i, off
			}
		}
		off += tagLen(t)
	}
	return -1, -1
}

// within reports whether b's bytes lie in buf's array.
func within(b, buf []byte) bool {
	if len(b) == 0 || cap(buf) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p >= base && p < base+uintptr(cap(buf))
}

// get returns field's value.
func (h *hash) get(field []byte) ([]byte, bool) {
	if h.ht != nil {
		if p := h.ht.get(field); p != nil {
			return stringBytes(*p), true
		}
		return nil, false
	}
	if i, off := h.find(field); i >= 0 {
		_, v := h.pairAt(off)
		return v, true
	}
	return nil, false
}

func (h *hash) exists(field []byte) bool {
	_, ok := h.get(field)
	return ok
}

// set gives field value, adding it if absent, and reports whether it
// added it. Like Redis's hashTypeSet, it converts a small hash that a
// field or value too long for it, or one field too many, would outgrow.
func (h *hash) set(field, value []byte) bool {
	if h.ht == nil && (len(field) > h.packValue() || len(value) > h.packValue()) {
		h.convert()
	}
	if h.ht != nil {
		p, added := h.ht.put(field)
		*p = string(value)
		return added
	}
	if i, off := h.find(field); i >= 0 {
		end := off + tagLen(h.tags[i])
		_, old := h.pairAt(off)
		h.splice(end-len(old)-1, end, value) // from the value's length byte
		h.tags[i] = pairTag(field, 2+len(field)+len(value))
		return false
	}
	h.splice(len(h.pack), len(h.pack), field)
	h.splice(len(h.pack), len(h.pack), value)
	h.tags = append(h.tags, pairTag(field, 2+len(field)+len(value)))
	if h.len() > h.lim.hashEntries {
		h.convert()
	}
	return true
}

// splice replaces pack[from:to] with b, length byte first. b may be
// bytes of the pack itself (a value get returned).
func (h *hash) splice(from, to int, b []byte) {
	if within(b, h.pack) {
		b = slices.Clone(b)
	}
	old := len(h.pack)
	h.pack = resizePacked(h.pack, old-(to-from)+1+len(b))
	copy(h.pack[from+1+len(b):], h.pack[to:old])
	h.pack[from] = byte(len(b))
	copy(h.pack[from+1:], b)
}

// fit converts a small hash if one of args (fields and values) is too
// long for it, as Redis's hashTypeTryConversion does before HSET and
// HSETNX; else it makes room for them in the pack, so that the pairs of
// one HSET grow it once.
func (h *hash) fit(args [][]byte) {
	if h.ht != nil {
		return
	}
	need := len(h.pack)
	for _, a := range args {
		if len(a) > h.packValue() {
			h.convert()
			return
		}
		need += 1 + len(a)
	}
	if need > cap(h.pack) && len(args)/2+h.len() <= h.lim.hashEntries {
		if len(h.pack) > 0 {
			// Built an HSET at a time: room for more, or each would copy
			// the whole pack.
			need += need / 4
		}
		h.pack = append(make([]byte, 0, need), h.pack...)
		h.tags = slices.Grow(h.tags, len(args)/2)
	}
}

// convert moves the pairs into a dict.
func (h *hash) convert() {
	ht := newDict[string](h.len())
	for f, v := range h.all() {
		p, _ := ht.put(f)
		*p = string(v)
	}
	h.pack, h.tags, h.ht = nil, nil, ht
}

// remove deletes field and reports whether it was there.
func (h *hash) remove(field []byte) bool {
	if h.ht != nil {
		return h.ht.delete(field)
	}
	i, off := h.find(field)
	if i < 0 {
		return false
	}
	end := off + tagLen(h.tags[i])
	h.pack = shrinkPacked(append(h.pack[:off], h.pack[end:]...))
	h.tags = slices.Delete(h.tags, i, i+1)
	return true
}

// at returns the field and value at position i, 0 ≤ i < len. For a
// small hash it sums the lengths of the pairs before i: a walk over all
// of them is all's.
func (h *hash) at(i int) (field, value []byte) {
	if h.ht != nil {
		f, v := h.ht.at(i)
		return stringBytes(f), stringBytes(*v)
	}
	return h.pairAt(h.offset(i))
}

// all yields the fields and values in order: a small hash's order, or
// the table's.
func (h *hash) all() iter.Seq2[[]byte, []byte] {
	return func(yield func(f, v []byte) bool) {
		if h.ht != nil {
			for i := range h.ht.len() {
				f, v := h.ht.at(i)
				if !yield(stringBytes(f), stringBytes(*v)) {
					return
				}
			}
			return
		}
		off := 0
		for _, t := range h.tags {
			if !yield(h.pairAt(off)) {
				return
			}
			off += tagLen(t)
		}
	}
}

// random returns the position of a random field; h must not be empty.
func (h *hash) random() int { return rand.IntN(h.len()) }

// encoding is what Redis 7.0's OBJECT ENCODING reports for the hash.
func (h *hash) encoding() string {
	if h.ht != nil {
		return "hashtable"
	}
	return "listpack"
}

// clone returns a deep copy, in the same encoding.
func (h *hash) clone() *hash {
	if h.ht == nil {
		return &hash{pack: slices.Clone(h.pack), tags: slices.Clone(h.tags), lim: h.lim}
	}
	n := &hash{ht: newDict[string](h.ht.len()), lim: h.lim}
	for f, v := range h.all() {
		p, _ := n.ht.put(f)
		*p = string(v)
	}
	return n
}

// rewrite writes the HSET commands that rebuild the hash under key, 64
// fields each.
func (h *hash) rewrite(w *resp.Writer, key []byte) {
	args := make([][]byte, 0, 2+2*hashRewriteBatch)
	for f, v := range h.all() {
		if len(args) == 0 {
			args = append(args, []byte("HSET"), key)
		}
		args = append(args, f, v)
		if len(args) == cap(args) {
			w.Command(args...)
			args = args[:0]
		}
	}
	if len(args) > 0 {
		w.Command(args...)
	}
}
