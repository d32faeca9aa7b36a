package http1_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/evloop/evloop/http1"
)

// A fast handler's fields are the answer's, but for those the server
// frames the body with, and none can split the answer; a Content-Type it
// did not set is sniffed; Status is 200 until WriteHeader, which panics
// past 100-999 as net/http's does.
func TestFastResponseFields(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFastFunc("GET /fields", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Content-Length", "99")
		w.AddHeader("Transfer-Encoding", "chunked")
		w.AddHeader("Date", "Tue, 01 Jan 2030 00:00:00 GMT")
		w.AddHeader("X-Split", "a\r\nX-Injected: 1")
		w.AddHeader("Bad Name", "x")
		w.AddHeader("X-Status-Before", fmt.Sprint(w.Status()))
		for _, code := range []int{99, 1000} {
			func() {
				defer func() {
					if recover() != nil {
						w.AddHeader("X-Panicked", fmt.Sprint(code))
					}
				}()
				w.WriteHeader(code)
			}()
		}
		w.WriteHeader(201)
		w.AddHeader("X-Status-After", fmt.Sprint(w.Status()))
		w.WriteString("hello")
	})
	srv.HandleFastFunc("GET /head", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Content-Length", "1234")
	})
	c := dialRaw(t, serve(t, srv))

	c.send("GET /fields HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body := c.read("GET")
	h := resp.Header
	for _, tc := range []struct{ name, got, want string }{
		{"status", fmt.Sprint(resp.StatusCode), "201"},
		{"body", body, "hello"},
		{"Content-Length", fmt.Sprint(h["Content-Length"]), "[5]"},
		{"Content-Type", h.Get("Content-Type"), "text/plain; charset=utf-8"}, // sniffed
		{"Transfer-Encoding", fmt.Sprint(resp.TransferEncoding), "[]"},
		{"Date", fmt.Sprint(h["Date"]), "[Tue, 01 Jan 2030 00:00:00 GMT]"},
		{"X-Split", fmt.Sprint(h["X-Split"]), "[a  X-Injected: 1]"},
		{"X-Injected", fmt.Sprint(h["X-Injected"]), "[]"},
		{"Bad Name", fmt.Sprint(h["Bad Name"]), "[]"}, // and read would have failed on it
		{"X-Panicked", fmt.Sprint(h["X-Panicked"]), "[99 1000]"},
		{"X-Status-Before", h.Get("X-Status-Before"), "200"},
		{"X-Status-After", h.Get("X-Status-After"), "201"},
	} {
		if tc.got != tc.want {
			t.Errorf("GET /fields: %s = %s; want %s (header %v)", tc.name, tc.got, tc.want, h)
		}
	}

	c.send("HEAD /head HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := c.read("HEAD"); resp.ContentLength != 1234 || body != "" {
		t.Errorf("HEAD /head: Content-Length %d, body %q; want 1234, none", resp.ContentLength, body)
	}
}

// A fast handler's answer with a Content-Encoding gets no sniffed
// Content-Type, as a pooled handler's does not and net/http's server's
// does not (Issue 31753): it would name the encoded bytes' type, and a
// browser would save "application/x-gzip" rather than show the page.
func TestFastNoSniffWithContentEncoding(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFastFunc("GET /gzip", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Content-Encoding", "gzip")
		w.WriteString("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")
	})
	c := dialRaw(t, serve(t, srv))
	c.send("GET /gzip HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := c.read("GET"); resp.Header["Content-Type"] != nil {
		t.Errorf("GET /gzip: Content-Type %q sniffed; want none", resp.Header["Content-Type"])
	}
}

// A Server field a fast handler adds replaces the server's Name, as its
// Date field replaces the server's and as a pooled handler's Server field
// does, where the answer carried both.
func TestFastServerField(t *testing.T) {
	srv := &http1.Server{Name: "evloop"}
	srv.HandleFastFunc("GET /", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Server", "mine")
		if r.Query() != nil {
			w.WriteHeader(http.StatusAccepted) // not the 200 head the loop keeps ready
		}
	})
	c := dialRaw(t, serve(t, srv))
	for _, path := range []string{"/", "/?202"} {
		c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, _ := c.read("GET"); fmt.Sprint(resp.Header["Server"]) != "[mine]" {
			t.Errorf("GET %s: Server %q; want [mine]", path, resp.Header["Server"])
		}
	}
}

// A fast handler's 304 carries no Content-Type, as net/http's server
// drops it from one (RFC 9110 section 15.4.5: a 304 carries no
// representation metadata but what guides a cache's update), where it
// went out as the handler added it.
func TestFastNotModifiedDropsContentType(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFastFunc("GET /", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("ETag", `"v1"`)
		w.AddHeader("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotModified)
	})
	c := dialRaw(t, serve(t, srv))
	c.send("GET / HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"v1\"\r\n\r\n")
	resp, _ := c.read("GET")
	if resp.StatusCode != http.StatusNotModified || resp.Header["Content-Type"] != nil || resp.Header.Get("ETag") != `"v1"` {
		t.Errorf("304: status %d, Content-Type %q, ETag %q; want no Content-Type, the ETag", resp.StatusCode, resp.Header["Content-Type"], resp.Header.Get("ETag"))
	}
}
