//go:build unix

package evloop

import (
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
