//go:build unix

package evloop

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
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

// A host name's addresses are tried in turn until one connects, as
// net.Dialer tries them, where Dial tried the first IPv4 address alone: a
// server listening on ::1 only was refused by name when the name also
// resolved to 127.0.0.1. When every address fails, the first's error is
// returned.
func TestDialFallsBackToNextAddress(t *testing.T) {
	dualStack(t)
	ln := listen6(t, "0")
	_, port, _ := net.SplitHostPort(ln.Addr().String())
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
