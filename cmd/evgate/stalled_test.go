//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/gorilla/websocket"
	"github.com/nats-io/nats.go"
	"golang.org/x/sys/unix"
)

// SIGTERM with clients that stopped reading, their socket buffers full:
// evgate completes the reading client's subscription and closes it with
// 1001, resets the stalled ones once they have not answered their close
// for ws.Options.CloseTimeout (5 s), and exits with 0 within its grace
// period (10 s). Before, a stalled connection, its close frame queued
// behind what it did not read, waited for evloop's CloseTimeout (30 s):
// evgate gave up at its grace period and exited with 1, saying "context
// deadline exceeded".
func TestSIGTERMWithStalledClients(t *testing.T) {
	bin := build(t)
	addr, natsAddr := testpeer.FreeAddr(t), testpeer.FreeAddr(t)
	cmd, log := start(t, bin, "--listen", addr, "--nats-listen", natsAddr, "--demo=false")
	subscribe := func(c *websocket.Conn) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		c.WriteMessage(websocket.TextMessage, []byte(`{"type":"connection_init"}`))
		if _, m, err := c.ReadMessage(); err != nil || string(m) != `{"type":"connection_ack"}` {
			t.Fatalf("after connection_init: %q, %v; want connection_ack", m, err)
		}
		c.WriteMessage(websocket.TextMessage, []byte(`{"id":"r","type":"subscribe","payload":{"query":"subscription { messages(room: \"r\") { text } }"}}`))
	}
	dial := func(rcvbuf int) *websocket.Conn {
		t.Helper()
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		if rcvbuf > 0 {
			// A small receive buffer, so that a few MB fill the path.
			d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
					return rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf) })
				}}
				return nd.DialContext(ctx, network, addr)
			}
		}
		c, _, err := d.Dial("ws://"+addr+"/graphql", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		subscribe(c)
		return c
	}
	reader := dial(0)
	for range 3 {
		dial(16 << 10) // read no more
	}
	nc, err := nats.Connect("nats://" + natsAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// Once the reader has an event, every subscription is in place.
	const events = 600 // of 16 KB: past what the stalled clients' sockets hold
	text := strings.Repeat("x", 16<<10)
	publish := func(i int) {
		if err := nc.Publish("demo.room.r", fmt.Appendf(nil, `{"room":"r","text":"%d %s"}`, i, text)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		reader.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, m, err := reader.ReadMessage()
		if err != nil {
			t.Fatalf("the reading client: %v\n%s", err, log.String())
		}
		return string(m)
	}
	for ready := false; !ready; {
		publish(0)
		nc.Flush()
		time.Sleep(50 * time.Millisecond)
		ready = strings.HasPrefix(read(), `{"id":"r","type":"next"`)
	}
	// In bursts of 32 (512 KB, under the gateway's MaxOutbound of 1 MiB),
	// each read before the next: a reader slowed by a loaded machine is
	// not taken for a slow consumer, which one burst of all 600 made it.
	// Once the reader has the last, evgate has written what it could of
	// every event to the stalled clients.
	for i := 1; i <= events; i++ {
		publish(i)
		if i%32 != 0 && i != events {
			continue
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		last := fmt.Sprintf(`{"id":"r","type":"next","payload":{"data":{"messages":{"text":"%d %s"}}}}`, i, text)
		for read() != last {
		}
	}

	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	sawComplete := false
	for {
		reader.SetReadDeadline(time.Now().Add(15 * time.Second))
		_, m, err := reader.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != websocket.CloseGoingAway || !sawComplete {
				t.Fatalf("the reading client closed with %d (complete seen: %v); want complete, then 1001", ce.Code, sawComplete)
			}
			break
		}
		if err != nil {
			t.Fatalf("the reading client after SIGTERM: %v", err)
		}
		sawComplete = sawComplete || string(m) == `{"id":"r","type":"complete"}`
	}
	select {
	case err := <-exited:
		if err != nil || time.Since(start) > 9*time.Second {
			t.Fatalf("evgate exited with %v, %v after SIGTERM; want 0 within its grace period (10 s)\n%s", err, time.Since(start), log.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("evgate did not exit 20 s after SIGTERM\n%s", log.String())
	}
}
