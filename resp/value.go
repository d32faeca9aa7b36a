package resp

import (
	"bytes"
	"math"
	"strconv"
)

// Type is a RESP type, named by the byte that starts a value of that type.
type Type byte

// The RESP2 types, then the types RESP3 added.
const (
	SimpleString Type = '+'
	Error        Type = '-'
	Integer      Type = ':'
	BulkString   Type = '$'
	Array        Type = '*'

	Null      Type = '_'
	Boolean   Type = '#'
	Double    Type = ','
	BigNumber Type = '('
	BulkError Type = '!'
	Verbatim  Type = '='
	Map       Type = '%'
	Set       Type = '~'
	Push      Type = '>'
	Attribute Type = '|'
)

// String returns the type's name, such as "BulkString", or its byte quoted
// if it is no RESP type.
func (t Type) String() string {
	switch t {
	case SimpleString:
		return "SimpleString"
	case Error:
		return "Error"
	case Integer:
		return "Integer"
	case BulkString:
		return "BulkString"
	case Array:
		return "Array"
	case Null:
		return "Null"
	case Boolean:
		return "Boolean"
	case Double:
		return "Double"
	case BigNumber:
		return "BigNumber"
	case BulkError:
		return "BulkError"
	case Verbatim:
		return "Verbatim"
	case Map:
		return "Map"
	case Set:
		return "Set"
	case Push:
		return "Push"
	case Attribute:
		return "Attribute"
	}
	return "Type(" + strconv.QuoteRune(rune(t)) + ")"
}

// Value is one parsed RESP2 or RESP3 value: what a client reads. Which
// fields are set depends on Type. A Value is plain data; its byte slices
// point into the input it was parsed from.
type Value struct {
	// Type is the value's type. Parse never returns Attribute: attributes
	// go to Attrs of the value they come before.
	Type Type
	// Str is the text of a SimpleString, Error, BulkString, BulkError or
	// BigNumber, a Verbatim string's text without its "xxx:" prefix, and a
	// Double's text as it was sent.
	Str []byte
	// Format is a Verbatim string's three-letter format, such as "txt" or
	// "mkd".
	Format string
	// Int is an Integer's value.
	Int int64
	// Float is a Double's value; "inf", "-inf" and "nan" are accepted.
	Float float64
	// Bool is a Boolean's value.
	Bool bool
	// IsNull marks RESP3's null (Type Null) and RESP2's null bulk string
	// ("$-1", Type BulkString) and null array ("*-1", Type Array).
	IsNull bool
	// Elems are the elements of an Array, Set or Push, and a Map's keys and
	// values, alternating.
	Elems []Value
	// Attrs are the keys and values, alternating, of the attributes ("|")
	// that came before this value.
	Attrs []Value
}

// maxDepth bounds how deeply Parse follows nested aggregates, so that
// hostile input cannot exhaust the stack.
const maxDepth = 512

// maxAggregate bounds the elements an aggregate value may declare. Parse
// allocates for elements as they arrive, not as declared.
const maxAggregate = math.MaxInt32

// Parse parses the RESP2 or RESP3 value at the start of b and returns it
// with n, the number of bytes it took. Attributes before the value (and
// before any element within it) go to the Attrs of the value they precede.
//
// Input holding only the beginning of a value, however it is split, returns
// a zero Value, 0, ErrIncomplete. Malformed input returns a *ProtocolError,
// and so do aggregates nested more than 512 deep and aggregates declaring
// more than 2^31-1 elements. Elements are allocated for as they arrive, not
// as declared.
//
// The byte slices in v point into b and stay valid as long as b is not
// modified. Parse is safe for concurrent use.
func Parse(b []byte) (v Value, n int, err error) {
	if n, err = parseValue(b, 0, 0, &v); err != nil {
		return Value{}, 0, err
	}
	return v, n, nil
}

// parseValue parses the value, with any attributes before it, at b[pos],
// nested depth deep, into *v, which is zero. It returns the position after
// the value.
func parseValue(b []byte, pos, depth int, v *Value) (int, error) {
	for pos < len(b) && b[pos] == byte(Attribute) {
		var err error
		if v.Attrs, pos, err = parseAggregate(b, pos, depth, v.Attrs); err != nil {
			return 0, err
		}
	}
	if pos == len(b) {
		return 0, ErrIncomplete
	}
	v.Type = Type(b[pos])
	switch v.Type {
	case SimpleString, Error:
		end, err := lineEnd(b, pos)
		if err != nil {
			return 0, err
		}
		v.Str = b[pos+1 : end : end]
		return end + 2, nil

	case Integer:
		end, err := lineEnd(b, pos)
		if err != nil {
			return 0, err
		}
		var ok bool
		if v.Int, ok = parseInt(b[pos+1 : end]); !ok {
			return 0, errInteger
		}
		return end + 2, nil

	case Null:
		end, err := lineEnd(b, pos)
		if err != nil {
			return 0, err
		}
		if end != pos+1 {
			return 0, errNull
		}
		v.IsNull = true
		return end + 2, nil

	case Boolean:
		end, err := lineEnd(b, pos)
		if err != nil {
			return 0, err
		}
		switch string(b[pos+1 : end]) {
		case "t":
			v.Bool = true
		case "f":
		default:
			return 0, errBoolean
		}
		return end + 2, nil

	case Double:
		end, err := lineEnd(b, pos)
		if err != nil {
			return 0, err
		}
		var ok bool
		v.Str = b[pos+1 : end : end]
		if v.Float, ok = parseDouble(v.Str); !ok {
			return 0, errDouble
		}
		return end + 2, nil

	case BigNumber:
		end, err := lineEnd(b, pos)
		if err != nil {
			return 0, err
		}
		v.Str = b[pos+1 : end : end]
		if !isBigNumber(v.Str) {
			return 0, errBigNumber
		}
		return end + 2, nil

	case BulkString, BulkError, Verbatim:
		start, end, err := parseBulk(b, pos, v.Type == BulkString)
		if err != nil {
			return 0, err
		}
		if start < 0 {
			v.IsNull = true
			return end, nil
		}
		v.Str = b[start:end:end]
		if v.Type == Verbatim {
			if len(v.Str) < 4 || v.Str[3] != ':' {
				return 0, errVerbatim
			}
			v.Format = verbatimFormat(v.Str[:3])
			v.Str = v.Str[4:]
		}
		return end + 2, nil

	case Array, Set, Push, Map:
		if v.Type == Array {
			if end, null, err := nullArray(b, pos); null || err != nil {
				v.IsNull = true
				return end, err
			}
		}
		var err error
		v.Elems, pos, err = parseAggregate(b, pos, depth, nil)
		return pos, err
	}
	return 0, errUnknownType(b[pos])
}

// parseAggregate parses the aggregate (or attribute) at b[pos], nested
// depth deep, appending its elements to elems; a Map or Attribute of n pairs
// has 2n elements. It returns the position after the aggregate.
func parseAggregate(b []byte, pos, depth int, elems []Value) ([]Value, int, error) {
	if depth == maxDepth {
		return nil, 0, errTooDeep
	}
	end, err := lineEnd(b, pos)
	if err != nil {
		return nil, 0, err
	}
	count, ok := parseInt(b[pos+1 : end])
	if !ok || count < 0 || count > maxAggregate {
		return nil, 0, errAggregateLength
	}
	if t := Type(b[pos]); t == Map || t == Attribute {
		count *= 2
	}
	pos = end + 2
	if elems == nil {
		// Declared lengths are not trusted: start small and grow as
		// elements arrive.
		elems = make([]Value, 0, min(count, 16))
	}
	for range count {
		if len(elems) < cap(elems) {
			elems = elems[:len(elems)+1] // zero: fresh from make or append
		} else {
			elems = append(elems, Value{})
		}
		if pos, err = parseValue(b, pos, depth+1, &elems[len(elems)-1]); err != nil {
			return nil, 0, err
		}
	}
	return elems, pos, nil
}

// nullArray reports whether the array at b[pos] is RESP2's null array,
// "*-1\r\n", and if so returns the position after it.
func nullArray(b []byte, pos int) (int, bool, error) {
	if len(b)-pos < 2 || b[pos+1] != '-' {
		return 0, false, nil
	}
	end, err := lineEnd(b, pos)
	if err != nil {
		return 0, true, err
	}
	if string(b[pos+1:end]) != "-1" {
		return 0, true, errAggregateLength
	}
	return end + 2, true, nil
}

// parseBulk parses the header of the bulk string, bulk error or verbatim
// string at b[pos] and checks that its data is all there and followed by
// "\r\n". It returns the data's bounds, or start -1 and the position after
// the value for a null bulk string ("$-1\r\n", if nullable).
func parseBulk(b []byte, pos int, nullable bool) (start, end int, err error) {
	end, err = lineEnd(b, pos)
	if err != nil {
		return 0, 0, err
	}
	size, ok := parseInt(b[pos+1 : end])
	if ok && size == -1 && nullable {
		return -1, end + 2, nil
	}
	if !ok || size < 0 {
		return 0, 0, errBulkLength
	}
	start = end + 2
	if rest := int64(len(b) - start); size > rest-2 {
		if size < rest && b[start+int(size)] != '\r' {
			return 0, 0, errBulkFormat
		}
		return 0, 0, ErrIncomplete
	}
	end = start + int(size)
	if b[end] != '\r' || b[end+1] != '\n' {
		return 0, 0, errBulkFormat
	}
	return start, end, nil
}

// lineEnd returns the index of the "\r\n" ending the line that starts with
// the type byte at b[pos]. The line may hold neither '\r' nor '\n'.
func lineEnd(b []byte, pos int) (int, error) {
	// Most lines are short: look at their first bytes one by one, sooner
	// done than calls to IndexByte.
	end := -1
	i := pos + 1
	for stop := min(len(b), i+16); i < stop; i++ {
		if c := b[i]; c == '\r' {
			end = i
			break
		} else if c == '\n' {
			return 0, errLine
		}
	}
	if end < 0 {
		rest := b[i:]
		j := bytes.IndexByte(rest, '\r')
		if j < 0 {
			if bytes.IndexByte(rest, '\n') >= 0 {
				return 0, errLine
			}
			return 0, ErrIncomplete
		}
		if bytes.IndexByte(rest[:j], '\n') >= 0 {
			return 0, errLine
		}
		end = i + j
	}
	if end+1 == len(b) {
		return 0, ErrIncomplete
	}
	if b[end+1] != '\n' {
		return 0, errLine
	}
	return end, nil
}

// parseInt parses a RESP integer: an optional sign and decimal digits,
// fitting in an int64.
func parseInt(s []byte) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		d := uint64(c - '0')
		if d > 9 || v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// parseDouble parses a RESP3 double: an optional sign, then "inf", "nan",
// or digits with an optional fraction and exponent.
func parseDouble(s []byte) (float64, bool) {
	t := s
	if len(t) > 0 && (t[0] == '-' || t[0] == '+') {
		t = t[1:]
	}
	switch string(t) {
	case "inf":
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	i := skipDigits(t, 0)
	if i == 0 {
		return 0, false
	}
	if i < len(t) && t[i] == '.' {
		j := skipDigits(t, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		if i < len(t) && (t[i] == '-' || t[i] == '+') {
			i++
		}
		j := skipDigits(t, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	if i != len(t) {
		return 0, false
	}
	// Out of range, ParseFloat returns ±Inf or ±0, as a C client's strtod.
	f, _ := strconv.ParseFloat(string(s), 64)
	return f, true
}

func skipDigits(s []byte, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// isBigNumber reports whether s is an optional sign and decimal digits.
func isBigNumber(s []byte) bool {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	return len(s) > 0 && skipDigits(s, 0) == len(s)
}

// verbatimFormat returns f as a string, without allocating for the formats
// Redis sends.
func verbatimFormat(f []byte) string {
	switch string(f) {
	case "txt":
		return "txt"
	case "mkd":
		return "mkd"
	}
	return string(f)
}
