package kv

import (
	"encoding/binary"
	"math"
	"strconv"
)

// rdbWriter appends RDB data to buf: a value, or a file's records.
// Writing takes the compact encodings Redis 7.0 writes for what its
// compact encodings hold (listpacks for lists' nodes, small hashes and
// sorted sets, an intset for a set of few integers), so that Redis loads
// each value in the encoding it would have given it.
type rdbWriter struct {
	buf []byte
	// compress is rdbcompression: strings of more than 20 bytes are
	// written LZF-compressed when that saves more than 4 bytes.
	compress bool
	access   accessSaver // what of a record's access goes with it
}

func (w *rdbWriter) byte(b byte) { w.buf = append(w.buf, b) }

// length writes a length in the fewest bytes.
func (w *rdbWriter) length(n uint64) {
	switch {
	case n < 1<<6:
		w.buf = append(w.buf, byte(n))
	case n < 1<<14:
		w.buf = append(w.buf, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		w.buf = binary.BigEndian.AppendUint32(append(w.buf, 0x80), uint32(n))
	default:
		w.buf = binary.BigEndian.AppendUint64(append(w.buf, 0x81), n)
	}
}

// string writes s as Redis's rdbSaveRawString does: as an integer if it
// is one of 32 bits at most, compressed if that pays, else as it is.
func (w *rdbWriter) string(s []byte) {
	if len(s) <= 11 {
		if v, ok := parseInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				w.buf = append(w.buf, 0xc0|rdbEncInt8, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				w.buf = binary.LittleEndian.AppendUint16(append(w.buf, 0xc0|rdbEncInt16), uint16(v))
			default:
				w.buf = binary.LittleEndian.AppendUint32(append(w.buf, 0xc0|rdbEncInt32), uint32(v))
			}
			return
		}
	}
	if w.compress && len(s) > 20 {
		// The compressed bytes go after a header of at most 11 bytes;
		// compress them there and move them once the header is known.
		const room = 11
		start := len(w.buf)
		out, ok := lzfCompress(append(w.buf, make([]byte, room)...), s, len(s)-4)
		if ok {
			clen := len(out) - start - room
			w.buf = out[:start]
			w.byte(0xc0 | rdbEncLZF)
			w.length(uint64(clen))
			w.length(uint64(len(s)))
			w.buf = append(w.buf, out[start+room:start+room+clen]...)
			return
		}
		w.buf = out[:start]
	}
	w.length(uint64(len(s)))
	w.buf = append(w.buf, s...)
}

// valueType returns the type e is written as.
func valueType(e *entry) byte {
	switch o := e.obj.(type) {
	case *list:
		return rdbTypeListQuicklist2
	case *set:
		if o.isIntset() {
			return rdbTypeSetIntset
		}
		return rdbTypeSet
	case *zset:
		if o.big {
			return rdbTypeZSet2
		}
		return rdbTypeZSetListpack
	case *hash:
		if o.big() {
			return rdbTypeHash
		}
		return rdbTypeHashListpack
	}
	return rdbTypeString
}

// value writes e's value, without its type.
func (w *rdbWriter) value(e *entry) {
	switch o := e.obj.(type) {
	case nil, *strBuf:
		w.string(stringBytes(e.str))
	case *list:
		w.list(o)
	case *set:
		if o.isIntset() {
			w.string(intsetBlob(&o.ints))
			return
		}
		w.length(uint64(o.table.len()))
		for i := range o.table.len() {
			m, _ := o.table.at(i)
			w.string(stringBytes(m))
		}
	case *zset:
		w.zset(o)
	case *hash:
		if !o.big() {
			lp := newListpack()
			for f, v := range o.all() {
				lp.add(f)
				lp.add(v)
			}
			w.string(lp.bytes())
			return
		}
		w.length(uint64(o.len()))
		for f, v := range o.all() {
			w.string(f)
			w.string(v)
		}
	}
}

// listpack returns the node's items as a listpack, as Redis's quicklist
// node holds them.
func (nd *listNode) listpack() []byte {
	lp := newListpack()
	for j := range nd.size() {
		lp.add(nd.get(j))
	}
	return lp.bytes()
}

// list writes a list's nodes, each a listpack.
func (w *rdbWriter) list(l *list) {
	nodes := 0
	for i := range l.count {
		if l.node(i).size() > 0 {
			nodes++
		}
	}
	w.length(uint64(nodes))
	for i := range l.count {
		nd := l.node(i)
		if nd.size() == 0 {
			continue
		}
		w.length(quicklistPacked)
		w.string(nd.listpack())
	}
}

// zset writes a compact sorted set as a listpack of members and scores,
// in order, and a large one as Redis writes its skiplist: from the
// greatest element down, each score as 8 bytes.
func (w *rdbWriter) zset(z *zset) {
	if !z.big {
		lp := newListpack()
		var buf [32]byte
		for c := z.tree.first(); c.ok(); c.next() {
			lp.add(stringBytes(c.member()))
			lp.add(appendPackedScore(buf[:0], c.score()))
		}
		w.string(lp.bytes())
		return
	}
	w.length(uint64(z.len()))
	for c := z.tree.last(); c.ok(); c.prev() {
		w.string(stringBytes(c.member()))
		w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(c.score()))
	}
}

// appendPackedScore appends a score as a listpack of Redis's holds it: an
// integer if it is one within ±2^62 (-0 as 0), else as a reply gives it
// (appendScore: "inf", "-inf" or printf's "%.17g").
func appendPackedScore(b []byte, f float64) []byte {
	if f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return appendScore(b, f)
}

// intsetBlob returns an intset as Redis stores it: width, count and
// members, little-endian.
func intsetBlob(s *intset) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(s.width()))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.len()))
	if len(s.data) > 0 {
		b = append(b, s.data[1:]...)
	}
	return b
}

// dumpPayload returns e's value as DUMP gives it: its type, the value,
// the RDB version in 2 bytes and a CRC-64 of all that, little-endian.
func dumpPayload(e *entry, compress bool) []byte {
	w := rdbWriter{compress: compress}
	w.byte(valueType(e))
	w.value(e)
	w.buf = binary.LittleEndian.AppendUint16(w.buf, rdbVersion)
	return binary.LittleEndian.AppendUint64(w.buf, rdbCRC(0, w.buf))
}
