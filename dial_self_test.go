//go:build unix

package evloop

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/evloop/evloop/internal/sock"
	"golang.org/x/sys/unix"
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

// TestDialSpuriousAddrNotAvail: a TCP connect that fails with
// EADDRNOTAVAIL, as Linux's may when the source port it picks is in use
// after all, is made again, twice at most, as net.Dial makes it
// (spuriousENOTAVAIL in net/tcpsock_posix.go), where Dial failed at once.
// A Unix socket's is not.
func TestDialSpuriousAddrNotAvail(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // its backlog completes the connects: nothing accepts
	srv, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	saved := dialSocket
	defer func() { dialSocket = saved }()

	cases := []struct {
		name      string
		network   string
		addr      string
		refusals  int
		wantCalls int
		wantErr   bool
	}{
		{"tcp, refused twice", "tcp", ln.Addr().String(), 2, 3, false},
		{"tcp, refused always", "tcp", ln.Addr().String(), 100, 3, true},
		{"unix", "unix", filepath.Join(t.TempDir(), "s"), 100, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			dialSocket = func(network, addr string, o sock.DialOptions) (int, error) { // on the test's goroutine
				calls++
				if calls <= tc.refusals {
					return -1, os.NewSyscallError("connect", unix.EADDRNOTAVAIL)
				}
				return saved(network, addr, o)
			}
			_, err := srv.Dial(context.Background(), tc.network, tc.addr)
			if calls != tc.wantCalls {
				t.Errorf("connects made = %d; want %d", calls, tc.wantCalls)
			}
			if tc.wantErr && !errors.Is(err, unix.EADDRNOTAVAIL) {
				t.Errorf("Dial = %v; want EADDRNOTAVAIL", err)
			}
			if !tc.wantErr && err != nil {
				t.Errorf("Dial = %v; want a connection", err)
			}
		})
	}
}
