package kv

import (
	"encoding/binary"
	"runtime"
	"strings"
	"testing"
)

// TestRestoreClaimsBounded: a payload whose counts or lengths claim more
// than it holds fails having allocated about its own size, not what it
// claims.
func TestRestoreClaimsBounded(t *testing.T) {
	const size = 1 << 20
	huge := binary.BigEndian.AppendUint64([]byte{0x81}, 1<<40)
	lzf := func(clen, ulen int) string {
		w := rdbWriter{}
		w.byte(0xc0 | rdbEncLZF)
		w.length(uint64(clen))
		w.length(uint64(ulen))
		// A back reference to nothing yet: malformed at its first byte.
		return string(w.buf) + "\x20\x00" + strings.Repeat("\x00", clen-2)
	}
	for _, tc := range []struct {
		name string
		body string
	}{
		{"set of 2^40 members", "\x02" + string(huge) + strings.Repeat("\x01a", size/2)},
		{"hash of 2^40 fields", "\x04" + string(huge) + strings.Repeat("\x01a", size/2)},
		{"sorted set of 2^40 members", "\x05" + string(huge) + strings.Repeat("\x01a", size/2)},
		{"LZF string of 100 times its size", "\x00" + lzf(size, 100*size)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := []byte(testPayload(tc.body))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, ok, err := parsePayload(p, nil)
			runtime.ReadMemStats(&after)
			if !ok || err == nil {
				t.Fatalf("parsePayload = %v, %v; want true, an error", ok, err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 4*uint64(len(p)) {
				t.Errorf("parsePayload of %d bytes allocated %d bytes; want at most 4 times its size", len(p), got)
			}
		})
	}
}
