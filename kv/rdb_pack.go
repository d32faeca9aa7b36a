package kv

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// The packed blobs an RDB value may be: Redis's listpacks (lists' nodes,
// small hashes and sorted sets), intsets, and, in files of older
// versions, ziplists and zipmaps. Each is checked whole as it is read, as
// Redis checks them with sanitize-dump-payload yes: a blob that is
// malformed anywhere is an error, never a panic or a value built from
// part of it.

var (
	errListpack = errors.New("listpack integrity check failed")
	errZiplist  = errors.New("ziplist integrity check failed")
	errZipmap   = errors.New("zipmap integrity check failed")
	errIntset   = errors.New("intset integrity check failed")
)

const (
	lpHeaderSize = 6
	lpEOF        = 0xff
	lpUnknownLen = 65535 // a listpack's count when it is too many for its field
)

// lpItems returns the items of the listpack b, integers as their decimal
// text; strings are slices of b.
func lpItems(b []byte) ([][]byte, error) {
	if len(b) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != lpEOF {
		return nil, errListpack
	}
	count := int(binary.LittleEndian.Uint16(b[4:]))
	items := make([][]byte, 0, min(count, len(b)))
	end := len(b) - 1
	for p := lpHeaderSize; p < end; {
		item, size, ok := lpEntry(b[p:end])
		if !ok {
			return nil, errListpack
		}
		// The back length must be the one appendBacklen writes.
		var buf [5]byte
		back := appendBacklen(buf[:0], size)
		if p+size+len(back) > end || string(b[p+size:p+size+len(back)]) != string(back) {
			return nil, errListpack
		}
		items = append(items, item)
		p += size + len(back)
	}
	if count != lpUnknownLen && count != len(items) {
		return nil, errListpack
	}
	return items, nil
}

// lpEntry decodes the entry at the start of b: its item and the bytes of
// its encoding and data.
func lpEntry(b []byte) (item []byte, size int, ok bool) {
	c := b[0]
	var v int64
	switch {
	case c&0x80 == 0:
		return strconv.AppendInt(nil, int64(c), 10), 1, true
	case c&0xc0 == 0x80:
		size = 1 + int(c&0x3f)
		if size > len(b) {
			return nil, 0, false
		}
		return b[1:size:size], size, true
	case c&0xe0 == 0xc0:
		if len(b) < 2 {
			return nil, 0, false
		}
		v = int64(c&0x1f)<<8 | int64(b[1])
		if v >= 1<<12 {
			v -= 1 << 13
		}
		size = 2
	case c&0xf0 == 0xe0:
		if len(b) < 2 {
			return nil, 0, false
		}
		size = 2 + (int(c&0x0f)<<8 | int(b[1]))
		if size > len(b) {
			return nil, 0, false
		}
		return b[2:size:size], size, true
	case c == 0xf0:
		if len(b) < 5 {
			return nil, 0, false
		}
		n := uint64(binary.LittleEndian.Uint32(b[1:]))
		if n > uint64(len(b)-5) {
			return nil, 0, false
		}
		size = 5 + int(n)
		return b[5:size:size], size, true
	case c == 0xf1:
		if len(b) < 3 {
			return nil, 0, false
		}
		v, size = int64(int16(binary.LittleEndian.Uint16(b[1:]))), 3
	case c == 0xf2:
		if len(b) < 4 {
			return nil, 0, false
		}
		v, size = int64(int32(uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24)>>8), 4
	case c == 0xf3:
		if len(b) < 5 {
			return nil, 0, false
		}
		v, size = int64(int32(binary.LittleEndian.Uint32(b[1:]))), 5
	case c == 0xf4:
		if len(b) < 9 {
			return nil, 0, false
		}
		v, size = int64(binary.LittleEndian.Uint64(b[1:])), 9
	default:
		return nil, 0, false
	}
	return strconv.AppendInt(nil, v, 10), size, true
}

// lpBacklenSize is how many bytes the back length of an entry of size
// bytes takes.
func lpBacklenSize(size int) int {
	switch {
	case size <= 127:
		return 1
	case size < 16383:
		return 2
	case size < 2097151:
		return 3
	case size < 268435455:
		return 4
	}
	return 5
}

// appendBacklen appends the back length of an entry of size bytes: its
// 7-bit groups, most significant first, every byte but the first with the
// high bit set, so that it is read from its end backwards.
func appendBacklen(b []byte, size int) []byte {
	n := lpBacklenSize(size)
	for i := n - 1; i >= 0; i-- {
		g := byte(size>>(7*i)) & 127
		if i < n-1 {
			g |= 128
		}
		b = append(b, g)
	}
	return b
}

// lpAppendItem appends an entry holding v to the listpack being built in
// b: an integer's encoding if v is one as Redis reads it, else a string's.
func lpAppendItem(b, v []byte) []byte {
	start := len(b)
	if n, ok := parseInt(v); ok {
		switch {
		case n >= 0 && n <= 127:
			b = append(b, byte(n))
		case n >= -4096 && n <= 4095:
			b = append(b, 0xc0|byte(uint64(n)>>8)&0x1f, byte(n))
		case n >= math.MinInt16 && n <= math.MaxInt16:
			b = binary.LittleEndian.AppendUint16(append(b, 0xf1), uint16(n))
		case n >= -1<<23 && n < 1<<23:
			b = append(b, 0xf2, byte(n), byte(n>>8), byte(n>>16))
		case n >= math.MinInt32 && n <= math.MaxInt32:
			b = binary.LittleEndian.AppendUint32(append(b, 0xf3), uint32(n))
		default:
			b = binary.LittleEndian.AppendUint64(append(b, 0xf4), uint64(n))
		}
	} else {
		switch l := len(v); {
		case l < 64:
			b = append(b, 0x80|byte(l))
		case l < 4096:
			b = append(b, 0xe0|byte(l>>8), byte(l))
		default:
			b = binary.LittleEndian.AppendUint32(append(b, 0xf0), uint32(l))
		}
		b = append(b, v...)
	}
	return appendBacklen(b, len(b)-start)
}

// listpack builds a listpack item by item.
type listpack struct {
	b []byte
	n int
}

func newListpack() listpack { return listpack{b: make([]byte, lpHeaderSize, 64)} }

func (lp *listpack) add(v []byte) {
	lp.b = lpAppendItem(lp.b, v)
	lp.n++
}

// bytes ends the listpack and returns it.
func (lp *listpack) bytes() []byte {
	lp.b = append(lp.b, lpEOF)
	binary.LittleEndian.PutUint32(lp.b, uint32(len(lp.b)))
	binary.LittleEndian.PutUint16(lp.b[4:], uint16(min(lp.n, lpUnknownLen)))
	return lp.b
}

const zlHeaderSize = 10

// zlItems returns the items of the ziplist b, integers as their decimal
// text; strings are slices of b.
func zlItems(b []byte) ([][]byte, error) {
	if len(b) < zlHeaderSize+1 || int(binary.LittleEndian.Uint32(b)) != len(b) || b[len(b)-1] != 0xff {
		return nil, errZiplist
	}
	tail := int(binary.LittleEndian.Uint32(b[4:]))
	count := int(binary.LittleEndian.Uint16(b[8:]))
	items := make([][]byte, 0, min(count, len(b)))
	end := len(b) - 1
	prev, last := 0, zlHeaderSize
	for p := zlHeaderSize; p < end; {
		start := p
		var prevLen int
		if b[p] < 254 {
			prevLen = int(b[p])
			p++
		} else if b[p] == 254 && p+5 <= end {
			prevLen = int(binary.LittleEndian.Uint32(b[p+1:]))
			p += 5
		} else {
			return nil, errZiplist
		}
		if prevLen != prev || p >= end {
			return nil, errZiplist
		}
		item, n, ok := zlEntry(b[p:end])
		if !ok {
			return nil, errZiplist
		}
		items = append(items, item)
		p += n
		prev, last = p-start, start
	}
	if tail != last || (count != 65535 && count != len(items)) {
		return nil, errZiplist
	}
	return items, nil
}

// zlEntry decodes the encoding and data at the start of b: the item and
// how many bytes they take.
func zlEntry(b []byte) (item []byte, size int, ok bool) {
	c := b[0]
	var v int64
	switch {
	case c>>6 == 0:
		size = 1 + int(c&0x3f)
		if size > len(b) {
			return nil, 0, false
		}
		return b[1:size:size], size, true
	case c>>6 == 1:
		if len(b) < 2 {
			return nil, 0, false
		}
		size = 2 + (int(c&0x3f)<<8 | int(b[1]))
		if size > len(b) {
			return nil, 0, false
		}
		return b[2:size:size], size, true
	case c == 0x80:
		if len(b) < 5 {
			return nil, 0, false
		}
		n := uint64(binary.BigEndian.Uint32(b[1:]))
		if n > uint64(len(b)-5) {
			return nil, 0, false
		}
		size = 5 + int(n)
		return b[5:size:size], size, true
	case c == 0xc0:
		if len(b) < 3 {
			return nil, 0, false
		}
		v, size = int64(int16(binary.LittleEndian.Uint16(b[1:]))), 3
	case c == 0xd0:
		if len(b) < 5 {
			return nil, 0, false
		}
		v, size = int64(int32(binary.LittleEndian.Uint32(b[1:]))), 5
	case c == 0xe0:
		if len(b) < 9 {
			return nil, 0, false
		}
		v, size = int64(binary.LittleEndian.Uint64(b[1:])), 9
	case c == 0xf0:
		if len(b) < 4 {
			return nil, 0, false
		}
		v, size = int64(int32(uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24)>>8), 4
	case c == 0xfe:
		if len(b) < 2 {
			return nil, 0, false
		}
		v, size = int64(int8(b[1])), 2
	case c >= 0xf1 && c <= 0xfd:
		v, size = int64(c&0x0f)-1, 1
	default:
		return nil, 0, false
	}
	return strconv.AppendInt(nil, v, 10), size, true
}

// zipmapPairs returns the fields and values of the zipmap b, in turn.
func zipmapPairs(b []byte) ([][]byte, error) {
	if len(b) < 2 || b[len(b)-1] != 0xff {
		return nil, errZipmap
	}
	var out [][]byte
	p := 1
	readLen := func() (int, bool) {
		if p >= len(b) {
			return 0, false
		}
		switch c := b[p]; {
		case c < 254:
			p++
			return int(c), true
		case c == 254 && p+5 <= len(b):
			n := binary.LittleEndian.Uint32(b[p+1:])
			p += 5
			return int(n), uint64(n) <= uint64(len(b))
		}
		return 0, false
	}
	for p < len(b) && b[p] != 0xff {
		klen, ok := readLen()
		if !ok || p+klen > len(b) {
			return nil, errZipmap
		}
		key := b[p : p+klen : p+klen]
		p += klen
		vlen, ok := readLen()
		if !ok || p >= len(b) {
			return nil, errZipmap
		}
		free := int(b[p])
		p++
		if p+vlen+free > len(b) {
			return nil, errZipmap
		}
		out = append(out, key, b[p:p+vlen:p+vlen])
		p += vlen + free
	}
	if p != len(b)-1 {
		return nil, errZipmap
	}
	if n := int(b[0]); n < 254 && n != len(out)/2 {
		return nil, errZipmap
	}
	return out, nil
}

// intsetOf returns the intset blob b (a width of 2, 4 or 8, a count, then
// the members in that width, ascending, all little-endian) as an intset
// of that width: the layout of kv's own after its width byte.
func intsetOf(b []byte) (intset, error) {
	if len(b) < 8 {
		return intset{}, errIntset
	}
	width := binary.LittleEndian.Uint32(b)
	count := uint64(binary.LittleEndian.Uint32(b[4:]))
	if width != 2 && width != 4 && width != 8 || count == 0 || uint64(len(b)-8) != count*uint64(width) {
		return intset{}, errIntset
	}
	s := intset{data: append([]byte{byte(width)}, b[8:]...)}
	for i := 1; i < s.len(); i++ {
		if s.at(i) <= s.at(i-1) {
			return intset{}, errIntset
		}
	}
	return s, nil
}
