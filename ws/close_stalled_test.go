//go:build unix

package ws_test

import (
	"bytes"
	"context"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/ws"
	"github.com/gorilla/websocket"
	"golang.org/x/sys/unix"
)

// flood writes 8 MiB to each connection as it opens.
type flood struct {
	opened chan struct{}
	closed chan error
}

func (f *flood) OnOpen(c *ws.Conn) {
	msg := bytes.Repeat([]byte("x"), 1<<20)
	for range 8 {
		c.WriteMessage(ws.Binary, msg)
	}
	f.opened <- struct{}{}
}

func (f *flood) OnMessage(*ws.Conn, ws.Opcode, []byte) {}

func (f *flood) OnClose(_ *ws.Conn, err error) { f.closed <- err }

// A peer that stopped reading, with its close frame queued behind what it
// did not read, is reset once it has not answered for CloseTimeout, as
// Close's doc says: Shutdown returns then. Before, the connection was
// closed gracefully after CloseTimeout and waited for the peer to take
// some of its bytes for the engine's CloseTimeout (30 s) more, and a
// Shutdown with a shorter context returned its error.
func TestCloseTimeoutStalledPeer(t *testing.T) {
	f := &flood{opened: make(chan struct{}, 1), closed: make(chan error, 1)}
	srv, addr := startServer(t, f, &ws.Options{CloseTimeout: 300 * time.Millisecond})
	d := &websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		// A small receive buffer, so that the 8 MiB cannot all leave:
		// the send buffer holds 4 MiB at most.
		nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 16<<10) })
		}}
		return nd.DialContext(ctx, network, addr)
	}}
	dialGorilla(t, "ws://"+addr+"/fast", d) // and read nothing
	recv(t, f.opened, "the flood")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v after %v; want nil, the stalled peer reset after CloseTimeout", err, time.Since(start))
	}
	recv(t, f.closed, "OnClose")
}
