package ws

import (
	"bytes"
	"compress/flate"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// utf8State agrees with unicode/utf8 for any input split anywhere, and
// fails at the first byte that cannot continue valid UTF-8.
func FuzzUTF8(f *testing.F) {
	for _, s := range []string{"", "abc", "κόσμε", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\xe0\x80\xaf", "a\xf0\x9f\x98\x80b", "\xf0\x9f\x98"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint8) {
		var s utf8State
		k := int(cut) % (len(b) + 1)
		ok := s.valid(b[:k]) && s.valid(b[k:]) && s.complete()
		if ok != utf8.Valid(b) {
			t.Fatalf("%q split at %d: %v, unicode/utf8 says %v", b, k, ok, utf8.Valid(b))
		}
		// Fail fast: the longest prefix accepted byte by byte is the
		// longest that is a prefix of some valid UTF-8.
		var byByte utf8State
		n := 0
		for n < len(b) && byByte.valid(b[n:n+1]) {
			n++
		}
		if n < len(b) && utf8.Valid(b[:n+1]) {
			t.Fatalf("%q: refused byte %d of a valid prefix", b, n)
		}
	})
}

// parseHeader never panics, takes only a length in the fewest bytes, and
// what it parses it gives back unchanged when appended again, to the byte
// (but for RSV2 and RSV3, which appendHeader does not set).
func FuzzHeader(f *testing.F) {
	f.Add([]byte{0x81, 0x85, 1, 2, 3, 4})
	f.Add([]byte{0x82, 0xFE, 0x01, 0x00, 1, 2, 3, 4})
	f.Add([]byte{0x02, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4})
	// Lengths not in the fewest bytes, and one with its top bit set.
	f.Add([]byte{0x82, 0xFE, 0x00, 0x7D, 1, 2, 3, 4})
	f.Add([]byte{0x82, 0x7E, 0x00, 0x00})
	f.Add([]byte{0x82, 0xFF, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 1, 2, 3, 4})
	f.Add([]byte{0x82, 0x7F, 0, 0, 0, 0, 0, 0, 0, 0x05})
	f.Add([]byte{0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := parseHeader(b)
		if err != nil || n == 0 {
			return
		}
		switch l := b[1] & 0x7F; {
		case l == 126 && h.length < 126, l == 127 && h.length <= 0xFFFF:
			t.Fatalf("%x: length %d taken in %d bytes", b[:n], h.length, n)
		}
		var mask *[4]byte
		if h.masked {
			mask = &h.mask
		}
		again := appendHeader(nil, h.fin, h.rsv&4 != 0, h.op, int(h.length), mask)
		again[0] |= h.rsv & 3 << 4
		if !bytes.Equal(again, b[:n]) {
			t.Fatalf("%x: %+v, appended again %x", b[:n], h, again)
		}
	})
}

// Masking in pieces is masking at once.
func FuzzMask(f *testing.F) {
	f.Add([]byte("hello, world, this is longer than sixteen"), uint8(5), uint32(0x01020304))
	f.Fuzz(func(t *testing.T, b []byte, cut uint8, key uint32) {
		mask := [4]byte{byte(key), byte(key >> 8), byte(key >> 16), byte(key >> 24)}
		want := append([]byte(nil), b...)
		for i := range want {
			want[i] ^= mask[i%4]
		}
		got := append([]byte(nil), b...)
		k := int(cut) % (len(got) + 1)
		pos := maskBytes(mask, 0, got[:k])
		maskBytes(mask, pos, got[k:])
		if !bytes.Equal(got, want) {
			t.Fatalf("%x", b)
		}
	})
}

// decompress round-trips compress, and never inflates past its limit; as
// text, it fails at the first fault in the stream: a byte that is not
// UTF-8 within the limit, else one past the limit.
func FuzzDeflate(f *testing.F) {
	f.Add([]byte("hello hello hello hello"), 10)
	f.Add(bytes.Repeat([]byte{0}, 100000), 1000)
	f.Add([]byte(strings.Repeat("κόσμε😀", 10000)), 100000)
	f.Add([]byte(strings.Repeat("€", 10000)+"\xe2\x82"), 100000)
	f.Add(append([]byte("€€\xff"), bytes.Repeat([]byte{'a'}, 100000)...), 1000)
	f.Add([]byte("ab\xff"), 2)
	// Arbitrary input below: two deflate streams, each ended by a block
	// with BFINAL set, and the RFC 7692 section 7.2.3.4 example.
	f.Add([]byte{0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00}, 100)
	f.Add(bytes.Repeat([]byte{0x03, 0x00}, 1000), 100)
	f.Fuzz(func(t *testing.T, b []byte, limit int) {
		if limit < 0 {
			limit = -limit
		}
		limit %= 1 << 20
		z := compress(nil, b, flate.BestSpeed)
		var s, ref utf8State
		var want *CloseError
		switch {
		case !ref.valid(b[:min(len(b), limit)]):
			want = errNotUTF8
		case len(b) > limit:
			want = errTooBig
		}
		text, err := decompress(nil, z, limit, &s)
		if err != want || want == nil && (!bytes.Equal(text, b) || s.complete() != utf8.Valid(b)) {
			t.Fatalf("%q as text, limit %d: %d bytes, %v, complete %v; want %v", b, limit, len(text), err, s.complete(), want)
		}
		out, err := decompress(nil, z, limit, nil)
		switch {
		case len(b) > limit && err != errTooBig:
			t.Fatalf("%d bytes inflated within a limit of %d: %v", len(b), limit, err)
		case len(b) <= limit && (err != nil || !bytes.Equal(out, b)):
			t.Fatalf("round trip of %d bytes: %d, %v", len(b), len(out), err)
		}
		if len(out) > limit+1 {
			t.Fatalf("inflated %d bytes for a limit of %d", len(out), limit)
		}
		// Arbitrary input: an error or output, within the limit.
		out, _ = decompress(nil, b, limit, nil)
		if len(out) > limit+1 {
			t.Fatalf("inflated %d bytes of garbage for a limit of %d", len(out), limit)
		}
	})
}

// Close payloads and extension offers parse without panicking; a close
// payload that fits a control frame is written again to the same bytes.
func FuzzHandshakeParts(f *testing.F) {
	f.Add([]byte{0x03, 0xe8, 'o', 'k'}, `permessage-deflate; client_max_window_bits, x-webkit; a="b;c"`)
	f.Add([]byte{0x03, 0xe8}, `permessage-deflate; server_max_window_bits=15; client_max_window_bits`)
	f.Add([]byte{0x03, 0xe8}, `permessage-deflate; server_max_window_bits=9; client_max_window_bits=10`)
	f.Add([]byte{0x03, 0xe8}, `permessage-deflate; server_max_window_bits="1\5", permessage-deflate; client_max_window_bits="10`)
	f.Fuzz(func(t *testing.T, payload []byte, ext string) {
		ce, cerr := parseClose(payload)
		if (ce == nil) == (cerr == nil) {
			t.Fatalf("%x: %v %v", payload, ce, cerr)
		}
		if ce != nil && ce.Code != CloseNoStatus && !validCloseCode(ce.Code) {
			t.Fatalf("%x: code %d accepted", payload, ce.Code)
		}
		if ce != nil && len(payload) <= 125 {
			if again := appendClosePayload(nil, ce.Code, ce.Reason); !bytes.Equal(again, payload) {
				t.Fatalf("%x: %+v, appended again %x", payload, ce, again)
			}
		}
		for _, offer := range splitQuoted(ext, ',') {
			// The server's answer to an offer it accepts is one this
			// package's client accepts.
			if answer, window := acceptDeflate(offer); answer != "" {
				if why := checkDeflateAnswer(splitQuoted(answer, ';')[1:]); why != "" {
					t.Fatalf("offer %q answered %q, which a client refuses: %s", offer, answer, why)
				}
				if window != 0 && (window < 8 || window > 14 || !strings.HasSuffix(answer, "server_max_window_bits="+strconv.Itoa(int(window)))) {
					t.Fatalf("offer %q answered %q with window %d", offer, answer, window)
				}
			}
		}
	})
}

// readAnswer finds the same head however the server's answer is split: a
// prefix gives no head or the whole's, an error for a prefix is one for
// the whole, and what it reads checkAnswer takes without panicking.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n\x81\x02hi",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n" +
			"Sec-WebSocket-Protocol: b\r\nSec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; server_max_window_bits=\"10\"\r\n\r\n",
		"HTTP/1.1 403 Forbidden\r\nContent-Length: 3\r\n\r\nno\n",
		"HTTP/1.0 200 OK\n\n",
		"SSH-2.0-OpenSSH_9.6\r\n",
		"HTTP/1.1 abc\r\n\r\n",
		"HTTP/1.1 101 x\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits, x-foo\r\n\r\n",
	} {
		f.Add([]byte(s), uint16(len(s)/2))
	}
	req := &http.Request{Method: http.MethodGet}
	o := &Options{Subprotocols: []string{"a", "b"}, Compression: true}
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		k := int(cut) % (len(b) + 1)
		resp, n, herr := readAnswer(b, req)
		presp, pn, pherr := readAnswer(b[:k], req)
		switch {
		case pherr != nil && herr == nil:
			t.Fatalf("%q: error for the first %d bytes (%v), none for all", b, k, pherr)
		case presp != nil && (resp == nil || pn != n || presp.StatusCode != resp.StatusCode):
			t.Fatalf("%q: the first %d bytes hold a head of %d bytes, all of it %d", b, k, pn, n)
		case resp == nil && n != 0, resp != nil && (n > len(b) || n > maxAnswerHead):
			t.Fatalf("%q: head of %d bytes", b, n)
		}
		if resp != nil {
			checkAnswer(resp, "dGhlIHNhbXBsZSBub25jZQ==", o)
		}
	})
}

// An answer written with a status and a field reads back with them.
func FuzzAnswerRoundTrip(f *testing.F) {
	f.Add(101, "Sec-WebSocket-Protocol", "graphql-ws")
	f.Add(403, "X-Why", "origin \"http://evil.example\" not allowed")
	f.Fuzz(func(t *testing.T, status int, name, value string) {
		if status < 100 || status > 999 || !isToken(name) || !validFieldValue(value) ||
			strings.TrimSpace(value) != value || strings.ContainsAny(value, "\t") {
			return
		}
		b := "HTTP/1.1 " + strconv.Itoa(status) + " Reason\r\n" + name + ": " + value + "\r\n\r\n"
		resp, n, herr := readAnswer([]byte(b+"\x81\x00"), &http.Request{Method: http.MethodGet})
		if herr != nil || resp == nil || n != len(b) {
			t.Fatalf("%q: %v, %d, %v", b, resp, n, herr)
		}
		if resp.StatusCode != status || resp.Header.Get(name) != value {
			t.Fatalf("%q: status %d, %s %q", b, resp.StatusCode, name, resp.Header.Get(name))
		}
	})
}
