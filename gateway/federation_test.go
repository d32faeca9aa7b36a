package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
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
	doc, err := parser.ParseQuery(&ast.Source{Input: req.Query})
	if err != nil {
		json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"message": err.Error()}}})
		return
	}
	data := map[string]any{}
	for _, sel := range doc.Operations[0].SelectionSet {
		data[responseKey(sel.(*ast.Field))] = out
	}
	json.NewEncoder(w).Encode(map[string]any{"data": data})
}

func TestEntitiesFromUpstream(t *testing.T) {
	up := &entities{}
	hs := httptest.NewServer(up)
	defer hs.Close()
	schema, err := ParseSchema(entitySchema)
	if err != nil {
		t.Fatal(err)
	}
	g, src, addr := startGateway(t, func(c *Config) {
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
	// The three connections may be on different loops: two upstream
	// subscriptions may be a's and c's, with b's subscribe not yet read.
	waitFor(t, "the subscriptions", func() bool { return g.Stats().Subscriptions.Load() == 3 })
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

// TestListOfEntitiesFetched checks that for a root field whose type is a
// list of entities, every entity's fields are fetched, all in one
// _entities call per event with a representation each, and merged into
// each element in order; nulls stay null, and an empty list asks nothing.
func TestListOfEntitiesFetched(t *testing.T) {
	up := &entities{}
	hs := httptest.NewServer(up)
	defer hs.Close()
	schema, err := ParseSchema(`
type Subscription {
  employeesUpdated: [Employee]! @edfs__natsSubscribe(subjects: ["employees"])
}
type Employee @key(fields: "id", resolvable: false) {
  id: ID! @external
  name: String!
}`)
	if err != nil {
		t.Fatal(err)
	}
	g, src, addr := startGateway(t, func(c *Config) { c.Schema = schema; c.Upstream = hs.URL })
	c := dialSubscribe(t, addr, "a", `subscription { employeesUpdated { id name } }`)
	waitFor(t, "the subscription", func() bool { return g.Stats().Subscriptions.Load() == 1 && src.Subscribers("employees") == 1 })
	publish(t, src, "employees", `[{"__typename":"Employee","id":"1"},null,{"__typename":"Employee","id":"2"}]`)
	if got, want := c.readRaw(), `{"id":"a","type":"next","payload":{"data":{"employeesUpdated":[{"id":"1","name":"Name 1"},null,{"id":"2","name":"Name 2"}]}}}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if n := up.requests.Load(); n != 1 {
		t.Fatalf("upstream requests = %d; want 1", n)
	}
	publish(t, src, "employees", `[]`)
	if got, want := c.readRaw(), `{"id":"a","type":"next","payload":{"data":{"employeesUpdated":[]}}}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if n := up.requests.Load(); n != 1 {
		t.Fatalf("upstream requests = %d after an empty list; want 1", n)
	}
}

// titles is an upstream whose subgraph schema has Employee.title(lang,
// style), answered "title-<lang>" or "title-<lang>-<style>". It validates
// each query, as every GraphQL server does, and answers each _entities
// field under its response key; lang "xx" is an error at that field, and
// lang "none" an error at its _entities field, which, being non-null,
// makes the whole data null. It counts requests.
type titles struct {
	schema   *ast.Schema
	requests atomic.Int64
}

func (u *titles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.requests.Add(1)
	var req struct {
		Query string `json:"query"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	doc, errs := gqlparser.LoadQueryWithRules(u.schema, req.Query, nil)
	if len(errs) > 0 {
		json.NewEncoder(w).Encode(map[string]any{"errors": errs})
		return
	}
	data := map[string]any{}
	var failed []any
	for _, sel := range doc.Operations[0].SelectionSet {
		f := sel.(*ast.Field)
		frag := f.SelectionSet[0].(*ast.InlineFragment)
		title := frag.SelectionSet[0].(*ast.Field)
		lang := title.Arguments.ForName("lang").Value.Raw
		entity := map[string]any{"__typename": "Employee", "title": "title-" + lang}
		if style := title.Arguments.ForName("style"); style != nil {
			entity["title"] = "title-" + lang + "-" + style.Value.Raw
		}
		switch lang {
		case "xx":
			entity["title"] = nil
			failed = append(failed, map[string]any{"message": "no language xx", "path": []any{responseKey(f), 0, "title"}})
		case "none":
			failed = append(failed, map[string]any{"message": "no entities for none", "path": []any{responseKey(f)}})
		}
		data[responseKey(f)] = []any{entity}
	}
	if slices.ContainsFunc(failed, func(e any) bool { return len(e.(map[string]any)["path"].([]any)) == 1 }) {
		data = nil
	}
	json.NewEncoder(w).Encode(map[string]any{"data": data, "errors": failed})
}

// titlesSubgraph is the upstream's schema for titles.
const titlesSubgraph = `
scalar _Any
union _Entity = Employee
enum Style { SHORT LONG }
type Query { _entities(representations: [_Any!]!): [_Entity]! }
type Employee { id: ID! title(lang: String, style: Style): String manager: Employee }`

// titlesGateway serves, with up as its upstream (whose schema is
// subgraph), a subscription to an Employee whose title is fetched.
func titlesGateway(t *testing.T, subgraph string, up *titles) (*Gateway, *MemorySource, string) {
	t.Helper()
	sub, gerr := gqlparser.LoadSchema(&ast.Source{Input: subgraph})
	if gerr != nil {
		t.Fatal(gerr)
	}
	up.schema = sub
	hs := httptest.NewServer(up)
	t.Cleanup(hs.Close)
	schema, err := ParseSchema(`
type Subscription {
  employeeUpdated(id: ID!): Employee! @edfs__natsSubscribe(subjects: ["employee.{{ args.id }}"])
}
enum Style { SHORT LONG }
type Employee @key(fields: "id", resolvable: false) {
  id: ID! @external
  title(lang: String, style: Style): String
  manager: Employee
}`)
	if err != nil {
		t.Fatal(err)
	}
	return startGateway(t, func(c *Config) { c.Schema = schema; c.Upstream = hs.URL })
}

// TestEntityFieldArguments checks that subscribers of one trigger whose
// fetched fields take different arguments, as literals or variables, at
// the same place or elsewhere, each get the values for their own
// arguments, and that an error the upstream reports for one's arguments
// reaches that one only. A subscription that selects a fetched field
// twice with different arguments is refused: the event holds one value by
// the field's name.
func TestEntityFieldArguments(t *testing.T) {
	g, src, addr := titlesGateway(t, titlesSubgraph, &titles{})
	subscribe := func(id, query, vars string) *client {
		c := dial(t, addr, ProtocolTransportWS)
		c.init()
		c.send(`{"id":"` + id + `","type":"subscribe","payload":{"query":"` + query + `","variables":` + vars + `}}`)
		return c
	}
	const byVariable = `subscription($l: String) { employeeUpdated(id: 1) { title(lang: $l) } }`
	clients := map[string]*client{
		"en": subscribe("en", byVariable, `{"l":"en"}`),
		"fr": subscribe("fr", byVariable, `{"l":"fr"}`),
		"de": subscribe("de", `subscription { employeeUpdated(id: 1) {  title(lang: \"de\") } }`, `{}`),
		"xx": subscribe("xx", byVariable, `{"l":"xx"}`),
	}
	waitFor(t, "four subscriptions", func() bool { return g.Stats().Subscriptions.Load() == 4 })
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.1") == 1 })
	for i := 0; i < 2; i++ {
		publish(t, src, "employee.1", `{"__typename":"Employee","id":"1"}`)
		for _, lang := range []string{"en", "fr", "de"} {
			want := `{"id":"` + lang + `","type":"next","payload":{"data":{"employeeUpdated":{"title":"title-` + lang + `"}}}}`
			if got := clients[lang].readRaw(); got != want {
				t.Errorf("event %d, %s: %s; want %s", i, lang, got, want)
			}
		}
		m := clients["xx"].read()
		p, _ := m["payload"].(map[string]any)
		errs, _ := p["errors"].([]any)
		if len(errs) == 0 || !strings.Contains(errs[0].(map[string]any)["message"].(string), "no language xx") {
			t.Errorf("event %d, xx: %v; want the upstream's error", i, m)
		}
	}

	c := subscribe("both", `subscription { employeeUpdated(id: 1) { en: title(lang: \"en\") fr: title(lang: \"fr\") } }`, `{}`)
	m := c.read()
	p, _ := m["payload"].([]any)
	if m["type"] != "error" || len(p) == 0 || !strings.Contains(p[0].(map[string]any)["message"].(string), "different arguments") {
		t.Errorf("a field fetched with two sets of arguments: %v; want an error", m)
	}
}

// TestRefusedSelectionFailsItsOwnOnly checks that a selection the
// upstream refuses (an argument its schema lacks, so that it answers the
// whole request with a validation error and no data) costs only its own
// subscribers their fields, with the upstream's error: the others on the
// trigger get theirs, and an error the upstream reports at one selection
// still reaches that one's subscribers only, even when it makes the whole
// data null. The request is asked again in parts, in at most 2n-1
// requests for n selections.
func TestRefusedSelectionFailsItsOwnOnly(t *testing.T) {
	up := &titles{}
	g, src, addr := titlesGateway(t, `
scalar _Any
union _Entity = Employee
type Query { _entities(representations: [_Any!]!): [_Entity]! }
type Employee { id: ID! title(lang: String): String manager: Employee }`, up)
	selections := map[string]string{
		"en":      `title(lang: \"en\")`,
		"fr":      `title(lang: \"fr\")`,
		"xx":      `title(lang: \"xx\")`,
		"none":    `title(lang: \"none\")`,
		"refused": `title(lang: \"en\", style: SHORT)`,
	}
	clients := map[string]*client{}
	for id, sel := range selections {
		c := dial(t, addr, ProtocolTransportWS)
		c.init()
		c.send(`{"id":"` + id + `","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { ` + sel + ` } }"}}`)
		clients[id] = c
	}
	waitFor(t, "the subscriptions", func() bool {
		return g.Stats().Subscriptions.Load() == int64(len(selections)) && src.Subscribers("employee.1") == 1
	})
	for i := 0; i < 2; i++ {
		before := up.requests.Load()
		publish(t, src, "employee.1", `{"__typename":"Employee","id":"1"}`)
		for _, lang := range []string{"en", "fr"} {
			want := `{"id":"` + lang + `","type":"next","payload":{"data":{"employeeUpdated":{"title":"title-` + lang + `"}}}}`
			if got := clients[lang].readRaw(); got != want {
				t.Errorf("event %d, %s: %s; want %s", i, lang, got, want)
			}
		}
		for id, msg := range map[string]string{"xx": "no language xx", "none": "no entities for none", "refused": `Unknown argument \"style\"`} {
			if got := clients[id].readRaw(); !strings.Contains(got, msg) || !strings.Contains(got, `"title":null`) {
				t.Errorf("event %d, %s: %s; want the title null and the error %s", i, id, got, msg)
			}
		}
		if n := up.requests.Load() - before; n > 2*int64(len(selections))-1 {
			t.Errorf("event %d: %d upstream requests; want at most %d", i, n, 2*len(selections)-1)
		}
	}
}

// TestFetchedFieldsMergedByName checks that the fields a subscription
// fetches are printed once per name at each level, the selections of the
// fields of one name (under two response keys) merged, and that a
// subscription is refused when fields of one name take different
// arguments at any depth, as the upstream would refuse such a query and
// the event holds one value by the field's name.
func TestFetchedFieldsMergedByName(t *testing.T) {
	g, _, _ := titlesGateway(t, titlesSubgraph, &titles{})
	tests := []struct {
		name  string
		query string
		want  string // the fetched selection, or "" for a refusal
	}{
		{"root", `en: title(lang: "en") fr: title(lang: "fr")`, ""},
		{"nested", `a: manager { title(lang: "en") } b: manager { title(lang: "fr") }`, ""},
		{"deeper", `a: manager { manager { title(lang: "en") } } b: manager { manager { title(lang: "fr") } }`, ""},
		{"merged", `a: manager { title(lang: "en") } b: manager { id manager { id } }`, `manager { title(lang: "en") id manager { id } } `},
		{"same arguments", `a: manager { title(lang: "en") } b: manager { t: title(lang: "en") }`, `manager { title(lang: "en") } `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op, errs := g.prepare(&request{Query: `subscription { employeeUpdated(id: 1) { ` + tc.query + ` } }`})
			switch {
			case tc.want == "":
				if errs == nil || !strings.Contains(errs[0].Message, "different arguments") {
					t.Fatalf("prepare = %v; want a refusal for different arguments", errs)
				}
			case errs != nil:
				t.Fatalf("prepare = %v; want the selection %q", errs, tc.want)
			case op.fetch.selection != tc.want:
				t.Fatalf("fetch's selection = %q; want %q", op.fetch.selection, tc.want)
			}
		})
	}
}

// TestEntityArgumentLiterals checks that the arguments of fetched fields
// reach the upstream as GraphQL literals it parses to the values the
// subscribers gave: strings with quotes, backslashes and control
// characters (C0, DEL, C1) escaped as GraphQL escapes them, never with Go's
// \x, \a or \U, and enum values, literal or variable, as enum values.
func TestEntityArgumentLiterals(t *testing.T) {
	g, src, addr := titlesGateway(t, titlesSubgraph, &titles{})
	tests := []struct {
		query string
		vars  string
		want  string // the title
	}{
		{`subscription($l: String) { employeeUpdated(id: 1) { title(lang: $l) } }`, `{"l":"x\u007fy"}`, "title-x\x7fy"},
		{`subscription($l: String) { employeeUpdated(id: 1) { title(lang: $l) } }`, `{"l":"q\"b\\s\tt\nn\u0007\u000b"}`, "title-q\"b\\s\tt\nn\a\v"},
		{`subscription($l: String) { employeeUpdated(id: 1) { title(lang: $l) } }`, `{"l":"c1\u0085 \u00e9 \ud83d\ude00 \u2028"}`, "title-c1\u0085 é 😀 \u2028"},
		{`subscription { employeeUpdated(id: 1) { title(lang: \"a\\\"b\", style: SHORT) } }`, `{}`, `title-a"b-SHORT`},
		{`subscription($s: Style) { employeeUpdated(id: 1) { title(lang: \"en\", style: $s) } }`, `{"s":"LONG"}`, "title-en-LONG"},
	}
	clients := make([]*client, len(tests))
	for i, tc := range tests {
		c := dial(t, addr, ProtocolTransportWS)
		c.init()
		c.send(`{"id":"s","type":"subscribe","payload":{"query":"` + tc.query + `","variables":` + tc.vars + `}}`)
		clients[i] = c
	}
	waitFor(t, "the subscriptions", func() bool {
		return g.Stats().Subscriptions.Load() == int64(len(tests)) && src.Subscribers("employee.1") == 1
	})
	publish(t, src, "employee.1", `{"__typename":"Employee","id":"1"}`)
	for i, tc := range tests {
		m := clients[i].read()
		p, _ := m["payload"].(map[string]any)
		data, _ := p["data"].(map[string]any)
		e, _ := data["employeeUpdated"].(map[string]any)
		if got, _ := e["title"].(string); got != tc.want || p["errors"] != nil {
			t.Errorf("%s with %s: %v; want the title %q", tc.query, tc.vars, m, tc.want)
		}
	}
}

// TestGraphQLStringLiteral checks that appendGraphQLString writes every
// string as a GraphQL string literal that a GraphQL parser reads back as
// the same string, with no control character left as it is.
func TestGraphQLStringLiteral(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x800; r++ {
		all.WriteRune(r)
	}
	for _, s := range []string{"", "plain", `q"b\s/`, "\x00\a\b\t\n\v\f\r\x1f", "\x7f\u0080\u0085\u009f\u00a0", "é 😀 \u2028 \ufeff", all.String()} {
		lit := string(appendGraphQLString(nil, s))
		if strings.ContainsFunc(lit, func(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }) {
			t.Errorf("appendGraphQLString(%q) = %q; want no control character as it is", s, lit)
		}
		doc, err := parser.ParseQuery(&ast.Source{Input: "{ f(a: " + lit + ") }"})
		if err != nil {
			t.Errorf("appendGraphQLString(%q) = %q: %v", s, lit, err)
			continue
		}
		if got := doc.Operations[0].SelectionSet[0].(*ast.Field).Arguments[0].Value.Raw; got != s {
			t.Errorf("appendGraphQLString(%q) = %q, parsed as %q", s, lit, got)
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
			name:  "aliases merged",
			query: `subscription { employeeUpdated(id: 1) { a: friend { ... on Employee { name } } b: friend { id } } }`,
			want:  "friend { ... on Employee { name id } } ",
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
