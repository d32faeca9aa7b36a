package lualib

import (
	"errors"
	"math"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// callLib calls lib.name with args in L, failing the test when the call
// panics in Go rather than raising a Lua error. It returns the results, or
// nil and the Lua error.
func callLib(t *testing.T, L *lua.LState, lib, name string, args ...lua.LValue) ([]lua.LValue, error) {
	t.Helper()
	fn := L.GetField(L.GetGlobal(lib), name)
	top := L.GetTop()
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	err := L.PCall(len(args), lua.MultRet, nil)
	if err != nil {
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) && apiErr.Type == lua.ApiErrorPanic {
			t.Fatalf("%s.%s panicked: %v", lib, name, err)
		}
		L.SetTop(top)
		return nil, err
	}
	results := make([]lua.LValue, 0, L.GetTop()-top)
	for i := top + 1; i <= L.GetTop(); i++ {
		results = append(results, L.Get(i))
	}
	L.SetTop(top)
	return results, nil
}

// sameJSONValue reports whether a and b are the same decoded JSON value,
// numbers compared as encode writes them ("%.14g"), since that is all a
// round trip through encode keeps.
func sameJSONValue(a, b lua.LValue) bool {
	switch x := a.(type) {
	case lua.LNumber:
		y, ok := b.(lua.LNumber)
		return ok && FormatG(float64(x), 14) == FormatG(float64(y), 14) ||
			ok && math.IsNaN(float64(x)) && math.IsNaN(float64(y))
	case *lua.LTable:
		y, ok := b.(*lua.LTable)
		if !ok {
			return false
		}
		same := true
		count := 0
		x.ForEach(func(k, v lua.LValue) {
			count++
			if same && !sameJSONValue(v, y.RawGet(k)) {
				same = false
			}
		})
		y.ForEach(func(_, _ lua.LValue) { count-- })
		return same && count == 0
	}
	return a == b
}

// FuzzCjsonDecode checks that decode never panics, and that what it
// decodes encodes to text that decodes to the same value.
func FuzzCjsonDecode(f *testing.F) {
	for _, s := range cjsonDecodeTexts {
		f.Add(s)
	}
	f.Add(`{"a":[1,2,{"b":null,"c":"\u00e9\ud83d\ude00"}],"d":-1.5e-7,"e":true}`)
	f.Add(`[1e400,-1e400,nan,-inf,0x1p3,+5,007]`)
	f.Fuzz(func(t *testing.T, text string) {
		L := lua.NewState()
		defer L.Close()
		Open(L)
		if _, err := callLib(t, L, "cjson", "encode_invalid_numbers", lua.LTrue); err != nil {
			t.Fatal(err)
		}
		decoded, err := callLib(t, L, "cjson", "decode", lua.LString(text))
		if err != nil {
			return
		}
		encoded, err := callLib(t, L, "cjson", "encode", decoded[0])
		if err != nil {
			t.Fatalf("decode(%q) does not encode: %v", text, err)
		}
		again, err := callLib(t, L, "cjson", "decode", encoded[0])
		if err != nil {
			t.Fatalf("encode(decode(%q)) = %q does not decode: %v", text, encoded[0], err)
		}
		if !sameJSONValue(decoded[0], again[0]) {
			t.Fatalf("decode(%q) and decode(encode(it)) = decode(%q) differ", text, encoded[0])
		}
	})
}

// FuzzCmsgpackUnpack checks that unpack, unpack_one and unpack_limit never
// panic, and that what unpack reads packs again.
func FuzzCmsgpackUnpack(f *testing.F) {
	for _, b := range cmsgpackBytes {
		f.Add(b, int64(0), int64(0))
	}
	f.Add("\x93\x01\xa1a\x82\xa1k\xc3\x01\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00", int64(1), int64(2))
	f.Add("\xdc\x00\x02\x90\x80\xc0", int64(-1), int64(5))
	f.Fuzz(func(t *testing.T, data string, limit, offset int64) {
		L := lua.NewState()
		defer L.Close()
		Open(L)
		values, err := callLib(t, L, "cmsgpack", "unpack", lua.LString(data))
		callLib(t, L, "cmsgpack", "unpack_one", lua.LString(data), lua.LNumber(offset))
		callLib(t, L, "cmsgpack", "unpack_limit", lua.LString(data), lua.LNumber(limit), lua.LNumber(offset))
		// pack, as Redis's, takes at most half of Lua's 8000 stack slots
		// of arguments.
		if err != nil || len(values) == 0 || len(values) > maxCStack/2 {
			return
		}
		if _, err := callLib(t, L, "cmsgpack", "pack", values...); err != nil {
			t.Fatalf("unpack(%q) does not pack: %v", data, err)
		}
	})
}

// FuzzStructUnpack checks that unpack, size and pack never panic, whatever
// the format and data.
func FuzzStructUnpack(f *testing.F) {
	for _, s := range []string{"b", "!4bhi>d<f", "c0", "bc0", "s", "xc3i9", "!3", "i33", "c2147483648",
		"!8bxi7", " <>! ", "I16", "z", "\xff", "b\x00h"} {
		f.Add(s, "\x01\x02\x03\x04\x05\x06\x07\x08abc\x00def", int64(1))
	}
	f.Add("hh", "\xff", int64(0))
	f.Add("", "", int64(-5))
	f.Fuzz(func(t *testing.T, format, data string, offset int64) {
		L := lua.NewState()
		defer L.Close()
		Open(L)
		callLib(t, L, "struct", "unpack", lua.LString(format), lua.LString(data), lua.LNumber(offset))
		callLib(t, L, "struct", "unpack", lua.LString(format), lua.LString(data))
		callLib(t, L, "struct", "size", lua.LString(format))
		args := []lua.LValue{lua.LString(format)}
		for i := 0; i < strings.Count(format, "")+1 && i < 64; i++ {
			if i%3 == 2 {
				args = append(args, lua.LString(data))
			} else {
				args = append(args, lua.LNumber(float64(offset)*float64(i+1)))
			}
		}
		callLib(t, L, "struct", "pack", args...)
	})
}
