package http1_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

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

// The server's own answers (404, 405) do not wait for a body still to
// come, nor ask for it with 100 Continue, nor refuse it as too long: they
// go at once, and the body is dropped to reach the next request, as
// net/http's server drops one its handler did not read: up to 256 KiB of
// it. A longer one, one the client sends only after 100 Continue, or a
// chunked one not all here (its length unknown) closes the connection
// after the answer. Where the whole request comes at once, net/http's
// server with a mux of the same routes answers alike; it answers only
// after it has read the body (up to 256 KiB), and so keeps a connection
// whose chunked body comes later.
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
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", "", 404, false, false},
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", strings.Repeat("a", 100), 404, true, false},
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n", "", 404, false, false},
		{"POST /get HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", "", 405, false, false},
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
