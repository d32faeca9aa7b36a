package ws_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/ws"
)

// burst answers "burst" with five binary messages of 20000 bytes, written
// in one OnMessage, and hands the test what each WriteMessage returned;
// it echoes anything else.
type burst struct {
	echo
	errs chan []error
}

func (b *burst) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	if string(data) != "burst" {
		c.WriteMessage(op, data)
		return
	}
	var errs []error
	for i := range 5 {
		errs = append(errs, c.WriteMessage(ws.Binary, bytes.Repeat([]byte{byte('a' + i)}, 20000)))
	}
	b.errs <- errs
}

// A message the outbound queue has no room for is refused whole: the
// frames queued before it arrive intact, and the stream goes on.
func TestWriteOutboundFull(t *testing.T) {
	b := &burst{errs: make(chan []error, 1)}
	// Small socket buffers on both ends, so that the kernel cannot take
	// the whole burst in the queue's place: 320,000 bytes against 64 KiB
	// of queue and 8 KiB of buffer on each side (16 KiB as Linux counts).
	_, addr := startServerEngine(t, b, nil, evloop.Options{MaxOutbound: 64 << 10, SendBuffer: 8 << 10})
	c := dialRaw(t, addr, "/fast", "")
	if err := c.nc.(*net.TCPConn).SetReadBuffer(8 << 10); err != nil {
		t.Fatal(err)
	}
	c.frame(0x81, []byte("burst"), false)
	errs := recv(t, b.errs, "the results of the writes")
	queued := 0
	for i, err := range errs {
		switch {
		case err == nil:
			queued++
		case !errors.Is(err, evloop.ErrOutboundFull):
			t.Fatalf("WriteMessage %d = %v; want nil or ErrOutboundFull", i, err)
		}
	}
	if queued == 0 || queued == len(errs) {
		t.Fatalf("WriteMessage results %v; want the queue to take some of 100000 bytes, not all", errs)
	}
	c.frame(0x81, []byte("after"), false)
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i, err := range errs {
		if err != nil {
			continue
		}
		if b0, p := c.read(); b0 != 0x82 || !bytes.Equal(p, bytes.Repeat([]byte{byte('a' + i)}, 20000)) {
			t.Fatalf("frame of message %d: %#x, %d bytes; want binary, 20000 bytes of %q", i, b0, len(p), rune('a'+i))
		}
	}
	if b0, p := c.read(); b0 != 0x81 || string(p) != "after" {
		t.Fatalf("frame after the queued messages: %#x %q; want the echo of \"after\"", b0, p)
	}
}

// closeThenSend answers a message by starting the close handshake, then
// sending a message.
type closeThenSend struct{ echo }

func (h *closeThenSend) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	c.CloseAsync(4000, "bye")
	c.Send(ws.Text, []byte("after close"))
}

// A message sent after the close frame is dropped (RFC 6455 section
// 5.5.1), whether the handler runs on the loop or on a worker.
func TestSendAfterClose(t *testing.T) {
	for _, workers := range []int{0, 1} {
		c := dialPooled(t, &closeThenSend{}, workers)
		c.frame(0x81, []byte("x"), false)
		if b0, p := c.read(); b0 != 0x88 || len(p) < 2 || binary.BigEndian.Uint16(p) != 4000 {
			t.Fatalf("workers=%d: first frame %#x %q; want the close frame, 4000", workers, b0, p)
		}
		c.frame(0x88, []byte{0x0f, 0xa0}, false)
		if rest, err := io.ReadAll(c.br); len(rest) > 0 || err != nil {
			t.Fatalf("workers=%d: after the close frame: %q, %v; want nothing, then EOF", workers, rest, err)
		}
	}
}

// sendBurst answers "burst" by sending, from another goroutine, sixteen
// binary messages of 20000 bytes, and reports what each Send returned and when
// the connection closed.
type sendBurst struct {
	echo
	errs   chan []error
	closed chan error
}

func (b *sendBurst) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	go func() {
		var errs []error
		for i := range 16 {
			errs = append(errs, c.Send(ws.Binary, bytes.Repeat([]byte{byte('a' + i)}, 20000)))
		}
		b.errs <- errs
	}()
}

func (b *sendBurst) OnClose(c *ws.Conn, err error) { b.closed <- err }

// A Send the outbound queue has no room for closes the connection after
// the messages queued before it, rather than leave a gap in the stream,
// and the peer reads why: a close frame with 1008, where the connection
// ended without one.
func TestSendOutboundFullCloses(t *testing.T) {
	b := &sendBurst{errs: make(chan []error, 1), closed: make(chan error, 1)}
	// Small socket buffers on both ends, so that the kernel cannot take
	// the whole burst in the queue's place: 320,000 bytes against 64 KiB
	// of queue and 8 KiB of buffer on each side (16 KiB as Linux counts).
	_, addr := startServerEngine(t, b, nil, evloop.Options{MaxOutbound: 64 << 10, SendBuffer: 8 << 10})
	c := dialRaw(t, addr, "/fast", "")
	if err := c.nc.(*net.TCPConn).SetReadBuffer(8 << 10); err != nil {
		t.Fatal(err)
	}
	c.frame(0x81, []byte("burst"), false)
	for i, err := range recv(t, b.errs, "the results of the sends") {
		if err != nil {
			t.Fatalf("Send %d = %v; want nil: the loop runs", i, err)
		}
	}
	// The client reads late: what was queued comes, in order, then the end.
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := c.readUntilOverflow()
	if got == 0 || got == 16 {
		t.Fatalf("%d messages arrived; want some of sixteen, for a 64 KiB queue", got)
	}
	c.nc.Close() // the server waits for this EOF, a second at most
	var ce *ws.CloseError
	if err := recv(t, b.closed, "OnClose"); !errors.As(err, &ce) || ce.Code != ws.ClosePolicyViolation {
		t.Fatalf("OnClose = %v; want 1008", err)
	}
}

// A message is Text or Binary: WriteMessage and Send refuse another
// opcode, sending nothing (a ping written as a message of 200 bytes, and
// compressed, would be a control frame past 125 bytes with RSV1 set), and
// so does Broadcast.
func TestWriteOpcodes(t *testing.T) {
	addr := serve(t, &echo{}, &ws.Options{Compression: true})
	d := newDialer(t)
	r := newRecorder()
	c := dial(t, d, "ws://"+addr+"/fast", r, &ws.Options{Compression: true, CompressionThreshold: 1})
	data := bytes.Repeat([]byte("p"), 200)
	for _, op := range []ws.Opcode{ws.Continuation, ws.CloseFrame, ws.Ping, ws.Pong, 3, 0xB} {
		errc := make(chan error, 1)
		c.Submit(func() { errc <- c.WriteMessage(op, data) })
		if err := <-errc; err == nil {
			t.Fatalf("WriteMessage(%v) = nil; want an error", op)
		}
		if err := c.Send(op, data); err == nil {
			t.Fatalf("Send(%v) = nil; want an error", op)
		}
	}
	var g ws.Group
	g.Add(c)
	if err := g.Broadcast(ws.Ping, data, nil, func() { t.Error("done called for a refused Broadcast") }); err == nil {
		t.Fatal("Broadcast(ping) = nil; want an error")
	}
	c.Send(ws.Text, []byte("still open"))
	if m := r.message(t); m.data != "still open" {
		t.Fatalf("echo after the refused writes: %q", m.data)
	}
}

// Text is UTF-8: WriteMessage, Send and Broadcast refuse text that is not
// with ErrNotUTF8, sending nothing, compressed or not, where the peer
// would fail the connection with 1007; the connection goes on.
func TestWriteTextNotUTF8(t *testing.T) {
	addr := serve(t, &echo{}, &ws.Options{Compression: true})
	d := newDialer(t)
	r := newRecorder()
	c := dial(t, d, "ws://"+addr+"/fast", r, &ws.Options{Compression: true, CompressionThreshold: 100})
	var g ws.Group
	g.Add(c)
	long := bytes.Repeat([]byte("ü"), 100)
	for _, data := range [][]byte{
		{0xff},
		[]byte("ab\xc3"),       // ends inside a character
		[]byte("\xed\xa0\x80"), // a surrogate
		[]byte("\xc0\xaf"),     // overlong
		append(long[:len(long):len(long)], 0xf4, 0x90, 0x80, 0x80), // past U+10FFFF, compressed
	} {
		errc := make(chan error, 1)
		c.Submit(func() { errc <- c.WriteMessage(ws.Text, data) })
		if err := <-errc; !errors.Is(err, ws.ErrNotUTF8) {
			t.Fatalf("WriteMessage(Text, %q) = %v; want ErrNotUTF8", data, err)
		}
		if err := c.Send(ws.Text, data); !errors.Is(err, ws.ErrNotUTF8) {
			t.Fatalf("Send(Text, %q) = %v; want ErrNotUTF8", data, err)
		}
		if err := g.Broadcast(ws.Text, data, nil, func() { t.Error("done called for a refused Broadcast") }); !errors.Is(err, ws.ErrNotUTF8) {
			t.Fatalf("Broadcast(Text, %q) = %v; want ErrNotUTF8", data, err)
		}
		if err := c.Send(ws.Binary, data); err != nil {
			t.Fatalf("Send(Binary, %q) = %v; binary is any bytes", data, err)
		}
		if m := r.message(t); m.op != ws.Binary || m.data != string(data) {
			t.Fatalf("echo of Binary %q: %v %q", data, m.op, m.data)
		}
	}
	for _, data := range [][]byte{nil, []byte("ascii"), long, []byte("\U0010ffff\u00e9")} {
		if err := c.Send(ws.Text, data); err != nil {
			t.Fatalf("Send(Text, %q) = %v", data, err)
		}
		if m := r.message(t); m.op != ws.Text || m.data != string(data) {
			t.Fatalf("echo of Text %q: %v %q", data, m.op, m.data)
		}
	}
}

// Once Close began the handshake, WriteMessage, Ping and Close fail with
// ErrClosed, sending nothing; a ping of more than 125 bytes is refused
// before then, and the connection goes on.
func TestWritesAfterCloseBegan(t *testing.T) {
	addr := serve(t, &echo{}, nil)
	d := newDialer(t)
	r := newRecorder()
	c := dial(t, d, "ws://"+addr+"/fast", r, nil)
	onLoop := func(f func() error) error {
		errc := make(chan error, 1)
		if err := c.Submit(func() { errc <- f() }); err != nil {
			t.Fatalf("Submit = %v", err)
		}
		return recv(t, errc, "the write's result")
	}
	if err := onLoop(func() error { return c.Ping(bytes.Repeat([]byte("p"), 126)) }); err == nil {
		t.Fatal("Ping(126 bytes) = nil; want an error")
	}
	if err := onLoop(func() error { return c.Ping(bytes.Repeat([]byte("p"), 125)) }); err != nil {
		t.Fatalf("Ping(125 bytes) = %v; want nil", err)
	}
	if p := recv(t, r.pongs, "pong"); len(p) != 125 {
		t.Fatalf("pong of %d bytes; want 125", len(p))
	}
	if err := onLoop(func() error { return c.Close(ws.CloseNormal, "bye") }); err != nil {
		t.Fatalf("Close = %v; want nil", err)
	}
	for name, f := range map[string]func() error{
		"WriteMessage": func() error { return c.WriteMessage(ws.Text, []byte("late")) },
		"Ping":         func() error { return c.Ping(nil) },
		"Close":        func() error { return c.Close(ws.CloseGoingAway, "") },
	} {
		if err := onLoop(f); err != ws.ErrClosed {
			t.Errorf("%s after Close = %v; want ErrClosed", name, err)
		}
	}
	if ce := r.closeCode(t, ws.CloseNormal); ce.Reason != "bye" {
		t.Fatalf("OnClose: %v; want 1000, bye (the echo of the first Close)", ce)
	}
	select {
	case m := <-r.msgs:
		t.Fatalf("message after Close: %q", m.data)
	default:
	}
}

// writesOnClose writes in OnClose, where the connection is gone, and
// reports what WriteMessage, Ping and Close returned.
type writesOnClose struct {
	echo
	errs chan []error
}

func (h *writesOnClose) OnClose(c *ws.Conn, err error) {
	h.errs <- []error{c.WriteMessage(ws.Text, []byte("too late")), c.Ping([]byte("anyone?")), c.Close(ws.CloseNormal, "")}
}

// In OnClose, WriteMessage, Ping and Close fail with ErrClosed, sending
// nothing, however the connection ended: a client's EOF without a close
// frame, where the server's connection was still open in OnClose and all
// three queued their frames for the client that had gone; a server that
// went without one, where the client's Ping returned evloop.ErrClosed,
// which errors.Is does not take for ErrClosed; or a client's Close that
// ran out of CloseTimeout.
func TestWritesInOnClose(t *testing.T) {
	check := func(t *testing.T, errs []error) {
		t.Helper()
		for i, name := range []string{"WriteMessage", "Ping", "Close"} {
			if errs[i] != ws.ErrClosed {
				t.Errorf("%s in OnClose = %v; want ErrClosed", name, errs[i])
			}
		}
	}
	t.Run("server, client's EOF", func(t *testing.T) {
		for _, workers := range []int{0, 1} {
			h := &writesOnClose{errs: make(chan []error, 1)}
			c := dialPooled(t, h, workers)
			c.nc.(*net.TCPConn).CloseWrite() // no close frame
			check(t, recv(t, h.errs, "OnClose"))
			if rest, err := io.ReadAll(c.br); len(rest) > 0 || err != nil {
				t.Fatalf("workers=%d: after the EOF the server sent %q, %v; want nothing, then EOF", workers, rest, err)
			}
		}
	})
	t.Run("client, server gone", func(t *testing.T) {
		gone := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
			io.WriteString(nc, answer101(req, "")) // then closes, without a close frame
		})
		h := &writesOnClose{errs: make(chan []error, 1)}
		dial(t, newDialer(t), "ws://"+gone+"/", h, nil)
		check(t, recv(t, h.errs, "OnClose"))
	})
	t.Run("client, Close timed out", func(t *testing.T) {
		silent := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
			io.WriteString(nc, answer101(req, ""))
			io.Copy(io.Discard, br) // never answers the close frame
		})
		h := &writesOnClose{errs: make(chan []error, 1)}
		c := dial(t, newDialer(t), "ws://"+silent+"/", h, &ws.Options{CloseTimeout: 50 * time.Millisecond})
		c.CloseAsync(ws.CloseNormal, "")
		check(t, recv(t, h.errs, "OnClose"))
	})
}

// readUntilOverflow reads binary messages of 20000 bytes, the i-th of them
// all 'a'+i, then the close frame of a connection whose outbound queue
// overflowed (1008), then EOF, and returns how many messages came.
func (c *rawConn) readUntilOverflow() int {
	c.t.Helper()
	got := 0
	for {
		b0, p := c.readOrEOF()
		switch {
		case p == nil:
			c.t.Fatalf("EOF after %d messages; want a close frame first", got)
		case b0 == 0x88:
			if len(p) < 2 || binary.BigEndian.Uint16(p) != ws.ClosePolicyViolation {
				c.t.Fatalf("close frame %q after %d messages; want 1008", p, got)
			}
			if rest, err := io.ReadAll(c.br); len(rest) > 0 || err != nil {
				c.t.Fatalf("after the close frame: %q, %v; want nothing, then EOF", rest, err)
			}
			return got
		case b0 != 0x82 || !bytes.Equal(p, bytes.Repeat([]byte{byte('a' + got)}, 20000)):
			c.t.Fatalf("frame %d: %#x, %d bytes; want binary, 20000 bytes of %q", got, b0, len(p), rune('a'+got))
		}
		got++
	}
}

// closeWhenFull answers "fill" by writing binary messages until the
// outbound queue has no room for even a byte's message, then starting the
// close handshake; it tells the test the lengths it queued.
type closeWhenFull struct {
	echo
	queued chan []int
}

func (h *closeWhenFull) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	var sizes []int
	for n := 20000; n > 0; {
		if c.WriteMessage(ws.Binary, bytes.Repeat([]byte{byte('a' + len(sizes)%26)}, n)) != nil {
			n /= 2
			continue
		}
		sizes = append(sizes, n)
	}
	if err := c.Close(4001, "done"); err != nil {
		panic(err)
	}
	h.queued <- sizes
}

// Close's frame goes out after the messages queued before it even when
// they fill the outbound queue: a peer that reads them late gets every
// one and then the close, where the frame was dropped and the peer saw
// the connection end without one.
func TestCloseAfterFullQueue(t *testing.T) {
	h := &closeWhenFull{queued: make(chan []int, 1)}
	_, addr := startServerEngine(t, h, &ws.Options{CloseTimeout: 10 * time.Second}, evloop.Options{MaxOutbound: 64 << 10, SendBuffer: 8 << 10})
	c := dialRaw(t, addr, "/fast", "")
	if err := c.nc.(*net.TCPConn).SetReadBuffer(8 << 10); err != nil {
		t.Fatal(err)
	}
	c.frame(0x81, []byte("fill"), false)
	sizes := recv(t, h.queued, "the messages queued")
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i, n := range sizes {
		if b0, p := c.read(); b0 != 0x82 || !bytes.Equal(p, bytes.Repeat([]byte{byte('a' + i%26)}, n)) {
			t.Fatalf("frame %d of %d: %#x, %d bytes; want binary, %d bytes", i, len(sizes), b0, len(p), n)
		}
	}
	if b0, p := c.read(); b0 != 0x88 || len(p) < 2 || binary.BigEndian.Uint16(p) != 4001 || string(p[2:]) != "done" {
		t.Fatalf("after %d messages: %#x %q; want the close frame, 4001 done", len(sizes), b0, p)
	}
	c.frame(0x88, []byte{0x0f, 0xa1}, false)
	if rest, err := io.ReadAll(c.br); len(rest) > 0 || err != nil {
		t.Fatalf("after the close frame: %q, %v; want nothing, then EOF", rest, err)
	}
}
