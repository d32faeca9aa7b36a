package resp

import (
	"math"
	"testing"
)

var writerTests = []struct {
	name  string
	write func(w *Writer)
	resp2 string
	resp3 string // "" if the same as resp2
}{
	{"OK", func(w *Writer) { w.OK() }, "+OK\r\n", ""},
	{"Simple", func(w *Writer) { w.Simple("PONG") }, "+PONG\r\n", ""},
	{"Simple empty", func(w *Writer) { w.Simple("") }, "+\r\n", ""},
	{"Simple newlines", func(w *Writer) { w.Simple("a\r\nb\nc") }, "+a  b c\r\n", ""},
	{"Error", func(w *Writer) { w.Error("ERR syntax error") }, "-ERR syntax error\r\n", ""},
	{"Error newlines", func(w *Writer) { w.Error("ERR bad\r\nthing\r") }, "-ERR bad  thing \r\n", ""},
	{"Int", func(w *Writer) { w.Int(42) }, ":42\r\n", ""},
	{"Int negative", func(w *Writer) { w.Int(-7) }, ":-7\r\n", ""},
	{"Int min", func(w *Writer) { w.Int(math.MinInt64) }, ":-9223372036854775808\r\n", ""},
	{"Bulk", func(w *Writer) { w.Bulk([]byte("a\r\nb")) }, "$4\r\na\r\nb\r\n", ""},
	{"Bulk empty", func(w *Writer) { w.Bulk(nil) }, "$0\r\n\r\n", ""},
	{"BulkString", func(w *Writer) { w.BulkString("hello") }, "$5\r\nhello\r\n", ""},
	{"BulkInt", func(w *Writer) { w.BulkInt(-1234) }, "$5\r\n-1234\r\n", ""},
	{"BulkInt zero", func(w *Writer) { w.BulkInt(0) }, "$1\r\n0\r\n", ""},
	{"BulkInt max", func(w *Writer) { w.BulkInt(math.MaxInt64) }, "$19\r\n9223372036854775807\r\n", ""},
	{"Null", func(w *Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
	{"NullArray", func(w *Writer) { w.NullArray() }, "*-1\r\n", "_\r\n"},
	{"Array", func(w *Writer) { w.Array(2); w.Int(1); w.BulkString("x") }, "*2\r\n:1\r\n$1\r\nx\r\n", ""},
	{"Array empty", func(w *Writer) { w.Array(0) }, "*0\r\n", ""},
	{"Map", func(w *Writer) { w.Map(1); w.BulkString("k"); w.Int(1) }, "*2\r\n$1\r\nk\r\n:1\r\n", "%1\r\n$1\r\nk\r\n:1\r\n"},
	{"Set", func(w *Writer) { w.Set(2); w.BulkString("a"); w.BulkString("b") }, "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "~2\r\n$1\r\na\r\n$1\r\nb\r\n"},
	{"Push", func(w *Writer) { w.Push(3); w.BulkString("message"); w.BulkString("ch"); w.BulkString("hi") },
		"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"},
	{"Double", func(w *Writer) { w.Double(3.14) }, "$4\r\n3.14\r\n", ",3.14\r\n"},
	{"Double integer", func(w *Writer) { w.Double(10) }, "$2\r\n10\r\n", ",10\r\n"},
	{"Double inf", func(w *Writer) { w.Double(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
	{"Double nan", func(w *Writer) { w.Double(math.NaN()) }, "$3\r\nnan\r\n", ",nan\r\n"},
	{"Bool true", func(w *Writer) { w.Bool(true) }, ":1\r\n", "#t\r\n"},
	{"Bool false", func(w *Writer) { w.Bool(false) }, ":0\r\n", "#f\r\n"},
	{"Verbatim", func(w *Writer) { w.Verbatim("txt", []byte("a\nb")) }, "$3\r\na\nb\r\n", "=7\r\ntxt:a\nb\r\n"},
	{"BigNumber", func(w *Writer) { w.BigNumber("-123456789012345678901234567890") },
		"$31\r\n-123456789012345678901234567890\r\n", "(-123456789012345678901234567890\r\n"},
	{"BulkError", func(w *Writer) { w.BulkError("SYNTAX bad\r\nthing") }, "-SYNTAX bad  thing\r\n", "!17\r\nSYNTAX bad\r\nthing\r\n"},
	{"Command", func(w *Writer) { w.Command([]byte("SET"), []byte("k"), []byte("")) }, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", ""},
	{"Command none", func(w *Writer) { w.Command() }, "*0\r\n", ""},
	{"several", func(w *Writer) { w.OK(); w.Int(1); w.Null() }, "+OK\r\n:1\r\n$-1\r\n", "+OK\r\n:1\r\n_\r\n"},

	{"Value simple", func(w *Writer) { w.Value(str(SimpleString, "OK")) }, "+OK\r\n", ""},
	{"Value error", func(w *Writer) { w.Value(str(Error, "ERR x")) }, "-ERR x\r\n", ""},
	{"Value integer", func(w *Writer) { w.Value(integer(-5)) }, ":-5\r\n", ""},
	{"Value bulk", func(w *Writer) { w.Value(str(BulkString, "ab")) }, "$2\r\nab\r\n", ""},
	{"Value null bulk", func(w *Writer) { w.Value(Value{Type: BulkString, IsNull: true}) }, "$-1\r\n", ""},
	{"Value null array", func(w *Writer) { w.Value(Value{Type: Array, IsNull: true}) }, "*-1\r\n", ""},
	{"Value null", func(w *Writer) { w.Value(Value{Type: Null, IsNull: true}) }, "$-1\r\n", "_\r\n"},
	{"Value no type", func(w *Writer) { w.Value(Value{}) }, "$-1\r\n", "_\r\n"},
	{"Value boolean", func(w *Writer) { w.Value(boolean(true)) }, ":1\r\n", "#t\r\n"},
	{"Value double text", func(w *Writer) { w.Value(double("1.50", 1.5)) }, "$4\r\n1.50\r\n", ",1.50\r\n"},
	{"Value double text newlines", func(w *Writer) { w.Value(double("1\r\n+OK", 1)) }, "$6\r\n1\r\n+OK\r\n", ",1  +OK\r\n"},
	{"Value double no text", func(w *Writer) { w.Value(Value{Type: Double, Float: 0.1}) }, "$3\r\n0.1\r\n", ",0.1\r\n"},
	{"Value big number", func(w *Writer) { w.Value(str(BigNumber, "123")) }, "$3\r\n123\r\n", "(123\r\n"},
	{"Value bulk error", func(w *Writer) { w.Value(str(BulkError, "ERR a\nb")) }, "-ERR a b\r\n", "!7\r\nERR a\nb\r\n"},
	{"Value verbatim", func(w *Writer) { w.Value(Value{Type: Verbatim, Format: "mkd", Str: []byte("# x")}) }, "$3\r\n# x\r\n", "=7\r\nmkd:# x\r\n"},
	{"Value verbatim short format", func(w *Writer) { w.Value(Value{Type: Verbatim, Format: "t", Str: []byte("x")}) }, "$1\r\nx\r\n", "=5\r\nt  :x\r\n"},
	{"Value array", func(w *Writer) { w.Value(agg(Array, integer(1), agg(Set, integer(2)))) }, "*2\r\n:1\r\n*1\r\n:2\r\n", "*2\r\n:1\r\n~1\r\n:2\r\n"},
	{"Value map", func(w *Writer) { w.Value(agg(Map, str(SimpleString, "k"), integer(1))) }, "*2\r\n+k\r\n:1\r\n", "%1\r\n+k\r\n:1\r\n"},
	{"Value map odd", func(w *Writer) { w.Value(agg(Map, str(SimpleString, "k"))) }, "*2\r\n+k\r\n$-1\r\n", "%1\r\n+k\r\n_\r\n"},
	{"Attribute", func(w *Writer) { w.Attribute(1); w.BulkString("k"); w.Int(9) }, "$1\r\nk\r\n:9\r\n", "|1\r\n$1\r\nk\r\n:9\r\n"},
	{"Value push", func(w *Writer) { w.Value(agg(Push, integer(1))) }, "*1\r\n:1\r\n", ">1\r\n:1\r\n"},
	{"Value attribute type", func(w *Writer) { w.Value(agg(Attribute, integer(1), integer(2))) }, "*2\r\n:1\r\n:2\r\n", "%1\r\n:1\r\n:2\r\n"},
	{"Value with attributes", func(w *Writer) { w.Value(withAttrs(integer(7), str(SimpleString, "ttl"), integer(60))) }, ":7\r\n", "|1\r\n+ttl\r\n:60\r\n:7\r\n"},
}

func TestWriter(t *testing.T) {
	for _, tc := range writerTests {
		t.Run(tc.name, func(t *testing.T) {
			for _, proto := range []int{0, 2, 3} {
				want := tc.resp2
				if proto == 3 && tc.resp3 != "" {
					want = tc.resp3
				}
				w := Writer{Proto: proto, Buf: []byte("before")}
				tc.write(&w)
				if got := string(w.Buf); got != "before"+want {
					t.Errorf("Proto %d: %s wrote %q; want %q", proto, tc.name, got, "before"+want)
				}
				w.Reset()
				if len(w.Buf) != 0 {
					t.Errorf("Proto %d: after Reset, len(Buf) = %d; want 0", proto, len(w.Buf))
				}
			}
		})
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(AppendCommand([]byte("x"), []byte("GET"), []byte("a\r\nb")))
	if want := "x*2\r\n$3\r\nGET\r\n$4\r\na\r\nb\r\n"; got != want {
		t.Errorf("AppendCommand(\"x\", GET, \"a\\r\\nb\") = %q; want %q", got, want)
	}
}

// TestWriterOnError: OnError hears of every error reply that Error and
// BulkError append, in either protocol. Before, a RESP3 BulkError was not
// counted, where the same call in RESP2 was.
func TestWriterOnError(t *testing.T) {
	for _, proto := range []int{2, 3} {
		var got []string
		w := Writer{Proto: proto, OnError: func(msg string) { got = append(got, msg) }}
		w.Error("ERR one")
		w.BulkError("ERR two")
		w.Simple("OK")
		if len(got) != 2 || got[0] != "ERR one" || got[1] != "ERR two" {
			t.Errorf("RESP%d: OnError called with %q; want [\"ERR one\" \"ERR two\"]", proto, got)
		}
	}
}

func TestVerbatimFormatPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("Verbatim(\"text\", ...) did not panic; want a panic for a format not three bytes long")
		}
	}()
	var w Writer
	w.Verbatim("text", nil)
}

// TestDouble checks the text of doubles against what Redis 7.2's d2string
// writes (fpconv_dtoa's layout).
func TestDouble(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "-0"},
		{1, "1"},
		{-1, "-1"},
		{10, "10"},
		{0.1, "0.1"},
		{-0.5, "-0.5"},
		{3.14, "3.14"},
		{1.0 / 3, "0.3333333333333333"},
		{2.0 / 3, "0.6666666666666666"},
		{100.5, "100.5"},
		{123456.789, "123456.789"},
		{12345678.9, "12345678.9"},
		{1e15 + 0.5, "1000000000000000.5"},
		{0.0011, "0.0011"},
		{1e-5, "0.00001"},
		{1e-6, "0.000001"},
		{1e-7, "1e-7"},
		{1.234e-5, "1.234e-5"},
		{1.2345678e-7, "1.2345678e-7"},
		{1e18, "1000000000000000000"},
		{1 << 62, "4611686018427387904"},
		{-(1 << 62), "-4611686018427387904"},
		{1<<62 + 1024, "4611686018427389000"},
		{1 << 63, "9223372036854776000"},
		{5e18, "5e+18"},
		{1e20, "1e+20"},
		{1.5e20, "1.5e+20"},
		{1e21, "1e+21"},
		{-1e21, "-1e+21"},
		{1e22, "1e+22"},
		{1e100, "1e+100"},
		{1.5e300, "1.5e+300"},
		{0.30000000000000004, "0.30000000000000004"},
		{12345.123456, "12345.123456"},
		{12345.12345678, "1.234512345678e+4"}, // seven or more decimals past the 10^4s: fpconv writes an exponent
		{1234.1234567, "1234.1234567"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.SmallestNonzeroFloat64, "5e-324"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
	} {
		if got := string(appendDouble(nil, tc.f)); got != tc.want {
			t.Errorf("appendDouble(nil, %v) = %q; want %q", tc.f, got, tc.want)
		}
	}
}

func TestWriterAllocs(t *testing.T) {
	for _, proto := range []int{2, 3} {
		w := Writer{Proto: proto}
		allocs := testing.AllocsPerRun(100, func() {
			w.Reset()
			writeMix(&w)
		})
		if allocs != 0 {
			t.Errorf("Proto %d: Writer allocations per run = %v; want 0", proto, allocs)
		}
	}
}

// writeMix writes a typical mix of replies.
func writeMix(w *Writer) {
	w.OK()
	w.BulkString("value:000000001234")
	w.Null()
	w.Int(42)
	w.BulkInt(1234567)
	w.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	w.Array(3)
	w.Bulk([]byte("a"))
	w.Bulk([]byte("bb"))
	w.Bulk([]byte("ccc"))
	w.Map(2)
	w.BulkString("field")
	w.Double(1.5)
	w.BulkString("other")
	w.Double(0.1)
	w.Bool(true)
	w.Verbatim("txt", []byte("# Server\r\nredis_version:7.2.0\r\n"))
	w.Command([]byte("SET"), []byte("k"), []byte("v"))
	w.Value(Value{Type: Array, Elems: []Value{{Type: Integer, Int: 1}, {Type: Null, IsNull: true}}})
}
