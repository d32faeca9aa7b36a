package ws_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/ws"
	"github.com/gorilla/websocket"
)

// panicky echoes, but panics on a message starting "boom" after writing
// part of its answer.
type panicky struct{ echo }

func (p *panicky) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	if bytes.HasPrefix(data, []byte("boom")) {
		if !p.pooled {
			c.WriteMessage(op, []byte("partial answer "+strings.Repeat("p", 200)))
		}
		panic("boom")
	}
	p.echo.OnMessage(c, op, data)
}

// closePanics is a Handler whose OnClose counts its calls and panics.
type closePanics struct {
	echo
	calls chan struct{}
}

func (h *closePanics) OnClose(c *ws.Conn, err error) {
	h.calls <- struct{}{}
	panic("OnClose")
}

// A Handler's OnClose runs once, even if it panics when the client
// half-closes without a close frame. It is counted once the server's
// Shutdown returned, which is once every connection is gone, its OnClose
// calls run: the client's EOF may come before the first.
func TestOnClosePanicRunsOnce(t *testing.T) {
	h := &closePanics{calls: make(chan struct{}, 10)}
	srv, addr := startServer(t, h, nil)
	c := dialRaw(t, addr, "/fast", "")
	c.nc.(*net.TCPConn).CloseWrite()
	io.Copy(io.Discard, c.br)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := len(h.calls); n != 1 {
		t.Fatalf("OnClose ran %d times, want 1", n)
	}
}

// A pooled message handler (Options.Workers) that panics closes its own
// connection, and only that: the process, the pool and every other
// connection go on.
func TestPooledHandlerPanic(t *testing.T) {
	o := &ws.Options{Workers: 2}
	t.Cleanup(o.CloseWorkers) // after the server's shutdown
	h := &panicky{echo: echo{pooled: true}}
	_, addr := startServer(t, h, o)
	a := dialGorilla(t, "ws://"+addr+"/fast", nil)
	b := dialGorilla(t, "ws://"+addr+"/fast", nil)
	a.WriteMessage(websocket.TextMessage, []byte("boom"))
	a.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, got, err := a.ReadMessage(); err == nil || isTimeout(err) {
		t.Fatalf("a after its handler panicked: %q, %v; want it closed", got, err)
	}
	for _, msg := range []string{"still here", "and here"} {
		b.WriteMessage(websocket.TextMessage, []byte(msg))
		if _, got, err := b.ReadMessage(); err != nil || string(got) != msg {
			t.Fatalf("b: %q %v", got, err)
		}
	}
}

// OnClose runs for a connection whose OnMessage panicked, on the loop or
// on the pool alike.
func TestPanicOnCloseRuns(t *testing.T) {
	for _, workers := range []int{0, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			o := &ws.Options{Workers: workers}
			t.Cleanup(o.CloseWorkers)
			h := &panicky{echo: echo{pooled: workers > 0}}
			addr := serve(t, h, o)
			c := dialRaw(t, addr, "/fast", "")
			c.frame(0x81, []byte("boom"), false)
			c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.Copy(io.Discard, c.br); err != nil {
				t.Fatalf("the server did not close: %v", err)
			}
			c.nc.Close()
			h.nextClose(t, 0) // fails the test if OnClose does not run
		})
	}
}
