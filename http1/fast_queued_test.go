//go:build unix

package http1_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
)

// fastQueuedSize is the answer to /big for the fast routes' tests: long
// enough that a client reading it slowly, while the sockets' buffers hold
// up to 96 KiB of it, takes several timeouts to take it.
const fastQueuedSize = 512 << 10

// bigFastThenNext answers /big with fastQueuedSize bytes, the rest with
// "next": net/http's twin of bigFast.
var bigFastThenNext = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/big" {
		w.Write(bytes.Repeat([]byte("x"), fastQueuedSize))
		return
	}
	io.WriteString(w, "next")
})

// bigFast serves bigFastThenNext's answers from fast routes, on the loop,
// where no write deadline applies.
func bigFast(s *http1.Server) {
	big := bytes.Repeat([]byte("x"), fastQueuedSize)
	s.Handler = nil
	s.HandleFastFunc("/big", func(w *http1.Response, r *http1.Request) { w.Write(big) })
	s.HandleFastFunc("/next", func(w *http1.Response, r *http1.Request) { w.WriteString("next") })
}

// readBigSlowly reads the answer to /big a little at a time, 16 KiB every
// pause, up to its last tail bytes, which it reads at once: the server
// has bytes to send meanwhile (the client takes them at about 64 KiB a
// 200 ms at a pause of 50 ms, as the receiving socket opens its window
// every half buffer), and, with a tail past what the sockets' buffers
// hold (up to 96 KiB), the client takes no time over what the server
// wrote last.
func (c *rawConn) readBigSlowly(pause time.Duration, tail int64) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	var n int64
	for n < fastQueuedSize-tail {
		k, err := io.CopyN(io.Discard, resp.Body, 16<<10)
		n += k
		if err != nil {
			c.t.Fatalf("first answer cut after %d bytes: %v", n, err)
		}
		time.Sleep(pause)
	}
	k, err := io.Copy(io.Discard, resp.Body)
	if n += k; err != nil || n != fastQueuedSize {
		c.t.Fatalf("first answer: %d bytes (%v); want %d", n, err, fastQueuedSize)
	}
}

// An answer without a write deadline — a fast handler's here; net/http's
// without WriteTimeout — goes out to a client slow to take it for as long
// as the client takes some of it, and IdleTimeout starts once it is all
// written, as net/http's server waits for the next request once its write
// returns. The connection stays for the next request. It closed when
// IdleTimeout passed while the answer went out, and then lost the rest
// after Engine.CloseTimeout. IdleTimeout is a second and the client
// reads a little every tenth of it, so that a client slowed by a loaded
// machine still takes some in each stretch, and sends its next request
// within IdleTimeout of the answer's end.
func TestFastIdleTimeoutAfterQueuedAnswer(t *testing.T) {
	const idle = time.Second
	for _, s := range serveQueued(t, bigFastThenNext, queuedTimeouts{idle: idle}, bigFast, func(s *http1.Server) {
		s.Engine.CloseTimeout = idle / 4
	}) {
		t.Run(s.name, func(t *testing.T) {
			c := dialNotReading(t, s.addr)
			c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
			c.readBigSlowly(idle/10, 128<<10) // takes 2.4 s
			c.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			if _, body := c.read("GET"); body != "next" {
				t.Fatalf("next answer %q; want %q", body, "next")
			}
		})
	}
}

// A head pipelined behind an answer without a write deadline still going
// out to a client slow to take it has ReadHeaderTimeout from when that
// answer is written, as with net/http's server, which reads the next
// request once its write returns: its first bytes, sent with the request
// before it, do not start it. They did, and the client got 408.
// ReadHeaderTimeout is a second and the client reads a little every
// tenth of it, as in TestFastIdleTimeoutAfterQueuedAnswer.
func TestFastReadHeaderTimeoutAfterQueuedAnswer(t *testing.T) {
	const readHeader = time.Second
	for _, s := range serveQueued(t, bigFastThenNext, queuedTimeouts{idle: time.Minute, readHeader: readHeader}, bigFast, func(s *http1.Server) {
		s.Engine.CloseTimeout = readHeader / 4
	}) {
		t.Run(s.name, func(t *testing.T) {
			c := dialNotReading(t, s.addr)
			c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\n")
			c.readBigSlowly(readHeader/10, 128<<10)
			c.send("Host: x\r\n\r\n") // the head's end, at once
			if resp, body := c.read("GET"); resp.StatusCode != 200 || body != "next" {
				t.Fatalf("next answer %d %q; want 200 %q", resp.StatusCode, body, "next")
			}
		})
	}
}

// A client that takes none of a fast answer's bytes is not waited for
// forever: once it has taken none for IdleTimeout (ReadHeaderTimeout while
// a head is arriving) after the wait for its next request timed out, the
// connection closes, and, as the answer cannot go out either,
// Engine.CloseTimeout later it is reset.
func TestFastQueuedAnswerStalled(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for _, pipelined := range []string{"", "GET /next HTTP/1.1\r\n"} {
		srv := &http1.Server{IdleTimeout: timeout, ReadHeaderTimeout: timeout}
		srv.Engine.SendBuffer = 16 << 10
		srv.Engine.CloseTimeout = timeout
		bigFast(srv)
		c := dialNotReading(t, serve(t, srv))
		c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n" + pipelined)
		start := time.Now()
		c.waitReset(10 * time.Second)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("pipelined %q: not reset after %v", pipelined, d)
		}
		resp, err := http.ReadResponse(c.br, nil)
		if err == nil {
			if n, err := io.Copy(io.Discard, resp.Body); err == nil {
				t.Fatalf("pipelined %q: the whole answer (%d bytes) came to a client that took none for %v", pipelined, n, time.Since(start))
			}
		}
	}
}

// Shutdown lets a head that began behind an answer still going out to a
// slow client be answered, as one arriving, with "Connection: close".
func TestShutdownWhileFlushing(t *testing.T) {
	const readHeader = 200 * time.Millisecond
	srv := &http1.Server{IdleTimeout: time.Minute, ReadHeaderTimeout: readHeader}
	srv.Engine.SendBuffer = 16 << 10
	bigFast(srv)
	c := dialNotReading(t, serve(t, srv))
	c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\n")
	done := make(chan error, 1)
	go func() {
		time.Sleep(2 * readHeader) // flushing by then
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	c.readBigSlowly(50*time.Millisecond, 128<<10)
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) before the head it waits for came", err)
	default:
	}
	c.send("Host: x\r\n\r\n")
	resp, body := c.read("GET")
	if resp.StatusCode != 200 || body != "next" || !resp.Close {
		t.Fatalf("next answer %d %q, close %v; want 200 %q and close", resp.StatusCode, body, resp.Close, "next")
	}
	if err := recvErr(t, done); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
}

// IdleTimeout starts once the previous answer is all written also when it
// is written before IdleTimeout passes: the client takes it in about a
// second, within IdleTimeout (2 s), and sends its next request 1.6 s
// after it was written; net/http's server serves it. It was closed, as
// IdleTimeout counted from when the answer was queued.
func TestFastIdleTimeoutFromAnswerWritten(t *testing.T) {
	const idle = 2 * time.Second
	for _, s := range serveQueued(t, bigFastThenNext, queuedTimeouts{idle: idle}, bigFast) {
		t.Run(s.name, func(t *testing.T) {
			c := dialNotReading(t, s.addr)
			start := time.Now()
			c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
			c.readBigSlowly(30*time.Millisecond, 16<<10) // about 1 s
			time.Sleep(time.Until(start.Add(idle + 600*time.Millisecond)))
			c.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			if _, body := c.read("GET"); body != "next" {
				t.Fatalf("next answer %q; want %q", body, "next")
			}
		})
	}
}

// ReadHeaderTimeout of a head pipelined behind an answer starts once the
// answer is written also when it is written before the timeout passes:
// the client takes it in about a second, within ReadHeaderTimeout (2 s),
// and ends the head 1.6 s after; net/http's server answers 200. It got
// 408, as the timeout counted from the head's first bytes.
func TestFastReadHeaderTimeoutFromAnswerWritten(t *testing.T) {
	const readHeader = 2 * time.Second
	for _, s := range serveQueued(t, bigFastThenNext, queuedTimeouts{idle: time.Minute, readHeader: readHeader}, bigFast) {
		t.Run(s.name, func(t *testing.T) {
			c := dialNotReading(t, s.addr)
			start := time.Now()
			c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\n")
			c.readBigSlowly(30*time.Millisecond, 16<<10)
			time.Sleep(time.Until(start.Add(readHeader + 600*time.Millisecond)))
			c.send("Host: x\r\n\r\n")
			if resp, body := c.read("GET"); resp.StatusCode != 200 || body != "next" {
				t.Fatalf("next answer %d %q; want 200 %q", resp.StatusCode, body, "next")
			}
		})
	}
}

// Stretches of flushing last IdleTimeout or ReadHeaderTimeout, and each
// waits in the list of its own timeout, in order: a client behind a head
// that takes none of its answer is closed one ReadHeaderTimeout stretch
// after its wait timed out, however many connections flush meanwhile with
// stretches of IdleTimeout. Sharing one list, ordered from its end for at
// most 64 steps, it took one of their deadlines, about 2 s later.
func TestFlushingStretchesOfMixedTimeouts(t *testing.T) {
	const (
		idle       = 2 * time.Second
		readHeader = 300 * time.Millisecond
		others     = 70 // more than the ordered insert's 64 steps
	)
	srv := &http1.Server{IdleTimeout: idle, ReadHeaderTimeout: readHeader}
	srv.Engine.Loops = 1
	srv.Engine.SendBuffer = 16 << 10
	srv.Engine.CloseTimeout = 200 * time.Millisecond
	bigFast(srv)
	addr := serve(t, srv)
	start := time.Now()
	for range others {
		c := dialNotReading(t, addr)
		c.nc.SetDeadline(time.Now().Add(30 * time.Second))
		c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	// The others' IdleTimeout passes at 2 s (up to 2.2 s): they flush
	// until about 4 s.
	time.Sleep(time.Until(start.Add(idle + 500*time.Millisecond)))
	x := dialNotReading(t, addr)
	x.nc.SetDeadline(time.Now().Add(30 * time.Second))
	began := time.Now()
	x.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\n")
	x.waitReset(10 * time.Second)
	// The wait, a stretch granted, a stretch with nothing taken, then
	// CloseTimeout: 1.1 s, and up to 0.2 s late for each timeout, later
	// on a busy machine (2.1 s was seen); a stretch given IdleTimeout's
	// length, as the others', would make it 2.8 s at least, which tells
	// them apart.
	if d, wrong := time.Since(began), readHeader+idle+readHeader+srv.Engine.CloseTimeout; d >= wrong {
		t.Fatalf("a client that took nothing was reset %v after its head began; want about 1.1 s, before %v, which a stretch of IdleTimeout would take", d, wrong)
	}
}
