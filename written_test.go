//go:build unix

package evloop

import (
	"bytes"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// writtenHandler counts OnWritten and, when its data handler is asked
// ("big" or "small"), writes that much.
type writtenHandler struct {
	funcHandler
	written atomic.Int32
	queued  atomic.Int64 // the outbound queue when OnWritten ran
}

func (h *writtenHandler) OnWritten(c *Conn) {
	h.queued.Store(int64(c.OutboundBuffered()))
	h.written.Add(1)
}

// OnWritten runs once an outbound queue the socket could not take at once
// is all written, and not for writes the socket took at once.
func TestWrittenHandler(t *testing.T) {
	big := bytes.Repeat([]byte("w"), 4<<20)
	h := &writtenHandler{}
	h.data = func(c *Conn) {
		in, _ := c.Next(c.InboundBuffered())
		switch string(in) {
		case "small":
			c.Write([]byte("ok"))
		case "big":
			c.Write(big)
		}
	}
	_, addr := serve(t, h, Options{Loops: 1, SendBuffer: 16 << 10}) // 4 MiB do not fit in the sockets
	c := dial(t, addr)
	c.(*net.TCPConn).SetReadBuffer(16 << 10)
	buf := make([]byte, 2)
	for range 10 {
		c.Write([]byte("small"))
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.written.Load(); n != 0 {
		t.Fatalf("OnWritten ran %d times for writes the socket took at once", n)
	}
	c.Write([]byte("big"))
	time.Sleep(100 * time.Millisecond) // the socket fills: the rest waits
	if n := h.written.Load(); n != 0 {
		t.Fatalf("OnWritten ran %d times before the client read", n)
	}
	if _, err := io.ReadFull(c, make([]byte, len(big))); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); h.written.Load() == 0 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	if n, q := h.written.Load(), h.queued.Load(); n != 1 || q != 0 {
		t.Fatalf("OnWritten ran %d times, the queue at %d bytes; want once, empty", n, q)
	}
}
