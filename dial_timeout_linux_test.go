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
