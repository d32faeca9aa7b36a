package lualib

import (
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// cjsonConfig holds the settings of one cjson module table: the one Open
// registers, or one made by cjson.new.
type cjsonConfig struct {
	sparseConvert   bool
	sparseRatio     int32
	sparseSafe      int32
	encodeMaxDepth  int32
	decodeMaxDepth  int32
	encodeInvalid   int32 // 0 off, 1 on, 2 null
	decodeInvalid   bool
	keepBuffer      bool
	numberPrecision int32
	null            *lua.LUserData
}

// newCjsonNull makes the value standing for JSON null in the modules of one
// state: every module table of the state shares it, as they share the C
// library's NULL light userdata.
func newCjsonNull(L *lua.LState) *lua.LUserData {
	return L.NewUserData()
}

// newCjsonModule makes a cjson module table with default settings.
func newCjsonModule(L *lua.LState, null *lua.LUserData) *lua.LTable {
	cfg := &cjsonConfig{
		sparseRatio:     2,
		sparseSafe:      10,
		encodeMaxDepth:  1000,
		decodeMaxDepth:  1000,
		decodeInvalid:   true,
		keepBuffer:      true,
		numberPrecision: 14,
		null:            null,
	}
	t := newModule(L, map[string]lua.LGFunction{
		"encode":                  cfg.encode,
		"decode":                  cfg.decode,
		"encode_sparse_array":     cfg.setEncodeSparseArray,
		"encode_max_depth":        cfg.setEncodeMaxDepth,
		"decode_max_depth":        cfg.setDecodeMaxDepth,
		"encode_number_precision": cfg.setEncodeNumberPrecision,
		"encode_keep_buffer":      cfg.setEncodeKeepBuffer,
		"encode_invalid_numbers":  cfg.setEncodeInvalidNumbers,
		"decode_invalid_numbers":  cfg.setDecodeInvalidNumbers,
		"new": func(L *lua.LState) int {
			L.Push(newCjsonModule(L, null))
			return 1
		},
	})
	t.RawSetString("null", null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// ===== Settings =====

// checkOptionArgs raises an error when more than max arguments were given,
// and pads the missing ones with nil, so that the settings' values are
// pushed after them.
func checkOptionArgs(L *lua.LState, max int) {
	if L.GetTop() > max {
		argError(L, max+1, "found too many arguments")
	}
	L.SetTop(max)
}

// integerOption sets *setting from argument n when it is given, checking it
// is in [lo, hi], and pushes the setting. As in the C library, a value out
// of range is reported against argument 1 whatever n is.
func integerOption(L *lua.LState, n int, setting *int32, lo, hi int32) {
	if L.Get(n) != lua.LNil {
		v := int32(checkInteger(L, n))
		if v < lo || v > hi {
			argError(L, 1, fmt.Sprintf("expected integer between %d and %d", lo, hi))
		}
		*setting = v
	}
	L.Push(lua.LNumber(*setting))
}

// enumOption sets *setting from argument n when it is given: a boolean
// (false 0, true 1) or the name of one of options. It pushes the setting,
// as a boolean when it is 0 or 1, else as its name.
func enumOption(L *lua.LState, n int, setting *int32, options []string) {
	switch v := L.Get(n).(type) {
	case *lua.LNilType:
	case lua.LBool:
		*setting = 0
		if v {
			*setting = 1
		}
	default:
		*setting = int32(checkOption(L, n, options))
	}
	if *setting <= 1 {
		L.Push(lua.LBool(*setting == 1))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
}

// checkOption returns the index in options of argument n, a string, as
// Lua 5.1's luaL_checkoption does.
func checkOption(L *lua.LState, n int, options []string) int {
	name := cString(checkString(L, n))
	for i, o := range options {
		if o == name {
			return i
		}
	}
	argError(L, n, fmt.Sprintf("invalid option '%s'", name))
	return 0
}

// cString is s up to its first NUL byte, as C code reading it sees it.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// onOff are the names of the two states of an on/off setting.
var onOff = []string{"off", "on"}

// boolOption is enumOption for a setting that is on or off.
func boolOption(L *lua.LState, n int, setting *bool) {
	v := int32(0)
	if *setting {
		v = 1
	}
	enumOption(L, n, &v, onOff)
	*setting = v == 1
}

// setEncodeSparseArray is cjson.encode_sparse_array([convert[, ratio[,
// safe]]]): how encode treats tables whose integer keys leave many holes. It
// returns the three settings.
func (c *cjsonConfig) setEncodeSparseArray(L *lua.LState) int {
	checkOptionArgs(L, 3)
	boolOption(L, 1, &c.sparseConvert)
	integerOption(L, 2, &c.sparseRatio, 0, math.MaxInt32)
	integerOption(L, 3, &c.sparseSafe, 0, math.MaxInt32)
	return 3
}

// setEncodeMaxDepth is cjson.encode_max_depth([depth]).
func (c *cjsonConfig) setEncodeMaxDepth(L *lua.LState) int {
	checkOptionArgs(L, 1)
	integerOption(L, 1, &c.encodeMaxDepth, 1, math.MaxInt32)
	return 1
}

// setDecodeMaxDepth is cjson.decode_max_depth([depth]).
func (c *cjsonConfig) setDecodeMaxDepth(L *lua.LState) int {
	checkOptionArgs(L, 1)
	integerOption(L, 1, &c.decodeMaxDepth, 1, math.MaxInt32)
	return 1
}

// setEncodeNumberPrecision is cjson.encode_number_precision([digits]).
func (c *cjsonConfig) setEncodeNumberPrecision(L *lua.LState) int {
	checkOptionArgs(L, 1)
	integerOption(L, 1, &c.numberPrecision, 1, 14)
	return 1
}

// setEncodeKeepBuffer is cjson.encode_keep_buffer([on]). The setting only
// concerns the C library's memory; it is kept and reported, nothing more.
func (c *cjsonConfig) setEncodeKeepBuffer(L *lua.LState) int {
	checkOptionArgs(L, 1)
	boolOption(L, 1, &c.keepBuffer)
	return 1
}

// setEncodeInvalidNumbers is cjson.encode_invalid_numbers([setting]):
// whether encode refuses NaN and infinities (false, "off"), writes them
// (true, "on") or writes them as null ("null").
func (c *cjsonConfig) setEncodeInvalidNumbers(L *lua.LState) int {
	checkOptionArgs(L, 1)
	enumOption(L, 1, &c.encodeInvalid, []string{"off", "on", "null"})
	return 1
}

// setDecodeInvalidNumbers is cjson.decode_invalid_numbers([on]): whether
// decode accepts numbers JSON does not (hexadecimal, NaN, Infinity, a
// leading "+" or leading zeros).
func (c *cjsonConfig) setDecodeInvalidNumbers(L *lua.LState) int {
	checkOptionArgs(L, 1)
	boolOption(L, 1, &c.decodeInvalid)
	return 1
}
