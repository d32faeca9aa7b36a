//go:build unix

package evloop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// Pause and resume within the OnData whose read filled the buffer: two
// epoll_ctl MODs (Read off, Read on); the second re-evaluates readiness.
func TestPauseResumeInOneOnData(t *testing.T) {
	const size = 16 * readBufferSize
	got := make(chan int, 1)
	n := 0
	h := &funcHandler{data: func(c *Conn) {
		n += c.Discard(c.InboundBuffered())
		c.PauseReading()
		c.ResumeReading()
		if n == size {
			got <- n
		}
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	c.Write(make([]byte, size))
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatalf("read %d of %d", n, size)
	}
}

// Bytes and a FIN arrive while reading is paused by back-pressure (and
// by the user, resumed by a timer); both are seen once the queue drains.
func TestBackPressureWithDataAndFINPending(t *testing.T) {
	closed := make(chan error, 1)
	h := &funcHandler{
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			for range 64 {
				c.Write(b) // 64x: far past HighWater
			}
			if len(b) > 0 && b[0] == 'p' {
				c.PauseReading()
				c.AfterFunc(50*time.Millisecond, c.ResumeReading)
			}
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1, HighWater: 4 << 10, LowWater: 1 << 10})
	c := dial(t, addr)
	msg1 := bytes.Repeat([]byte("p"), 1000)
	c.Write(msg1)
	time.Sleep(50 * time.Millisecond)
	msg2 := bytes.Repeat([]byte("q"), 3000)
	c.Write(msg2)
	c.(*net.TCPConn).CloseWrite()
	time.Sleep(200 * time.Millisecond) // FIN and bytes wait in the kernel
	got, err := io.ReadAll(c)
	if err != nil || len(got) != 64*(len(msg1)+len(msg2)) {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, 64*(len(msg1)+len(msg2)))
	}
	select {
	case err := <-closed:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("OnClose(%v)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not closed")
	}
}

// Dial: the peer writes and closes at once, before the loop's Modify to
// Read|Edge; Adopt: bytes and FIN pending before the registration.
func TestDialAndAdoptWithPendingBytesAndFIN(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			nc.Write(bytes.Repeat([]byte("z"), 200<<10))
			nc.Close()
		}
	}()
	type res struct {
		n   int
		err error
	}
	results := make(chan res, 4)
	counts := map[*Conn]int{}
	h := &funcHandler{
		data:  func(c *Conn) { counts[c] += c.Discard(c.InboundBuffered()) },
		close: func(c *Conn, err error) { results <- res{counts[c], err} },
	}
	srv, _ := serve(t, h, Options{Loops: 1})
	for range 2 {
		if _, err := srv.Dial(context.Background(), "tcp", ln.Addr().String()); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if err := srv.Adopt(nc); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		select {
		case r := <-results:
			if r.n != 200<<10 || !errors.Is(r.err, io.EOF) {
				t.Fatalf("OnClose(%v) after %d bytes", r.err, r.n)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a dialed or adopted connection stalled")
		}
	}
}
