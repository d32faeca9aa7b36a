//go:build unix

package ws_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop"
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

// smallReceiveBuffer is a Dialer whose connections have a small receive
// buffer, so that the 8 MiB of a flood cannot all leave: the send buffer
// holds 4 MiB at most.
func smallReceiveBuffer() *websocket.Dialer {
	return &websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 16<<10) })
		}}
		return nd.DialContext(ctx, network, addr)
	}}
}

// A peer that stopped reading, with its close frame queued behind what it
// did not read, is reset once it has not answered for CloseTimeout, as
// Close's doc says: Shutdown returns then. Before, the connection was
// closed gracefully after CloseTimeout and waited for the peer to take
// some of its bytes for the engine's CloseTimeout (30 s) more, and a
// Shutdown with a shorter context returned its error.
func TestCloseTimeoutStalledPeer(t *testing.T) {
	f := &flood{opened: make(chan struct{}, 1), closed: make(chan error, 1)}
	srv, addr := startServer(t, f, &ws.Options{CloseTimeout: 300 * time.Millisecond})
	dialGorilla(t, "ws://"+addr+"/fast", smallReceiveBuffer()) // and read nothing
	recv(t, f.opened, "the flood")
	// 20 s, which a loaded machine does not outlast, before the engine's
	// CloseTimeout (30 s) that a graceful close would wait.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v after %v; want nil, the stalled peer reset after CloseTimeout", err, time.Since(start))
	}
	recv(t, f.closed, "OnClose")
}

// A peer that sent its close frame, or broke the protocol, and stopped
// reading, with the answering close frame queued behind what it did not
// read, is reset once CloseTimeout has passed since that frame was
// queued, as after Close: the connection waited for the peer to read
// again for the engine's CloseTimeout (30 s) of no progress, and a
// Shutdown with it, where Close's handshake was bounded by CloseTimeout.
func TestCloseTimeoutStalledPeerAfterItsClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		send []byte // what the peer sends before it stops reading
		code int
	}{
		{"its close frame", rawFrame(0x88, []byte{0x03, 0xe8}), ws.CloseNormal},
		{"an unmasked frame", []byte{0x81, 0x02, 'h', 'i'}, ws.CloseProtocolError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flood{opened: make(chan struct{}, 1), closed: make(chan error, 1)}
			// Reading goes on past the flood (HighWater), so that the
			// peer's frame is read while the flood waits for it to read.
			srv, addr := startServerEngine(t, f, &ws.Options{CloseTimeout: 300 * time.Millisecond}, evloop.Options{HighWater: 32 << 20})
			c := dialGorilla(t, "ws://"+addr+"/fast", smallReceiveBuffer())
			recv(t, f.opened, "the flood")
			c.UnderlyingConn().Write(tc.send) // and read nothing
			start := time.Now()
			var ce *ws.CloseError
			if err := recv(t, f.closed, "OnClose"); !errors.As(err, &ce) || ce.Code != tc.code {
				t.Fatalf("OnClose(%v); want code %d", err, tc.code)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Fatalf("OnClose %v after the peer's frame; want about CloseTimeout, 300ms, before the engine's CloseTimeout (30 s)", took)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown = %v", err)
			}
		})
	}
}
