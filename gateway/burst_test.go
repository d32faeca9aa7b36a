package gateway

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
)

// A burst of events on one trigger with many subscribers does not hold
// up another trigger's events on the same loops: the burst waits in its
// trigger's queue (whose oldest events are dropped past its bound), not
// in the loops' task queues, where the other trigger's event would wait
// behind every delivery resolved before it. Before, 4,000 events to 400
// subscribers, resolved, left the loops 1,600,000 messages to write, and the
// other trigger's event came after them.
func TestBurstDoesNotDelayOtherTrigger(t *testing.T) {
	g, src, addr := startGateway(t, func(c *Config) { c.MaxOutbound = 64 << 20 })
	const conns, per, burst = 4, 100, 4000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range conns {
		c := dial(t, addr, ProtocolTransportWS)
		c.init()
		for j := range per {
			c.send(fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { name } }"}}`, j))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c.ws.SetReadDeadline(time.Now().Add(time.Second))
				if _, _, err := c.ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
	}
	t.Cleanup(func() { close(stop); wg.Wait() })
	other := dialSubscribe(t, addr, "b", "subscription { employeeUpdated(id: 2) { name } }")
	waitFor(t, "the subscriptions", func() bool { return g.Stats().Subscriptions.Load() == conns*per+1 })
	waitFor(t, "the upstream subscriptions", func() bool {
		return src.Subscribers("employee.1") == 1 && src.Subscribers("employee.2") == 1
	})
	g.engine.maxQueue = burst // set before the first event: the engine's loop reads it after
	for i := range burst {
		publish(t, src, "employee.1", fmt.Sprintf(`{"name":"%d"}`, i))
	}
	// Once the trigger has resolved the whole burst, whatever is still to
	// be written waits on the loops.
	deadline := time.Now().Add(2 * time.Minute) // 1,600,000 messages, under the race detector
	for !g.engine.idle("employee.1") {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for the burst to be resolved")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	publish(t, src, "employee.2", `{"name":"other"}`)
	other.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := other.ws.ReadMessage()
	if err != nil {
		t.Fatalf("the other trigger's event: ReadMessage: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the other trigger's event took %v; want at most 1s", d)
	}
	if want := `{"id":"b","type":"next","payload":{"data":{"employeeUpdated":{"name":"other"}}}}`; string(b) != want {
		t.Fatalf("the other trigger's message = %s; want %s", b, want)
	}
}

// idle reports whether the trigger of subject has no event waiting or
// being resolved.
func (e *engine) idle(subject string) bool {
	done := make(chan bool)
	e.l.Submit(func() {
		for _, t := range e.triggers {
			if slices.Contains(t.subjects, subject) {
				done <- len(t.queue) == 0 && !t.busy
				return
			}
		}
		done <- true
	})
	return <-done
}

// A trigger that drops events says so in the log: once when it starts,
// then how many it dropped every interval until one drops none, not once
// an event. Before, the drops were only counted in Stats.EventsDropped.
func TestDroppedEventsLogged(t *testing.T) {
	logged := new(testpeer.Output)
	g, src, addr := startGateway(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(logged, nil))
	})
	c := dialSubscribe(t, addr, "a", "subscription { employeeUpdated(id: 1) { name } }")
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.1") == 1 })
	// Set before the first event: the engine's loop reads them after.
	g.engine.maxQueue = 2
	g.engine.dropLogEvery = 300 * time.Millisecond
	// Bursts until one outruns the pool: each event is resolved on a
	// worker, while the next ones are queued at once.
	sent := 0
	deadline := time.Now().Add(10 * time.Second)
	for g.Stats().EventsDropped.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no event dropped in 10s of bursts")
		}
		for range 200 {
			publish(t, src, "employee.1", fmt.Sprintf(`{"name":"%d"}`, sent))
			sent++
		}
	}
	last := fmt.Sprintf(`{"id":"a","type":"next","payload":{"data":{"employeeUpdated":{"name":"%d"}}}}`, sent-1)
	for {
		c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			t.Fatalf("reading the events: %v", err)
		}
		if string(b) == last {
			break
		}
	}
	dropped := g.Stats().EventsDropped.Load()
	reported := func() (n int64) {
		for _, m := range regexp.MustCompile(`events a trigger dropped" subjects=\[employee.1\] dropped=(\d+) `).FindAllStringSubmatch(logged.String(), -1) {
			d, _ := strconv.ParseInt(m[1], 10, 64)
			n += d
		}
		return n
	}
	waitFor(t, "the drops reported", func() bool { return reported() == dropped })
	time.Sleep(700 * time.Millisecond) // two intervals: nothing more to say
	out := logged.String()
	if got := reported(); got != dropped {
		t.Fatalf("the log reports %d dropped; Stats.EventsDropped = %d:\n%s", got, dropped, out)
	}
	if starts, lines := strings.Count(out, "dropping its oldest events"), strings.Count(out, "\n"); starts == 0 || lines > 6 {
		t.Fatalf("%d lines, %d saying the trigger started dropping; want 1 to 6 lines for one burst:\n%s", lines, starts, out)
	}
}

// A trigger that ends while its drops wait to be reported says how many
// it dropped as it ends, and leaves no timer behind on the engine's loop.
// Before, the report's timer held the ended trigger, its queue with it,
// until the interval was over, and said its count only then.
func TestDroppedEventsReportedWhenTriggerEnds(t *testing.T) {
	logged := new(testpeer.Output)
	g, src, addr := startGateway(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(logged, nil))
	})
	c := dialSubscribe(t, addr, "a", "subscription { employeeUpdated(id: 1) { name } }")
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.1") == 1 })
	timers := func() int {
		n := make(chan int)
		g.engine.l.Submit(func() { n <- g.engine.l.Timers() })
		return <-n
	}
	before := timers()
	g.engine.maxQueue = 2
	g.engine.dropLogEvery = time.Hour
	deadline := time.Now().Add(10 * time.Second)
	for sent := 0; g.Stats().EventsDropped.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no event dropped in 10s of bursts")
		}
		for range 200 {
			publish(t, src, "employee.1", fmt.Sprintf(`{"name":"%d"}`, sent))
			sent++
		}
	}
	c.send(`{"id":"a","type":"complete"}`)
	waitFor(t, "the trigger to end", func() bool { return src.Subscribers("employee.1") == 0 })
	dropped := g.Stats().EventsDropped.Load()
	if n := timers(); n != before {
		t.Errorf("the engine's loop has %d timers once the trigger ended; want %d, as before it dropped events", n, before)
	}
	m := regexp.MustCompile(`events a trigger dropped" subjects=\[employee.1\] dropped=(\d+) `).FindAllStringSubmatch(logged.String(), -1)
	if len(m) != 1 || m[0][1] != strconv.FormatInt(dropped, 10) {
		t.Errorf("the log's reports of drops once the trigger ended: %q; want one of %d:\n%s", m, dropped, logged.String())
	}
}
