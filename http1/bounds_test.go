package http1_test

import (
	"fmt"
	"io"
	"net/http"
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

// Small answers batched for one pipelined burst go out whatever room
// the outbound queue has left under its bound: the batch is queued once
// it reaches the high-water mark, and the rest of the burst is answered
// as the client reads, where a batch that the bound could not take whole
// was dropped and the connection closed. A malformed request at the end
// of the burst gets its 400 after them.
func TestPipelinedBatchNearTheOutboundBound(t *testing.T) {
	const (
		highWater = 200 << 10
		bigSize   = 190 << 10 // queued alone, under the high-water mark
		small     = 40        // answers of 1 KiB, batched: 40 KiB and more
	)
	for _, last := range []string{"", "BAD REQUEST\r\n\r\n"} {
		c := dialRaw(t, sizeServer(t, evloop.Options{HighWater: highWater, MaxOutbound: highWater + 20<<10}))
		var reqs strings.Builder
		fmt.Fprintf(&reqs, "GET /size?%d HTTP/1.1\r\nHost: x\r\n\r\n", bigSize)
		for range small {
			reqs.WriteString("GET /size?1024 HTTP/1.1\r\nHost: x\r\n\r\n")
		}
		c.send(reqs.String() + last)
		if _, body := c.read("GET"); len(body) != bigSize {
			t.Fatalf("first answer: %d bytes; want %d", len(body), bigSize)
		}
		for i := range small {
			if _, body := c.read("GET"); len(body) != 1024 {
				t.Fatalf("small answer %d: %d bytes; want 1024", i, len(body))
			}
		}
		if last != "" {
			if resp, _ := c.read("GET"); resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("answer to the malformed request: %d; want 400", resp.StatusCode)
			}
			c.closed()
		}
	}
}

// The answer to a malformed request is the connection's last, and goes
// out after the answers before it even where they left the outbound
// queue no room under its bound, where it was dropped.
func TestErrorAnswerPastTheOutboundBound(t *testing.T) {
	const bound = 64 << 10
	c := dialRaw(t, sizeServer(t, evloop.Options{HighWater: bound, MaxOutbound: bound}))
	const size = bound - 200 // with its head, 100 bytes short of the bound
	c.send(fmt.Sprintf("GET /size?%d HTTP/1.1\r\nHost: x\r\n\r\nBAD REQUEST\r\n\r\n", size))
	if _, body := c.read("GET"); len(body) != size {
		t.Fatalf("first answer: %d bytes; want %d", len(body), size)
	}
	if resp, _ := c.read("GET"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("answer to the malformed request: %d; want 400", resp.StatusCode)
	}
	c.closed()
}

// An answer the outbound queue cannot take at all closes the connection
// after the answers before it, rather than leave the client waiting for
// it or give it the next one.
func TestAnswerPastTheOutboundBoundCloses(t *testing.T) {
	c := dialRaw(t, sizeServer(t, evloop.Options{MaxOutbound: 1 << 20}))
	c.send("GET /size?10 HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /size?2000000 HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /size?20 HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, body := c.read("GET"); len(body) != 10 {
		t.Fatalf("first answer: %d bytes; want 10", len(body))
	}
	c.closed()
}

// sizeServer serves, with the engine's options o, a fast route /size?N
// that answers N bytes, and returns its address.
func sizeServer(t *testing.T, o evloop.Options) string {
	srv := &http1.Server{Engine: o}
	srv.HandleFastFunc("/size", func(w *http1.Response, r *http1.Request) {
		var n int
		fmt.Sscan(string(r.Query()), &n)
		w.WriteString(strings.Repeat("x", n))
	})
	addr := serve(t, srv)
	return addr
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
