package ws_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/internal/testcert"
	"github.com/evloop/evloop/ws"
	"github.com/gorilla/websocket"
)

// startServerTLS is startServer over HTTPS, with the test certificate.
func startServerTLS(t *testing.T, h ws.Handler, o *ws.Options) string {
	t.Helper()
	_, addr := startServerWith(t, h, o, evloop.Options{}, testcert.Server())
	return addr
}

// TestEchoGorillaTLS: gorilla/websocket's client over wss://, with and
// without permessage-deflate, upgraded by fast and pooled handlers, and
// the close handshake.
func TestEchoGorillaTLS(t *testing.T) {
	e := &echo{}
	addr := startServerTLS(t, e, &ws.Options{Compression: true})
	for _, path := range []string{"/fast", "/std"} {
		for _, compress := range []bool{false, true} {
			d := &websocket.Dialer{EnableCompression: compress, TLSClientConfig: testcert.Client(), HandshakeTimeout: 5 * time.Second}
			c := dialGorilla(t, "wss://"+addr+path, d)
			c.EnableWriteCompression(compress)
			for _, size := range []int{0, 1, 125, 65536, 1 << 20} {
				msg := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
				if err := c.WriteMessage(websocket.BinaryMessage, msg); err != nil {
					t.Fatal(err)
				}
				op, got, err := c.ReadMessage()
				if err != nil || op != websocket.BinaryMessage || !bytes.Equal(got, msg) {
					t.Fatalf("%s compress=%v size %d: op %d, %d bytes, %v", path, compress, size, op, len(got), err)
				}
			}
			before := e.count()
			c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "bye"))
			if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, 4000) {
				t.Fatalf("close echo: %v", err)
			}
			if ce := e.nextClose(t, before); ce == nil || ce.Code != 4000 {
				t.Fatalf("OnClose: %v", ce)
			}
		}
	}
}
