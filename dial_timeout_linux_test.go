//go:build linux

package evloop

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
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

// deadFirstFamily makes host names resolve to 127.0.0.1, whose port
// never answers a connect, and ::1, whose same port listens; it returns
// the port.
func deadFirstFamily(t *testing.T) string {
	t.Helper()
	dualStack(t)
	_, port, _ := net.SplitHostPort(blackhole(t)) // 127.0.0.1, tried first
	listen6(t, port)
	return port
}

// With a deadline, each address of a name gets its share of the time, at
// least 2 seconds, as net.Dialer gives it, so that one whose connect never
// completes leaves time for the next, where the first took it all.
// With DialFallbackDelay -1, so that the families are not raced.
func TestDialDeadlineSharedByAddresses(t *testing.T) {
	port := deadFirstFamily(t)
	client, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger(), DialFallbackDelay: -1})
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

// When a name's first address family does not answer, its other family
// is raced after DialFallbackDelay, as net.Dialer races it (RFC 8305),
// where Dial without a deadline waited on 127.0.0.1 for as long as the
// kernel tries a connect (minutes).
func TestDialHappyEyeballs(t *testing.T) {
	port := deadFirstFamily(t)
	client, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithCancel(context.Background()) // no deadline
	defer cancel()
	type result struct {
		c   *Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := client.Dial(ctx, "tcp", "dualstack.test:"+port)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("Dial = %v; want the ::1 connection", r.err)
		}
		got := make(chan net.Addr, 1)
		r.c.Submit(func() { got <- r.c.RemoteAddr(); r.c.Close() })
		if a := (<-got).(*net.TCPAddr); !a.IP.Equal(net.IPv6loopback) {
			t.Fatalf("connected to %v; want ::1", a)
		}
	case <-time.After(20 * time.Second):
		cancel()
		<-done
		t.Fatal("Dial still waiting on 127.0.0.1 after 20s; want ::1 raced after DialFallbackDelay")
	}

	// A negative delay tries the addresses in turn alone: ::1 waits for
	// 127.0.0.1 to fail, here never, until the dial is given up.
	serial, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger(), DialFallbackDelay: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer serial.Close()
	sctx, scancel := context.WithCancel(context.Background())
	defer time.AfterFunc(time.Second, scancel).Stop()
	if c, err := serial.Dial(sctx, "tcp", "dualstack.test:"+port); !errors.Is(err, context.Canceled) {
		if c != nil {
			c.Submit(func() { c.Close() })
		}
		t.Fatalf("Dial with DialFallbackDelay -1, given up after 1s = %v; want context.Canceled", err)
	}
}

// When both families connect, Dial returns one connection and closes the
// other: of the connections opened, all but one are closed.
func TestDialRaceClosesTheLoser(t *testing.T) {
	dualStack(t)
	ln4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln4.Close()
	_, port, _ := net.SplitHostPort(ln4.Addr().String())
	ln6 := listen6(t, port)
	for _, ln := range []net.Listener{ln4, ln6} {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() { io.Copy(io.Discard, c); c.Close() }()
			}
		}()
	}
	var opened, closed atomic.Int64
	h := &funcHandler{open: func(*Conn) { opened.Add(1) }, close: func(*Conn, error) { closed.Add(1) }}
	client, err := NewServer(h, Options{Loops: 1, Logger: quietLogger(), DialFallbackDelay: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for range 20 {
		c, err := client.Dial(context.Background(), "tcp", "dualstack.test:"+port)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for opened.Load()-closed.Load() != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("%d opened, %d closed; want all but the one returned closed", opened.Load(), closed.Load())
			}
			time.Sleep(time.Millisecond)
		}
		done := make(chan struct{})
		c.Submit(func() { c.Close(); close(done) })
		<-done
		for opened.Load() != closed.Load() {
			time.Sleep(time.Millisecond)
		}
	}
	t.Logf("%d connections opened for 20 dials", opened.Load())
}
