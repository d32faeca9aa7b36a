package http1_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/http1"
)

// oneLoopServer starts srv with one loop, without the Shutdown at cleanup
// (the tests call it themselves), and returns its address.
func oneLoopServer(t *testing.T, srv *http1.Server) string {
	t.Helper()
	srv.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv.Engine.Loops = 1
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// A fast handler pipelined behind a pooled one runs from the pooled
// request's completion (Conn.Submit, not the I/O handler): when it
// panics, its connection must be closed, as for any other handler panic,
// and the request must not run again.
func TestPanicAfterPooledClosesConn(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFunc("/std", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "std")
	})
	var booms atomic.Int32
	srv.HandleFastFunc("/boom", func(w *http1.Response, r *http1.Request) {
		booms.Add(1)
		panic("boom")
	})
	srv.HandleFastFunc("/ok", func(w *http1.Response, r *http1.Request) {
		w.WriteString("ok")
	})
	addr := oneLoopServer(t, srv)
	a := dialRaw(t, addr)
	a.send("GET /std HTTP/1.1\r\nHost: x\r\n\r\nGET /boom HTTP/1.1\r\nHost: x\r\n\r\n")
	// The connection closes after what was queued before the panic: the
	// pooled answer.
	a.nc.SetReadDeadline(time.Now().Add(2 * time.Second))
	got, err := io.ReadAll(a.br)
	if err == nil {
		checkAnswers(t, got, "std")
	} else {
		// Still open: more bytes make the loop serve the same request again.
		a.nc.SetDeadline(time.Now().Add(2 * time.Second))
		io.WriteString(a.nc, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		time.Sleep(200 * time.Millisecond)
		t.Errorf("the connection whose fast handler panicked is still open 2s later (read %q, %v); /boom ran %d times", got, err, booms.Load())
	}
	if n := booms.Load(); n != 1 {
		t.Errorf("/boom ran %d times, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// The answers to the requests pipelined before one whose fast handler
// panics are sent; then the connection closes, and what came after it is
// not served.
func TestPanicKeepsEarlierAnswers(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFastFunc("/boom", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints) // goes into the batch at once
		w.AddHeader("X-Half", "written")
		w.WriteString("half")
		panic("boom")
	})
	var oks atomic.Int32
	srv.HandleFastFunc("/ok", func(w *http1.Response, r *http1.Request) {
		oks.Add(1)
		w.WriteString("ok")
	})
	addr := oneLoopServer(t, srv)
	a, other := dialRaw(t, addr), dialRaw(t, addr)
	req := "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n"
	a.send(req + req + "GET /boom HTTP/1.1\r\nHost: x\r\n\r\n" + req)
	a.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(a.br)
	if err != nil {
		t.Fatalf("the connection whose handler panicked: %v after %q; want it closed", err, got)
	}
	checkAnswers(t, got, "ok", "ok")
	if n := oks.Load(); n != 2 {
		t.Errorf("/ok ran %d times; want 2 (not the one after the panic)", n)
	}
	other.send(req)
	checkAnswers(t, readAnswer(t, other), "ok")
}

// checkAnswers checks that b holds 200 answers with the bodies want, and
// nothing more.
func checkAnswers(t *testing.T, b []byte, want ...string) {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(b))
	for i, w := range want {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d of %q: %v", i, b, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 || string(body) != w {
			t.Fatalf("answer %d: %d %q (%v); want 200 %q", i, resp.StatusCode, body, err, w)
		}
	}
	if rest, _ := io.ReadAll(br); len(rest) > 0 {
		t.Fatalf("after %d answers: %q", len(want), rest)
	}
}

// readAnswer reads one answer from c and returns its bytes.
func readAnswer(t *testing.T, c *rawConn) []byte {
	t.Helper()
	var raw bytes.Buffer
	resp, err := http.ReadResponse(bufio.NewReader(io.TeeReader(c.br, &raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	return raw.Bytes()
}

// panicProto is a Shutdowner that, told of Shutdown, does nothing: the
// client is to close. OnClose may panic.
type panicProto struct {
	panics bool
	closes *atomic.Int32
}

func (p *panicProto) OnOpen(c *evloop.Conn) {}
func (p *panicProto) OnData(c *evloop.Conn) {
	in, _ := c.Peek(0)
	c.Discard(len(in))
}
func (p *panicProto) OnShutdown(c *evloop.Conn) {}
func (p *panicProto) OnClose(c *evloop.Conn, err error) {
	p.closes.Add(1)
	if p.panics {
		panic("OnClose")
	}
}

// A Protocol's OnClose that panics when the client half-closes must run
// once and count its connection out once: counted out twice, Shutdown
// stops waiting for another connection's Shutdowner.
func TestProtocolOnClosePanicAtEOF(t *testing.T) {
	srv := &http1.Server{}
	var closesA, closesB atomic.Int32
	srv.HandleFastFunc("/a", func(w *http1.Response, r *http1.Request) {
		w.SwitchProtocols(&panicProto{panics: true, closes: &closesA})
	})
	srv.HandleFastFunc("/b", func(w *http1.Response, r *http1.Request) {
		w.SwitchProtocols(&panicProto{closes: &closesB})
	})
	addr := oneLoopServer(t, srv)
	conns := switched(t, addr, "/a", "/b")
	a, b := conns[0], conns[1]
	a.nc.(*net.TCPConn).CloseWrite() // EOF: OnReadEOF runs a's OnClose, which panics
	io.Copy(io.Discard, a.br)
	time.Sleep(100 * time.Millisecond)
	if n := closesA.Load(); n != 1 {
		t.Errorf("a's OnClose ran %d times, want 1", n)
	}
	// b never closes: Shutdown must wait for it until its context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := srv.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v after %v with b's Shutdowner still open; want %v at 2.5s", err, time.Since(start).Round(time.Millisecond), context.DeadlineExceeded)
	}
	_ = b
}
