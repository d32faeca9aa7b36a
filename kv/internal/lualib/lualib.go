// Package lualib provides, for scripts run by github.com/yuin/gopher-lua, the
// four libraries that Redis 7.0 adds to its Lua 5.1 scripting environment:
// cjson, cmsgpack, struct and bit. Each behaves as the C library bundled with
// Redis 7.0.15 does: the same results, the same choices of encoding and the
// same error messages.
//
// Where the C libraries stop at Lua 5.1's limit of 8000 stack slots for a C
// function (unpacking thousands of values, nesting thousands deep), these
// functions stop at the same points with the same "stack overflow" errors.
// A gopher-lua state whose registry cannot grow (the default) runs out
// before that, with "registry overflow": give the state a RegistryMaxSize
// to have Redis's limits.
package lualib

import (
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// Open registers cjson, cmsgpack, struct and bit as globals of L, as Redis 7.0's scripts have them.
func Open(L *lua.LState) {
	L.SetGlobal("cjson", newCjsonModule(L, newCjsonNull(L)))
	L.SetGlobal("cmsgpack", newCmsgpackModule(L))
	L.SetGlobal("struct", newStructModule(L))
	L.SetGlobal("bit", newBitModule(L))
}

// maxCStack is Lua 5.1's LUAI_MAXCSTACK: the most stack slots a C function
// may use. The C libraries fail with a "stack overflow" error when a deep or
// long input would need more, and this package fails at the same points.
const maxCStack = 8000

// newModule makes a table holding the given functions under their names.
func newModule(L *lua.LState, funcs map[string]lua.LGFunction) *lua.LTable {
	t := L.NewTable()
	for name, fn := range funcs {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// raise raises a Lua error whose message is exactly the formatted text,
// without the position prefix RaiseError would add: the C libraries' errors
// come from C functions, for which Lua adds no position.
func raise(L *lua.LState, format string, args ...any) {
	L.Error(lua.LString(fmt.Sprintf(format, args...)), 0)
}

// funcName is the name the running Go function was called by, as Lua 5.1's
// luaL_argerror finds it, or "?" when the caller gives none: when called by
// Go code (pcall, for one) or from Go as the outermost function.
func funcName(L *lua.LState) string {
	dbg, ok := L.GetStack(0)
	if !ok {
		return "?"
	}
	if _, err := L.GetInfo("n", dbg, lua.LNil); err != nil {
		return "?"
	}
	switch name := dbg.Name; {
	case name == "", name == "(anonymous)", name == "main chunk", name == "corountine", name[0] == '<':
		return "?"
	default:
		return name
	}
}

// argError raises Lua 5.1's "bad argument" error for argument n.
func argError(L *lua.LState, n int, msg string) {
	raise(L, "bad argument #%d to '%s' (%s)", n, funcName(L), msg)
}

// typeError raises the error Lua 5.1 gives when argument n is not of the
// type expected.
func typeError(L *lua.LState, n int, expected string) {
	argError(L, n, fmt.Sprintf("%s expected, got %s", expected, typeName(L, n)))
}

// typeName is Lua 5.1's name for the type of argument n, "no value" when it
// was not given.
func typeName(L *lua.LState, n int) string {
	if n > L.GetTop() {
		return "no value"
	}
	return valueTypeName(L.Get(n))
}

// valueTypeName is Lua 5.1's name for the type of v.
func valueTypeName(v lua.LValue) string {
	return v.Type().String()
}

// toNumber converts v to a number as Lua 5.1's lua_tonumber does: numbers
// as they are, strings when their whole text is a number.
func toNumber(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		return stringToNumber(string(x))
	}
	return 0, false
}

// checkNumber returns argument n as a number, raising Lua 5.1's type error
// when it is not one and is not a string holding one.
func checkNumber(L *lua.LState, n int) float64 {
	f, ok := toNumber(L.Get(n))
	if !ok {
		typeError(L, n, "number")
	}
	return f
}

// checkInteger returns argument n as Lua 5.1's luaL_checkinteger does: the
// number truncated toward zero to 64 bits.
func checkInteger(L *lua.LState, n int) int64 {
	f, ok := toNumber(L.Get(n))
	if !ok {
		typeError(L, n, "number")
	}
	return cInt64(f)
}

// optInteger is checkInteger for an optional argument: def when argument n
// is nil or absent.
func optInteger(L *lua.LState, n int, def int64) int64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkInteger(L, n)
}

// checkString returns argument n as a string, converting a number the way
// Lua 5.1 does ("%.14g"), and raising Lua 5.1's type error otherwise.
func checkString(L *lua.LState, n int) string {
	switch x := L.Get(n).(type) {
	case lua.LString:
		return string(x)
	case lua.LNumber:
		return FormatG(float64(x), 14)
	}
	typeError(L, n, "string")
	return ""
}

// cInt64 converts f to a 64-bit integer as a C cast does on x86-64:
// truncating toward zero, with NaN and values out of range giving the
// smallest integer.
func cInt64(f float64) int64 {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// cInt32 converts f to a 32-bit integer as a C cast does on x86-64.
func cInt32(f float64) int32 {
	if math.IsNaN(f) || f >= 1<<31 || f <= -(1<<31)-1 {
		return math.MinInt32
	}
	return int32(f)
}

// cUint64 converts f to an unsigned 64-bit integer as a C cast does with the
// code gcc emits on x86-64: values below 2^63 through a signed conversion,
// larger ones by offsetting them by 2^63.
func cUint64(f float64) uint64 {
	if !(f >= 1<<63) {
		return uint64(cInt64(f))
	}
	return uint64(cInt64(f-(1<<63))) ^ (1 << 63)
}
