package lualib

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// jsonEscapes holds, for each byte a JSON string may not hold as it is,
// what encode writes instead; "" for bytes written unchanged.
var jsonEscapes = func() [256]string {
	var e [256]string
	for c := 0; c < 0x20; c++ {
		e[c] = `\u00` + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])
	}
	e['\b'], e['\t'], e['\n'], e['\f'], e['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	e['"'], e['\\'], e['/'] = `\"`, `\\`, `\/`
	e[0x7f] = `\u007f`
	return e
}()

// jsonEncoder writes one value as JSON under the settings of its module.
type jsonEncoder struct {
	L   *lua.LState
	cfg *cjsonConfig
	buf strings.Builder
}

// encode is cjson.encode(value): the JSON text for value.
func (c *cjsonConfig) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "expected 1 argument")
	}
	e := &jsonEncoder{L: L, cfg: c}
	e.value(L.Get(1), 0, 1)
	L.Push(lua.LString(e.buf.String()))
	return 1
}

// fail raises encode's error about a value of type typ.
func (e *jsonEncoder) fail(typ, reason string) {
	raise(e.L, "Cannot serialise %s: %s", typ, reason)
}

// value writes v, found at the given table nesting depth. slots counts the
// Lua stack slots the C library would be using at this point, which bounds
// how deep it can go.
func (e *jsonEncoder) value(v lua.LValue, depth, slots int) {
	switch x := v.(type) {
	case lua.LString:
		e.string(string(x))
	case lua.LNumber:
		e.number(float64(x), "number")
	case lua.LBool:
		if x {
			e.buf.WriteString("true")
		} else {
			e.buf.WriteString("false")
		}
	case *lua.LNilType:
		e.buf.WriteString("null")
	case *lua.LTable:
		e.table(x, depth+1, slots)
	case *lua.LUserData:
		if x != e.cfg.null {
			e.fail("userdata", "type not supported")
		}
		e.buf.WriteString("null")
	default:
		e.fail(valueTypeName(v), "type not supported")
	}
}

// string writes s as a JSON string.
func (e *jsonEncoder) string(s string) {
	e.buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if esc := jsonEscapes[s[i]]; esc != "" {
			e.buf.WriteString(esc)
		} else {
			e.buf.WriteByte(s[i])
		}
	}
	e.buf.WriteByte('"')
}

// number writes f in "%.<precision>g" form, dealing with NaN and the
// infinities as encode_invalid_numbers says. typ names what f is for the
// error when they are refused.
func (e *jsonEncoder) number(f float64, typ string) {
	invalid := math.IsNaN(f) || math.IsInf(f, 0)
	switch e.cfg.encodeInvalid {
	case 0:
		if invalid {
			e.fail(typ, "must not be NaN or Inf")
		}
	case 1:
		if math.IsNaN(f) {
			e.buf.WriteString("nan")
			return
		}
	default:
		if invalid {
			e.buf.WriteString("null")
			return
		}
	}
	e.buf.WriteString(FormatG(f, int(e.cfg.numberPrecision)))
}

// table writes t, an array when arrayLength finds it is one and an object
// otherwise.
func (e *jsonEncoder) table(t *lua.LTable, depth, slots int) {
	if depth > int(e.cfg.encodeMaxDepth) || slots+3 > maxCStack {
		raise(e.L, "Cannot serialise, excessive nesting (%d)", depth)
	}
	if n := e.arrayLength(t); n > 0 {
		e.array(t, n, depth, slots)
	} else {
		e.object(t, depth, slots)
	}
}

// arrayLength is the length to write t with as an array: its largest key
// when all its keys are integers from 1 and it is not too sparse, else 0 or
// less for an object. The largest key is kept in a C int, as the C library
// keeps it, so that huge keys make an object.
func (e *jsonEncoder) arrayLength(t *lua.LTable) int32 {
	var max, items int32
	isArray := true
	t.ForEach(func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !isArray || !ok || n == 0 || math.Floor(float64(n)) != float64(n) || n < 1 {
			isArray = false
			return
		}
		if float64(n) > float64(max) {
			max = cInt32(float64(n))
		}
		items++
	})
	if !isArray {
		return -1
	}
	ratio, safe := e.cfg.sparseRatio, e.cfg.sparseSafe
	if ratio > 0 && max > items*ratio && max > safe {
		if !e.cfg.sparseConvert {
			e.fail("table", "excessively sparse array")
		}
		return -1
	}
	return max
}

// array writes t[1] to t[n] as a JSON array, nil as null.
func (e *jsonEncoder) array(t *lua.LTable, n int32, depth, slots int) {
	e.buf.WriteByte('[')
	for i := int32(1); i <= n; i++ {
		if i > 1 {
			e.buf.WriteByte(',')
		}
		e.value(t.RawGetInt(int(i)), depth, slots+1)
	}
	e.buf.WriteByte(']')
}

// object writes t as a JSON object; its keys must be strings or numbers.
func (e *jsonEncoder) object(t *lua.LTable, depth, slots int) {
	e.buf.WriteByte('{')
	first := true
	t.ForEach(func(k, v lua.LValue) {
		if !first {
			e.buf.WriteByte(',')
		}
		first = false
		switch key := k.(type) {
		case lua.LNumber:
			e.buf.WriteByte('"')
			e.number(float64(key), "number")
			e.buf.WriteString(`":`)
		case lua.LString:
			e.string(string(key))
			e.buf.WriteByte(':')
		default:
			e.fail(valueTypeName(k), "table key must be a number or string")
		}
		e.value(v, depth, slots+2)
	})
	e.buf.WriteByte('}')
}
