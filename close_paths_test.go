//go:build unix

package evloop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// CloseTimeout: "If the peer takes none of the queued bytes for
// Options.CloseTimeout, the connection is aborted; one that takes them,
// however slowly, gets them all." Here the peer starts taking bytes well
// within CloseTimeout, and the writability that reports it lands in the
// same loop iteration as the stall timer: timers fire before the
// iteration's flush, so the writability counts as taking. It did not, and
// the peer was aborted.
func TestCloseTimeoutCountsWritability(t *testing.T) {
	const size = 8 << 20
	// CloseTimeout is a second, within which the peer, slowed by a loaded
	// machine, takes some of the bytes while it reads.
	const closeTimeout = time.Second
	big := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	closed := make(chan error, 2)
	busy, reading := make(chan struct{}), make(chan struct{})
	h := &funcHandler{
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			if bytes.Contains(b, []byte("go")) {
				c.Write(big)
				c.Close()
				t0 := time.Now()
				// Close() ran at T0 and its flush filled the sockets. At
				// T0+1s the stall timer sees that flush as progress and
				// re-arms until T0+2s. At T0+1.5s, a timer of the loop and
				// so before that one, the loop turns busy (another
				// connection's work, simulated) until the peer reads, and
				// past T0+2s: its next iteration carries both the
				// writability the peer's reads caused and the overdue
				// stall timer.
				c.ls.l.AfterFunc(closeTimeout*3/2, func() {
					close(busy)
					select {
					case <-reading:
					case <-time.After(30 * time.Second):
					}
					time.Sleep(max(100*time.Millisecond, time.Until(t0.Add(closeTimeout*2+closeTimeout/3))))
				})
			}
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1, HighWater: 32 << 20, SendBuffer: 64 << 10, CloseTimeout: closeTimeout})
	c := dial(t, addr)
	c.(*net.TCPConn).SetReadBuffer(64 << 10)
	c.Write([]byte("go"))
	select {
	case <-busy:
	case <-time.After(30 * time.Second):
		t.Fatal("the loop did not turn busy in 30 s")
	}
	// From then the peer reads without pause.
	got := 0
	buf := make([]byte, 1<<20)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var err error
	for {
		var n int
		n, err = c.Read(buf)
		if got == 0 {
			close(reading)
		}
		got += n
		if err != nil {
			break
		}
	}
	cerr := waitClosed(t, closed)
	if got != size || err != io.EOF || cerr != nil {
		t.Fatalf("peer reading without pause while the loop was busy past the stall timer (CloseTimeout %v): got %d of %d bytes, then %v; OnClose err = %v", closeTimeout, got, size, err, cerr)
	}
}

// PanicError: "Such a connection is closed as Close closes one: the
// bytes queued before the panic are written first", for a dialed
// connection as for an accepted one; a dialed one's OnOpen panic closed it
// at once, dropping what OnOpen queued.
func TestDialOnOpenPanicWritesQueuedBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	openThenPanic := func(c *Conn) {
		c.Write([]byte("hello"))
		panic("boom in OnOpen")
	}
	client, err := NewServer(&funcHandler{open: openThenPanic}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			accepted <- nc
		}
	}()
	_, derr := client.Dial(context.Background(), "tcp", ln.Addr().String())
	var pe *PanicError
	if !errors.As(derr, &pe) {
		t.Fatalf("Dial = %v; want a *PanicError", derr)
	}
	nc := <-accepted
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, rerr := io.ReadAll(nc)
	if string(got) != "hello" {
		t.Errorf("peer read %q (%v); want the bytes OnOpen queued before panicking, \"hello\"", got, rerr)
	}
	// Compare: the same handler on an accepted connection.
	_, addr := serve(t, &funcHandler{open: openThenPanic}, Options{Loops: 1})
	ac := dial(t, addr)
	ac.SetReadDeadline(time.Now().Add(5 * time.Second))
	got2, _ := io.ReadAll(ac)
	if string(got2) != "hello" {
		t.Errorf("accepted connection with the same OnOpen: peer read %q; want \"hello\"", got2)
	}
}
