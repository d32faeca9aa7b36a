//go:build unix

package evloop

import (
	"bytes"
	"io"
	"os"
	"sync/atomic"
	"testing"

	"github.com/evloop/evloop/internal/sock"
)

// TestWriteRetriedOnNoBuffers: a flush that meets ENOBUFS, which macOS and
// the BSDs return when the kernel is short of mbufs for a moment, keeps
// the bytes queued and tries again at the next write readiness or, when
// none comes, after a short while, where it closed the connection with
// the error. The third try here comes of the timer alone: the socket had
// room all along.
func TestWriteRetriedOnNoBuffers(t *testing.T) {
	savedWrite, savedWritev := writeFD, writevFD
	t.Cleanup(func() { writeFD, writevFD = savedWrite, savedWritev }) // after the Shutdown below
	var refusals atomic.Int32
	refusals.Store(3)
	noBuffers := func() bool { return refusals.Add(-1) >= 0 }
	writeFD = func(fd int, p []byte) (int, error) { // on the loop
		if noBuffers() {
			return 0, os.NewSyscallError("write", sock.ErrNoBuffers)
		}
		return savedWrite(fd, p)
	}
	writevFD = func(fd int, bufs [][]byte) (int, error) {
		if noBuffers() {
			return 0, os.NewSyscallError("writev", sock.ErrNoBuffers)
		}
		return savedWritev(fd, bufs)
	}
	h := &echoHandler{}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	for _, msg := range []string{"ping", "pong"} {
		if got, err := roundTrip(c, []byte(msg)); err != nil || string(got) != msg {
			t.Fatalf("echo = %q, %v; want %s", got, err, msg)
		}
	}
	if n := refusals.Load(); n >= 0 {
		t.Errorf("%d refusals left; want none", n+1)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) > 0 {
		t.Errorf("OnClose ran with %v; want the connection open", h.errs)
	}
}

// TestBackPressurePanicInPartialFlush: a panic in OnBackPressure(false),
// called by a flush that wrote part of the queue, closes the connection
// as Close does: the bytes queued before it are written first, as they
// were queued. Those still in the loop's write arena were left there
// when the panic cut the flush short, and the next iteration's writes to
// another connection, reusing the arena, overwrote them before they went
// out.
func TestBackPressurePanicInPartialFlush(t *testing.T) {
	const size, left = 2000, 400
	savedWrite := writeFD
	t.Cleanup(func() { writeFD = savedWrite }) // after the Shutdown below
	var partial atomic.Bool
	partial.Store(true)
	writeFD = func(fd int, p []byte) (int, error) { // on the loop
		if len(p) == size && partial.CompareAndSwap(true, false) {
			return savedWrite(fd, p[:size-left]) // the socket took part of it
		}
		return savedWrite(fd, p)
	}
	var other *Conn // on the loop alone
	h := &funcHandler{
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			switch string(b) {
			case "first":
				c.Write(bytes.Repeat([]byte("a"), size)) // past HighWater
			case "other":
				other = c
				c.Write([]byte("ready"))
			}
		},
		bp: func(c *Conn, paused bool) {
			if !paused { // the flush left no more than LowWater
				// The next iteration writes another connection's bytes
				// before this one's flush.
				c.Server().Submit(0, func() { other.Write(bytes.Repeat([]byte("b"), 2*size)) })
				panic("in OnBackPressure")
			}
		},
	}
	_, addr := serve(t, h, Options{Loops: 1, HighWater: size / 2, LowWater: left + 100})
	oc := dial(t, addr)
	oc.Write([]byte("other"))
	ready := make([]byte, len("ready"))
	if _, err := io.ReadFull(oc, ready); err != nil || string(ready) != "ready" {
		t.Fatalf("other connection: %q, %v", ready, err)
	}
	c := dial(t, addr)
	c.Write([]byte("first"))
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte("a"), size)) {
		t.Fatalf("read %d bytes (%q...), %v; want %d bytes of a", len(got), got[max(0, len(got)-8):], err, size)
	}
}
