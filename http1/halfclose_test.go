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

// queryServer answers GET /big?q on the loop and GET /std?q on the pool,
// each with body and the query in X-Req; the pooled answer comes 20ms
// late.
func queryServer(opts evloop.Options, body string) *http1.Server {
	srv := &http1.Server{Engine: opts}
	srv.HandleFastFunc("/big", func(w *http1.Response, r *http1.Request) {
		w.AddHeader("X-Req", string(r.Query()))
		w.WriteString(body)
	})
	srv.HandleFunc("/std", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("X-Req", r.URL.RawQuery)
		io.WriteString(w, body)
	})
	return srv
}

// pipelined returns n requests for queryServer, request i for /std if
// pooled(i), else for /big, with i as its query.
func pipelined(n int, pooled func(i int) bool) string {
	var b strings.Builder
	for i := range n {
		path := "/big"
		if pooled(i) {
			path = "/std"
		}
		fmt.Fprintf(&b, "GET %s?%d HTTP/1.1\r\nHost: x\r\n\r\n", path, i)
	}
	return b.String()
}

// Pipelined fast answers past HighWater with pooled requests among them,
// and the client's EOF after the last: every answer comes, in order, and
// the connection closes.
func TestPressedWithPooledAndEOF(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	srv := queryServer(evloop.Options{Loops: 1, HighWater: 128 << 10, SendBuffer: 64 << 10}, big)
	c := dialRaw(t, serve(t, srv))
	const n = 120
	reqs := pipelined(n, func(i int) bool { return i%17 == 5 })
	go func() {
		io.WriteString(c.nc, reqs)
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
	c := dialRaw(t, serve(t, queryServer(evloop.Options{Loops: 1}, "small")))
	const n = 20
	io.WriteString(c.nc, pipelined(n, func(i int) bool { return i == 5 }))
	c.nc.(*net.TCPConn).CloseWrite()
	for i := range n {
		resp, err := http.ReadResponse(c.br, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		io.ReadAll(resp.Body)
	}
}
