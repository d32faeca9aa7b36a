package resp

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// fuzzParsers are the parser settings FuzzCommand tries each input with:
// the defaults, tight limits, and an unauthenticated client.
var fuzzParsers = []Parser{
	{},
	{Limits: Limits{MaxInline: 16, MaxBulk: 32, MaxArgs: 8}},
	{Unauthenticated: true},
}

// result is what Command or Parse returned, with the arguments copied out
// of the parser's buffers.
type result struct {
	args [][]byte
	n    int
	err  error
}

func (r result) equal(s result) bool {
	return r.n == s.n && sameErr(r.err, s.err) &&
		slices.EqualFunc(r.args, s.args, func(a, b []byte) bool { return string(a) == string(b) })
}

// sameErr reports whether a and b are both nil, both ErrIncomplete, or
// protocol errors with the same message.
func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

// checkErrClass fails unless err is nil, ErrIncomplete or a *ProtocolError
// whose text has no '\r' or '\n', which an error reply cannot carry.
func checkErrClass(t *testing.T, call string, err error) {
	t.Helper()
	var pe *ProtocolError
	if err != nil && !errors.Is(err, ErrIncomplete) && !errors.As(err, &pe) {
		t.Fatalf("%s error = %v (%T); want nil, ErrIncomplete or *ProtocolError", call, err, err)
	}
	if pe != nil && strings.ContainsAny(pe.Error(), "\r\n") {
		t.Fatalf("%s error = %q; want no '\\r' or '\\n' in it", call, pe.Error())
	}
}

func runCommand(p *Parser, b []byte) result {
	args, n, err := p.Command(b)
	r := result{n: n, err: err}
	for _, a := range args {
		r.args = append(r.args, slices.Clone(a))
	}
	return r
}

// splitPoints returns where to cut an input of n bytes: everywhere if it is
// short, else near both ends and at a few points between.
func splitPoints(n int) []int {
	if n <= 256 {
		pts := make([]int, n)
		for i := range pts {
			pts[i] = i
		}
		return pts
	}
	pts := []int{0, 1, 2, 3, n / 4, n / 3, n / 2, n - 3, n - 2, n - 1}
	for i := 1; i < 16; i++ {
		pts = append(pts, n*i/16)
	}
	return pts
}

func FuzzCommand(f *testing.F) {
	for _, tc := range commandTests {
		if len(tc.in) <= 1024 {
			f.Add([]byte(tc.in))
		}
	}
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\nset a \"b c\"\n*0\r\n"))
	f.Add(bigRequest(maxKeptArgs)) // parsed into offsets while it arrives
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, config := range fuzzParsers {
			p := config
			got := runCommand(&p, b)
			checkErrClass(t, "Command", got.err)
			if got.err != nil && (got.n != 0 || got.args != nil) {
				t.Fatalf("Command(%q) = %q, %d, %v; want nil, 0 with an error", b, got.args, got.n, got.err)
			}
			if got.err == nil {
				if got.n <= 0 || got.n > len(b) {
					t.Fatalf("Command(%q) n = %d; want 1 to %d", b, got.n, len(b))
				}
				for _, i := range splitPoints(got.n) {
					if r := runCommand(&p, b[:i]); !errors.Is(r.err, ErrIncomplete) {
						t.Fatalf("Command(%q) = %q, %d, %v; want nil, 0, ErrIncomplete (prefix of %q)", b[:i], r.args, r.n, r.err, b[:got.n])
					}
				}
				if config.Limits == (Limits{}) && !config.Unauthenticated {
					var w Writer
					w.Command(got.args...)
					enc := w.Buf
					var q Parser
					if r := runCommand(&q, enc); !r.equal(result{got.args, len(enc), nil}) {
						t.Fatalf("Command(%q) = %q, %d, %v; want %q, %d, nil (re-encoded from %q)", enc, r.args, r.n, r.err, got.args, len(enc), b)
					}
				}
			}

			// Feeding a prefix first, as a connection does, changes nothing.
			for _, i := range splitPoints(len(b)) {
				q := config
				first := runCommand(&q, b[:i])
				switch {
				case got.err == nil && i >= got.n:
					if !first.equal(got) {
						t.Fatalf("Command(%q) = %q, %d, %v; want %q, %d, nil as for %q", b[:i], first.args, first.n, first.err, got.args, got.n, b)
					}
				case !errors.Is(first.err, ErrIncomplete) && !sameErr(first.err, got.err):
					t.Fatalf("Command(%q) = %q, %d, %v; want ErrIncomplete or %v, as for %q", b[:i], first.args, first.n, first.err, got.err, b)
				}
				if r := runCommand(&q, b); !r.equal(got) {
					t.Fatalf("Command(%q) after Command(%q) = %q, %d, %v; want %q, %d, %v", b, b[:i], r.args, r.n, r.err, got.args, got.n, got.err)
				}
			}

			// So does feeding it a piece at a time into one buffer, each
			// call going on from where the one before stopped, and moving
			// the buffer half way.
			q := config
			grown := make([]byte, 0, len(b))
			for i := range len(b) {
				grown = append(grown, b[i])
				if i == len(b)/2 {
					grown = append(make([]byte, 0, len(b)), grown...)
				}
				r := runCommand(&q, grown)
				if i < len(b)-1 && errors.Is(r.err, ErrIncomplete) {
					continue
				}
				fresh := config
				want := runCommand(&fresh, grown)
				if !r.equal(want) {
					t.Fatalf("Command(%q) fed a byte at a time = %q, %d, %v; want %q, %d, %v", grown, r.args, r.n, r.err, want.args, want.n, want.err)
				}
				break
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, tc := range parseTests {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := Parse(b)
		checkErrClass(t, "Parse", err)
		if err != nil {
			if n != 0 || !equalValue(v, Value{}) {
				t.Fatalf("Parse(%q) = %s, %d, %v; want zero Value, 0 with an error", b, format(v), n, err)
			}
			for _, i := range splitPoints(len(b)) {
				if w, m, e := Parse(b[:i]); !errors.Is(e, ErrIncomplete) && !sameErr(e, err) {
					t.Fatalf("Parse(%q) = %s, %d, %v; want ErrIncomplete or %v, as for %q", b[:i], format(w), m, e, err, b)
				}
			}
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("Parse(%q) n = %d; want 1 to %d", b, n, len(b))
		}
		for _, i := range splitPoints(len(b)) {
			w, m, e := Parse(b[:i])
			if i < n && !errors.Is(e, ErrIncomplete) || i >= n && (e != nil || m != n || !equalValue(w, v)) {
				t.Fatalf("Parse(%q) = %s, %d, %v; want what Parse(%q) gave or ErrIncomplete before %d bytes", b[:i], format(w), m, e, b, n)
			}
		}

		w := Writer{Proto: 3}
		w.Value(v)
		if v2, n2, err := Parse(w.Buf); err != nil || n2 != len(w.Buf) || !equalValue(v2, v) {
			t.Fatalf("Parse(%q) = %s, %d, %v; want %s, %d, nil (re-encoded from %q)", w.Buf, format(v2), n2, err, format(v), len(w.Buf), b[:n])
		}
		w = Writer{Proto: 2}
		w.Value(v)
		if v2, n2, err := Parse(w.Buf); err != nil || n2 != len(w.Buf) {
			t.Fatalf("Parse(%q) = %s, %d, %v; want a value of %d bytes (RESP2 re-encoded from %q)", w.Buf, format(v2), n2, err, len(w.Buf), b[:n])
		}
	})
}

// FuzzDouble checks that the text Writer.Double writes reads back as the
// same double in RESP3, and is the same text in a RESP2 bulk string.
func FuzzDouble(f *testing.F) {
	for _, x := range []float64{0, math.Copysign(0, -1), 0.1, 1.5, 1e21, 1e-7, 1 << 62, 1 << 63, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.NaN()} {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		w := Writer{Proto: 3}
		w.Double(x)
		v, n, err := Parse(w.Buf)
		if err != nil || n != len(w.Buf) || v.Type != Double ||
			math.Float64bits(v.Float) != bits && !(math.IsNaN(x) && math.IsNaN(v.Float)) {
			t.Fatalf("Parse(%q) = %s, %d, %v; want Double %v (%#x)", w.Buf, format(v), n, err, x, bits)
		}
		text := string(v.Str)
		w = Writer{Proto: 2}
		w.Double(x)
		if v, n, err := Parse(w.Buf); err != nil || n != len(w.Buf) || v.Type != BulkString || string(v.Str) != text {
			t.Fatalf("Parse(%q) = %s, %d, %v; want BulkString %q", w.Buf, format(v), n, err, text)
		}
	})
}
