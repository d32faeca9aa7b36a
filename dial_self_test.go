//go:build unix

package evloop

import (
	"context"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestDialSelfConnect dials, over and over, a loopback port in the
// ephemeral range that nothing listens on, as net's TestSelfConnect does:
// a connect whose kernel picks that very port as its source connects the
// socket to itself (TCP's simultaneous open). Dial closes such a
// connection and tries again, as net.Dial does, where it returned a Conn
// whose LocalAddr was its RemoteAddr.
func TestDialSelfConnect(t *testing.T) {
	// A port the kernel hands out as a connection's source.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	addr := nc.LocalAddr().String()
	nc.Close()
	ln.Close()

	var opens, selves atomic.Int32
	srv, err := NewServer(&funcHandler{open: func(c *Conn) {
		opens.Add(1)
		if l, r := c.LocalAddr(), c.RemoteAddr(); l != nil && r != nil && l.String() == r.String() {
			selves.Add(1)
		}
		c.Close()
	}}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	n := 100_000
	if testing.Short() {
		n = 1000
	}
	if runtime.GOOS != "linux" {
		n = 100 // others are slow to refuse a connect to a closed port
	}
	for range n {
		if _, err := srv.Dial(context.Background(), "tcp", addr); err == nil {
			t.Logf("Dial %s succeeded; another listener may have taken the port", addr)
		}
	}
	if s := selves.Load(); s > 0 {
		t.Errorf("%d of %d Dials to %s connected to themselves", s, opens.Load(), addr)
	}
}
