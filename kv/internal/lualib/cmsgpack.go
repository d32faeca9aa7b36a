package lualib

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// msgpackMaxNesting is how deep pack follows nested tables; a table deeper
// than that, a cycle for one, is packed as nil.
const msgpackMaxNesting = 16

// newCmsgpackModule makes the cmsgpack module table.
func newCmsgpackModule(L *lua.LState) *lua.LTable {
	t := newModule(L, map[string]lua.LGFunction{
		"pack":         msgpackPack,
		"unpack":       msgpackUnpack,
		"unpack_one":   msgpackUnpackOne,
		"unpack_limit": msgpackUnpackLimit,
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

// ===== Packing =====

// msgpackPack is cmsgpack.pack(v1, ...): the MessagePack encodings of its
// arguments, one after the other.
func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		argError(L, 0, "MessagePack pack needs input.")
	}
	if n+n > maxCStack {
		argError(L, 0, "Too many arguments for MessagePack pack.")
	}
	var buf []byte
	for i := 1; i <= n; i++ {
		buf = packValue(buf, L.Get(i), 0)
	}
	L.Push(lua.LString(buf))
	return 1
}

// packValue appends the encoding of v, found at the given table nesting
// level. Values MessagePack has no type for are packed as nil.
func packValue(buf []byte, v lua.LValue, level int) []byte {
	switch x := v.(type) {
	case lua.LString:
		return packBytes(buf, string(x))
	case lua.LBool:
		if x {
			return append(buf, 0xc3)
		}
		return append(buf, 0xc2)
	case lua.LNumber:
		return packNumber(buf, float64(x))
	case *lua.LTable:
		if level == msgpackMaxNesting {
			return append(buf, 0xc0)
		}
		return packTable(buf, x, level)
	}
	return append(buf, 0xc0)
}

// packBytes appends a string as a MessagePack str.
func packBytes(buf []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		buf = append(buf, 0xa0|byte(n))
	case n <= 0xff:
		buf = append(buf, 0xd9, byte(n))
	case n <= 0xffff:
		buf = append(buf, 0xda)
		buf = binary.BigEndian.AppendUint16(buf, uint16(n))
	default:
		buf = append(buf, 0xdb)
		buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	}
	return append(buf, s...)
}

// packNumber appends f as an integer when it is one that fits in 64 bits,
// else as a float 32 when that holds it exactly, else as a float 64.
func packNumber(buf []byte, f float64) []byte {
	if !math.IsInf(f, 0) && float64(cInt64(f)) == f {
		return packInt(buf, cInt64(f))
	}
	if f32 := float32(f); float64(f32) == f {
		buf = append(buf, 0xca)
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(f32))
	}
	buf = append(buf, 0xcb)
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(f))
}

// packInt appends n in the shortest of MessagePack's integer forms, unsigned
// ones for n >= 0.
func packInt(buf []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= 127:
		return append(buf, byte(n))
	case n >= 0 && n <= 0xff:
		return append(buf, 0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(buf, 0xcd), uint16(n))
	case n >= 0 && n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(buf, 0xce), uint32(n))
	case n >= 0:
		return binary.BigEndian.AppendUint64(append(buf, 0xcf), uint64(n))
	case n >= -32:
		return append(buf, byte(n))
	case n >= -128:
		return append(buf, 0xd0, byte(n))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(buf, 0xd1), uint16(n))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(buf, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(buf, 0xd3), uint64(n))
}

// packTable appends t as an array when its keys are exactly 1 to n, else as
// a map.
func packTable(buf []byte, t *lua.LTable, level int) []byte {
	if n, ok := tableArrayLength(t); ok {
		buf = packHeader(buf, n, 0x90, 0xdc, 0xdd)
		for i := 1; i <= n; i++ {
			buf = packValue(buf, t.RawGetInt(i), level+1)
		}
		return buf
	}
	n := 0
	t.ForEach(func(_, _ lua.LValue) { n++ })
	buf = packHeader(buf, n, 0x80, 0xde, 0xdf)
	t.ForEach(func(k, v lua.LValue) {
		buf = packValue(buf, k, level+1)
		buf = packValue(buf, v, level+1)
	})
	return buf
}

// tableArrayLength reports whether t's keys are exactly the integers 1 to
// n, and n. Keys are checked to be integers as a C int holds them.
func tableArrayLength(t *lua.LTable) (int, bool) {
	count, max := 0, 0
	ok := true
	t.ForEach(func(k, _ lua.LValue) {
		n, isNum := k.(lua.LNumber)
		if !ok || !isNum || n <= 0 || float64(cInt32(float64(n))) != float64(n) {
			ok = false
			return
		}
		if int(n) > max {
			max = int(n)
		}
		count++
	})
	return count, ok && max == count
}

// packHeader appends the header of an array or map of n entries: the fix
// form whose tag is fix when n < 16, else the 16 or 32 bit form.
func packHeader(buf []byte, n int, fix, tag16, tag32 byte) []byte {
	switch {
	case n <= 15:
		return append(buf, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(buf, tag16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(buf, tag32), uint32(n))
}

// ===== Unpacking =====

// msgpackUnpack is cmsgpack.unpack(data): every value data holds.
func msgpackUnpack(L *lua.LState) int {
	return unpackValues(L, 0, 0)
}

// msgpackUnpackOne is cmsgpack.unpack_one(data[, offset]): the offset of
// the next value (-1 at the end) and the value at offset.
func msgpackUnpackOne(L *lua.LState) int {
	offset := optInteger(L, 2, 0)
	L.SetTop(1)
	return unpackValues(L, 1, offset)
}

// msgpackUnpackLimit is cmsgpack.unpack_limit(data, limit[, offset]): the
// offset of the next value (-1 at the end) and up to limit values from
// offset. A limit and offset of 0 unpack everything, as unpack does.
func msgpackUnpackLimit(L *lua.LState) int {
	limit := checkInteger(L, 2)
	offset := optInteger(L, 3, 0)
	L.SetTop(1)
	return unpackValues(L, limit, offset)
}

// unpackValues pushes up to limit values decoded from argument 1 from
// offset. Unless both limit and offset are 0, it first pushes the offset
// after the last value read, -1 when that is the end.
func unpackValues(L *lua.LState, limit, offset int64) int {
	data := checkString(L, 1)
	all := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		raise(L, "Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(data)))
	}
	if offset > int64(len(data)) {
		raise(L, "Start offset %d greater than input length %d.", int32(offset), int32(len(data)))
	}
	if all {
		limit = math.MaxInt32
	}
	u := &msgpackUnpacker{L: L, data: data, pos: int(offset)}
	base := L.GetTop()
	var values []lua.LValue
	for count := int64(0); u.pos < len(data) && count < limit; count++ {
		v, err := u.value(base + len(values))
		switch err {
		case errMsgpackEOF:
			raise(L, "Missing bytes in input.")
		case errMsgpackFormat:
			raise(L, "Bad data format in input.")
		}
		values = append(values, v)
	}
	if !all {
		if base+len(values)+1 > maxCStack {
			raise(L, "stack overflow (in function mp_unpack_full)")
		}
		next := int64(u.pos)
		if u.pos == len(data) {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range values {
		L.Push(v)
	}
	if all {
		return len(values)
	}
	return len(values) + 1
}

// msgpackError is why unpacking stopped.
type msgpackError int

const (
	errMsgpackNone msgpackError = iota
	errMsgpackEOF
	errMsgpackFormat
)

// msgpackUnpacker reads MessagePack values from data, starting at pos.
type msgpackUnpacker struct {
	L    *lua.LState
	data string
	pos  int
}

// need reports whether n more bytes are there to read.
func (u *msgpackUnpacker) need(n uint64) bool {
	return uint64(len(u.data)-u.pos) >= n
}

// uint reads the big-endian unsigned integer of size bytes after the type
// byte at pos.
func (u *msgpackUnpacker) uint(size int) uint64 {
	var v uint64
	for i := 1; i <= size; i++ {
		v = v<<8 | uint64(u.data[u.pos+i])
	}
	return v
}

// fixed reads a value whose encoding is a type byte and size bytes, which
// conv turns into a Lua value.
func (u *msgpackUnpacker) fixed(size int, conv func(uint64) lua.LValue) (lua.LValue, msgpackError) {
	if !u.need(uint64(1 + size)) {
		return nil, errMsgpackEOF
	}
	v := conv(u.uint(size))
	u.pos += 1 + size
	return v, errMsgpackNone
}

// value reads one value. slots counts the Lua stack slots the C library
// would be using, which bounds how many values and how deep it can go.
func (u *msgpackUnpacker) value(slots int) (lua.LValue, msgpackError) {
	if !u.need(1) {
		return nil, errMsgpackEOF
	}
	if slots+1 > maxCStack {
		raise(u.L, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)")
	}
	number := func(f float64) lua.LValue { return lua.LNumber(f) }
	switch c := u.data[u.pos]; {
	case c == 0xcc, c == 0xcd, c == 0xce:
		return u.fixed(1<<(c-0xcc), func(v uint64) lua.LValue { return number(float64(v)) })
	case c == 0xcf:
		return u.fixed(8, func(v uint64) lua.LValue { return number(float64(int64(v))) })
	case c == 0xd0:
		return u.fixed(1, func(v uint64) lua.LValue { return number(float64(int8(v))) })
	case c == 0xd1:
		return u.fixed(2, func(v uint64) lua.LValue { return number(float64(int16(v))) })
	case c == 0xd2:
		return u.fixed(4, func(v uint64) lua.LValue { return number(float64(int32(v))) })
	case c == 0xd3:
		return u.fixed(8, func(v uint64) lua.LValue { return number(float64(int64(v))) })
	case c == 0xc0:
		u.pos++
		return lua.LNil, errMsgpackNone
	case c == 0xc2, c == 0xc3:
		u.pos++
		return lua.LBool(c == 0xc3), errMsgpackNone
	case c == 0xca:
		return u.fixed(4, func(v uint64) lua.LValue { return number(float64(math.Float32frombits(uint32(v)))) })
	case c == 0xcb:
		return u.fixed(8, func(v uint64) lua.LValue { return number(math.Float64frombits(v)) })
	case c == 0xd9, c == 0xda, c == 0xdb:
		return u.str(1 << (c - 0xd9))
	case c == 0xdc, c == 0xdd:
		return u.container(2<<(c-0xdc), slots, u.array)
	case c == 0xde, c == 0xdf:
		return u.container(2<<(c-0xde), slots, u.mapping)
	case c&0x80 == 0:
		u.pos++
		return number(float64(c)), errMsgpackNone
	case c&0xe0 == 0xe0:
		u.pos++
		return number(float64(int8(c))), errMsgpackNone
	case c&0xe0 == 0xa0:
		return u.fixStr(int(c & 0x1f))
	case c&0xf0 == 0x90:
		u.pos++
		return u.array(uint64(c&0xf), slots)
	case c&0xf0 == 0x80:
		u.pos++
		return u.mapping(uint64(c&0xf), slots)
	}
	return nil, errMsgpackFormat
}

// str reads a str whose length is in the size bytes after its type byte.
func (u *msgpackUnpacker) str(size int) (lua.LValue, msgpackError) {
	if !u.need(uint64(1 + size)) {
		return nil, errMsgpackEOF
	}
	n := u.uint(size)
	if !u.need(uint64(1+size) + n) {
		return nil, errMsgpackEOF
	}
	start := u.pos + 1 + size
	u.pos = start + int(n)
	return lua.LString(u.data[start:u.pos]), errMsgpackNone
}

// fixStr reads a fixstr of n bytes.
func (u *msgpackUnpacker) fixStr(n int) (lua.LValue, msgpackError) {
	if !u.need(uint64(1 + n)) {
		return nil, errMsgpackEOF
	}
	s := u.data[u.pos+1 : u.pos+1+n]
	u.pos += 1 + n
	return lua.LString(s), errMsgpackNone
}

// container reads an array or map whose entry count is in the size bytes
// after its type byte, its entries by read.
func (u *msgpackUnpacker) container(size, slots int, read func(uint64, int) (lua.LValue, msgpackError)) (lua.LValue, msgpackError) {
	if !u.need(uint64(1 + size)) {
		return nil, errMsgpackEOF
	}
	n := u.uint(size)
	u.pos += 1 + size
	return read(n, slots)
}

// array reads n values into a table as its elements 1 to n.
func (u *msgpackUnpacker) array(n uint64, slots int) (lua.LValue, msgpackError) {
	t := u.L.NewTable()
	if slots+2 > maxCStack {
		raise(u.L, "stack overflow (in function mp_decode_to_lua_array)")
	}
	for i := uint64(1); i <= n; i++ {
		v, err := u.value(slots + 2)
		if err != errMsgpackNone {
			return nil, err
		}
		t.RawSetInt(int(i), v)
	}
	return t, errMsgpackNone
}

// mapping reads n key and value pairs into a table. As in Lua, a pair whose
// key is nil raises an error and one whose value is nil sets nothing.
func (u *msgpackUnpacker) mapping(n uint64, slots int) (lua.LValue, msgpackError) {
	t := u.L.NewTable()
	for i := uint64(0); i < n; i++ {
		k, err := u.value(slots + 1)
		if err != errMsgpackNone {
			return nil, err
		}
		v, err := u.value(slots + 2)
		if err != errMsgpackNone {
			return nil, err
		}
		setTableEntry(u.L, t, k, v)
	}
	return t, errMsgpackNone
}

// setTableEntry sets t[k] = v as lua_settable does for a table without a
// metatable, raising Lua 5.1's errors for a nil or NaN key.
func setTableEntry(L *lua.LState, t *lua.LTable, k, v lua.LValue) {
	switch key := k.(type) {
	case *lua.LNilType:
		raise(L, "table index is nil")
	case lua.LNumber:
		if math.IsNaN(float64(key)) {
			raise(L, "table index is NaN")
		}
	}
	t.RawSet(k, v)
}
