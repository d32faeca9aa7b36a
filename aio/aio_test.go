//go:build unix

package aio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/sock"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv("AIO_TEST_CLIENTS") != "" {
		os.Exit(clientsMain())
	}
	goleak.VerifyTestMain(m)
}

// newWatcher starts a Watcher with swap buffers of bufsize, or of the
// default size if bufsize is 0.
func newWatcher(t testing.TB, bufsize int) *Watcher {
	t.Helper()
	if bufsize == 0 {
		bufsize = defaultBufferSize
	}
	w, err := NewWatcherSize(bufsize)
	if err != nil {
		t.Fatalf("NewWatcherSize: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// echoServer serves ln with w, the way gaio's README does: read, write back
// what was read, read again. Reads use buffers of bufsize, or the swap
// buffer if bufsize is 0. It returns when w is closed.
func echoServer(t testing.TB, w *Watcher, ln net.Listener, bufsize int) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(2)
	t.Cleanup(func() {
		ln.Close()
		w.Close()
		wg.Wait()
	})
	read := func(c net.Conn) error {
		var buf []byte
		if bufsize > 0 {
			buf = make([]byte, bufsize)
		}
		return w.Read(nil, c, buf)
	}
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if err := read(c); err != nil {
				c.Close()
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			results, err := w.WaitIO()
			if err != nil {
				return
			}
			for _, res := range results {
				switch {
				case res.Error != nil:
					w.Free(res.Conn)
				case res.Operation == OpRead:
					// A swap buffer is valid until the next WaitIO, and
					// Write holds on to its buffer: copy.
					w.Write(nil, res.Conn, bytes.Clone(res.Buffer[:res.Size]))
				case res.Operation == OpWrite:
					read(res.Conn)
				}
			}
		}
	}()
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// echo sends msg on c and checks that it comes back whole.
func echo(c net.Conn, msg []byte) error {
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(msg)
		errc <- err
	}()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if err := <-errc; err != nil {
		return err
	}
	if !bytes.Equal(got, msg) {
		return errors.New("echo differs from what was sent")
	}
	return nil
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return b
}

func TestEchoTinyAndHuge(t *testing.T) {
	for _, bufsize := range []int{0, 1, 4096} {
		t.Run(fmt.Sprintf("buffer=%d", bufsize), func(t *testing.T) {
			w := newWatcher(t, 64<<10)
			ln := listen(t)
			echoServer(t, w, ln, bufsize)
			c := dial(t, ln.Addr().String())
			sizes := []int{1, 2, 100, 64 << 10, 5 << 20}
			if bufsize == 1 {
				sizes = []int{1, 2, 100, 10 << 10} // a byte per operation: keep it short
			}
			for _, n := range sizes {
				if err := echo(c, randomBytes(n)); err != nil {
					t.Fatalf("%d bytes: %v", n, err)
				}
			}
		})
	}
}

// TestSwapBuffer echoes messages of random sizes and of exactly the swap
// buffer's size, read into the swap buffers.
func TestSwapBuffer(t *testing.T) {
	const bufsize = 4096
	w := newWatcher(t, bufsize)
	ln := listen(t)
	echoServer(t, w, ln, 0)
	var wg sync.WaitGroup
	for i := range 64 {
		c := dial(t, ln.Addr().String())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				n := bufsize
				if i%2 == 0 {
					n = 1 + rand.IntN(3*bufsize)
				}
				if err := echo(c, randomBytes(n)); err != nil {
					t.Errorf("conn %d, %d bytes: %v", i, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestSwapBufferValidUntilNextWaitIO reads into the swap buffer on many
// connections and keeps every batch's bytes until the next WaitIO: none may
// change before then.
func TestSwapBufferValidUntilNextWaitIO(t *testing.T) {
	w := newWatcher(t, 1024)
	ln := listen(t)
	defer ln.Close()
	const nconns, msgs = 32, 50
	var clients []net.Conn
	for range nconns {
		c := dial(t, ln.Addr().String())
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		w.Read(nil, s, nil)
	}
	go func() {
		for i := range msgs {
			for k, c := range clients {
				c.Write(bytes.Repeat([]byte{byte(k + i)}, 300))
			}
		}
	}()
	got := 0
	for got < nconns*msgs*300 {
		results, err := w.WaitIO()
		if err != nil {
			t.Fatal(err)
		}
		copies := make([][]byte, len(results))
		for i, res := range results {
			if res.Error != nil {
				t.Fatalf("read: %v", res.Error)
			}
			if !res.IsSwapBuffer || len(res.Buffer) != res.Size {
				t.Fatalf("result %+v: want the swap buffer, Size bytes", res)
			}
			copies[i] = bytes.Clone(res.Buffer)
			got += res.Size
			w.Read(nil, res.Conn, nil)
		}
		time.Sleep(time.Millisecond) // let the loop read more meanwhile
		for i, res := range results {
			if !bytes.Equal(res.Buffer, copies[i]) {
				t.Fatal("a swap buffer changed before the next WaitIO")
			}
		}
	}
}

func TestReadFull(t *testing.T) {
	w, c, s := connected(t)
	if err := w.ReadFull(nil, s, nil, time.Time{}); err != ErrEmptyBuffer {
		t.Fatalf("ReadFull(nil) = %v; want ErrEmptyBuffer", err)
	}
	buf := make([]byte, 100_000)
	if err := w.ReadFull("ctx", s, buf, time.Time{}); err != nil {
		t.Fatal(err)
	}
	msg := randomBytes(len(buf))
	go func() {
		for i := 0; i < len(msg); i += 777 {
			c.Write(msg[i:min(i+777, len(msg))])
		}
	}()
	res := waitOne(t, w)
	if res.Error != nil || res.Size != len(buf) || !bytes.Equal(res.Buffer, msg) || res.Context != "ctx" {
		t.Fatalf("ReadFull: size %d, err %v, ctx %v; want the whole buffer", res.Size, res.Error, res.Context)
	}
	// Partial, then the peer closes: the error, with what arrived.
	w.ReadFull(nil, s, buf, time.Time{})
	c.Write([]byte("abc"))
	c.Close()
	res = waitOne(t, w)
	if res.Error != io.EOF || res.Size != 3 {
		t.Fatalf("ReadFull cut short: size %d, err %v; want 3, io.EOF", res.Size, res.Error)
	}
}

// connected returns a Watcher and both ends of a TCP connection: c the
// client's, s the server's, not yet submitted.
func connected(t *testing.T) (w *Watcher, c, s net.Conn) {
	t.Helper()
	w = newWatcher(t, 0)
	ln := listen(t)
	defer ln.Close()
	c = dial(t, ln.Addr().String())
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return w, c, s
}

func waitOne(t testing.TB, w *Watcher) OpResult {
	t.Helper()
	results, err := w.WaitIO()
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 {
		t.Fatalf("WaitIO returned %d results; want 1", len(results))
	}
	return results[0]
}

// waitN collects n results.
func waitN(t testing.TB, w *Watcher, n int) []OpResult {
	t.Helper()
	var all []OpResult
	for len(all) < n {
		results, err := w.WaitIO()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, results...)
	}
	return all
}

func TestDeadlines(t *testing.T) {
	w, c, s := connected(t)
	start := time.Now()
	w.ReadTimeout(1, s, make([]byte, 10), start.Add(50*time.Millisecond))
	res := waitOne(t, w)
	if res.Error != ErrDeadline || res.Context != 1 {
		t.Fatalf("ReadTimeout: %v; want ErrDeadline", res.Error)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("deadline completed after %v; want 50ms or more", d)
	}
	// Data in time: no ErrDeadline, and its timer does not fire later.
	w.ReadTimeout(2, s, make([]byte, 10), time.Now().Add(100*time.Millisecond))
	c.Write([]byte("hi"))
	if res := waitOne(t, w); res.Error != nil || res.Size != 2 {
		t.Fatalf("ReadTimeout with data: %d bytes, %v", res.Size, res.Error)
	}
	// A deadline too far for the loop's clock saturates instead of wrapping
	// into the past.
	w.ReadTimeout("far", s, make([]byte, 10), time.Unix(1<<62, 0))
	time.Sleep(20 * time.Millisecond)
	c.Write([]byte("far"))
	if res := waitOne(t, w); res.Error != nil || res.Size != 3 {
		t.Fatalf("ReadTimeout far ahead: %d bytes, %v", res.Size, res.Error)
	}
	// A ReadFull cut by its deadline reports what it had.
	w.ReadFull(3, s, make([]byte, 10), time.Now().Add(50*time.Millisecond))
	c.Write([]byte("abcd"))
	if res := waitOne(t, w); res.Error != ErrDeadline || res.Size != 4 {
		t.Fatalf("ReadFull past its deadline: %d bytes, %v; want 4, ErrDeadline", res.Size, res.Error)
	}
	// A deadline already past still tries first: the data is there.
	c.Write([]byte("x"))
	time.Sleep(20 * time.Millisecond)
	w.ReadTimeout(4, s, make([]byte, 10), time.Now().Add(-time.Second))
	if res := waitOne(t, w); res.Error != nil || res.Size != 1 {
		t.Fatalf("ReadTimeout past, data waiting: %d bytes, %v", res.Size, res.Error)
	}
	// WriteTimeout against a peer that does not read.
	big := make([]byte, 64<<20)
	w.WriteTimeout(5, s, big, time.Now().Add(100*time.Millisecond))
	if res := waitOne(t, w); res.Error != ErrDeadline || res.Size == 0 || res.Size == len(big) {
		t.Fatalf("WriteTimeout: %d bytes, %v; want some, ErrDeadline", res.Size, res.Error)
	}
	// A later deadline on an earlier read, an earlier one on a later read.
	w.ReadTimeout("late", s, make([]byte, 1), time.Now().Add(200*time.Millisecond))
	w.ReadTimeout("early", s, make([]byte, 1), time.Now().Add(50*time.Millisecond))
	got := waitN(t, w, 2)
	if got[0].Context != "early" || got[1].Context != "late" || got[0].Error != ErrDeadline || got[1].Error != ErrDeadline {
		t.Fatalf("deadlines completed as %v, %v", got[0], got[1])
	}
}

// TestDeadlinesLongPast: a deadline however far in the past completes its
// operation with ErrDeadline, as gaio's does, and the deadlines after it
// still fire. One centuries ago (time.Until saturates) wrapped around into
// the far future on the loop's clock and held back every later deadline.
func TestDeadlinesLongPast(t *testing.T) {
	cases := []struct {
		name     string
		deadline time.Time
	}{
		{"a second ago", time.Now().Add(-time.Second)},
		{"1969", time.Unix(-1, 0)},
		{"year 1", time.Time{}.Add(time.Second)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, _, s := connected(t)
			w.ReadTimeout("past", s, make([]byte, 1), tc.deadline)
			w.ReadTimeout("soon", s, make([]byte, 1), time.Now().Add(20*time.Millisecond))
			got := waitResults(t, w, 2, 5*time.Second)
			if len(got) != 2 {
				t.Fatalf("ReadTimeout past and soon: %d results; want 2", len(got))
			}
			for _, res := range got {
				if res.Error != ErrDeadline {
					t.Errorf("ReadTimeout %v: %v; want ErrDeadline", res.Context, res.Error)
				}
			}
		})
	}
}

// TestSameDeadlineInOrder: operations on one conn that share a deadline
// complete in the order they were submitted, as the package says, where
// the nanoseconds between two readings of the clock ordered them at random
// (and each expiry took one out of the middle of its queue).
func TestSameDeadlineInOrder(t *testing.T) {
	w, _, s := connected(t)
	const n = 1000
	deadline := time.Now().Add(50 * time.Millisecond)
	msg := make([]byte, 1<<20) // the peer does not read: the writes stall
	for i := range n {
		w.WriteTimeout(i, s, msg, deadline)
	}
	for i, res := range waitN(t, w, n) {
		if res.Context != i {
			t.Fatalf("result %d is of write %v; want write %d", i, res.Context, i)
		}
	}
}

func TestOrderPerDirection(t *testing.T) {
	w, c, s := connected(t)
	var want bytes.Buffer
	for i := range 200 {
		b := bytes.Repeat([]byte{byte(i)}, 1+i*300)
		want.Write(b)
		w.Write(i, s, b)
	}
	go func() {
		for i := range 100 {
			w.Read(1000+i, s, make([]byte, 10))
		}
		c.Write(bytes.Repeat([]byte("r"), 1000))
	}()
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("writes arrived out of order or short: %v", err)
	}
	nextW, nextR := 0, 1000
	for _, res := range waitN(t, w, 300) {
		if res.Error != nil {
			t.Fatalf("%v: %v", res.Context, res.Error)
		}
		switch res.Operation {
		case OpWrite:
			if res.Context != nextW {
				t.Fatalf("write %v completed; want %d", res.Context, nextW)
			}
			nextW++
		case OpRead:
			if res.Context != nextR || res.Size != 10 {
				t.Fatalf("read %v (%d bytes) completed; want %d", res.Context, res.Size, nextR)
			}
			nextR++
		}
	}
}

func TestBadInput(t *testing.T) {
	w := newWatcher(t, 0)
	ln := listen(t)
	defer ln.Close()
	c := dial(t, ln.Addr().String())
	if err := w.Read(nil, nil, nil); err != ErrUnsupported {
		t.Errorf("Read(nil conn) = %v; want ErrUnsupported", err)
	}
	var nilTCP *net.TCPConn
	if err := w.Read(nil, nilTCP, nil); err != ErrUnsupported {
		t.Errorf("Read(nil *TCPConn) = %v; want ErrUnsupported", err)
	}
	if err := w.Write(nil, c, nil); err != ErrEmptyBuffer {
		t.Errorf("Write(nil) = %v; want ErrEmptyBuffer", err)
	}
	if err := w.WriteTimeout(nil, c, []byte{}, time.Now()); err != ErrEmptyBuffer {
		t.Errorf("WriteTimeout(empty) = %v; want ErrEmptyBuffer", err)
	}
	for _, cpu := range []int{-1, runtime.NumCPU()} {
		if err := w.SetLoopAffinity(cpu); err != ErrCPUID {
			t.Errorf("SetLoopAffinity(%d) = %v; want ErrCPUID", cpu, err)
		}
		if err := w.SetPollerAffinity(cpu); err != ErrCPUID {
			t.Errorf("SetPollerAffinity(%d) = %v; want ErrCPUID", cpu, err)
		}
	}
	if err := w.SetLoopAffinity(0); err != nil {
		t.Errorf("SetLoopAffinity(0) = %v", err)
	}

	// Conns that are not stream sockets complete with ErrUnsupported.
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	w.Write("pipe", p1, []byte("x"))
	w.Read("pipe", p2, nil)
	w.Read("udp", udp, nil)
	for _, res := range waitN(t, w, 3) {
		if res.Error != ErrUnsupported {
			t.Errorf("%v: %v; want ErrUnsupported", res.Context, res.Error)
		}
	}
	// The UDP socket was not taken over: it still works.
	if _, err := udp.WriteTo([]byte("x"), udp.LocalAddr()); err != nil {
		t.Errorf("UDP conn after a refused Read: %v", err)
	}
	// A closed conn.
	c.Close()
	w.Write("closed", c, []byte("x"))
	if res := waitOne(t, w); res.Error == nil {
		t.Error("Write on a closed conn succeeded")
	}
}

// TestDelegation: once submitted, the conn's own Read and Write fail, but
// options set before stay (here SO_LINGER 0: Free resets the connection).
func TestDelegationAndFree(t *testing.T) {
	w, c, s := connected(t)
	s.(*net.TCPConn).SetLinger(0)
	w.Read("pending", s, nil)
	w.Read("queued", s, make([]byte, 4))
	time.Sleep(20 * time.Millisecond)
	if _, err := s.Write([]byte("x")); err == nil {
		t.Error("the delegated conn's own Write succeeded")
	}
	w.Free(s)
	for _, res := range waitN(t, w, 2) {
		if res.Error != io.ErrClosedPipe {
			t.Errorf("%v after Free: %v; want io.ErrClosedPipe", res.Context, res.Error)
		}
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("peer read after Free with linger 0: %v; want a reset", err)
	}
	w.Write("after free", s, []byte("x"))
	if res := waitOne(t, w); res.Error == nil {
		t.Error("Write after Free succeeded")
	}
	// Free of a conn never submitted closes it.
	_, c2, _ := connected(t)
	w.Free(c2)
	time.Sleep(20 * time.Millisecond)
	if _, err := c2.Write([]byte("x")); err == nil {
		t.Error("a conn freed without being submitted still writes")
	}
}

func TestCloseTwiceAndAfter(t *testing.T) {
	w, err := NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	defer ln.Close()
	c := dial(t, ln.Addr().String())
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	w.Read(nil, s, nil)
	done := make(chan error)
	go func() {
		_, err := w.WaitIO()
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := <-done; err != ErrWatcherClosed {
		t.Fatalf("WaitIO blocked across Close returned %v; want ErrWatcherClosed", err)
	}
	if _, err := w.WaitIO(); err != ErrWatcherClosed {
		t.Fatalf("WaitIO after Close = %v", err)
	}
	if err := w.Read(nil, c, nil); err != ErrWatcherClosed {
		t.Fatalf("Read after Close = %v", err)
	}
	if err := w.SetLoopAffinity(0); err != ErrConnClosed {
		t.Fatalf("SetLoopAffinity after Close = %v", err)
	}
	if err := w.SetPollerAffinity(0); err != ErrPollerClosed {
		t.Fatalf("SetPollerAffinity after Close = %v; want ErrPollerClosed", err)
	}
	// Close closed the delegated conn.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("peer of a conn of a closed Watcher read %v; want io.EOF", err)
	}
}

// TestForgottenConnsAreCollected delegates a thousand conns, forgets them,
// and waits for the garbage collector to have them closed.
func TestForgottenConnsAreCollected(t *testing.T) {
	const n = 1000
	w := newWatcher(t, 0)
	ln := listen(t)
	defer ln.Close()
	var peers []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			peers = append(peers, c) // read after the accept loop ends
		}
	}()
	for range n {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		w.Write(nil, c, []byte("x"))
	}
	results := waitN(t, w, n)
	for i := range results {
		if results[i].Error != nil {
			t.Fatal(results[i].Error)
		}
		results[i] = OpResult{}
	}
	results = nil
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		found, closed := w.GetGC()
		if found == n && closed == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GetGC = %d found, %d closed; want %d, %d", found, closed, n, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ln.Close()
	time.Sleep(10 * time.Millisecond)
	for _, p := range peers {
		p.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 2)
		if k, err := io.ReadAtLeast(p, buf, 2); err != io.ErrUnexpectedEOF || k != 1 {
			t.Fatalf("peer of a collected conn: %d bytes, %v; want 1 byte then EOF", k, err)
		}
		p.Close()
	}
}

func TestWatcherCollected(t *testing.T) {
	w, err := NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	inner := w.watcher
	w = nil
	deadline := time.Now().Add(10 * time.Second)
	for !inner.closed.Load() {
		if time.Now().After(deadline) {
			t.Fatal("a forgotten Watcher was not closed")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	inner.Close() // waits for the loop to have stopped
}

func TestParallel(t *testing.T) {
	counts := []int{1000, 2000, 4000, 8000, 12000}
	if testing.Short() {
		counts = []int{1000}
	}
	src := 10
	for _, n := range counts {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			w := newWatcher(t, 0)
			ln := listen(t)
			echoServer(t, w, ln, 0)
			src++
			runClients(t, ln.Addr().String(), src, n, "echo")
		})
	}
}

// TestDeadlines8k: 8,000 conns whose reads time out together.
func TestDeadlines8k(t *testing.T) {
	const n = 8000
	if testing.Short() {
		t.Skip("8,000 connections")
	}
	w := newWatcher(t, 0)
	ln := listen(t)
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(2 * time.Second)
		for range n {
			c, err := ln.Accept()
			if err != nil {
				served <- err
				return
			}
			w.ReadTimeout(nil, c, nil, deadline)
		}
		got := 0
		for got < n {
			results, err := w.WaitIO()
			if err != nil {
				served <- err
				return
			}
			for _, res := range results {
				if res.Error != ErrDeadline {
					served <- fmt.Errorf("read ended with %v; want ErrDeadline", res.Error)
					return
				}
				w.Free(res.Conn)
			}
			got += len(results)
		}
		served <- nil
	}()
	runClients(t, ln.Addr().String(), 30, n, "idle")
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// runClients runs n clients in a child process (this process could not
// hold both ends of 12,000 connections), bound to 127.0.0.src.
func runClients(t *testing.T, addr string, src, n int, mode string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AIO_TEST_CLIENTS="+mode, "AIO_ADDR="+addr,
		"AIO_SRC=127.0.0."+strconv.Itoa(src), "AIO_N="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clients: %v\n%s", err, out)
	}
}

// clientsMain is the child process of runClients. In echo mode each client
// echoes a few random messages of up to 4 KiB and closes; in idle mode it
// waits for the server to close the connection.
func clientsMain() int {
	mode, addr := os.Getenv("AIO_TEST_CLIENTS"), os.Getenv("AIO_ADDR")
	n, _ := strconv.Atoi(os.Getenv("AIO_N"))
	d := net.Dialer{Timeout: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(os.Getenv("AIO_SRC"))}, Control: bindNoPort}
	var wg sync.WaitGroup
	errc := make(chan error, n)
	sem := make(chan struct{}, 512) // connects in flight
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			c, err := d.Dial("tcp", addr)
			<-sem
			if err != nil {
				errc <- err
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(60 * time.Second))
			switch mode {
			case "echo":
				for range 3 {
					if err := echo(c, randomBytes(1+rand.IntN(4096))); err != nil {
						errc <- err
						return
					}
				}
			case "idle":
				if _, err := c.Read(make([]byte, 1)); err != io.EOF {
					errc <- fmt.Errorf("idle client read %v; want io.EOF", err)
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	failed := 0
	for err := range errc {
		if failed++; failed <= 5 {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "%d of %d clients failed\n", failed, n)
		return 1
	}
	return 0
}

// waitResults collects results until n arrived or d passed.
func waitResults(t *testing.T, w *Watcher, n int, d time.Duration) []OpResult {
	t.Helper()
	ch := make(chan []OpResult, 16)
	go func() {
		for {
			r, err := w.WaitIO()
			if err != nil {
				close(ch)
				return
			}
			ch <- r
		}
	}()
	var all []OpResult
	timeout := time.After(d)
	for len(all) < n {
		select {
		case r, ok := <-ch:
			if !ok {
				return all
			}
			all = append(all, r...)
		case <-timeout:
			return all
		}
	}
	return all
}

// A read that meets a reset connection completes once, with the error and
// the bytes read before it as Size, as gaio's does: into the watcher's
// buffer or the caller's, tried at once or queued, a ReadFull partly
// filled.
func TestReadPeerReset(t *testing.T) {
	reset := func(c net.Conn) {
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	cases := []struct {
		name     string
		submit   func(w *Watcher, s net.Conn) error
		early    bool // reset before submitting: the read is tried at once
		prefix   int  // bytes the peer sends before the reset (ReadFull)
		wantSize int
	}{
		{"swap read, queued", func(w *Watcher, s net.Conn) error { return w.Read(nil, s, nil) }, false, 0, 0},
		{"swap read, tried at once", func(w *Watcher, s net.Conn) error { return w.Read(nil, s, nil) }, true, 0, 0},
		{"buffer read", func(w *Watcher, s net.Conn) error { return w.Read(nil, s, make([]byte, 16)) }, false, 0, 0},
		{"ReadFull, partly filled", func(w *Watcher, s net.Conn) error {
			return w.ReadFull(nil, s, make([]byte, 16), time.Time{})
		}, false, 5, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, c, s := connected(t)
			if tc.early {
				reset(c)
				time.Sleep(20 * time.Millisecond)
			}
			if err := tc.submit(w, s); err != nil {
				t.Fatal(err)
			}
			if !tc.early {
				time.Sleep(20 * time.Millisecond) // the read is queued
				if tc.prefix > 0 {
					c.Write(make([]byte, tc.prefix))
					time.Sleep(20 * time.Millisecond) // and has read them
				}
				reset(c)
			}
			got := waitResults(t, w, 1, 2*time.Second)
			if len(got) != 1 {
				t.Fatalf("read across a peer reset: %d results; want 1", len(got))
			}
			if got[0].Error == nil || got[0].Size != tc.wantSize {
				t.Fatalf("read across a peer reset: Size %d, Error %v; want %d and the reset",
					got[0].Size, got[0].Error, tc.wantSize)
			}
		})
	}
}

// TestErrorsAreErrnos: a read or write that fails in the kernel completes
// with the bare syscall.Errno, as gaio's do, so that a gaio program's
// res.Error == syscall.ECONNRESET still holds.
func TestErrorsAreErrnos(t *testing.T) {
	reset := func(c net.Conn) {
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	cases := []struct {
		name string
		run  func(w *Watcher, c, s net.Conn)
		want []error // any of them
	}{
		{"read after a reset", func(w *Watcher, c, s net.Conn) {
			reset(c)
			time.Sleep(20 * time.Millisecond)
			w.Read(nil, s, nil)
		}, []error{syscall.ECONNRESET}},
		{"write cut by a reset", func(w *Watcher, c, s net.Conn) {
			w.Write(nil, s, make([]byte, 64<<20))
			time.Sleep(20 * time.Millisecond) // the write is queued
			reset(c)
		}, []error{syscall.ECONNRESET, syscall.EPIPE}},
		{"write after a reset", func(w *Watcher, c, s net.Conn) {
			reset(c)
			time.Sleep(20 * time.Millisecond)
			w.Write(nil, s, []byte("x"))
		}, []error{syscall.ECONNRESET, syscall.EPIPE}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, c, s := connected(t)
			tc.run(w, c, s)
			got := waitResults(t, w, 1, 5*time.Second)
			if len(got) != 1 {
				t.Fatalf("%d results; want 1", len(got))
			}
			for _, want := range tc.want {
				if got[0].Error == want {
					return
				}
			}
			t.Fatalf("Error = %v (%T); want one of %v, bare", got[0].Error, got[0].Error, tc.want)
		})
	}
}

// Conns of the application's own types whose methods panic.
type (
	closePanics   struct{ net.Conn } // a nil net.Conn: Close dereferences it
	rawConnPanics struct{ net.Conn }
)

func (rawConnPanics) SyscallConn() (syscall.RawConn, error) { panic("SyscallConn") }

// TestConnPanicFailsItsOperationAlone: a panic in a conn's own method,
// called on the loop (SyscallConn, Close), fails that operation alone; the
// operations submitted with it, here another conn's write, go on. They were
// left unstarted, never to complete.
func TestConnPanicFailsItsOperationAlone(t *testing.T) {
	cases := []struct {
		name    string
		submit  func(w *Watcher) error
		results int // the bad operation's own: Free has none
	}{
		{"Free, Close panics", func(w *Watcher) error { return w.Free(&closePanics{}) }, 0},
		{"Read, SyscallConn panics", func(w *Watcher) error { return w.Read("bad", &rawConnPanics{}, nil) }, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, c, s := connected(t)
			// Hold the loop, so that both operations are taken in one batch.
			hold := make(chan struct{})
			w.l.Submit(func() { <-hold })
			if err := tc.submit(w); err != nil {
				t.Fatal(err)
			}
			w.Write("good", s, []byte("x"))
			close(hold)
			got := waitResults(t, w, 1+tc.results, 5*time.Second)
			if len(got) != 1+tc.results {
				t.Fatalf("%d results; want %d", len(got), 1+tc.results)
			}
			for _, res := range got {
				switch {
				case res.Context == "good" && (res.Error != nil || res.Size != 1):
					t.Errorf("the other conn's Write: %d bytes, %v; want 1, nil", res.Size, res.Error)
				case res.Context == "bad" && res.Error == nil:
					t.Errorf("Read on a conn whose SyscallConn panics succeeded")
				}
			}
			if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
				t.Fatalf("peer of the other conn: %v", err)
			}
		})
	}
}

// TestWriteRetriedOnNoBuffers: a write that meets ENOBUFS, which macOS and
// the BSDs return when the kernel is short of mbufs for a moment, is tried
// again, as gaio tries it, rather than completing with the error; what it
// had written before stays written.
func TestWriteRetriedOnNoBuffers(t *testing.T) {
	w, c, s := connected(t)
	calls := 0 // on the loop only
	w.write = func(fd int, p []byte) (int, error) {
		calls++
		switch calls {
		case 1:
			return sock.Write(fd, p[:2])
		case 2:
			return 0, os.NewSyscallError("write", sock.ErrNoBuffers)
		}
		return sock.Write(fd, p)
	}
	if err := w.Write("hello", s, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if res := waitOne(t, w); res.Error != nil || res.Size != 5 {
		t.Fatalf("result Size %d, Error %v; want 5, nil", res.Size, res.Error)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 5)
	if n, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("peer ReadFull = %d, %v, %q; want 5, nil, hello", n, err, buf[:n])
	}
}

// rawConnFails is a conn of the application's own type whose SyscallConn
// fails.
type rawConnFails struct{ net.Conn }

func (rawConnFails) SyscallConn() (syscall.RawConn, error) { return nil, errors.New("no raw conn") }

// TestNoRawConnIsUnsupported: a conn that gives no raw conn, whether it
// has no SyscallConn or its SyscallConn fails, completes with
// ErrUnsupported, as gaio's dupconn returns for both.
func TestNoRawConnIsUnsupported(t *testing.T) {
	w := newWatcher(t, 0)
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	for _, tc := range []struct {
		name string
		conn net.Conn
	}{
		{"no SyscallConn", p1},
		{"SyscallConn fails", &rawConnFails{p2}},
		{"zero TCPConn", &net.TCPConn{}},
	} {
		if err := w.Read(tc.name, tc.conn, nil); err != nil {
			t.Fatalf("Read(%s) = %v", tc.name, err)
		}
		if res := waitOne(t, w); res.Error != ErrUnsupported {
			t.Errorf("Read(%s) completed with %v; want ErrUnsupported", tc.name, res.Error)
		}
	}
}

// TestSwapBufferTooLargePanicsAtStart: a swap buffer size the runtime cannot
// allocate panics in NewWatcherSize, as gaio's does, where the Watcher
// started and every read into the swap buffers panicked on its loop, logged
// as a panic of the conn's and, for a read queued behind another, never
// completed.
func TestSwapBufferTooLargePanicsAtStart(t *testing.T) {
	if math.MaxInt < 1<<62 {
		t.Skip("a 32-bit int's largest size may be allocated")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("NewWatcherSize(math.MaxInt) did not panic")
		}
	}()
	if w, err := NewWatcherSize(math.MaxInt); err == nil {
		w.Close()
	}
}

// TestBurstResultsReleased: after a burst of completions in one iteration,
// a single completion costs what it cost before the burst, where each
// iteration's results were allocated as many as the burst's.
func TestBurstResultsReleased(t *testing.T) {
	w, c, s := connected(t)
	go io.Copy(io.Discard, c)
	msg := []byte("x")
	roundTrip := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 100 {
			w.Write(nil, s, msg)
			waitOne(t, w)
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / 100
	}
	roundTrip() // warm up
	small := roundTrip()

	const burst = 100_000
	writeBurst(t, w, s, burst)
	waitN(t, w, burst)

	if big := roundTrip(); big > small+4<<10 {
		t.Fatalf("a write's round trip allocates %d bytes after a burst of %d; %d before it", big, burst, small)
	}
}

// writeBurst submits n one-byte writes on s while the loop is held: they
// are all taken, and complete, in one iteration.
func writeBurst(t *testing.T, w *Watcher, s net.Conn, n int) {
	t.Helper()
	hold := make(chan struct{})
	w.l.Submit(func() { <-hold })
	for range n {
		if err := w.Write(nil, s, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	close(hold)
}

// TestBurstQueuesReleased: once a burst of submissions is over, the
// Watcher lets go of the room it took, as the loop's task queue does,
// where it kept it for good.
func TestBurstQueuesReleased(t *testing.T) {
	w, c, s := connected(t)
	go io.Copy(io.Discard, c)
	const burst = 100_000
	writeBurst(t, w, s, burst)
	waitN(t, w, burst)
	w.Write(nil, s, []byte("x"))
	waitOne(t, w)
	caps := make(chan [2]int)
	w.l.Submit(func() {
		w.smu.Lock()
		defer w.smu.Unlock()
		caps <- [2]int{cap(w.pending), cap(w.taking)}
	})
	if got := <-caps; max(got[0], got[1]) > 1<<16 {
		t.Fatalf("after a burst of %d, the queues hold room for %v; want at most %d each", burst, got, 1<<16)
	}
}

// TestBurstSwapBuffersReleased: once a burst of reads into the swap
// buffers is over, the Watcher keeps few spare buffers, where it kept every
// buffer the burst had taken for good.
func TestBurstSwapBuffersReleased(t *testing.T) {
	const bufsize, nconns = 4096, 200
	w := newWatcher(t, bufsize)
	ln := listen(t)
	defer ln.Close()
	var servers []net.Conn
	for range nconns {
		c := dial(t, ln.Addr().String())
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if _, err := c.Write(make([]byte, bufsize)); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	// Every read fills a swap buffer of its own, in one iteration.
	hold := make(chan struct{})
	w.l.Submit(func() { <-hold })
	for _, s := range servers {
		w.Read(nil, s, nil)
	}
	close(hold)
	waitN(t, w, nconns)
	// Two WaitIOs later, the burst's buffers are past their use.
	for range 2 {
		w.Write(nil, servers[0], []byte("x"))
		waitOne(t, w)
	}
	w.rmu.Lock()
	spare := len(w.free)
	w.rmu.Unlock()
	if spare > 4 {
		t.Fatalf("after a burst of %d reads, %d spare swap buffers are kept; want 4 at most", nconns, spare)
	}
}

// TestBurstConnQueueReleased: once a conn's queue of 100,000 writes has
// drained, the conn lets go of the queue's room, where it kept it until
// the conn was freed.
func TestBurstConnQueueReleased(t *testing.T) {
	w, c, s := connected(t)
	const burst = 100_000
	msg := make([]byte, 1000)
	for range burst {
		w.Write(nil, s, msg) // the peer does not read yet: most queue
	}
	go io.Copy(io.Discard, c)
	waitN(t, w, burst)
	room := make(chan int)
	w.l.Submit(func() {
		n := 0
		for _, d := range w.descs {
			n += cap(d.writers.ops)
		}
		room <- n
	})
	if got := <-room; got > 1<<16 {
		t.Fatalf("after %d writes drained, the conn's queue holds room for %d; want at most %d", burst, got, 1<<16)
	}
}
