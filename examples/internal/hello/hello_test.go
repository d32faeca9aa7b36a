package hello

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	get := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	tests := []struct {
		name      string
		in        string
		consumed  int
		responses int
		close     bool
		err       error
	}{
		{"one request", get, len(get), 1, false, nil},
		{"pipelined", get + get + get, 3 * len(get), 3, false, nil},
		{"partial head", get[:10], 0, 0, false, nil},
		{"one and a half", get + get[:7], len(get), 1, false, nil},
		{"body", "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc" + get, 41 + len(get), 2, false, nil},
		{"body incomplete", "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nab", 0, 0, false, nil},
		{"connection close", "GET / HTTP/1.1\r\nConnection: close\r\n\r\n" + get, 37, 1, true, nil},
		{"http/1.0", "GET / HTTP/1.0\r\n\r\n", 18, 1, true, nil},
		{"head", "HEAD / HTTP/1.1\r\n\r\n" + get, 19 + len(get), 1, false, nil},
		{"http/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 42, 1, false, nil},
		{"bad request line", "GARBAGE\r\n\r\n", 0, 0, true, ErrMalformed},
		{"bad header", "GET / HTTP/1.1\r\nNoColon\r\n\r\n", 0, 0, true, ErrMalformed},
		{"bad length", "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 0, 0, true, ErrMalformed},
		{"signed length", "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc", 0, 0, true, ErrMalformed},
		{"two lengths", "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 0\r\n\r\nabc", 0, 0, true, ErrMalformed},
		{"same length twice", "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 60, 1, false, nil},
		{"huge length", "POST / HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n\r\n", 0, 0, true, ErrBodyLarge},
		{"length past the limit", "POST / HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n", 0, 0, true, ErrBodyLarge},
		{"chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 0, 0, true, ErrChunked},
		{"head too large", "GET / HTTP/1.1\r\n" + strings.Repeat("a", MaxHeader), 0, 0, true, ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			consumed, out, closeAfter, err := Serve([]byte(tc.in), nil)
			if consumed != tc.consumed || closeAfter != tc.close || !errors.Is(err, tc.err) {
				t.Errorf("Serve = %d, close %v, %v; want %d, close %v, %v", consumed, closeAfter, err, tc.consumed, tc.close, tc.err)
			}
			if got := bytes.Count(out, []byte(Response)); got != tc.responses {
				t.Errorf("Serve wrote %d responses; want %d", got, tc.responses)
			}
			if tc.err != nil && !bytes.HasSuffix(out, []byte(ErrorResponse(tc.err))) {
				t.Errorf("out = %q; want it to end with the error response", out)
			}
		})
	}
}

// serveAll feeds in to Serve in the given pieces, as a connection would.
func serveAll(pieces ...[]byte) (out []byte, closeAfter bool, err error) {
	var buf []byte
	for _, p := range pieces {
		buf = append(buf, p...)
		var n int
		n, out, closeAfter, err = Serve(buf, out)
		buf = buf[n:]
		if closeAfter {
			return out, closeAfter, err
		}
	}
	return out, closeAfter, err
}

func FuzzServe(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\n\r\n"), 5)
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\n\r\n"), 30)
	f.Add([]byte("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"), 1)
	f.Add([]byte("GARBAGE\r\n\r\n"), 3)
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 9223372036854775807\r\n\r\n"), 9)
	f.Fuzz(func(t *testing.T, in []byte, split int) {
		whole, wholeClose, wholeErr := serveAll(in)
		if split < 0 {
			split = -split
		}
		split %= len(in) + 1
		parts, partsClose, partsErr := serveAll(in[:split], in[split:])
		bytePieces := make([][]byte, len(in))
		for i := range in {
			bytePieces[i] = in[i : i+1]
		}
		bytes1, bytesClose, bytesErr := serveAll(bytePieces...)
		for _, r := range []struct {
			out   []byte
			close bool
			err   error
		}{{parts, partsClose, partsErr}, {bytes1, bytesClose, bytesErr}} {
			if !bytes.Equal(r.out, whole) || r.close != wholeClose || !errors.Is(r.err, wholeErr) && !errors.Is(wholeErr, r.err) {
				t.Fatalf("split input gave %q, %v, %v; whole gave %q, %v, %v", r.out, r.close, r.err, whole, wholeClose, wholeErr)
			}
		}
	})
}
