package ws_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop/ws"
)

// rawFrame builds one masked client frame.
func rawFrame(b0 byte, payload []byte) []byte {
	var b bytes.Buffer
	rc := &rawConn{nc: nopConn{&b}}
	rc.frame(b0, payload, false)
	return b.Bytes()
}

// Frames pipelined right behind the upgrade request, in the same write,
// are read as frames, on both upgrade paths.
func TestFramesBehindUpgradeRequest(t *testing.T) {
	addr := serve(t, &echo{}, nil)
	for _, path := range []string{"/fast", "/std"} {
		t.Run(path, func(t *testing.T) {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(5 * time.Second))
			req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
				"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
			nc.Write(append([]byte(req), rawFrame(0x81, []byte("pipelined"))...))
			br := bufio.NewReader(nc)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 101 {
				t.Fatalf("handshake: %v %v", resp, err)
			}
			c := &rawConn{t: t, nc: nc, br: br}
			if b0, p := c.read(); b0 != 0x81 || string(p) != "pipelined" {
				t.Fatalf("echo %#x %q", b0, p)
			}
		})
	}
}

// Everything a client may send, one byte per write: a fragmented text
// message split inside a character with a ping between its fragments, a
// compressed message in two fragments, then a close.
func TestEverythingOneByteAtATime(t *testing.T) {
	addr := serve(t, &echo{}, &ws.Options{Compression: true})
	c := dialRaw(t, addr, "/fast", "Sec-WebSocket-Extensions: permessage-deflate\r\n")
	var seq []byte
	seq = append(seq, rawFrame(0x01, []byte("h\xc3"))...)
	seq = append(seq, rawFrame(0x89, []byte("pp"))...)
	seq = append(seq, rawFrame(0x80, []byte("\xa9llo"))...)
	z := deflated(t, bytes.Repeat([]byte("compressible "), 20))
	seq = append(seq, rawFrame(0x41, z[:len(z)/2])...)
	seq = append(seq, rawFrame(0x80, z[len(z)/2:])...)
	seq = append(seq, rawFrame(0x88, []byte{0x0f, 0xa0, 'b', 'y', 'e'})...)
	go func() {
		for _, x := range seq {
			c.nc.Write([]byte{x})
			time.Sleep(200 * time.Microsecond)
		}
	}()
	if b0, p := c.read(); b0 != 0x8A || string(p) != "pp" {
		t.Fatalf("pong %#x %q", b0, p)
	}
	if b0, p := c.read(); b0 != 0x81 || string(p) != "héllo" {
		t.Fatalf("echo %#x %q", b0, p)
	}
	b0, p := c.read()
	if b0&0x40 != 0 {
		p = inflated(t, p)
	}
	if b0&0xF != 1 || !bytes.Equal(p, bytes.Repeat([]byte("compressible "), 20)) {
		t.Fatalf("compressed echo %#x %q", b0, p)
	}
	c.expectClose(4000)
}

// A pooled handler that Sends messages and then CloseAsync: every message
// reaches the peer, before the close frame.
type sendThenClose struct{ echo }

func (h *sendThenClose) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	for i := range 50 {
		c.Send(ws.Text, []byte("m"+strconv.Itoa(i)))
	}
	c.CloseAsync(4000, "done")
}

func TestPooledSendThenCloseAsync(t *testing.T) {
	o := &ws.Options{Workers: 2}
	t.Cleanup(o.CloseWorkers)
	c := dialRaw(t, serve(t, &sendThenClose{}, o), "/fast", "")
	c.frame(0x81, []byte("go"), false)
	for i := range 50 {
		if b0, p := c.read(); b0 != 0x81 || string(p) != "m"+strconv.Itoa(i) {
			t.Fatalf("message %d: %#x %q", i, b0, p)
		}
	}
	b0, p := c.read()
	if b0 != 0x88 || binary.BigEndian.Uint16(p) != 4000 {
		t.Fatalf("close %#x %q", b0, p)
	}
	c.frame(0x88, p[:2], false)
	if _, err := c.br.ReadByte(); err != io.EOF {
		t.Fatalf("after the close handshake: %v, want EOF", err)
	}
}

// Both sides close at once: the server sends no second close frame, and
// nothing after its own.
type closeOnOpen struct{ echo }

func (h *closeOnOpen) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	c.WriteMessage(ws.Text, []byte("bye"))
	c.Close(4001, "server")
	c.WriteMessage(ws.Text, []byte("after close")) // must be refused
}

func TestSimultaneousClose(t *testing.T) {
	h := &closeOnOpen{}
	c := dialRaw(t, serve(t, h, nil), "/fast", "")
	c.nc.Write(append(rawFrame(0x81, []byte("x")), rawFrame(0x88, []byte{0x0f, 0xa0})...))
	if b0, p := c.read(); b0 != 0x81 || string(p) != "bye" {
		t.Fatalf("%#x %q", b0, p)
	}
	c.expectClose(4001)
	if ce := h.nextClose(t, 0); ce == nil || ce.Code != 4000 {
		t.Fatalf("OnClose: %v; want the client's close frame's code, 4000", ce)
	}
}

// After this side's Close, OnClose has the code and reason of the peer's
// answer, or CloseAbnormal if none came within CloseTimeout (RFC 6455
// section 7.1.5), where it had this side's own code either way: a peer
// that never answered looked like one that had. CloseTimeout is 2 s,
// within which the client that answers does so on a loaded machine too.
func TestCloseCodeIsThePeers(t *testing.T) {
	h := &closeOnOpen{}
	addr := serve(t, h, &ws.Options{CloseTimeout: 2 * time.Second})
	closeFrame := func(c *rawConn) {
		c.t.Helper()
		c.frame(0x81, []byte("x"), false)
		if b0, p := c.read(); b0 != 0x81 || string(p) != "bye" {
			t.Fatalf("%#x %q", b0, p)
		}
		if b0, p := c.read(); b0 != 0x88 || binary.BigEndian.Uint16(p) != 4001 {
			t.Fatalf("close %#x %q", b0, p)
		}
	}

	answered := dialRaw(t, addr, "/fast", "")
	closeFrame(answered)
	answered.frame(0x88, append([]byte{0x0f, 0xa2}, "client"...), false)
	if _, err := answered.br.ReadByte(); err != io.EOF {
		t.Fatalf("after the close handshake: %v, want EOF", err)
	}
	if ce := h.nextClose(t, 0); ce == nil || ce.Code != 4002 || ce.Reason != "client" {
		t.Fatalf("OnClose: %v; want the client's answer, 4002 client", ce)
	}

	silent := dialRaw(t, addr, "/fast", "")
	closeFrame(silent)
	if _, err := silent.br.ReadByte(); err != io.EOF {
		t.Fatalf("after CloseTimeout: %v, want EOF", err)
	}
	if ce := h.nextClose(t, 1); ce == nil || ce.Code != ws.CloseAbnormal || !strings.Contains(ce.Reason, "CloseTimeout") {
		t.Fatalf("OnClose: %v; want 1006, no close frame within CloseTimeout", ce)
	}
}

// A client with Workers whose server answers 101 and, in the same write,
// two messages and its close frame: both messages are delivered, in
// order, then OnClose with the server's code.
func TestDialPooledFramesBehind101(t *testing.T) {
	addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
		b := []byte(answer101(req, ""))
		b = ws.AppendFrame(b, true, ws.Text, []byte("one"), nil)
		b = ws.AppendFrame(b, true, ws.Text, []byte("two"), nil)
		b = ws.AppendFrame(b, true, ws.CloseFrame, []byte{0x0f, 0xa0}, nil)
		nc.Write(b)
		closeFrom(br)
	})
	o := &ws.Options{Workers: 1}
	t.Cleanup(o.CloseWorkers)
	d := newDialer(t)
	r := newRecorder()
	dial(t, d, "ws://"+addr+"/", r, o)
	for _, want := range []string{"one", "two"} {
		if m := r.message(t); m.data != want {
			t.Fatalf("message %q, want %q", m.data, want)
		}
	}
	r.closeCode(t, 4000)
}

// slowClient is a client handler whose messages take long.
type slowClient struct {
	*recorder
	mu     sync.Mutex
	closed bool
}

func (s *slowClient) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	time.Sleep(2 * time.Second)
	s.recorder.OnMessage(c, op, data)
}

func (s *slowClient) OnClose(c *ws.Conn, err error) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.recorder.OnClose(c, err)
}

// Dialer.Shutdown waits until every connection is closed: its OnClose has
// run when it returns, even for a connection whose message is on the pool
// (it returned first, and OnClose ran later on a worker).
func TestDialerShutdownPooled(t *testing.T) {
	addr := serve(t, &echo{}, nil)
	o := &ws.Options{Workers: 1, CloseTimeout: 200 * time.Millisecond}
	t.Cleanup(o.CloseWorkers)
	d := newDialer(t)
	h := &slowClient{recorder: newRecorder()}
	c := dial(t, d, "ws://"+addr+"/fast", h, o)
	c.Send(ws.Text, []byte("slow"))
	time.Sleep(100 * time.Millisecond) // the echo is on the pool
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if !closed {
		t.Error("Dialer.Shutdown returned before the connection's OnClose")
	}
	recv(t, h.recorder.closed, "OnClose")
}

// slowServer is a pooled server handler whose messages take long.
type slowServer struct {
	echo
	mu      sync.Mutex
	handled int
}

func (s *slowServer) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	time.Sleep(3 * time.Second)
	s.mu.Lock()
	s.handled++
	s.mu.Unlock()
}

// http1.Server.Shutdown with a pooled message running: when Shutdown
// returns, the connection's OnClose has run (it returned first, and
// OnClose ran later on a worker, after the loops stopped).
func TestServerShutdownPooled(t *testing.T) {
	h := &slowServer{}
	o := &ws.Options{Workers: 1, CloseTimeout: 200 * time.Millisecond}
	t.Cleanup(o.CloseWorkers)
	srv, addr := startServer(t, h, o)
	c := dialRaw(t, addr, "/fast", "")
	c.frame(0x82, []byte("slow"), false)
	time.Sleep(100 * time.Millisecond) // on the pool
	go func() {
		// Answer the server's close at once.
		b0, p := c.readOrEOF()
		if b0 == 0x88 && len(p) >= 2 {
			c.frame(0x88, p[:2], false)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := h.count(); n != 1 {
		t.Errorf("Shutdown returned with %d OnClose calls, want 1 (a pooled OnMessage still running)", n)
	}
	h.nextClose(t, 0)
}

// heapInuse is the heap in use after the pools were emptied.
func heapInuse() uint64 {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// Idle pooled connections hold no buffer: after two messages that came in
// one read were handled, what the connection buffered for the second is
// released, as it is when they came in two reads (it was kept, 16 KiB a
// connection, until the next read).
func TestPooledIdleHoldsNoInboundBuffer(t *testing.T) {
	const n = 100
	o := &ws.Options{Workers: 2}
	t.Cleanup(o.CloseWorkers)
	addr := serve(t, &echo{pooled: true}, o)
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = dialRaw(t, addr, "/fast", "")
	}
	exchange := func(together bool) {
		for _, c := range conns {
			a, b := rawFrame(0x82, []byte("a")), rawFrame(0x82, []byte("b"))
			if together {
				c.nc.Write(append(a, b...))
			} else {
				c.nc.Write(a)
				c.read()
				c.nc.Write(b)
				c.read()
				continue
			}
			c.read()
			c.read()
		}
		time.Sleep(200 * time.Millisecond)
	}
	exchange(false)
	before := heapInuse()
	exchange(true)
	after := heapInuse()
	if grew := int64(after) - int64(before); grew > n*8<<10 {
		t.Errorf("%d idle pooled connections hold %d KiB more after two messages in one read (%d bytes each)", n, grew>>10, grew/n)
	}
}

// panicOnClose is echo whose OnClose panics.
type panicOnClose struct{ echo }

func (h *panicOnClose) OnClose(c *ws.Conn, err error) {
	h.echo.OnClose(c, err)
	panic("OnClose fails")
}

// A panic in OnClose still tells the server the connection is gone:
// Shutdown returns at once, with the loop or a pool; it waited for its
// context to end.
func TestPanicInOnCloseShutdown(t *testing.T) {
	for _, workers := range []int{0, 1} {
		h := &panicOnClose{}
		o := &ws.Options{Workers: workers}
		t.Cleanup(o.CloseWorkers)
		srv, addr := startServer(t, h, o)
		c := dialRaw(t, addr, "/fast", "")
		c.frame(0x88, []byte{0x03, 0xe8}, false) // close 1000
		c.expectClose(1000)
		h.nextClose(t, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := srv.Shutdown(ctx)
		cancel()
		if err != nil {
			t.Fatalf("workers %d: Shutdown after a panic in OnClose: %v", workers, err)
		}
	}
}
