package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(cleanup{m},
		// nats-server and nats.go keep goroutines of their own for a while
		// after shutdown; they are checked in their own projects.
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).Start.func1"),
		goleak.IgnoreAnyFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine.func1"),
	)
}

// cleanup removes what the tests installed once all have run.
type cleanup struct{ m *testing.M }

func (c cleanup) Run() int {
	code := c.m.Run()
	if installed != "" {
		os.RemoveAll(installed)
	}
	return code
}

const testSchema = `
type Query { _unused: Boolean }

type Subscription {
  employeeUpdated(id: ID!): Employee! @edfs__natsSubscribe(subjects: ["employee.{{ args.id }}"])
  all: Employee! @edfs__natsSubscribe(subjects: ["employee.a", "employee.b"])
  filtered(ids: [Int!]!): Employee!
    @edfs__natsSubscribe(subjects: ["employee.stream"])
    @openfed__subscriptionFilter(condition: { OR: [{ IN: { fieldPath: "id", values: ["{{ args.ids }}"] } }, { IN: { fieldPath: "name", values: ["boss"] } }] })
}

type Mutation {
  updateEmployee(id: ID!, name: String!): edfs__PublishResult! @edfs__natsPublish(subject: "employee.{{ args.id }}")
}

type Employee {
  id: ID!
  name: String!
  tags: [String!]
}
`

// startGateway serves testSchema on a MemorySource and returns the
// gateway, its source and its address.
func startGateway(t *testing.T, tweak func(*Config)) (*Gateway, *MemorySource, string) {
	t.Helper()
	schema, err := ParseSchema(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	src := &MemorySource{}
	cfg := Config{Schema: schema, NATS: map[string]Source{"default": src}}
	if tweak != nil {
		tweak(&cfg)
	}
	g, addr := serve(t, cfg)
	return g, src, addr
}

// serve starts a gateway for cfg on a loopback port, shut down when the
// test ends, and returns it and its address.
func serve(t *testing.T, cfg Config) (*Gateway, string) {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		g.Shutdown(ctx)
	})
	return g, ln.Addr().String()
}

// client is a WebSocket client speaking one of the subprotocols.
type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, addr string, protos ...string) *client {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protos, HandshakeTimeout: 5 * time.Second}
	c, _, err := d.Dial("ws://"+addr+"/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, ws: c}
}

func (c *client) send(msg string) {
	c.t.Helper()
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

// readWait bounds the wait for a message the server owes: generous, as
// an answer made under the race detector (a 16 MiB introspection result
// refused) takes seconds, and on a loaded machine more than 30.
const readWait = 2 * time.Minute

// read returns the next message as a map, failing the test on a close.
func (c *client) read() map[string]any {
	c.t.Helper()
	c.ws.SetReadDeadline(time.Now().Add(readWait))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("ReadMessage: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("message %s: %v", b, err)
	}
	return m
}

// readRaw returns the next message's text.
func (c *client) readRaw() string {
	c.t.Helper()
	c.ws.SetReadDeadline(time.Now().Add(readWait))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("ReadMessage: %v", err)
	}
	return string(b)
}

// closed waits for the server's close frame and returns its code and
// reason.
func (c *client) closed() (int, string) {
	c.t.Helper()
	c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := c.ws.ReadMessage()
		if err == nil {
			continue // messages queued before the close
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Text
		}
		c.t.Fatalf("ReadMessage = %v; want a close frame", err)
	}
}

func (c *client) init() {
	c.t.Helper()
	c.send(`{"type":"connection_init"}`)
	if m := c.read(); m["type"] != "connection_ack" {
		c.t.Fatalf("after connection_init got %v; want connection_ack", m)
	}
}

// dialSubscribe connects to addr with graphql-transport-ws, initialises
// the connection and subscribes to query under id.
func dialSubscribe(t *testing.T, addr, id, query string) *client {
	t.Helper()
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(fmt.Sprintf(`{"id":%q,"type":"subscribe","payload":{"query":%q}}`, id, query))
	return c
}

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func publish(t *testing.T, src *MemorySource, subject, data string) {
	t.Helper()
	if err := src.Publish(context.Background(), subject, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

func TestSubscribeNextComplete(t *testing.T) {
	_, src, addr := startGateway(t, nil)
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription($id: ID!) { e: employeeUpdated(id: $id) { id name } }","variables":{"id":"7"}}}`)
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.7") == 1 })
	publish(t, src, "employee.7", `{"id":7,"name":"Ada","extra":true}`)
	got := c.readRaw()
	want := `{"id":"1","type":"next","payload":{"data":{"e":{"id":"7","name":"Ada"}}}}`
	if got != want {
		t.Fatalf("next = %s\nwant %s", got, want)
	}
	c.send(`{"id":"1","type":"complete"}`)
	waitFor(t, "the upstream subscription to end", func() bool { return src.Subscribers("employee.7") == 0 })
	c.send(`{"type":"ping"}`)
	if m := c.read(); m["type"] != "pong" {
		t.Fatalf("after ping got %v; want pong", m)
	}
	// An id is free again after complete.
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 8) { id } }"}}`)
	waitFor(t, "the second upstream subscription", func() bool { return src.Subscribers("employee.8") == 1 })
	publish(t, src, "employee.8", `{"id":8}`)
	if got, want := c.readRaw(), `{"id":"1","type":"next","payload":{"data":{"employeeUpdated":{"id":"8"}}}}`; got != want {
		t.Fatalf("next = %s; want %s", got, want)
	}
}

func TestTriggerShared(t *testing.T) {
	g, src, addr := startGateway(t, nil)
	var clients []*client
	for i := range 5 {
		c := dial(t, addr, ProtocolTransportWS)
		c.init()
		// Different selections and aliases, one trigger.
		q := []string{"{ id }", "{ name }", "{ id name }", "{ __typename id }", "{ id }"}[i]
		c.send(`{"id":"s","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) ` + q + ` }"}}`)
		clients = append(clients, c)
	}
	waitFor(t, "five subscriptions", func() bool { return g.Stats().Subscriptions.Load() == 5 })
	waitFor(t, "one upstream subscription", func() bool { return src.Subscribers("employee.1") == 1 })
	if n := g.Stats().Triggers.Load(); n != 1 {
		t.Fatalf("Triggers = %d; want 1", n)
	}
	publish(t, src, "employee.1", `{"id":"1","name":"Grace"}`)
	for i, c := range clients {
		m := c.read()
		if m["type"] != "next" {
			t.Fatalf("client %d: %v; want next", i, m)
		}
	}
}

func TestBadEventGoesOn(t *testing.T) {
	_, src, addr := startGateway(t, nil)
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"a","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 2) { id } }"}}`)
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.2") == 1 })
	publish(t, src, "employee.2", `not json`)
	m := c.read()
	p, _ := m["payload"].(map[string]any)
	if m["type"] != "next" || p["errors"] == nil {
		t.Fatalf("after a bad event got %v; want next with errors", m)
	}
	publish(t, src, "employee.2", `{"id":2}`)
	if got, want := c.readRaw(), `{"id":"a","type":"next","payload":{"data":{"employeeUpdated":{"id":"2"}}}}`; got != want {
		t.Fatalf("next = %s; want %s", got, want)
	}
}

func TestInvalidDocumentsKeepTheConnection(t *testing.T) {
	_, _, addr := startGateway(t, nil)
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	for _, q := range []string{
		`subscription { nope }`,
		`subscription { employeeUpdated(id: 1) { id `,
		`subscription { a: employeeUpdated(id: 1) { id } b: employeeUpdated(id: 2) { id } }`,
		`subscription { employeeUpdated { id } }`,
		`query { _unused }`,
		`subscription($id: ID!) { employeeUpdated(id: $id) { id } }`,
	} {
		c.send(fmt.Sprintf(`{"id":"x","type":"subscribe","payload":{"query":%q}}`, q))
		m := c.read()
		if m["type"] != "error" || m["id"] != "x" {
			t.Fatalf("%s: got %v; want an error message", q, m)
		}
	}
	c.send(`{"type":"ping"}`)
	if m := c.read(); m["type"] != "pong" {
		t.Fatalf("after errors got %v; want pong", m)
	}
}

// TestProtocolErrorsClose checks the close code of each protocol error.
// InitTimeout is 2 s, within which the clients that send first do so on a
// loaded machine too, rather than be closed for the timeout.
func TestProtocolErrorsClose(t *testing.T) {
	_, _, addr := startGateway(t, func(c *Config) { c.InitTimeout = 2 * time.Second })
	cases := []struct {
		name   string
		protos []string
		init   bool
		send   []string
		code   int
	}{
		{name: "no subprotocol", code: CloseSubprotocolNotAcceptable},
		{name: "unknown subprotocol", protos: []string{"graphql-sse"}, code: CloseSubprotocolNotAcceptable},
		{name: "init timeout", protos: []string{ProtocolTransportWS}, code: CloseInitTimeout},
		{name: "subscribe before init", protos: []string{ProtocolTransportWS}, send: []string{`{"id":"1","type":"subscribe","payload":{"query":"subscription { all { id } }"}}`}, code: CloseUnauthorized},
		{name: "second init", protos: []string{ProtocolTransportWS}, init: true, send: []string{`{"type":"connection_init"}`}, code: CloseTooManyInits},
		{name: "duplicate id", protos: []string{ProtocolTransportWS}, init: true, send: []string{
			`{"id":"1","type":"subscribe","payload":{"query":"subscription { all { id } }"}}`,
			`{"id":"1","type":"subscribe","payload":{"query":"subscription { all { id } }"}}`}, code: CloseSubscriberExists},
		{name: "not JSON", protos: []string{ProtocolTransportWS}, init: true, send: []string{`{"type":`}, code: CloseBadRequest},
		{name: "unknown type", protos: []string{ProtocolTransportWS}, init: true, send: []string{`{"type":"hello"}`}, code: CloseBadRequest},
		{name: "next from client", protos: []string{ProtocolTransportWS}, init: true, send: []string{`{"id":"1","type":"next","payload":{}}`}, code: CloseBadRequest},
		{name: "subscribe without id", protos: []string{ProtocolTransportWS}, init: true, send: []string{`{"type":"subscribe","payload":{"query":"{}"}}`}, code: CloseBadRequest},
		{name: "subscribe with a number id", protos: []string{ProtocolTransportWS}, init: true, send: []string{`{"id":1,"type":"subscribe","payload":{"query":"{}"}}`}, code: CloseBadRequest},
		{name: "query not a string", protos: []string{ProtocolTransportWS}, init: true, send: []string{`{"id":"1","type":"subscribe","payload":{"query":1}}`}, code: CloseBadRequest},
		{name: "variables not an object", protos: []string{ProtocolTransportWS}, init: true, send: []string{`{"id":"1","type":"subscribe","payload":{"query":"{}","variables":[]}}`}, code: CloseBadRequest},
		{name: "init payload not an object", protos: []string{ProtocolTransportWS}, send: []string{`{"type":"connection_init","payload":"x"}`}, code: CloseBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr, tc.protos...)
			if tc.init {
				c.init()
			}
			for _, m := range tc.send {
				c.send(m)
			}
			if code, reason := c.closed(); code != tc.code {
				t.Fatalf("closed with %d %q; want %d", code, reason, tc.code)
			}
		})
	}
}

func TestHugeMessageCloses(t *testing.T) {
	_, _, addr := startGateway(t, func(c *Config) { c.MaxMessageSize = 1024 })
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"` + strings.Repeat(" ", 2048) + `"}}`)
	if code, _ := c.closed(); code != 1009 {
		t.Fatalf("closed with %d; want 1009", code)
	}
}

func TestAuthenticate(t *testing.T) {
	_, _, addr := startGateway(t, func(c *Config) {
		c.Authenticate = func(p map[string]any) error {
			if p["token"] != "secret" {
				return errors.New("bad token")
			}
			return nil
		}
	})
	c := dial(t, addr, ProtocolTransportWS)
	c.send(`{"type":"connection_init","payload":{"token":"wrong"}}`)
	if code, _ := c.closed(); code != CloseForbidden {
		t.Fatalf("closed with %d; want %d", code, CloseForbidden)
	}
	c = dial(t, addr, ProtocolTransportWS)
	c.send(`{"type":"connection_init","payload":{"token":"secret"}}`)
	if m := c.read(); m["type"] != "connection_ack" {
		t.Fatalf("got %v; want connection_ack", m)
	}
}

func TestMutationOverSocketAndHTTP(t *testing.T) {
	_, src, addr := startGateway(t, nil)
	sub := dial(t, addr, ProtocolTransportWS)
	sub.init()
	sub.send(`{"id":"s","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 3) { name } }"}}`)
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.3") == 1 })

	pub := dial(t, addr, ProtocolTransportWS)
	pub.init()
	pub.send(`{"id":"m","type":"subscribe","payload":{"query":"mutation { updateEmployee(id: 3, name: \"Lin\") { success } }"}}`)
	if got, want := pub.readRaw(), `{"id":"m","type":"next","payload":{"data":{"updateEmployee":{"success":true}}}}`; got != want {
		t.Fatalf("mutation next = %s; want %s", got, want)
	}
	if m := pub.read(); m["type"] != "complete" {
		t.Fatalf("after the mutation got %v; want complete", m)
	}
	if got, want := sub.readRaw(), `{"id":"s","type":"next","payload":{"data":{"employeeUpdated":{"name":"Lin"}}}}`; got != want {
		t.Fatalf("next = %s; want %s", got, want)
	}

	body := `{"query":"mutation($n: String!) { updateEmployee(id: 3, name: $n) { success } }","variables":{"n":"Kay"}}`
	resp, err := http.Post("http://"+addr+"/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"success":true`)) {
		t.Fatalf("POST = %d %s; want 200 with success", resp.StatusCode, b)
	}
	if got, want := sub.readRaw(), `{"id":"s","type":"next","payload":{"data":{"employeeUpdated":{"name":"Kay"}}}}`; got != want {
		t.Fatalf("next = %s; want %s", got, want)
	}

	for _, bad := range []string{`{`, `{"query":"subscription { all { id } }"}`, `{"query":"mutation { nope }"}`} {
		if status, b := postGraphQL(t, addr, bad); status != 400 || !strings.Contains(b, `"errors"`) {
			t.Fatalf("POST %s = %d %s; want 400 with errors", bad, status, b)
		}
	}
}

// A POST's answer is application/graphql-response+json when the Accept
// field prefers it, and then a request that does not parse or validate is
// 400; otherwise it is application/json, and such a request is 200 with
// its errors, as GraphQL-over-HTTP has it, where it was always
// application/json and 400. A body that is no GraphQL request at all is
// 400 either way.
func TestPostStatusByAccept(t *testing.T) {
	_, _, addr := startGateway(t, nil)
	const (
		gql    = "application/graphql-response+json; charset=utf-8"
		legacy = "application/json"
	)
	for _, tc := range []struct {
		accept      string
		contentType string
	}{
		{"", legacy},
		{"*/*", legacy},
		{"application/json", legacy},
		{"application/graphql-response+json", gql},
		{"application/graphql-response+json, application/json;q=0.9", gql},
		{"application/json, application/graphql-response+json", gql},
		{"application/json, application/graphql-response+json;q=0.5", legacy},
		{"application/graphql-response+json;q=0, */*", legacy},
		{"application/*;q=0.5, application/graphql-response+json", gql},
		{"text/html", legacy},
		{"application/graphql-response+json;q=x", legacy},
	} {
		want := 200
		if tc.contentType == gql {
			want = 400
		}
		for _, body := range []string{`{"query":"mutation { nope }"}`, `{"query":"{"}`, `{"query":"subscription { all { id } }"}`} {
			status, ct, b := postAccept(t, addr, tc.accept, body)
			if status != want || ct != tc.contentType || !strings.Contains(b, `"errors"`) {
				t.Errorf("Accept %q, %s: %d %s %s; want %d %s with errors", tc.accept, body, status, ct, b, want, tc.contentType)
			}
		}
		if status, ct, b := postAccept(t, addr, tc.accept, `{"query":"{ __typename }"}`); status != 200 || ct != tc.contentType || b != `{"data":{"__typename":"Query"}}` {
			t.Errorf("Accept %q, a query: %d %s %s", tc.accept, status, ct, b)
		}
		if status, ct, _ := postAccept(t, addr, tc.accept, `{"nope":1}`); status != 400 || ct != tc.contentType {
			t.Errorf("Accept %q, no query: %d %s; want 400 %s", tc.accept, status, ct, tc.contentType)
		}
	}
}

// TestRootFieldMergedByResponseKey checks that a root field selected more
// than once under one response key (as Relay's fragments produce) is one
// root field, its nodes' selections merged, as GraphQL's CollectFields
// merges them: for a subscription and for a mutation.
func TestRootFieldMergedByResponseKey(t *testing.T) {
	_, src, addr := startGateway(t, nil)
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { ...A ...B } fragment A on Subscription { employeeUpdated(id: 1) { id } } fragment B on Subscription { employeeUpdated(id: 1) { name } }"}}`)
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.1") == 1 })
	c.send(`{"id":"m","type":"subscribe","payload":{"query":"mutation { updateEmployee(id: 1, name: \"Ada\") { success } ... on Mutation { updateEmployee(id: 1, name: \"Ada\") { __typename } } }"}}`)
	want := map[string]string{
		"1": `{"id":"1","type":"next","payload":{"data":{"employeeUpdated":{"id":"1","name":"Ada"}}}}`,
		"m": `{"id":"m","type":"next","payload":{"data":{"updateEmployee":{"success":true,"__typename":"edfs__PublishResult"}}}}`,
	}
	for len(want) > 0 {
		got := c.readRaw()
		var m struct{ ID, Type string }
		json.Unmarshal([]byte(got), &m)
		if m.Type == "complete" {
			continue
		}
		if got != want[m.ID] {
			t.Fatalf("next = %s; want %s", got, want[m.ID])
		}
		delete(want, m.ID)
	}
}

// TestFragmentSpreadsFollowedOnce checks that each fragment is followed
// once where the root fields are collected: a short document whose
// fragments spread each other twice per level, 2^40 paths, which followed
// one by one would take days, is served at once; within 10 s, which a
// loaded machine leaves room for.
func TestFragmentSpreadsFollowedOnce(t *testing.T) {
	_, src, addr := startGateway(t, nil)
	const depth = 40
	var q strings.Builder
	q.WriteString("subscription { ...F0 }")
	for i := 0; i < depth; i++ {
		fmt.Fprintf(&q, " fragment F%d on Subscription { ...F%d ...F%d }", i, i+1, i+1)
	}
	fmt.Fprintf(&q, " fragment F%d on Subscription { employeeUpdated(id: 1) { id } }", depth)
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	start := time.Now()
	c.send(fmt.Sprintf(`{"id":"1","type":"subscribe","payload":{"query":%q}}`, q.String()))
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.1") == 1 })
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a %d-byte document took %v to subscribe", q.Len(), d)
	}
	publish(t, src, "employee.1", `{"id":"1"}`)
	if got, want := c.readRaw(), `{"id":"1","type":"next","payload":{"data":{"employeeUpdated":{"id":"1"}}}}`; got != want {
		t.Fatalf("next = %s; want %s", got, want)
	}
}

// TestPostChecks checks that POST /graphql publishes only for a request
// that is application/json, comes from an allowed Origin when it names
// one, and passes Authenticate (given the request's Authorization field),
// and answers the others 415, 403 and 401.
func TestPostChecks(t *testing.T) {
	_, src, addr := startGateway(t, func(c *Config) { c.Authenticate = TokenAuth("s3cret") })
	published := make(chan string, 8)
	cancel, _ := src.Subscribe(context.Background(), []string{"employee.3"}, nil, func(_ string, d []byte) { published <- string(d) }, func(error) {})
	defer cancel()
	tests := []struct {
		name   string
		header map[string]string
		status int
	}{
		{"no token", map[string]string{"Content-Type": "application/json"}, 401},
		{"wrong token", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer guess"}, 401},
		{"token", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer s3cret"}, 200},
		{"charset", map[string]string{"Content-Type": "application/json; charset=utf-8", "Authorization": "Bearer s3cret"}, 200},
		{"text/plain", map[string]string{"Content-Type": "text/plain", "Authorization": "Bearer s3cret"}, 415},
		{"no content type", map[string]string{"Authorization": "Bearer s3cret"}, 415},
		{"other origin", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer s3cret", "Origin": "https://elsewhere.example"}, 403},
		{"own origin", map[string]string{"Content-Type": "application/json", "Authorization": "Bearer s3cret", "Origin": "http://" + addr}, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"query":"mutation { updateEmployee(id: 3, name: \"Mallory\") { success } }"}`
			req, err := http.NewRequest("POST", "http://"+addr+"/graphql", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("POST = %d %s; want %d", resp.StatusCode, b, tc.status)
			}
			// The source delivers synchronously, before the answer.
			if n := len(published); tc.status == 200 && n != 1 || tc.status != 200 && n != 0 {
				t.Fatalf("POST = %d, events published = %d", resp.StatusCode, n)
			}
			for len(published) > 0 {
				<-published
			}
		})
	}
}

func TestLegacyProtocol(t *testing.T) {
	_, src, addr := startGateway(t, func(c *Config) { c.KeepAlive = 50 * time.Millisecond })
	c := dial(t, addr, ProtocolLegacyWS)
	c.send(`{"type":"connection_init","payload":{}}`)
	if m := c.read(); m["type"] != "connection_ack" {
		t.Fatalf("got %v; want connection_ack", m)
	}
	if m := c.read(); m["type"] != "ka" {
		t.Fatalf("got %v; want ka", m)
	}
	c.send(`{"id":"1","type":"start","payload":{"query":"subscription { employeeUpdated(id: 4) { id } }"}}`)
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.4") == 1 })
	publish(t, src, "employee.4", `{"id":"4"}`)
	for {
		m := c.read()
		if m["type"] == "ka" {
			continue
		}
		if m["type"] != "data" || m["id"] != "1" {
			t.Fatalf("got %v; want data for 1", m)
		}
		break
	}
	c.send(`{"id":"1","type":"stop"}`)
	waitFor(t, "the upstream subscription to end", func() bool { return src.Subscribers("employee.4") == 0 })
	c.send(`{"type":"connection_terminate"}`)
	if code, _ := c.closed(); code != 1000 {
		t.Fatalf("closed with %d; want 1000", code)
	}
}

func TestShutdownCompletes(t *testing.T) {
	g, src, addr := startGateway(t, nil)
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { all { id } }"}}`)
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.a") == 1 })
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- g.Shutdown(ctx)
	}()
	if got, want := c.readRaw(), `{"id":"1","type":"complete"}`; got != want {
		t.Fatalf("got %s; want %s", got, want)
	}
	if code, _ := c.closed(); code != CloseGoingAway {
		t.Fatalf("closed with %d; want %d", code, CloseGoingAway)
	}
	c.ws.Close()
	if err := <-done; err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if n := src.Subscribers("employee.a"); n != 0 {
		t.Fatalf("upstream subscriptions after Shutdown = %d; want 0", n)
	}
}

// gatedSource's Subscribe waits for release before subscribing, whatever
// its context; the cancel it returns waits for releaseCancel, if not nil,
// then closes cancelled.
type gatedSource struct {
	MemorySource
	entered, release, cancelled chan struct{}
	releaseCancel               chan struct{}
}

func (g *gatedSource) Subscribe(ctx context.Context, subjects []string, sc *StreamConfig, deliver func(string, []byte), ended func(error)) (func(), error) {
	g.entered <- struct{}{}
	<-g.release
	cancel, err := g.MemorySource.Subscribe(ctx, subjects, sc, deliver, ended)
	if err != nil {
		return nil, err
	}
	return func() {
		if g.releaseCancel != nil {
			<-g.releaseCancel
		}
		cancel()
		close(g.cancelled)
	}, nil
}

// TestShutdownEndsPendingUpstream checks that an upstream subscription
// whose Subscribe is still under way when Shutdown runs, and which the
// source completes in spite of the cancelled context, is ended before
// Shutdown returns.
func TestShutdownEndsPendingUpstream(t *testing.T) {
	src := &gatedSource{entered: make(chan struct{}, 1), release: make(chan struct{}), cancelled: make(chan struct{})}
	g, _, addr := startGateway(t, func(c *Config) { c.NATS = map[string]Source{"default": src} })
	c := dialSubscribe(t, addr, "1", "subscription { employeeUpdated(id: 5) { id } }")
	<-src.entered
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.Shutdown(ctx) }()
	c.closed()
	c.ws.Close()
	select {
	case err := <-done:
		t.Fatalf("Shutdown = %v before the source answered Subscribe", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(src.release)
	if err := <-done; err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	select {
	case <-src.cancelled:
	default:
		t.Fatal("Shutdown returned before the upstream subscription was ended")
	}
	if n := src.Subscribers("employee.5"); n != 0 {
		t.Fatalf("upstream subscriptions after Shutdown = %d; want 0", n)
	}
}

// TestShutdownWaitsForUpstreamCancel checks that Shutdown waits for the
// sources to end the upstream subscriptions, and that its context bounds
// the wait.
func TestShutdownWaitsForUpstreamCancel(t *testing.T) {
	for _, patient := range []bool{false, true} {
		release := make(chan struct{})
		close(release)
		src := &gatedSource{entered: make(chan struct{}, 1), release: release,
			cancelled: make(chan struct{}), releaseCancel: make(chan struct{})}
		g, _, addr := startGateway(t, func(c *Config) { c.NATS = map[string]Source{"default": src} })
		c := dialSubscribe(t, addr, "1", "subscription { employeeUpdated(id: 5) { id } }")
		<-src.entered
		waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.5") == 1 })
		wait := 100 * time.Millisecond
		if patient {
			wait = 5 * time.Second
			time.AfterFunc(100*time.Millisecond, func() { close(src.releaseCancel) })
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		err := shutdownClosing(g, c, ctx)
		cancel()
		if !patient {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Shutdown while the source's cancel hangs = %v; want %v", err, context.DeadlineExceeded)
			}
			close(src.releaseCancel)
			<-src.cancelled
			continue
		}
		if err != nil {
			t.Errorf("Shutdown = %v; want nil once the source's cancel returns", err)
		}
		select {
		case <-src.cancelled:
		default:
			t.Error("Shutdown returned before the source's cancel")
		}
	}
}

// TestShutdownGivesUpStartingSubscription checks that Shutdown cancels
// the context of a Subscribe still under way, rather than wait out
// UpstreamTimeout.
func TestShutdownGivesUpStartingSubscription(t *testing.T) {
	g, _, addr := startGateway(t, func(c *Config) {
		c.NATS = map[string]Source{"default": &hangingSource{}}
		c.UpstreamTimeout = time.Hour
	})
	c := dialSubscribe(t, addr, "h", `subscription { employeeUpdated(id: "hang") { id } }`)
	c.send(`{"type":"ping"}`)
	if m := c.read(); m["type"] != "pong" {
		t.Fatalf("got %v; want pong", m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdownClosing(g, c, ctx); err != nil {
		t.Fatalf("Shutdown = %v; want nil, the hanging Subscribe given up", err)
	}
}

// shutdownClosing shuts g down while c reads until the gateway's close,
// then closes, and returns Shutdown's error.
func shutdownClosing(g *Gateway, c *client, ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- g.Shutdown(ctx) }()
	c.closed()
	c.ws.Close()
	return <-done
}

func TestUnknownProvider(t *testing.T) {
	schema, err := ParseSchema(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Schema: schema}); err == nil || !strings.Contains(err.Error(), `provider "default"`) {
		t.Fatalf("New without sources = %v; want an error naming the provider", err)
	}
}

// A client that stops reading is closed as a slow consumer once its
// unsent messages pass MaxOutbound; another client on the same trigger
// gets every event meanwhile.
func TestSlowConsumerClosed(t *testing.T) {
	g, src, addr := startGateway(t, func(c *Config) { c.MaxOutbound = 64 << 10 })
	slow := dial(t, addr, ProtocolTransportWS)
	slow.init()
	slow.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 8) { name } }"}}`)
	fast := dial(t, addr, ProtocolTransportWS)
	fast.init()
	fast.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 8) { name } }"}}`)
	waitFor(t, "two subscriptions", func() bool { return g.Stats().Subscriptions.Load() == 2 })
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.8") == 1 })
	event := `{"name":"` + strings.Repeat("x", 4096) + `"}`
	var got atomic.Int64
	readErr := make(chan error, 1)
	go func() {
		for {
			fast.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, _, err := fast.ws.ReadMessage(); err != nil {
				readErr <- err
				return
			}
			got.Add(1)
		}
	}()
	// The slow client reads once it was closed as one: the gateway resets
	// a peer that has not read up to its close frame within the close
	// handshake's CloseTimeout (5 s), which the events published meanwhile
	// can outlast on a loaded machine.
	slowErr := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); g.Stats().SlowConsumers.Load() < 1; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				slowErr <- errors.New("not closed as a slow consumer in 30 s")
				return
			}
		}
		slow.ws.SetReadDeadline(time.Now().Add(30 * time.Second))
		for {
			if _, _, err := slow.ws.ReadMessage(); err != nil {
				slowErr <- err // the close frame, after the messages queued before it
				return
			}
		}
	}()
	// In steps the reading client keeps up with, so that no event waits
	// long enough in the trigger's queue to be dropped.
	for i := 1; i <= 2000; i++ {
		publish(t, src, "employee.8", event)
		if i%100 == 0 {
			waitFor(t, "the reading client", func() bool {
				select {
				case err := <-readErr:
					t.Fatalf("reading: %v after %d", err, got.Load())
				default:
				}
				return got.Load() >= int64(i)
			})
			t.Logf("%d: got %d dropped %d in %d", i, got.Load(), g.Stats().EventsDropped.Load(), g.Stats().EventsIn.Load())
		}
	}
	if d := g.Stats().EventsDropped.Load(); d != 0 {
		t.Fatalf("EventsDropped = %d; want 0", d)
	}
	var ce *websocket.CloseError
	if err := <-slowErr; !errors.As(err, &ce) {
		t.Fatalf("slow client: ReadMessage = %v; want a close frame", err)
	}
	if ce.Code != CloseSlowConsumer {
		t.Fatalf("slow client closed with %d; want %d", ce.Code, CloseSlowConsumer)
	}
}

// Subscribers of one trigger with different filter arguments each get
// the events their filter admits, in order.
// TestSubscriptionFilter checks that each subscriber of a filtered field
// gets the events its arguments' values admit: a list given as a
// variable, as a literal, or as a single value for a list variable, which
// GraphQL's input coercion makes a list of one.
func TestSubscriptionFilter(t *testing.T) {
	g, src, addr := startGateway(t, nil)
	a := dial(t, addr, ProtocolTransportWS)
	a.init()
	a.send(`{"id":"a","type":"subscribe","payload":{"query":"subscription($ids: [Int!]!) { filtered(ids: $ids) { id } }","variables":{"ids":[1,3]}}}`)
	b := dial(t, addr, ProtocolTransportWS)
	b.init()
	b.send(`{"id":"b","type":"subscribe","payload":{"query":"subscription { filtered(ids: [2]) { id } }"}}`)
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"c","type":"subscribe","payload":{"query":"subscription($ids: [Int!]!) { filtered(ids: $ids) { id } }","variables":{"ids":5}}}`)
	waitFor(t, "three subscriptions", func() bool { return g.Stats().Subscriptions.Load() == 3 })
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.stream") == 1 })
	for _, e := range []string{`{"id":1}`, `{"id":2}`, `{"id":3}`, `{"id":4,"name":"boss"}`, `{"id":5}`} {
		publish(t, src, "employee.stream", e)
	}
	for _, tc := range []struct {
		c    *client
		want []string
	}{
		{a, []string{"1", "3", "4"}},
		{b, []string{"2", "4"}},
		{c, []string{"4", "5"}},
	} {
		for _, id := range tc.want {
			m := tc.c.read()
			got := fmt.Sprint(m["payload"].(map[string]any)["data"].(map[string]any)["filtered"].(map[string]any)["id"])
			if got != id {
				t.Fatalf("got id %s; want %s (all: %v)", got, id, tc.want)
			}
		}
	}
}

// TestVariablesCoerced checks that variables are coerced as GraphQL's
// CoerceVariableValues coerces them, with graphql-js's messages: a string
// is no Int or Float, an enum value is spelled as the enum's, a single
// value for a list is a list of one, null and a missing value are refused
// for a non-null type, an input object's missing fields take their
// defaults and unknown ones are refused. What is accepted reaches the
// arguments, and through them the subjects and the filter, as coerced.
func TestVariablesCoerced(t *testing.T) {
	schema, err := ParseSchema(testSchema + `
enum Style { SHORT LONG }
input Range { from: Int! to: Int = 10 }
extend type Subscription {
  styled(s: Style!): Employee! @edfs__natsSubscribe(subjects: ["styled.{{ args.s }}"])
  scalars(r: Range, f: Float, b: Boolean, s: String): Employee! @edfs__natsSubscribe(subjects: ["scalars"])
}`)
	if err != nil {
		t.Fatal(err)
	}
	g, _, _ := startGateway(t, func(c *Config) { c.Schema = schema })
	const (
		ids     = `subscription($ids: [Int!]!) { filtered(ids: $ids) { id } }`
		styled  = `subscription($s: Style!) { styled(s: $s) { id } }`
		scalars = `subscription($r: Range, $f: Float, $b: Boolean, $s: String) { scalars(r: $r, f: $f, b: $b, s: $s) { id } }`
		id      = `subscription($id: ID!) { employeeUpdated(id: $id) { id } }`
	)
	tests := []struct {
		name  string
		query string
		vars  string
		args  string // the arguments accepted, as JSON
		err   string // or the error
	}{
		{name: "list", query: ids, vars: `{"ids":[1,2.0]}`, args: `{"ids":[1,2]}`},
		{name: "list of one", query: ids, vars: `{"ids":5}`, args: `{"ids":[5]}`},
		{name: "string for Int", query: ids, vars: `{"ids":["1"]}`, err: `Variable "$ids" got invalid value "1" at "ids[0]"; Int cannot represent non-integer value: "1"`},
		{name: "fraction for Int", query: ids, vars: `{"ids":1.5}`, err: `Variable "$ids" got invalid value 1.5; Int cannot represent non-integer value: 1.5`},
		{name: "Int past 32 bits", query: ids, vars: `{"ids":[3000000000]}`, err: `Variable "$ids" got invalid value 3000000000 at "ids[0]"; Int cannot represent non 32-bit signed integer value: 3000000000`},
		{name: "null item", query: ids, vars: `{"ids":[1,null]}`, err: `Variable "$ids" got invalid value null at "ids[1]"; Expected non-nullable type "Int!" not to be null.`},
		{name: "missing", query: ids, vars: `{}`, err: `Variable "$ids" of required type "[Int!]!" was not provided.`},
		{name: "null", query: ids, vars: `{"ids":null}`, err: `Variable "$ids" of non-null type "[Int!]!" must not be null.`},
		{name: "enum", query: styled, vars: `{"s":"SHORT"}`, args: `{"s":"SHORT"}`},
		{name: "enum default", query: `subscription($s: Style! = LONG) { styled(s: $s) { id } }`, vars: `{}`, args: `{"s":"LONG"}`},
		{name: "enum spelled otherwise", query: styled, vars: `{"s":"short"}`, err: `Variable "$s" got invalid value "short"; Value "short" does not exist in "Style" enum. Did you mean the enum value "SHORT"?`},
		{name: "enum not a string", query: styled, vars: `{"s":1}`, err: `Variable "$s" got invalid value 1; Enum "Style" cannot represent non-string value: 1.`},
		{name: "input object default", query: scalars, vars: `{"r":{"from":1},"f":2,"b":true,"s":"x"}`, args: `{"b":true,"f":2,"r":{"from":1,"to":10},"s":"x"}`},
		{name: "input object field missing", query: scalars, vars: `{"r":{"to":1}}`, err: `Variable "$r" got invalid value { to: 1 }; Field "from" of required type "Int!" was not provided.`},
		{name: "input object field unknown", query: scalars, vars: `{"r":{"from":1,"x":2}}`, err: `Variable "$r" got invalid value { from: 1, x: 2 }; Field "x" is not defined by type "Range".`},
		{name: "input object not an object", query: scalars, vars: `{"r":"x"}`, err: `Variable "$r" got invalid value "x"; Expected type "Range" to be an object.`},
		{name: "string for Float", query: scalars, vars: `{"f":"1.5"}`, err: `Variable "$f" got invalid value "1.5"; Float cannot represent non numeric value: "1.5"`},
		{name: "string for Boolean", query: scalars, vars: `{"b":"true"}`, err: `Variable "$b" got invalid value "true"; Boolean cannot represent a non boolean value: "true"`},
		{name: "number for String", query: scalars, vars: `{"s":1}`, err: `Variable "$s" got invalid value 1; String cannot represent a non string value: 1`},
		{name: "integer ID", query: id, vars: `{"id":7}`, args: `{"id":7}`},
		{name: "fraction for ID", query: id, vars: `{"id":1.5}`, err: `Variable "$id" got invalid value 1.5; ID cannot represent value: 1.5`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var vars map[string]any
			d := json.NewDecoder(strings.NewReader(tc.vars))
			d.UseNumber()
			if err := d.Decode(&vars); err != nil {
				t.Fatal(err)
			}
			op, errs := g.prepare(&request{Query: tc.query, Variables: vars})
			if tc.err != "" {
				if len(errs) != 1 || errs[0].Message != tc.err {
					t.Fatalf("prepare with %s = %v; want the error %s", tc.vars, errs, tc.err)
				}
				return
			}
			if errs != nil {
				t.Fatalf("prepare with %s = %v; want the arguments %s", tc.vars, errs, tc.args)
			}
			if got, _ := json.Marshal(op.args); string(got) != tc.args {
				t.Fatalf("prepare with %s: arguments %s; want %s", tc.vars, got, tc.args)
			}
		})
	}
	// The subject is rendered from the enum value, the filter from the
	// integers.
	op, errs := g.prepare(&request{Query: styled, Variables: map[string]any{"s": "LONG"}})
	if errs != nil || len(op.subjects) != 1 || op.subjects[0] != "styled.LONG" {
		t.Errorf("styled with LONG: subjects %v, errors %v; want styled.LONG", op.subjects, errs)
	}
	op, errs = g.prepare(&request{Query: ids, Variables: map[string]any{"ids": json.Number("1")}})
	if errs != nil || !op.flt.match(map[string]any{"id": json.Number("1")}) {
		t.Errorf("filtered with ids 1: filter %s, errors %v; want it to admit the id 1", op.flt.key(), errs)
	}
}

// hangingSource never completes a subscription: Subscribe waits until its
// context ends.
type hangingSource struct{ MemorySource }

func (h *hangingSource) Subscribe(ctx context.Context, subjects []string, _ *StreamConfig, _ func(string, []byte), _ func(error)) (func(), error) {
	if subjects[0] == "employee.hang" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return h.MemorySource.Subscribe(ctx, subjects, nil, func(string, []byte) {}, func(error) {})
}

// An upstream that hangs costs its own subscribers an error after
// UpstreamTimeout; the connection, and other subscriptions, go on.
// UpstreamTimeout is 2 s, within which the ping sent after the subscribe
// is answered on a loaded machine too, before the subscribe's error.
func TestUpstreamHangs(t *testing.T) {
	schema, err := ParseSchema(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	_, _, addr := startGateway(t, func(c *Config) {
		c.NATS = map[string]Source{"default": &hangingSource{}}
		c.Schema = schema
		c.UpstreamTimeout = 2 * time.Second
	})
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"h","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: \"hang\") { id } }"}}`)
	c.send(`{"type":"ping"}`)
	if m := c.read(); m["type"] != "pong" {
		t.Fatalf("got %v; want pong while the upstream hangs", m)
	}
	m := c.read()
	if m["type"] != "error" || m["id"] != "h" || !strings.Contains(fmt.Sprint(m["payload"]), "deadline") {
		t.Fatalf("got %v; want an error for h", m)
	}
	// The id is free again.
	c.send(`{"id":"h","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { id } }"}}`)
	c.send(`{"type":"ping"}`)
	if m := c.read(); m["type"] != "pong" {
		t.Fatalf("got %v; want pong", m)
	}
}

// A flood of subscribes on one connection stops at MaxSubscriptions with an
// error per refused operation; the accepted ones work.
func TestSubscribeFlood(t *testing.T) {
	g, src, addr := startGateway(t, func(c *Config) { c.MaxSubscriptions = 10 })
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	for i := range 50 {
		c.send(fmt.Sprintf(`{"id":"%d","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: %d) { id } }"}}`, i, i))
	}
	refused := 0
	for range 40 {
		if m := c.read(); m["type"] == "error" {
			refused++
		}
	}
	if refused != 40 {
		t.Fatalf("refused %d subscribes; want 40", refused)
	}
	waitFor(t, "ten subscriptions", func() bool { return g.Stats().Subscriptions.Load() == 10 })
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.9") == 1 })
	publish(t, src, "employee.9", `{"id":9}`)
	if got, want := c.readRaw(), `{"id":"9","type":"next","payload":{"data":{"employeeUpdated":{"id":"9"}}}}`; got != want {
		t.Fatalf("next = %s; want %s", got, want)
	}
}

// panicSource is a MemorySource whose Publish panics.
type panicSource struct{ MemorySource }

func (*panicSource) Publish(context.Context, string, []byte) error { panic("publish bug") }

// A Source whose Publish panics fails that mutation with an error, over
// the socket and over HTTP; the gateway and the socket go on.
func TestPublishPanics(t *testing.T) {
	_, _, addr := startGateway(t, func(c *Config) {
		c.NATS = map[string]Source{"default": &panicSource{}}
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	})
	pub := dial(t, addr, ProtocolTransportWS)
	pub.init()
	for _, id := range []string{"m1", "m2"} {
		pub.send(`{"id":"` + id + `","type":"subscribe","payload":{"query":"mutation { updateEmployee(id: 3, name: \"Lin\") { success } }"}}`)
		if got := pub.readRaw(); !strings.Contains(got, `"id":"`+id+`"`) || !strings.Contains(got, "publish failed: panic: publish bug") {
			t.Fatalf("mutation %s = %s; want its error", id, got)
		}
		if m := pub.read(); m["type"] != "complete" {
			t.Fatalf("after mutation %s got %v; want complete", id, m)
		}
	}
	body := `{"query":"mutation { updateEmployee(id: 3, name: \"Kay\") { success } }"}`
	resp, err := http.Post("http://"+addr+"/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte("publish failed: panic: publish bug")) {
		t.Fatalf("POST = %d %s; want the publish error", resp.StatusCode, b)
	}
}

// TestResolvePanicGoesOn breaks a subscription's projection so that
// projecting an event panics, as a bug would: the subscriber gets an error
// result for that event, the gateway counts and logs it, and the events
// after it are resolved as before.
func TestResolvePanicGoesOn(t *testing.T) {
	g, src, addr := startGateway(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	})
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"a","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 2) { id } }"}}`)
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.2") == 1 })
	// swap sets every group's projection, on the engine's loop.
	swap := func(set func(*group)) {
		done := make(chan struct{})
		e := g.engine
		e.l.Submit(func() {
			for _, tr := range e.triggers {
				for _, gr := range tr.groups {
					set(gr)
				}
				tr.view = nil
			}
			close(done)
		})
		<-done
	}
	var saved *projection
	swap(func(gr *group) { saved, gr.proj = gr.proj, &projection{} }) // no root: a nil dereference
	publish(t, src, "employee.2", `{"id":2}`)
	if got, want := c.readRaw(), `{"id":"a","type":"next","payload":{"data":null,"errors":[{"message":"internal error resolving the event"}]}}`; got != want {
		t.Fatalf("next for the event whose projection panicked = %s; want %s", got, want)
	}
	if n := g.Stats().ResolvePanics.Load(); n != 1 {
		t.Errorf("ResolvePanics = %d; want 1", n)
	}
	swap(func(gr *group) { gr.proj = saved })
	publish(t, src, "employee.2", `{"id":2}`)
	if got, want := c.readRaw(), `{"id":"a","type":"next","payload":{"data":{"employeeUpdated":{"id":"2"}}}}`; got != want {
		t.Fatalf("next after it = %s; want %s", got, want)
	}
}

// TestFetchPanicIsAnError checks that a panic fetching an event's entities
// (here a nil fetch, as a bug would leave) is the fetch's error.
func TestFetchPanicIsAnError(t *testing.T) {
	e := &engine{log: slog.New(slog.NewTextHandler(io.Discard, nil)), stats: new(Stats), up: new(upstream), upstreamTimeout: time.Second}
	got := e.fetch(map[string]any{"id": "1"}, &view{fetches: []*entityFetch{nil}})
	if len(got) != 1 || got[0].err != errFetchPanicked {
		t.Errorf("fetch with a nil fetch = %v; want one with the error %v", got, errFetchPanicked)
	}
	if n, m := e.stats.ResolvePanics.Load(), e.stats.UpstreamErrors.Load(); n != 1 || m != 0 {
		t.Errorf("ResolvePanics, UpstreamErrors = %d, %d; want 1, 0", n, m)
	}
}

func TestInputFieldDefaultsEverywhere(t *testing.T) {
	schema, err := ParseSchema(testSchema + `
input Range { from: Int! to: Int = 10 }
input Outer { r: Range! = {from: 2} }
extend type Subscription {
  ranged(r: Range = {from: 3}, o: Outer): Employee! @edfs__natsSubscribe(subjects: ["ranged.{{ args.r.to }}"])
}
extend type Mutation {
  setRange(r: Range!): edfs__PublishResult! @edfs__natsPublish(subject: "ranged.set")
}`)
	if err != nil {
		t.Fatal(err)
	}
	g, _, _ := startGateway(t, func(c *Config) { c.Schema = schema })
	// An input object's fields take their defaults whether it comes in a
	// variable's value, a literal, a variable's default or an argument's
	// default, as graphql-js's valueFromAST and coerceInputValue give them.
	tests := []struct {
		query string
		vars  map[string]any
		args  string
	}{
		{`subscription($r: Range) { ranged(r: $r) { id } }`, map[string]any{"r": map[string]any{"from": json.Number("1")}}, `{"r":{"from":1,"to":10}}`},
		{`subscription { ranged(r: {from: 1}) { id } }`, nil, `{"r":{"from":1,"to":10}}`},
		{`subscription($r: Range = {from: 1}) { ranged(r: $r) { id } }`, nil, `{"r":{"from":1,"to":10}}`},
		{`subscription { ranged { id } }`, nil, `{"r":{"from":3,"to":10}}`},
		{`subscription($to: Int) { ranged(r: {from: 1, to: $to}) { id } }`, nil, `{"r":{"from":1,"to":10}}`},
		{`subscription { ranged(o: {}) { id } }`, nil, `{"o":{"r":{"from":2,"to":10}},"r":{"from":3,"to":10}}`},
		{`subscription($o: Outer) { ranged(o: $o) { id } }`, map[string]any{"o": map[string]any{}}, `{"o":{"r":{"from":2,"to":10}},"r":{"from":3,"to":10}}`},
		{`mutation { setRange(r: {from: 1}) { success } }`, nil, `{"r":{"from":1,"to":10}}`},
	}
	for _, tc := range tests {
		op, errs := g.prepare(&request{Query: tc.query, Variables: tc.vars})
		if errs != nil {
			t.Errorf("%s: %v; want the arguments %s", tc.query, errs, tc.args)
			continue
		}
		if got, _ := json.Marshal(op.args); string(got) != tc.args {
			t.Errorf("%s: arguments %s; want %s", tc.query, got, tc.args)
		}
		if strings.HasPrefix(tc.query, "subscription") && (len(op.subjects) != 1 || op.subjects[0] != "ranged.10") {
			t.Errorf("%s: subjects %v; want [ranged.10]", tc.query, op.subjects)
		}
	}
}

// pairSchema is testSchema with a field of two subjects, each from an
// argument.
const pairSchema = testSchema + `
extend type Subscription {
  pair(a: String!, b: String!): Employee! @edfs__natsSubscribe(subjects: ["p.{{ args.a }}", "p.{{ args.b }}"])
}`

func TestTriggersOfDifferentSubjectsNotShared(t *testing.T) {
	schema, err := ParseSchema(pairSchema)
	if err != nil {
		t.Fatal(err)
	}
	g, src, addr := startGateway(t, func(c *Config) { c.Schema = schema })
	// The subjects p.x\x00p.y and p.z, then p.x and p.y\x00p.z: written one
	// after another with the same separator, they spell the same.
	const q = `subscription($a: String!, $b: String!) { pair(a: $a, b: $b) { id } }`
	first := dial(t, addr, ProtocolTransportWS)
	first.init()
	first.send(fmt.Sprintf(`{"id":"1","type":"subscribe","payload":{"query":%q,"variables":{"a":"x\u0000p.y","b":"z"}}}`, q))
	waitFor(t, "the first upstream subscription", func() bool { return src.Subscribers("p.z") == 1 })
	second := dial(t, addr, ProtocolTransportWS)
	second.init()
	second.send(fmt.Sprintf(`{"id":"1","type":"subscribe","payload":{"query":%q,"variables":{"a":"x","b":"y\u0000p.z"}}}`, q))
	waitFor(t, "two subscriptions", func() bool { return g.Stats().Subscriptions.Load() == 2 })
	if n := g.Stats().Triggers.Load(); n != 2 {
		t.Fatalf("Triggers = %d; want 2, one for each set of subjects", n)
	}
	waitFor(t, "the second upstream subscription", func() bool { return src.Subscribers("p.x") == 1 })
	publish(t, src, "p.z", `{"id":"z"}`)
	publish(t, src, "p.x", `{"id":"x"}`)
	if got, want := first.readRaw(), `{"id":"1","type":"next","payload":{"data":{"pair":{"id":"z"}}}}`; got != want {
		t.Errorf("first client got %s; want %s", got, want)
	}
	if got, want := second.readRaw(), `{"id":"1","type":"next","payload":{"data":{"pair":{"id":"x"}}}}`; got != want {
		t.Errorf("second client got %s; want %s", got, want)
	}
}

func TestIntLiteralsWithin32Bits(t *testing.T) {
	g, _, _ := startGateway(t, nil)
	// As a variable's value is held to 32 bits (TestVariablesCoerced), so
	// is a literal, in an argument or a variable's default.
	for _, q := range []string{
		`subscription { filtered(ids: [1, 3000000000]) { id } }`,
		`subscription($ids: [Int!]! = [3000000000]) { filtered(ids: $ids) { id } }`,
		`subscription { filtered(ids: -2147483649) { id } }`,
	} {
		_, errs := g.prepare(&request{Query: q})
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Message, "Int cannot represent non 32-bit signed integer value: ") {
			t.Errorf("%s: errors %v; want Int cannot represent non 32-bit signed integer value", q, errs)
		}
	}
	if _, errs := g.prepare(&request{Query: `subscription { filtered(ids: [-2147483648, 2147483647]) { id } }`}); errs != nil {
		t.Errorf("the bounds of Int: %v", errs)
	}
}

func TestOneOfVariables(t *testing.T) {
	schema, err := ParseSchema(testSchema + `
input Pick @oneOf { id: ID, name: String }
extend type Subscription {
  picked(p: Pick!): Employee! @edfs__natsSubscribe(subjects: ["picked"])
}`)
	if err != nil {
		t.Fatal(err)
	}
	g, _, _ := startGateway(t, func(c *Config) { c.Schema = schema })
	const q = `subscription($p: Pick!) { picked(p: $p) { id } }`
	// As graphql-js's coerceInputValue holds a variable's value for a
	// OneOf input object to what its literals are held to.
	tests := []struct{ vars, err string }{
		{`{"p":{"id":"1"}}`, ""},
		{`{"p":{"id":"1","name":"Ada"}}`, `Variable "$p" got invalid value { id: "1", name: "Ada" }; Exactly one key must be specified for OneOf type "Pick".`},
		{`{"p":{}}`, `Variable "$p" got invalid value {}; Exactly one key must be specified for OneOf type "Pick".`},
		{`{"p":{"name":null}}`, `Variable "$p" got invalid value null at "p.name"; Field "name" must be non-null.`},
	}
	for _, tc := range tests {
		var vars map[string]any
		if err := json.Unmarshal([]byte(tc.vars), &vars); err != nil {
			t.Fatal(err)
		}
		_, errs := g.prepare(&request{Query: q, Variables: vars})
		switch {
		case tc.err == "" && errs != nil:
			t.Errorf("%s: %v; want no error", tc.vars, errs)
		case tc.err != "" && (len(errs) != 1 || errs[0].Message != tc.err):
			t.Errorf("%s: %v; want the error %s", tc.vars, errs, tc.err)
		}
	}
}
