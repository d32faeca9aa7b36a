package http1_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/http1"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts srv on a loopback port and stops it when the test ends.
func serve(t testing.TB, srv *http1.Server) string {
	t.Helper()
	return serveWith(t, srv, srv.Start)
}

// serveWith is serve with start (srv.Start, or srv.StartTLS's call) in
// place of srv.Start.
func serveWith(t testing.TB, srv *http1.Server, start func(net.Listener) error) string {
	t.Helper()
	if srv.Logger == nil {
		srv.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if srv.Engine.Loops == 0 {
		srv.Engine.Loops = 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return addr
}

// client returns an http.Client whose connections end with the test.
func client(t testing.TB) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// testServer has fast and pooled routes for most tests.
func testServer() *http1.Server {
	srv := &http1.Server{Name: "test"}
	srv.HandleFastFunc("GET /fast", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Content-Type", "text/plain")
		w.WriteString("fast " + string(r.Target))
	})
	srv.HandleFastFunc("POST /fast/echo", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("X-Len", strconv.Itoa(len(r.Body)))
		w.Write(r.Body)
	})
	srv.HandleFunc("/std", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "std %s %s %s", r.Method, r.URL.RequestURI(), r.Proto)
	})
	srv.HandleFunc("POST /std/echo", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
	})
	srv.HandleFunc("/std/stream", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		chunk := strings.Repeat("x", 1000)
		for i := 0; i < n; i++ {
			io.WriteString(w, chunk)
			if i%10 == 0 {
				w.(http.Flusher).Flush()
			}
		}
	})
	return srv
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestNetHTTPClient(t *testing.T) {
	addr := serve(t, testServer())
	c := client(t)
	base := "http://" + addr
	for range 3 { // the same connections, kept alive
		resp, body := get(t, c, base+"/fast?x=1")
		if resp.StatusCode != 200 || body != "fast /fast?x=1" || resp.Header.Get("Server") != "test" || resp.Header.Get("Date") == "" {
			t.Fatalf("fast: %d %q %v", resp.StatusCode, body, resp.Header)
		}
		resp, body = get(t, c, base+"/std?y=2")
		if resp.StatusCode != 200 || body != "std GET /std?y=2 HTTP/1.1" || resp.ContentLength != int64(len(body)) {
			t.Fatalf("std: %d %q %d", resp.StatusCode, body, resp.ContentLength)
		}
	}
	resp, body := get(t, c, base+"/nothing")
	if resp.StatusCode != 404 || body != "404 page not found\n" {
		t.Fatalf("404: %d %q", resp.StatusCode, body)
	}
	resp, err := c.Post(base+"/fast", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("405: %d %v", resp.StatusCode, resp.Header)
	}
	resp, err = c.Head(base + "/fast")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != int64(len("fast /fast")) {
		t.Fatalf("HEAD: %d %d", resp.StatusCode, resp.ContentLength)
	}
}

func TestBodies(t *testing.T) {
	addr := serve(t, testServer())
	c := client(t)
	base := "http://" + addr
	for _, size := range []int{0, 1, 4095, 4096, 100_000, 3 << 20} {
		data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		sum := sha256.Sum256(data)
		for _, chunked := range []bool{false, true} {
			var body io.Reader = bytes.NewReader(data)
			if chunked {
				body = io.MultiReader(body) // hides the length: chunked
			}
			resp, err := c.Post(base+"/std/echo", "application/octet-stream", body)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("%d %x", size, sum); string(got) != want {
				t.Fatalf("std echo of %d (chunked %v): %q", size, chunked, got)
			}
			if size > 1<<20 {
				continue
			}
			body = bytes.NewReader(data)
			if chunked {
				body = io.MultiReader(body)
			}
			resp, err = c.Post(base+"/fast/echo", "application/octet-stream", body)
			if err != nil {
				t.Fatal(err)
			}
			got, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(got, data) || resp.Header.Get("X-Len") != strconv.Itoa(size) {
				t.Fatalf("fast echo of %d (chunked %v): %d bytes", size, chunked, len(got))
			}
		}
	}
}

func TestStreaming(t *testing.T) {
	addr := serve(t, testServer())
	c := client(t)
	for _, n := range []int{1, 5, 300} {
		resp, body := get(t, c, "http://"+addr+"/std/stream?n="+strconv.Itoa(n))
		if len(body) != n*1000 {
			t.Fatalf("n=%d: %d bytes", n, len(body))
		}
		if n > 4 && (resp.ContentLength != -1 || len(resp.TransferEncoding) != 1) {
			t.Fatalf("n=%d: not chunked: %d %v", n, resp.ContentLength, resp.TransferEncoding)
		}
	}
}

// rawConn is a client connection that writes bytes as given and reads
// answers with net/http's response parser.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, s); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) read(method string) (*http.Response, string) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		c.t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	return resp, string(b)
}

// closed checks that the server closed the connection.
func (c *rawConn) closed() {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.br.Read(make([]byte, 1)); err == nil {
		c.t.Fatalf("connection still open: read %d bytes", n)
	} else if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		c.t.Fatal("connection still open")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestPipelining(t *testing.T) {
	addr := serve(t, testServer())
	c := dialRaw(t, addr)
	var all strings.Builder
	want := []string{}
	for i := range 40 {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&all, "GET /fast?%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
			want = append(want, fmt.Sprintf("fast /fast?%d", i))
		case 1:
			fmt.Fprintf(&all, "GET /std?%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
			want = append(want, fmt.Sprintf("std GET /std?%d HTTP/1.1", i))
		case 2:
			fmt.Fprintf(&all, "POST /fast/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab%03d", i)
			want = append(want, fmt.Sprintf("ab%03d", i))
		case 3:
			fmt.Fprintf(&all, "POST /std/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
			want = append(want, fmt.Sprintf("3 %x", sha256.Sum256([]byte("abc"))))
		}
	}
	// All at once, then a byte at a time.
	c.send(all.String())
	for i, w := range want {
		if _, body := c.read("GET"); body != w {
			t.Fatalf("answer %d: %q, want %q", i, body, w)
		}
	}
	s := all.String()
	go func() {
		for i := range len(s) {
			if _, err := c.nc.Write([]byte{s[i]}); err != nil {
				return
			}
		}
	}()
	for i, w := range want {
		if _, body := c.read("GET"); body != w {
			t.Fatalf("answer %d (byte at a time): %q, want %q", i, body, w)
		}
	}
}

// TestPipelinedAnswersInOrder: answers a burst of pipelined requests gets
// are batched, and what writes past the batch — a large body, a handler
// writing to the connection itself, a pooled handler, an informational
// answer, the refusal of a bad request — comes in request order.
func TestPipelinedAnswersInOrder(t *testing.T) {
	srv := testServer()
	big := strings.Repeat("b", 100<<10)
	srv.HandleFastFunc("GET /big", func(w *http1.Response, r *http1.Request) { w.WriteString(big) })
	srv.HandleFastFunc("GET /kib", func(w *http1.Response, r *http1.Request) { w.WriteString(strings.Repeat("k", 1024)) })
	srv.HandleFastFunc("GET /raw", func(w *http1.Response, r *http1.Request) {
		w.Conn().Write([]byte("HTTP/1.1 299 Raw\r\nContent-Length: 3\r\n\r\nraw"))
		w.WriteString("after raw")
	})
	srv.HandleFastFunc("GET /hints", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteString("hinted")
	})
	srv.HandleFastFunc("POST /only-post", func(w *http1.Response, r *http1.Request) {})
	addr := serve(t, srv)

	type answer struct {
		status int
		body   string
	}
	var all strings.Builder
	var want []answer
	add := func(req string, a ...answer) {
		all.WriteString(req)
		want = append(want, a...)
	}
	// More than the 64 KiB batch in 1 KiB answers, so that it flushes
	// in the middle of the burst.
	for range 80 {
		add("GET /kib HTTP/1.1\r\nHost: x\r\n\r\n", answer{200, strings.Repeat("k", 1024)})
	}
	for i := range 3 {
		add(fmt.Sprintf("GET /fast?%d HTTP/1.1\r\nHost: x\r\n\r\n", i), answer{200, fmt.Sprintf("fast /fast?%d", i)})
		add("GET /raw HTTP/1.1\r\nHost: x\r\n\r\n", answer{299, "raw"}, answer{200, "after raw"})
		add("GET /hints HTTP/1.1\r\nHost: x\r\n\r\n", answer{103, ""}, answer{200, "hinted"})
		add("GET /big HTTP/1.1\r\nHost: x\r\n\r\n", answer{200, big})
		add("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n", answer{404, "404 page not found\n"})
		add("GET /only-post HTTP/1.1\r\nHost: x\r\n\r\n", answer{405, "405 Method Not Allowed"})
		add(fmt.Sprintf("GET /std?%d HTTP/1.1\r\nHost: x\r\n\r\n", i), answer{200, fmt.Sprintf("std GET /std?%d HTTP/1.1", i)})
	}
	add("GET /fast HTTP/1.1\r\nHost: x\r\nBad Name: x\r\n\r\n", answer{400, "400 Bad Request"})
	add("GET /fast?never HTTP/1.1\r\nHost: x\r\n\r\n") // after the refusal: not answered

	c := dialRaw(t, addr)
	c.send(all.String())
	for i, w := range want {
		resp, body := c.read("GET")
		if resp.StatusCode != w.status || body != w.body {
			if len(body) > 40 {
				body = body[:40] + "..."
			}
			t.Fatalf("answer %d: %d %q, want %d and %d bytes", i, resp.StatusCode, body, w.status, len(w.body))
		}
	}
	c.closed()
}

func TestBadRequests(t *testing.T) {
	srv := testServer()
	srv.Limits.MaxHeaderBytes = 4096
	srv.MaxBodyBytes = 1 << 20
	addr := serve(t, srv)
	cases := []struct {
		name, req string
		status    int
	}{
		{"garbage", "hello\r\n\r\n", 400},
		{"bare LF", "GET /fast HTTP/1.1\nHost: x\n\n", 400},
		{"CL and TE", "POST /std/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"two CLs", "POST /std/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400},
		{"obs-fold", "GET /fast HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", 400},
		{"no Host", "GET /fast HTTP/1.1\r\n\r\n", 400},
		{"HTTP/2.0", "GET /fast HTTP/2.0\r\nHost: x\r\n\r\n", 505},
		{"gzip TE", "POST /std/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
		{"big head", "GET /fast HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 5000) + "\r\n\r\n", 431},
		{"body too long std", "POST /std/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 413},
		{"body too long fast", "POST /fast/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 413},
		{"bad chunk fast", "POST /fast/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
		{"expect other", "POST /fast/echo HTTP/1.1\r\nHost: x\r\nExpect: magic\r\nContent-Length: 1\r\n\r\na", 417},
	}
	// A well-behaved connection works throughout.
	good := dialRaw(t, addr)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.send(tc.req)
			resp, _ := c.read("GET")
			if resp.StatusCode != tc.status || !resp.Close {
				t.Fatalf("status %d close %v, want %d and close", resp.StatusCode, resp.Close, tc.status)
			}
			c.closed()
			good.t = t
			good.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, body := good.read("GET"); resp.StatusCode != 200 || body != "fast /fast" {
				t.Fatalf("other connection: %d %q", resp.StatusCode, body)
			}
		})
	}
}

func TestExpectContinue(t *testing.T) {
	addr := serve(t, testServer())
	for _, path := range []string{"/fast/echo", "/std/echo"} {
		c := dialRaw(t, addr)
		c.send("POST " + path + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
		line, err := c.br.ReadString('\n')
		if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
			t.Fatalf("%s: %q %v", path, line, err)
		}
		if blank, _ := c.br.ReadString('\n'); blank != "\r\n" {
			t.Fatalf("%s: %q after 100", path, blank)
		}
		c.send("abc")
		resp, body := c.read("POST")
		if resp.StatusCode != 200 || (body != "abc" && !strings.HasPrefix(body, "3 ")) {
			t.Fatalf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
	// net/http's client with ExpectContinueTimeout waits for the 100.
	tr := &http.Transport{ExpectContinueTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("POST", "http://"+addr+"/std/echo", strings.NewReader("hello"))
	req.Header.Set("Expect", "100-continue")
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || time.Since(start) > 4*time.Second {
		t.Fatalf("%d after %v", resp.StatusCode, time.Since(start))
	}
}

func TestHTTP10(t *testing.T) {
	addr := serve(t, testServer())
	c := dialRaw(t, addr)
	c.send("GET /fast HTTP/1.0\r\n\r\n")
	resp, body := c.read("GET")
	if body != "fast /fast" || !resp.Close {
		t.Fatalf("%q close=%v", body, resp.Close)
	}
	c.closed()

	c = dialRaw(t, addr)
	c.send("GET /std HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	resp, body = c.read("GET")
	if body != "std GET /std HTTP/1.0" || resp.Close || resp.Header.Get("Connection") != "keep-alive" {
		t.Fatalf("%q close=%v %v", body, resp.Close, resp.Header)
	}
	// A streamed answer to HTTP/1.0 ends with the connection.
	c.send("GET /std/stream?n=20 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	resp, body = c.read("GET")
	if len(body) != 20000 || !resp.Close {
		t.Fatalf("%d bytes, close=%v", len(body), resp.Close)
	}
}

func TestHalfClose(t *testing.T) {
	addr := serve(t, testServer())
	for _, path := range []string{"/fast", "/std"} {
		c := dialRaw(t, addr)
		c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		c.nc.(*net.TCPConn).CloseWrite()
		resp, body := c.read("GET")
		if resp.StatusCode != 200 || !strings.Contains(body, path[1:]) {
			t.Fatalf("%s: %d %q", path, resp.StatusCode, body)
		}
		c.closed()
	}
}

// TestTimeouts checks that the server's timeouts act on a slow head, a
// slow body and an idle connection, never early and at most a few tenths
// of a second late on an idle machine (the loops' clock ticks ten times a
// second); a loaded machine, whose loops' goroutines wait to run, makes
// them seconds late, and they are given 5 s here, well before the
// defaults (30 s, 2 min) that would act were they not applied. Each is
// timed from before the dial, before the server's clock starts: at the
// first bytes for a head or a body, after the answer for an idle wait.
func TestTimeouts(t *testing.T) {
	const d, late = 200 * time.Millisecond, 5 * time.Second
	srv := testServer()
	srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout = d, d, d
	addr := serve(t, srv)
	within := func(what string, start time.Time) {
		t.Helper()
		if took := time.Since(start); took < d || took > d+late {
			t.Errorf("%s: timed out after %v; want %v to %v", what, took, d, d+late)
		}
	}

	slow, start := dialSend(t, addr, "GET /fast HTTP/1.1\r\nHo", d)
	resp, _ := slow.read("GET")
	if resp.StatusCode != 408 {
		t.Fatalf("slow head: %d", resp.StatusCode)
	}
	slow.closed()
	within("slow head", start)

	body, start := dialSend(t, addr, "POST /fast/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc", d)
	resp, _ = body.read("POST")
	if resp.StatusCode != 408 {
		t.Fatalf("slow body: %d", resp.StatusCode)
	}
	body.closed()
	within("slow body", start)

	idle, start := dialSend(t, addr, "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n", d)
	idle.read("GET")
	idle.closed()
	within("idle connection", start)
}

// dialSend dials addr and sends s, and returns the connection and the time
// just before its dial. It dials again while the send ended first or more
// after the dial began: the server's wait for a new connection's first
// bytes (first: ReadHeaderTimeout, or IdleTimeout where that is shorter)
// may then have closed the connection before s came, as a loaded machine
// that leaves the test's goroutine unscheduled that long can make it.
func dialSend(t *testing.T, addr, s string, first time.Duration) (*rawConn, time.Time) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		start := time.Now()
		c := dialRaw(t, addr)
		c.send(s)
		if time.Since(start) < first {
			return c, start
		}
		c.nc.Close()
		if time.Now().After(deadline) {
			t.Fatalf("no send within %v of its dial in 30 s", first)
		}
	}
}

// TestSilentConnectionTimeout: a new connection that sends nothing is
// closed, without an answer, once ReadHeaderTimeout passes, where that is
// shorter than IdleTimeout, as net/http's server bounds its first read;
// kept alive after a request, a connection waits IdleTimeout. Beside
// net/http's server, which does the same.
func TestSilentConnectionTimeout(t *testing.T) {
	const header, idle = 200 * time.Millisecond, 3 * time.Second
	srv := testServer()
	srv.ReadHeaderTimeout, srv.IdleTimeout = header, idle
	std := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), ReadHeaderTimeout: header, IdleTimeout: idle}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go std.Serve(ln)
	defer std.Close()
	for _, v := range []struct{ name, addr, path string }{{"http1", serve(t, srv), "/fast"}, {"net/http", ln.Addr().String(), "/"}} {
		// From before the dial: the server's clock starts when it accepts,
		// which may be before the dial returns.
		start := time.Now()
		silent := dialRaw(t, v.addr)
		silent.closed()
		if took := time.Since(start); took < header || took >= idle {
			t.Errorf("%s: a silent connection closed after %v; want %v (ReadHeaderTimeout) to %v (IdleTimeout)", v.name, took, header, idle)
		}
		kept := dialRaw(t, v.addr)
		kept.send("GET " + v.path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		kept.read("GET")
		kept.nc.SetReadDeadline(time.Now().Add(3 * header))
		if _, err := kept.br.ReadByte(); !isTimeout(err) {
			t.Errorf("%s: a kept-alive connection ended before IdleTimeout: %v", v.name, err)
		}
	}
}

// TestWaitAfterOverdueTick: a wait that starts while the loop's tick is
// overdue, the loop having been busy, lasts its whole timeout, where it
// was timed from the last tick's clock and ended early: a connection that
// came while the loop was busy was closed before its ReadHeaderTimeout,
// or before its IdleTimeout after its answer.
func TestWaitAfterOverdueTick(t *testing.T) {
	const header, idle = 200 * time.Millisecond, 300 * time.Millisecond
	srv := testServer()
	srv.ReadHeaderTimeout, srv.IdleTimeout = header, idle
	addr := oneLoopServer(t, srv)
	for _, tc := range []struct {
		name string
		send string
		wait time.Duration // the least time from the dial to the close
	}{
		{name: "silent connection", wait: header},
		{name: "kept alive", send: "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n", wait: idle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The loop is busy for 400 ms, several ticks; the client
			// comes at 300 ms, and the loop takes it before the tick.
			busy := make(chan struct{})
			http1.SubmitOnLoop(srv, 0, func() { close(busy); time.Sleep(400 * time.Millisecond) })
			<-busy
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			c := dialRaw(t, addr)
			if _, err := io.WriteString(c.nc, tc.send); err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, c.nc); isTimeout(err) { // the answer, if any, then the close
				t.Fatal("connection still open after 10 s")
			}
			if took := time.Since(start); took < tc.wait {
				t.Errorf("closed %v after the dial; want %v at least", took, tc.wait)
			}
		})
	}
}

// A BeforeFlush of the server's Engine options is called at the end of
// the loop's iterations, beside the server's own use of the hook.
func TestEngineBeforeFlushCalled(t *testing.T) {
	var calls atomic.Int64
	srv := testServer()
	srv.Engine.BeforeFlush = func(loop int) {
		if loop == 0 {
			calls.Add(1)
		}
	}
	addr := oneLoopServer(t, srv)
	resp, err := http.Get("http://" + addr + "/fast")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if calls.Load() == 0 {
		t.Fatal("Engine.BeforeFlush was not called")
	}
}

// TestReadTimeoutFromFirstByte checks that ReadTimeout runs from a
// request's first bytes to the end of its body, as net/http's does: a
// request whose head came slowly has that much less time for its body.
// Counted from the body's start, the 408 would come ReadTimeout after the
// body was sent at least; from the first bytes it comes a quarter of it
// after, which leaves the loop three quarters of ReadTimeout (1.5 s) to
// be late by on a loaded machine.
func TestReadTimeoutFromFirstByte(t *testing.T) {
	const d = 2 * time.Second
	srv := testServer()
	srv.ReadHeaderTimeout, srv.ReadTimeout = 5*time.Second, d
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	start := time.Now() // before the first bytes, where the server's clock starts
	c.send("POST /fast/echo HTTP/1.1\r\nHost: x\r\n")
	time.Sleep(d * 3 / 4)
	bodyStart := time.Now()
	c.send("Content-Length: 10\r\n\r\nabc")
	if resp, _ := c.read("POST"); resp.StatusCode != 408 {
		t.Fatalf("slow head, slow body: %d", resp.StatusCode)
	}
	if took := time.Since(start); took < d {
		t.Errorf("timed out %v after the request's first bytes; want %v at least", took, d)
	}
	if took := time.Since(bodyStart); took >= d {
		t.Errorf("timed out %v after the body's start; want less than %v (ReadTimeout), which runs from the request's first bytes", took, d)
	}
}

// TestTimeoutsAfterIgnoredBody checks the timeouts around a body that a
// pooled handler left unread, which the server drops after its answer: a
// client that stops sending it is closed after IdleTimeout, without a 408
// after the answer; once it is dropped, the next request's head has its
// own ReadHeaderTimeout.
func TestTimeoutsAfterIgnoredBody(t *testing.T) {
	srv := testServer()
	srv.HandleFunc("POST /ignore", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	srv.ReadHeaderTimeout, srv.IdleTimeout = 300*time.Millisecond, 300*time.Millisecond
	addr := serve(t, srv)

	stalled := dialRaw(t, addr)
	stalled.send("POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n0123456789")
	if resp, body := stalled.read("POST"); resp.StatusCode != 200 || body != "ignored" {
		t.Fatalf("POST /ignore: %d %q", resp.StatusCode, body)
	}
	stalled.closed() // within IdleTimeout; no 408 (read would have parsed one)

	next := dialRaw(t, addr)
	next.send("POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n0123456789")
	if resp, _ := next.read("POST"); resp.StatusCode != 200 {
		t.Fatalf("POST /ignore: %d", resp.StatusCode)
	}
	next.send("0123456789GET /fast HTTP/1.1\r\nHo")
	if resp, _ := next.read("GET"); resp.StatusCode != 408 {
		t.Fatalf("slow head after a dropped body: %d", resp.StatusCode)
	}
	next.closed()
}

// TestReadHeaderTimeoutFromReadTimeout checks that ReadHeaderTimeout, when
// not set, is ReadTimeout, as in net/http. The head's first bytes, sent as
// the connection opens, have a second to arrive, which a loaded machine
// needs: bytes that come later find the connection closed without a 408.
func TestReadHeaderTimeoutFromReadTimeout(t *testing.T) {
	srv := testServer()
	srv.ReadTimeout = time.Second
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	start := time.Now()
	c.send("GET /fast HTTP/1.1\r\nHo")
	if resp, _ := c.read("GET"); resp.StatusCode != 408 {
		t.Fatalf("slow head: %d", resp.StatusCode)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("slow head timed out after %v; want about a second", took)
	}
}

func TestContextCancelledOnClose(t *testing.T) {
	srv := testServer()
	started := make(chan struct{})
	cancelled := make(chan error, 1)
	srv.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-r.Context().Done():
			cancelled <- r.Context().Err()
		case <-time.After(5 * time.Second):
			cancelled <- errors.New("not cancelled")
		}
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	c.nc.Close()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

func TestPanics(t *testing.T) {
	srv := testServer()
	srv.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	srv.HandleFastFunc("/fastpanic", func(w *http1.Response, r *http1.Request) { panic("boom") })
	addr := serve(t, srv)
	for _, path := range []string{"/panic", "/fastpanic"} {
		c := dialRaw(t, addr)
		c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		c.closed()
	}
	_, body := get(t, client(t), "http://"+addr+"/fast")
	if body != "fast /fast" {
		t.Fatalf("after panics: %q", body)
	}
}

// hijackEcho hijacks the connection, answers 200 with the line sent after
// the request, and hands the net.Conn to check if not nil.
func hijackEcho(t *testing.T, check func(net.Conn)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		nc, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		if check != nil {
			check(nc)
		}
		brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n")
		line, _ := brw.ReadString('\n') // sent with the request
		brw.WriteString(line)
		brw.Flush()
	}
}

func TestHijack(t *testing.T) {
	srv := testServer()
	srv.HandleFunc("/hijack", hijackEcho(t, nil))
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("GET /hijack HTTP/1.1\r\nHost: x\r\n\r\nhello\n")
	if _, body := c.read("GET"); body != "hello\n" {
		t.Fatalf("%q", body)
	}
}

func TestUnreadBody(t *testing.T) {
	srv := testServer()
	srv.HandleFunc("/ignore", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	// A small unread body is dropped and the connection goes on.
	c.send("POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := c.read("POST"); body != "ignored" {
		t.Fatal(body)
	}
	if _, body := c.read("GET"); body != "fast /fast" {
		t.Fatal(body)
	}
	// A large one closes it after the answer.
	c.send("POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n")
	if resp, _ := c.read("POST"); resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	c.closed()
}

func TestShutdownFinishesRequests(t *testing.T) {
	srv := testServer()
	release := make(chan struct{})
	started := make(chan struct{})
	srv.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		io.WriteString(w, "done")
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started
	idle := dialRaw(t, addr)
	idle.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
	idle.read("GET")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		srv.Shutdown(context.Background())
	}()
	idle.closed()
	close(release)
	resp, body := c.read("GET")
	if body != "done" || !resp.Close {
		t.Fatalf("%q close=%v", body, resp.Close)
	}
	wg.Wait()
}

// Shutdown does not wait for the end of a body a handler left unread:
// the answer held for it goes out at once, with "Connection: close".
func TestShutdownSendsHeldAnswer(t *testing.T) {
	srv := testServer()
	answered := make(chan struct{})
	srv.HandleFunc("/unread", func(w http.ResponseWriter, r *http.Request) {
		defer close(answered)
		io.WriteString(w, "ignored")
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("POST /unread HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
	<-answered
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if resp, body := c.read("POST"); body != "ignored" || !resp.Close {
		t.Fatalf("answer %q close=%v; want %q, Connection: close", body, resp.Close, "ignored")
	}
	c.closed()
}

func TestCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	addr := serve(t, testServer())
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("curl", append([]string{"-sS", "--max-time", "10"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got := run("http://"+addr+"/fast", "http://"+addr+"/std"); got != "fast /faststd GET /std HTTP/1.1" {
		t.Fatalf("GET: %q", got)
	}
	if got := run("--http1.0", "http://"+addr+"/std"); got != "std GET /std HTTP/1.0" {
		t.Fatalf("HTTP/1.0: %q", got)
	}
	if got := run("--data-binary", "hello", "http://"+addr+"/fast/echo"); got != "hello" {
		t.Fatalf("POST: %q", got)
	}
	if got := run("-H", "Transfer-Encoding: chunked", "--data-binary", "hello", "http://"+addr+"/std/echo"); got != fmt.Sprintf("5 %x", sha256.Sum256([]byte("hello"))) {
		t.Fatalf("chunked POST: %q", got)
	}
	big := strings.Repeat("z", 2<<20)
	cmd := exec.Command("curl", "-sS", "--max-time", "10", "--data-binary", "@-", "http://"+addr+"/std/echo")
	cmd.Stdin = strings.NewReader(big)
	out, err := cmd.Output()
	if err != nil || string(out) != fmt.Sprintf("%d %x", len(big), sha256.Sum256([]byte(big))) {
		t.Fatalf("large POST (with Expect: 100-continue): %q %v", out, err)
	}
	if got := run("-o", "/dev/null", "-w", "%{http_code} %{size_download}", "http://"+addr+"/std/stream?n=100"); got != "200 100000" {
		t.Fatalf("stream: %q", got)
	}
}

// A request arriving when Shutdown begins, its head or its body, is
// answered once it has all come (with Connection: close) before the
// connection closes, as net/http's Shutdown waits for a connection that
// has read part of a request.
func TestShutdownAnswersArrivingRequest(t *testing.T) {
	srv := testServer()
	srv.HandleFastFunc("POST /up", func(w *http1.Response, r *http1.Request) { fmt.Fprintf(w, "got %d", len(r.Body)) })
	addr, active, idle := shutdownProbes(t, srv)
	body := dialRaw(t, addr)
	body.send("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabcde")
	head := dialRaw(t, addr)
	head.send("POST /up HTTP/1.1\r\nHost: x\r\nConte")
	active(2) // both have arrived in part
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	idle.closedWithin(30 * time.Second) // Shutdown has begun on the loop
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v with two requests arriving", err)
	default:
	}
	body.send("fghij")
	head.send("nt-Length: 3\r\n\r\nabc")
	for _, tc := range []struct {
		c    *rawConn
		want string
	}{{body, "got 10"}, {head, "got 3"}} {
		resp, got := tc.c.read("POST")
		if got != tc.want || !resp.Close {
			t.Errorf("answer %q, close=%v; want %q with Connection: close", got, resp.Close, tc.want)
		}
		tc.c.closed()
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// ReadTimeout runs from each request's first byte: a request whose head
// took a while times out on time, though another connection of its loop
// began to wait for its body later. Its 408 comes before the other's
// deadline, at which the other's place ahead of it in a list in the order
// of their waits' starts would let it come; 1.5 s apart, which leaves the
// loop that long to be late by on a loaded machine.
func TestReadTimeoutOwnDeadline(t *testing.T) {
	const d = 2 * time.Second
	srv := testServer()
	srv.ReadTimeout, srv.ReadHeaderTimeout = d, d
	srv.Engine.Loops = 1
	srv.HandleFastFunc("POST /up", func(w *http1.Response, r *http1.Request) { w.WriteString("ok") })
	addr := serve(t, srv)
	slow := dialRaw(t, addr)
	start := time.Now()
	slow.send("POST /up HTTP/1.1\r\nHo") // its request begins
	time.Sleep(1500 * time.Millisecond)
	other := dialRaw(t, addr)
	otherStart := time.Now()
	other.send("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n") // waits for its body from 1.5 s
	time.Sleep(200 * time.Millisecond)
	slow.send("st: x\r\nContent-Length: 10\r\n\r\n") // waits for its body from 1.7 s, its deadline at 2 s
	resp, _ := slow.read("POST")
	if took, sinceOther := time.Since(start), time.Since(otherStart); resp.StatusCode != 408 || took < d || sinceOther >= d {
		t.Fatalf("%d after %v, %v after the other's first byte; want 408 ReadTimeout (%v) after the first byte, before the other's deadline", resp.StatusCode, took, sinceOther, d)
	}
	if resp, _ := other.read("POST"); resp.StatusCode != 408 {
		t.Fatalf("the other connection: %d; want 408", resp.StatusCode)
	}
}

// No 1xx answer goes to an HTTP/1.0 client, which would take it for the
// final one (RFC 9110 section 15.2), from either kind of handler; an
// HTTP/1.1 client gets it.
func TestNoInformationalToHTTP10(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFastFunc("GET /fast", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Link", "</a.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteString("final")
	})
	srv.HandleFunc("GET /std", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</a.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "final")
	})
	addr := serve(t, srv)
	for _, path := range []string{"/fast", "/std"} {
		for _, minor := range []string{"0", "1"} {
			c := dialRaw(t, addr)
			c.send("GET " + path + " HTTP/1." + minor + "\r\nHost: x\r\nConnection: close\r\n\r\n")
			c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			b, _ := io.ReadAll(c.br)
			if got := strings.Contains(string(b), " 103 "); got != (minor == "1") || !strings.HasSuffix(string(b), "final") {
				t.Errorf("%s, HTTP/1.%s: %q", path, minor, b)
			}
		}
	}
}

// Two Shutdowns under way at once both return once the request arriving
// when they began is answered and its connection closed.
func TestShutdownTwiceArriving(t *testing.T) {
	srv := testServer()
	srv.HandleFastFunc("POST /up", func(w *http1.Response, r *http1.Request) { fmt.Fprintf(w, "got %d", len(r.Body)) })
	addr, active, idle := shutdownProbes(t, srv)
	c := dialRaw(t, addr)
	c.send("POST /up HTTP/1.1\r\nHost: x\r\nConte")
	active(1) // the head has arrived in part
	done := make(chan error, 2)
	for range 2 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done <- srv.Shutdown(ctx)
		}()
	}
	idle.closedWithin(30 * time.Second) // a Shutdown has begun on the loop
	time.Sleep(200 * time.Millisecond)  // and the other, mostly
	c.send("nt-Length: 3\r\n\r\nabc")
	if resp, got := c.read("POST"); got != "got 3" || !resp.Close {
		t.Fatalf("answer %q close=%v", got, resp.Close)
	}
	c.closed()
	start := time.Now()
	for range 2 {
		if err := <-done; err != nil || time.Since(start) > 5*time.Second {
			t.Fatalf("Shutdown returned %v after %v, once the arriving request was answered", err, time.Since(start))
		}
	}
}

// shutdownProbes serves srv on one loop, with a ConnState hook, and
// returns its address, active, which waits until n more connections' requests began
// to arrive (StateActive), and an idle connection, which Shutdown closes
// as it begins on the loop: the Shutdown tests wait for them, where a
// loaded machine may take longer than any sleep.
func shutdownProbes(t *testing.T, srv *http1.Server) (addr string, active func(n int), idle *rawConn) {
	t.Helper()
	arrived := make(chan struct{}, 64)
	srv.ConnState = func(c *evloop.Conn, st http.ConnState) {
		if st == http.StateActive {
			select {
			case arrived <- struct{}{}:
			default:
			}
		}
	}
	srv.Engine.Loops = 1
	active = func(n int) {
		t.Helper()
		for range n {
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
				t.Fatal("no request's bytes arrived in 30 s")
			}
		}
	}
	addr = serve(t, srv)
	idle = dialRaw(t, addr)
	idle.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
	idle.read("GET")
	active(1)
	return addr, active, idle
}

// closedWithin checks that the server closed the connection within d.
func (c *rawConn) closedWithin(d time.Duration) {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(d))
	if n, err := c.br.Read(make([]byte, 1)); err == nil {
		c.t.Fatalf("connection still open: read %d bytes", n)
	} else if isTimeout(err) {
		c.t.Fatalf("connection still open after %v", d)
	}
}

// Close during a Shutdown that waits for an arriving request ends that
// Shutdown at once, as net/http's Close does.
func TestCloseDuringShutdown(t *testing.T) {
	srv := testServer()
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("POST /fast/echo HTTP/1.1\r\nHost: x\r\nConte")
	time.Sleep(100 * time.Millisecond)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	time.Sleep(200 * time.Millisecond)
	srv.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown still waiting 10 s after Close")
	}
}
