//go:build unix

package evloop

import (
	"bufio"
	"cmp"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// pauseHandler pauses reading after every line it consumes, until the
// test resumes it.
type pauseHandler struct {
	BaseHandler
	conns chan *Conn
}

func (h *pauseHandler) OnOpen(c *Conn) { h.conns <- c }

func (h *pauseHandler) OnData(c *Conn) {
	in, _ := c.Peek(0)
	if i := strings.IndexByte(string(in), '\n'); i >= 0 {
		c.Write(in[:i+1])
		c.Discard(i + 1)
		c.PauseReading()
	}
}

func TestPauseReading(t *testing.T) {
	h := &pauseHandler{conns: make(chan *Conn, 1)}
	srv, addr := serve(t, h, Options{Loops: 1})
	nc := dial(t, addr)
	c := <-h.conns
	br := bufio.NewReader(nc)
	io.WriteString(nc, "one\n")
	if line, _ := br.ReadString('\n'); line != "one\n" {
		t.Fatalf("%q", line)
	}
	// Paused: the next line waits in the kernel.
	io.WriteString(nc, "two\n")
	nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("read while paused")
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	srv.Submit(0, c.ResumeReading)
	if line, _ := br.ReadString('\n'); line != "two\n" {
		t.Fatalf("after resume: %q", line)
	}
}

// eofHandler answers a half-closed connection's last line after a delay.
type eofHandler struct {
	BaseHandler
	mu   sync.Mutex
	errs []error
}

func (h *eofHandler) OnData(c *Conn) {}

func (h *eofHandler) OnReadEOF(c *Conn) {
	in, _ := c.Next(-1)
	reply := strings.ToUpper(string(in))
	c.AfterFunc(50*time.Millisecond, func() {
		c.Write([]byte(reply))
		c.Close()
	})
}

func (h *eofHandler) OnClose(c *Conn, err error) {
	h.mu.Lock()
	h.errs = append(h.errs, err)
	h.mu.Unlock()
}

func TestReadEOFHandler(t *testing.T) {
	h := &eofHandler{}
	_, addr := serve(t, h, Options{Loops: 1})
	nc := dial(t, addr)
	io.WriteString(nc, "last words")
	nc.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(nc)
	if err != nil || string(got) != "LAST WORDS" {
		t.Fatalf("%q %v", got, err)
	}
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(5 * time.Millisecond) {
		h.mu.Lock()
		n := len(h.errs)
		h.mu.Unlock()
		if n > 0 {
			break
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.errs) != 1 || h.errs[0] != nil {
		t.Fatalf("OnClose errors %v", h.errs)
	}
}

// detachHandler detaches a connection at its first line and gives it to
// the test with what followed the line.
type detachHandler struct {
	BaseHandler
	out    chan net.Conn
	rest   chan []byte
	closed chan error
}

func (h *detachHandler) OnData(c *Conn) {
	in, _ := c.Peek(0)
	i := strings.IndexByte(string(in), '\n')
	if i < 0 {
		return
	}
	c.Discard(i + 1)
	// Not with bytes queued: write the greeting, detach when it is out.
	c.Write([]byte("hi\n"))
	if _, _, err := c.Detach(); !errors.Is(err, ErrOutboundPending) {
		panic(err)
	}
	c.AfterFunc(20*time.Millisecond, func() {
		nc, rest, err := c.Detach()
		if err != nil {
			panic(err)
		}
		h.out <- nc
		h.rest <- rest
	})
}

func (h *detachHandler) OnClose(c *Conn, err error) { h.closed <- err }

func TestDetach(t *testing.T) {
	h := &detachHandler{out: make(chan net.Conn, 1), rest: make(chan []byte, 1), closed: make(chan error, 1)}
	_, addr := serve(t, h, Options{Loops: 1})
	nc := dial(t, addr)
	io.WriteString(nc, "hello\nbuffered")
	br := bufio.NewReader(nc)
	if line, _ := br.ReadString('\n'); line != "hi\n" {
		t.Fatalf("%q", line)
	}
	dc := <-h.out
	defer dc.Close()
	if rest := <-h.rest; string(rest) != "buffered" {
		t.Fatalf("rest %q", rest)
	}
	if err := <-h.closed; !errors.Is(err, ErrDetached) {
		t.Fatalf("OnClose: %v", err)
	}
	// The detached connection is a plain net.Conn, still connected.
	io.WriteString(nc, "ping")
	buf := make([]byte, 4)
	dc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(dc, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("%q %v", buf, err)
	}
	io.WriteString(dc, "pong")
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("%q %v", buf, err)
	}
}

func TestEachConn(t *testing.T) {
	h := &echoHandler{}
	srv, addr := serve(t, h, Options{Loops: 2})
	for range 5 {
		nc := dial(t, addr)
		if _, err := roundTrip(nc, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for i := range srv.Loops() {
		done := make(chan int)
		srv.Submit(i, func() {
			n := 0
			srv.EachConn(i, func(*Conn) { n++ })
			done <- n
		})
		total += <-done
	}
	if total != 5 {
		t.Fatalf("EachConn saw %d connections, want 5", total)
	}
}

// TestDetachInAsyncWriteCompletion: AsyncWrite's done is called with nil
// once all of b reached the kernel. Two AsyncWrites flushed in one writev,
// the first's completion detaching the connection (its queue empty, as
// Detach wants): the second's bytes reached the kernel too, and the
// detached socket sends them, but its completion was told ErrDetached.
func TestDetachInAsyncWriteCompletion(t *testing.T) {
	type result struct {
		nc  net.Conn
		err error
	}
	detached := make(chan result, 1)
	second := make(chan error, 1)
	h := &funcHandler{data: func(c *Conn) {
		c.Discard(c.InboundBuffered())
		// Queued behind this handler: both run in the loop's task pass,
		// and the iteration's flush writes them in one writev.
		c.AsyncWrite([]byte("first "), func(err error) {
			nc, _, derr := c.Detach()
			detached <- result{nc, cmp.Or(err, derr)}
		})
		c.AsyncWrite([]byte("second"), func(err error) { second <- err })
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	client := dial(t, addr)
	io.WriteString(client, "go")
	r := <-detached
	if r.err != nil {
		t.Fatalf("first AsyncWrite's completion: Detach = %v", r.err)
	}
	defer r.nc.Close()
	got := make([]byte, len("first second"))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "first second" {
		t.Fatalf("client read %q, %v; want %q", got, err, "first second")
	}
	if err := <-second; err != nil {
		t.Fatalf("second AsyncWrite, whose bytes the detached socket sent, completed with %v; want nil", err)
	}
}
