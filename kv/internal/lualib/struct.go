package lualib

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library's sizes are those of Redis's x86-64 build: C long and
// size_t of 8 bytes, int of 4, and alignment up to 8 by default.
const (
	structMaxIntSize  = 32
	structMaxAlign    = 8
	structDefaultInt  = 4
	structNativeOrder = littleEndian
)

// byteOrder is the byte order the format has selected.
type byteOrder int

const (
	bigEndian byteOrder = iota
	littleEndian
)

// newStructModule makes the struct module table.
func newStructModule(L *lua.LState) *lua.LTable {
	return newModule(L, map[string]lua.LGFunction{
		"pack":   structPack,
		"unpack": structUnpack,
		"size":   structSize,
	})
}

// structFormat reads a format string, holding the byte order and alignment
// that its options have selected so far. As in C, a NUL byte ends it.
type structFormat struct {
	L     *lua.LState
	fmt   string
	pos   int
	order byteOrder
	align int
}

// newStructFormat reads argument 1 as a format, with native byte order and
// no alignment.
func newStructFormat(L *lua.LState) *structFormat {
	return &structFormat{L: L, fmt: cString(checkString(L, 1)), order: structNativeOrder, align: 1}
}

// more reports whether options are left.
func (f *structFormat) more() bool { return f.pos < len(f.fmt) }

// option reads the next option letter and the size it has.
func (f *structFormat) option() (byte, uint64) {
	opt := f.fmt[f.pos]
	f.pos++
	return opt, f.size(opt)
}

// number reads the decimal number at the current position, def when there
// is none.
func (f *structFormat) number(def int) int {
	if !isDigit(byteAt(f.fmt, f.pos)) {
		return def
	}
	n := 0
	for isDigit(byteAt(f.fmt, f.pos)) {
		d := int(f.fmt[f.pos] - '0')
		if n > math.MaxInt32/10 || n*10 > math.MaxInt32-d {
			raise(f.L, "integral size overflow")
		}
		n = n*10 + d
		f.pos++
	}
	return n
}

// size is the size in bytes of a field of option opt, reading the number
// that follows the options that take one; 0 for options that are not fields
// of a fixed size.
func (f *structFormat) size(opt byte) uint64 {
	switch opt {
	case 'b', 'B':
		return 1
	case 'h', 'H':
		return 2
	case 'l', 'L', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return uint64(f.number(1))
	case 'i', 'I':
		n := f.number(structDefaultInt)
		if n > structMaxIntSize {
			raise(f.L, "integral size %d is larger than limit of %d", n, structMaxIntSize)
		}
		return uint64(n)
	}
	return 0
}

// padding is the number of bytes needed before a field of option opt and
// the given size at offset, to align it to the smaller of its size and the
// format's alignment. The arithmetic is the C library's, sizes that are not
// powers of 2 included.
func (f *structFormat) padding(offset uint64, opt byte, size uint64) uint64 {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > uint64(f.align) {
		size = uint64(f.align)
	}
	return (size - (offset & (size - 1))) & (size - 1)
}

// control applies an option that is not a field: white space, a byte order
// or an alignment. Anything else is an invalid option.
func (f *structFormat) control(opt byte) {
	switch opt {
	case ' ':
	case '>':
		f.order = bigEndian
	case '<':
		f.order = littleEndian
	case '!':
		a := f.number(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			raise(f.L, "alignment %d is not a power of 2", a)
		}
		f.align = a
	default:
		argError(f.L, 1, "invalid format option '"+string([]byte{opt})+"'")
	}
}

// putUint appends the size low bytes of v, more significant ones as 0 when
// size is over 8, in the format's byte order.
func (f *structFormat) putUint(b []byte, v uint64, size int) []byte {
	field := make([]byte, size)
	for i := 0; i < size; i++ {
		at := i
		if f.order == bigEndian {
			at = size - 1 - i
		}
		field[at] = byte(v)
		v >>= 8
	}
	return append(b, field...)
}

// getUint reads a size-byte integer in the format's byte order, keeping its
// low 64 bits.
func (f *structFormat) getUint(b string) uint64 {
	var v uint64
	for i := 0; i < len(b); i++ {
		at := i
		if f.order == littleEndian {
			at = len(b) - 1 - i
		}
		v = v<<8 | uint64(b[at])
	}
	return v
}

// orderedBytes puts a native (little-endian) encoding in the format's byte
// order; it is its own inverse.
func (f *structFormat) orderedBytes(b []byte) []byte {
	if f.order != structNativeOrder {
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
	}
	return b
}

// structPack is struct.pack(format, v1, ...): the values laid out as the
// format says.
func structPack(L *lua.LState) int {
	f := newStructFormat(L)
	// The C library pushes a nil after the arguments, which is what a
	// missing argument is then reported as.
	L.Push(lua.LNil)
	arg := 2
	var out []byte
	var total uint64
	for f.more() {
		opt, size := f.option()
		pad := f.padding(total, opt, size)
		total += pad
		out = append(out, make([]byte, pad)...)
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			out = f.putUint(out, integerBits(checkNumber(L, arg)), int(size))
			arg++
		case 'x':
			out = append(out, 0)
		case 'f':
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(float32(checkNumber(L, arg))))
			out = append(out, f.orderedBytes(b[:])...)
			arg++
		case 'd':
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(checkNumber(L, arg)))
			out = append(out, f.orderedBytes(b[:])...)
			arg++
		case 'c', 's':
			s := checkString(L, arg)
			arg++
			if size == 0 {
				size = uint64(len(s))
			}
			if uint64(len(s)) < size {
				argError(L, arg, "string too short")
			}
			out = append(out, s[:size]...)
			if opt == 's' {
				out = append(out, 0)
				size++
			}
		default:
			f.control(opt)
		}
		total += size
	}
	L.Push(lua.LString(out))
	return 1
}

// integerBits is the two's complement bit pattern C's struct library stores
// for n: negative numbers through a signed conversion, others through an
// unsigned one.
func integerBits(n float64) uint64 {
	if n < 0 {
		return uint64(cInt64(n))
	}
	return cUint64(n)
}

// signedValue is the integer v read from size bytes, sign-extended. The
// sign bit is found with the C library's shift, which x86-64 takes modulo 64
// for fields over 8 bytes.
func signedValue(v uint64, size uint64) float64 {
	mask := ^uint64(0) << ((size*8 - 1) & 63)
	if v&mask != 0 {
		v |= mask
	}
	return float64(int64(v))
}

// structUnpack is struct.unpack(format, data[, offset]): the values laid out
// in data from offset (1 by default) as the format says, then the offset
// after them.
func structUnpack(L *lua.LState) int {
	f := newStructFormat(L)
	data := checkString(L, 2)
	pos := uint64(optInteger(L, 3, 1))
	if pos == 0 {
		argError(L, 3, "offset must be 1 or greater")
	}
	pos--
	ld := uint64(len(data))
	var results []lua.LValue
	for f.more() {
		opt, size := f.option()
		pos += f.padding(pos, opt, size)
		if size > ld || pos > ld-size {
			argError(L, 2, "data string too short")
		}
		if L.GetTop()+len(results)+2 > maxCStack {
			raise(L, "stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			v := f.getUint(data[pos : pos+size])
			if opt >= 'a' {
				results = append(results, lua.LNumber(signedValue(v, size)))
			} else {
				results = append(results, lua.LNumber(float64(v)))
			}
		case 'x':
		case 'f':
			b := f.orderedBytes([]byte(data[pos : pos+4]))
			results = append(results, lua.LNumber(math.Float32frombits(binary.LittleEndian.Uint32(b))))
		case 'd':
			b := f.orderedBytes([]byte(data[pos : pos+8]))
			results = append(results, lua.LNumber(math.Float64frombits(binary.LittleEndian.Uint64(b))))
		case 'c':
			if size == 0 {
				size, results = previousSize(L, results)
				if size > ld || pos > ld-size {
					argError(L, 2, "data string too short")
				}
			}
			results = append(results, lua.LString(data[pos:pos+size]))
		case 's':
			end := strings.IndexByte(data[pos:], 0)
			if end < 0 {
				raise(L, "unfinished string in data")
			}
			results = append(results, lua.LString(data[pos:pos+uint64(end)]))
			size = uint64(end) + 1
		default:
			f.control(opt)
		}
		pos += size
	}
	for _, v := range results {
		L.Push(v)
	}
	L.Push(lua.LNumber(float64(int64(pos + 1))))
	return len(results) + 1
}

// previousSize takes the last result, which must be a number, as the size
// of a "c0" field, and returns it and the results without it.
func previousSize(L *lua.LState, results []lua.LValue) (uint64, []lua.LValue) {
	if len(results) == 0 {
		raise(L, "format 'c0' needs a previous size")
	}
	n, ok := toNumber(results[len(results)-1])
	if !ok {
		raise(L, "format 'c0' needs a previous size")
	}
	return cUint64(n), results[:len(results)-1]
}

// structSize is struct.size(format): the bytes the format's fields take,
// padding included. Formats with strings of no fixed size are refused.
func structSize(L *lua.LState) int {
	f := newStructFormat(L)
	var pos uint64
	for f.more() {
		opt, size := f.option()
		pos += f.padding(pos, opt, size)
		if opt == 's' {
			argError(L, 1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			argError(L, 1, "option 'c0' has no fixed size")
		}
		if !isDigit(opt) && !isAlpha(opt) {
			f.control(opt)
		}
		pos += size
	}
	L.Push(lua.LNumber(float64(int64(pos))))
	return 1
}
