//go:build unix

package evloop

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
)

// funcHandler builds a Handler from functions.
type funcHandler struct {
	open  func(c *Conn)
	data  func(c *Conn)
	close func(c *Conn, err error)
	bp    func(c *Conn, paused bool)
}

func (h *funcHandler) OnOpen(c *Conn) {
	if h.open != nil {
		h.open(c)
	}
}

func (h *funcHandler) OnData(c *Conn) {
	if h.data != nil {
		h.data(c)
		return
	}
	c.Discard(c.InboundBuffered())
}

func (h *funcHandler) OnClose(c *Conn, err error) {
	if h.close != nil {
		h.close(c, err)
	}
}

func (h *funcHandler) OnBackPressure(c *Conn, paused bool) {
	if h.bp != nil {
		h.bp(c, paused)
	}
}

func TestHalfClose(t *testing.T) {
	_, addr := serve(t, &echoHandler{}, Options{Loops: 1})
	c := dial(t, addr)
	msg := bytes.Repeat([]byte("half-close "), 100_000)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c) // the echo of everything, then EOF
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("ReadAll = %d bytes, %v; want the %d bytes sent, then EOF", len(got), err, len(msg))
	}
}

func TestCloseDeliversQueuedBytesBeforeFIN(t *testing.T) {
	const size = 8 << 20
	payload := bytes.Repeat([]byte{0xab}, size)
	h := &funcHandler{open: func(c *Conn) {
		c.Write(payload[:size/2])
		c.AsyncWrite(payload[size/2:], nil)
		c.Submit(func() { c.Close() }) // after the AsyncWrite is queued
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("ReadAll = %d bytes, %v; want %d bytes, then EOF", len(got), err, size)
	}
}

func TestWriteAfterClose(t *testing.T) {
	results := make(chan error, 4)
	h := &funcHandler{data: func(c *Conn) {
		c.Discard(c.InboundBuffered())
		c.Write([]byte("bye"))
		if err := c.Close(); err != nil {
			results <- err
		}
		_, err := c.Write([]byte("more"))
		results <- err
		results <- c.Close()
		c.AsyncWrite([]byte("late"), func(err error) { results <- err })
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	c.Write([]byte("x"))
	for i, want := range []error{ErrClosed, ErrClosed, ErrClosed} {
		if err := <-results; !errors.Is(err, want) {
			t.Errorf("result %d = %v; want %v", i, err, want)
		}
	}
	if got, _ := io.ReadAll(c); string(got) != "bye" {
		t.Fatalf("client read %q; want bye, then EOF", got)
	}
}

func TestAsyncWriteContract(t *testing.T) {
	conns := make(chan *Conn, 1)
	_, addr := serve(t, &funcHandler{open: func(c *Conn) { conns <- c }}, Options{Loops: 2})
	client := dial(t, addr)
	c := <-conns
	const writers, each = 8, 500
	var completions [writers * each]atomic.Int32
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				msg := make([]byte, 8)
				binary.BigEndian.PutUint32(msg, uint32(w))
				binary.BigEndian.PutUint32(msg[4:], uint32(i))
				n := w*each + i
				c.AsyncWrite(msg, func(err error) {
					if err != nil {
						t.Errorf("AsyncWrite %d completed with %v", n, err)
					}
					completions[n].Add(1)
				})
			}
		}()
	}
	next := make([]uint32, writers)
	buf := make([]byte, 8)
	for range writers * each {
		if _, err := io.ReadFull(client, buf); err != nil {
			t.Fatal(err)
		}
		w, i := binary.BigEndian.Uint32(buf), binary.BigEndian.Uint32(buf[4:])
		if i != next[w] {
			t.Fatalf("writer %d: message %d arrived when %d was due: order lost", w, i, next[w])
		}
		next[w]++
	}
	wg.Wait()
	// Completions run on the loop once the bytes reached the kernel: by now.
	done := make(chan struct{})
	c.Submit(func() { close(done) })
	<-done
	for n := range completions {
		if got := completions[n].Load(); got != 1 {
			t.Fatalf("AsyncWrite %d completed %d times; want 1", n, got)
		}
	}
	// On a closed connection, each AsyncWrite completes once, with ErrClosed.
	client.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		errc := make(chan error, 1)
		c.AsyncWrite([]byte("x"), func(err error) { errc <- err })
		if err := <-errc; errors.Is(err, ErrClosed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("AsyncWrite kept succeeding after the peer closed")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAbortResets(t *testing.T) {
	h := &funcHandler{data: func(c *Conn) {
		c.Discard(c.InboundBuffered())
		c.Write(bytes.Repeat([]byte("x"), 1<<20))
		c.Abort()
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	c.Write([]byte("go"))
	_, err := io.ReadAll(c)
	if err == nil || !strings.Contains(err.Error(), "reset") {
		t.Fatalf("ReadAll after Abort = %v; want a connection reset", err)
	}
}

// TestPeerResetDuringLargeWrite: the peer resets while the server has a
// large write queued. The connection closes with an error, OnClose runs
// once, and another connection is not disturbed.
func TestPeerResetDuringLargeWrite(t *testing.T) {
	closed := make(chan error, 2)
	h := &funcHandler{
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			if string(b) == "big" {
				c.Write(bytes.Repeat([]byte("y"), 32<<20))
				return
			}
			c.Write(b)
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1})
	victim := dial(t, addr)
	other := dial(t, addr)
	victim.Write([]byte("big"))
	io.ReadFull(victim, make([]byte, 1<<20)) // some of it arrived
	victim.(*net.TCPConn).SetLinger(0)
	victim.Close() // RST
	err := <-closed
	var oe *net.OpError
	if !errors.As(err, &oe) && !errors.Is(err, io.EOF) {
		t.Fatalf("OnClose err = %v; want a *net.OpError (or EOF)", err)
	}
	if got, err := roundTrip(other, []byte("still here")); err != nil || string(got) != "still here" {
		t.Fatalf("other connection: %q, %v", got, err)
	}
}

// TestSlowReaderBoundedMemory: a server pushes 1 GiB to a client that
// stops reading. The queue stays bounded, reading pauses and resumes, and
// every byte arrives once the client reads again.
func TestSlowReaderBoundedMemory(t *testing.T) {
	const chunk = 256 << 10
	const total = 1 << 30
	block := make([]byte, chunk)
	for i := range block {
		block[i] = byte(i * 7)
	}
	var maxQueued, pauses, resumes atomic.Int64
	var sent int
	push := func(c *Conn) {
		for sent < total && c.OutboundBuffered() <= c.ls.s.opts.HighWater {
			if _, err := c.Write(block); err != nil {
				t.Errorf("Write: %v", err)
				return
			}
			sent += chunk
			maxQueued.Store(max(maxQueued.Load(), int64(c.OutboundBuffered())))
		}
		if sent == total {
			c.Close()
		}
	}
	h := &funcHandler{
		open: push,
		bp: func(c *Conn, paused bool) {
			if paused {
				pauses.Add(1)
				return
			}
			resumes.Add(1)
			push(c)
		},
	}
	opts := Options{Loops: 1, HighWater: 4 << 20, LowWater: 1 << 20}
	_, addr := serve(t, h, opts)
	c := dial(t, addr)
	// Not reading: the kernel buffers fill, then the queue, and reading pauses.
	waitFor(t, "the connection to pause", func() bool { return pauses.Load() > 0 })
	want := crc32.NewIEEE()
	for range total / chunk {
		want.Write(block)
	}
	got := crc32.NewIEEE()
	n, err := io.Copy(got, c)
	if err != nil || n != total || got.Sum32() != want.Sum32() {
		t.Fatalf("read %d bytes (crc %08x), %v; want %d bytes (crc %08x)", n, got.Sum32(), err, total, want.Sum32())
	}
	if limit := int64(opts.HighWater + chunk); maxQueued.Load() > limit {
		t.Errorf("queue reached %d bytes; bound is %d", maxQueued.Load(), limit)
	}
	if resumes.Load() == 0 {
		t.Error("the connection never resumed")
	}
}

func TestOutboundLimit(t *testing.T) {
	errc := make(chan error, 1)
	h := &funcHandler{open: func(c *Conn) {
		for {
			if _, err := c.Write(make([]byte, 64<<10)); err != nil {
				errc <- err
				c.Abort()
				return
			}
		}
	}}
	_, addr := serve(t, h, Options{Loops: 1, MaxOutbound: 1 << 20})
	// The server aborts at once: the dial itself may see the reset.
	if c, err := net.Dial("tcp", addr); err == nil {
		defer c.Close()
	}
	if err := <-errc; !errors.Is(err, ErrOutboundFull) {
		t.Fatalf("Write past MaxOutbound = %v; want ErrOutboundFull", err)
	}
}

// WriteLast queues its bytes past MaxOutbound, after everything queued
// before them, and no write follows them; the connection goes on reading
// until it is closed.
func TestWriteLast(t *testing.T) {
	type result struct {
		queued             int // bytes queued before WriteLast
		full, last         error
		after, secondLast  error
		detach             error
		fd                 int
		buffered, maxBound int
	}
	results := make(chan result, 1)
	got := make(chan string, 1)
	closed := make(chan error, 1)
	const bound = 1 << 20
	h := &funcHandler{
		open: func(c *Conn) {
			var r result
			block := bytes.Repeat([]byte("b"), 60<<10)
			for {
				if _, err := c.Write(block); err != nil {
					r.full = err
					break
				}
				r.queued += len(block)
			}
			_, r.last = c.WriteLast([]byte("LAST"))
			_, r.after = c.Write([]byte("x"))
			_, r.secondLast = c.WriteLast([]byte("y"))
			var nc net.Conn
			if nc, _, r.detach = c.Detach(); nc != nil {
				nc.Close()
			}
			r.buffered, r.maxBound, r.fd = c.OutboundBuffered(), bound, c.Fd()
			results <- r
		},
		data: func(c *Conn) {
			b, _ := c.Next(c.InboundBuffered())
			got <- string(b)
		},
		close: func(c *Conn, err error) {
			if c.Fd() != -1 {
				err = fmt.Errorf("Fd %d in OnClose; want -1", c.Fd())
			}
			closed <- err
		},
	}
	_, addr := serve(t, h, Options{Loops: 1, MaxOutbound: bound})
	c := dial(t, addr)
	r := <-results
	if !errors.Is(r.full, ErrOutboundFull) || r.last != nil || !errors.Is(r.after, ErrClosed) || !errors.Is(r.secondLast, ErrClosed) {
		t.Fatalf("Write past the bound = %v, WriteLast = %v, Write after = %v, WriteLast again = %v; want ErrOutboundFull, nil, ErrClosed, ErrClosed",
			r.full, r.last, r.after, r.secondLast)
	}
	if r.fd <= 0 {
		t.Errorf("Fd %d on an open connection", r.fd)
	}
	if !errors.Is(r.detach, ErrClosed) {
		t.Fatalf("Detach after WriteLast = %v; want ErrClosed", r.detach)
	}
	if r.buffered != r.queued+4 || r.buffered <= r.maxBound-60<<10 {
		t.Fatalf("OutboundBuffered = %d after %d bytes and WriteLast's 4", r.buffered, r.queued)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	all := make([]byte, r.queued+4)
	if _, err := io.ReadFull(c, all); err != nil {
		t.Fatal(err)
	}
	if string(all[r.queued:]) != "LAST" || bytes.Count(all[:r.queued], []byte("b")) != r.queued {
		t.Fatalf("read %q at the end; want the blocks, then LAST", all[max(0, r.queued-8):])
	}
	if _, err := c.Write([]byte("still read")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "still read" {
		t.Fatalf("OnData got %q after WriteLast; want %q", s, "still read")
	}
	c.Close()
	if err := <-closed; !errors.Is(err, io.EOF) {
		t.Fatalf("OnClose = %v; want io.EOF", err)
	}
}

func TestInboundLimit(t *testing.T) {
	closed := make(chan error, 1)
	h := &funcHandler{
		data:  func(c *Conn) {}, // never consumes
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1, MaxInbound: 256 << 10})
	c := dial(t, addr)
	go c.Write(make([]byte, 1<<20))
	if err := <-closed; !errors.Is(err, ErrInboundFull) {
		t.Fatalf("OnClose = %v; want ErrInboundFull", err)
	}
}

func TestPeekNextDiscard(t *testing.T) {
	type result struct {
		peek, next []byte
		perr, nerr error
		left       int
	}
	results := make(chan result, 1)
	h := &funcHandler{data: func(c *Conn) {
		if c.InboundBuffered() < 10 {
			return // keep it: the rest comes later
		}
		var r result
		p, err := c.Peek(4)
		r.peek, r.perr = bytes.Clone(p), err
		c.Discard(2)
		n, err := c.Next(3)
		r.next, r.nerr = bytes.Clone(n), err
		if _, err := c.Peek(100); !errors.Is(err, io.ErrShortBuffer) {
			r.perr = errors.New("Peek past the buffer did not say ErrShortBuffer")
		}
		r.left = c.InboundBuffered()
		results <- r
		c.Discard(-1)
		c.Discard(c.InboundBuffered())
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	c.Write([]byte("01234"))
	time.Sleep(10 * time.Millisecond)
	c.Write([]byte("56789"))
	r := <-results
	if string(r.peek) != "0123" || r.perr != nil || string(r.next) != "234" || r.nerr != nil || r.left != 5 {
		t.Fatalf("got %+v; want peek 0123, next 234, 5 left", r)
	}
}

func TestDialAndAdopt(t *testing.T) {
	_, addr := serve(t, &echoHandler{}, Options{Loops: 1})
	replies := make(chan string, 4)
	client, err := NewServer(&funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		replies <- string(b)
	}}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := client.Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	c.AsyncWrite([]byte("dialed"), nil)
	if got := <-replies; got != "dialed" {
		t.Fatalf("reply %q", got)
	}
	if c.Server() != client || c.Loop() != 0 {
		t.Fatalf("a dialed Conn's Server and Loop: %p %d; want the dialing Server's %p, 0", c.Server(), c.Loop(), client)
	}
	// A refused connection is an error.
	refused := testpeer.FreeAddr(t)
	if _, err := client.Dial(context.Background(), "tcp", refused); err == nil {
		t.Error("Dial to a closed port = nil error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := client.Dial(ctx, "tcp", addr); !errors.Is(err, context.Canceled) {
		t.Errorf("Dial with a cancelled context = %v; want context.Canceled", err)
	}
	// Adopt an established net.Conn.
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Adopt(nc); err != nil {
		t.Fatalf("Adopt: %v", err)
	}
	if _, err := nc.Write([]byte("x")); err == nil {
		t.Error("the adopted net.Conn still works; it should be closed")
	}
	if err := client.Adopt(fakeConn{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Adopt of a conn with no fd = %v; want ErrUnsupported", err)
	}
}

type fakeConn struct{ net.Conn }

func TestServeAdoptedListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(&echoHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := srv.Serve(ln); err != nil {
		t.Fatal(err)
	}
	c := dial(t, ln.Addr().String())
	if got, err := roundTrip(c, []byte("served")); err != nil || string(got) != "served" {
		t.Fatalf("echo = %q, %v", got, err)
	}
}

func TestShutdownClosesGracefully(t *testing.T) {
	h := &echoHandler{}
	srv, err := Listen("tcp", "127.0.0.1:0", h, Options{Loops: 2, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addrs()[0].String()
	var clients []net.Conn
	for range 10 {
		c := dial(t, addr)
		roundTrip(c, []byte("hi"))
		clients = append(clients, c)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
			t.Fatalf("client after Shutdown: %q, %v; want EOF", b, err)
		}
	}
	if n, most := h.closeCounts(); n != 10 || most != 1 {
		t.Fatalf("OnClose ran for %d connections, at most %d times each; want 10, 1", n, most)
	}
}

func TestShutdownDeadlineAborts(t *testing.T) {
	h := &echoHandler{}
	srv, err := Listen("tcp", "127.0.0.1:0", h, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.Addrs()[0].String())
	// The client never reads: a large echo stays queued, so a graceful
	// close cannot finish.
	go c.Write(make([]byte, 16<<20))
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v; want DeadlineExceeded", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) != 1 || !errors.Is(h.errs[0], ErrShutdown) {
		t.Fatalf("OnClose errors = %v; want one ErrShutdown", h.errs)
	}
}

func TestConnTimers(t *testing.T) {
	fired := make(chan time.Duration, 1)
	h := &funcHandler{open: func(c *Conn) {
		start := time.Now()
		idle := c.AfterFunc(time.Hour, func() { t.Error("stopped timer fired") })
		if !idle.Stop() {
			t.Error("Stop of a pending timer = false")
		}
		c.AfterFunc(20*time.Millisecond, func() {
			fired <- time.Since(start)
			c.Close()
		})
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	if d := <-fired; d < 20*time.Millisecond {
		t.Fatalf("timer fired after %v; want at least 20ms", d)
	}
	if _, err := io.ReadAll(c); err != nil {
		t.Fatal(err)
	}
}

func TestContextAndAddrs(t *testing.T) {
	type info struct {
		ctx           any
		local, remote net.Addr
	}
	infos := make(chan info, 1)
	h := &funcHandler{
		open: func(c *Conn) { c.SetContext("state") },
		data: func(c *Conn) {
			c.Discard(-1)
			infos <- info{c.Context(), c.LocalAddr(), c.RemoteAddr()}
		},
	}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	c.Write([]byte("x"))
	got := <-infos
	if got.ctx != "state" || got.local.String() != addr || got.remote.String() != c.LocalAddr().String() {
		t.Fatalf("got %+v; want context state, local %s, remote %s", got, addr, c.LocalAddr())
	}
}

// TestRequestWithFINAndLargeReply: the request and the peer's FIN arrive in
// one readiness event, and the reply pauses reading (it passes HighWater).
// The whole reply must still go out before the close.
func TestRequestWithFINAndLargeReply(t *testing.T) {
	reply := bytes.Repeat([]byte("r"), 4<<20)
	h := &funcHandler{data: func(c *Conn) {
		c.Discard(c.InboundBuffered())
		c.Write(reply)
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	c.Write([]byte("GET"))
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || len(got) != len(reply) {
		t.Fatalf("ReadAll = %d bytes, %v; want %d, then EOF", len(got), err, len(reply))
	}
}

// TestPanicInCallbacksDoesNotStallTheLoop: a panic in OnClose or in an
// AsyncWrite completion is contained; other connections keep being
// flushed, and Shutdown still finishes.
func TestPanicInCallbacksDoesNotStallTheLoop(t *testing.T) {
	h := &funcHandler{
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			switch string(b) {
			case "done-panic":
				c.AsyncWrite([]byte("x"), func(error) { panic("boom in done") })
			case "close":
				c.Close()
			default:
				c.Write(b)
			}
		},
		close: func(c *Conn, err error) { panic("boom in OnClose") },
	}
	srv, err := Listen("tcp", "127.0.0.1:0", h, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.Addrs()[0].String()
	a, b := dial(t, addr), dial(t, addr)
	a.Write([]byte("done-panic"))
	io.ReadFull(a, make([]byte, 1))
	a.Write([]byte("close"))
	io.ReadAll(a)
	if got, err := roundTrip(b, []byte("still flushed")); err != nil || string(got) != "still flushed" {
		t.Fatalf("other connection after panics: %q, %v", got, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown after panicking callbacks = %v", err)
	}
}

// TestCloseDuringGracefulShutdown: a graceful Shutdown waits for a peer that
// does not read; Close, meanwhile, aborts what is left, and both return.
func TestCloseDuringGracefulShutdown(t *testing.T) {
	h := &echoHandler{}
	srv, err := Listen("tcp", "127.0.0.1:0", h, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv.Addrs()[0].String())
	go c.Write(make([]byte, 16<<20)) // echoed into a client that never reads
	waitFor(t, "the echo to back up", func() bool { return srv.conns.Load() == 1 })
	time.Sleep(50 * time.Millisecond)
	first := make(chan error, 1)
	go func() { first <- srv.Shutdown(context.Background()) }()
	time.Sleep(50 * time.Millisecond)
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close during a graceful Shutdown did not return")
	}
	if err := <-first; err != nil {
		t.Fatalf("the graceful Shutdown = %v; want nil once Close finished the job", err)
	}
}

// streamByte is byte k of connection i's stream in TestInterleavedWrites.
func streamByte(i, k int) byte { return byte(k*31 + i*7 + k>>9) }

// slowReader reads at most 4 KiB at a time, pausing before each read.
type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(200 * time.Microsecond)
	return s.r.Read(p[:min(len(p), 4<<10)])
}

// TestInterleavedWrites has one loop write, in the same iterations, pieces
// of many connections' streams interleaved, more than the write arena holds,
// while half of the clients read slowly, so that flushes are partial and
// what a socket did not take must be kept. Every stream must arrive intact.
func TestInterleavedWrites(t *testing.T) {
	const nconns, total = 16, 1 << 20
	sizes := []int{1, 700, 3000, 17, 16 << 10, 90}
	var conns [nconns]*Conn
	var sent [nconns]int
	opened := 0
	piece := make([]byte, 16<<10)
	var tick func()
	tick = func() {
		for p, size := range sizes {
			for i, c := range conns {
				n := min(size, total-sent[i])
				if n == 0 || c.OutboundBuffered() > 256<<10 {
					continue
				}
				for k := range n {
					piece[k] = streamByte(i, sent[i]+k)
				}
				var err error
				if p%2 == 0 {
					_, err = c.Write(piece[:n])
				} else {
					_, err = c.Writev([][]byte{piece[:n/2], piece[n/2 : n]})
				}
				if err != nil {
					t.Errorf("conn %d: write: %v", i, err)
					return
				}
				sent[i] += n
				if sent[i] == total {
					c.Close()
				}
			}
		}
		// Tick again on a connection still being written: a closed
		// connection's timers do not fire.
		for i, c := range conns {
			if sent[i] < total {
				c.AfterFunc(time.Millisecond, tick)
				break
			}
		}
	}
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		if c.Context() != nil || len(b) != 1 || int(b[0]) >= nconns {
			return
		}
		c.SetContext(true)
		conns[b[0]] = c // the client's first byte is its index
		if opened++; opened == nconns {
			tick()
		}
	}}
	_, addr := serve(t, h, Options{Loops: 1, SendBuffer: 8 << 10})
	var wg sync.WaitGroup
	for i := range nconns {
		c := dial(t, addr)
		if _, err := c.Write([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r io.Reader = c
			if i%2 == 1 {
				r = slowReader{c}
			}
			got, err := io.ReadAll(r)
			if err != nil || len(got) != total {
				t.Errorf("conn %d: read %d bytes, %v; want %d", i, len(got), err, total)
				return
			}
			for k, b := range got {
				if b != streamByte(i, k) {
					t.Errorf("conn %d: byte %d is %d; want %d", i, k, b, streamByte(i, k))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Readiness is edge-triggered: a read that fills the buffer must be
// followed by another without a new event, until the socket is drained,
// although the peer sends nothing more and waits.
func TestReadsPastTheBufferWithoutAnotherEvent(t *testing.T) {
	got := make(chan int, 1)
	var n int
	const size = 16 * readBufferSize
	h := &funcHandler{data: func(c *Conn) {
		n += c.InboundBuffered()
		c.Discard(c.InboundBuffered())
		if n == size {
			got <- n
		}
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	c := dial(t, addr)
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatalf("the server has not read the %d bytes sent", size)
	}
}

// A peer that sends a little and closes at once: the bytes and the EOF
// come in one readiness event, and one read takes the bytes only. The
// EOF must still be seen.
func TestBytesAndEOFInOneEvent(t *testing.T) {
	for range 20 {
		closed := make(chan error, 1)
		var in []byte
		h := &funcHandler{
			data: func(c *Conn) {
				b, _ := c.Next(-1)
				in = append(in, b...)
			},
			close: func(c *Conn, err error) { closed <- err },
		}
		_, addr := serve(t, h, Options{Loops: 1})
		c := dial(t, addr)
		io.WriteString(c, "last words")
		c.Close()
		select {
		case err := <-closed:
			if !errors.Is(err, io.EOF) || string(in) != "last words" {
				t.Fatalf("OnClose(%v) after %q; want io.EOF after the bytes sent", err, in)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the peer's EOF was not seen")
		}
	}
}
