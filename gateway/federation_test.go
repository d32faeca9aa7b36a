package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

const entitySchema = `
type Subscription {
  employeeUpdated(id: ID!): Employee! @edfs__natsSubscribe(subjects: ["employee.{{ args.id }}"])
}
type Employee @key(fields: "id", resolvable: false) {
  id: ID! @external
  updatedAt: String @external
  name: String!
  details: Details
}
type Details { forename: String! surname: String! }
`

// entities is an upstream answering _entities for Employee: name and
// details from the id; it counts requests and records the last query and
// Authorization field.
type entities struct {
	requests atomic.Int64
	fail     atomic.Bool
	query    atomic.Value
	auth     atomic.Value
}

func (e *entities) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.requests.Add(1)
	var req struct {
		Query     string `json:"query"`
		Variables struct {
			Representations []map[string]any `json:"representations"`
		} `json:"variables"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	e.query.Store(req.Query)
	e.auth.Store(r.Header.Get("Authorization"))
	if e.fail.Load() {
		w.Write([]byte(`{"errors":[{"message":"employees service is down"}]}`))
		return
	}
	var out []any
	for _, rep := range req.Variables.Representations {
		id, _ := rep["id"].(string)
		out = append(out, map[string]any{"__typename": "Employee", "name": "Name " + id, "details": map[string]any{"forename": "F" + id, "surname": "S" + id}})
	}
	json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"_entities": out}})
}

func TestEntitiesFromUpstream(t *testing.T) {
	up := &entities{}
	hs := httptest.NewServer(up)
	defer hs.Close()
	schema, err := ParseSchema(entitySchema)
	if err != nil {
		t.Fatal(err)
	}
	_, src, addr := startGateway(t, func(c *Config) {
		c.Schema = schema
		c.Upstream = hs.URL
		c.ForwardHeaders = []string{"Authorization"}
	})
	a := dial(t, addr, ProtocolTransportWS)
	a.send(`{"type":"connection_init","payload":{"headers":{"authorization":"Bearer t1"}}}`)
	a.read()
	a.send(`{"id":"a","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: \"1\") { id updatedAt who: name } }"}}`)
	b := dial(t, addr, ProtocolTransportWS)
	b.send(`{"type":"connection_init","payload":{"Authorization":"Bearer t1"}}`)
	b.read()
	b.send(`{"id":"b","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: \"1\") { __typename details { forename } } }"}}`)
	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"c","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: \"1\") { id } }"}}`)
	// a and b share a trigger (same forwarded Authorization); c has none.
	waitFor(t, "two upstream subscriptions", func() bool { return src.Subscribers("employee.1") == 2 })

	publish(t, src, "employee.1", `{"__typename":"Employee","id":"1","updatedAt":"today"}`)
	if got, want := a.readRaw(), `{"id":"a","type":"next","payload":{"data":{"employeeUpdated":{"id":"1","updatedAt":"today","who":"Name 1"}}}}`; got != want {
		t.Fatalf("a: %s\nwant %s", got, want)
	}
	if got, want := b.readRaw(), `{"id":"b","type":"next","payload":{"data":{"employeeUpdated":{"__typename":"Employee","details":{"forename":"F1"}}}}}`; got != want {
		t.Fatalf("b: %s\nwant %s", got, want)
	}
	if got, want := c.readRaw(), `{"id":"c","type":"next","payload":{"data":{"employeeUpdated":{"id":"1"}}}}`; got != want {
		t.Fatalf("c: %s\nwant %s", got, want)
	}
	// One request for the event, both selections in it; c needed none.
	if n := up.requests.Load(); n != 1 {
		t.Fatalf("upstream requests = %d; want 1", n)
	}
	q := up.query.Load().(string)
	if !strings.Contains(q, "_entities(representations: $representations)") || !strings.Contains(q, "... on Employee { name }") || !strings.Contains(q, "details {") {
		t.Fatalf("query = %s", q)
	}
	if got := up.auth.Load(); got != "Bearer t1" {
		t.Fatalf("Authorization sent upstream = %q; want Bearer t1", got)
	}

	// The upstream fails: the event still goes out, with the error; the
	// subscription goes on.
	up.fail.Store(true)
	publish(t, src, "employee.1", `{"__typename":"Employee","id":"1","updatedAt":"later"}`)
	m := a.read()
	p, _ := m["payload"].(map[string]any)
	errs, _ := p["errors"].([]any)
	if len(errs) == 0 || !strings.Contains(errs[0].(map[string]any)["message"].(string), "employees service is down") {
		t.Fatalf("a after an upstream failure: %v", m)
	}
	up.fail.Store(false)
	publish(t, src, "employee.1", `{"__typename":"Employee","id":"1","updatedAt":"again"}`)
	for {
		if m := a.read(); m["payload"].(map[string]any)["errors"] == nil {
			break
		}
	}
}

func TestKeyFields(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"id", "id"},
		{"id sku", "id,sku"},
		{"id org { id name }", "id,org"},
		{"org{id} id", "org,id"},
	} {
		if got := strings.Join(keyFields(tc.in), ","); got != tc.want {
			t.Errorf("keyFields(%q) = %s; want %s", tc.in, got, tc.want)
		}
	}
}

// TestFetchPrintedOnce checks that the fields a subscription fetches from
// the upstream are printed once per response key and level, fragments
// followed once, however often a short document spreads or repeats them:
// the query stays as small as the selection it stands for.
func TestFetchPrintedOnce(t *testing.T) {
	schema, err := ParseSchema(`
type Subscription {
  employeeUpdated(id: ID!): Employee! @edfs__natsSubscribe(subjects: ["employee.{{ args.id }}"])
}
interface Node { id: ID! }
type Employee implements Node @key(fields: "id", resolvable: false) {
  id: ID! @external
  name: String!
  manager: Employee
  friend: Node
}`)
	if err != nil {
		t.Fatal(err)
	}
	g, _, _ := startGateway(t, func(c *Config) { c.Schema = schema; c.Upstream = "http://127.0.0.1:1" })
	const depth = 20
	// fragments returns the fragments F0 to F<depth> on Employee: each
	// but the last holds body, in which %[2]d is the next one's number;
	// the last holds last.
	fragments := func(body, last string) string {
		var b strings.Builder
		for i := 0; i < depth; i++ {
			fmt.Fprintf(&b, " fragment F%d on Employee { "+body+" }", i, i+1)
		}
		fmt.Fprintf(&b, " fragment F%d on Employee { %s }", depth, last)
		return b.String()
	}
	tests := []struct {
		name  string
		query string
		want  string
	}{
		{
			name:  "spreads",
			query: `subscription { employeeUpdated(id: 1) { ...F0 } }` + fragments("...F%[2]d ...F%[2]d", "name"),
			want:  "name ",
		},
		{
			name:  "repeated fields",
			query: `subscription { employeeUpdated(id: 1) { ...F0 } }` + fragments("manager { ...F%[2]d } manager { ...F%[2]d }", "name"),
			want:  strings.Repeat("manager { ", depth) + "name " + strings.Repeat("} ", depth),
		},
		{
			name:  "abstract",
			query: `subscription { employeeUpdated(id: 1) { friend { id ... on Employee { name } ... on Node { id } } } }`,
			want:  "friend { ... on Employee { id name } } ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op, errs := g.prepare(&request{Query: tc.query})
			if errs != nil {
				t.Fatalf("prepare = %v", errs)
			}
			if op.fetch == nil {
				t.Fatalf("fetch = nil; want the selection %q", tc.want)
			}
			if got := op.fetch.selection; got != tc.want {
				t.Fatalf("fetch's selection = %.100q (%d bytes); want %q", got, len(got), tc.want)
			}
		})
	}
}
