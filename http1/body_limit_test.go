package http1_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/evloop/evloop/http1"
)

// MaxBodyBytes bounds a fast route's body however it is sent: a chunked
// one past it is 413, as a Content-Length past it is. Negative, it lifts
// the limit for pooled handlers only: a fast route still takes at most
// DefaultMaxBodyBytes, as it holds the body whole.
func TestMaxBodyBytes(t *testing.T) {
	chunk := func(n int) string { return fmt.Sprintf("%x\r\n%s\r\n", n, strings.Repeat("a", n)) }
	big := http1.DefaultMaxBodyBytes + 1
	for _, tc := range []struct {
		name   string
		limit  int64
		req    string
		status int
		body   string
	}{
		{"fast chunked within", 1 << 10, "POST /fast HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(600) + chunk(424) + "0\r\n\r\n", 200, "1024"},
		{"fast chunked past", 1 << 10, "POST /fast HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(600) + chunk(425) + "0\r\n\r\n", 413, ""},
		{"pooled unlimited", -1, fmt.Sprintf("POST /std HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", big, strings.Repeat("a", big)), 200, fmt.Sprint(big)},
		{"fast still limited", -1, fmt.Sprintf("POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", big), 413, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &http1.Server{MaxBodyBytes: tc.limit}
			srv.HandleFastFunc("POST /fast", func(w *http1.Response, r *http1.Request) {
				fmt.Fprint(w, len(r.Body))
			})
			srv.HandleFunc("POST /std", func(w http.ResponseWriter, r *http.Request) {
				n, err := io.Copy(io.Discard, r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				fmt.Fprint(w, n)
			})
			c := dialRaw(t, serve(t, srv))
			c.send(tc.req)
			resp, body := c.read("POST")
			if resp.StatusCode != tc.status || tc.status == 200 && body != tc.body {
				t.Fatalf("status %d, body %q; want %d, %q", resp.StatusCode, body, tc.status, tc.body)
			}
			if tc.status == 413 {
				if !resp.Close {
					t.Fatal("413 without Connection: close")
				}
				c.closed()
			}
		})
	}
}
