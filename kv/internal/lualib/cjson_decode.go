package lualib

import (
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// jsonTokenKind is the kind of a token of JSON text.
type jsonTokenKind int

const (
	tokObjBegin jsonTokenKind = iota
	tokObjEnd
	tokArrBegin
	tokArrEnd
	tokString
	tokNumber
	tokBoolean
	tokNull
	tokColon
	tokComma
	tokEnd
	tokError
)

// jsonTokenNames are the names decode's errors give the kinds of token
// found where another was expected.
var jsonTokenNames = [...]string{
	tokObjBegin: "T_OBJ_BEGIN",
	tokObjEnd:   "T_OBJ_END",
	tokArrBegin: "T_ARR_BEGIN",
	tokArrEnd:   "T_ARR_END",
	tokString:   "T_STRING",
	tokNumber:   "T_NUMBER",
	tokBoolean:  "T_BOOLEAN",
	tokNull:     "T_NULL",
	tokColon:    "T_COLON",
	tokComma:    "T_COMMA",
	tokEnd:      "T_END",
	tokError:    "T_ERROR",
}

// jsonToken is one token: its kind, where it starts, and its value.
type jsonToken struct {
	kind   jsonTokenKind
	index  int
	str    string // a string's value, or an error token's reason
	number float64
	truth  bool
}

// jsonDecoder reads JSON text into Lua values. As the C library reads a
// NUL-terminated string, a NUL byte in the text ends it.
type jsonDecoder struct {
	L     *lua.LState
	cfg   *cjsonConfig
	data  string
	pos   int
	depth int
}

// decode is cjson.decode(text): the Lua value of the JSON text.
func (c *cjsonConfig) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "expected 1 argument")
	}
	d := &jsonDecoder{L: L, cfg: c, data: checkString(L, 1)}
	if len(d.data) >= 2 && (d.data[0] == 0 || d.data[1] == 0) {
		raise(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	tok := d.next()
	v := d.value(tok, 1)
	if tok = d.next(); tok.kind != tokEnd {
		d.fail("the end", tok)
	}
	L.Push(v)
	return 1
}

// at is the byte at position i of the text, NUL at its end.
func (d *jsonDecoder) at(i int) byte { return byteAt(d.data, i) }

// fail raises decode's syntax error: what was expected and what was found.
func (d *jsonDecoder) fail(expected string, tok jsonToken) {
	found := jsonTokenNames[tok.kind]
	if tok.kind == tokError {
		found = tok.str
	}
	raise(d.L, "Expected %s but found %s at character %d", expected, found, tok.index+1)
}

// errorToken is a token standing for a lexical error at the current position.
func (d *jsonDecoder) errorToken(reason string) jsonToken {
	return jsonToken{kind: tokError, index: d.pos, str: reason}
}

// next reads the next token, skipping white space.
func (d *jsonDecoder) next() jsonToken {
	for {
		c := d.at(d.pos)
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		d.pos++
	}
	start := d.pos
	single := func(kind jsonTokenKind) jsonToken {
		d.pos++
		return jsonToken{kind: kind, index: start}
	}
	switch c := d.at(d.pos); {
	case c == 0:
		return jsonToken{kind: tokEnd, index: start}
	case c == '{':
		return single(tokObjBegin)
	case c == '}':
		return single(tokObjEnd)
	case c == '[':
		return single(tokArrBegin)
	case c == ']':
		return single(tokArrEnd)
	case c == ',':
		return single(tokComma)
	case c == ':':
		return single(tokColon)
	case c == '"':
		return d.stringToken()
	case c == '-' || isDigit(c):
		if !d.cfg.decodeInvalid && d.isInvalidNumber() {
			return d.errorToken("invalid number")
		}
		return d.numberToken()
	case strings.HasPrefix(d.data[start:], "true"):
		d.pos += 4
		return jsonToken{kind: tokBoolean, index: start, truth: true}
	case strings.HasPrefix(d.data[start:], "false"):
		d.pos += 5
		return jsonToken{kind: tokBoolean, index: start}
	case strings.HasPrefix(d.data[start:], "null"):
		d.pos += 4
		return jsonToken{kind: tokNull, index: start}
	case c == '+' || c == 'i' || c == 'I' || c == 'n' || c == 'N':
		if d.cfg.decodeInvalid && d.isInvalidNumber() {
			return d.numberToken()
		}
	}
	return d.errorToken("invalid token")
}

// isInvalidNumber reports whether the number at the current position is one
// strtod reads but JSON does not allow: a leading "+", hexadecimal, leading
// zeros, infinity or NaN.
func (d *jsonDecoder) isInvalidNumber() bool {
	p := d.pos
	if d.at(p) == '+' {
		return true
	}
	if d.at(p) == '-' {
		p++
	}
	if d.at(p) == '0' {
		next := d.at(p + 1)
		return next|0x20 == 'x' || isDigit(next)
	}
	if d.at(p) <= '9' {
		return false
	}
	rest := d.data[min(p, len(d.data)):]
	return hasPrefixFold(rest, "inf") || hasPrefixFold(rest, "nan")
}

// numberToken reads a number as strtod does.
func (d *jsonDecoder) numberToken() jsonToken {
	f, n := strtod(cString(d.data[d.pos:]), 0)
	if n == 0 {
		return d.errorToken("invalid number")
	}
	start := d.pos
	d.pos += n
	return jsonToken{kind: tokNumber, index: start, number: f}
}

// stringToken reads a string, translating its escapes. Bytes that are not
// escapes are kept as they are, whatever they are but NUL.
func (d *jsonDecoder) stringToken() jsonToken {
	start := d.pos
	d.pos++
	var b strings.Builder
	for {
		c := d.at(d.pos)
		switch {
		case c == '"':
			d.pos++
			return jsonToken{kind: tokString, index: start, str: b.String()}
		case c == 0:
			return d.errorToken("unexpected end of string")
		case c != '\\':
			b.WriteByte(c)
			d.pos++
			continue
		}
		esc := d.at(d.pos + 1)
		if esc == 'u' {
			if !d.unicodeEscape(&b) {
				return d.errorToken("invalid unicode escape code")
			}
			continue
		}
		r, ok := jsonUnescapes[esc]
		if !ok {
			return d.errorToken("invalid escape code")
		}
		b.WriteByte(r)
		d.pos += 2
	}
}

// jsonUnescapes maps the letter of each single-letter escape to its byte.
var jsonUnescapes = map[byte]byte{
	'"': '"', '\\': '\\', '/': '/', 'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r',
}

// hex4 is the value of the four hexadecimal digits at position i, or -1.
func (d *jsonDecoder) hex4(i int) int {
	v := 0
	for j := 0; j < 4; j++ {
		c := d.at(i + j)
		var digit int
		switch {
		case isDigit(c):
			digit = int(c - '0')
		case (c|0x20) >= 'a' && (c|0x20) <= 'f':
			digit = int(c|0x20-'a') + 10
		default:
			return -1
		}
		v = v<<4 | digit
	}
	return v
}

// unicodeEscape translates the \uXXXX escape at the current position, or a
// pair of them making a UTF-16 surrogate pair, into UTF-8. It reports false
// for a malformed escape or a lone surrogate.
func (d *jsonDecoder) unicodeEscape(b *strings.Builder) bool {
	cp := d.hex4(d.pos + 2)
	if cp < 0 {
		return false
	}
	length := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 || d.at(d.pos+6) != '\\' || d.at(d.pos+7) != 'u' {
			return false
		}
		low := d.hex4(d.pos + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = ((cp&0x3FF)<<10 | low&0x3FF) + 0x10000
		length = 12
	}
	var enc [4]byte
	b.Write(enc[:utf8.EncodeRune(enc[:], rune(cp))])
	d.pos += length
	return true
}

// value turns tok, and for an array or object the tokens after it, into a
// Lua value. slots counts the Lua stack slots the C library would be using.
func (d *jsonDecoder) value(tok jsonToken, slots int) lua.LValue {
	switch tok.kind {
	case tokString:
		return lua.LString(tok.str)
	case tokNumber:
		return lua.LNumber(tok.number)
	case tokBoolean:
		return lua.LBool(tok.truth)
	case tokNull:
		return d.cfg.null
	case tokObjBegin:
		return d.object(slots)
	case tokArrBegin:
		return d.array(slots)
	}
	d.fail("value", tok)
	return nil
}

// descend enters an array or object, failing when that nests too deep.
// need is the stack slots the C library checks for at this point.
func (d *jsonDecoder) descend(slots, need int) {
	d.depth++
	if d.depth > int(d.cfg.decodeMaxDepth) || slots+need > maxCStack {
		raise(d.L, "Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}

// object reads the members of an object whose "{" was read.
func (d *jsonDecoder) object(slots int) lua.LValue {
	d.descend(slots, 3)
	t := d.L.NewTable()
	tok := d.next()
	if tok.kind == tokObjEnd {
		d.depth--
		return t
	}
	for {
		if tok.kind != tokString {
			d.fail("object key string", tok)
		}
		key := tok.str
		if tok = d.next(); tok.kind != tokColon {
			d.fail("colon", tok)
		}
		t.RawSetString(key, d.value(d.next(), slots+2))
		tok = d.next()
		if tok.kind == tokObjEnd {
			d.depth--
			return t
		}
		if tok.kind != tokComma {
			d.fail("comma or object end", tok)
		}
		tok = d.next()
	}
}

// array reads the elements of an array whose "[" was read.
func (d *jsonDecoder) array(slots int) lua.LValue {
	d.descend(slots, 2)
	t := d.L.NewTable()
	tok := d.next()
	if tok.kind == tokArrEnd {
		d.depth--
		return t
	}
	for i := 1; ; i++ {
		t.RawSetInt(i, d.value(tok, slots+1))
		tok = d.next()
		if tok.kind == tokArrEnd {
			d.depth--
			return t
		}
		if tok.kind != tokComma {
			d.fail("comma or array end", tok)
		}
		tok = d.next()
	}
}
