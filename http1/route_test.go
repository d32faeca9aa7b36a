package http1_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
)

// Of the patterns that match a request's method and path, the longest
// path wins: a path registered for POST alone, under a "GET /" subtree,
// is served by "GET /" for a GET, as http.ServeMux serves it. A path no
// pattern of the method matches is 405, allowing the methods of every
// pattern that matches it.
func TestRouteSubtreeForMethod(t *testing.T) {
	srv := &http1.Server{}
	answer := func(s string) http1.FastHandlerFunc {
		return func(w *http1.Response, r *http1.Request) { w.WriteString(s) }
	}
	srv.HandleFastFunc("POST /api", answer("post api"))
	srv.HandleFastFunc("GET /", answer("root"))
	srv.HandleFastFunc("PUT /static/", answer("put static"))
	srv.HandleFastFunc("DELETE /static/", answer("delete static"))
	srv.HandleFastFunc("PATCH /static/x", answer("patch x"))
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	for _, tc := range []struct {
		method, path string
		status       int
		body, allow  string
	}{
		{"GET", "/api", 200, "root", ""},
		{"POST", "/api", 200, "post api", ""},
		{"GET", "/static/x", 200, "root", ""},
		{"PUT", "/static/x", 200, "put static", ""},
		{"PATCH", "/static/x", 200, "patch x", ""},
		{"POST", "/static/x", 405, "", "DELETE, GET, HEAD, PATCH, PUT"},
		{"POST", "/static/y", 405, "", "DELETE, GET, HEAD, PUT"},
		{"PUT", "/api", 405, "", "GET, HEAD, POST"},
	} {
		c.send(tc.method + " " + tc.path + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
		resp, body := c.read(tc.method)
		if resp.StatusCode != tc.status || tc.status == 200 && body != tc.body || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d %q, Allow %q; want %d %q, Allow %q", tc.method, tc.path,
				resp.StatusCode, body, resp.Header.Get("Allow"), tc.status, tc.body, tc.allow)
		}
	}
}

// The server's own answers (404, 405) do not wait for a Content-Length
// body still to come, nor ask for it with 100 Continue, nor refuse it as
// too long: they go at once, and the body is dropped to reach the next
// request, as net/http's server drops one its handler did not read: up to
// 256 KiB of it (a chunked one is dropped before its answer goes:
// TestOwnAnswerDropsChunkedBody). A longer one, a malformed one, or one
// the client sends only after 100 Continue closes the connection after
// the answer. Where the whole request comes at once, net/http's server
// with a mux of the same routes answers alike; it answers only after it
// has read the body (up to 256 KiB).
func TestOwnAnswerSkipsBody(t *testing.T) {
	ev := &http1.Server{MaxBodyBytes: 1 << 10}
	ev.HandleFastFunc("GET /get", func(w *http1.Response, r *http1.Request) { w.WriteString("get") })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /get", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "get") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	evAddr := serve(t, ev)
	const chunked = "5\r\nhello\r\n0\r\n\r\n"
	for _, tc := range []struct {
		head, body string // body is sent after the answer
		status     int
		kept       bool
		both       bool // net/http's server is asked too
	}{
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n" + strings.Repeat("a", 100), "", 404, true, true},
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n" + strings.Repeat("a", 2000), "", 404, true, true},
		{"POST /get HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked, "", 405, true, true},
		{"POST /get HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n", "", 405, false, true},
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", "", 404, false, false},
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", strings.Repeat("a", 100), 404, true, false},
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n", "", 404, false, false},
	} {
		servers := []twin{{"evloop", evAddr}}
		if tc.both {
			servers = append(servers, twin{"net/http", ln.Addr().String()})
		}
		for _, tw := range servers {
			c := dialRaw(t, tw.addr)
			c.send(tc.head)
			resp, _ := c.read("POST")
			if resp.StatusCode != tc.status || resp.Close == tc.kept {
				t.Fatalf("%s, %q: %d, close=%v; want %d, close=%v", tw.name, tc.head, resp.StatusCode, resp.Close, tc.status, !tc.kept)
			}
			if !tc.kept {
				c.closed()
				continue
			}
			c.send(tc.body)
			if _, resp, body := c.get("/get"); resp.StatusCode != 200 || body != "get" {
				t.Fatalf("%s, %q: the next request: %d %q", tw.name, tc.head, resp.StatusCode, body)
			}
		}
	}
}

// sendPieces writes pieces to c one at a time, a little apart, so that
// the server reads them apart; it stops at the first failed write (the
// server may close before the end). The returned channel closes when it
// is done.
func (c *rawConn) sendPieces(pieces ...string) <-chan struct{} {
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for _, p := range pieces {
			if _, err := io.WriteString(c.nc, p); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return sent
}

// chunks returns n chunks of size bytes each, chunked.
func chunks(n, size int) []string {
	chunk := fmt.Sprintf("%x\r\n%s\r\n", size, strings.Repeat("a", size))
	pieces := make([]string, n)
	for i := range pieces {
		pieces[i] = chunk
	}
	return pieces
}

// The server's own answer (405 here) to a request whose chunked body is
// still to come waits while the body is dropped as it arrives, as
// net/http's server drops a body its handler left unread and then
// answers: the connection is kept, for the next request, when the body
// ends within 256 KiB; past them, or with bad framing, the answer says
// "Connection: close" and the connection closes.
func TestOwnAnswerDropsChunkedBody(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /get", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "get") })
	twins := serveTwins(t, mux, func(s *http1.Server) {
		s.Handler = nil
		s.HandleFastFunc("GET /get", func(w *http1.Response, r *http1.Request) { w.WriteString("get") })
	}, nil)
	const head = "POST /get HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	tests := []struct {
		name   string
		pieces []string // sent after head, apart
		kept   bool
	}{
		{"small", []string{"5\r\nhello\r\n", "3\r\nab", "c\r\n", "0\r\n", "X-Sum: 1\r\n\r\n"}, true},
		{"256 KiB", append(chunks(16, 16<<10), "0\r\n\r\n"), true},
		{"past 256 KiB", append(chunks(17, 16<<10), "0\r\n\r\n"), false},
		{"malformed size", []string{"5\r\nhello\r\n", "zz\r\nhello\r\n0\r\n\r\n"}, false},
	}
	for _, s := range twins {
		t.Run(s.name, func(t *testing.T) {
			for _, tc := range tests {
				c := dialRaw(t, s.addr)
				sent := c.sendPieces(append([]string{head}, tc.pieces...)...)
				if resp, _ := c.read("POST"); resp.StatusCode != 405 || resp.Close == tc.kept {
					t.Fatalf("%s: %d, close=%v; want 405, close=%v", tc.name, resp.StatusCode, resp.Close, !tc.kept)
				}
				<-sent
				if !tc.kept {
					c.closed()
					continue
				}
				if _, resp, body := c.get("/get"); resp.StatusCode != 200 || body != "get" {
					t.Fatalf("%s: the next request: %d %q; want 200 %q", tc.name, resp.StatusCode, body, "get")
				}
			}
		})
	}
}

// The server's own answer held for a chunked body's end goes out once
// the body ends, before the answer to a request pipelined right behind
// it; when the body stalls past ReadTimeout, it goes with "Connection:
// close" (no 408 after it), as net/http's server's; and Shutdown sends it
// at once, also saying the connection closes.
func TestOwnAnswerHeldForChunkedBody(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /get", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "get") })
	cfg := func(s *http1.Server) {
		s.Handler = nil
		s.ReadTimeout = time.Second // the head, sent as the connection opens, within it
		s.HandleFastFunc("GET /get", func(w *http1.Response, r *http1.Request) { w.WriteString("get") })
	}
	twins := serveTwins(t, mux, cfg, func(s *http.Server) { s.ReadTimeout = time.Second })
	// The body that ends comes within a ReadTimeout of 30 s, which its
	// pieces, 20 ms apart, meet on a loaded machine too.
	patient := serveTwins(t, mux, func(s *http1.Server) { cfg(s); s.ReadTimeout = 30 * time.Second },
		func(s *http.Server) { s.ReadTimeout = 30 * time.Second })
	const head = "POST /get HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	for i, s := range twins {
		t.Run(s.name+"/pipelined", func(t *testing.T) {
			s := patient[i]
			c := dialRaw(t, s.addr)
			<-c.sendPieces(head+"5\r\nhello\r\n", "0\r\n\r\nGET /get HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, _ := c.read("POST"); resp.StatusCode != 405 || resp.Close {
				t.Fatalf("%d, close=%v; want 405, kept", resp.StatusCode, resp.Close)
			}
			if resp, body := c.read("GET"); resp.StatusCode != 200 || body != "get" {
				t.Fatalf("the pipelined request: %d %q; want 200 %q", resp.StatusCode, body, "get")
			}
		})
		t.Run(s.name+"/stalled", func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send(head + "5\r\nhello\r\n")
			if resp, _ := c.read("POST"); resp.StatusCode != 405 || !resp.Close {
				t.Fatalf("%d, close=%v; want 405, closing", resp.StatusCode, resp.Close)
			}
			c.closed()
		})
	}
	t.Run("evloop/shutdown", func(t *testing.T) {
		srv := &http1.Server{}
		cfg(srv)
		srv.ReadTimeout = time.Minute
		addr := serve(t, srv)
		c := dialRaw(t, addr)
		c.send(head + "5\r\nhello\r\n")
		time.Sleep(100 * time.Millisecond) // the answer is held
		shut := make(chan error, 1)
		go func() { shut <- srv.Shutdown(context.Background()) }()
		if resp, _ := c.read("POST"); resp.StatusCode != 405 || !resp.Close {
			t.Fatalf("%d, close=%v; want 405, closing", resp.StatusCode, resp.Close)
		}
		c.closed()
		if err := recvErr(t, shut); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	})
}

// A fast handler's Request.Host is an absolute-form target's authority,
// not the Host field, as RFC 9112 section 3.2.2 has an origin server use
// it and as net/http's server makes Request.Host.
func TestFastHostOfAbsoluteTarget(t *testing.T) {
	ev := &http1.Server{}
	ev.HandleFastFunc("/", func(w *http1.Response, r *http1.Request) { w.Write(r.Host) })
	evAddr := serve(t, ev)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Host) })}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	for _, tc := range []struct{ target, host, want string }{
		{"http://a.example/p", "b.example", "a.example"},
		{"http://u:p@a.example:8080/p?q=1", "b.example", "a.example:8080"},
		{"http://a.example", "b.example", "a.example"},
		{"http:///p", "b.example", "b.example"},
		{"/p", "b.example", "b.example"},
		// A "://" in a query or a path is no authority. (A target with
		// no path, the first and third, matches no route here: 404.)
		{"http:foo?u=http://evil/", "good", "good"},
		{"http:/x?u=http://evil/", "good", "good"},
		{"a:b://evil/", "good", "good"},
		{"http://a.example?u=http://evil/", "good", "a.example"},
	} {
		for _, tw := range []twin{{"evloop", evAddr}, {"net/http", ln.Addr().String()}} {
			c := dialRaw(t, tw.addr)
			c.send("GET " + tc.target + " HTTP/1.1\r\nHost: " + tc.host + "\r\n\r\n")
			resp, body := c.read("GET")
			if tw.name == "evloop" && resp.StatusCode == 404 && !strings.HasPrefix(tc.target, "http:/") {
				continue
			}
			if resp.StatusCode != 200 || body != tc.want {
				t.Errorf("%s: GET %s, Host %s: %d %q; want %q", tw.name, tc.target, tc.host, resp.StatusCode, body, tc.want)
			}
		}
	}
}

// A fast route's chunked body arriving in pieces is read whole before its
// handler runs, whether or not the handler looks at it (up to
// MaxBodyBytes, past 256 KiB too): the connection is kept for the next
// request. Bad framing is 400, and the connection closes.
func TestFastChunkedBodyInPieces(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFastFunc("/fast", func(w *http1.Response, r *http1.Request) { w.WriteString("fast") })
	addr := serve(t, srv)
	const head = "POST /fast HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	tests := []struct {
		name   string
		pieces []string
		status int
	}{
		{"small", []string{"5\r\nhello\r\n", "3\r\nab", "c\r\n", "0\r\n\r\n"}, 200},
		{"past 256 KiB", append(chunks(17, 16<<10), "0\r\n\r\n"), 200},
		{"malformed size", []string{"5\r\nhello\r\n", "zz\r\nhello\r\n0\r\n\r\n"}, 400},
	}
	for _, tc := range tests {
		c := dialRaw(t, addr)
		sent := c.sendPieces(append([]string{head}, tc.pieces...)...)
		resp, _ := c.read("POST")
		<-sent
		if resp.StatusCode != tc.status || resp.Close != (tc.status != 200) {
			t.Fatalf("%s: %d, close=%v; want %d, close=%v", tc.name, resp.StatusCode, resp.Close, tc.status, tc.status != 200)
		}
		if tc.status != 200 {
			c.closed()
			continue
		}
		if _, resp, body := c.get("/fast"); resp.StatusCode != 200 || body != "fast" {
			t.Fatalf("%s: the next request: %d %q; want 200 %q", tc.name, resp.StatusCode, body, "fast")
		}
	}
}

// Routes match a path as http.ServeMux matches it: percent-decoded, an
// escaped slash staying within its segment; a path that is not clean
// (".", ".." or empty segments) is redirected to its clean form with 301,
// its query kept; a malformed escape is 400. Beside ServeMux with the same
// patterns, where a path spelt otherwise reached another route than its
// handler's r.URL.Path names ("/%61dmin/", "/x/../admin/" past "/admin/").
func TestRoutePathAsServeMux(t *testing.T) {
	patterns := []string{"/admin/", "/a/", "/", "/exact"}
	srv := &http1.Server{}
	mux := http.NewServeMux()
	for _, p := range patterns {
		srv.HandleFastFunc(p, func(w *http1.Response, r *http1.Request) { w.WriteString(p) })
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, p) })
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	std := &http.Server{Handler: mux}
	go std.Serve(ln)
	defer std.Close()
	addr := serve(t, srv)
	ours, theirs := dialRaw(t, addr), dialRaw(t, ln.Addr().String())
	for _, target := range []string{
		"/admin/secret", "/%61dmin/secret", "/x/../admin/secret", "/x/..%2Fadmin/secret",
		"//admin/secret", "/admin/./secret", "/admin/secret/..", "/x/../y?q=1&r=%2F",
		"/a%2Fb", "/a/b", "/%2561dmin/", "/exact", "/%65xact", "/exact/", "/.well-known/x",
		"/%zz", "/admin/%", "/a/b/.", "/a/b/..", "/..", "/.", "/a/./", "/admin/..", "/admin/.",
		"/a/b/../../../c", "/a//", "/a%2F..", "/%2F/", "/a/%2e%2e/admin/", "/admin", "/a", "/exact/..", "/x/../a?q",
	} {
		var got, want string
		for _, side := range []struct {
			c   *rawConn
			out *string
		}{{ours, &got}, {theirs, &want}} {
			side.c.send("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, body := side.c.read("GET")
			if resp.StatusCode != 200 {
				body = ""
			}
			*side.out = fmt.Sprintf("%d %q Location %q", resp.StatusCode, body, resp.Header.Get("Location"))
			if resp.Close {
				if side.c == ours {
					ours = dialRaw(t, addr)
				} else {
					theirs = dialRaw(t, ln.Addr().String())
				}
			}
		}
		if got != want {
			t.Errorf("GET %s: %s; net/http's ServeMux %s", target, got, want)
		}
	}
	// ServeMux escapes an escaped path's "%" again in the Location
	// ("/%2561dmin/"), naming another path.
	ours.send("GET /x/../%61dmin/ HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := ours.read("GET"); resp.StatusCode != 307 || resp.Header.Get("Location") != "/%61dmin/" {
		t.Errorf("GET /x/../%%61dmin/: %d, Location %q; want 307 to /%%61dmin/", resp.StatusCode, resp.Header.Get("Location"))
	}

	// A server without routes hands Handler the path as it came, as
	// net/http's server does.
	bare := &http1.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) })}
	c := dialRaw(t, serve(t, bare))
	c.send("GET /x/../y HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := c.read("GET"); resp.StatusCode != 200 || body != "/x/../y" {
		t.Errorf("GET /x/../y without routes: %d %q; want 200 /x/../y", resp.StatusCode, body)
	}
}
