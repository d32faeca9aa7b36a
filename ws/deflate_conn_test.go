package ws_test

import (
	"bytes"
	"compress/flate"
	"runtime"
	"strings"
	"testing"

	"github.com/evloop/evloop/ws"
)

// bomb is a permessage-deflate message body of a few bytes per KiB that
// inflates to size bytes of zeros (a multiple of 1 MiB): the deflate
// stream of 1 MiB, again and again, each ended by its sync flush.
func bomb(t *testing.T, size int) []byte {
	z := deflated(t, make([]byte, 1<<20))
	var b []byte
	for range size >> 20 {
		b = append(b, z...)
		b = append(b, 0, 0, 0xff, 0xff)
	}
	return b[:len(b)-4]
}

// MaxMessageSize bounds a compressed message's inflated length as it is
// inflated: a message of under 1 MiB compressed that inflates to 512 MiB
// fails with 1009, whole or in fragments, and what the server allocates
// for it is near the limit, not the inflated length.
func TestCompressedPastLimit(t *testing.T) {
	e := &echo{}
	addr := serve(t, e, &ws.Options{Compression: true}) // MaxMessageSize 1 MiB
	offer := "Sec-WebSocket-Extensions: permessage-deflate\r\n"
	z := bomb(t, 512<<20)
	if len(z) > 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed; want at most 1 MiB", len(z))
	}
	for _, tc := range []struct {
		name string
		send func(c *rawConn)
	}{
		{"whole", func(c *rawConn) { c.frame(0xC2, z, false) }},
		{"fragmented", func(c *rawConn) {
			c.frame(0x41, z[:len(z)/3], false)
			c.frame(0x00, z[len(z)/3:2*len(z)/3], false)
			c.frame(0x80, z[2*len(z)/3:], false)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.count()
			c := dialRaw(t, addr, "/fast", offer)
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			tc.send(c)
			c.expectClose(ws.CloseMessageTooBig)
			c.nc.Close()
			if ce := e.nextClose(t, before); ce == nil || ce.Code != ws.CloseMessageTooBig {
				t.Fatalf("OnClose got %v, want code %d", ce, ws.CloseMessageTooBig)
			}
			runtime.ReadMemStats(&m1)
			// The frames as sent and as received, masked copies of them,
			// the inflated megabyte and the flate reader: some MiB.
			if n := m1.TotalAlloc - m0.TotalAlloc; n > 64<<20 {
				t.Fatalf("%d MiB allocated for a message that inflates to 512 MiB; want at most 64", n>>20)
			}
		})
	}
}

// A compressed message whose fragments are each a whole deflate stream,
// ended by a block with BFINAL set, as some senders end each flush (RFC
// 7692 section 7.2.1), is delivered whole: the second fragment's text
// was dropped, and the message delivered short.
func TestCompressedStreamPerFragment(t *testing.T) {
	addr := serve(t, &echo{}, &ws.Options{Compression: true})
	c := dialRaw(t, addr, "/fast", "Sec-WebSocket-Extensions: permessage-deflate\r\n")
	stream := func(s string) []byte {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, flate.BestSpeed)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	first, second := strings.Repeat("Hello, ", 30), strings.Repeat("World! ", 30)
	c.frame(0x41, stream(first), false) // text, RSV1
	c.frame(0x80, stream(second), false)
	b0, p := c.read()
	if b0&0x40 != 0 {
		p = inflated(t, p)
	}
	if b0&0x0f != 1 || string(p) != first+second {
		t.Fatalf("echo: %#x %q; want text %q", b0, p, first+second)
	}
}
