package resp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// commandTest is one request for Parser.Command. A test with no err must
// parse to args in n bytes (n 0 meaning all of in); one with err must fail
// with a *ProtocolError of that Msg, or ErrIncomplete if err is
// "incomplete".
type commandTest struct {
	name   string
	limits Limits
	unauth bool
	in     string
	args   []string
	n      int
	err    string
}

const incomplete = "incomplete"

var commandTests = []commandTest{
	// Arrays of bulk strings.
	{name: "ping", in: "*1\r\n$4\r\nPING\r\n", args: []string{"PING"}},
	{name: "set", in: "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", args: []string{"SET", "key", "value"}},
	{name: "binary bulk", in: "*2\r\n$4\r\nECHO\r\n$8\r\na\r\nb\x00c\r\n\r\n", args: []string{"ECHO", "a\r\nb\x00c\r\n"}},
	{name: "high bytes", in: "*1\r\n$3\r\n\xff\xfe\x80\r\n", args: []string{"\xff\xfe\x80"}},
	{name: "zero-length bulk", in: "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", args: []string{"ECHO", ""}},
	{name: "empty array", in: "*0\r\n", args: []string{}},
	{name: "null array", in: "*-1\r\n", args: []string{}},
	{name: "negative count", in: "*-5\r\n", args: []string{}},
	{name: "first of pipeline", in: "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", args: []string{"PING"}, n: 14},
	{name: "empty then more", in: "*0\r\n*1\r\n$4\r\nPING\r\n", args: []string{}, n: 4},
	{name: "followed by garbage", in: "*1\r\n$4\r\nPING\r\n\x00garbage", args: []string{"PING"}, n: 14},
	{name: "long count line", in: "*0000", err: incomplete},

	// Inline commands.
	{name: "inline crlf", in: "PING\r\n", args: []string{"PING"}},
	{name: "inline lf", in: "PING\n", args: []string{"PING"}},
	{name: "inline words", in: "set a b\n", args: []string{"set", "a", "b"}},
	{name: "inline blanks", in: "  set \t a\t\tb  \r\n", args: []string{"set", "a", "b"}},
	{name: "inline empty crlf", in: "\r\n", args: []string{}},
	{name: "inline empty lf", in: "\n", args: []string{}},
	{name: "inline blank", in: " \t \r\n", args: []string{}},
	{name: "inline first of pipeline", in: "PING\r\nPING\r\n", args: []string{"PING"}, n: 6},
	{name: "inline double quotes", in: "set \"a b\" c\r\n", args: []string{"set", "a b", "c"}},
	{name: "inline single quotes", in: "set 'a b' c\r\n", args: []string{"set", "a b", "c"}},
	{name: "inline escapes", in: `"\n\r\t\b\a\\\"\x41\x4a\x7e\q"` + "\n", args: []string{"\n\r\t\b\a\\\"AJ~q"}},
	{name: "inline bad hex", in: `"\x4g" "\x4"` + "\n", args: []string{"x4g", "x4"}},
	{name: "inline single quote escape", in: `'it\'s' 'a\nb\'` + "'\n", args: []string{"it's", `a\nb'`}},
	{name: "inline quote mid-word", in: "ab\"c d\" e'f g'\n", args: []string{"abc d", "ef g"}},
	{name: "inline empty quotes", in: "\"\" ''\n", args: []string{"", ""}},
	{name: "inline quote then vtab", in: "\"a\"\vb\n", args: []string{"a", "b"}},
	{name: "inline leading vtab", in: "\v\fa\n", args: []string{"a"}},
	{name: "inline vtab inside word", in: "a\vb\n", args: []string{"a\vb"}},
	{name: "inline cr inside line", in: "a\rb\r\r\n", args: []string{"a", "b"}},
	// Redis finds the end of an inline line with strchr, which stops at a
	// NUL: a line with one never ends, and the request waits until more
	// than MaxInline bytes are buffered, then is too big.
	{name: "inline nul", in: "a\x00b\n", err: incomplete},
	{name: "inline nul then pipeline", in: "PING a\x00b\r\nPING\r\n", err: incomplete},
	{name: "inline nul, more than MaxInline buffered", in: "PING a\x00b\r\nPING\r\n" + strings.Repeat("x", 1<<16), err: "too big inline request"},
	{name: "inline nul first", in: "\x00PING\r\n", err: incomplete},
	{name: "inline nul after the line", in: "PING\r\n\x00", args: []string{"PING"}, n: 6},
	{name: "inline high bytes", in: "\xff\xfe \"\xc3\xa9\"\n", args: []string{"\xff\xfe", "\xc3\xa9"}},
	{name: "inline dollar", in: "$3\r\n", args: []string{"$3"}},
	{name: "inline unterminated quote waits", in: "\"abc", err: incomplete},

	// Malformed arrays, with Redis's messages.
	{name: "count not a number", in: "*abc\r\n", err: "invalid multibulk length"},
	{name: "count empty", in: "*\r\n", err: "invalid multibulk length"},
	{name: "count leading zero", in: "*03\r\n", err: "invalid multibulk length"},
	{name: "count plus", in: "*+3\r\n", err: "invalid multibulk length"},
	{name: "count minus zero", in: "*-0\r\n", err: "invalid multibulk length"},
	{name: "count overflow", in: "*99999999999999999999\r\n", err: "invalid multibulk length"},
	// Redis 7.0 takes up to INT_MAX arguments (ll > INT_MAX is refused).
	{name: "count over MaxArgs", in: "*2147483648\r\n", err: "invalid multibulk length"},
	{name: "count at MaxArgs", in: "*2147483647\r\n", err: incomplete},
	{name: "count over a million", in: "*1048577\r\n", err: incomplete},
	// The byte after the '\r' ending a header line is skipped unread, as
	// Redis's processMultibulkBuffer skips it.
	{name: "count cr without lf", in: "*1\rx$4\r\nPING\r\n", args: []string{"PING"}},
	{name: "count cr cr", in: "*1\r\r$4\r\nPING\r\n", args: []string{"PING"}},
	// A header line is judged once its '\r' and the byte after it have
	// arrived, as Redis judges it, not on its first byte.
	{name: "count bad before lf", in: "*1x\r", err: incomplete},
	{name: "count bad, ended", in: "*1x\rx", err: "invalid multibulk length"},
	{name: "not bulk", in: "*1\r\n:1\r\n", err: "expected '$', got ':'"},
	{name: "inline in array", in: "*2\r\n$3\r\nGET\r\nkey\r\n", err: "expected '$', got 'k'"},
	// Redis makes '\r' and '\n' in an error's text spaces, as a line
	// cannot carry them.
	{name: "not bulk, cr", in: "*1\r\n\r\n", err: "expected '$', got ' '"},
	{name: "not bulk, lf", in: "*1\r\n\nx\r\n", err: "expected '$', got ' '"},
	{name: "not bulk, line not ended", in: "*1\r\n+", err: incomplete},
	{name: "not bulk before lf", in: "*1\r\n+\r", err: incomplete},
	{name: "not bulk, more than MaxInline buffered", in: "*1\r\nX" + strings.Repeat("Y", 1<<16), err: "too big bulk count string"},
	{name: "bulk length bad before lf", in: "*1\r\n$x\r", err: incomplete},
	// Redis finds the end of a header line with strchr, which stops at a
	// NUL: a line with one never ends, and the request waits until more
	// than MaxInline bytes are buffered, then is too big. A bulk string's
	// data is read by its length: a NUL there is data.
	{name: "count nul", in: "*1\x00\r\n$4\r\nPING\r\n", err: incomplete},
	{name: "count nul, more than MaxInline buffered", in: "*1\x00\r\n$4\r\nPING\r\n" + strings.Repeat("x", 1<<16), err: "too big mbulk count string"},
	{name: "bulk length nul", in: "*1\r\n$4\x00\r\nPING\r\n", err: incomplete},
	{name: "bulk length nul, more than MaxInline buffered", in: "*1\r\n$4\x00\r\nPING\r\n" + strings.Repeat("x", 1<<16), err: "too big bulk count string"},
	{name: "not bulk, nul", in: "*1\r\nX\x00\r\n", err: incomplete},
	{name: "nul in bulk data", in: "*2\r\n$4\r\nECHO\r\n$3\r\na\x00b\r\n", args: []string{"ECHO", "a\x00b"}},
	{name: "nul after bulk data", in: "*1\r\n$4\r\nPING\x00\x00", args: []string{"PING"}},
	{name: "bulk length not a number", in: "*1\r\n$abc\r\n", err: "invalid bulk length"},
	{name: "bulk length empty", in: "*1\r\n$\r\n", err: "invalid bulk length"},
	{name: "bulk length negative", in: "*1\r\n$-1\r\n", err: "invalid bulk length"},
	{name: "bulk length leading zero", in: "*1\r\n$04\r\nPING\r\n", err: "invalid bulk length"},
	{name: "bulk length over MaxBulk", in: "*1\r\n$536870913\r\n", err: "invalid bulk length"},
	{name: "bulk length at MaxBulk", in: "*1\r\n$536870912\r\n", err: incomplete},
	{name: "bulk length cr without lf", in: "*1\r\n$4\rxPING\r\n", args: []string{"PING"}},
	{name: "long bulk length cr without lf", in: "*1\r\n$000\rx", err: "invalid bulk length"},
	{name: "empty array cr without lf", in: "*0\r*1\r\n$4\r\nPING\r\n", args: []string{}, n: 4},
	// The two bytes after a bulk string's data are skipped unread, as
	// Redis's processMultibulkBuffer skips them.
	{name: "bulk not followed by crlf", in: "*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n", args: []string{"PING"}, n: 14},
	{name: "bulk followed by lf lf", in: "*1\r\n$4\r\nPING\n\n", args: []string{"PING"}},
	{name: "bulk followed by cr x", in: "*1\r\n$4\r\nPING\rx", args: []string{"PING"}},
	{name: "bulk longer than its length", in: "*1\r\n$3\r\nPING\r\n", args: []string{"PIN"}, n: 13},
	{name: "bulk with one byte after", in: "*1\r\n$4\r\nPINGx", err: incomplete},
	{name: "bulk with its cr", in: "*1\r\n$4\r\nPING\r", err: incomplete},
	{name: "too big mbulk count", in: "*" + strings.Repeat("1", 1<<16), err: "too big mbulk count string"},
	{name: "too big mbulk count, ended", in: "*" + strings.Repeat("1", 1<<16) + "\r\n", err: "too big mbulk count string"},
	{name: "mbulk count at MaxInline", in: "*" + strings.Repeat("1", 1<<16-1), err: incomplete},
	{name: "too big bulk count", in: "*1\r\n$" + strings.Repeat("1", 1<<16), err: "too big bulk count string"},
	{name: "bulk count at MaxInline", in: "*1\r\n$" + strings.Repeat("1", 1<<16-1), err: incomplete},

	// Malformed inline commands.
	{name: "too big inline", in: strings.Repeat("a", 1<<16+1), err: "too big inline request"},
	{name: "too big inline, ended", in: strings.Repeat("a", 1<<16+1) + "\r\n", err: "too big inline request"},
	{name: "inline at MaxInline", in: strings.Repeat("a", 1<<16) + "\r", err: incomplete},
	{name: "inline at MaxInline, ended", in: strings.Repeat("a", 1<<16) + "\r\n", args: []string{strings.Repeat("a", 1<<16)}},
	{name: "unterminated double quote", in: "set \"abc\r\n", err: "unbalanced quotes in request"},
	{name: "unterminated single quote", in: "set 'abc\n", err: "unbalanced quotes in request"},
	{name: "escaped closing quote", in: "\"abc\\\"\n", err: "unbalanced quotes in request"},
	{name: "trailing backslash", in: "\"abc\\\n", err: "unbalanced quotes in request"},
	{name: "hex escape at end", in: "\"ab\\x\n", err: "unbalanced quotes in request"},
	{name: "hex escape cut short", in: "\"ab\\x4\r\n", err: "unbalanced quotes in request"},
	{name: "hex escape then end", in: "\"ab\\x41\n", err: "unbalanced quotes in request"},
	{name: "text after closing quote", in: "\"abc\"def\n", err: "unbalanced quotes in request"},
	{name: "quote after closing quote", in: "'a''b'\n", err: "unbalanced quotes in request"},

	// Limits.
	{name: "MaxArgs", limits: Limits{MaxArgs: 2}, in: "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", args: []string{"GET", "k"}},
	{name: "over MaxArgs", limits: Limits{MaxArgs: 2}, in: "*3\r\n", err: "invalid multibulk length"},
	{name: "MaxBulk", limits: Limits{MaxBulk: 3}, in: "*1\r\n$3\r\nGET\r\n", args: []string{"GET"}},
	{name: "over MaxBulk", limits: Limits{MaxBulk: 3}, in: "*1\r\n$4\r\n", err: "invalid bulk length"},
	{name: "MaxInline count", limits: Limits{MaxInline: 4}, in: "*123\r\n", err: incomplete},
	{name: "over MaxInline count", limits: Limits{MaxInline: 4}, in: "*1234", err: "too big mbulk count string"},
	{name: "over MaxInline count, ended", limits: Limits{MaxInline: 4}, in: "*0001\r\n", err: "too big mbulk count string"},
	{name: "MaxInline bulk", limits: Limits{MaxInline: 4}, in: "*1\r\n$100\r\n", err: incomplete},
	{name: "over MaxInline bulk", limits: Limits{MaxInline: 4}, in: "*1\r\n$1000\r\n", err: "too big bulk count string"},
	{name: "MaxInline inline", limits: Limits{MaxInline: 4}, in: "PING\r\n", args: []string{"PING"}},
	{name: "MaxInline inline lf", limits: Limits{MaxInline: 4}, in: "PING\n", args: []string{"PING"}},
	{name: "over MaxInline inline", limits: Limits{MaxInline: 4}, in: "PINGS", err: "too big inline request"},
	{name: "over MaxInline inline, ended", limits: Limits{MaxInline: 4}, in: "PINGS\n", err: "too big inline request"},
	{name: "MaxInline inline cr", limits: Limits{MaxInline: 4}, in: "PING\r", err: incomplete},
	{name: "MaxInline inline nul", limits: Limits{MaxInline: 4}, in: "P\x00\nP", err: incomplete},
	{name: "over MaxInline inline nul", limits: Limits{MaxInline: 4}, in: "P\x00\nPI", err: "too big inline request"},
	{name: "over MaxInline count nul", limits: Limits{MaxInline: 4}, in: "*\x00\r\n*", err: "too big mbulk count string"},

	// Clients that have not authenticated.
	{name: "unauthenticated", unauth: true, in: "*2\r\n$4\r\nAUTH\r\n$3\r\npwd\r\n", args: []string{"AUTH", "pwd"}},
	{name: "unauthenticated 10 args", unauth: true, in: "*10\r\n", err: incomplete},
	{name: "unauthenticated 11 args", unauth: true, in: "*11\r\n", err: "unauthenticated multibulk length"},
	{name: "unauthenticated, many args", unauth: true, in: "*2000000\r\n", err: "unauthenticated multibulk length"},
	{name: "unauthenticated, over MaxArgs", unauth: true, in: "*2147483648\r\n", err: "invalid multibulk length"},
	{name: "MaxArgs over INT_MAX", limits: Limits{MaxArgs: math.MaxInt}, in: "*2147483648\r\n", err: "invalid multibulk length"},
	{name: "unauthenticated bulk 16384", unauth: true, in: "*1\r\n$16384\r\n", err: incomplete},
	{name: "unauthenticated bulk 16385", unauth: true, in: "*1\r\n$16385\r\n", err: "unauthenticated bulk length"},
	{name: "unauthenticated inline", unauth: true, in: "a b c d e f g h i j k l\n", args: strings.Fields("a b c d e f g h i j k l")},
}

// newParser returns a parser set up as tc asks.
func (tc commandTest) newParser() *Parser {
	return &Parser{Limits: tc.limits, Unauthenticated: tc.unauth}
}

// command calls p.Command(in) and returns the arguments as strings.
func command(p *Parser, in []byte) (args []string, n int, err error) {
	a, n, err := p.Command(in)
	if a != nil {
		args = make([]string, len(a))
		for i, arg := range a {
			args[i] = string(arg)
		}
	}
	return args, n, err
}

// checkErr reports whether err is what want describes: nil for "",
// ErrIncomplete for "incomplete", else a *ProtocolError with Msg want.
func checkErr(err error, want string) bool {
	switch want {
	case "":
		return err == nil
	case incomplete:
		return errors.Is(err, ErrIncomplete)
	}
	var pe *ProtocolError
	return errors.As(err, &pe) && pe.Msg == want
}

func short(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%q...(%d bytes)", s[:40], len(s))
	}
	return fmt.Sprintf("%q", s)
}

func TestCommand(t *testing.T) {
	for _, tc := range commandTests {
		t.Run(tc.name, func(t *testing.T) {
			args, n, err := command(tc.newParser(), []byte(tc.in))
			if tc.err != "" {
				if !checkErr(err, tc.err) || args != nil || n != 0 {
					t.Fatalf("Command(%s) = %q, %d, %v; want nil, 0, %s", short(tc.in), args, n, err, tc.err)
				}
				return
			}
			wantN := tc.n
			if wantN == 0 {
				wantN = len(tc.in)
			}
			if err != nil || n != wantN || len(args) != len(tc.args) || strings.Join(args, "\x00") != strings.Join(tc.args, "\x00") {
				t.Fatalf("Command(%s) = %q, %d, %v; want %q, %d, nil", short(tc.in), args, n, err, tc.args, wantN)
			}
		})
	}
}

// TestCommandSplit checks that every proper prefix of a request is
// incomplete, and that a malformed request is malformed in no other way
// when cut short.
func TestCommandSplit(t *testing.T) {
	for _, tc := range commandTests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.newParser()
			end := tc.n
			if end == 0 {
				end = len(tc.in)
			}
			if len(tc.in) > 1024 { // the long ones: around the ends only
				for _, i := range []int{0, 1, 2, len(tc.in) - 3, len(tc.in) - 2, len(tc.in) - 1} {
					checkPrefix(t, p, tc, i)
				}
				return
			}
			for i := range end {
				checkPrefix(t, p, tc, i)
			}
		})
	}
}

func checkPrefix(t *testing.T, p *Parser, tc commandTest, i int) {
	t.Helper()
	args, n, err := command(p, []byte(tc.in[:i]))
	if tc.err == "" || tc.err == incomplete {
		if !errors.Is(err, ErrIncomplete) || args != nil || n != 0 {
			t.Fatalf("Command(%s) = %q, %d, %v; want nil, 0, ErrIncomplete", short(tc.in[:i]), args, n, err)
		}
		return
	}
	if !errors.Is(err, ErrIncomplete) && !checkErr(err, tc.err) {
		t.Fatalf("Command(%s) = %q, %d, %v; want ErrIncomplete or %s", short(tc.in[:i]), args, n, err, tc.err)
	}
}

func TestCommandPipeline(t *testing.T) {
	requests := []struct {
		in   string
		args []string
	}{
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n", []string{"SET", "k", "v"}},
		{"PING\r\n", []string{"PING"}},
		{"*0\r\n", []string{}},
		{"get k\n", []string{"get", "k"}},
		{"\r\n", []string{}},
		{"*2\r\n$4\r\nECHO\r\n$2\r\n\r\n\r\n", []string{"ECHO", "\r\n"}},
		{"echo \"x y\"\r\n", []string{"echo", "x y"}},
		{"*1\r\n$4\r\nQUIT\r\n", []string{"QUIT"}},
	}
	var all []byte
	for _, r := range requests {
		all = append(all, r.in...)
	}
	var p Parser
	b := all
	for _, r := range requests {
		args, n, err := command(&p, b)
		if err != nil || n != len(r.in) || strings.Join(args, "\x00") != strings.Join(r.args, "\x00") {
			t.Fatalf("Command(%s) = %q, %d, %v; want %q, %d, nil", short(string(b)), args, n, err, r.args, len(r.in))
		}
		b = b[n:]
	}
	if args, n, err := command(&p, b); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("Command(%q) = %q, %d, %v; want nil, 0, ErrIncomplete", b, args, n, err)
	}
}

// TestCommandArgsCapped checks that appending to an argument cannot
// overwrite the bytes after it.
func TestCommandArgsCapped(t *testing.T) {
	for _, in := range []string{"*2\r\n$1\r\na\r\n$1\r\nb\r\n", "a b\r\n", "\"a\" \"b\"\r\n"} {
		b := []byte(in)
		var p Parser
		args, _, err := p.Command(b)
		if err != nil {
			t.Fatalf("Command(%q) error %v", in, err)
		}
		_ = append(args[0], "XXXXXXXX"...)
		if string(b) != in || string(args[1]) != "b" {
			t.Errorf("after appending to args[0] of Command(%q): input %q, args[1] %q; want both untouched", in, b, args[1])
		}
	}
}

// TestCommandReuse checks that a Parser's results do not depend on what it
// parsed before, and that earlier inline arguments do not stay in its
// scratch space.
func TestCommandReuse(t *testing.T) {
	var p Parser
	for _, tc := range commandTests {
		if tc.limits != (Limits{}) || tc.unauth {
			continue
		}
		want, wantN, wantErr := command(new(Parser), []byte(tc.in))
		got, n, err := command(&p, []byte(tc.in))
		if n != wantN || fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%s: reused Command = %q, %d, %v; want %q, %d, %v", tc.name, got, n, err, want, wantN, wantErr)
		}
	}
}

func TestProtocolError(t *testing.T) {
	var p Parser
	_, _, err := p.Command([]byte("*x\r\n"))
	if got, want := err.Error(), "Protocol error: invalid multibulk length"; got != want {
		t.Errorf("Command(\"*x\\r\\n\") error = %q; want %q", got, want)
	}
}

func TestCommandAllocs(t *testing.T) {
	var pipeline []byte
	for i := range 16 {
		pipeline = AppendCommand(pipeline, []byte("SET"), fmt.Appendf(nil, "key:%012d", i), bytes.Repeat([]byte{'x'}, 16))
	}
	inline := []byte("SET \"key:000000001234\" 'xxxx xxxx' \"\\x00\\n\"\r\nGET k\r\n")
	for _, tc := range []struct {
		name string
		in   []byte
	}{{"pipeline", pipeline}, {"inline", inline}} {
		t.Run(tc.name, func(t *testing.T) {
			var p Parser
			allocs := testing.AllocsPerRun(100, func() {
				for b := tc.in; len(b) > 0; {
					_, n, err := p.Command(b)
					if err != nil {
						panic(err)
					}
					b = b[n:]
				}
			})
			if allocs != 0 {
				t.Errorf("Command allocations per run over %s = %v; want 0", tc.name, allocs)
			}
		})
	}
}

// bigRequest is RPUSH k and n one-byte elements, as an array request.
func bigRequest(n int) []byte {
	args := [][]byte{[]byte("RPUSH"), []byte("k")}
	for i := range n {
		args = append(args, []byte{'a' + byte(i%26)})
	}
	return AppendCommand(nil, args...)
}

// checkBig fails unless args are those of bigRequest(n).
func checkBig(t *testing.T, args [][]byte, n int) {
	t.Helper()
	if len(args) != n+2 || string(args[0]) != "RPUSH" || string(args[1]) != "k" {
		t.Fatalf("got %d arguments starting %q; want %d starting RPUSH k", len(args), args[:min(len(args), 2)], n+2)
	}
	for i, a := range args[2:] {
		if len(a) != 1 || a[0] != 'a'+byte(i%26) {
			t.Fatalf("argument %d = %q; want %q", i+2, a, 'a'+byte(i%26))
		}
	}
}

// feedHalf gives p the first half of a request, which it must find
// incomplete.
func feedHalf(t *testing.T, p *Parser, req []byte) {
	t.Helper()
	if _, _, err := p.Command(req[:len(req)/2]); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("Command of half = %v; want ErrIncomplete", err)
	}
}

// TestCommandManyArgs: a request may have more than a million arguments,
// up to math.MaxInt32, as Redis 7.0 takes (it refuses only a count past
// INT_MAX). What the Parser keeps of a request still arriving grows with
// what has arrived, not with the count its header announces.
func TestCommandManyArgs(t *testing.T) {
	var p Parser
	req := bigRequest(1 << 20)
	args, n, err := p.Command(req)
	if err != nil || n != len(req) {
		t.Fatalf("Command of %d arguments = %d, %v; want %d, nil", 1<<20+2, n, err, len(req))
	}
	checkBig(t, args, 1<<20)

	const arrived = 3000
	b := append([]byte("*2147483647\r\n"), bytes.Repeat([]byte("$1\r\na\r\n"), arrived)...)
	var q Parser
	if _, _, err := q.Command(b); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("Command of %d arguments of %d = %v; want ErrIncomplete", arrived, math.MaxInt32, err)
	}
	if kept := 4*cap(q.spans) + 24*cap(q.args); kept > 2*len(b) {
		t.Errorf("after %d arguments of %d the Parser keeps %d bytes; want at most twice the %d bytes arrived",
			arrived, math.MaxInt32, kept, len(b))
	}
}

// TestCommandResume feeds a request as a connection's buffer holds it,
// growing, and checks that going on from where the last call stopped
// gives what one call over the whole request gives, also when the buffer
// moves (as it does when it grows) and after Reset.
func TestCommandResume(t *testing.T) {
	const n = 20000
	req := bigRequest(n)
	for _, piece := range []int{1, 7, 4096} {
		t.Run(fmt.Sprint("pieces of ", piece), func(t *testing.T) {
			var p Parser
			buf := make([]byte, 0, len(req))
			for len(buf) < len(req) {
				buf = append(buf, req[len(buf):min(len(buf)+piece, len(req))]...)
				args, m, err := p.Command(buf)
				if len(buf) < len(req) {
					if !errors.Is(err, ErrIncomplete) || args != nil || m != 0 {
						t.Fatalf("Command of %d bytes of %d = %d arguments, %d, %v; want nil, 0, ErrIncomplete", len(buf), len(req), len(args), m, err)
					}
					continue
				}
				if err != nil || m != len(req) {
					t.Fatalf("Command of the whole request = %d, %v; want %d, nil", m, err, len(req))
				}
				checkBig(t, args, n)
			}
		})
	}

	t.Run("moved", func(t *testing.T) {
		var p Parser
		old := bytes.Clone(req)
		feedHalf(t, &p, old)
		// The buffer moves, and what it held before is overwritten.
		moved := bytes.Clone(req)
		clear(old)
		args, m, err := p.Command(moved)
		if err != nil || m != len(moved) {
			t.Fatalf("Command after the move = %d, %v; want %d, nil", m, err, len(moved))
		}
		checkBig(t, args, n)
	})

	// A buffer that moves at every call, its old bytes overwritten: a
	// request of up to 1,024 arguments is parsed afresh each time, a longer
	// one goes on from its offsets.
	for _, args := range []int{1000, 3000} {
		t.Run(fmt.Sprint("moving, ", args, " arguments"), func(t *testing.T) {
			req := bigRequest(args - 2)
			var p Parser
			var old []byte
			for have := 997; ; have = min(have+997, len(req)) {
				buf := bytes.Clone(req[:have])
				clear(old)
				old = buf
				got, m, err := p.Command(buf)
				if have < len(req) {
					if !errors.Is(err, ErrIncomplete) {
						t.Fatalf("Command of %d bytes of %d = %v; want ErrIncomplete", have, len(req), err)
					}
					continue
				}
				if err != nil || m != len(req) {
					t.Fatalf("Command of the whole request = %d, %v; want %d, nil", m, err, len(req))
				}
				checkBig(t, got, args-2)
				return
			}
		})
	}

	t.Run("no slices while arriving", func(t *testing.T) {
		// While a request of many arguments arrives, the Parser keeps
		// where they are, not a slice of each for the collector to follow.
		var p Parser
		feedHalf(t, &p, req)
		if p.part.n == 0 {
			t.Fatal("nothing kept of the first half")
		}
		for i, a := range p.args[:cap(p.args)] {
			if a != nil {
				t.Fatalf("argument slot %d holds %q while the request arrives; want offsets only", i, a)
			}
		}
	})

	t.Run("reset", func(t *testing.T) {
		var p Parser
		buf := bytes.Clone(req)
		feedHalf(t, &p, buf)
		// The same buffer, other bytes: Reset, and they are parsed afresh.
		p.Reset()
		other := "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n"
		args, m, err := command(&p, append(buf[:0], other...))
		if err != nil || m != len(other) || strings.Join(args, " ") != "ECHO hi" {
			t.Fatalf("Command(%q) after Reset = %q, %d, %v; want [ECHO hi], %d, nil", other, args, m, err, len(other))
		}
	})

	t.Run("other request, same buffer, no reset", func(t *testing.T) {
		// Against the contract, but the array's header differs: parsed
		// afresh rather than resumed.
		var p Parser
		buf := make([]byte, 0, 64)
		buf = append(buf, "*3\r\n$3\r\nSET\r\n$1\r\na\r\n"...)
		if _, _, err := p.Command(buf); !errors.Is(err, ErrIncomplete) {
			t.Fatalf("Command(%q) = %v; want ErrIncomplete", buf, err)
		}
		buf = append(buf[:0], "*1\r\n$4\r\nPING\r\n$4\r\nECHO\r\n"...)
		args, m, err := command(&p, buf)
		if err != nil || m != 14 || strings.Join(args, " ") != "PING" {
			t.Fatalf("Command(%q) = %q, %d, %v; want [PING], 14, nil", buf, args, m, err)
		}
	})

	t.Run("error after resuming", func(t *testing.T) {
		var p Parser
		buf := bytes.Clone(req)
		feedHalf(t, &p, buf)
		i := bytes.LastIndexByte(buf[:len(buf)*3/4], '$')
		buf[i] = ':'
		if _, _, err := p.Command(buf); !checkErr(err, "expected '$', got ':'") {
			t.Fatalf("Command with a bad header after the first half = %v; want expected '$', got ':'", err)
		}
		// The error ends the request: the next call starts afresh.
		args, m, err := command(&p, []byte("PING\r\n"))
		if err != nil || m != 6 || strings.Join(args, " ") != "PING" {
			t.Fatalf("Command(PING) after the error = %q, %d, %v", args, m, err)
		}
	})
}

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{in: "", want: nil},
		{in: "  \t ", want: nil},
		{in: "port 6380", want: []string{"port", "6380"}},
		{in: `requirepass "a b\x41\n"`, want: []string{"requirepass", "a bA\n"}},
		{in: `notify-keyspace-events ""`, want: []string{"notify-keyspace-events", ""}},
		{in: `dir '/tmp/it\'s'`, want: []string{"dir", "/tmp/it's"}},
		{in: `bind "127.0.0.1`, err: true},
		{in: `x "a"b`, err: true},
		// sdssplitargs reads a C string: a NUL ends it.
		{in: "a\x00b c", want: []string{"a"}},
		{in: "a \x00 b", want: []string{"a"}},
		{in: "'a'\x00b", want: []string{"a"}},
		{in: "\"a\x00b\"", err: true},
		{in: `"a\x00b"`, want: []string{"a\x00b"}},
	} {
		args, err := SplitArgs([]byte(tc.in))
		if tc.err {
			if err == nil {
				t.Errorf("SplitArgs(%q) = %q; want an error", tc.in, args)
			}
			continue
		}
		got := make([]string, 0, len(args))
		for _, a := range args {
			got = append(got, string(a))
		}
		if err != nil || strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") || len(got) != len(tc.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestRelease checks that Release clears the Parser's pointers into the
// caller's buffer, drops a long slice of arguments, and keeps a request
// that has not all arrived.
func TestRelease(t *testing.T) {
	var p Parser
	if _, _, err := p.Command([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")); err != nil {
		t.Fatal(err)
	}
	p.Release()
	for i, a := range p.args[:cap(p.args)] {
		if a != nil {
			t.Fatalf("after Release, argument slot %d still holds %q", i, a)
		}
	}
	if cap(p.args) == 0 {
		t.Error("Release dropped a short slice of arguments; want it kept for the next request")
	}

	big := bigRequest(5000)
	args, _, err := p.Command(big)
	if err != nil {
		t.Fatal(err)
	}
	checkBig(t, args, 5000)
	p.Release()
	if cap(p.args) != 0 {
		t.Errorf("after a request of 5000 arguments and Release, the Parser keeps %d slots; want none", cap(p.args))
	}

	// Half a request: Release keeps what was parsed, and the rest goes on.
	buf := bytes.Clone(big)
	feedHalf(t, &p, buf)
	parsed := p.part.n
	p.Release()
	if p.part.n != parsed || parsed == 0 {
		t.Fatalf("Release changed a request that has not all arrived: %d arguments parsed, now %d", parsed, p.part.n)
	}
	args, n, err := p.Command(buf)
	if err != nil || n != len(big) {
		t.Fatalf("Command after Release of the rest: %d, %v", n, err)
	}
	checkBig(t, args, 5000)

	// A request served, then half of the next in the same read: Release
	// clears the served one's arguments and keeps the half's.
	for _, size := range []int{100, 5000} {
		next := bigRequest(size)
		buf := append(bytes.Clone(bigRequest(900)), next[:len(next)/2]...)
		var p Parser
		args, n, err := p.Command(buf)
		if err != nil {
			t.Fatal(err)
		}
		checkBig(t, args, 900)
		feedHalf(t, &p, buf[n:])
		p.Release()
		kept := 0 // the arriving request's own, when kept as slices
		if !p.part.inSpans {
			kept = p.part.n
		}
		for i, a := range p.args[kept:cap(p.args)] {
			if a != nil {
				t.Fatalf("%d arguments arriving: after Release, argument slot %d holds %q of the request served", size, i, a)
			}
		}
		rest := append(bytes.Clone(buf[n:]), next[len(next)/2:]...)
		args, m, err := p.Command(rest)
		if err != nil || m != len(next) {
			t.Fatalf("%d arguments: Command of the rest after Release = %d, %v", size, m, err)
		}
		checkBig(t, args, size)
	}
}
