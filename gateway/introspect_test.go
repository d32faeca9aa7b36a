package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

const introspectSchema = `
"The root of queries."
type Query { _unused: Boolean }

type Subscription {
  "An employee's changes."
  employeeUpdated(id: ID!, "Only these fields." only: [String!] = ["name"], old: Int @deprecated): Worker! @edfs__natsSubscribe(subjects: ["employee.{{ args.id }}"])
  shift: Shift! @edfs__natsSubscribe(subjects: ["shift"])
}

interface Worker { id: ID! }

type Employee implements Worker {
  id: ID!
  name: String!
  badge: Int @deprecated(reason: "use id")
  role: Role
  seen: Time
  salary: Int @inaccessible
  payroll: Payroll
}

type Payroll @inaccessible { total: Int }

input Pick @oneOf { id: ID, name: String }

type Contractor implements Worker { id: ID! agency: String }

union Shift = Employee | Contractor

enum Role { ENGINEER MANAGER @deprecated INTERN @inaccessible }

"An instant, as RFC 3339 text."
scalar Time @specifiedBy(url: "https://www.rfc-editor.org/rfc/rfc3339")

input Range { from: Int = 0, to: Int! }

"Marks a field for the audit log."
directive @audited(level: Int = 1) repeatable on FIELD_DEFINITION
`

// TestIntrospection checks introspection answers against the schema: the
// meta-fields, arguments and variables, deprecation, wrapper types,
// abstract types, fragments, @skip, aliases, over HTTP and over
// graphql-transport-ws, and that other queries are refused.
func TestIntrospection(t *testing.T) {
	schema, err := ParseSchema(introspectSchema)
	if err != nil {
		t.Fatal(err)
	}
	_, addr := serve(t, Config{Schema: schema, NATS: map[string]Source{"default": &MemorySource{}}})
	post := func(body string) (int, string) { t.Helper(); return postGraphQL(t, addr, body) }
	request := func(query string, vars map[string]any) string {
		b, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
		return string(b)
	}
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		want        string
	}{
		{"typename", `{ __typename }`, nil, `{"data":{"__typename":"Query"}}`},
		{"types by name, aliased, from a variable", `query($n: String!) { t: __type(name: $n) { name kind description } none: __type(name: "Nope") { name } }`,
			map[string]any{"n": "Time"}, `{"data":{"t":{"name":"Time","kind":"SCALAR","description":"An instant, as RFC 3339 text."},"none":null}}`},
		{"roots, fragments, skip", `query { __schema { ...S description } } fragment S on __Schema { queryType { name description } subscriptionType { name } mutationType @skip(if: true) { name } m: mutationType { name } }`,
			nil, `{"data":{"__schema":{"queryType":{"name":"Query","description":"The root of queries."},"subscriptionType":{"name":"Subscription"},"m":null,"description":null}}}`},
		{"deprecation", `{ __type(name: "Employee") { fields { name } all: fields(includeDeprecated: true) { name isDeprecated deprecationReason } interfaces { name } } }`,
			nil, `{"data":{"__type":{"fields":[{"name":"id"},{"name":"name"},{"name":"role"},{"name":"seen"}],"all":[{"name":"id","isDeprecated":false,"deprecationReason":null},{"name":"name","isDeprecated":false,"deprecationReason":null},{"name":"badge","isDeprecated":true,"deprecationReason":"use id"},{"name":"role","isDeprecated":false,"deprecationReason":null},{"name":"seen","isDeprecated":false,"deprecationReason":null}],"interfaces":[{"name":"Worker"}]}}}`},
		{"enum values", `{ __type(name: "Role") { enumValues { name } all: enumValues(includeDeprecated: true) { name isDeprecated deprecationReason } fields { name } } }`,
			nil, `{"data":{"__type":{"enumValues":[{"name":"ENGINEER"}],"all":[{"name":"ENGINEER","isDeprecated":false,"deprecationReason":null},{"name":"MANAGER","isDeprecated":true,"deprecationReason":"No longer supported"}],"fields":null}}}`},
		{"arguments and wrapper types", `{ __type(name: "Subscription") { fields { name description args { name description defaultValue type { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } type { kind ofType { name kind } } } } }`,
			nil, `{"data":{"__type":{"fields":[{"name":"employeeUpdated","description":"An employee's changes.","args":[{"name":"id","description":null,"defaultValue":null,"type":{"kind":"NON_NULL","name":null,"ofType":{"kind":"SCALAR","name":"ID","ofType":null}}},{"name":"only","description":"Only these fields.","defaultValue":"[\"name\"]","type":{"kind":"LIST","name":null,"ofType":{"kind":"NON_NULL","name":null,"ofType":{"kind":"SCALAR","name":"String","ofType":null}}}}],"type":{"kind":"NON_NULL","ofType":{"name":"Worker","kind":"INTERFACE"}}},{"name":"shift","description":null,"args":[],"type":{"kind":"NON_NULL","ofType":{"name":"Shift","kind":"UNION"}}}]}}}`},
		{"abstract types, inputs, scalars", `{ w: __type(name: "Worker") { possibleTypes { name } } s: __type(name: "Shift") { possibleTypes { name } fields { name } } r: __type(name: "Range") { inputFields { name defaultValue } fields { name } } t: __type(name: "Time") { specifiedByURL } }`,
			nil, `{"data":{"w":{"possibleTypes":[{"name":"Employee"},{"name":"Contractor"}]},"s":{"possibleTypes":[{"name":"Employee"},{"name":"Contractor"}],"fields":null},"r":{"inputFields":[{"name":"from","defaultValue":"0"},{"name":"to","defaultValue":null}],"fields":null},"t":{"specifiedByURL":"https://www.rfc-editor.org/rfc/rfc3339"}}}`},
		{"inaccessible, oneOf", `{ p: __type(name: "Payroll") { name } e: __type(name: "Employee") { fields(includeDeprecated: true) { name } } r: __type(name: "Role") { enumValues(includeDeprecated: true) { name } } k: __type(name: "Pick") { isOneOf } t: __type(name: "Range") { isOneOf } o: __type(name: "Employee") { isOneOf } }`,
			nil, `{"data":{"p":null,"e":{"fields":[{"name":"id"},{"name":"name"},{"name":"badge"},{"name":"role"},{"name":"seen"}]},"r":{"enumValues":[{"name":"ENGINEER"},{"name":"MANAGER"}]},"k":{"isOneOf":true},"t":{"isOneOf":false},"o":{"isOneOf":null}}}`},
		{"directives", `{ __schema { directives { name isRepeatable locations args { name defaultValue } } } }`,
			nil, `{"data":{"__schema":{"directives":[{"name":"audited","isRepeatable":true,"locations":["FIELD_DEFINITION"],"args":[{"name":"level","defaultValue":"1"}]},{"name":"deprecated","isRepeatable":false,"locations":["FIELD_DEFINITION","ARGUMENT_DEFINITION","INPUT_FIELD_DEFINITION","ENUM_VALUE"],"args":[{"name":"reason","defaultValue":"\"No longer supported\""}]},{"name":"include","isRepeatable":false,"locations":["FIELD","FRAGMENT_SPREAD","INLINE_FRAGMENT"],"args":[{"name":"if","defaultValue":null}]},{"name":"oneOf","isRepeatable":false,"locations":["INPUT_OBJECT"],"args":[]},{"name":"skip","isRepeatable":false,"locations":["FIELD","FRAGMENT_SPREAD","INLINE_FRAGMENT"],"args":[{"name":"if","defaultValue":null}]},{"name":"specifiedBy","isRepeatable":false,"locations":["SCALAR"],"args":[{"name":"url","defaultValue":null}]}]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, got := post(request(tc.query, tc.vars))
			if status != 200 || got != tc.want {
				t.Errorf("POST %s:\n%d %s\nwant\n%s", tc.query, status, got, tc.want)
			}
		})
	}

	// The types a client can meet: not the inputs of the gateway's own
	// directives.
	_, got := post(request(`{ __schema { types { name } } }`, nil))
	for _, name := range []string{`"Employee"`, `"Contractor"`, `"Range"`, `"Time"`, `"__Schema"`, `"__Directive"`} {
		if !strings.Contains(got, name) {
			t.Errorf("types: no %s in %s", name, got)
		}
	}
	if strings.Contains(got, "edfs__NatsStreamConfiguration") || strings.Contains(got, "openfed__") {
		t.Errorf("types: the gateway's own directives' inputs in %s", got)
	}

	for _, bad := range []string{`{ _unused }`, `{ __typename _unused }`, `{ __schema { bogus } }`} {
		if status, got := post(request(bad, nil)); status != 400 || !strings.Contains(got, `"errors"`) {
			t.Errorf("POST %s = %d %s; want 400 with errors", bad, status, got)
		}
	}
	if _, got := post(request(`{ _unused }`, nil)); !strings.Contains(got, "Queries are not served, but for introspection") {
		t.Errorf("a query of a field: %s", got)
	}

	c := dial(t, addr, ProtocolTransportWS)
	c.init()
	c.send(`{"id":"q","type":"subscribe","payload":{"query":"{ __type(name: \"Role\") { kind } }"}}`)
	if got, want := c.readRaw(), `{"id":"q","type":"next","payload":{"data":{"__type":{"kind":"ENUM"}}}}`; got != want {
		t.Errorf("over WebSocket: %s; want %s", got, want)
	}
	if m := c.read(); m["type"] != "complete" || m["id"] != "q" {
		t.Errorf("after the result: %v; want complete", m)
	}
	c.send(`{"id":"r","type":"subscribe","payload":{"query":"{ _unused }"}}`)
	if m := c.read(); m["type"] != "error" || m["id"] != "r" {
		t.Errorf("a query of a field over WebSocket: %v; want error", m)
	}
	// An answer past the bound is an error, made off the loop.
	b, _ := json.Marshal(map[string]any{"id": "b", "type": "subscribe", "payload": map[string]string{"query": bombQuery(8)}})
	c.send(string(b))
	if m := c.read(); m["type"] != "error" || m["id"] != "b" || !strings.Contains(fmt.Sprint(m["payload"]), "too large") {
		t.Errorf("an introspection query answering gigabytes: %v; want an error", m)
	}
}

// TestNoIntrospection refuses queries of __schema and __type under
// Config.NoIntrospection, while __typename, alone in a query or in a
// mutation's selection, is still answered.
func TestNoIntrospection(t *testing.T) {
	_, _, addr := startGateway(t, func(c *Config) { c.NoIntrospection = true })
	for _, q := range []string{`{ __schema { queryType { name } } }`, `{ __typename t: __type(name: "Query") { name } }`} {
		b, _ := json.Marshal(map[string]string{"query": q})
		if status, body := postGraphQL(t, addr, string(b)); status != 400 || !strings.Contains(body, "Introspection is disabled") {
			t.Errorf("POST %s = %d %s; want 400, introspection disabled", q, status, body)
		}
	}
	for q, want := range map[string]string{
		`mutation { updateEmployee(id: 1, name: "x") { __typename success } }`: `{"data":{"updateEmployee":{"__typename":"edfs__PublishResult","success":true}}}`,
		`{ __typename }`: `{"data":{"__typename":"Query"}}`,
	} {
		b, _ := json.Marshal(map[string]string{"query": q})
		if _, body := postGraphQL(t, addr, string(b)); body != want {
			t.Errorf("POST %s: %s; want %s", q, body, want)
		}
	}
}

// postGraphQL posts body to the gateway at addr and returns the status and
// the answer's body.
// postGraphQL posts body as a client of GraphQL-over-HTTP's
// application/graphql-response+json, which gets 400 for a request that
// does not validate.
func postGraphQL(t *testing.T, addr, body string) (int, string) {
	t.Helper()
	status, _, b := postAccept(t, addr, "application/graphql-response+json, application/json;q=0.9", body)
	return status, b
}

// postAccept posts body with the given Accept field (none if empty) and
// returns the answer's status, Content-Type and body.
func postAccept(t *testing.T, addr, accept, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+addr+"/graphql", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// Any query, with any variables, that validates against the schema and
// selects introspection fields alone is answered with a JSON object
// holding data, the same each time, or refused with an error; none
// panics.
func FuzzIntrospection(f *testing.F) {
	for _, q := range []string{
		`{ __typename }`,
		`query($n: String!) { t: __type(name: $n) { name kind ofType { name } } }`,
		`{ __schema { types { name fields(includeDeprecated: true) { name args { name defaultValue type { kind name ofType { kind name } } } } enumValues { name } inputFields { name } possibleTypes { name } interfaces { name } } directives { name locations } } }`,
		`query Q($d: Boolean = false) { __schema { ...F @include(if: $d) m: mutationType { __typename } } } fragment F on __Schema { queryType { name } }`,
		`{ __type(name: "Employee") { ... on __Type { fields { name isDeprecated deprecationReason } } } }`,
		`{ _unused }`,
	} {
		f.Add(q, `{"n":"Role","d":true}`)
	}
	schema, err := ParseSchema(introspectSchema)
	if err != nil {
		f.Fatal(err)
	}
	var docs cache[*parsed]
	docs.max = 64
	f.Fuzz(func(t *testing.T, query, vars string) {
		p := parse(&docs, schema.ast, query, defaultMaxFields, defaultMaxDepth)
		if p.errs != nil || len(p.doc.Operations) != 1 || p.doc.Operations[0].Operation != ast.Query {
			return
		}
		var given map[string]any
		json.Unmarshal([]byte(vars), &given)
		op := p.doc.Operations[0]
		coerced, errs := coerceVariables(schema.ast, op, normalizeVariables(given))
		if errs != nil {
			return
		}
		all, _, err := rootIntrospection(op.SelectionSet, schema.ast.Query.Name, coerced)
		if err != nil || !all {
			return
		}
		out, err := introspect(schema.ast, op, coerced)
		if err != nil {
			return
		}
		var result struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if !json.Valid(out) || json.Unmarshal(out, &result) != nil || result.Data == nil {
			t.Fatalf("introspect(%q, %s) = %s; want a JSON object with data", query, vars, out)
		}
		if again, _ := introspect(schema.ast, op, coerced); string(again) != string(out) {
			t.Fatalf("introspect(%q) twice: %s, then %s", query, out, again)
		}
	})
}

// bombQuery is an introspection query of fragments, each selecting the
// next under k aliases: its text grows as 8k, its answer as k^8. Of
// __Type's list fields it nests two, which the MaxIntrospectionDepth rule
// allows.
func bombQuery(k int) string {
	chain := []struct{ on, field string }{
		{"__Type", "fields"}, {"__Field", "type"}, {"__Type", "ofType"}, {"__Type", "ofType"},
		{"__Type", "fields"}, {"__Field", "type"}, {"__Type", "ofType"}, {"__Type", "ofType"},
	}
	var b strings.Builder
	b.WriteString(`{ __type(name: "__Type") { ...F0 } }`)
	for i, c := range chain {
		fmt.Fprintf(&b, " fragment F%d on %s { name ", i, c.on)
		for j := range k {
			fmt.Fprintf(&b, "a%d: %s { ...F%d } ", j, c.field, i+1)
		}
		b.WriteString("}")
	}
	fmt.Fprintf(&b, " fragment F%d on __Type { name kind }", len(chain))
	return b.String()
}

// TestIntrospectionBounded: a query of a kilobyte does not make the
// gateway build an answer of gigabytes (k=8: about 13 GB unbounded; k=4,
// 50 MB): it is refused past maxIntrospectionResult, and the schema's own
// introspection still fits.
func TestIntrospectionBounded(t *testing.T) {
	schema, err := ParseSchema(introspectSchema)
	if err != nil {
		t.Fatal(err)
	}
	var docs cache[*parsed]
	docs.max = 64
	for _, k := range []int{4, 8} {
		q := bombQuery(k)
		p := parse(&docs, schema.ast, q, defaultMaxFields, defaultMaxDepth)
		if p.errs != nil {
			t.Fatalf("k=%d: %v", k, p.errs)
		}
		out, err := introspect(schema.ast, p.doc.Operations[0], nil)
		if err == nil && len(out) > maxIntrospectionResult+1<<16 {
			t.Fatalf("a query of %d bytes: an answer of %d bytes", len(q), len(out)) // before k=8 runs
		}
	}
	// The whole schema, as graphql-js's getIntrospectionQuery asks, still fits.
	p := parse(&docs, schema.ast, `{ __schema { types { name fields(includeDeprecated: true) { name args { name type { name ofType { name } } } type { name ofType { name ofType { name } } } } } } }`, defaultMaxFields, defaultMaxDepth)
	if _, err := introspect(schema.ast, p.doc.Operations[0], nil); err != nil {
		t.Errorf("the schema's introspection: %v", err)
	}
}
