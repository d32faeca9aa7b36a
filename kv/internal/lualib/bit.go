package lualib

import (
	"math"
	"math/bits"

	lua "github.com/yuin/gopher-lua"
)

// newBitModule makes the bit module table: LuaBitOp's operations on 32-bit
// integers.
func newBitModule(L *lua.LState) *lua.LTable {
	return newModule(L, map[string]lua.LGFunction{
		"tobit":   bitUnary(func(b uint32) uint32 { return b }),
		"bnot":    bitUnary(func(b uint32) uint32 { return ^b }),
		"band":    bitFold(func(a, b uint32) uint32 { return a & b }),
		"bor":     bitFold(func(a, b uint32) uint32 { return a | b }),
		"bxor":    bitFold(func(a, b uint32) uint32 { return a ^ b }),
		"lshift":  bitShift(func(b uint32, n uint) uint32 { return b << n }),
		"rshift":  bitShift(func(b uint32, n uint) uint32 { return b >> n }),
		"arshift": bitShift(func(b uint32, n uint) uint32 { return uint32(int32(b) >> n) }),
		"rol":     bitShift(func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, int(n)) }),
		"ror":     bitShift(func(b uint32, n uint) uint32 { return bits.RotateLeft32(b, -int(n)) }),
		"bswap":   bitUnary(bits.ReverseBytes32),
		"tohex":   bitToHex,
	})
}

// bitArg is argument n as a 32-bit integer: the number (or numeric string)
// taken modulo 2^32, rounding a fraction to the nearest integer as adding
// 2^52+2^51 to it does. Anything else raises a type error.
func bitArg(L *lua.LState, n int) uint32 {
	f, ok := toNumber(L.Get(n))
	b := uint32(math.Float64bits(f + 6755399441055744.0))
	if b == 0 && !ok {
		typeError(L, n, "number")
	}
	return b
}

// bitResult pushes b as a signed 32-bit number, as LuaBitOp returns it.
func bitResult(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(float64(int32(b))))
	return 1
}

// bitUnary makes a function of one argument applying op to it.
func bitUnary(op func(uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		return bitResult(L, op(bitArg(L, 1)))
	}
}

// bitFold makes a function folding op over all its arguments, which it
// reads from the last to the second, as LuaBitOp does.
func bitFold(op func(a, b uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := bitArg(L, 1)
		for i := L.GetTop(); i > 1; i-- {
			b = op(b, bitArg(L, i))
		}
		return bitResult(L, b)
	}
}

// bitShift makes a function shifting or rotating its first argument by its
// second modulo 32.
func bitShift(op func(b uint32, n uint) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := bitArg(L, 1)
		n := bitArg(L, 2) & 31
		return bitResult(L, op(b, uint(n)))
	}
}

// bitToHex is bit.tohex(x[, n]): the low |n| hexadecimal digits of x, 8 by
// default and at most 8, in upper case when n is negative.
func bitToHex(L *lua.LState) int {
	b := bitArg(L, 1)
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(bitArg(L, 2))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		if n == math.MinInt32 {
			raise(L, "not enough memory")
		}
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	out := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		out[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(out))
	return 1
}
