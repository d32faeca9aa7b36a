//go:build unix

package evloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echoCounting is an echo handler that counts the connections open at
// once and the most it saw.
type echoCounting struct {
	funcHandler
	open, most atomic.Int64
}

func newEchoCounting() *echoCounting {
	h := &echoCounting{}
	h.funcHandler = funcHandler{
		open: func(*Conn) {
			n := h.open.Add(1)
			for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
			}
		},
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			c.Write(b)
		},
		close: func(*Conn, error) { h.open.Add(-1) },
	}
	return h
}

// TestMaxConns: at Options.MaxConns, listeners accept no more: a client
// that connects waits in the kernel's backlog, unserved, until a
// connection closes, and is then served; dialed connections count too.
func TestMaxConns(t *testing.T) {
	h := newEchoCounting()
	srv, addr := serve(t, h, Options{Loops: 2, MaxConns: 3})
	var first []net.Conn
	for i := range 2 {
		c := dial(t, addr)
		if got, err := roundTrip(c, []byte("hello")); err != nil || string(got) != "hello" {
			t.Fatalf("client %d: %q, %v", i, got, err)
		}
		first = append(first, c)
	}
	// The third is one the server dials, to a listener of the test's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dialed, err := srv.Dial(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()

	// The fourth connects, as the kernel completes the handshake, but is
	// not served.
	waiting := dial(t, addr)
	waiting.Write([]byte("wait"))
	waiting.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := waiting.Read(make([]byte, 4)); err == nil {
		t.Fatalf("a client past MaxConns was served: read %d bytes", n)
	}
	if n := h.open.Load(); n != 3 {
		t.Fatalf("%d connections open, want 3", n)
	}

	// A dialed connection's close lets it in.
	dialed.Submit(func() { dialed.Close() })
	waiting.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(waiting, buf); err != nil || string(buf) != "wait" {
		t.Fatalf("the waiting client after a close: %q, %v", buf, err)
	}

	// And an accepted one's.
	next := dial(t, addr)
	next.Write([]byte("next"))
	next.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := next.Read(buf); err == nil {
		t.Fatal("a client past MaxConns was served")
	}
	first[0].Close()
	next.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(next, buf); err != nil || string(buf) != "next" {
		t.Fatalf("the next client after a close: %q, %v", buf, err)
	}
	if m := h.most.Load(); m > 3 {
		t.Fatalf("%d connections were open at once, past MaxConns 3", m)
	}
}

// TestMaxConnsBurst: clients connecting at once to several loops'
// listeners are served one bound's worth at a time, never more open
// at once, and all of them in the end.
func TestMaxConnsBurst(t *testing.T) {
	const clients, bound = 40, 5
	h := newEchoCounting()
	_, addr := serve(t, h, Options{Loops: 2, LoadBalancing: ReusePort, MaxConns: bound})
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			msg := []byte(fmt.Sprint("client ", i))
			got, err := roundTrip(c, msg)
			if err != nil || string(got) != string(msg) {
				errs <- fmt.Errorf("client %d: %q, %v", i, got, err)
			}
			time.Sleep(20 * time.Millisecond) // held a while, so that the bound matters
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if m := h.most.Load(); m > bound {
		t.Fatalf("%d connections were open at once, past MaxConns %d", m, bound)
	}
}

// TestMaxConnsShutdown: a server whose listeners wait at MaxConns shuts
// down, its waiting clients closed with the listeners.
func TestMaxConnsShutdown(t *testing.T) {
	h := newEchoCounting()
	srv, err := Listen("tcp", "127.0.0.1:0", h, Options{Loops: 1, MaxConns: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addrs()[0].String()
	c := dial(t, addr)
	if got, err := roundTrip(c, []byte("hi")); err != nil || string(got) != "hi" {
		t.Fatalf("%q, %v", got, err)
	}
	waiting := dial(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	waiting.SetReadDeadline(time.Now().Add(5 * time.Second))
	var ne net.Error
	if _, err := waiting.Read(make([]byte, 1)); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the waiting client after Shutdown: %v, want its connection ended", err)
	}
}
