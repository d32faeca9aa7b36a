package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"
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
