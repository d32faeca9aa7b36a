//go:build unix

package http1_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
)

// A fast answer a slow client takes longer than IdleTimeout to read
// keeps its connection active until it is written, whether the next
// request comes after it or while it is still going out: one idle
// between the two requests, as net/http's, where the wait past
// IdleTimeout reported idle twice and a request read meanwhile was not
// reported active.
func TestConnStateSlowReader(t *testing.T) {
	// The client reads a little every idle/10; the server resets a client
	// that takes nothing for a whole IdleTimeout, which a client slowed by
	// a busy machine must not come near.
	const idle = time.Second
	for _, when := range []string{"after it is written", "while it goes out"} {
		cs := newConnStates()
		twins := serveQueued(t, bigFastThenNext, queuedTimeouts{idle: idle}, bigFast, func(s *http1.Server) {
			s.Engine.CloseTimeout = idle / 4
			s.ConnState = cs.recordConn
		})
		t.Run(when, func(t *testing.T) {
			c := dialNotReading(t, twins[0].addr)
			c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
			if when == "while it goes out" {
				time.Sleep(idle + idle/2) // past IdleTimeout
				c.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			}
			c.readBigSlowly(idle/10, 128<<10) // 2.4 s at least
			if when == "after it is written" {
				c.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			}
			if _, body := c.read("GET"); body != "next" {
				t.Fatalf("next answer %q", body)
			}
			cs.idle(t, c.nc.LocalAddr().String())
			c.nc.Close()
			want := []http.ConnState{http.StateNew, http.StateActive, http.StateIdle, http.StateActive, http.StateIdle, http.StateClosed}
			cs.expect(t, c, want)
		})
	}
}
