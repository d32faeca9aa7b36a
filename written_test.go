//go:build unix

package evloop

import (
	"bytes"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/sock"
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

// Close waits for a peer that takes the queued bytes, however slowly
// (here over several CloseTimeouts), and gives them all before its EOF;
// a peer that takes none for CloseTimeout is aborted, with
// ErrCloseTimeout. The first was aborted as the second, CloseTimeout
// after Close. The slow peer takes 16 KiB every 40 ms, a twenty-fifth of
// CloseTimeout, so that a peer slowed by a loaded machine still takes
// some in each.
func TestCloseTimeoutWaitsForProgress(t *testing.T) {
	const closeTimeout = time.Second
	big := bytes.Repeat([]byte("c"), 1<<20)
	closed := make(chan error, 2)
	h := &funcHandler{
		data: func(c *Conn) {
			c.Discard(c.InboundBuffered())
			c.Write(big)
			c.Close()
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1, SendBuffer: 16 << 10, CloseTimeout: closeTimeout})

	slow := dial(t, addr)
	slow.(*net.TCPConn).SetReadBuffer(16 << 10)
	slow.Write([]byte("go"))
	var got int
	start := time.Now()
	for buf := make([]byte, 16<<10); ; {
		n, err := slow.Read(buf)
		got += n
		if err != nil {
			break
		}
		time.Sleep(40 * time.Millisecond) // about 400 KiB a second at most: 2.6 s
	}
	if got != len(big) {
		t.Fatalf("a slow reader got %d bytes of %d before the end (after %v)", got, len(big), time.Since(start))
	}
	if d := time.Since(start); d < 2*closeTimeout {
		t.Fatalf("the reader took %v; the test wants it slower than CloseTimeout", d)
	}
	if err := waitClosed(t, closed); err != nil {
		t.Fatalf("OnClose after the slow reader took everything: %v; want nil", err)
	}

	stalled := dial(t, addr)
	stalled.(*net.TCPConn).SetReadBuffer(16 << 10)
	stalled.Write([]byte("go"))
	if err := waitClosed(t, closed); err != ErrCloseTimeout {
		t.Fatalf("OnClose for a peer that reads nothing: %v; want ErrCloseTimeout", err)
	}
}

// waitClosed waits for what OnClose reports.
func waitClosed(t *testing.T, closed <-chan error) error {
	t.Helper()
	select {
	case err := <-closed:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no OnClose")
	}
	return nil
}

// TestWrittenAfterBackPressureWrites: OnWritten runs once the queue is
// empty again, after the bytes OnBackPressure(false) queued as the queue
// drained, where it ran with them still queued.
func TestWrittenAfterBackPressureWrites(t *testing.T) {
	const size = 2000
	saved := writeFD
	t.Cleanup(func() { writeFD = saved }) // after the Shutdown below
	var full atomic.Bool
	full.Store(true)
	writeFD = func(fd int, p []byte) (int, error) { // on the loop
		if len(p) == size && full.CompareAndSwap(true, false) {
			return 0, sock.ErrAgain // the socket is full: the queue waits
		}
		return saved(fd, p)
	}
	h := &writtenHandler{}
	h.data = func(c *Conn) {
		c.Discard(c.InboundBuffered())
		c.Write(make([]byte, size)) // past HighWater
	}
	h.bp = func(c *Conn, paused bool) {
		if !paused {
			c.Write([]byte("more"))
		}
	}
	_, addr := serve(t, h, Options{Loops: 1, HighWater: size / 2})
	c := dial(t, addr)
	c.Write([]byte("go"))
	if _, err := io.ReadFull(c, make([]byte, size+len("more"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "OnWritten", func() bool { return h.written.Load() > 0 })
	if n, q := h.written.Load(), h.queued.Load(); n != 1 || q != 0 {
		t.Fatalf("OnWritten ran %d times, the queue at %d bytes; want once, empty", n, q)
	}
}
