package http1_test

import (
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
// go at once, and the connection closes. A body that is all here is
// dropped with the request, and the connection kept.
func TestOwnAnswerSkipsBody(t *testing.T) {
	srv := &http1.Server{MaxBodyBytes: 1 << 10}
	srv.HandleFastFunc("GET /get", func(w *http1.Response, r *http1.Request) { w.WriteString("get") })
	addr := serve(t, srv)
	for _, tc := range []struct {
		head   string
		status int
	}{
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", 404},
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", 404},
		{"POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n", 404},
		{"POST /get HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 405},
	} {
		c := dialRaw(t, addr)
		c.send(tc.head)
		resp, _ := c.read("POST")
		if resp.StatusCode != tc.status || !resp.Close {
			t.Errorf("%q: %d, close=%v; want %d with Connection: close", tc.head, resp.StatusCode, resp.Close, tc.status)
		}
		c.closed()
	}
	c := dialRaw(t, addr)
	c.send("POST /none HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	if resp, _ := c.read("POST"); resp.StatusCode != 404 || resp.Close {
		t.Fatalf("a body all here: %d, close=%v; want 404, kept", resp.StatusCode, resp.Close)
	}
	if _, resp, body := c.get("/get"); resp.StatusCode != 200 || body != "get" {
		t.Fatalf("next request: %d %q", resp.StatusCode, body)
	}
}
