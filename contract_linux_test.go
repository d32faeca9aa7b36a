//go:build linux

package evloop

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A connection paused with PauseReading after CloseWrite: the peer sends
// bytes, then its FIN, and the hang-up (both directions shut) is reported
// while the connection is paused. The bytes reach OnData before OnClose,
// once reading resumes.
func TestHangupWhilePausedKeepsBytes(t *testing.T) {
	var mu sync.Mutex
	var got []byte
	closed := make(chan error, 1)
	h := &funcHandler{
		open: func(c *Conn) {
			c.CloseWrite()
			c.PauseReading()
			c.AfterFunc(300*time.Millisecond, func() { c.ResumeReading() })
		},
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			mu.Lock()
			got = append(got, b...)
			mu.Unlock()
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(c); err != nil || len(b) != 0 { // the server's FIN
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
	c.Close() // FIN: no unread bytes, so not a reset
	select {
	case err := <-closed:
		mu.Lock()
		defer mu.Unlock()
		if string(got) != "hello" {
			t.Fatalf("OnClose(%v) with OnData having seen %q; want \"hello\" delivered before OnClose", err, got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no OnClose")
	}
}

// Reading paused by back-pressure resumes once the outbound queue falls
// to LowWater, before it is all written.
func TestBackPressureResumesAtLowWater(t *testing.T) {
	const high = 1 << 20
	paused := make(chan bool, 16)
	h := &funcHandler{
		open: func(c *Conn) {
			c.Write(make([]byte, 4<<20)) // far above HighWater
		},
		bp: func(c *Conn, p bool) { paused <- p },
	}
	_, addr := serve(t, h, Options{Loops: 1, HighWater: high, LowWater: high, SendBuffer: 64 << 10})
	c := dial(t, addr)
	c.(*net.TCPConn).SetReadBuffer(64 << 10)
	select {
	case p := <-paused:
		if !p {
			t.Fatal("first OnBackPressure(false)")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("never paused")
	}
	// Read 3.5 MiB of the 4: the queue is then well below LowWater (1 MiB),
	// at most 0.5 MiB, but not empty.
	if _, err := io.ReadFull(c, make([]byte, 4<<20-512<<10)); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-paused:
		if p {
			t.Fatal("paused again")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("queue below LowWater (<= 512 KiB of 1 MiB) for 10 s, reading still paused: OnBackPressure(false) never came")
	}
}

// With ReusePort every loop accepts on its own socket, and the
// connections a loop accepts stay on it.
func TestReusePortKeepsConnections(t *testing.T) {
	srv, addr := serve(t, &echoHandler{}, Options{Loops: 2, LoadBalancing: ReusePort})
	block := make(chan struct{})
	entered := make(chan struct{})
	srv.Submit(1, func() { close(entered); <-block })
	<-entered
	for range 16 {
		dial(t, addr)
	}
	time.Sleep(300 * time.Millisecond)
	ls := srv.loops[1]
	ls.hmu.Lock()
	handed := len(ls.handed)
	ls.hmu.Unlock()
	close(block)
	if handed > 0 {
		t.Fatalf("with ReusePort, %d connections accepted by loop 0's listener were handed off to loop 1", handed)
	}
}

// Timer.Reset moves a pending timer; one that fired or was stopped is
// not armed again, and Reset reports false.
func TestTimerResetPendingOnly(t *testing.T) {
	var fired, stoppedFired atomic.Int32
	resets := make(chan bool, 3)
	h := &funcHandler{open: func(c *Conn) {
		tm := c.AfterFunc(10*time.Millisecond, func() { fired.Add(1) })
		c.AfterFunc(100*time.Millisecond, func() { resets <- tm.Reset(10 * time.Millisecond) })
		moved := c.AfterFunc(time.Hour, func() { fired.Add(1) })
		resets <- moved.Reset(20 * time.Millisecond)
		st := c.AfterFunc(time.Hour, func() { stoppedFired.Add(1) })
		st.Stop()
		resets <- st.Reset(10 * time.Millisecond)
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	dial(t, addr)
	for i, want := range []bool{true, false, false} {
		if got := <-resets; got != want {
			t.Errorf("Reset %d = %v; want %v", i, got, want)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if n := fired.Load(); n != 2 {
		t.Errorf("fired %d times; want 2 (the first timer once, the moved one once)", n)
	}
	if n := stoppedFired.Load(); n != 0 {
		t.Errorf("a stopped timer fired %d times after Reset", n)
	}
}

// A paused connection whose peer sent bytes and closed sees them, then its
// EOF, once reading resumes.
func TestPausedPeerCloseSeenOnResume(t *testing.T) {
	got := make(chan string, 1)
	closed := make(chan error, 1)
	conns := make(chan *Conn, 1)
	var data []byte
	h := &funcHandler{
		open: func(c *Conn) { c.PauseReading(); conns <- c },
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			data = append(data, b...)
		},
		close: func(c *Conn, err error) { got <- string(data); closed <- err },
	}
	srv, addr := serve(t, h, Options{Loops: 1})
	nc := dial(t, addr)
	c := <-conns
	nc.Write([]byte("hello"))
	nc.Close()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-closed:
		t.Fatalf("OnClose(%v) while paused", err)
	default:
	}
	srv.Submit(0, c.ResumeReading)
	select {
	case s := <-got:
		if s != "hello" {
			t.Fatalf("OnData saw %q before OnClose; want %q", s, "hello")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no OnClose after ResumeReading")
	}
}

// BeforeFlush runs before the bytes queued in its iteration are written:
// a connection waiting for writability that turns readable and writable in
// one event queues its reply in OnData, and the reply is still queued when
// BeforeFlush runs (an append-only log's sync there precedes it).
func TestWritableFlushAfterBeforeFlush(t *testing.T) {
	conns := make(chan *Conn, 1)
	var (
		pending *Conn // loop-owned
		rlen    int
	)
	result := make(chan int, 1) // bytes of the reply still queued at BeforeFlush
	h := &funcHandler{
		open: func(c *Conn) { conns <- c },
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			if bytes.IndexByte(b, 'x') >= 0 {
				c.Write(make([]byte, rlen))
				pending = c
			}
		},
	}
	srv, addr := serve(t, h, Options{Loops: 1, SendBuffer: 32 << 10, BeforeFlush: func(int) {
		if pending != nil {
			result <- pending.OutboundBuffered()
			pending = nil
		}
	}})
	nc := dial(t, addr)
	nc.(*net.TCPConn).SetReadBuffer(32 << 10)
	c := <-conns
	onLoop := func(fn func()) {
		done := make(chan struct{})
		srv.Submit(0, func() { fn(); close(done) })
		<-done
	}
	// Measure what the kernel takes (K) with nobody reading.
	const big = 8 << 20
	onLoop(func() { c.Write(make([]byte, big)) })
	time.Sleep(100 * time.Millisecond)
	var k int
	onLoop(func() { k = big - c.OutboundBuffered() })
	if _, err := io.ReadFull(nc, make([]byte, big)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	// Queue 1.5 K: K goes to the kernel, K/2 waits, the connection waits
	// for writability.
	onLoop(func() { rlen = k / 4; c.Write(make([]byte, k+8<<10)) })
	time.Sleep(100 * time.Millisecond)
	var before int
	onLoop(func() { before = c.OutboundBuffered() })
	if before == 0 {
		t.Skip("the kernel took everything; cannot arm writability")
	}
	// Hold the loop while the client drains the kernel (writable) and
	// sends a request (readable): one event with both.
	unblock := make(chan struct{})
	entered := make(chan struct{})
	srv.Submit(0, func() { close(entered); <-unblock })
	<-entered
	total := 0
	buf := make([]byte, 1<<20)
	for {
		nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := nc.Read(buf)
		total += n
		if err != nil {
			break
		}
	}
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	nc.Write([]byte("x"))
	time.Sleep(50 * time.Millisecond)
	close(unblock)
	select {
	case left := <-result:
		t.Logf("K=%d before=%d drained=%d left=%d rlen=%d", k, before, total, left, rlen)
		if left < rlen {
			t.Fatalf("K=%d, queued before=%d, client drained %d; at BeforeFlush only %d of the %d reply bytes queued this iteration were still unwritten: %d left before BeforeFlush ran", k, before, total, left, rlen, rlen-left)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no OnData")
	}
	// Drain the rest so Shutdown completes promptly.
	go io.Copy(io.Discard, nc)
}

// A panic in BeforeFlush is recovered, and the replies queued in that
// iteration still go out.
func TestBeforeFlushPanicFlushes(t *testing.T) {
	var queued, panicked bool // loop-owned
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		c.Write(b)
		queued = true
	}}
	_, addr := serve(t, h, Options{Loops: 1, BeforeFlush: func(int) {
		if queued && !panicked {
			panicked = true
			panic("BeforeFlush")
		}
	}})
	c := dial(t, addr)
	c.Write([]byte("ping"))
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 4)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("echo after one BeforeFlush panic: %v (the reply was queued but never flushed)", err)
	}
}

// A paused connection whose peer resets it closes at once, with the
// reset as a *net.OpError.
func TestPausedResetIsOpError(t *testing.T) {
	closed := make(chan error, 1)
	conns := make(chan *Conn, 1)
	h := &funcHandler{
		open:  func(c *Conn) { c.PauseReading(); conns <- c },
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1})
	nc := dial(t, addr)
	<-conns
	nc.(*net.TCPConn).SetLinger(0)
	nc.Close()
	select {
	case err := <-closed:
		var oe *net.OpError
		if !errors.As(err, &oe) || !errors.Is(err, unix.ECONNRESET) {
			t.Fatalf("OnClose(%v); want a *net.OpError for ECONNRESET", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no OnClose after the peer's reset")
	}
}
