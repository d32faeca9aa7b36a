package http1

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// chunkedTest is a chunked body, possibly followed by other bytes, and what
// decoding it gives: the body and where it ends, or the reason of the
// *Error (all have status 400).
type chunkedTest struct {
	name    string
	in      string
	trailer int // MaxTrailerBytes

	body string // the decoded body
	rest string // what follows the body in the input
	err  *Error // nil for a valid body
}

var chunkedTests = []chunkedTest{
	// Valid bodies.
	{name: "empty", in: "0\r\n\r\n"},
	{name: "one chunk", in: "5\r\nhello\r\n0\r\n\r\n", body: "hello"},
	{name: "chunks", in: "5\r\nhello\r\n1\r\n,\r\n6\r\n world\r\n0\r\n\r\n", body: "hello, world"},
	{name: "hex", in: "a\r\n0123456789\r\nB\r\nabcdefghijk\r\n0\r\n\r\n", body: "0123456789abcdefghijk"},
	{name: "leading zeros", in: "0005\r\nhello\r\n000\r\n\r\n", body: "hello"},
	{name: "16 digits", in: "0000000000000005\r\nhello\r\n0000000000000000\r\n\r\n", body: "hello"},
	{name: "data with CRLF", in: "4\r\n\r\n\r\n\r\n0\r\n\r\n", body: "\r\n\r\n"},
	{name: "binary data", in: "4\r\n\x00\xff\n\r\r\n0\r\n\r\n", body: "\x00\xff\n\r"},
	{name: "extension", in: "5;name=value\r\nhello\r\n0\r\n\r\n", body: "hello"},
	{name: "extensions", in: "5;a;b=c;d=\"e;f\"\r\nhello\r\n0;last\r\n\r\n", body: "hello"},
	{name: "extension BWS", in: "5 \t; a = b\r\nhello\r\n0\r\n\r\n", body: "hello"},
	{name: "extension at the limit", in: "5;" + strings.Repeat("a", 4093) + "\r\nhello\r\n0\r\n\r\n", body: "hello"},
	{name: "extensions on many small chunks", in: strings.Repeat("5;name="+strings.Repeat("v", 40)+"\r\nhello\r\n", 100) + "0\r\n\r\n", body: strings.Repeat("hello", 100)},
	{name: "extensions paid off by data", in: strings.Repeat("1;"+strings.Repeat("a", 3000)+"\r\nx\r\n", 3) + "2710\r\n" + strings.Repeat("y", 10000) + "\r\n" + strings.Repeat("1;"+strings.Repeat("a", 3000)+"\r\nz\r\n", 3) + "0\r\n\r\n", body: "xxx" + strings.Repeat("y", 10000) + "zzz"},
	{name: "trailer", in: "5\r\nhello\r\n0\r\nExpires: never\r\n\r\n", body: "hello"},
	{name: "trailers", in: "0\r\nA: 1\r\nB-c:\r\nD:  x\ty \r\n\r\n"},
	{name: "trailer obs-text", in: "0\r\nA: caf\xe9\r\n\r\n"},
	{name: "followed by a request", in: "3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n", body: "abc", rest: "GET / HTTP/1.1\r\n"},
	{name: "trailer limit exact", in: "0\r\nA: 1\r\n\r\n", trailer: 8},
	{name: "largest size", in: "7fffffffffffffff\r\nabc", body: "abc"}, // unfinished: checks only the size

	// Chunk sizes.
	{name: "no size", in: "\r\nhello\r\n0\r\n\r\n", err: errChunkSize},
	{name: "size not hex", in: "g\r\n", err: errChunkSize},
	{name: "size plus", in: "+5\r\nhello\r\n0\r\n\r\n", err: errChunkSize},
	{name: "size minus", in: "-5\r\nhello\r\n0\r\n\r\n", err: errChunkSize},
	{name: "size 0x", in: "0x5\r\nhello\r\n0\r\n\r\n", err: errChunkSize},
	{name: "size leading space", in: " 5\r\nhello\r\n0\r\n\r\n", err: errChunkSize},
	{name: "size trailing space", in: "5 \r\nhello\r\n0\r\n\r\n", err: errChunkSize},
	{name: "17 digits", in: "00000000000000005\r\nhello\r\n0\r\n\r\n", err: errChunkTooBig},
	{name: "size overflow", in: "8000000000000000\r\n", err: errChunkTooBig},
	{name: "size bare LF", in: "5\nhello\r\n0\r\n\r\n", err: errBareLF},
	{name: "size bare CR", in: "5\rhello\r\n0\r\n\r\n", err: errBareCR},
	{name: "empty line bare LF", in: "\n", err: errBareLF},

	// Chunk extensions.
	{name: "extension NUL", in: "5;a\x00\r\nhello\r\n0\r\n\r\n", err: errChunkExt},
	{name: "extension bare LF", in: "5;a\nhello\r\n0\r\n\r\n", err: errBareLF},
	{name: "extension bare CR", in: "5;a\rhello\r\n0\r\n\r\n", err: errBareCR},
	// A chunk-size line is at most 4 KiB (its CR included), as Go's reader
	// bounds a line, whatever size it claims; extensions past their
	// chunks' allowance (16 bytes and two a data byte) at most 16 KiB a
	// body.
	{name: "extension too long", in: "5;" + strings.Repeat("a", 4094) + "\r\nhello\r\n0\r\n\r\n", err: errChunkLine},
	{name: "extension of a huge chunk too long", in: "fffffffffffffff;" + strings.Repeat("a", 5000), err: errChunkLine},
	{name: "whitespace after size too long", in: "1" + strings.Repeat(" ", 5000) + "\r\nx\r\n0\r\n\r\n", err: errChunkLine},
	{name: "extensions too long", in: strings.Repeat("1;"+strings.Repeat("a", 3000)+"\r\nx\r\n", 6) + "0\r\n\r\n", err: errChunkExtBig},

	// Chunk data.
	{name: "data too long", in: "5\r\nhello!\r\n0\r\n\r\n", err: errChunkData},
	{name: "data bare LF", in: "5\r\nhello\n0\r\n\r\n", err: errChunkData},
	{name: "data bare CR", in: "5\r\nhello\r0\r\n\r\n", err: errChunkData},

	// Trailer sections.
	{name: "trailer obs-fold", in: "0\r\nA: 1\r\n 2\r\n\r\n", err: errObsFold},
	{name: "trailer space before colon", in: "0\r\nA : 1\r\n\r\n", err: errSpaceColon},
	{name: "trailer no colon", in: "0\r\nA\r\n\r\n", err: errFieldName},
	{name: "trailer empty name", in: "0\r\n: 1\r\n\r\n", err: errFieldName},
	{name: "trailer NUL in value", in: "0\r\nA: \x00\r\n\r\n", err: errFieldValue},
	{name: "trailer bare LF", in: "0\r\nA: 1\n\r\n", err: errBareLF},
	{name: "trailer bare CR", in: "0\r\nA: 1\rB: 2\r\n\r\n", err: errBareCR},
	{name: "trailer too large", in: "0\r\nA: 12\r\n\r\n", trailer: 8, err: errTrailerBig},
	{name: "end bare LF", in: "0\r\n\n", err: errBareLF},
	{name: "end bare CR", in: "0\r\n\rX", err: errBareCR},
}

// decode decodes in, handing it to d in pieces cut at the given points, as
// a connection delivers it, and returns the body and how much of in it took.
func decode(d *ChunkedDecoder, in []byte, cuts ...int) (body []byte, n int, err error) {
	cuts = append(cuts, len(in))
	from := 0
	for _, to := range cuts {
		piece := in[from:to]
		for len(piece) > 0 && !d.Done() {
			data, m, err := d.Decode(piece)
			if err != nil {
				return body, n, err
			}
			if len(data) > 0 && !within(data, piece[:m]) {
				panic("Decode returned data outside its input")
			}
			body = append(body, data...)
			n += m
			piece = piece[m:]
		}
		from = to
	}
	return body, n, nil
}

// checkDecode fails unless decoding tc.in, cut at the given points, gives
// what tc wants.
func checkDecode(t *testing.T, tc *chunkedTest, cuts ...int) {
	t.Helper()
	d := ChunkedDecoder{MaxTrailerBytes: tc.trailer}
	body, n, err := decode(&d, []byte(tc.in), cuts...)
	call := "Decode(" + strconv.Quote(tc.in) + ") cut at [" + intsString(cuts) + "]"
	if tc.err != nil {
		if !errors.Is(err, tc.err) {
			t.Fatalf("%s error = %v; want %v", call, err, tc.err)
		}
		if e := new(Error); !errors.As(err, &e) || e.Status != 400 {
			t.Fatalf("%s error = %v; want status 400", call, err)
		}
		if _, m, again := d.Decode([]byte("0\r\n\r\n")); m != 0 || again != err {
			t.Fatalf("Decode after %v = %d, %v; want 0, the same error", err, m, again)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s error = %v; want nil", call, err)
	}
	if string(body) != tc.body || n != len(tc.in)-len(tc.rest) {
		t.Fatalf("%s = %q, %d bytes; want %q, %d", call, body, n, tc.body, len(tc.in)-len(tc.rest))
	}
	unfinished := strings.HasPrefix(tc.name, "largest")
	if d.Done() == unfinished {
		t.Fatalf("%s Done() = %v; want %v", call, d.Done(), !unfinished)
	}
}

func intsString(v []int) string {
	var b []byte
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(b)
}

func TestChunkedDecoder(t *testing.T) {
	for i := range chunkedTests {
		tc := &chunkedTests[i]
		t.Run(tc.name, func(t *testing.T) {
			checkDecode(t, tc)
			// One byte at a time.
			cuts := make([]int, len(tc.in))
			for i := range cuts {
				cuts[i] = i
			}
			checkDecode(t, tc, cuts...)
			// Two pieces, cut everywhere (in a long input, at some 500
			// places: the long cases are about limits).
			for i := 0; i < len(tc.in); i += max(1, len(tc.in)/500) {
				checkDecode(t, tc, i)
			}
		})
	}
}

func TestChunkedReset(t *testing.T) {
	d := ChunkedDecoder{MaxTrailerBytes: 100}
	in := []byte("3\r\nabc\r\n0\r\n\r\n")
	for range 2 {
		if body, n, err := decode(&d, in); err != nil || string(body) != "abc" || n != len(in) {
			t.Fatalf("Decode(%q) = %q, %d, %v; want abc, %d, nil", in, body, n, err, len(in))
		}
		if data, n, err := d.Decode(in); data != nil || n != 0 || err != nil {
			t.Fatalf("Decode after the end = %q, %d, %v; want nil, 0, nil", data, n, err)
		}
		d.Reset()
	}
	if d.MaxTrailerBytes != 100 {
		t.Errorf("after Reset, MaxTrailerBytes = %d; want 100", d.MaxTrailerBytes)
	}
}

// chunkedBody is a body of 16 chunks of 1 KiB.
func chunkedBody() []byte {
	var b []byte
	for range 16 {
		b = append(b, "400\r\n"...)
		b = append(b, strings.Repeat("x", 1024)...)
		b = append(b, "\r\n"...)
	}
	return append(b, "0\r\n\r\n"...)
}

func TestChunkedAllocs(t *testing.T) {
	in := chunkedBody()
	var d ChunkedDecoder
	allocs := testing.AllocsPerRun(100, func() {
		d.Reset()
		for rest := in; len(rest) > 0; {
			_, n, err := d.Decode(rest)
			if err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
	})
	if allocs != 0 {
		t.Errorf("Decode allocates %v times; want 0", allocs)
	}
}

func BenchmarkChunkedDecoder(b *testing.B) {
	in := chunkedBody()
	var d ChunkedDecoder
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		d.Reset()
		for rest := in; len(rest) > 0; {
			_, n, err := d.Decode(rest)
			if err != nil {
				b.Fatal(err)
			}
			rest = rest[n:]
		}
	}
}

// With KeepTrailer, the trailer section's field lines are kept, however
// the body is split; without it, or without a trailer, there are none.
func TestChunkedKeepTrailer(t *testing.T) {
	const body = "3\r\nabc\r\n0\r\nX-Sum: 42\r\nX-More: a b\r\n\r\nGET"
	for split := 0; split <= len(body); split++ {
		d := ChunkedDecoder{KeepTrailer: true}
		for _, part := range []string{body[:split], body[split:]} {
			for b := []byte(part); len(b) > 0 && !d.Done(); {
				_, n, err := d.Decode(b)
				if err != nil {
					t.Fatalf("split %d: %v", split, err)
				}
				b = b[n:]
			}
		}
		if got := string(d.Trailer()); !d.Done() || got != "X-Sum: 42\r\nX-More: a b\r\n" {
			t.Fatalf("split %d: done=%v, trailer %q", split, d.Done(), got)
		}
		d.Reset()
		if !d.KeepTrailer || d.Trailer() != nil {
			t.Fatalf("after Reset: KeepTrailer %v, trailer %q", d.KeepTrailer, d.Trailer())
		}
	}
	for _, tc := range []struct {
		body string
		keep bool
	}{{"0\r\n\r\n", true}, {"0\r\nX-Sum: 42\r\n\r\n", false}} {
		d := ChunkedDecoder{KeepTrailer: tc.keep}
		if _, _, err := d.Decode([]byte(tc.body)); err != nil || !d.Done() || d.Trailer() != nil {
			t.Fatalf("%q, keep %v: err %v, done %v, trailer %q", tc.body, tc.keep, err, d.Done(), d.Trailer())
		}
	}
}

// A pooled handler's body pipe holds about what is unread, however long
// the body: a reader that lags behind the loop, and so never empties the
// pipe, does not make it keep what it read.
func TestBodyPipeStaysSmall(t *testing.T) {
	p := newBodyPipe(nil, false, -1)
	chunk := make([]byte, 4<<10)
	b := make([]byte, 3<<10)
	most := 0
	for range 4096 { // 16 MiB
		p.push(chunk)
		for len(p.buf)-p.off > 16<<10 { // the reader stays up to 16 KiB behind
			if _, err := p.Read(b); err != nil {
				t.Fatal(err)
			}
		}
		most = max(most, cap(p.buf))
	}
	if most > 64<<10 {
		t.Fatalf("the pipe's buffer grew to %d KiB, with at most 20 KiB unread", most>>10)
	}
}
