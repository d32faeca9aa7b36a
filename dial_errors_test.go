//go:build unix

package evloop

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
)

// Dial's failures are what net.Dialer's are: a *net.OpError whose Op is
// "dial", with the network and the address dialed, wrapping the system's
// error (errors.Is finds its errno), where a refused connect was a bare
// "connect: connection refused" that named no address.
func TestDialErrors(t *testing.T) {
	refused := testpeer.FreeAddr(t)
	missing := filepath.Join(t.TempDir(), "missing.sock")
	long := "/" + strings.Repeat("x", 200)
	client, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cases := []struct {
		name          string
		network, addr string
		wantAddr      string // "" for none
		errno         syscall.Errno
	}{
		{"refused", "tcp", refused, refused, syscall.ECONNREFUSED},
		{"unix, no socket file", "unix", missing, missing, syscall.ENOENT},
		{"unix, path too long", "unix", long, long, syscall.EINVAL},
		{"unknown network", "udp", "127.0.0.1:1", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.Dial(context.Background(), tc.network, tc.addr)
			var oe *net.OpError
			if c != nil || !errors.As(err, &oe) {
				t.Fatalf("Dial(%q, %q) = %v, %v (%T); want a *net.OpError", tc.network, tc.addr, c, err, err)
			}
			gotAddr := ""
			if oe.Addr != nil {
				gotAddr = oe.Addr.String()
			}
			if oe.Op != "dial" || oe.Net != tc.network || gotAddr != tc.wantAddr {
				t.Errorf("Dial's error: Op %q, Net %q, Addr %q; want dial, %q, %q", oe.Op, oe.Net, gotAddr, tc.network, tc.wantAddr)
			}
			if tc.errno != 0 && !errors.Is(err, tc.errno) {
				t.Errorf("Dial = %v; want errors.Is %v", err, tc.errno)
			}
		})
	}
}

// A Dial whose context has already ended fails without connecting, as
// net.Dialer's does, where it connected, ran OnOpen and returned the
// connection whenever the connect won the race with the context.
func TestDialContextAlreadyDone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var opens atomic.Int32
	client, err := NewServer(&funcHandler{open: func(*Conn) { opens.Add(1) }}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 50 {
		if c, err := client.Dial(ctx, "tcp", ln.Addr().String()); c != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial with its context done = %v, %v; want context.Canceled", c, err)
		}
	}
	if n := opens.Load(); n != 0 {
		t.Fatalf("OnOpen ran %d times for dials whose context was done", n)
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond))
	if nc, err := ln.Accept(); err == nil {
		nc.Close()
		t.Fatal("a Dial whose context was done connected to the listener")
	}
}

// A Dial after Shutdown or Close fails with ErrClosed before it connects,
// where it connected to the peer first and then closed the connection.
func TestDialAfterShutdownConnectsNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	client.Close()
	if c, err := client.Dial(context.Background(), "tcp", ln.Addr().String()); c != nil || !errors.Is(err, ErrClosed) {
		t.Fatalf("Dial after Close = %v, %v; want ErrClosed", c, err)
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond))
	if nc, err := ln.Accept(); err == nil {
		nc.Close()
		t.Fatal("a Dial after Close connected to the listener")
	}
}
