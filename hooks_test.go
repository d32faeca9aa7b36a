//go:build unix

package evloop

import (
	"io"
	"testing"
	"time"
)

// TestBeforeFlush checks that BeforeFlush runs on the connection's loop
// after the handler queued its reply and before the reply is written, and
// that what it writes goes out in the same flush, after the reply.
func TestBeforeFlush(t *testing.T) {
	var pending []*Conn // owned by loop 0
	var srv *Server
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		c.Write(b)
		pending = append(pending, c)
	}}
	srv, addr := serve(t, h, Options{Loops: 1, BeforeFlush: func(loop int) {
		if loop != 0 {
			t.Errorf("BeforeFlush(%d); want loop 0", loop)
		}
		for _, c := range pending {
			if c.OutboundBuffered() == 0 {
				t.Error("BeforeFlush ran after the flush")
			}
			c.Write([]byte("!"))
		}
		pending = pending[:0]
	}})
	if srv.Loops() != 1 {
		t.Fatalf("Loops() = %d; want 1", srv.Loops())
	}
	c := dial(t, addr)
	for _, msg := range []string{"a", "bc", "def"} {
		got, err := roundTrip(c, []byte(msg))
		if err != nil {
			t.Fatal(err)
		}
		rest := make([]byte, 1)
		if _, err := io.ReadFull(c, rest); err != nil {
			t.Fatal(err)
		}
		if s := string(got) + string(rest); s != msg+"!" {
			t.Errorf("reply %q; want %q", s, msg+"!")
		}
	}
}

// TestServerTimers checks Server.Submit, AfterFunc and Every on a loop, and
// that a timer stopped before it fires does not.
func TestServerTimers(t *testing.T) {
	srv, _ := serve(t, &funcHandler{}, Options{Loops: 2})
	fired := make(chan string, 16)
	ticks := 0
	if err := srv.Submit(1, func() {
		srv.AfterFunc(1, time.Millisecond, func() { fired <- "after" })
		stopped := srv.AfterFunc(1, time.Millisecond, func() { fired <- "stopped" })
		if !stopped.Stop() {
			t.Error("Stop of a pending timer = false; want true")
		}
		var every Timer
		every = srv.Every(1, time.Millisecond, func() {
			if ticks++; ticks == 3 {
				every.Stop()
				fired <- "every"
			}
		})
	}); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case s := <-fired:
			if got[s] || s == "stopped" {
				t.Fatalf("fired %q twice or after Stop", s)
			}
			got[s] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("timers fired: %v", got)
		}
	}
}
