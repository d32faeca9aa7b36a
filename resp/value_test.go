package resp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// parseTest is one value for Parse. A test with no err must parse to want
// in n bytes (n 0 meaning all of in); one with err must fail with a
// *ProtocolError of that Msg, or ErrIncomplete if err is "incomplete".
type parseTest struct {
	name string
	in   string
	want Value
	n    int
	err  string
}

// Value constructors, for the tables.

func str(t Type, s string) Value { return Value{Type: t, Str: []byte(s)} }
func integer(n int64) Value      { return Value{Type: Integer, Int: n} }
func boolean(b bool) Value       { return Value{Type: Boolean, Bool: b} }
func double(s string, f float64) Value {
	return Value{Type: Double, Str: []byte(s), Float: f}
}
func agg(t Type, elems ...Value) Value { return Value{Type: t, Elems: elems} }
func withAttrs(v Value, attrs ...Value) Value {
	v.Attrs = attrs
	return v
}

// nested returns depth arrays, each holding the next, around ":1".
func nested(depth int) string {
	return strings.Repeat("*1\r\n", depth) + ":1\r\n"
}

func nestedValue(depth int) Value {
	v := integer(1)
	for range depth {
		v = agg(Array, v)
	}
	return v
}

var parseTests = []parseTest{
	// RESP2.
	{name: "simple string", in: "+OK\r\n", want: str(SimpleString, "OK")},
	{name: "empty simple string", in: "+\r\n", want: str(SimpleString, "")},
	{name: "error", in: "-ERR unknown command 'foo'\r\n", want: str(Error, "ERR unknown command 'foo'")},
	{name: "integer", in: ":1000\r\n", want: integer(1000)},
	{name: "zero", in: ":0\r\n", want: integer(0)},
	{name: "negative integer", in: ":-42\r\n", want: integer(-42)},
	{name: "plus integer", in: ":+7\r\n", want: integer(7)},
	{name: "max integer", in: ":9223372036854775807\r\n", want: integer(math.MaxInt64)},
	{name: "min integer", in: ":-9223372036854775808\r\n", want: integer(math.MinInt64)},
	{name: "bulk string", in: "$5\r\nhello\r\n", want: str(BulkString, "hello")},
	{name: "empty bulk string", in: "$0\r\n\r\n", want: str(BulkString, "")},
	{name: "binary bulk string", in: "$6\r\na\r\n\x00\xff\n\r\n", want: str(BulkString, "a\r\n\x00\xff\n")},
	{name: "null bulk string", in: "$-1\r\n", want: Value{Type: BulkString, IsNull: true}},
	{name: "array", in: "*2\r\n$3\r\nfoo\r\n:1\r\n", want: agg(Array, str(BulkString, "foo"), integer(1))},
	{name: "empty array", in: "*0\r\n", want: agg(Array)},
	{name: "null array", in: "*-1\r\n", want: Value{Type: Array, IsNull: true}},
	{name: "array with nulls", in: "*3\r\n$-1\r\n*-1\r\n_\r\n", want: agg(Array, Value{Type: BulkString, IsNull: true}, Value{Type: Array, IsNull: true}, Value{Type: Null, IsNull: true})},
	{name: "zrange withscores, Redis 7.0", in: "*2\r\n*2\r\n$1\r\nb\r\n,0.10000000000000001\r\n*2\r\n$1\r\na\r\n,1.5\r\n",
		want: agg(Array, agg(Array, str(BulkString, "b"), double("0.10000000000000001", 0.1)), agg(Array, str(BulkString, "a"), double("1.5", 1.5)))},
	{name: "first of several", in: "+OK\r\n+OK\r\n", want: str(SimpleString, "OK"), n: 5},

	// RESP3.
	{name: "null", in: "_\r\n", want: Value{Type: Null, IsNull: true}},
	{name: "true", in: "#t\r\n", want: boolean(true)},
	{name: "false", in: "#f\r\n", want: boolean(false)},
	{name: "double", in: ",3.141\r\n", want: double("3.141", 3.141)},
	{name: "double integer", in: ",10\r\n", want: double("10", 10)},
	{name: "double exponent", in: ",-1.5e-3\r\n", want: double("-1.5e-3", -1.5e-3)},
	{name: "double big exponent", in: ",1E+21\r\n", want: double("1E+21", 1e21)},
	{name: "double out of range", in: ",1e400\r\n", want: double("1e400", math.Inf(1))},
	{name: "double inf", in: ",inf\r\n", want: double("inf", math.Inf(1))},
	{name: "double minus inf", in: ",-inf\r\n", want: double("-inf", math.Inf(-1))},
	{name: "double nan", in: ",nan\r\n", want: double("nan", math.NaN())},
	{name: "big number", in: "(1234567999999999999999999999999999999\r\n", want: str(BigNumber, "1234567999999999999999999999999999999")},
	{name: "negative big number", in: "(-3492890328409238509324850943850943825024385\r\n", want: str(BigNumber, "-3492890328409238509324850943850943825024385")},
	{name: "bulk error", in: "!21\r\nSYNTAX invalid syntax\r\n", want: str(BulkError, "SYNTAX invalid syntax")},
	{name: "verbatim", in: "=29\r\ntxt:This is a verbatim\nstring\r\n", want: Value{Type: Verbatim, Format: "txt", Str: []byte("This is a verbatim\nstring")}},
	{name: "verbatim markdown", in: "=6\r\nmkd:**\r\n", want: Value{Type: Verbatim, Format: "mkd", Str: []byte("**")}},
	{name: "verbatim empty", in: "=4\r\nabc:\r\n", want: Value{Type: Verbatim, Format: "abc", Str: []byte{}}},
	{name: "map", in: "%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n", want: agg(Map, integer(0), boolean(false), integer(1), boolean(true), integer(2), boolean(false))},
	{name: "empty map", in: "%0\r\n", want: agg(Map)},
	{name: "set", in: "~3\r\n:0\r\n:1\r\n:2\r\n", want: agg(Set, integer(0), integer(1), integer(2))},
	{name: "push", in: ">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n", want: agg(Push, str(BulkString, "server-cpu-usage"), integer(42))},
	{name: "hello 3", in: "%3\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:3\r\n$7\r\nmodules\r\n*0\r\n",
		want: agg(Map, str(BulkString, "server"), str(BulkString, "redis"), str(BulkString, "proto"), integer(3), str(BulkString, "modules"), agg(Array))},
	{name: "attribute", in: "|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n$39\r\nSome real reply following the attribute\r\n",
		want: withAttrs(str(BulkString, "Some real reply following the attribute"), str(BulkString, "key-popularity"), agg(Array, str(BulkString, "key:123"), integer(90)))},
	{name: "attribute on element", in: "*2\r\n:1\r\n|1\r\n+ttl\r\n:3600\r\n:2\r\n",
		want: agg(Array, integer(1), withAttrs(integer(2), str(SimpleString, "ttl"), integer(3600)))},
	{name: "attributes in a row", in: "|1\r\n+a\r\n:1\r\n|0\r\n|1\r\n+b\r\n:2\r\n#t\r\n",
		want: withAttrs(boolean(true), str(SimpleString, "a"), integer(1), str(SimpleString, "b"), integer(2))},
	{name: "attribute with attribute", in: "|1\r\n|1\r\n+x\r\n+y\r\n+k\r\n+v\r\n_\r\n",
		want: withAttrs(Value{Type: Null, IsNull: true}, withAttrs(str(SimpleString, "k"), str(SimpleString, "x"), str(SimpleString, "y")), str(SimpleString, "v"))},
	{name: "nested", in: "*2\r\n*1\r\n:1\r\n%1\r\n+k\r\n~1\r\n_\r\n", want: agg(Array, agg(Array, integer(1)), agg(Map, str(SimpleString, "k"), agg(Set, Value{Type: Null, IsNull: true})))},
	{name: "nested 512 deep", in: nested(512), want: nestedValue(512)},

	// Malformed values.
	{name: "unknown type", in: "?x\r\n", err: "unknown type byte '?'"},
	{name: "inline text", in: "PING\r\n", err: "unknown type byte 'P'"},
	{name: "unknown type cr", in: "\r\n", err: `unknown type byte '\r'`},
	{name: "unknown type lf", in: "\n", err: `unknown type byte '\n'`},
	{name: "unknown type nul", in: "\x00", err: `unknown type byte '\x00'`},
	{name: "unknown type high byte", in: "\xff", err: `unknown type byte '\xff'`},
	{name: "attribute type alone", in: "|x\r\n", err: "invalid aggregate length"},
	{name: "integer not a number", in: ":abc\r\n", err: "invalid integer"},
	{name: "integer empty", in: ":\r\n", err: "invalid integer"},
	{name: "integer sign only", in: ":-\r\n", err: "invalid integer"},
	{name: "integer overflow", in: ":9223372036854775808\r\n", err: "invalid integer"},
	{name: "integer underflow", in: ":-9223372036854775809\r\n", err: "invalid integer"},
	{name: "integer float", in: ":1.5\r\n", err: "invalid integer"},
	{name: "cr without lf", in: "+OK\rX\r\n", err: "invalid line: CR or LF inside, or CR without LF"},
	{name: "lf inside line", in: "+O\nK\r\n", err: "invalid line: CR or LF inside, or CR without LF"},
	{name: "lf alone", in: "+OK\n", err: "invalid line: CR or LF inside, or CR without LF"},
	{name: "bulk too long", in: "$3\r\nabcd\r\n", err: "invalid bulk format: data not followed by CRLF"},
	{name: "bulk without lf", in: "$3\r\nabc\rd", err: "invalid bulk format: data not followed by CRLF"},
	{name: "bulk length negative", in: "$-2\r\n", err: "invalid bulk length"},
	{name: "bulk length not a number", in: "$x\r\n", err: "invalid bulk length"},
	{name: "bulk error null", in: "!-1\r\n", err: "invalid bulk length"},
	{name: "array length negative", in: "*-2\r\n", err: "invalid aggregate length"},
	{name: "array length not a number", in: "*x\r\n", err: "invalid aggregate length"},
	{name: "array length too big", in: "*2147483648\r\n", err: "invalid aggregate length"},
	{name: "map null", in: "%-1\r\n", err: "invalid aggregate length"},
	{name: "set length empty", in: "~\r\n", err: "invalid aggregate length"},
	{name: "bad element", in: "*2\r\n:1\r\n:x\r\n", err: "invalid integer"},
	{name: "boolean", in: "#x\r\n", err: "invalid boolean"},
	{name: "boolean empty", in: "#\r\n", err: "invalid boolean"},
	{name: "null with text", in: "_x\r\n", err: "invalid null"},
	{name: "double empty", in: ",\r\n", err: "invalid double"},
	{name: "double text", in: ",abc\r\n", err: "invalid double"},
	{name: "double no fraction", in: ",1.\r\n", err: "invalid double"},
	{name: "double no integer part", in: ",.5\r\n", err: "invalid double"},
	{name: "double no exponent", in: ",1e\r\n", err: "invalid double"},
	{name: "double infinity", in: ",infinity\r\n", err: "invalid double"},
	{name: "double hex", in: ",0x1p3\r\n", err: "invalid double"},
	{name: "big number text", in: "(12a\r\n", err: "invalid big number"},
	{name: "big number empty", in: "(\r\n", err: "invalid big number"},
	{name: "verbatim too short", in: "=3\r\ntxt\r\n", err: "invalid verbatim string"},
	{name: "verbatim no colon", in: "=4\r\ntxt!\r\n", err: "invalid verbatim string"},
	{name: "nested 513 deep", in: nested(513), err: "value nested too deep"},
	{name: "attributes 513 deep", in: strings.Repeat("|1\r\n", 513) + "_\r\n", err: "value nested too deep"},

	// Incomplete values.
	{name: "empty input", in: "", err: incomplete},
	{name: "huge array", in: "*2147483647\r\n:1\r\n", err: incomplete},
	{name: "huge map", in: "%2147483647\r\n", err: incomplete},
	{name: "huge bulk string", in: "$9223372036854775807\r\nabc", err: incomplete},
	{name: "attribute alone", in: "|1\r\n+a\r\n+b\r\n", err: incomplete},
}

// equalValue reports whether a and b are the same value: nil and empty
// slices are alike, and NaN equals NaN.
func equalValue(a, b Value) bool {
	if a.Type != b.Type || !bytes.Equal(a.Str, b.Str) || a.Format != b.Format || a.Int != b.Int ||
		a.Bool != b.Bool || a.IsNull != b.IsNull || len(a.Elems) != len(b.Elems) || len(a.Attrs) != len(b.Attrs) {
		return false
	}
	if a.Float != b.Float && !(math.IsNaN(a.Float) && math.IsNaN(b.Float)) {
		return false
	}
	for i := range a.Elems {
		if !equalValue(a.Elems[i], b.Elems[i]) {
			return false
		}
	}
	for i := range a.Attrs {
		if !equalValue(a.Attrs[i], b.Attrs[i]) {
			return false
		}
	}
	return true
}

// format writes v in a compact form for messages.
func format(v Value) string {
	var sb strings.Builder
	formatTo(&sb, v)
	return sb.String()
}

func formatTo(sb *strings.Builder, v Value) {
	if len(v.Attrs) > 0 {
		sb.WriteString("attrs")
		formatElems(sb, v.Attrs)
	}
	sb.WriteString(v.Type.String())
	switch {
	case v.IsNull:
		sb.WriteString("(null)")
	case v.Type == Integer:
		fmt.Fprintf(sb, "(%d)", v.Int)
	case v.Type == Boolean:
		fmt.Fprintf(sb, "(%t)", v.Bool)
	case v.Type == Double:
		fmt.Fprintf(sb, "(%q %v)", v.Str, v.Float)
	case v.Type == Verbatim:
		fmt.Fprintf(sb, "(%q %q)", v.Format, v.Str)
	case v.Elems != nil || v.Type == Array || v.Type == Map || v.Type == Set || v.Type == Push:
		formatElems(sb, v.Elems)
	default:
		fmt.Fprintf(sb, "(%q)", v.Str)
	}
}

func formatElems(sb *strings.Builder, vs []Value) {
	sb.WriteByte('[')
	for i, e := range vs {
		if i > 0 {
			sb.WriteByte(' ')
		}
		formatTo(sb, e)
	}
	sb.WriteByte(']')
}

func TestParse(t *testing.T) {
	for _, tc := range parseTests {
		t.Run(tc.name, func(t *testing.T) {
			v, n, err := Parse([]byte(tc.in))
			if tc.err != "" {
				if !checkErr(err, tc.err) || n != 0 || !equalValue(v, Value{}) {
					t.Fatalf("Parse(%s) = %s, %d, %v; want zero Value, 0, %s", short(tc.in), format(v), n, err, tc.err)
				}
				return
			}
			wantN := tc.n
			if wantN == 0 {
				wantN = len(tc.in)
			}
			if err != nil || n != wantN || !equalValue(v, tc.want) {
				t.Fatalf("Parse(%s) = %s, %d, %v; want %s, %d, nil", short(tc.in), format(v), n, err, format(tc.want), wantN)
			}
		})
	}
}

// TestParseSplit checks that every proper prefix of a value is incomplete,
// and that a malformed value is malformed in no other way when cut short.
func TestParseSplit(t *testing.T) {
	for _, tc := range parseTests {
		t.Run(tc.name, func(t *testing.T) {
			end := tc.n
			if end == 0 {
				end = len(tc.in)
			}
			for i := range end {
				v, n, err := Parse([]byte(tc.in[:i]))
				if tc.err == "" || tc.err == incomplete {
					if !errors.Is(err, ErrIncomplete) || n != 0 {
						t.Fatalf("Parse(%s) = %s, %d, %v; want zero Value, 0, ErrIncomplete", short(tc.in[:i]), format(v), n, err)
					}
				} else if !errors.Is(err, ErrIncomplete) && !checkErr(err, tc.err) {
					t.Fatalf("Parse(%s) = %s, %d, %v; want ErrIncomplete or %s", short(tc.in[:i]), format(v), n, err, tc.err)
				}
			}
		})
	}
}

// TestParseHugeLengths checks that declared lengths are not allocated for
// up front.
func TestParseHugeLengths(t *testing.T) {
	for _, in := range []string{"*2147483647\r\n:1\r\n", "%2147483647\r\n+k\r\n", "|2147483647\r\n+k\r\n", "*2147483647\r\n*2147483647\r\n*2147483647\r\n"} {
		b := []byte(in)
		allocs := testing.AllocsPerRun(10, func() {
			if _, _, err := Parse(b); !errors.Is(err, ErrIncomplete) {
				panic(err)
			}
		})
		if allocs > 3 {
			t.Errorf("Parse(%q) allocations = %v; want at most 3", in, allocs)
		}
	}
}

func TestTypeString(t *testing.T) {
	for _, tc := range []struct {
		t    Type
		want string
	}{{SimpleString, "SimpleString"}, {Map, "Map"}, {Attribute, "Attribute"}, {Type('x'), "Type('x')"}, {Type(0), `Type('\x00')`}} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("Type(%d).String() = %q; want %q", byte(tc.t), got, tc.want)
		}
	}
}

// TestParseStreamedRefused: the streamed types of unknown length are
// refused, as the package doc says, not misread.
func TestParseStreamedRefused(t *testing.T) {
	for _, in := range []string{"$?\r\n;4\r\nHell\r\n;0\r\n", "*?\r\n:1\r\n.\r\n", "%?\r\n.\r\n", "~?\r\n.\r\n"} {
		_, _, err := Parse([]byte(in))
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v; want a *ProtocolError", in, err)
		}
	}
}

// TestParseAllocs: Parse allocates what the package doc says it does: an
// aggregate's element slice, and a Verbatim string's format when it is not
// one Redis sends ("txt", "mkd"); nothing for other values.
func TestParseAllocs(t *testing.T) {
	for _, tc := range []struct {
		in     string
		allocs float64
	}{
		{"$5\r\nhello\r\n", 0},
		{",1.5\r\n", 0},
		{"=7\r\ntxt:abc\r\n", 0},
		{"=7\r\nmkd:abc\r\n", 0},
		{"=7\r\nxyz:abc\r\n", 1},
		{"*2\r\n:1\r\n:2\r\n", 1},
	} {
		b := []byte(tc.in)
		allocs := testing.AllocsPerRun(100, func() {
			if _, _, err := Parse(b); err != nil {
				panic(err)
			}
		})
		if allocs != tc.allocs {
			t.Errorf("Parse(%q) allocations = %v; want %v", tc.in, allocs, tc.allocs)
		}
	}
}
