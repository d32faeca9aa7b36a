package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startNATS runs a NATS server with JetStream for the test.
func startNATS(t *testing.T) *server.Server {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server did not start")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

func natsConn(t *testing.T, ns *server.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// startNATSGateway serves testSchema with ns as the default provider.
func startNATSGateway(t *testing.T, ns *server.Server, name string) (*Gateway, string) {
	t.Helper()
	schema, err := ParseSchema(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewNATSSource(natsConn(t, ns), name)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, Config{Schema: schema, NATS: map[string]Source{"default": src}})
}

// serveOrders serves sdl from a NATS server with JetStream whose stream
// "orders" holds the subjects order.>, and returns the gateway, its
// address and a JetStream context to publish with.
func serveOrders(t *testing.T, sdl string) (*Gateway, string, nats.JetStreamContext) {
	t.Helper()
	nc := natsConn(t, startNATS(t))
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "orders", Subjects: []string{"order.>"}}); err != nil {
		t.Fatal(err)
	}
	schema, err := ParseSchema(sdl)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewNATSSource(nc, "js-test")
	if err != nil {
		t.Fatal(err)
	}
	g, addr := serve(t, Config{Schema: schema, NATS: map[string]Source{"default": src}})
	return g, addr, js
}

// Two gateways on one NATS server: an event published once reaches the
// subscribers of both; a mutation on one reaches the other's.
func TestTwoGatewaysOneNATS(t *testing.T) {
	ns := startNATS(t)
	ga, a := startNATSGateway(t, ns, "a")
	gb, b := startNATSGateway(t, ns, "b")
	var clients []*client
	for _, addr := range []string{a, a, b, b} {
		c := dial(t, addr, ProtocolTransportWS)
		c.init()
		c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 9) { name } }"}}`)
		clients = append(clients, c)
	}
	// One trigger per gateway: two subscriptions on the server.
	waitFor(t, "both gateways to subscribe", func() bool {
		return ga.Stats().Subscriptions.Load() == 2 && gb.Stats().Subscriptions.Load() == 2 && ns.GlobalAccount().Interest("employee.9") == 2
	})
	pub := natsConn(t, ns)
	if err := pub.Publish("employee.9", []byte(`{"name":"Nats"}`)); err != nil {
		t.Fatal(err)
	}
	want := `{"id":"1","type":"next","payload":{"data":{"employeeUpdated":{"name":"Nats"}}}}`
	for i, c := range clients {
		if got := c.readRaw(); got != want {
			t.Fatalf("client %d: %s; want %s", i, got, want)
		}
	}
	m := dial(t, b, ProtocolTransportWS)
	m.init()
	m.send(`{"id":"m","type":"subscribe","payload":{"query":"mutation { updateEmployee(id: 9, name: \"Again\") { success } }"}}`)
	want = `{"id":"1","type":"next","payload":{"data":{"employeeUpdated":{"name":"Again"}}}}`
	for i, c := range clients {
		if got := c.readRaw(); got != want {
			t.Fatalf("client %d: %s; want %s", i, got, want)
		}
	}
}

// A subscription with a streamConfiguration reads a JetStream stream
// through a durable consumer of its own. Its cancel returns once the
// consumer has stopped: the Consume's subscription is gone from the
// connection, and no delivery of it is under way, so that Shutdown, which
// waits for the cancels, leaves no pull behind.
func TestJetStream(t *testing.T) {
	ns := startNATS(t)
	nc := natsConn(t, ns)
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "employees", Subjects: []string{"employee.>"}}); err != nil {
		t.Fatal(err)
	}
	src, err := NewNATSSource(nc, "test")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	cancel, err := src.Subscribe(context.Background(), []string{"employee.1"}, &StreamConfig{StreamName: "employees", ConsumerName: "gw", InactiveThreshold: 30},
		func(subj string, data []byte) { got <- subj + " " + string(data) }, func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if _, err := js.Publish("employee.1", []byte(`{"id":1}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != `employee.1 {"id":1}` {
			t.Fatalf("delivered %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event from the stream")
	}
	during := nc.NumSubscriptions()
	cancel() // again when the test returns: it does nothing then
	if n := nc.NumSubscriptions(); n != during-1 {
		t.Fatalf("NumSubscriptions after cancel = %d; want %d", n, during-1)
	}
	if _, err := src.Subscribe(context.Background(), []string{"x"}, &StreamConfig{StreamName: "missing", ConsumerName: "gw"}, func(string, []byte) {}, func(error) {}); err == nil {
		t.Fatal("Subscribe to a missing stream succeeded")
	}
}

func TestSubjectsChecked(t *testing.T) {
	// Control characters too: a NUL would let two different sets of
	// subjects name one durable consumer (consume joins them with NULs).
	for _, s := range []string{"", "a..b", "a.*", "a.>", "a b", ">", "a\x00b", "a\x01", "a.\x7f"} {
		if checkSubject(s) == nil {
			t.Errorf("checkSubject(%q) = nil; want an error", s)
		}
	}
	if err := checkSubject("employee.7"); err != nil {
		t.Errorf("checkSubject(employee.7) = %v", err)
	}
}

// A schema whose NATS subject cannot be one subject, whatever the
// arguments (a wildcard, an empty token, white space), is refused as it
// loads, naming the subject, where it loaded and every subscription to
// it, or publish, failed.
func TestSchemaSubjectsChecked(t *testing.T) {
	for _, subj := range []string{"employee.*", "employee.>", "a..{{ args.id }}", "{{ args.id }}.", "a b.{{ args.id }}"} {
		for _, sdl := range []string{
			`type Subscription { e(id: ID!): Int! @edfs__natsSubscribe(subjects: ["` + subj + `"]) }`,
			`type Subscription { e(id: ID!): Int! @edfs__natsSubscribe(subjects: ["ok"]) }
type Mutation { p(id: ID!): edfs__PublishResult! @edfs__natsPublish(subject: "` + subj + `") }`,
		} {
			if _, err := ParseSchema(sdl); err == nil || !strings.Contains(err.Error(), subj) {
				t.Errorf("ParseSchema with subject %q: %v; want an error naming it", subj, err)
			}
		}
	}
	if _, err := ParseSchema(`type Subscription { e(id: ID!): Int! @edfs__natsSubscribe(subjects: ["employee.{{ args.id }}.x"]) }`); err != nil {
		t.Errorf("ParseSchema with a good subject: %v", err)
	}
}

// A schema's streamConfiguration: the subscription reads the stream
// through a durable consumer, end to end.
func TestJetStreamSubscription(t *testing.T) {
	_, addr, js := serveOrders(t, `
type Subscription {
  orderShipped(id: ID!): Order! @edfs__natsSubscribe(subjects: ["order.{{ args.id }}"],
    streamConfiguration: { streamName: "orders", consumerName: "evgate" })
}
type Order { id: ID! status: String! }`)
	c := dialSubscribe(t, addr, "o", "subscription { orderShipped(id: 5) { status } }")
	waitFor(t, "the consumer", func() bool {
		n := 0
		for range js.ConsumerNames("orders") {
			n++
		}
		return n == 1
	})
	if _, err := js.Publish("order.5", []byte(`{"id":"5","status":"shipped"}`)); err != nil {
		t.Fatal(err)
	}
	if got, want := c.readRaw(), `{"id":"o","type":"next","payload":{"data":{"orderShipped":{"status":"shipped"}}}}`; got != want {
		t.Fatalf("next = %s; want %s", got, want)
	}
}

// TestJetStreamTriggersEachGetEveryEvent checks that subscriptions on the
// same stream, consumer name and subjects that are separate triggers (two
// fields here) each get every event: they share one durable consumer,
// read once and delivered to both, until the last leaves.
func TestJetStreamTriggersEachGetEveryEvent(t *testing.T) {
	g, addr, js := serveOrders(t, `
type Subscription {
  orderShipped(id: ID!): Order! @edfs__natsSubscribe(subjects: ["order.{{ args.id }}"],
    streamConfiguration: { streamName: "orders", consumerName: "evgate" })
  orderStatus(id: ID!): Order! @edfs__natsSubscribe(subjects: ["order.{{ args.id }}"],
    streamConfiguration: { streamName: "orders", consumerName: "evgate" })
}
type Order { id: ID! status: String! }`)
	a := dialSubscribe(t, addr, "a", "subscription { orderShipped(id: 5) { status } }")
	b := dialSubscribe(t, addr, "b", "subscription { orderStatus(id: 5) { status } }")
	waitFor(t, "two triggers subscribed upstream", func() bool { return triggersStarted(g) == 2 })
	const n = 10
	for i := 0; i < n; i++ {
		if _, err := js.Publish("order.5", []byte(fmt.Sprintf(`{"id":"5","status":"s%d"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		c         *client
		id, field string
	}{{a, "a", "orderShipped"}, {b, "b", "orderStatus"}} {
		for i := 0; i < n; i++ {
			want := fmt.Sprintf(`{"id":"%s","type":"next","payload":{"data":{"%s":{"status":"s%d"}}}}`, tc.id, tc.field, i)
			if got := tc.c.readRaw(); got != want {
				t.Fatalf("%s's event %d: %s; want %s", tc.id, i, got, want)
			}
		}
	}
	// Once a leaves, b goes on reading the consumer.
	a.send(`{"id":"a","type":"complete"}`)
	waitFor(t, "one trigger", func() bool { return triggersStarted(g) == 1 })
	if _, err := js.Publish("order.5", []byte(`{"id":"5","status":"later"}`)); err != nil {
		t.Fatal(err)
	}
	if got, want := b.readRaw(), `{"id":"b","type":"next","payload":{"data":{"orderStatus":{"status":"later"}}}}`; got != want {
		t.Fatalf("b's event after a left: %s; want %s", got, want)
	}
}

// triggersStarted returns how many of g's triggers have their upstream
// subscription in place.
func triggersStarted(g *Gateway) int {
	n := make(chan int, 1)
	e := g.engine
	if e.l.Submit(func() {
		started := 0
		for _, t := range e.triggers {
			if t.started {
				started++
			}
		}
		n <- started
	}) != nil {
		return 0
	}
	return <-n
}

// ackRecorder is a JetStream message, the seq'th of its stream, that
// records how it was answered.
type ackRecorder struct {
	jetstream.Msg
	seq          uint64
	acked, naked bool
}

func (m *ackRecorder) Data() []byte    { return []byte(`{"id":1}`) }
func (m *ackRecorder) Subject() string { return "employee.1" }
func (m *ackRecorder) Ack() error      { m.acked = true; return nil }
func (m *ackRecorder) Nak() error      { m.naked = true; return nil }
func (m *ackRecorder) Metadata() (*jetstream.MsgMetadata, error) {
	return &jetstream.MsgMetadata{Sequence: jetstream.SequencePair{Stream: m.seq}}, nil
}

// A message a durable consumer reads after its last reader has left, while
// it stops, is refused rather than acknowledged, so that the next
// subscriber gets it; with a reader, it is delivered and acknowledged.
func TestJetStreamNoReaderRefuses(t *testing.T) {
	var c jsConsumer
	m := &ackRecorder{seq: 1}
	c.deliver(m)
	if m.acked || !m.naked {
		t.Errorf("with no reader: acked %v, refused %v; want refused", m.acked, m.naked)
	}
	var got []string
	c.setReaders([]*jsReader{{deliver: func(subj string, data []byte) { got = append(got, subj+" "+string(data)) }}})
	m = &ackRecorder{seq: 1}
	c.deliver(m)
	if !m.acked || m.naked || len(got) != 1 || got[0] != `employee.1 {"id":1}` {
		t.Errorf("with a reader: acked %v, refused %v, delivered %q; want it delivered and acked", m.acked, m.naked, got)
	}
}

// A message the server delivers again after the consumer delivered it,
// or a later one (its acknowledgement lost: the connection dropped, the
// server crashed before storing it), is acknowledged and not delivered
// twice, whether it comes at once or after the consumer's AckWait.
func TestJetStreamRedeliverySkipped(t *testing.T) {
	var c jsConsumer
	var got []uint64
	var seq uint64
	c.setReaders([]*jsReader{{deliver: func(string, []byte) { got = append(got, seq) }}})
	for _, tc := range []struct {
		seq       uint64
		delivered bool
	}{
		{seq: 1, delivered: true},
		{seq: 2, delivered: true},
		{seq: 3, delivered: true},
		{seq: 2},
		{seq: 3},
		{seq: 5, delivered: true},
		{seq: 1},
		{seq: 6, delivered: true},
	} {
		seq = tc.seq
		n := len(got)
		m := &ackRecorder{seq: tc.seq}
		c.deliver(m)
		if delivered := len(got) > n; delivered != tc.delivered || !m.acked || m.naked {
			t.Errorf("deliver(seq %d): delivered %v, acked %v, refused %v; want delivered %v, acked", tc.seq, delivered, m.acked, m.naked, tc.delivered)
		}
	}
}

// Subjects that render to the same subject are subscribed to once: two
// NATS subscriptions on one subject would deliver each event twice.
func TestSameSubjectTwiceDeliversOnce(t *testing.T) {
	ns := startNATS(t)
	schema, err := ParseSchema(pairSchema)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewNATSSource(natsConn(t, ns), "twice")
	if err != nil {
		t.Fatal(err)
	}
	g, addr := serve(t, Config{Schema: schema, NATS: map[string]Source{"default": src}})
	c := dialSubscribe(t, addr, "1", `subscription { pair(a: "x", b: "x") { id } }`)
	waitFor(t, "the upstream subscription", func() bool { return triggersStarted(g) == 1 })
	pub := natsConn(t, ns)
	pub.Publish("p.x", []byte(`{"id":"1"}`))
	pub.Publish("p.x", []byte(`{"id":"2"}`))
	pub.Flush()
	var got []string
	for {
		msg, err := c.tryRead(500 * time.Millisecond)
		if err != nil {
			break
		}
		got = append(got, msg)
	}
	want := []string{
		`{"id":"1","type":"next","payload":{"data":{"pair":{"id":"1"}}}}`,
		`{"id":"1","type":"next","payload":{"data":{"pair":{"id":"2"}}}}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q;\nwant %q", got, want)
	}
}

// A subject past what a NATS protocol line holds, rendered from a
// client's argument, is refused: sent, the server answers "maximum
// control line exceeded", on which nats.go closes the connection for
// good, ending every other subscription. Before, one client could do
// that with a long id.
func TestLongSubjectRefused(t *testing.T) {
	ns := startNATS(t)
	g, addr := startNATSGateway(t, ns, "long")
	c := dialSubscribe(t, addr, "1", `subscription { employeeUpdated(id: 1) { id } }`)
	waitFor(t, "the upstream subscription", func() bool { return triggersStarted(g) == 1 })
	long := strings.Repeat("a", 5000)
	d := dialSubscribe(t, addr, "2", fmt.Sprintf(`subscription { employeeUpdated(id: %q) { id } }`, long))
	if m := d.read(); m["type"] != "error" {
		t.Fatalf("subscription to a long subject: %v; want an error", m)
	}
	d.send(fmt.Sprintf(`{"id":"3","type":"subscribe","payload":{"query":%q}}`, fmt.Sprintf(`mutation { updateEmployee(id: %q, name: "x") { success } }`, long)))
	if got := d.readRaw(); !strings.Contains(got, "publish failed") {
		t.Fatalf("publish to a long subject: %s; want publish failed", got)
	}
	pub := natsConn(t, ns)
	pub.Publish("employee.1", []byte(`{"id":"1"}`))
	pub.Flush()
	if got, want := c.readRaw(), `{"id":"1","type":"next","payload":{"data":{"employeeUpdated":{"id":"1"}}}}`; got != want {
		t.Fatalf("the other subscription after: %s; want %s", got, want)
	}
}
