//go:build unix

package evloop

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// dualStack makes host names resolve to 127.0.0.1 and ::1, as localhost
// does on many systems, until the test ends.
func dualStack(t *testing.T) {
	t.Helper()
	saved := lookupIP
	lookupIP = func(ctx context.Context, network, host string) ([]net.IP, error) {
		return []net.IP{net.IPv6loopback, net.IPv4(127, 0, 0, 1)}, nil
	}
	t.Cleanup(func() { lookupIP = saved })
}

// listen6 listens on ::1, on port if not 0; it skips the test where the
// system has no IPv6 loopback.
func listen6(t *testing.T, port string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp6", net.JoinHostPort("::1", port))
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// listen6Only listens on ::1 on a port it also holds on 127.0.0.1, bound
// there and not listening, until the test ends: a connect to 127.0.0.1 on
// that port is refused, where the listener of another test or program
// could have had the port there and accepted it. A port already taken on
// 127.0.0.1 is passed over.
func listen6Only(t *testing.T) (net.Listener, string) {
	t.Helper()
	for range 10 {
		ln := listen6(t, "0")
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		p, _ := strconv.Atoi(port)
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Bind(fd, &unix.SockaddrInet4{Port: p, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			unix.Close(fd)
			ln.Close()
			continue
		}
		t.Cleanup(func() { unix.Close(fd) })
		return ln, port
	}
	t.Fatal("no port free on both ::1 and 127.0.0.1")
	return nil, ""
}

// A host name's addresses are tried in turn until one connects, as
// net.Dialer tries them, where Dial tried the first IPv4 address alone: a
// server listening on ::1 only was refused by name when the name also
// resolved to 127.0.0.1. When every address fails, the first's error is
// returned.
func TestDialFallsBackToNextAddress(t *testing.T) {
	dualStack(t)
	ln, port := listen6Only(t)
	client, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "tcp", "dualstack.test:"+port)
	if err != nil {
		t.Fatalf("Dial of a name whose 127.0.0.1 refuses and ::1 listens = %v; want the ::1 connection", err)
	}
	got := make(chan net.Addr, 1)
	c.Submit(func() { got <- c.RemoteAddr(); c.Close() })
	if a := (<-got).(*net.TCPAddr); !a.IP.Equal(net.IPv6loopback) {
		t.Fatalf("connected to %v; want ::1", a)
	}

	ln.Close()
	_, err = client.Dial(ctx, "tcp", "dualstack.test:"+port)
	var oe *net.OpError
	if !errors.As(err, &oe) || !errors.Is(err, syscall.ECONNREFUSED) || oe.Addr.String() != "127.0.0.1:"+port {
		t.Fatalf("Dial with every address refusing = %v; want the first's, 127.0.0.1:%s refused", err, port)
	}
}
