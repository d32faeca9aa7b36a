package ws_test

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/ws"
	"github.com/gorilla/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo answers every message with itself and records how connections
// ended.
type echo struct {
	mu     sync.Mutex
	closes []*ws.CloseError
	group  *ws.Group
	pooled bool
}

func (e *echo) OnOpen(c *ws.Conn) {
	if e.group != nil {
		e.group.Add(c)
	}
}

func (e *echo) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	if e.pooled {
		c.Send(op, data)
		return
	}
	c.WriteMessage(op, data)
}

func (e *echo) OnClose(c *ws.Conn, err error) {
	if e.group != nil {
		e.group.Remove(c)
	}
	var ce *ws.CloseError
	errors.As(err, &ce)
	e.mu.Lock()
	e.closes = append(e.closes, ce)
	e.mu.Unlock()
}

func (e *echo) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.closes)
}

// nextClose waits for the close after the first before of them.
func (e *echo) nextClose(t *testing.T, before int) *ws.CloseError {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		e.mu.Lock()
		n := len(e.closes)
		var ce *ws.CloseError
		if n > before {
			ce = e.closes[before]
		}
		e.mu.Unlock()
		if n > before {
			return ce
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("OnClose did not run")
	return nil
}

// serve runs an http1 server with the echo handler at /fast (upgraded
// by a fast handler) and /std (by a pooled net/http handler).
func serve(t *testing.T, h ws.Handler, o *ws.Options) string {
	t.Helper()
	_, addr := startServer(t, h, o)
	return addr
}

func dialGorilla(t *testing.T, url string, d *websocket.Dialer) *websocket.Conn {
	t.Helper()
	if d == nil {
		d = websocket.DefaultDialer
	}
	c, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", url, err, resp)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	return c
}

func TestEchoGorilla(t *testing.T) {
	addr := serve(t, &echo{}, &ws.Options{Compression: true})
	for _, path := range []string{"/fast", "/std"} {
		for _, compress := range []bool{false, true} {
			d := &websocket.Dialer{EnableCompression: compress}
			c := dialGorilla(t, "ws://"+addr+path, d)
			if compress {
				c.EnableWriteCompression(true)
			}
			for _, size := range []int{0, 1, 125, 126, 127, 65535, 65536, 300_000} {
				msg := bytes.Repeat([]byte("héllo wörld "), size/13+1)[:0]
				for len(msg) < size {
					msg = append(msg, "abcdefghij"[len(msg)%10])
				}
				for _, op := range []int{websocket.TextMessage, websocket.BinaryMessage} {
					if err := c.WriteMessage(op, msg); err != nil {
						t.Fatal(err)
					}
					gotOp, got, err := c.ReadMessage()
					if err != nil || gotOp != op || !bytes.Equal(got, msg) {
						t.Fatalf("%s compress=%v size %d: op %d, %d bytes, %v", path, compress, size, gotOp, len(got), err)
					}
				}
			}
			// Fragmented: gorilla's writer sends a frame per buffer.
			w, _ := c.NextWriter(websocket.TextMessage)
			for range 10 {
				w.Write(bytes.Repeat([]byte("x"), 5000))
			}
			w.Close()
			if _, got, err := c.ReadMessage(); err != nil || len(got) != 50000 {
				t.Fatalf("fragmented: %d %v", len(got), err)
			}
			c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "bye"))
			if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, 4000) {
				t.Fatalf("close echo: %v", err)
			}
		}
	}
}

func TestSubprotocolAndOrigin(t *testing.T) {
	addr := serve(t, &echo{}, &ws.Options{Subprotocols: []string{"graphql-transport-ws", "graphql-ws"}})
	d := &websocket.Dialer{Subprotocols: []string{"unknown", "graphql-ws", "graphql-transport-ws"}}
	c := dialGorilla(t, "ws://"+addr+"/fast", d)
	if c.Subprotocol() != "graphql-transport-ws" {
		t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	for _, path := range []string{"/fast", "/std"} {
		_, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+path, http.Header{"Origin": {"http://evil.example"}})
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Fatalf("%s: foreign origin: %v %v", path, err, resp)
		}
		resp.Body.Close()
		c := dialGorilla(t, "ws://"+addr+path, &websocket.Dialer{})
		c.Close()
	}
}

// rawConn speaks WebSocket frame by frame, to send what a well-behaved
// client never would.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr, path string, extra string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: "+addr+"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+extra+"\r\n")
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("handshake: %d %v", resp.StatusCode, resp.Header)
	}
	return &rawConn{t: t, nc: nc, br: br}
}

var testMask = [4]byte{1, 2, 3, 4}

// frame sends one frame with the given first byte (FIN, RSV, opcode),
// masked unless unmasked.
func (c *rawConn) frame(b0 byte, payload []byte, unmasked bool) {
	hdr := []byte{b0}
	m := byte(0x80)
	if unmasked {
		m = 0
	}
	switch {
	case len(payload) < 126:
		hdr = append(hdr, m|byte(len(payload)))
	case len(payload) < 65536:
		hdr = append(hdr, m|126)
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(len(payload)))
	default:
		hdr = append(hdr, m|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(len(payload)))
	}
	p := append([]byte(nil), payload...)
	if !unmasked {
		hdr = append(hdr, testMask[:]...)
		for i := range p {
			p[i] ^= testMask[i%4]
		}
	}
	c.nc.Write(append(hdr, p...))
}

// frameLength sends one masked frame with the given first byte and its
// length encoded as length says: the 7-bit field, then the extended
// length's bytes, as they are, however they encode the payload's length.
func (c *rawConn) frameLength(b0 byte, length []byte, payload []byte) {
	hdr := append([]byte{b0, 0x80 | length[0]}, length[1:]...)
	hdr = append(hdr, testMask[:]...)
	p := append([]byte(nil), payload...)
	for i := range p {
		p[i] ^= testMask[i%4]
	}
	c.nc.Write(append(hdr, p...))
}

// readOrEOF reads one frame as read does, or returns a nil payload if the
// connection ended cleanly before one.
func (c *rawConn) readOrEOF() (byte, []byte) {
	c.t.Helper()
	if _, err := c.br.Peek(1); err == io.EOF {
		return 0, nil
	}
	b0, p := c.read()
	if p == nil {
		p = []byte{}
	}
	return b0, p
}

// read reads one frame from the server: opcode and payload.
func (c *rawConn) read() (byte, []byte) {
	c.t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		c.t.Fatalf("reading a frame: %v", err)
	}
	if h[1]&0x80 != 0 {
		c.t.Fatal("server frame masked")
	}
	n := int(h[1] & 0x7F)
	switch n {
	case 126:
		var l [2]byte
		io.ReadFull(c.br, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		io.ReadFull(c.br, l[:])
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(c.br, p); err != nil {
		c.t.Fatal(err)
	}
	return h[0], p
}

// expectClose reads the server's close frame, checks its code, and that
// the connection then ends.
func (c *rawConn) expectClose(code int) {
	c.t.Helper()
	for {
		b0, p := c.read()
		if b0&0xF != 0x8 {
			continue // an echo sent before the failure
		}
		if code == 0 {
			if len(p) != 0 {
				c.t.Fatalf("close payload %q, want empty", p)
			}
		} else if len(p) < 2 || int(binary.BigEndian.Uint16(p)) != code {
			c.t.Fatalf("close payload %q, want code %d", p, code)
		}
		break
	}
	if _, err := c.br.ReadByte(); err == nil {
		c.t.Fatal("bytes after the close frame")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.t.Fatal("connection not closed")
	}
}

func TestProtocolErrors(t *testing.T) {
	e := &echo{}
	addr := serve(t, e, &ws.Options{MaxMessageSize: 1000})
	long := bytes.Repeat([]byte("a"), 126)
	cases := []struct {
		name string
		send func(c *rawConn)
		code int
	}{
		{"unmasked", func(c *rawConn) { c.frame(0x81, []byte("hi"), true) }, 1002},
		{"rsv1 without deflate", func(c *rawConn) { c.frame(0xC1, []byte("hi"), false) }, 1002},
		{"rsv2", func(c *rawConn) { c.frame(0xA1, []byte("hi"), false) }, 1002},
		{"rsv3", func(c *rawConn) { c.frame(0x91, []byte("hi"), false) }, 1002},
		{"rsv1 on a ping without deflate", func(c *rawConn) { c.frame(0xC9, nil, false) }, 1002},
		{"reserved opcode 3", func(c *rawConn) { c.frame(0x83, nil, false) }, 1002},
		{"reserved opcode B", func(c *rawConn) { c.frame(0x8B, nil, false) }, 1002},
		{"fragmented ping", func(c *rawConn) { c.frame(0x09, []byte("x"), false) }, 1002},
		{"ping over 125", func(c *rawConn) { c.frame(0x89, long, false) }, 1002},
		{"fragmented close", func(c *rawConn) { c.frame(0x08, []byte{0x03, 0xe8}, false) }, 1002},
		{"close over 125", func(c *rawConn) { c.frame(0x88, append([]byte{0x03, 0xe8}, long...), false) }, 1002},
		{"pong over 125", func(c *rawConn) { c.frame(0x8A, long, false) }, 1002},
		{"continuation first", func(c *rawConn) { c.frame(0x80, []byte("x"), false) }, 1002},
		{"new message in fragmented", func(c *rawConn) {
			c.frame(0x01, []byte("a"), false)
			c.frame(0x81, []byte("b"), false)
		}, 1002},
		{"invalid UTF-8", func(c *rawConn) {
			c.frame(0x81, []byte{0xce, 0xba, 0xe1, 0xbd, 0xb9, 0xcf, 0x83, 0xce, 0xbc, 0xce, 0xb5, 0xed, 0xa0, 0x80}, false)
		}, 1007},
		{"invalid UTF-8 across fragments", func(c *rawConn) {
			c.frame(0x01, []byte{0xf4}, false)
			c.frame(0x80, []byte{0x90, 0x80, 0x80}, false)
		}, 1007},
		{"truncated UTF-8", func(c *rawConn) { c.frame(0x81, []byte{'a', 0xe2, 0x82}, false) }, 1007},
		{"16-bit length below 126", func(c *rawConn) { c.frameLength(0x82, []byte{126, 0, 5}, []byte("hello")) }, 1002},
		{"16-bit length of 0", func(c *rawConn) { c.frameLength(0x82, []byte{126, 0, 0}, nil) }, 1002},
		{"64-bit length below 65536", func(c *rawConn) {
			c.frameLength(0x82, []byte{127, 0, 0, 0, 0, 0, 0, 0, 5}, []byte("hello"))
		}, 1002},
		{"64-bit length of 65535", func(c *rawConn) {
			c.frameLength(0x82, []byte{127, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, make([]byte, 65535))
		}, 1002},
		{"64-bit length with its top bit set", func(c *rawConn) {
			c.frameLength(0x82, []byte{127, 0x80, 0, 0, 0, 0, 0, 0, 5}, []byte("hello"))
		}, 1002},
		{"ping with a 16-bit length", func(c *rawConn) { c.frameLength(0x89, []byte{126, 0, 2}, []byte("hi")) }, 1002},
		{"too big in one frame", func(c *rawConn) { c.frame(0x82, make([]byte, 1001), false) }, 1009},
		{"too big in fragments", func(c *rawConn) {
			c.frame(0x02, make([]byte, 600), false)
			c.frame(0x80, make([]byte, 600), false)
		}, 1009},
		{"close one byte", func(c *rawConn) { c.frame(0x88, []byte{3}, false) }, 1002},
		{"close code 1005", func(c *rawConn) { c.frame(0x88, []byte{0x03, 0xed}, false) }, 1002},
		{"close code 999", func(c *rawConn) { c.frame(0x88, []byte{0x03, 0xe7}, false) }, 1002},
		{"close code 5000", func(c *rawConn) { c.frame(0x88, []byte{0x13, 0x88}, false) }, 1002},
		{"close reason not UTF-8", func(c *rawConn) { c.frame(0x88, []byte{0x03, 0xe8, 0xff}, false) }, 1007},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := e.count()
			c := dialRaw(t, addr, "/fast", "")
			tc.send(c)
			c.expectClose(tc.code)
			c.nc.Close()
			if ce := e.nextClose(t, before); ce == nil || ce.Code != tc.code {
				t.Fatalf("OnClose got %v, want code %d", ce, tc.code)
			}
		})
	}
}

func TestControlFrames(t *testing.T) {
	addr := serve(t, &echo{}, nil)
	c := dialRaw(t, addr, "/fast", "")
	// A ping between the fragments of a message is answered at once.
	c.frame(0x01, []byte("frag"), false)
	c.frame(0x89, []byte("ping!"), false)
	if b0, p := c.read(); b0 != 0x8A || string(p) != "ping!" {
		t.Fatalf("pong: %x %q", b0, p)
	}
	c.frame(0x8A, []byte("unsolicited pong"), false)
	c.frame(0x80, []byte("ment"), false)
	if b0, p := c.read(); b0 != 0x81 || string(p) != "fragment" {
		t.Fatalf("message: %x %q", b0, p)
	}
	// A byte at a time.
	var b bytes.Buffer
	rc := &rawConn{t: t, nc: nopConn{&b}}
	rc.frame(0x81, []byte("slowly"), false)
	for _, x := range b.Bytes() {
		c.nc.Write([]byte{x})
		time.Sleep(time.Millisecond)
	}
	if b0, p := c.read(); b0 != 0x81 || string(p) != "slowly" {
		t.Fatalf("byte at a time: %x %q", b0, p)
	}
	// Close without a code is echoed without one; data after it is ignored.
	c.frame(0x88, nil, false)
	c.frame(0x81, []byte("ignored"), false)
	c.expectClose(0)
}

// nopConn turns a buffer into a net.Conn for rawConn.frame.
type nopConn struct{ *bytes.Buffer }

func (nopConn) Close() error                     { return nil }
func (nopConn) LocalAddr() net.Addr              { return nil }
func (nopConn) RemoteAddr() net.Addr             { return nil }
func (nopConn) SetDeadline(time.Time) error      { return nil }
func (nopConn) SetReadDeadline(time.Time) error  { return nil }
func (nopConn) SetWriteDeadline(time.Time) error { return nil }

func TestBadHandshakes(t *testing.T) {
	addr := serve(t, &echo{}, nil)
	for _, path := range []string{"/fast", "/std"} {
		for _, tc := range []struct {
			fields string
			status int
		}{
			{"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n", 426},
			{"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n", 400},
			{"Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n", 400},
			{"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n", 400},
			{"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==\r\nSec-WebSocket-Version: 13\r\n", 400},
			{"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n", 400},
			{"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Version: 13\r\n", 426},
		} {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			nc.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: x\r\n"+tc.fields+"\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
			nc.Close()
			if err != nil || resp.StatusCode != tc.status {
				t.Fatalf("%s %q: %v %v", path, tc.fields, resp, err)
			}
			if tc.status == 426 && resp.Header.Get("Sec-WebSocket-Version") != "13" {
				t.Fatalf("426 without Sec-WebSocket-Version: %v", resp.Header)
			}
		}
	}
}

func TestPooledDelivery(t *testing.T) {
	o := &ws.Options{Workers: 4}
	t.Cleanup(o.CloseWorkers) // after the server's shutdown
	addr := serve(t, &echo{pooled: true}, o)
	c := dialGorilla(t, "ws://"+addr+"/fast", nil)
	for i := range 200 {
		msg := strings.Repeat("m", i)
		c.WriteMessage(websocket.TextMessage, []byte(msg))
	}
	for i := range 200 {
		if _, got, err := c.ReadMessage(); err != nil || len(got) != i {
			t.Fatalf("message %d: %d bytes, %v", i, len(got), err)
		}
	}
}

func TestBroadcast(t *testing.T) {
	g := &ws.Group{}
	o := &ws.Options{Compression: true}
	addr := serve(t, &echo{group: g}, o)
	var clients []*websocket.Conn
	for i := range 50 {
		d := &websocket.Dialer{EnableCompression: i%2 == 0}
		clients = append(clients, dialGorilla(t, "ws://"+addr+"/fast", d))
	}
	// Each client's echo proves its OnOpen (and Add) ran.
	for _, c := range clients {
		c.WriteMessage(websocket.TextMessage, []byte("hi"))
		c.ReadMessage()
	}
	msg := bytes.Repeat([]byte("broadcast "), 100)
	var queued atomic.Bool
	done := make(chan struct{})
	g.Broadcast(ws.Text, msg, o, func() { queued.Store(true); close(done) })
	<-done
	for i, c := range clients {
		if _, got, err := c.ReadMessage(); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("client %d: %d bytes, %v", i, len(got), err)
		}
	}
}

// FuzzConn sends arbitrary bytes after a handshake, in two writes, and
// half-closes: the server answers with frames and closes, and serves other
// connections as ever.
func FuzzConn(f *testing.F) {
	f.Add([]byte{0x81, 0x82, 1, 2, 3, 4, 'h' ^ 1, 'i' ^ 2}, uint16(3))
	f.Add([]byte{0x01, 0x81, 1, 2, 3, 4, 'a' ^ 1, 0x89, 0x80, 0, 0, 0, 0, 0x80, 0x80, 0, 0, 0, 0}, uint16(7))
	f.Add([]byte{0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8}, uint16(1))
	f.Add([]byte{0xC1, 0x80, 0, 0, 0, 0}, uint16(0))
	f.Add([]byte{0x82, 0xFE, 0, 2, 0, 0, 0, 0, 'h', 'i'}, uint16(3))
	f.Add([]byte{0x82, 0xFF, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 'h', 'i'}, uint16(5))
	e := &echo{}
	srv := &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	o := &ws.Options{Compression: true, MaxMessageSize: 4096}
	srv.HandleFastFunc("GET /fast", func(w *http1.Response, r *http1.Request) { ws.Upgrade(w, r, e, o) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	srv.Start(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	f.Fuzz(func(t *testing.T, in []byte, split uint16) {
		for _, ext := range []string{"", "Sec-WebSocket-Extensions: permessage-deflate\r\n"} {
			c := dialRaw(t, addr, "/fast", ext)
			k := int(split) % (len(in) + 1)
			c.nc.Write(in[:k])
			c.nc.Write(in[k:])
			c.nc.(*net.TCPConn).CloseWrite()
			if _, err := io.Copy(io.Discard, c.br); err != nil {
				t.Fatalf("the server did not close: %v", err)
			}
			c.nc.Close()
		}
		good := dialRaw(t, addr, "/fast", "")
		good.frame(0x81, []byte("ok"), false)
		if b0, p := good.read(); b0 != 0x81 || string(p) != "ok" {
			t.Fatalf("other connection: %x %q", b0, p)
		}
	})
}

// deflated compresses p as a permessage-deflate message body.
func deflated(t *testing.T, p []byte) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestSpeed)
	w.Write(p)
	w.Flush()
	return bytes.TrimSuffix(b.Bytes(), []byte{0, 0, 0xff, 0xff})
}

// inflated decompresses a permessage-deflate message body.
func inflated(t *testing.T, p []byte) []byte {
	r := flate.NewReader(io.MultiReader(bytes.NewReader(p), bytes.NewReader([]byte{0, 0, 0xff, 0xff, 1, 0, 0, 0xff, 0xff})))
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("inflating the server's message: %v", err)
	}
	return out
}

// Compression (Autobahn groups 12 and 13) with a client written here.
func TestCompressionRaw(t *testing.T) {
	e := &echo{}
	addr := serve(t, e, &ws.Options{Compression: true, MaxMessageSize: 10000, CompressionThreshold: 1})
	offer := "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"

	// Negotiation: a window limit on the server is accepted and named in
	// the answer.
	const (
		plain  = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
		window = plain + "; server_max_window_bits=15"
	)
	for _, tc := range []struct {
		ext    string
		answer string
	}{
		{"permessage-deflate", plain},
		{"permessage-deflate; client_max_window_bits", plain},
		{"permessage-deflate; client_max_window_bits=10; server_no_context_takeover", plain},
		{"permessage-deflate; server_max_window_bits=15", window},
		{`permessage-deflate; server_max_window_bits="15"; client_max_window_bits`, window},
		{"permessage-deflate; server_max_window_bits=10", plain + "; server_max_window_bits=10"},
		{"permessage-deflate; server_max_window_bits", ""},
		{"permessage-deflate; server_max_window_bits=7", ""},
		{"permessage-deflate; server_max_window_bits=7, permessage-deflate", plain},
		{"permessage-deflate; client_max_window_bits=16", ""},
		{"permessage-deflate; unknown", ""},
		{"x-webkit-deflate-frame", ""},
	} {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(nc, "GET /fast HTTP/1.1\r\nHost: "+addr+"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: "+tc.ext+"\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		nc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != tc.answer {
			t.Fatalf("offer %q: answered %q; want %q", tc.ext, got, tc.answer)
		}
	}

	// Echo of compressed messages, whole and fragmented (RSV1 on the first
	// frame only); the answers come back compressed.
	c := dialRaw(t, addr, "/fast", offer)
	for _, size := range []int{1, 100, 5000} {
		msg := bytes.Repeat([]byte("compress me "), size/12+1)[:size]
		z := deflated(t, msg)
		c.frame(0xC1, z, false) // FIN, RSV1, text
		b0, p := c.read()
		if b0 != 0xC1 || !bytes.Equal(inflated(t, p), msg) {
			t.Fatalf("size %d: %x, %d bytes", size, b0, len(p))
		}
		half := len(z) / 2
		c.frame(0x42, z[:half], false) // RSV1, binary, not final
		c.frame(0x89, []byte("between"), false)
		if b0, p := c.read(); b0 != 0x8A || string(p) != "between" {
			t.Fatalf("pong between compressed fragments: %x %q", b0, p)
		}
		c.frame(0x80, z[half:], false)
		b0, p = c.read()
		if b0 != 0xC2 || !bytes.Equal(inflated(t, p), msg) {
			t.Fatalf("fragmented size %d: %x", size, b0)
		}
	}

	// Under server_max_window_bits=10, only messages of at most 1 KiB are
	// compressed, which no back-reference can take past the window; the
	// others go out plain.
	w10 := dialRaw(t, addr, "/fast", "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=10\r\n")
	for _, size := range []int{100, 1024, 1025, 5000} {
		msg := bytes.Repeat([]byte("compress me "), size/12+1)[:size]
		w10.frame(0xC1, deflated(t, msg), false)
		b0, p := w10.read()
		if size <= 1024 && (b0 != 0xC1 || !bytes.Equal(inflated(t, p), msg)) || size > 1024 && (b0 != 0x81 || !bytes.Equal(p, msg)) {
			t.Fatalf("window 10, size %d: %#x, %d bytes", size, b0, len(p))
		}
	}

	// A message of MaxMessageSize that deflate made longer is taken,
	// whole and fragmented: the limit is on the inflated message.
	random := make([]byte, 10000)
	mrand.NewChaCha8([32]byte{}).Read(random)
	z := deflated(t, random)
	if len(z) <= len(random) {
		t.Fatalf("random bytes deflated from %d to %d bytes; want longer", len(random), len(z))
	}
	c.frame(0xC2, z, false)
	if b0, p := c.read(); b0 != 0xC2 || !bytes.Equal(inflated(t, p), random) {
		t.Fatalf("incompressible message at the limit: %#x, %d bytes; want its echo", b0, len(p))
	}
	c.frame(0x42, z[:100], false)
	c.frame(0x80, z[100:], false)
	if b0, p := c.read(); b0 != 0xC2 || !bytes.Equal(inflated(t, p), random) {
		t.Fatalf("incompressible message at the limit, fragmented: %#x, %d bytes; want its echo", b0, len(p))
	}

	// A compressed message with no payload at all, whole or in empty
	// fragments, is an empty message, as zlib-based peers read it (the
	// deflate stream of an empty message is one byte, 00).
	c.frame(0xC1, nil, false)
	c.frame(0x41, nil, false)
	c.frame(0x80, nil, false)
	c.frame(0xC1, deflated(t, nil), false)
	for i := range 3 {
		if b0, p := c.read(); b0 != 0x81 || len(p) != 0 {
			t.Fatalf("empty compressed message %d: %#x %q; want an empty text message", i, b0, p)
		}
	}

	for _, tc := range []struct {
		name string
		send func(c *rawConn)
		code int
	}{
		{"RSV1 on a continuation", func(c *rawConn) {
			c.frame(0x41, deflated(t, []byte("ab")), false)
			c.frame(0xC0, deflated(t, []byte("cd")), false)
		}, 1002},
		{"RSV1 on a control frame", func(c *rawConn) { c.frame(0xC9, nil, false) }, 1002},
		{"RSV1 on a close frame", func(c *rawConn) { c.frame(0xC8, []byte{0x03, 0xe8}, false) }, 1002},
		{"RSV2 with deflate", func(c *rawConn) { c.frame(0xE1, deflated(t, []byte("ab")), false) }, 1002},
		{"RSV3 with deflate", func(c *rawConn) { c.frame(0x91, []byte("ab"), false) }, 1002},
		{"compressed invalid UTF-8", func(c *rawConn) { c.frame(0xC1, deflated(t, []byte{'a', 0xff}), false) }, 1007},
		{"compressed invalid UTF-8 in fragments", func(c *rawConn) {
			z := deflated(t, append(bytes.Repeat([]byte("€"), 3000), 0xe2, 0x82, 'a'))
			c.frame(0x41, z[:len(z)/2], false)
			c.frame(0x80, z[len(z)/2:], false)
		}, 1007},
		// The text is checked as it is inflated: its first bad byte fails
		// it, before the bytes that would take it past the limit.
		{"compressed invalid UTF-8, then past the limit", func(c *rawConn) {
			c.frame(0xC1, deflated(t, append([]byte{'a', 0xff}, make([]byte, 100000)...)), false)
		}, 1007},
		{"compressed invalid UTF-8 in fragments, then past the limit", func(c *rawConn) {
			z := deflated(t, append([]byte("\xf0\x9f\x98"), make([]byte, 100000)...))
			c.frame(0x41, z[:10], false)
			c.frame(0x80, z[10:], false)
		}, 1007},
		{"not deflate data", func(c *rawConn) { c.frame(0xC1, []byte{0xff, 0xff, 0xff, 0xff}, false) }, 1007},
		{"inflates past the limit", func(c *rawConn) { c.frame(0xC2, deflated(t, make([]byte, 100000)), false) }, 1009},
		{"compressed frame past its bound", func(c *rawConn) { c.frame(0xC2, make([]byte, 10000+10000/8+257), false) }, 1009},
		{"compressed fragments past their bound", func(c *rawConn) {
			c.frame(0x42, make([]byte, 10000), false)
			c.frame(0x80, make([]byte, 10000/8+257), false)
		}, 1009},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.count()
			c := dialRaw(t, addr, "/fast", offer)
			tc.send(c)
			c.expectClose(tc.code)
			c.nc.Close()
			if ce := e.nextClose(t, before); ce == nil || ce.Code != tc.code {
				t.Fatalf("OnClose got %v, want code %d", ce, tc.code)
			}
		})
	}
}

// An idle connection costs the struct the package's doc names.
func TestConnSize(t *testing.T) {
	if n := unsafe.Sizeof(ws.Conn{}); n > 136 {
		t.Fatalf("ws.Conn is %d bytes; the package's doc says 136", n)
	}
}

// A handshake by another method than GET is refused with 405 and an
// Allow field naming GET, as RFC 9110 section 15.5.6 has it; one in
// HTTP/1.0 with 400. Upgrade and UpgradeHTTP return the *HandshakeError.
func TestUpgradeMethodAndVersion(t *testing.T) {
	errs := make(chan error, 1)
	srv := &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv.HandleFastFunc("/fast", func(w *http1.Response, r *http1.Request) {
		errs <- ws.Upgrade(w, r, &echo{}, nil)
	})
	srv.HandleFunc("/std", func(w http.ResponseWriter, r *http.Request) {
		errs <- ws.UpgradeHTTP(w, r, &echo{}, nil)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	const fields = "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
	for _, path := range []string{"/fast", "/std"} {
		for _, tc := range []struct {
			line   string
			status int
			allow  string
		}{
			{"POST " + path + " HTTP/1.1", 405, "GET"},
			{"PUT " + path + " HTTP/1.1", 405, "GET"},
			{"GET " + path + " HTTP/1.0", 400, ""},
		} {
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			nc.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(nc, tc.line+"\r\n"+fields+"\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
			nc.Close()
			if err != nil || resp.StatusCode != tc.status || resp.Header.Get("Allow") != tc.allow {
				t.Fatalf("%s: %v, %v; want %d, Allow %q", tc.line, resp, err, tc.status, tc.allow)
			}
			var herr *ws.HandshakeError
			if err := recv(t, errs, "the upgrade's error"); !errors.As(err, &herr) || herr.Status != tc.status {
				t.Fatalf("%s: upgrade returned %v; want a *HandshakeError with status %d", tc.line, err, tc.status)
			}
		}
	}
}
