//go:build linux

package evloop

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// A Dial whose context ends while the connect is in progress fails as
// net.Dialer's does: a *net.OpError naming the address, a timeout that
// errors.Is finds to be context.DeadlineExceeded.
func TestDialDeadlineError(t *testing.T) {
	addr := blackhole(t)
	client, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c, err := client.Dial(ctx, "tcp", addr)
	var oe *net.OpError
	if c != nil || !errors.As(err, &oe) || !errors.Is(err, context.DeadlineExceeded) || !oe.Timeout() {
		t.Fatalf("Dial to a full accept queue = %v, %v; want a *net.OpError, a timeout wrapping context.DeadlineExceeded", c, err)
	}
	if oe.Op != "dial" || oe.Addr == nil || oe.Addr.String() != addr {
		t.Fatalf("Dial's error: Op %q, Addr %v; want dial, %s", oe.Op, oe.Addr, addr)
	}
}

// With a deadline, each address of a name gets its share of the time, at
// least 2 seconds, as net.Dialer gives it, so that one whose connect never
// completes leaves time for the next, where the first took it all.
func TestDialDeadlineSharedByAddresses(t *testing.T) {
	dualStack(t)
	addr := blackhole(t) // 127.0.0.1, tried first
	_, port, _ := net.SplitHostPort(addr)
	listen6(t, port)
	client, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "tcp", "dualstack.test:"+port)
	if err != nil {
		t.Fatalf("Dial of a name whose 127.0.0.1 never answers and ::1 listens, within 5s = %v; want the ::1 connection", err)
	}
	c.Submit(func() { c.Close() })
}
