package http1_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/http1"
)

func TestResponseWriter(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFunc("/sniff", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html><body>hi</body></html>")
	})
	srv.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		io.WriteString(w, "12345")
		if _, err := io.WriteString(w, "6"); !errors.Is(err, http.ErrContentLength) {
			t.Errorf("write past Content-Length: %v", err)
		}
	})
	srv.HandleFunc("/nocontent", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		if _, err := io.WriteString(w, "x"); !errors.Is(err, http.ErrBodyNotAllowed) {
			t.Errorf("write to a 204: %v", err)
		}
	})
	srv.HandleFunc("/hints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		io.WriteString(w, "final")
	})
	srv.HandleFunc("/flush", func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		io.WriteString(w, "first")
		if err := rc.Flush(); err != nil {
			t.Errorf("Flush: %v", err)
		}
		io.WriteString(w, "second")
	})
	srv.HandleFunc("/split", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Bad", "a\r\nInjected: yes")
		io.WriteString(w, "ok")
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)

	c.send("GET /sniff HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := c.read("GET"); resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("sniffed %q", resp.Header.Get("Content-Type"))
	}
	c.send("GET /declared HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := c.read("GET"); body != "12345" || resp.ContentLength != 5 {
		t.Fatalf("declared: %q %d", body, resp.ContentLength)
	}
	c.send("GET /nocontent HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := c.read("GET"); resp.StatusCode != 204 || body != "" {
		t.Fatalf("204: %d %q", resp.StatusCode, body)
	}
	c.send("GET /hints HTTP/1.1\r\nHost: x\r\n\r\n")
	tp, err := c.br.ReadString('\n')
	if err != nil || tp != "HTTP/1.1 103 Early Hints\r\n" {
		t.Fatalf("%q %v", tp, err)
	}
	if line, _ := c.br.ReadString('\n'); !strings.HasPrefix(line, "Link: ") {
		t.Fatalf("103 without its Link: %q", line)
	}
	c.br.ReadString('\n')
	if resp, body := c.read("GET"); body != "final" || resp.Header.Get("Link") != "" {
		t.Fatalf("after 103: %q %v", body, resp.Header)
	}
	c.send("GET /flush HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := c.read("GET"); body != "firstsecond" || resp.TransferEncoding == nil {
		t.Fatalf("flush: %q %v", body, resp.TransferEncoding)
	}
	c.send("GET /split HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := c.read("GET"); resp.Header.Get("Injected") != "" || resp.Header.Get("X-Bad") != "a  Injected: yes" {
		t.Fatalf("response splitting: %v", resp.Header)
	}
}

func TestWorkersBound(t *testing.T) {
	srv := &http1.Server{Workers: 3}
	var running, most atomic.Int32
	srv.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		io.WriteString(w, "ok")
	})
	addr := serve(t, srv)
	c := client(t)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get("http://" + addr + "/")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	if m := most.Load(); m > 3 || m < 2 {
		t.Fatalf("%d handlers ran at once, want at most 3", m)
	}
}

// upper is a Protocol that answers each line in upper case.
type upper struct{ closed chan error }

func (u *upper) OnData(c *evloop.Conn) {
	in, _ := c.Peek(0)
	if i := strings.IndexByte(string(in), '\n'); i >= 0 {
		c.Write([]byte(strings.ToUpper(string(in[:i+1]))))
		c.Discard(i + 1)
	}
}

func (u *upper) OnOpen(c *evloop.Conn) {}

func (u *upper) OnClose(c *evloop.Conn, err error) { u.closed <- err }

// A connection switched to another protocol, from either kind of handler,
// is served by it; ConnState reports it hijacked, and nothing after.
func TestSwitchProtocols(t *testing.T) {
	cs := newConnStates()
	srv := &http1.Server{ConnState: cs.recordConn}
	fastDone := make(chan error, 1)
	stdDone := make(chan error, 1)
	srv.HandleFastFunc("/fast-upgrade", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Upgrade", "upper")
		w.AddHeader("Connection", "Upgrade")
		w.SwitchProtocols(&upper{closed: fastDone})
	})
	srv.HandleFunc("/std-upgrade", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Upgrade", "upper")
		w.Header().Set("Connection", "Upgrade")
		sw := w.(interface{ SwitchProtocols(http1.Protocol) error })
		if err := sw.SwitchProtocols(&upper{closed: stdDone}); err != nil {
			t.Error(err)
		}
	})
	addr := serve(t, srv)
	for _, path := range []string{"/fast-upgrade", "/std-upgrade"} {
		c := dialRaw(t, addr)
		// The first line after the request arrives with it.
		c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: upper\r\n\r\nabc\n")
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil || resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "upper" {
			t.Fatalf("%s: %v %v", path, resp, err)
		}
		for _, line := range []string{"abc\n", "def\n"} {
			if line == "def\n" {
				c.send(line)
			}
			if got, _ := c.br.ReadString('\n'); got != strings.ToUpper(line) {
				t.Fatalf("%s: %q", path, got)
			}
		}
		c.nc.Close()
		want := []http.ConnState{http.StateNew, http.StateActive, http.StateHijacked}
		if got := cs.of(t, c.nc.LocalAddr().String()); !slices.Equal(got, want) {
			t.Errorf("%s: states %v; want %v", path, got, want)
		}
	}
	for _, ch := range []chan error{fastDone, stdDone} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("the protocol's OnClose did not run")
		}
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for addr, st := range cs.states {
		if st[len(st)-1] != http.StateHijacked {
			t.Errorf("connection from %s: states %v after the protocol closed it; want none after hijacked", addr, st)
		}
	}
}

// leaver is an upper that, told of Shutdown, says so and closes.
type leaver struct{ upper }

func (l *leaver) OnShutdown(c *evloop.Conn) {
	c.Write([]byte("bye\n"))
	c.Close()
}

// Shutdown tells the connections switched to a Shutdowner and waits for
// them; a handler that closed its connection before switching leaves
// nothing to wait for.
func TestShutdownTellsProtocols(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFastFunc("/fast-upgrade", func(w *http1.Response, r *http1.Request) {
		w.SwitchProtocols(&leaver{upper{closed: make(chan error, 1)}})
	})
	srv.HandleFunc("/std-upgrade", func(w http.ResponseWriter, r *http.Request) {
		sw := w.(interface{ SwitchProtocols(http1.Protocol) error })
		sw.SwitchProtocols(&leaver{upper{closed: make(chan error, 1)}})
	})
	srv.HandleFastFunc("/aborted", func(w *http1.Response, r *http1.Request) {
		w.Conn().Abort()
		w.SwitchProtocols(&leaver{upper{closed: make(chan error, 1)}})
	})
	addr := serve(t, srv)
	aborted := dialRaw(t, addr)
	aborted.send("GET /aborted HTTP/1.1\r\nHost: x\r\n\r\n")
	io.Copy(io.Discard, aborted.br) // the reset
	conns := switched(t, addr, "/fast-upgrade", "/std-upgrade")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for _, c := range conns {
		if rest, err := io.ReadAll(c.br); err != nil || string(rest) != "bye\n" {
			t.Fatalf("after the switch: %q, %v; want the protocol's goodbye, then EOF", rest, err)
		}
	}
}

// TestTrailers checks trailers as net/http's server sends them: declared
// in the head's Trailer field and set by the end, or set under
// http.TrailerPrefix; forbidden fields left out; none without a chunked
// body.
func TestTrailers(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum, X-Unset")
		io.WriteString(w, "body")
		w.Header().Set("X-Sum", "42")
		w.Header().Set(http.TrailerPrefix+"Content-Length", "999") // forbidden: left out
	})
	srv.HandleFunc("/prefix", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "body")
		http.NewResponseController(w).Flush()
		w.Header().Set(http.TrailerPrefix+"X-Late", "yes")
	})
	srv.HandleFunc("/length", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		w.Header().Set("Content-Length", "4")
		io.WriteString(w, "body")
		w.Header().Set("X-Sum", "42")
	})
	srv.HandleFunc("/local", func(w http.ResponseWriter, r *http.Request) {
		a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if a == nil {
			http.Error(w, "no LocalAddrContextKey", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, a.String())
	})
	addr := serve(t, srv)
	hc, base := client(t), "http://"+addr

	resp, body := get(t, hc, base+"/declared")
	if body != "body" || resp.ContentLength != -1 || resp.Trailer.Get("X-Sum") != "42" {
		t.Errorf("declared: %q, length %d, trailer %v", body, resp.ContentLength, resp.Trailer)
	}
	if resp.Trailer.Get("Content-Length") != "" || resp.Trailer.Get("X-Unset") != "" {
		t.Errorf("declared: trailers %v; want X-Sum alone", resp.Trailer)
	}
	resp, body = get(t, hc, base+"/prefix")
	if body != "body" || resp.Trailer.Get("X-Late") != "yes" {
		t.Errorf("prefix: %q, trailer %v", body, resp.Trailer)
	}
	resp, body = get(t, hc, base+"/length")
	if body != "body" || resp.ContentLength != 4 || len(resp.Trailer) != 0 {
		t.Errorf("with a Content-Length: %q, length %d, trailer %v", body, resp.ContentLength, resp.Trailer)
	}
	resp, body = get(t, hc, base+"/local")
	if resp.StatusCode != 200 || body != addr {
		t.Errorf("LocalAddrContextKey: %d %q; want %q", resp.StatusCode, body, addr)
	}

	// HTTP/1.0 has no chunked bodies, so no trailers: the body ends with
	// the connection. (A field set before the head went out is in the head,
	// as with net/http.)
	c := dialRaw(t, addr)
	c.send("GET /declared HTTP/1.0\r\nHost: x\r\n\r\n")
	raw, _ := io.ReadAll(c.br)
	if s := string(raw); !strings.HasSuffix(s, "\r\n\r\nbody") || strings.Contains(s, "Transfer-Encoding") || strings.Contains(s, "Content-Length") {
		t.Errorf("HTTP/1.0: %q", s)
	}
}

// switched requests each path on a connection of its own, checks that
// each is answered 101 Switching Protocols, and returns the connections.
func switched(t *testing.T, addr string, paths ...string) []*rawConn {
	t.Helper()
	var conns []*rawConn
	for _, path := range paths {
		c := dialRaw(t, addr)
		c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, err := http.ReadResponse(c.br, nil); err != nil || resp.StatusCode != 101 {
			t.Fatalf("%s: %v %v", path, resp, err)
		}
		conns = append(conns, c)
	}
	return conns
}

// A pooled answer the loop could not take whole (its outbound queue at
// Engine.MaxOutbound: here its head alone is longer) ends the connection
// after what it took: the answer to the request pipelined behind it would
// otherwise be read as this one's, or as the rest of its body.
func TestStdRefusedAnswerCloses(t *testing.T) {
	srv := &http1.Server{}
	srv.Engine.MaxOutbound = 128 << 10
	srv.Engine.HighWater = 64 << 10
	srv.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("h", 200<<10))
		chunk := make([]byte, 32<<10) // no Content-Length: chunked
		for range 8 {
			w.Write(chunk) // errors ignored, as most handlers do
		}
	})
	srv.HandleFunc("GET /small", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "SMALL-ANSWER")
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\n\r\n")
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c.br)
	if err != nil {
		t.Fatalf("the connection did not end: %v", err)
	}
	if i := strings.Index(string(b), "SMALL-ANSWER"); i >= 0 {
		t.Fatalf("the refused answer is cut after %d bytes, and the next answer follows on the connection", i)
	}
}

// A fast handler's switch whose answers, queued as it switches, take the
// outbound queue past HighWater (a client pipelining requests and an
// upgrade without reading) leaves the loop serving its other connections,
// and the switched connection reported hijacked last: the connection's
// state was put on the idle timeouts' list as it was recycled, and the
// loop's clock then went round that list for ever, serving nobody.
// IdleTimeout is a second: the requests, sent as the connection opens,
// must come within it, which a loaded machine needs.
func TestSwitchWhilePressed(t *testing.T) {
	cs := newConnStates()
	srv := &http1.Server{IdleTimeout: time.Second, ConnState: cs.recordConn}
	srv.Engine.HighWater = 32 << 10
	srv.Engine.Loops = 1
	small := bytes.Repeat([]byte("x"), 4<<10)
	srv.HandleFastFunc("/small", func(w *http1.Response, r *http1.Request) { w.Write(small) })
	srv.HandleFastFunc("/ok", func(w *http1.Response, r *http1.Request) { w.WriteString("ok") })
	done := make(chan error, 1)
	srv.HandleFastFunc("/fast-upgrade", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Upgrade", "upper")
		w.AddHeader("Connection", "Upgrade")
		w.SwitchProtocols(&upper{closed: done})
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send(strings.Repeat("GET /small HTTP/1.1\r\nHost: x\r\n\r\n", 10) +
		"GET /fast-upgrade HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: upper\r\n\r\n")
	for range 10 {
		c.read("GET")
	}
	if resp, err := http.ReadResponse(c.br, nil); err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	// Connections on the same loop, past the switched one's IdleTimeout.
	for i := range 3 {
		time.Sleep(1100 * time.Millisecond)
		c2 := dialRaw(t, addr)
		c2.nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, _, body := c2.get("/ok"); body != "ok" {
			t.Fatalf("connection %d on the loop: %q", i, body)
		}
	}
	c.nc.Close()
	want := []http.ConnState{http.StateNew, http.StateActive, http.StateHijacked}
	cs.expect(t, c, want)
}

// A goroutine a pooled handler left behind that writes, flushes or
// hijacks once the handler returned is refused: the connection carries the
// next request's answer by then, which the late bytes would have broken.
func TestStdWriteAfterReturn(t *testing.T) {
	late := make(chan struct{})
	lateErrs := make(chan []error, 1)
	srv := &http1.Server{}
	srv.HandleFunc("/first", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // the answer is chunked
		go func() {
			<-late
			_, werr := w.Write([]byte(strings.Repeat("x", 5000)))
			ferr := http.NewResponseController(w).Flush()
			_, _, herr := http.NewResponseController(w).Hijack()
			lateErrs <- []error{werr, ferr, herr}
		}()
	})
	srv.HandleFunc("/second", func(w http.ResponseWriter, r *http.Request) {
		close(late) // the first handler returned before this one runs
		for i, err := range <-lateErrs {
			if err == nil {
				t.Errorf("late call %d (Write, Flush, Hijack) succeeded", i)
			}
		}
		io.WriteString(w, "second")
	})
	c := dialRaw(t, serve(t, srv))
	c.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := c.read("GET"); body != "" {
		t.Errorf("first answer's body %q; want none", body)
	}
	if _, body := c.read("GET"); body != "second" {
		t.Errorf("second answer's body %q; want \"second\"", body)
	}
}

// A goroutine of a pooled handler's that waits in a Read of the body when
// the handler returns does not wait for ever, where it waited on, holding
// a goroutine, as the rest of the body was dropped without it, the
// connection closed or not. (net/http's server holds its answer until the
// body has come or the client has gone, and the Read then returns.)
func TestStdBodyReadWaitingPastHandler(t *testing.T) {
	firstRead := make(chan struct{})
	readErr := make(chan error, 1)
	srv := &http1.Server{}
	srv.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		go func() {
			r.Body.Read(make([]byte, 5))
			close(firstRead)
			_, err := r.Body.Read(make([]byte, 5)) // the rest has not come
			readErr <- err
		}()
		<-firstRead
		io.WriteString(w, "done")
	})
	c := dialRaw(t, serve(t, srv))
	c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabcde")
	if _, body := c.read("POST"); body != "done" {
		t.Fatalf("answer %q; want \"done\"", body)
	}
	// The client stays: had it closed here, its EOF could reach the loop
	// before the handler's return does, and the Read fail for the body
	// that did not come (io.ErrUnexpectedEOF) instead.
	select {
	case err := <-readErr:
		if !errors.Is(err, http.ErrBodyReadAfterClose) {
			t.Errorf("Read waiting when the handler returned = %v; want http.ErrBodyReadAfterClose", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a Read waiting when the handler returned still waits")
	}
}

// A pooled handler's answer goes out through write buffers that return to
// their pool once written, the body's as well as the head's: streaming a
// large answer allocates a small part of its size (less than half with
// the race detector, whose pools drop some of what they are given), where
// every 4 KiB of body took a new buffer.
func TestStdAnswerBuffersReused(t *testing.T) {
	const size = 4 << 20
	piece := make([]byte, 1000)
	srv := &http1.Server{}
	srv.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		for range size / len(piece) {
			w.Write(piece)
		}
	})
	c := dialRaw(t, serve(t, srv))
	get := func() {
		c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get() // the pool fills
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const answers = 3
	for range answers {
		get()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / answers; per > size/2 {
		t.Errorf("an answer of %d KiB allocated %d KiB; want less than half its size", size>>10, per>>10)
	}
}

// A pooled handler that writes faster than its client reads waits, within
// Engine.MaxOutbound when that is below what the writer lets go ahead of
// the client: the answer goes out whole, where the loop refused the bytes
// past MaxOutbound and the connection ended in the middle of it.
func TestStdAnswerWithinMaxOutbound(t *testing.T) {
	const size = 4 << 20
	errs := make(chan error, 1)
	srv := &http1.Server{}
	srv.Engine.MaxOutbound = 64 << 10
	srv.Engine.HighWater = 32 << 10
	srv.Engine.SendBuffer = 16 << 10
	srv.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(w, bytes.NewReader(make([]byte, size)))
		errs <- err
	})
	c := dialRaw(t, serve(t, srv))
	c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(200 * time.Millisecond) // the client is slower than the handler
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if n != size || err != nil {
		t.Errorf("read %d bytes of the answer, %v; want %d, nil", n, err, size)
	}
	if err := <-errs; err != nil {
		t.Errorf("the handler's write: %v", err)
	}
}

// A goroutine a pooled handler left behind that calls WriteHeader once
// the handler returned is told off in the log, as net/http's server tells
// it, when the answer waits for the end of a chunked body the handler
// left unread, where it read the request the connection had let go of and
// the process crashed.
func TestStdWriteHeaderAfterHeldAnswer(t *testing.T) {
	late := make(chan struct{})
	lateDone := make(chan struct{})
	srv := &http1.Server{}
	srv.HandleFunc("/first", func(w http.ResponseWriter, r *http.Request) {
		go func() {
			<-late
			w.WriteHeader(http.StatusInternalServerError)
			close(lateDone)
		}()
		io.WriteString(w, "first") // the body is left unread: the answer waits for its end
	})
	srv.HandleFunc("/second", func(w http.ResponseWriter, r *http.Request) {
		close(late) // the first handler returned, its answer held, before this one runs
		<-lateDone
		io.WriteString(w, "second")
	})
	c := dialRaw(t, serve(t, srv))
	c.send("POST /first HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
	time.Sleep(100 * time.Millisecond) // the handler returns; its answer waits
	c.send("0\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := c.read("POST"); body != "first" {
		t.Errorf("first answer's body %q; want \"first\"", body)
	}
	if _, body := c.read("GET"); body != "second" {
		t.Errorf("second answer's body %q; want \"second\"", body)
	}
}

// http.Error from a goroutine a pooled handler left behind, once the
// handler returned and its answer waits for the end of a chunked body it
// left unread, changes nothing: the header it is given is not the one the
// loop sends the held answer from, where the two met in one map (a data
// race, and a crash when a map is written as another reads it).
func TestStdHeaderAfterHeldAnswer(t *testing.T) {
	late := make(chan struct{})
	lateDone := make(chan struct{})
	srv := &http1.Server{}
	srv.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		go func() {
			<-late
			http.Error(w, "too late", http.StatusServiceUnavailable)
			close(lateDone)
		}()
		io.WriteString(w, "answer") // the body is left unread: the answer waits for its end
	})
	c := dialRaw(t, serve(t, srv))
	c.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
	time.Sleep(100 * time.Millisecond) // the handler returns; its answer waits
	close(late)
	<-lateDone
	c.send("0\r\n\r\n")
	resp, body := c.read("POST")
	if resp.StatusCode != http.StatusOK || body != "answer" || resp.Header.Get("X-Content-Type-Options") != "" {
		t.Errorf("answer %d %q %v; want the handler's, 200 \"answer\"", resp.StatusCode, body, resp.Header)
	}
}
