package http1_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/http1"
)

// A client that pipelines more requests than the engine may queue answers
// for gets every answer, in order: the server answers no more while the
// connection's outbound queue is past its high-water mark, and goes on as
// the client reads.
func TestPipelinedAnswersPastTheOutboundBound(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	srv := &http1.Server{Engine: evloop.Options{HighWater: 256 << 10, MaxOutbound: 1 << 20}}
	srv.HandleFastFunc("/big", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("X-Req", string(r.Query()))
		w.WriteString(big)
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	const n = 200 // 12.5 MiB of answers, for a 1 MiB bound
	var reqs strings.Builder
	for i := range n {
		fmt.Fprintf(&reqs, "GET /big?%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
	}
	c.send(reqs.String())
	for i := range n {
		resp, body := c.read("GET")
		if got := resp.Header.Get("X-Req"); got != fmt.Sprint(i) || len(body) != len(big) {
			t.Fatalf("answer %d: for request %q, %d bytes; want request %d, %d bytes", i, got, len(body), i, len(big))
		}
	}
	c.send("GET /big?last HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, _ := c.read("GET"); resp.Header.Get("X-Req") != "last" {
		t.Fatalf("answer after the pipeline: for request %q", resp.Header.Get("X-Req"))
	}
}

// An answer the outbound queue cannot take at all closes the connection
// after the answers before it, rather than leave the client waiting for
// it or give it the next one.
func TestAnswerPastTheOutboundBoundCloses(t *testing.T) {
	srv := &http1.Server{Engine: evloop.Options{MaxOutbound: 1 << 20}}
	srv.HandleFastFunc("/size", func(w *http1.Response, r *http1.Request) {
		var n int
		fmt.Sscan(string(r.Query()), &n)
		w.WriteString(strings.Repeat("x", n))
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("GET /size?10 HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /size?2000000 HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /size?20 HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := c.read("GET"); len(body) != 10 {
		t.Fatalf("first answer: %d bytes; want 10", len(body))
	}
	c.closed()
}

// A fast route's chunked body within the limit is taken whatever its
// chunks' framing adds: the connection keeps the decoded body, not the
// chunks as they came (1-byte chunks are six times the body on the wire,
// past what the engine lets a connection buffer).
func TestFastChunkedBodyOfSmallChunks(t *testing.T) {
	const size = 60 << 10
	srv := &http1.Server{MaxBodyBytes: 64 << 10}
	srv.HandleFastFunc("/fast", func(w *http1.Response, r *http1.Request) {
		fmt.Fprintf(w, "%d %t", len(r.Body), strings.Count(string(r.Body), "a") == len(r.Body))
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	var b strings.Builder
	b.WriteString("POST /fast HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	for range size {
		b.WriteString("1\r\na\r\n")
	}
	b.WriteString("0\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
	go io.WriteString(c.nc, b.String())
	if resp, body := c.read("POST"); resp.StatusCode != 200 || body != fmt.Sprint(size, " true") {
		t.Fatalf("answer %d %q; want 200 %q", resp.StatusCode, body, fmt.Sprint(size, " true"))
	}
	if _, body := c.read("GET"); body != "0 true" {
		t.Fatalf("next answer %q; want %q", body, "0 true")
	}
}

// A fast handler's Connection field is the server's to write: close once,
// and the connection closed; keep-alive once, for HTTP/1.0.
func TestFastConnectionField(t *testing.T) {
	srv := &http1.Server{}
	srv.HandleFastFunc("/conn", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("Connection", string(r.Query()))
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("GET /conn?keep-alive HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	if resp, _ := c.read("GET"); len(resp.Header.Values("Connection")) != 1 || resp.Close {
		t.Fatalf("HTTP/1.0 keep-alive: Connection %q, close %t; want one keep-alive", resp.Header.Values("Connection"), resp.Close)
	}
	// net/http's parser drops Connection: close: read the bytes.
	c.send("GET /conn?close HTTP/1.1\r\nHost: x\r\n\r\nGET /conn HTTP/1.1\r\nHost: x\r\n\r\n")
	rest, err := io.ReadAll(c.br)
	if err != nil || strings.Count(string(rest), "HTTP/1.1 ") != 1 || strings.Count(string(rest), "Connection: close\r\n") != 1 {
		t.Fatalf("close: read %q, %v; want one answer with one Connection: close, then EOF", rest, err)
	}
}
