package http1

import (
	"bufio"
	"bytes"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fuzzLimits are the limits FuzzParse tries each input with: the defaults
// and tight ones.
var fuzzLimits = []Limits{{}, {MaxHeaderBytes: 64, MaxHeaders: 3}}

// parsed is what Parse returned, with the Request's slices copied out.
type parsed struct {
	n      int
	err    error
	fields []string
}

func runParse(p *Parser, b []byte) parsed {
	var r Request
	n, err := p.Parse(b, &r)
	res := parsed{n: n, err: err}
	if err == nil {
		res.fields = append(res.fields, string(r.Method), string(r.Target), strconv.Itoa(r.Minor),
			strconv.FormatInt(r.ContentLength, 10), strconv.FormatBool(r.Chunked), strconv.FormatBool(r.KeepAlive),
			strconv.FormatBool(r.Expect100), strconv.FormatBool(r.Upgrade), string(r.UpgradeTo), string(r.Host), strconv.Itoa(r.HeadLen))
		for _, h := range r.Headers {
			res.fields = append(res.fields, string(h.Name), string(h.Value))
		}
	}
	return res
}

func (r parsed) equal(s parsed) bool {
	return r.n == s.n && errors.Is(r.err, s.err) && errors.Is(s.err, r.err) && slices.Equal(r.fields, s.fields)
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
	pts := []int{0, 1, 2, 3, n / 3, n / 2, n - 3, n - 2, n - 1}
	for i := 1; i < 16; i++ {
		pts = append(pts, n*i/16)
	}
	return pts
}

func FuzzParse(f *testing.F) {
	for _, tc := range parseTests {
		f.Add([]byte(tc.in))
	}
	f.Add([]byte(browserHead + plaintextHead))
	f.Add([]byte("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, limits := range fuzzLimits {
			p := Parser{Limits: limits}
			var r Request
			n, err := p.Parse(b, &r)
			var e *Error
			switch {
			case err == nil:
			case errors.Is(err, ErrIncomplete):
				if len(b) >= p.maxHeaderBytes() {
					t.Fatalf("Parse(%q) = ErrIncomplete with %d bytes; want a result by %d", b, len(b), p.maxHeaderBytes())
				}
			case errors.As(err, &e):
				if !slices.Contains([]int{400, 417, 431, 501, 505}, e.Status) {
					t.Fatalf("Parse(%q) status %d; want 400, 417, 431, 501 or 505", b, e.Status)
				}
			default:
				t.Fatalf("Parse(%q) error = %v (%T); want nil, ErrIncomplete or *Error", b, err, err)
			}
			if err != nil && n != 0 {
				t.Fatalf("Parse(%q) = %d, %v; want 0 with an error", b, n, err)
			}
			if err == nil {
				if n <= 0 || n > len(b) || r.HeadLen != n {
					t.Fatalf("Parse(%q) = %d, HeadLen %d; want 1 to %d, equal", b, n, r.HeadLen, len(b))
				}
				head := b[:n]
				views := [][]byte{r.Method, r.Target, r.Host, r.UpgradeTo}
				for _, h := range r.Headers {
					views = append(views, h.Name, h.Value)
				}
				for _, v := range views {
					if v != nil && (!within(v, head) || cap(v) != len(v)) {
						t.Fatalf("Parse(%q): slice %q not within the head, or with spare capacity", b, v)
					}
				}
				// Pipelined, the same head twice.
				two := append(slices.Clip(head), head...)
				for i := range 2 {
					if m, err := p.Parse(two[i*n:], &r); m != n || err != nil {
						t.Fatalf("Parse(%q) = %d, %v; want %d, nil", two[i*n:], m, err, n)
					}
				}
			}
			want := runParse(&Parser{Limits: limits}, b)

			// A prefix first, as a connection delivers it, changes nothing.
			for _, i := range splitPoints(len(b)) {
				q := Parser{Limits: limits}
				first := runParse(&q, b[:i])
				if errors.Is(first.err, ErrIncomplete) {
					first = runParse(&q, b)
				}
				if !first.equal(want) {
					t.Fatalf("Parse(%q) then Parse(%q) = %d, %v; want %d, %v", b[:i], b, first.n, first.err, want.n, want.err)
				}
			}
			// A byte at a time.
			if len(b) <= 256 {
				q := Parser{Limits: limits}
				for i := 0; i <= len(b); i++ {
					got := runParse(&q, b[:i])
					if errors.Is(got.err, ErrIncomplete) && i < len(b) {
						continue
					}
					if !got.equal(want) {
						t.Fatalf("Parse(%q) fed a byte at a time = %d, %v at %d bytes; want %d, %v", b, got.n, got.err, i, want.n, want.err)
					}
					break
				}
			}
		}
	})
}

// decoded is what decoding a chunked body gave.
type decoded struct {
	body    string
	n       int
	err     error
	done    bool
	trailer string // the field lines KeepTrailer kept
}

func runDecode(in []byte, cuts ...int) decoded {
	d := ChunkedDecoder{MaxTrailerBytes: 64, KeepTrailer: true}
	body, n, err := decode(&d, in, cuts...)
	if err != nil {
		return decoded{err: err}
	}
	return decoded{string(body), n, nil, d.Done(), string(d.Trailer())}
}

// headEnd finds what bytes.Index finds.
func FuzzHeadEnd(f *testing.F) {
	for _, s := range []string{"", "\r\n\r\n", "\n\r\n", "\r\n\r", "a\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"\r\r\n\r\n", "\n\n\r\n\r\n", "x\r\n\nr\n\r\n\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := headEnd(b), bytes.Index(b, []byte("\r\n\r\n")); got != want {
			t.Fatalf("headEnd(%q) = %d; bytes.Index says %d", b, got, want)
		}
	})
}

func FuzzChunked(f *testing.F) {
	for _, tc := range chunkedTests {
		f.Add([]byte(tc.in), uint64(len(tc.in)))
	}
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		want := runDecode(b)
		var e *Error
		if want.err != nil && (!errors.As(want.err, &e) || e.Status != 400) {
			t.Fatalf("Decode(%q) error = %v; want an *Error with status 400", b, want.err)
		}
		if want.n > len(b) || want.err == nil && !want.done && want.n != len(b) {
			t.Fatalf("Decode(%q) took %d bytes, done %v; want all %d unless done", b, want.n, want.done, len(b))
		}
		if len(want.body) > want.n {
			t.Fatalf("Decode(%q) = %d body bytes from %d input bytes", b, len(want.body), want.n)
		}
		// The trailer kept is the section's field lines, as they came
		// just before the body's end.
		if tr := want.trailer; tr != "" && (!strings.HasSuffix(string(b[:want.n]), "\r\n"+tr+"\r\n") || !strings.HasSuffix(tr, "\r\n")) {
			t.Fatalf("Decode(%q) kept the trailer %q", b, tr)
		}
		// Cut at random points.
		rng := rand.New(rand.NewPCG(seed, uint64(len(b))))
		for range 8 {
			var cuts []int
			for i := 0; i < len(b); i += 1 + rng.IntN(16) {
				cuts = append(cuts, i)
			}
			if got := runDecode(b, cuts...); got != want {
				t.Fatalf("Decode(%q) cut at %v = %+v; want %+v", b, cuts, got, want)
			}
		}
		if len(b) <= 256 {
			cuts := make([]int, len(b))
			for i := range cuts {
				cuts[i] = i
			}
			if got := runDecode(b, cuts...); got != want {
				t.Fatalf("Decode(%q) a byte at a time = %+v; want %+v", b, got, want)
			}
		}
	})
}

// appendChunked encodes body with the chunked coding, in chunks whose sizes
// come from sizes, with extensions and trailers when ext is set.
func appendChunked(dst, body, sizes []byte, ext bool) []byte {
	for i := 0; len(body) > 0; i++ {
		n := len(body)
		if i < len(sizes) {
			n = min(n, int(sizes[i])+1)
		}
		if ext && i%2 == 0 {
			dst = strconv.AppendUint(dst, uint64(n), 16)
			dst = append(dst, " ; ext=\"v\";x"...)
		} else {
			dst = strconv.AppendUint(dst, uint64(n), 16)
		}
		dst = append(dst, "\r\n"...)
		dst = append(dst, body[:n]...)
		dst = append(dst, "\r\n"...)
		body = body[n:]
	}
	dst = append(dst, "0\r\n"...)
	if ext {
		dst = append(dst, "Checksum: abc\r\nX-T:\r\n"...)
	}
	return append(dst, "\r\n"...)
}

func FuzzRoundTripChunked(f *testing.F) {
	f.Add([]byte("hello, world"), []byte{2, 0, 5}, false)
	f.Add([]byte("\r\n0\r\n\r\n"), []byte{0}, true)
	f.Add([]byte{}, []byte{}, true)
	f.Fuzz(func(t *testing.T, body, sizes []byte, ext bool) {
		in := appendChunked(nil, body, sizes, ext)
		in = append(in, "GET / HTTP/1.1\r\n"...)
		want := decoded{string(body), len(in) - len("GET / HTTP/1.1\r\n"), nil, true, ""}
		if ext {
			want.trailer = "Checksum: abc\r\nX-T:\r\n"
		}
		for _, i := range splitPoints(len(in)) {
			if got := runDecode(in, i); got != want {
				t.Fatalf("Decode(%q) cut at %d = %+v; want %+v", in, i, got, want)
			}
		}
	})
}

// FuzzNetHTTP checks that net/http's ReadRequest accepts every head Parse
// accepts, and reads its method, target, body length and persistence the
// same, but for the differences the package doc lists and for targets
// net/http refuses as URLs (Parse does not decode percent-escapes).
func FuzzNetHTTP(f *testing.F) {
	for _, tc := range parseTests {
		if tc.status == 0 && !tc.notGo {
			f.Add([]byte(tc.in))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Parser
		var r Request
		n, err := p.Parse(b, &r)
		if err != nil || bytes.HasPrefix(b, []byte("\r\n")) || r.Minor > 1 {
			return
		}
		lengths := 0
		for v := range r.Values("Content-Length") {
			lengths++
			if bytes.IndexByte(v, ',') >= 0 || lengths > 1 {
				return
			}
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b[:n])))
		if uerr := (*url.Error)(nil); errors.As(err, &uerr) {
			return
		}
		if err != nil {
			t.Fatalf("http.ReadRequest(%q) error = %v; Parse accepts it", b[:n], err)
		}
		cl := max(r.ContentLength, 0)
		if r.Chunked {
			cl = -1
		}
		if req.Method != string(r.Method) || req.RequestURI != string(r.Target) || req.ContentLength != cl || req.Close == r.KeepAlive {
			t.Fatalf("http.ReadRequest(%q) = %s %s, ContentLength %d, Close %v; Parse: %s %s, %d, KeepAlive %v",
				b[:n], req.Method, req.RequestURI, req.ContentLength, req.Close, r.Method, r.Target, cl, r.KeepAlive)
		}
	})
}

// FuzzRoutePath checks the routing of odd paths against net/url and
// path: a path routePath takes decodes as url.PathUnescape decodes it
// (escaped slashes aside, which stay), and fails where it fails; the
// clean form is clean, and a path is clean when it says so.
func FuzzRoutePath(f *testing.F) {
	for _, s := range []string{"/", "/a/../b", "//x", "/%61/%2F/./", "/%zz", "/a/b/..", "/%2e%2e/", "/x/%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if raw == "" || raw[0] != '/' {
			return
		}
		path, clean, ok := routePath([]byte(raw))
		want, err := url.PathUnescape(raw)
		if ok != (err == nil) {
			t.Fatalf("%q: ok %v; url.PathUnescape: %v", raw, ok, err)
		}
		if !ok {
			return
		}
		if got := strings.NewReplacer("%2F", "/", "%2f", "/").Replace(path); got != want && !strings.Contains(want, "%2F") && !strings.Contains(want, "%2f") {
			t.Fatalf("%q: decoded %q; url.PathUnescape %q", raw, path, want)
		}
		c := cleanPath(raw)
		if (clean == "") != (c == raw) || cleanPath(c) != c {
			t.Fatalf("%q: clean %q, cleanPath %q, again %q", raw, clean, c, cleanPath(c))
		}
		if strings.Contains(c, "//") || strings.Contains(c+"/", "/./") || strings.Contains(c+"/", "/../") {
			t.Fatalf("%q: cleanPath %q is not clean", raw, c)
		}
	})
}
