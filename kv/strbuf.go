package kv

import (
	"math"
	"unsafe"
)

// strBuf holds the bytes of a string value that commands edit in place
// (APPEND, SETRANGE, SETBIT, BITFIELD, and PFADD, PFMERGE and PFCOUNT on a
// dense HyperLogLog), so that an edit costs what it
// changes rather than a copy of the whole value, as with Redis's sds
// strings: appending to a log or setting a bit of a large bitmap stays
// cheap however long the value. The entry's str is b's bytes, uncopied,
// and b has room to grow as Redis's sdsMakeRoomFor leaves it.
//
// The entry owns the bytes while its obj is the strBuf and its str is all
// of b (owns). A copy of the entry (COPY's, cloneValue) keeps neither: a
// strBuf is never shared, and an entry whose str was replaced without
// its obj is no longer the owner, and edits a copy.
//
// So a string read from an entry (stringOf, lookupString, e.str) may change
// under its reader once another command edits the key: it is good until
// the command that read it returns, and whatever keeps one longer copies
// it (replies, the log and its rewrite, SORT's STORE and COPY all do).
type strBuf struct{ b []byte }

// owns reports whether e's str is all of its strBuf's bytes.
func (e *entry) owns() (*strBuf, bool) {
	sb, ok := e.obj.(*strBuf)
	return sb, ok && len(sb.b) > 0 && len(e.str) == len(sb.b) && unsafe.StringData(e.str) == unsafe.SliceData(sb.b)
}

// isString reports whether e holds a string.
func (e *entry) isString() bool {
	if e.obj == nil {
		return true
	}
	_, ok := e.obj.(*strBuf)
	return ok
}

// setStr makes s, bytes no one edits, e's string value.
func (e *entry) setStr(s string) {
	e.str, e.obj, e.enc = s, nil, encRaw
}

// edit returns e's string bytes to change in place, at least n long: bytes
// past the value's end are zero. The value becomes raw bytes of e's own,
// copied the first time; when a value that is not empty grows past the
// room it has, it is copied into room for twice its new length, or 1 MiB
// more past 1 MiB, as Redis's sdsMakeRoomFor makes room (a new one is made
// to measure, as Redis's commands make theirs).
func (e *entry) edit(n int) []byte {
	sb, ok := e.owns()
	if !ok || n > cap(sb.b) {
		size := max(n, len(e.str))
		room := size
		if n > len(e.str) && len(e.str) > 0 {
			room = grownRoom(size)
		}
		sb = &strBuf{b: make([]byte, size, room)}
		copy(sb.b, e.str)
	} else if n > len(sb.b) {
		old := len(sb.b)
		sb.b = sb.b[:n]
		clear(sb.b[old:]) // the room past the end is zero, but not by contract
	}
	return e.setBuf(sb)
}

// setBuf makes sb's bytes e's string value, e their owner, and returns
// them.
func (e *entry) setBuf(sb *strBuf) []byte {
	e.str, e.obj, e.enc = bytesString(sb.b), sb, encRaw
	return sb.b
}

// maxGreedyRoom is where room stops doubling: sdsMakeRoomFor's
// SDS_MAX_PREALLOC.
const maxGreedyRoom = 1 << 20

// grownRoom is the room for a value that grew to n bytes.
func grownRoom(n int) int {
	switch {
	case n < maxGreedyRoom:
		return 2 * n
	case n > math.MaxInt-maxGreedyRoom:
		return n // a 32-bit platform's last gigabytes
	}
	return n + maxGreedyRoom
}

// editString returns key's entry e, created as an empty string if nil, and
// its bytes to change in place, as edit. A new key is created once its
// bytes are allocated: an allocation that fails leaves no key behind.
func (d *db) editString(key []byte, e *entry, n int) (*entry, []byte) {
	if e != nil {
		return e, e.edit(n)
	}
	sb := &strBuf{b: make([]byte, n)}
	e = d.setString(key, "", false)
	return e, e.setBuf(sb)
}

// stringBytesHeld is the heap a string value holds: its room and strBuf
// too.
func stringBytesHeld(e *entry) int {
	if sb, ok := e.owns(); ok {
		return heapBytes(cap(sb.b)) + heapBytes(int(unsafe.Sizeof(*sb)))
	}
	return heapBytes(len(e.str))
}
