//go:build unix

package evloop

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// A handler panics in OnData during an event that reports both
// readability and writability for a connection waiting to write: the
// panic cuts HandleIO short before its flush, and edge-triggered
// readiness does not report the writability again. The queued bytes must
// still go out before the close.
func TestPanicWithReadableAndWritableLosesWritable(t *testing.T) {
	const size = 8 << 20
	big := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		if bytes.Contains(b, []byte("panic")) {
			panic("boom")
		}
		if bytes.Contains(b, []byte("big")) {
			c.Write(big)
		}
	}}
	srv, addr := serve(t, h, Options{Loops: 1, HighWater: 32 << 20, SendBuffer: 64 << 10, CloseTimeout: 6 * time.Second})
	c := dial(t, addr)
	c.(*net.TCPConn).SetReadBuffer(64 << 10)
	c.Write([]byte("big"))
	time.Sleep(200 * time.Millisecond) // the server's socket is full: write armed

	// Keep the loop busy while the client drains the server's socket
	// (EPOLLOUT) and sends the trigger (EPOLLIN): one event with both.
	busy := make(chan struct{})
	srv.Submit(0, func() { close(busy); time.Sleep(400 * time.Millisecond) })
	<-busy
	got := 0
	buf := make([]byte, 1<<20)
	c.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
	for {
		n, err := c.Read(buf)
		got += n
		if err != nil {
			break
		}
	}
	c.Write([]byte("panic"))

	// The queued bytes are owed, then a FIN (closeAfterPanic closes as
	// Close does). Lost, they would stall the close until CloseTimeout
	// (6 s) aborts it; the read is given 30 s, which a loaded machine
	// does not outlast.
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var err error
	for {
		var n int
		n, err = c.Read(buf)
		got += n
		if err != nil {
			break
		}
	}
	if got != size || err != io.EOF {
		stalled := errors.Is(err, os.ErrDeadlineExceeded)
		t.Fatalf("after the panic: %d of %d bytes, then %v after %v (stalled: %t)", got, size, err, time.Since(start).Round(time.Millisecond), stalled)
	}
}
