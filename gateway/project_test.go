package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// projectSchema is the schema the projection tests compile operations
// against.
var projectSchema = gqlparser.MustLoadSchema(&ast.Source{Name: "test.graphql", Input: `
scalar JSON
enum Status { ACTIVE INACTIVE }
interface Node { id: ID! }
type Employee implements Node {
  id: ID!
  name: String!
  nick: String
  age: Int
  rating: Float
  active: Boolean
  status: Status
  meta: JSON
  details: Details
  manager: Employee
  tags: [String!]
  matrix: [[Int]]
  reports: [Employee!]
  strictReports: [Employee!]!
}
type Details { id: ID  forename: String!  surname: String  location: Location }
type Location { city: String! }
type Department implements Node { id: ID!  title: String! }
union SearchResult = Employee | Department
type Query { employee: Employee }
type Subscription {
  employeeUpdated(employeeID: ID!): Employee!
  maybeEmployee: Employee
  node: Node
  nodeStrict: Node!
  search: SearchResult
  results: [SearchResult]
  counter: Int
  counters: [Int!]!
}
`})

// compileOperation validates query against projectSchema and compiles its
// single root field.
func compileOperation(t testing.TB, query string, vars map[string]any) *projection {
	t.Helper()
	doc, errs := gqlparser.LoadQueryWithRules(projectSchema, query, nil)
	if len(errs) > 0 {
		t.Fatalf("LoadQueryWithRules(%q) = %v", query, errs)
	}
	op := doc.Operations[0]
	root, ok := op.SelectionSet[0].(*ast.Field)
	if !ok {
		t.Fatalf("operation %q: first selection is %T; want *ast.Field", query, op.SelectionSet[0])
	}
	p, err := compileProjection(projectSchema, []*ast.Field{root}, vars)
	if err != nil {
		t.Fatalf("compileProjection(%q) = %v", query, err)
	}
	return p
}

// mustDecode decodes s as the gateway decodes events.
func mustDecode(t testing.TB, s string) any {
	t.Helper()
	v, err := decodeEvent([]byte(s))
	if err != nil {
		t.Fatalf("decoding event %q: %v", s, err)
	}
	return v
}

var projectTests = []struct {
	name  string
	query string
	vars  map[string]any
	event string
	want  string
}{
	{
		name:  "aliases and scalars",
		query: `subscription { e: employeeUpdated(employeeID: "1") { id n: name name extra: nick } }`,
		event: `{"id":1,"name":"Ann","nick":null,"ignored":[1,2]}`,
		want:  `{"data":{"e":{"id":"1","n":"Ann","name":"Ann","extra":null}}}`,
	},
	{
		name:  "nested objects",
		query: `subscription { maybeEmployee { details { forename location { city } } manager { name manager { id } } } }`,
		event: `{"details":{"forename":"Ann","location":{"city":"Oslo"}},"manager":{"name":"Bo","manager":null}}`,
		want:  `{"data":{"maybeEmployee":{"details":{"forename":"Ann","location":{"city":"Oslo"}},"manager":{"name":"Bo","manager":null}}}}`,
	},
	{
		name:  "lists of objects",
		query: `subscription { maybeEmployee { tags reports { id name } } }`,
		event: `{"tags":["a","b"],"reports":[{"id":"2","name":"Bo"},{"id":3,"name":"Cy"}]}`,
		want:  `{"data":{"maybeEmployee":{"tags":["a","b"],"reports":[{"id":"2","name":"Bo"},{"id":"3","name":"Cy"}]}}}`,
	},
	{
		name:  "empty and null lists",
		query: `subscription { maybeEmployee { tags reports { id } } }`,
		event: `{"tags":[],"reports":null}`,
		want:  `{"data":{"maybeEmployee":{"tags":[],"reports":null}}}`,
	},
	{
		name:  "lists of lists",
		query: `subscription { maybeEmployee { matrix } }`,
		event: `{"matrix":[[1,2],[null,3],[],null]}`,
		want:  `{"data":{"maybeEmployee":{"matrix":[[1,2],[null,3],[],null]}}}`,
	},
	{
		name:  "typename at every level",
		query: `subscription { maybeEmployee { __typename details { __typename location { __typename } } reports { t: __typename } } }`,
		event: `{"__typename":"Wrong","details":{"location":{}},"reports":[{},{}]}`,
		want:  `{"data":{"maybeEmployee":{"__typename":"Employee","details":{"__typename":"Details","location":{"__typename":"Location"}},"reports":[{"t":"Employee"},{"t":"Employee"}]}}}`,
	},
	{
		name:  "interface resolved by the event's typename",
		query: `subscription { node { __typename id ... on Employee { name } ... on Department { title } } }`,
		event: `{"__typename":"Department","id":"d1","title":"R&D","name":"not selected"}`,
		want:  `{"data":{"node":{"__typename":"Department","id":"d1","title":"R&D"}}}`,
	},
	{
		name:  "interface, the other type",
		query: `subscription { node { __typename id ... on Employee { name } ... on Department { title } } }`,
		event: `{"__typename":"Employee","id":"e1","title":"not selected","name":"Ann"}`,
		want:  `{"data":{"node":{"__typename":"Employee","id":"e1","name":"Ann"}}}`,
	},
	{
		name:  "union",
		query: `subscription { search { ... on Employee { name } ... on Department { title } } }`,
		event: `{"__typename":"Employee","name":"Ann"}`,
		want:  `{"data":{"search":{"name":"Ann"}}}`,
	},
	{
		name:  "list of unions with a bad member",
		query: `subscription { results { __typename ... on Department { title } } }`,
		event: `[{"__typename":"Department","title":"Ops"},{"__typename":"Employee"},{}]`,
		want:  `{"errors":[{"message":"Abstract type \"SearchResult\" must resolve to an Object type at runtime for field \"Subscription.results\". Either the \"SearchResult\" type should provide a \"resolveType\" function or each possible type should provide an \"isTypeOf\" function.","locations":[{"line":1,"column":16}],"path":["results",2]}],"data":{"results":[{"__typename":"Department","title":"Ops"},{"__typename":"Employee"},null]}}`,
	},
	{
		name:  "interface without typename",
		query: `subscription { node { id } }`,
		event: `{"id":"1"}`,
		want:  `{"errors":[{"message":"Abstract type \"Node\" must resolve to an Object type at runtime for field \"Subscription.node\". Either the \"Node\" type should provide a \"resolveType\" function or each possible type should provide an \"isTypeOf\" function.","locations":[{"line":1,"column":16}],"path":["node"]}],"data":{"node":null}}`,
	},
	{
		name:  "interface with a typename that is not a string",
		query: `subscription { node { id } }`,
		event: `{"__typename":7,"id":"1"}`,
		want:  `{"errors":[{"message":"Abstract type \"Node\" must resolve to an Object type at runtime for field \"Subscription.node\". Either the \"Node\" type should provide a \"resolveType\" function or each possible type should provide an \"isTypeOf\" function.","locations":[{"line":1,"column":16}],"path":["node"]}],"data":{"node":null}}`,
	},
	{
		name:  "interface with an unknown typename",
		query: `subscription { node { id } }`,
		event: `{"__typename":"Robot","id":"1"}`,
		want:  `{"errors":[{"message":"Abstract type \"Node\" was resolved to a type \"Robot\" that does not exist inside the schema.","locations":[{"line":1,"column":16}],"path":["node"]}],"data":{"node":null}}`,
	},
	{
		name:  "interface with a typename that is not an object type",
		query: `subscription { node { id } }`,
		event: `{"__typename":"Status","id":"1"}`,
		want:  `{"errors":[{"message":"Abstract type \"Node\" was resolved to a non-object type \"Status\".","locations":[{"line":1,"column":16}],"path":["node"]}],"data":{"node":null}}`,
	},
	{
		name:  "interface with a typename that does not implement it",
		query: `subscription { node { id } }`,
		event: `{"__typename":"Details","id":"1"}`,
		want:  `{"errors":[{"message":"Runtime Object type \"Details\" is not a possible type for \"Node\".","locations":[{"line":1,"column":16}],"path":["node"]}],"data":{"node":null}}`,
	},
	{
		name:  "non-null interface with a bad typename nulls data",
		query: `subscription { nodeStrict { id } }`,
		event: `{"__typename":"Location"}`,
		want:  `{"errors":[{"message":"Runtime Object type \"Location\" is not a possible type for \"Node\".","locations":[{"line":1,"column":16}],"path":["nodeStrict"]}],"data":null}`,
	},
	{
		name:  "interface value that is not an object",
		query: `subscription { node { id } }`,
		event: `"Employee"`,
		want:  `{"errors":[{"message":"Abstract type \"Node\" must resolve to an Object type at runtime for field \"Subscription.node\". Either the \"Node\" type should provide a \"resolveType\" function or each possible type should provide an \"isTypeOf\" function.","locations":[{"line":1,"column":16}],"path":["node"]}],"data":{"node":null}}`,
	},
	{
		name: "named and inline fragments merged",
		query: `subscription { maybeEmployee { ...F name details { forename } ... on Employee { details { surname } id } ... on Node { id } } }
fragment F on Employee { id details { id } }`,
		event: `{"id":"7","name":"Ann","details":{"id":"d","forename":"A","surname":"B"}}`,
		want:  `{"data":{"maybeEmployee":{"id":"7","details":{"id":"d","forename":"A","surname":"B"},"name":"Ann"}}}`,
	},
	{
		name: "fragments on the other type do not apply",
		query: `subscription { search { ...D ... on Employee { name } } }
fragment D on Department { title }`,
		event: `{"__typename":"Employee","name":"Ann","title":"x"}`,
		want:  `{"data":{"search":{"name":"Ann"}}}`,
	},
	{
		name: "a fragment spread twice is collected once",
		query: `subscription { maybeEmployee { ...F ...F name } }
fragment F on Employee { id }`,
		event: `{"id":"7","name":"Ann"}`,
		want:  `{"data":{"maybeEmployee":{"id":"7","name":"Ann"}}}`,
	},
	{
		name:  "skip and include with variables",
		query: `subscription ($s: Boolean!, $i: Boolean!) { maybeEmployee { id name @skip(if: $s) nick @include(if: $i) age @include(if: $s) ... @include(if: false) { rating } ...F @skip(if: $i) } } fragment F on Employee { active }`,
		vars:  map[string]any{"s": true, "i": true},
		event: `{"id":"1","name":"Ann","nick":"A","age":3,"rating":1.5,"active":true}`,
		want:  `{"data":{"maybeEmployee":{"id":"1","nick":"A","age":3}}}`,
	},
	{
		name:  "skip and include, the other way",
		query: `subscription ($s: Boolean!, $i: Boolean!) { maybeEmployee { id name @skip(if: $s) nick @include(if: $i) age @include(if: $s) ... @include(if: true) { rating } ...F @skip(if: $i) } } fragment F on Employee { active }`,
		vars:  map[string]any{"s": false, "i": false},
		event: `{"id":"1","name":"Ann","nick":"A","age":3,"rating":1.5,"active":true}`,
		want:  `{"data":{"maybeEmployee":{"id":"1","name":"Ann","rating":1.5,"active":true}}}`,
	},
	{
		name:  "a field skipped in one place and included in another",
		query: `subscription { maybeEmployee { name @skip(if: true) ... { name } } }`,
		event: `{"name":"Ann"}`,
		want:  `{"data":{"maybeEmployee":{"name":"Ann"}}}`,
	},
	{
		name:  "leaves of every kind",
		query: `subscription { maybeEmployee { id name age rating active status meta } }`,
		event: `{"id":12345678901234567890,"name":"Ann","age":-3,"rating":2.50,"active":false,"status":"ACTIVE","meta":{"z":[1,2.50,null],"a":"x"}}`,
		want:  `{"data":{"maybeEmployee":{"id":"12345678901234567890","name":"Ann","age":-3,"rating":2.50,"active":false,"status":"ACTIVE","meta":{"a":"x","z":[1,2.50,null]}}}}`,
	},
	{
		name:  "leaves coerced from other JSON types",
		query: `subscription { maybeEmployee { id name age rating active } }`,
		event: `{"id":1e2,"name":true,"age":"42","rating":true,"active":0}`,
		want:  `{"data":{"maybeEmployee":{"id":"100","name":"true","age":42,"rating":1,"active":false}}}`,
	},
	{
		name:  "leaf coercion errors, the last on a non-null field",
		query: `subscription { maybeEmployee { age rating active status id } }`,
		event: `{"age":1.5,"rating":"abc","active":"yes","status":"RETIRED","id":true}`,
		want: `{"errors":[` +
			`{"message":"Int cannot represent non-integer value: 1.5","locations":[{"line":1,"column":32}],"path":["maybeEmployee","age"]},` +
			`{"message":"Float cannot represent non numeric value: \"abc\"","locations":[{"line":1,"column":36}],"path":["maybeEmployee","rating"]},` +
			`{"message":"Boolean cannot represent a non boolean value: \"yes\"","locations":[{"line":1,"column":43}],"path":["maybeEmployee","active"]},` +
			`{"message":"Enum \"Status\" cannot represent value: \"RETIRED\"","locations":[{"line":1,"column":50}],"path":["maybeEmployee","status"]},` +
			`{"message":"ID cannot represent value: true","locations":[{"line":1,"column":57}],"path":["maybeEmployee","id"]}` +
			`],"data":{"maybeEmployee":null}}`,
	},
	{
		name:  "a leaf error on a non-null field nulls its parent",
		query: `subscription { maybeEmployee { details { forename surname } } }`,
		event: `{"details":{"forename":{"first":"Ann"},"surname":"B"}}`,
		want:  `{"errors":[{"message":"String cannot represent value: { first: \"Ann\" }","locations":[{"line":1,"column":42}],"path":["maybeEmployee","details","forename"]}],"data":{"maybeEmployee":{"details":null}}}`,
	},
	{
		name:  "a missing non-null key at the root's first level",
		query: `subscription { employeeUpdated(employeeID: "1") { id } }`,
		event: `{}`,
		want:  `{"errors":[{"message":"Cannot return null for non-nullable field Employee.id.","locations":[{"line":1,"column":51}],"path":["employeeUpdated","id"]}],"data":null}`,
	},
	{
		name:  "null propagates to a nullable root",
		query: `subscription { maybeEmployee { id name } }`,
		event: `{"id":"1"}`,
		want:  `{"errors":[{"message":"Cannot return null for non-nullable field Employee.name.","locations":[{"line":1,"column":35}],"path":["maybeEmployee","name"]}],"data":{"maybeEmployee":null}}`,
	},
	{
		name:  "null propagates to a nullable object two levels down",
		query: `subscription { maybeEmployee { id details { location { city } } } }`,
		event: `{"id":"1","details":{"location":{"city":null}}}`,
		want:  `{"errors":[{"message":"Cannot return null for non-nullable field Location.city.","locations":[{"line":1,"column":56}],"path":["maybeEmployee","details","location","city"]}],"data":{"maybeEmployee":{"id":"1","details":{"location":null}}}}`,
	},
	{
		name:  "null in a list of non-null items nulls the list",
		query: `subscription { maybeEmployee { id reports { name } } }`,
		event: `{"id":"1","reports":[{"name":"A"},{"name":null},{"name":null}]}`,
		want:  `{"errors":[{"message":"Cannot return null for non-nullable field Employee.name.","locations":[{"line":1,"column":45}],"path":["maybeEmployee","reports",1,"name"]}],"data":{"maybeEmployee":{"id":"1","reports":null}}}`,
	},
	{
		name:  "null through a non-null list to the object",
		query: `subscription { maybeEmployee { id strictReports { name } } }`,
		event: `{"id":"1","strictReports":[null]}`,
		want:  `{"errors":[{"message":"Cannot return null for non-nullable field Employee.strictReports.","locations":[{"line":1,"column":35}],"path":["maybeEmployee","strictReports",0]}],"data":{"maybeEmployee":null}}`,
	},
	{
		name:  "null all the way to a non-null root",
		query: `subscription { employeeUpdated(employeeID: "1") { id strictReports { details { forename } } } }`,
		event: `{"id":"1","strictReports":[{"details":{}}]}`,
		want:  `{"errors":[{"message":"Cannot return null for non-nullable field Details.forename.","locations":[{"line":1,"column":80}],"path":["employeeUpdated","strictReports",0,"details","forename"]}],"data":{"employeeUpdated":{"id":"1","strictReports":[{"details":null}]}}}`,
	},
	{
		name:  "null items in a non-null root list",
		query: `subscription { counters }`,
		event: `[1,null,3]`,
		want:  `{"errors":[{"message":"Cannot return null for non-nullable field Subscription.counters.","locations":[{"line":1,"column":16}],"path":["counters",1]}],"data":null}`,
	},
	{
		name:  "errors in nullable siblings are all reported",
		query: `subscription { maybeEmployee { age rating } }`,
		event: `{"age":"x","rating":[1]}`,
		want:  `{"errors":[{"message":"Int cannot represent non-integer value: \"x\"","locations":[{"line":1,"column":32}],"path":["maybeEmployee","age"]},{"message":"Float cannot represent non numeric value: [1]","locations":[{"line":1,"column":36}],"path":["maybeEmployee","rating"]}],"data":{"maybeEmployee":{"age":null,"rating":null}}}`,
	},
	{
		name:  "merged fields list every location",
		query: "subscription {\n  maybeEmployee {\n    name\n    ... { name }\n  }\n}",
		event: `{}`,
		want:  `{"errors":[{"message":"Cannot return null for non-nullable field Employee.name.","locations":[{"line":3,"column":5},{"line":4,"column":11}],"path":["maybeEmployee","name"]}],"data":{"maybeEmployee":null}}`,
	},
	{
		name:  "root value null, nullable",
		query: `subscription { maybeEmployee { id } }`,
		event: `null`,
		want:  `{"data":{"maybeEmployee":null}}`,
	},
	{
		name:  "root value null, non-null",
		query: `subscription { employeeUpdated(employeeID: "1") { id } }`,
		event: `null`,
		want:  `{"errors":[{"message":"Cannot return null for non-nullable field Subscription.employeeUpdated.","locations":[{"line":1,"column":16}],"path":["employeeUpdated"]}],"data":null}`,
	},
	{
		name:  "event that is a number",
		query: `subscription { employeeUpdated(employeeID: "1") { id } }`,
		event: `5`,
		want:  `{"errors":[{"message":"Expected value of type \"Employee\" but got: 5.","locations":[{"line":1,"column":16}],"path":["employeeUpdated"]}],"data":null}`,
	},
	{
		name:  "event that is a string",
		query: `subscription { maybeEmployee { id } }`,
		event: `"hello"`,
		want:  `{"errors":[{"message":"Expected value of type \"Employee\" but got: \"hello\".","locations":[{"line":1,"column":16}],"path":["maybeEmployee"]}],"data":{"maybeEmployee":null}}`,
	},
	{
		name:  "event that is a list",
		query: `subscription { maybeEmployee { id } }`,
		event: `[{"id":"1"}]`,
		want:  `{"errors":[{"message":"Expected value of type \"Employee\" but got: [{ id: \"1\" }].","locations":[{"line":1,"column":16}],"path":["maybeEmployee"]}],"data":{"maybeEmployee":null}}`,
	},
	{
		name:  "nested value that is not an object",
		query: `subscription { maybeEmployee { details { id } } }`,
		event: `{"details":true}`,
		want:  `{"errors":[{"message":"Expected value of type \"Details\" but got: true.","locations":[{"line":1,"column":32}],"path":["maybeEmployee","details"]}],"data":{"maybeEmployee":{"details":null}}}`,
	},
	{
		name:  "list value that is not a list",
		query: `subscription { maybeEmployee { tags } }`,
		event: `{"tags":"a,b"}`,
		want:  `{"errors":[{"message":"Expected Iterable, but did not find one for field \"Employee.tags\".","locations":[{"line":1,"column":32}],"path":["maybeEmployee","tags"]}],"data":{"maybeEmployee":{"tags":null}}}`,
	},
	{
		name:  "leaf root",
		query: `subscription { c: counter }`,
		event: `7`,
		want:  `{"data":{"c":7}}`,
	},
	{
		name:  "unicode and escaping",
		query: `subscription { maybeEmployee { name tags } }`,
		event: `{"name":"Zoë \"q\" \\ \n\t\u0001\u001f <a&b> \u2028 😀","tags":["\u00e9","\ud83d\ude00","/"]}`,
		want:  `{"data":{"maybeEmployee":{"name":"Zoë \"q\" \\ \n\t\u0001\u001f <a&b> \u2028 😀","tags":["é","😀","/"]}}}`,
	},
}

func TestProjection(t *testing.T) {
	for _, tc := range projectTests {
		t.Run(tc.name, func(t *testing.T) {
			p := compileOperation(t, tc.query, tc.vars)
			event := mustDecode(t, tc.event)
			got := string(p.appendResult(nil, event))
			if got != tc.want {
				t.Errorf("appendResult(%s) =\n%s\nwant\n%s", tc.event, got, tc.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("appendResult(%s) = %s; not valid JSON", tc.event, got)
			}
			prefix := []byte("[1,")
			if got2 := p.appendResult(prefix, event); string(got2) != "[1,"+tc.want {
				t.Errorf("appendResult([1,, %s) = %s; want [1,%s", tc.event, got2, tc.want)
			}
		})
	}
}

func TestProjectionInvalidUTF8(t *testing.T) {
	p := compileOperation(t, `subscription { maybeEmployee { name meta } }`, nil)
	event := map[string]any{"name": "a\xffb\xe2\x82", "meta": map[string]any{"k\x80": "\u2029"}}
	got := string(p.appendResult(nil, event))
	want := `{"data":{"maybeEmployee":{"name":"a\ufffdb\ufffd\ufffd","meta":{"k\ufffd":"\u2029"}}}}`
	if got != want {
		t.Errorf("appendResult = %s; want %s", got, want)
	}
}

// TestProjectionGoNumbers checks events decoded without UseNumber.
func TestProjectionGoNumbers(t *testing.T) {
	p := compileOperation(t, `subscription { maybeEmployee { id name age rating active meta } }`, nil)
	event := map[string]any{"id": float64(4), "name": 1e21, "age": int64(7), "rating": 0.1, "active": 2, "meta": []any{1.5, int64(2)}}
	got := string(p.appendResult(nil, event))
	want := `{"data":{"maybeEmployee":{"id":"4","name":"1e+21","age":7,"rating":0.1,"active":true,"meta":[1.5,2]}}}`
	if got != want {
		t.Errorf("appendResult = %s; want %s", got, want)
	}
}

var leafTests = []struct {
	name    string
	append  func([]byte, any) ([]byte, string)
	in      string // JSON
	want    string
	wantErr string
}{
	{"Int", appendInt, `5`, `5`, ""},
	{"Int negative zero", appendInt, `-0`, `0`, ""},
	{"Int integral float", appendInt, `5.0`, `5`, ""},
	{"Int exponent", appendInt, `1e2`, `100`, ""},
	{"Int max", appendInt, `2147483647`, `2147483647`, ""},
	{"Int min", appendInt, `-2147483648`, `-2147483648`, ""},
	{"Int fraction", appendInt, `1.5`, ``, "Int cannot represent non-integer value: 1.5"},
	{"Int too large", appendInt, `2147483648`, ``, "Int cannot represent non 32-bit signed integer value: 2147483648"},
	{"Int too large float", appendInt, `3e9`, ``, "Int cannot represent non 32-bit signed integer value: 3000000000"},
	{"Int infinite", appendInt, `1e400`, ``, "Int cannot represent non-integer value: Infinity"},
	{"Int true", appendInt, `true`, `1`, ""},
	{"Int false", appendInt, `false`, `0`, ""},
	{"Int numeric string", appendInt, `"12"`, `12`, ""},
	{"Int string with spaces", appendInt, `" 12\n"`, `12`, ""},
	{"Int hex string", appendInt, `"0x10"`, `16`, ""},
	{"Int blank string", appendInt, `"  "`, `0`, ""},
	{"Int fraction string", appendInt, `"1.5"`, ``, `Int cannot represent non-integer value: "1.5"`},
	{"Int empty string", appendInt, `""`, ``, `Int cannot represent non-integer value: ""`},
	{"Int word", appendInt, `"abc"`, ``, `Int cannot represent non-integer value: "abc"`},
	{"Int large string", appendInt, `"1e10"`, ``, `Int cannot represent non 32-bit signed integer value: "1e10"`},
	{"Int list", appendInt, `[1,2]`, ``, `Int cannot represent non-integer value: [1, 2]`},
	{"Int object", appendInt, `{"a":1}`, ``, `Int cannot represent non-integer value: { a: 1 }`},

	{"Float", appendFloat, `1.50`, `1.50`, ""},
	{"Float integer", appendFloat, `3`, `3`, ""},
	{"Float exponent", appendFloat, `1E+2`, `1E+2`, ""},
	{"Float infinite", appendFloat, `-1e400`, ``, "Float cannot represent non numeric value: -Infinity"},
	{"Float true", appendFloat, `true`, `1`, ""},
	{"Float string", appendFloat, `"2.50"`, `2.5`, ""},
	{"Float string leading point", appendFloat, `".5"`, `0.5`, ""},
	{"Float string Infinity", appendFloat, `"Infinity"`, ``, `Float cannot represent non numeric value: "Infinity"`},
	{"Float word", appendFloat, `"abc"`, ``, `Float cannot represent non numeric value: "abc"`},
	{"Float Go syntax", appendFloat, `"0x1p-2"`, ``, `Float cannot represent non numeric value: "0x1p-2"`},
	{"Float empty string", appendFloat, `""`, ``, `Float cannot represent non numeric value: ""`},
	{"Float list", appendFloat, `[]`, ``, `Float cannot represent non numeric value: []`},

	{"String", appendString, `"x"`, `"x"`, ""},
	{"String true", appendString, `true`, `"true"`, ""},
	{"String false", appendString, `false`, `"false"`, ""},
	{"String float", appendString, `1.50`, `"1.5"`, ""},
	{"String exponent", appendString, `1e2`, `"100"`, ""},
	{"String small", appendString, `1e-7`, `"1e-7"`, ""},
	{"String large integer", appendString, `12345678901234567890`, `"12345678901234567890"`, ""},
	{"String negative zero", appendString, `-0`, `"0"`, ""},
	{"String infinite", appendString, `1e999`, ``, "String cannot represent value: Infinity"},
	{"String object", appendString, `{}`, ``, "String cannot represent value: {}"},
	{"String list", appendString, `["a"]`, ``, `String cannot represent value: ["a"]`},

	{"Boolean true", appendBoolean, `true`, `true`, ""},
	{"Boolean zero", appendBoolean, `0`, `false`, ""},
	{"Boolean number", appendBoolean, `2.5`, `true`, ""},
	{"Boolean string", appendBoolean, `"true"`, ``, `Boolean cannot represent a non boolean value: "true"`},
	{"Boolean list", appendBoolean, `[true]`, ``, `Boolean cannot represent a non boolean value: [true]`},
	{"Boolean infinite", appendBoolean, `1e400`, ``, `Boolean cannot represent a non boolean value: Infinity`},

	{"ID string", appendID, `"a"`, `"a"`, ""},
	{"ID integer", appendID, `7`, `"7"`, ""},
	{"ID integral float", appendID, `7.0`, `"7"`, ""},
	{"ID exponent", appendID, `1e21`, `"1e+21"`, ""},
	{"ID fraction", appendID, `1.5`, ``, "ID cannot represent value: 1.5"},
	{"ID boolean", appendID, `true`, ``, "ID cannot represent value: true"},
	{"ID object", appendID, `{"id":1}`, ``, "ID cannot represent value: { id: 1 }"},
}

func TestLeafSerialize(t *testing.T) {
	for _, tc := range leafTests {
		t.Run(tc.name, func(t *testing.T) {
			v := mustDecode(t, tc.in)
			got, msg := tc.append([]byte("x"), v)
			if string(got) != "x"+tc.want || msg != tc.wantErr {
				t.Errorf("serialize(%s) = %q, %q; want %q, %q", tc.in, got, msg, "x"+tc.want, tc.wantErr)
			}
		})
	}
}

func TestInspect(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"string", `"a\"b\n\u0001"`, `"a\"b\n\u0001"`},
		{"number", `1.50`, `1.5`},
		{"large number", `1e21`, `1e+21`},
		{"null", `null`, `null`},
		{"nested objects", `{"a":{"b":{"c":1}},"x":[]}`, `{ a: { b: [Object] }, x: [] }`},
		{"nested lists", `[[[1]],[]]`, `[[[Array]], []]`},
		{"long list", `[1,2,3,4,5,6,7,8,9,10,11]`, `[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... 1 more item]`},
		{"longer list", `[1,2,3,4,5,6,7,8,9,10,11,12]`, `[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... 2 more items]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := inspect(mustDecode(t, tc.in)); got != tc.want {
				t.Errorf("inspect(%s) = %s; want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestProjectionKey(t *testing.T) {
	tests := []struct {
		name  string
		a, b  string
		vars  map[string]any
		equal bool
	}{
		{
			name:  "fragments inlined",
			a:     "subscription { maybeEmployee { ...F } }\nfragment F on Employee {\nid }",
			b:     "subscription { maybeEmployee { ... on Node {\n\nid } } }",
			equal: true,
		},
		{
			name:  "the same fields at other places",
			a:     `subscription { maybeEmployee { ...F } } fragment F on Employee { id name }`,
			b:     `subscription { maybeEmployee { ... { id name } } }`,
			equal: false, // errors would name other locations
		},
		{
			name:  "same text",
			a:     `subscription { maybeEmployee { id name } }`,
			b:     `subscription { maybeEmployee { id name } }`,
			equal: true,
		},
		{
			name:  "skipped fields",
			a:     `subscription ($s: Boolean!) { maybeEmployee { id nick @skip(if: $s) } }`,
			b:     `subscription ($s: Boolean!) { maybeEmployee { id nick @skip(if: $s) } }`,
			vars:  map[string]any{"s": true},
			equal: true,
		},
		{
			name:  "order of response keys",
			a:     `subscription { maybeEmployee { id name } }`,
			b:     `subscription { maybeEmployee { name id } }`,
			equal: false,
		},
		{
			name:  "alias",
			a:     `subscription { maybeEmployee { id name } }`,
			b:     `subscription { maybeEmployee { id nome: name } }`,
			equal: false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := compileOperation(t, tc.a, tc.vars)
			b := compileOperation(t, tc.b, tc.vars)
			if got := a.key() == b.key(); got != tc.equal {
				t.Errorf("key() == key() = %v; want %v\n%s\n%s", got, tc.equal, a.key(), b.key())
			}
		})
	}
	// Two operations with the same shape at the same places share a key
	// whatever the variables say about fields the shape leaves out.
	q := `subscription ($s: Boolean!) { maybeEmployee { id nick @skip(if: $s) } }`
	skipped := compileOperation(t, q, map[string]any{"s": true})
	kept := compileOperation(t, q, map[string]any{"s": false})
	if skipped.key() == kept.key() {
		t.Errorf("key() with nick skipped = key() with nick kept = %s; want them different", kept.key())
	}
	want := `Subscription.maybeEmployee:maybeEmployee@1:31 Employee{id:id@1:47 ID!}`
	if got := skipped.key(); got != want {
		t.Errorf("key() = %s; want %s", got, want)
	}
}

func TestCompileProjectionErrors(t *testing.T) {
	tests := []struct {
		name  string
		query string
		vars  map[string]any
		want  string
	}{
		{"root skipped", `subscription { maybeEmployee @skip(if: true) { id } }`, nil, "left out by @skip or @include"},
		{"root not included", `subscription ($i: Boolean!) { maybeEmployee @include(if: $i) { id } }`, map[string]any{"i": false}, "left out by @skip or @include"},
		{"if not a boolean", `subscription ($i: Boolean!) { maybeEmployee { id @include(if: $i) } }`, map[string]any{"i": "yes"}, "is not a Boolean"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQueryWithRules(projectSchema, tc.query, nil)
			if len(errs) > 0 {
				t.Fatalf("LoadQueryWithRules(%q) = %v", tc.query, errs)
			}
			root := doc.Operations[0].SelectionSet[0].(*ast.Field)
			_, err := compileProjection(projectSchema, []*ast.Field{root}, tc.vars)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("compileProjection(%q) = %v; want an error containing %q", tc.query, err, tc.want)
			}
		})
	}
}

func TestProjectionAllocs(t *testing.T) {
	p := compileOperation(t, benchQuery, nil)
	event := mustDecode(t, benchEvent)
	dst := p.appendResult(nil, event)
	if allocs := testing.AllocsPerRun(100, func() { dst = p.appendResult(dst[:0], event) }); allocs != 0 {
		t.Errorf("appendResult allocations = %v; want 0", allocs)
	}
}

// benchQuery and benchEvent are a typical employee subscription: an
// Apollo-style selection with __typename at every level, and its event.
const (
	benchQuery = `subscription {
  employeeUpdated(employeeID: "1") {
    __typename id name nick age rating active status
    details { __typename forename surname location { __typename city } }
    tags
    reports { __typename id name }
  }
}`
	benchEvent = `{"__typename":"Employee","id":1,"name":"Björn Borg","nick":null,"age":67,"rating":4.75,"active":true,"status":"ACTIVE",` +
		`"details":{"forename":"Björn","surname":"Borg","location":{"city":"Södertälje"}},"tags":["tennis","legend","\"quoted\""],` +
		`"reports":[{"id":"2","name":"Ann"},{"id":"3","name":"Bo"},{"id":"4","name":"Cy"}],"unselected":{"big":[1,2,3]}}`
)

func BenchmarkProjection(b *testing.B) {
	p := compileOperation(b, benchQuery, nil)
	event := mustDecode(b, benchEvent)
	dst := p.appendResult(nil, event)
	b.ReportAllocs()
	b.SetBytes(int64(len(dst)))
	for b.Loop() {
		dst = p.appendResult(dst[:0], event)
	}
}

func BenchmarkProjectionError(b *testing.B) {
	p := compileOperation(b, benchQuery, nil)
	event := mustDecode(b, strings.Replace(benchEvent, `"name":"Ann"`, `"name":null`, 1))
	dst := p.appendResult(nil, event)
	b.ReportAllocs()
	b.SetBytes(int64(len(dst)))
	for b.Loop() {
		dst = p.appendResult(dst[:0], event)
	}
}

// fuzzQueries are the operations FuzzProjection writes each event with.
var fuzzQueries = []string{
	benchQuery,
	`subscription { node { __typename id ... on Employee { name age rating active status meta matrix tags reports { id } strictReports { name } } ... on Department { title } } }`,
	`subscription { results { ... on Employee { id details { forename location { city } } } ... on Department { t: title } } }`,
	`subscription { counters }`,
}

func FuzzProjection(f *testing.F) {
	for _, tc := range projectTests {
		f.Add(tc.event)
	}
	f.Add(benchEvent)
	f.Add(`{"__typename":"Employee","id":"1","name":"a","age":"0x7fffffff","rating":"-.5e3","active":-0,"status":"INACTIVE","meta":{"\u2028":"\ud800"},` +
		`"matrix":[[1e400]],"tags":[1,true],"reports":[{"id":1.0}],"strictReports":[]}`)
	f.Add(`[{"__typename":"Employee","id":1,"details":{"forename":"x","location":{"city":null}}},{"__typename":"Department","title":5},null]`)
	projections := make([]*projection, len(fuzzQueries))
	for i, q := range fuzzQueries {
		projections[i] = compileOperation(f, q, nil)
	}
	f.Fuzz(func(t *testing.T, eventText string) {
		d := json.NewDecoder(strings.NewReader(eventText))
		d.UseNumber()
		var event any
		if d.Decode(&event) != nil {
			return
		}
		for i, p := range projections {
			out := p.appendResult(nil, event)
			var result map[string]json.RawMessage
			if !json.Valid(out) || json.Unmarshal(out, &result) != nil {
				t.Fatalf("query %d: appendResult(%s) = %s; not valid JSON", i, eventText, out)
			}
			var errs []json.RawMessage
			if _, ok := result["data"]; !ok || json.Unmarshal(result["errors"], &errs) != nil && result["errors"] != nil {
				t.Fatalf("query %d: appendResult(%s) = %s; want data and optional errors", i, eventText, out)
			}
			if hasErrors := bytes.HasPrefix(out, []byte(`{"errors":[{"message":`)); hasErrors != (len(errs) > 0) || len(result) != len(errs[:min(len(errs), 1)])+1 {
				t.Fatalf("query %d: appendResult(%s) = %s; want errors first when there are any", i, eventText, out)
			}
		}
	})
}
