//go:build unix

package evloop

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestManyConnsRandomEcho holds 8,192 connections open at once and echoes
// a message of random length, 1 B to 1 MiB, on each, checked by CRC. The
// exchanges run 256 at a time (the race detector caps live goroutines);
// every connection stays open until all are done.
func TestManyConnsRandomEcho(t *testing.T) {
	if testing.Short() {
		t.Skip("8,192 connections")
	}
	const n = 8192
	h := &echoHandler{}
	srv, addr := serve(t, h, Options{Loops: 2})
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	var dialErr atomic.Value
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 64 {
				c, err := net.DialTimeout("tcp", addr, 30*time.Second)
				if err != nil {
					dialErr.Store(err)
					return
				}
				c.SetDeadline(time.Now().Add(2 * time.Minute))
				conns[i] = c
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	if err := dialErr.Load(); err != nil {
		t.Fatalf("dial: %v", err)
	}
	if got := srv.conns.Load(); got != n {
		waitFor(t, "the server to accept every connection", func() bool { return srv.conns.Load() == n })
	}
	work := make(chan int)
	var failures atomic.Int32
	for range 256 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(len(work)), 7))
			for i := range work {
				size := 1 + rng.IntN(4<<10)
				switch r := rng.IntN(100); {
				case r == 0:
					size = 1 + rng.IntN(1<<20)
				case r < 10:
					size = 1 + rng.IntN(64<<10)
				}
				msg := make([]byte, size)
				for j := range msg {
					msg[j] = byte(i + j)
				}
				got, err := roundTrip(conns[i], msg)
				if err != nil || crc32.ChecksumIEEE(got) != crc32.ChecksumIEEE(msg) {
					if failures.Add(1) < 5 {
						t.Errorf("conn %d: echo of %d bytes: %v, crc mismatch %v", i, size, err, err == nil)
					}
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, c := range conns {
		c.Close()
	}
	waitFor(t, "every OnClose", func() bool { k, _ := h.closeCounts(); return k == n })
	if _, most := h.closeCounts(); most != 1 {
		t.Fatalf("a connection's OnClose ran %d times", most)
	}
}

// TestConnectDisconnectNoLeak runs 100,000 connect/close cycles and checks
// that no fd and no goroutine outlives them (goleak checks the latter).
func TestConnectDisconnectNoLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 connections")
	}
	h := &echoHandler{}
	srv, _ := serve(t, h, Options{Loops: 2})
	port := srv.Addrs()[0].(*net.TCPAddr).Port
	before := openFDs(t)
	const cycles, workers = 100_000, 8
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// TIME_WAIT ports are reused on loopback (tcp_tw_reuse defaults
			// to 2), but a second after they were closed (tcp_tw_reuse_delay
			// on recent kernels): at this rate the range can run out for a
			// moment, more so beside other tests that dial. Then the dial
			// waits for ports to come free.
			d := net.Dialer{Timeout: 10 * time.Second}
			for i := range cycles / workers {
				c, err := d.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
				for wait := 0; errors.Is(err, syscall.EADDRNOTAVAIL) && wait < 100; wait++ {
					time.Sleep(20 * time.Millisecond)
					c, err = d.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
				}
				if err != nil {
					if failed.Add(1) < 5 {
						t.Errorf("cycle %d: %v", i, err)
					}
					continue
				}
				if i%10 == 0 { // some exchange a message first
					roundTrip(c, []byte("ping"))
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	waitFor(t, "every connection to close", func() bool { return srv.conns.Load() == 0 })
	if after := openFDs(t); after > before {
		t.Fatalf("open fds: %d before, %d after 100,000 cycles", before, after)
	}
	// A dial can succeed without the server ever accepting: when the
	// listen queue overflows, the kernel keeps the server's side half-open
	// and drops it once the client closes. Every connection opened must
	// close, once; nearly all dials must have been opened.
	h.mu.Lock()
	opens := h.opens
	h.mu.Unlock()
	if k, most := h.closeCounts(); k != opens || most != 1 || opens < (cycles-int(failed.Load()))*99/100 {
		t.Fatalf("OnClose ran for %d connections (at most %d times each) of %d opened from %d dials; want each opened one closed once", k, most, opens, cycles)
	}
}

func TestHandlerPanicIsContained(t *testing.T) {
	var logs syncBuffer
	closed := make(chan error, 4)
	h := &funcHandler{
		open: func(c *Conn) {
			if c.RemoteAddr().(*net.TCPAddr).IP.Equal(net.IPv4(127, 0, 0, 3)) {
				panic("boom in OnOpen")
			}
		},
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			if string(b) == "panic" {
				panic("boom in OnData")
			}
			c.Write(b)
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1, Logger: slogTo(&logs)})
	victim, other := dial(t, addr), dial(t, addr)
	victim.Write([]byte("panic"))
	if err := <-closed; !isPanic(err, "boom in OnData") {
		t.Fatalf("OnClose = %v; want a *PanicError", err)
	}
	if _, err := io.ReadAll(victim); err != nil {
		t.Logf("victim read: %v", err)
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}
	c3, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if err := <-closed; !isPanic(err, "boom in OnOpen") {
		t.Fatalf("OnClose = %v; want a *PanicError from OnOpen", err)
	}
	if got, err := roundTrip(other, []byte("fine")); err != nil || string(got) != "fine" {
		t.Fatalf("other connection: %q, %v", got, err)
	}
	for _, want := range []string{"boom in OnData", "boom in OnOpen"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestPanicSendsWhatWasQueued: a connection whose handler panics closes
// as Close closes it: what was queued before the panic, in the same call
// too, reaches the peer, then EOF; what arrived after is not handled.
func TestPanicSendsWhatWasQueued(t *testing.T) {
	closed := make(chan error, 1)
	h := &funcHandler{
		data: func(c *Conn) {
			for {
				in, _ := c.Peek(0)
				i := bytes.IndexByte(in, '\n')
				if i < 0 {
					return
				}
				line := in[:i+1]
				if string(line) == "panic\n" {
					panic("boom")
				}
				c.Write(line)
				c.Discard(len(line))
			}
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1, Logger: slogTo(io.Discard)})
	victim := dial(t, addr)
	victim.Write([]byte("a\nb\npanic\nc\n"))
	victim.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(victim)
	if err != nil || string(got) != "a\nb\n" {
		t.Fatalf("read %q, %v; want the lines before the panic, then EOF", got, err)
	}
	victim.Close()
	if err := <-closed; !isPanic(err, "boom") {
		t.Fatalf("OnClose = %v; want a *PanicError", err)
	}
}

// TestPanicAfterCloseWrite: a handler that shut down its writing side,
// then panicked, still has its connection closed once the peer is done or
// the linger ends, not left closing.
func TestPanicAfterCloseWrite(t *testing.T) {
	closed := make(chan error, 1)
	h := &funcHandler{
		data: func(c *Conn) {
			c.Discard(-1)
			c.CloseWrite()
			panic("boom after CloseWrite")
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1, Logger: slogTo(io.Discard)})
	victim := dial(t, addr) // never closes: the linger must end it
	victim.Write([]byte("x"))
	select {
	case err := <-closed:
		if !isPanic(err, "boom after CloseWrite") {
			t.Fatalf("OnClose = %v; want a *PanicError", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the connection was not closed 5 s after its handler panicked")
	}
}

// TestCompletionPanic: an AsyncWrite completion that panics closes its
// connection after the rest of the queue, each byte sent once.
func TestCompletionPanic(t *testing.T) {
	closed := make(chan error, 1)
	h := &funcHandler{
		data: func(c *Conn) {
			c.Discard(-1)
			// Made on the loop, both are queued by tasks of this
			// iteration, before its flush writes them together.
			c.AsyncWrite([]byte("b"), func(error) { panic("boom in done") })
			c.AsyncWrite([]byte("c"), nil)
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1, Logger: slogTo(io.Discard)})
	victim := dial(t, addr)
	victim.Write([]byte("go"))
	victim.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(victim)
	if err != nil || string(got) != "bc" {
		t.Fatalf("read %q, %v; want \"bc\", then EOF", got, err)
	}
	victim.Close()
	if err := <-closed; !isPanic(err, "boom in done") {
		t.Fatalf("OnClose = %v; want a *PanicError", err)
	}
}

func isPanic(err error, v string) bool {
	pe, ok := err.(*PanicError)
	return ok && pe.Value == v
}

// TestBlockingHandler shows what a handler that blocks costs: the other
// connections of its loop wait for it; those of other loops do not.
func TestBlockingHandler(t *testing.T) {
	release := make(chan struct{})
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		if string(b) == "block" {
			<-release
		}
		c.Write([]byte(fmt.Sprintf("%p", c.ls)))
	}}
	_, addr := serve(t, h, Options{Loops: 2})
	// Round-robin: consecutive connections land on alternating loops.
	a, b, sameAsA := dial(t, addr), dial(t, addr), dial(t, addr)
	loopOf := func(c net.Conn) string {
		got := make([]byte, 64)
		n, err := c.Read(got)
		if err != nil {
			t.Fatal(err)
		}
		return string(got[:n])
	}
	a.Write([]byte("x"))
	b.Write([]byte("x"))
	sameAsA.Write([]byte("x"))
	la, lb, l3 := loopOf(a), loopOf(b), loopOf(sameAsA)
	if la == lb || la != l3 {
		t.Skipf("connections not spread as expected: %s %s %s", la, lb, l3)
	}
	a.Write([]byte("block"))
	time.Sleep(20 * time.Millisecond) // a's loop is now blocked in the handler
	b.Write([]byte("x"))
	if got := loopOf(b); got != lb {
		t.Fatalf("b answered from %s", got)
	}
	// sameAsA shares the blocked loop: no answer until the handler returns.
	sameAsA.Write([]byte("x"))
	sameAsA.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := sameAsA.Read(make([]byte, 64)); err == nil {
		t.Fatal("a connection on the blocked loop was served while its handler blocked")
	}
	sameAsA.SetReadDeadline(time.Now().Add(10 * time.Second))
	close(release)
	loopOf(a)
	loopOf(sameAsA)
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// TestPanicOutsideIOClosesTheConnection: a panic in a timer function or in
// an OnData called by Wake closes that connection, as one in a read would.
func TestPanicOutsideIOClosesTheConnection(t *testing.T) {
	closed := make(chan error, 2)
	conns := make(chan *Conn, 2)
	h := &funcHandler{
		open: func(c *Conn) { conns <- c },
		data: func(c *Conn) {
			if c.InboundBuffered() == 0 {
				panic("boom in woken OnData")
			}
			c.Discard(-1)
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1})
	dial(t, addr)
	dial(t, addr)
	a, b := <-conns, <-conns
	a.Submit(func() { a.AfterFunc(time.Millisecond, func() { panic("boom in timer") }) })
	b.Wake()
	got := map[string]bool{}
	for range 2 {
		err := <-closed
		pe, ok := err.(*PanicError)
		if !ok {
			t.Fatalf("OnClose = %v; want a *PanicError", err)
		}
		got[fmt.Sprint(pe.Value)] = true
	}
	if !got["boom in timer"] || !got["boom in woken OnData"] {
		t.Fatalf("panics seen: %v", got)
	}
}
