package ws

import (
	"bytes"
	"compress/flate"
	"strings"
	"testing"
)

// decompress checks text as it inflates it: characters split between the
// pieces it reads are whole again, and the first byte that is not UTF-8
// ends it, the rest not inflated.
func TestDecompressText(t *testing.T) {
	const limit = 2 << 20
	long := strings.Repeat("x", 2*limit)
	cases := []struct {
		name    string
		text    string
		err     *CloseError
		maxOut  int  // the most it may inflate; 0: all of it
		partial bool // valid, but ends inside a character
	}{
		{name: "2-byte characters", text: strings.Repeat("é", 100000)},
		{name: "3-byte characters", text: strings.Repeat("€", 100000)},
		{name: "4-byte characters", text: strings.Repeat("😀", 100000)},
		{name: "mixed", text: strings.Repeat("aé€😀", 30000)},
		{name: "ends inside a character", text: strings.Repeat("€", 100000) + "\xf0\x9f\x98", partial: true},
		{name: "invalid first", text: "\xff" + long, err: errNotUTF8, maxOut: 64 << 10},
		{name: "surrogate", text: "ab\xed\xa0\x80" + long, err: errNotUTF8, maxOut: 64 << 10},
		{name: "overlong", text: strings.Repeat("€", 1000) + "\xe0\x80\xaf" + long, err: errNotUTF8, maxOut: 64 << 10},
		{name: "invalid after 900 KB", text: strings.Repeat("€", 300000) + "\xc0" + long, err: errNotUTF8, maxOut: 1 << 20},
		{name: "past the limit", text: strings.Repeat("€", 300000) + long, err: errTooBig, maxOut: limit + 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			z := compress(nil, []byte(tc.text), flate.BestSpeed)
			var s utf8State
			out, err := decompress(nil, z, limit, &s)
			if err != tc.err {
				t.Fatalf("decompress = %d bytes, %v; want %v", len(out), err, tc.err)
			}
			if tc.maxOut > 0 && len(out) > tc.maxOut {
				t.Fatalf("decompress inflated %d bytes before failing; want at most %d", len(out), tc.maxOut)
			}
			if tc.err != nil {
				return
			}
			if !bytes.Equal(out, []byte(tc.text)) || s.complete() == tc.partial {
				t.Fatalf("decompress = %d bytes, complete %v; want %d bytes, complete %v", len(out), s.complete(), len(tc.text), !tc.partial)
			}
		})
	}
}

// decompress reads the examples of RFC 7692 section 7.2.3, and payloads
// of several deflate streams, each ended by a block with BFINAL set, as a
// sender that ends each flush so writes them (section 7.2.1: "the next
// DEFLATE block follows the padded data"): every stream is inflated, with
// what came before as its window; the first alone was. A payload whose
// sender left the sync flush's 00 00 ff ff on is read as zlib's readers
// read it; it failed with 1007.
func TestDecompressStreams(t *testing.T) {
	// stream compresses s into one whole deflate stream, its last block
	// with BFINAL set, given dict as its window.
	stream := func(s, dict string) []byte {
		var b bytes.Buffer
		w, _ := flate.NewWriterDict(&b, flate.BestCompression, []byte(dict))
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	join := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	long := strings.Repeat("0123456789abcdef", 4096) // 64 KiB: a window's worth and more
	cases := []struct {
		name    string
		payload []byte
		want    string
	}{
		{"7.2.3.1 one block", []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}, "Hello"},
		{"7.2.3.3 no compression", []byte{0x00, 0x05, 0x00, 0xfa, 0xff, 0x48, 0x65, 0x6c, 0x6c, 0x6f, 0x00}, "Hello"},
		{"7.2.3.4 BFINAL set", []byte{0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00}, "Hello"},
		{"7.2.3.5 two blocks", []byte{0xf2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xff, 0xff, 0xca, 0xc9, 0xc9, 0x07, 0x00}, "Hello"},
		{"7.2.3.6 empty", []byte{0x00}, ""},
		// The sync flush's four bytes left on, as zlib's readers take it.
		{"7.2.3.1 with 00 00 ff ff", []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x00, 0x00, 0xff, 0xff}, "Hello"},
		{"long with 00 00 ff ff", join(compress(nil, []byte(long), flate.BestSpeed), []byte{0, 0, 0xff, 0xff}), long},
		{"7.2.3.6 with 00 00 ff ff", []byte{0x00, 0x00, 0x00, 0xff, 0xff}, ""},
		{"two streams", join(stream("Hello, ", ""), stream("World", "")), "Hello, World"},
		{"BFINAL then a flushed block", join([]byte{0xf3, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}, compress(nil, []byte(" again"), flate.BestSpeed)), "Hello again"},
		{"second refers to the first", join(stream("Hello", ""), stream("Hello", "Hello")), "HelloHello"},
		{"window of the last 32 KiB", join(stream(long, ""), stream(long[len(long)-100:], long)), long + long[len(long)-100:]},
		{"many streams", join(func() [][]byte {
			var bs [][]byte
			for i := range 200 {
				bs = append(bs, stream(strings.Repeat(string(rune('a'+i%26)), 100), ""))
			}
			return bs
		}()...), func() string {
			var s strings.Builder
			for i := range 200 {
				s.WriteString(strings.Repeat(string(rune('a'+i%26)), 100))
			}
			return s.String()
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s utf8State
			out, err := decompress(nil, tc.payload, 1<<20, &s)
			if err != nil || string(out) != tc.want {
				t.Fatalf("decompress = %q (%d bytes), %v; want %d bytes", out[:min(len(out), 40)], len(out), err, len(tc.want))
			}
		})
	}
	// Streams that inflate to nothing cost a reset each: a message of
	// many fails, after a bounded amount of work, rather than hold the
	// loop; garbage after a stream fails as any does.
	empties := bytes.Repeat([]byte{0x03, 0x00}, 100000)
	if out, err := decompress(nil, empties, 1<<20, nil); err != errRestarts {
		t.Fatalf("100,000 empty streams: %d bytes, %v; want %v", len(out), err, errRestarts)
	}
	// A final stored block whose data ends as the sync flush does is
	// read to its end, its bytes the message's.
	final := []byte{0x01, 0x06, 0x00, 0xf9, 0xff, 'a', 'b', 0, 0, 0xff, 0xff}
	if out, err := decompress(nil, final, 1<<20, nil); err != nil || string(out) != "ab\x00\x00\xff\xff" {
		t.Fatalf("a final stored block of data ending 00 00 ff ff: %q, %v", out, err)
	}
	bad := join(stream("Hello", ""), []byte{0xff, 0xff, 0xff})
	if out, err := decompress(nil, bad, 1<<20, nil); err == nil || err.Code != CloseInvalidPayload {
		t.Fatalf("a stream and garbage: %q, %v; want 1007", out, err)
	}
}

// compress takes CompressionLevel as compress/flate takes a level, but
// for those it has no pooled writer for: flate.DefaultCompression is 6,
// and 0 (the zero Options) and the others outside 1 to 9 are BestSpeed.
func TestCompressLevels(t *testing.T) {
	data := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog, ", 200) + strings.Repeat("abcabcabd", 300))
	at := func(level int) []byte {
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, level)
		fw.Write(data)
		fw.Flush()
		return bytes.TrimSuffix(b.Bytes(), []byte{0, 0, 0xff, 0xff})
	}
	for _, tc := range []struct{ level, as int }{
		{flate.DefaultCompression, 6},
		{0, flate.BestSpeed},
		{flate.HuffmanOnly, flate.BestSpeed},
		{10, flate.BestSpeed},
		{flate.BestSpeed, flate.BestSpeed},
		{flate.BestCompression, flate.BestCompression},
	} {
		if got, want := compress(nil, data, tc.level), at(tc.as); !bytes.Equal(got, want) {
			t.Errorf("compress(level %d): %d bytes; want level %d's %d bytes", tc.level, len(got), tc.as, len(want))
		}
	}
	if bytes.Equal(at(6), at(flate.BestSpeed)) {
		t.Fatal("the data compresses alike at levels 1 and 6: the test cannot tell them apart")
	}
}
