package http1_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/http1"
)

// A client that does not read the answers that took its connection past
// the high-water mark is given IdleTimeout to take them, as if it were
// to send another request: it cannot hold the connection and its queued
// answers for ever. The test waits for the server to close it
// (ConnState's StateClosed), after IdleTimeout and CloseTimeout, several
// times, on a loaded machine, where it read after 2 s.
func TestPressedConnectionHasNoTimeout(t *testing.T) {
	const size = 4 << 20
	closed := make(chan struct{})
	srv := &http1.Server{
		IdleTimeout: 300 * time.Millisecond,
		Engine:      evloop.Options{Loops: 1, HighWater: 64 << 10, CloseTimeout: 300 * time.Millisecond, SendBuffer: 64 << 10},
		ConnState: func(c *evloop.Conn, st http.ConnState) {
			if st == http.StateClosed {
				close(closed)
			}
		},
	}
	srv.HandleFastFunc("/big", func(w *http1.Response, r *http1.Request) {
		w.WriteString(strings.Repeat("x", size))
	})
	addr := serve(t, srv)
	c := dialRaw(t, addr)
	c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the connection was kept open 30 s, its client not reading")
	}
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, c.nc)
	if n > size {
		t.Fatalf("the connection was kept open past every timeout: the whole answer (%d bytes) came after it closed (then %v)", n, err)
	}
}
