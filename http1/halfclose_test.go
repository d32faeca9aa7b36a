package http1_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/http1"
)

// Pipelined fast answers past HighWater with pooled requests among them,
// and the client's EOF after the last: every answer comes, in order, and
// the connection closes.
func TestPressedWithPooledAndEOF(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	srv := &http1.Server{Engine: evloop.Options{Loops: 1, HighWater: 128 << 10, SendBuffer: 64 << 10}}
	srv.HandleFastFunc("/big", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("X-Req", string(r.Query()))
		w.WriteString(big)
	})
	srv.HandleFunc("/std", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("X-Req", r.URL.RawQuery)
		io.WriteString(w, big)
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	var reqs strings.Builder
	const n = 120
	for i := range n {
		path := "/big"
		if i%17 == 5 {
			path = "/std"
		}
		fmt.Fprintf(&reqs, "GET %s?%d HTTP/1.1\r\nHost: x\r\n\r\n", path, i)
	}
	go func() {
		io.WriteString(c.nc, reqs.String())
		c.nc.(*net.TCPConn).CloseWrite()
	}()
	time.Sleep(300 * time.Millisecond)
	for i := range n {
		resp, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("answer %d body: %v", i, err)
		}
		body := string(b)
		if got := resp.Header.Get("X-Req"); got != fmt.Sprint(i) || len(body) != len(big) {
			t.Fatalf("answer %d: for %q, %d bytes", i, got, len(body))
		}
		if i%10 == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	c.closed()
}

// Pipelined requests, a pooled one among them, then the client's EOF:
// the requests after the pooled one are answered too, then the
// connection closes.
func TestSmallPipelinedPooledEOF(t *testing.T) {
	srv := &http1.Server{Engine: evloop.Options{Loops: 1}}
	srv.HandleFastFunc("/big", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("X-Req", string(r.Query()))
		w.WriteString("small")
	})
	srv.HandleFunc("/std", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("X-Req", r.URL.RawQuery)
		io.WriteString(w, "small")
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	var reqs strings.Builder
	const n = 20
	for i := range n {
		path := "/big"
		if i == 5 {
			path = "/std"
		}
		fmt.Fprintf(&reqs, "GET %s?%d HTTP/1.1\r\nHost: x\r\n\r\n", path, i)
	}
	io.WriteString(c.nc, reqs.String())
	c.nc.(*net.TCPConn).CloseWrite()
	for i := range n {
		resp, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		io.ReadAll(resp.Body)
	}
}
