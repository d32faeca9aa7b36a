package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// A client that stops reading holds at most 4 times Config.MaxOutbound
// (and one message) before it is closed as a slow consumer, however fast
// its events come. Before, the 100 ms its queue may stay past
// MaxOutbound let it grow to evloop's own bound: a client with 100
// subscriptions to 4 KB events held 54 MiB where MaxOutbound was 1 MiB.
func TestStalledClientBounded(t *testing.T) {
	const maxOutbound = 64 << 10
	g, src, addr := startGateway(t, func(c *Config) { c.MaxOutbound = maxOutbound })
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	for i := range 100 {
		c.send(fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { name } }"}}`, i))
	}
	waitFor(t, "the subscriptions", func() bool { return g.Stats().Subscriptions.Load() == 100 })
	event := `{"name":"` + strings.Repeat("x", 4000) + `"}`
	msg := len(`{"id":"99","type":"next","payload":{"data":{"employeeUpdated":`) + len(event) + 3
	peak := 0
	deadline := time.Now().Add(10 * time.Second)
	for g.Stats().SlowConsumers.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the client to be closed as a slow consumer")
		}
		publish(t, src, "employee.1", event)
		g.sessions.each(func(s *session) { peak = max(peak, s.wc.Conn().OutboundBuffered()) })
	}
	if want := 4*maxOutbound + msg; peak > want {
		t.Fatalf("the stalled client's queue reached %d bytes; want at most %d", peak, want)
	}
	if code, _ := c.closed(); code != CloseSlowConsumer {
		t.Fatalf("closed with %d; want %d", code, CloseSlowConsumer)
	}
}

// A client that sends pings and does not read the pongs is held to the
// same bound as one that does not read its events: closed as a slow
// consumer once its queue passes 4 times MaxOutbound. Before, only events
// were checked, and the pongs queued up to what the engine lets a
// connection hold before it stops reading it (1 MiB, whatever
// MaxOutbound).
func TestPingFloodBounded(t *testing.T) {
	const maxOutbound = 64 << 10
	g, _, addr := startGateway(t, func(c *Config) { c.MaxOutbound = maxOutbound })
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	ping := []byte(`{"type":"ping","payload":{"x":"` + strings.Repeat("y", 30000) + `"}}`)
	pong := len(ping) // {"type":"pong",...} is as long
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for {
			c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if c.ws.WriteMessage(websocket.TextMessage, ping) != nil {
				return
			}
		}
	}()
	peak := 0
	deadline := time.Now().Add(10 * time.Second)
	for g.Stats().SlowConsumers.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not closed as a slow consumer after 10s; its queue reached %d bytes", peak)
		}
		g.sessions.each(func(s *session) { peak = max(peak, s.wc.Conn().OutboundBuffered()) })
		time.Sleep(time.Millisecond)
	}
	if want := 4*maxOutbound + pong; peak > want {
		t.Fatalf("the queue reached %d bytes; want at most %d", peak, want)
	}
	c.ws.Close()
	<-sent
}

// Shutting down completes every subscription and closes with 1001 however
// small MaxOutbound is: the completes of one connection's subscriptions,
// queued together before the loop writes any, are no sign of a slow
// client. Before, they were held to 4 times MaxOutbound as events are,
// and a client with many subscriptions was closed as a slow consumer
// partway through them.
func TestShutdownCompletesPastMaxOutbound(t *testing.T) {
	const subs = 100
	g, _, addr := startGateway(t, func(c *Config) { c.MaxOutbound = 256 })
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	for i := range subs {
		c.send(fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { name } }"}}`, i))
	}
	waitFor(t, "the subscriptions", func() bool { return g.Stats().Subscriptions.Load() == subs })
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- g.Shutdown(ctx)
	}()
	completes := 0
	c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, msg, err := c.ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != CloseGoingAway {
				t.Fatalf("after %d completes: %v; want a close with %d", completes, err, CloseGoingAway)
			}
			break
		}
		if strings.Contains(string(msg), `"type":"complete"`) {
			completes++
		}
	}
	if completes != subs {
		t.Errorf("got %d completes; want %d", completes, subs)
	}
	if n := g.Stats().SlowConsumers.Load(); n != 0 {
		t.Errorf("SlowConsumers = %d; want 0", n)
	}
	c.ws.Close()
	if err := <-done; err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
}
