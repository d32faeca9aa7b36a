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
