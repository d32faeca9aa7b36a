//go:build unix

package evloop

import (
	"errors"
	"net"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// DialWith binds the socket to DialOptions.LocalAddr before it connects,
// as net.Dialer binds it: the listener sees the connection come from that
// address (and port, when one is given), and the Conn reports it; a host
// name's addresses of the other family are not tried, and a name with
// none of its family fails as net.Dialer fails.
func TestDialLocalAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, ctx := dialingServer(t)
	free, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	for _, local := range []*net.TCPAddr{
		{IP: net.IPv4(127, 0, 0, 2)},
		{IP: net.IPv4(127, 0, 0, 3), Port: port},
	} {
		c, err := client.DialWith(ctx, "tcp", ln.Addr().String(), DialOptions{LocalAddr: local})
		if err != nil {
			t.Fatalf("DialWith from %v: %v", local, err)
		}
		peer, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		from := peer.RemoteAddr().(*net.TCPAddr)
		if !from.IP.Equal(local.IP) || local.Port != 0 && from.Port != local.Port {
			t.Errorf("DialWith from %v: the listener saw %v", local, from)
		}
		got := make(chan net.Addr, 1)
		c.Submit(func() { got <- c.LocalAddr(); c.Close() }) // the loop's to ask
		if a, _ := (<-got).(*net.TCPAddr); a == nil || a.Port != from.Port || !a.IP.Equal(from.IP) {
			t.Errorf("DialWith from %v: LocalAddr = %v; the listener saw %v", local, a, from)
		}
		peer.Close()
	}

	// A bound port taken: the connect fails, as a *net.OpError naming
	// the local address.
	taken, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, err = client.DialWith(ctx, "tcp", ln.Addr().String(), DialOptions{LocalAddr: taken.Addr()})
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Source != taken.Addr() || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("DialWith from a port in use = %v; want an OpError from it wrapping EADDRINUSE", err)
	}

	// A name resolving to both families: only IPv4 is tried from an IPv4
	// address; an IPv6 local address has none to try.
	dualStack(t)
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	c, err := client.DialWith(ctx, "tcp", "dual.test:"+p, DialOptions{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}})
	if err != nil {
		t.Fatalf("DialWith a dual-stack name from IPv4: %v", err)
	}
	c.Submit(func() { c.Close() })
	if peer, err := ln.Accept(); err == nil {
		peer.Close()
	}
	_, err = client.DialWith(ctx, "tcp4", "dual.test:"+p, DialOptions{LocalAddr: &net.TCPAddr{IP: net.IPv6loopback}})
	var ae *net.AddrError
	if !errors.As(err, &ae) || ae.Err != "no suitable address found" {
		t.Errorf("DialWith IPv4 addresses from ::1 = %v; want no suitable address", err)
	}
}

// DialOptions.Control is called with each socket before it connects,
// with the network of its family and the address, as net.Dialer calls
// it: what it sets on the socket stays on the Conn; its error fails the
// dial, and nothing is left open.
func TestDialControl(t *testing.T) {
	_, addr := serve(t, &echoHandler{}, Options{Loops: 1})
	client, ctx := dialingServer(t)
	var network, address string
	var controlErr error
	c, err := client.DialWith(ctx, "tcp", addr, DialOptions{Control: func(n, a string, rc syscall.RawConn) error {
		network, address = n, a
		if err := rc.Read(func(uintptr) bool { return true }); err == nil {
			t.Error("RawConn.Read while dialing: no error")
		}
		return rc.Control(func(fd uintptr) {
			controlErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if network != "tcp4" || address != addr || controlErr != nil {
		t.Errorf("Control got %q, %q (setsockopt %v); want tcp4, %q", network, address, controlErr, addr)
	}
	done := make(chan int, 1)
	c.Submit(func() {
		v, _ := unix.GetsockoptInt(int(c.fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		done <- v
		c.Close()
	})
	if v := <-done; v != 1 {
		t.Errorf("SO_KEEPALIVE on the Conn = %d; want 1, as Control set it", v)
	}

	refuse := errors.New("not this one")
	before := openFDs(t)
	for range 20 {
		_, err := client.DialWith(ctx, "tcp", addr, DialOptions{Control: func(string, string, syscall.RawConn) error { return refuse }})
		var oe *net.OpError
		if !errors.Is(err, refuse) || !errors.As(err, &oe) || oe.Op != "dial" {
			t.Fatalf("DialWith whose Control fails = %v; want an OpError wrapping its error", err)
		}
	}
	if after := openFDs(t); after > before {
		t.Errorf("open fds %d before 20 refused dials, %d after", before, after)
	}

	path := filepath.Join(t.TempDir(), "s")
	ul, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	uc, err := client.DialWith(ctx, "unix", path, DialOptions{Control: func(n, a string, _ syscall.RawConn) error {
		network, address = n, a
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	uc.Submit(func() { uc.Close() })
	if network != "unix" || address != path {
		t.Errorf("Control for a Unix dial got %q, %q", network, address)
	}
}
