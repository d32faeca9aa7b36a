package kv

import (
	"math/rand/v2"
	"slices"

	"github.com/evloop/evloop/resp"
)

// Redis's thresholds for a hash's compact encoding
// (hash-max-listpack-entries and hash-max-listpack-value), as Redis 7.0
// sets them when no configuration file says otherwise: 512 entries (the
// redis.conf shipped with it says 128), values of 64 bytes.
const (
	hashListpackEntries = 512
	hashListpackValue   = 64
)

// hashRewriteBatch is how many fields each HSET of a log rewrite sets.
const hashRewriteBatch = 64

// hash is a hash value. A small hash is a flat slice of field, value,
// field, value... in insertion order, searched linearly, as Redis's
// listpack is: its order is the one Redis replies in, and a delete keeps
// the order of the rest. Once it outgrows Redis's listpack encoding it
// becomes a dict, and stays one, as Redis never converts back.
//
// Beside the pairs, a small hash keeps a 32-bit hash of each field, so a
// lookup scans 4 bytes a field and compares strings only where the hashes
// agree: at 512 fields it is several times faster than comparing strings.
type hash struct {
	pairs []string      // while small: field, value, ...
	tags  []uint32      // while small: the hash of each field of pairs
	ht    *dict[string] // once big: field → value
}

func newHash() *hash { return &hash{} }

func (h *hash) big() bool { return h.ht != nil }

func (h *hash) len() int {
	if h.ht != nil {
		return h.ht.len()
	}
	return len(h.pairs) / 2
}

// find returns the position of field's value in pairs, or -1.
func (h *hash) find(field []byte) int {
	tag := dictHash(field)
	for i, t := range h.tags {
		if t == tag && h.pairs[2*i] == string(field) {
			return 2*i + 1
		}
	}
	return -1
}

// get returns field's value.
func (h *hash) get(field []byte) (string, bool) {
	if h.ht != nil {
		if p := h.ht.get(field); p != nil {
			return *p, true
		}
		return "", false
	}
	if i := h.find(field); i >= 0 {
		return h.pairs[i], true
	}
	return "", false
}

func (h *hash) exists(field []byte) bool {
	_, ok := h.get(field)
	return ok
}

// set gives field value, adding it if absent, and reports whether it
// added it. Like Redis's hashTypeSet, it converts a small hash that a
// field or value too long for it, or one field too many, would outgrow.
func (h *hash) set(field, value []byte) bool {
	if h.ht == nil && (len(field) > hashListpackValue || len(value) > hashListpackValue) {
		h.convert()
	}
	if h.ht != nil {
		p, added := h.ht.put(field)
		*p = string(value)
		return added
	}
	if i := h.find(field); i >= 0 {
		h.pairs[i] = string(value)
		return false
	}
	h.pairs = append(h.pairs, string(field), string(value))
	h.tags = append(h.tags, dictHash(field))
	if h.len() > hashListpackEntries {
		h.convert()
	}
	return true
}

// fit converts a small hash if one of args is too long for it, as
// Redis's hashTypeTryConversion does before HSET and HSETNX.
func (h *hash) fit(args [][]byte) {
	if h.ht != nil {
		return
	}
	for _, a := range args {
		if len(a) > hashListpackValue {
			h.convert()
			return
		}
	}
}

// convert moves the pairs into a dict.
func (h *hash) convert() {
	h.ht = newDict[string](len(h.pairs) / 2)
	for i := 0; i < len(h.pairs); i += 2 {
		p, _ := h.ht.put([]byte(h.pairs[i]))
		*p = h.pairs[i+1]
	}
	h.pairs, h.tags = nil, nil
}

// remove deletes field and reports whether it was there.
func (h *hash) remove(field []byte) bool {
	if h.ht != nil {
		return h.ht.delete(field)
	}
	i := h.find(field)
	if i < 0 {
		return false
	}
	copy(h.pairs[i-1:], h.pairs[i+1:])
	n := len(h.pairs) - 2
	h.pairs[n], h.pairs[n+1] = "", ""
	h.pairs = h.pairs[:n]
	h.tags = slices.Delete(h.tags, i/2, i/2+1)
	return true
}

// at returns the field and value at position i, 0 ≤ i < len.
func (h *hash) at(i int) (string, string) {
	if h.ht != nil {
		f, v := h.ht.at(i)
		return f, *v
	}
	return h.pairs[2*i], h.pairs[2*i+1]
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
		return &hash{pairs: slices.Clone(h.pairs), tags: slices.Clone(h.tags)}
	}
	n := &hash{ht: newDict[string](h.ht.len())}
	for i := range h.ht.len() {
		f, v := h.ht.at(i)
		p, _ := n.ht.put([]byte(f))
		*p = *v
	}
	return n
}

// rewrite writes the HSET commands that rebuild the hash under key, 64
// fields each.
func (h *hash) rewrite(w *resp.Writer, key []byte) {
	n := h.len()
	args := make([][]byte, 0, 2+2*hashRewriteBatch)
	for i := 0; i < n; {
		args = append(args[:0], []byte("HSET"), key)
		for ; i < n && len(args) < 2+2*hashRewriteBatch; i++ {
			f, v := h.at(i)
			args = append(args, []byte(f), []byte(v))
		}
		w.Command(args...)
	}
}
