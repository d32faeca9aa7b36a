package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// parseCondition parses text as the condition argument of a field's
// @openfed__subscriptionFilter in a schema, as the schema loader finds it.
func parseCondition(t testing.TB, text string) *ast.Value {
	t.Helper()
	v, err := conditionValue(text)
	if err != nil {
		t.Fatalf("parsing condition %s: %v", text, err)
	}
	return v
}

// conditionValue parses text as a condition argument.
func conditionValue(text string) (*ast.Value, error) {
	doc, err := parser.ParseSchema(&ast.Source{Input: "type Subscription { f: Int @openfed__subscriptionFilter(condition: " + text + ") }"})
	if err != nil {
		return nil, err
	}
	return doc.Definitions[0].Fields[0].Directives[0].Arguments[0].Value, nil
}

var filterArgs = map[string]any{
	"id":        "1",
	"intID":     int64(1),
	"firstIds":  []any{int64(1), int64(2)},
	"secondIds": []any{"4", json.Number("5.0")},
	"names":     []any{"Ann", "Bo"},
	"float":     1.5,
	"wholeF":    3.0,
	"yes":       true,
	"null":      nil,
	"nullList":  []any{nil},
	"input":     map[string]any{"id": "x", "tags": []any{"a", "b"}, "none": nil},
	"nested":    []any{[]any{int64(1)}},
	"objects":   []any{map[string]any{"id": int64(1)}},
}

var filterTests = []struct {
	name  string
	cond  string
	event string
	want  bool
}{
	{"IN literal number", `{ IN: { fieldPath: "id", values: [3] } }`, `{"id":3}`, true},
	{"IN literal number mismatch", `{ IN: { fieldPath: "id", values: [3] } }`, `{"id":4}`, false},
	{"IN number compares by value", `{ IN: { fieldPath: "id", values: [3] } }`, `{"id":3.0}`, true},
	{"IN exponent compares by value", `{ IN: { fieldPath: "id", values: [300] } }`, `{"id":3e2}`, true},
	{"IN float literal", `{ IN: { fieldPath: "score", values: [1.50] } }`, `{"score":1.5}`, true},
	{"IN string literal", `{ IN: { fieldPath: "name", values: ["Ann"] } }`, `{"name":"Ann"}`, true},
	{"IN string unescaped", `{ IN: { fieldPath: "name", values: ["Ann"] } }`, `{"name":"\u0041nn"}`, true},
	{"IN bool literal", `{ IN: { fieldPath: "ok", values: [true] } }`, `{"ok":true}`, true},
	{"IN bool literal false", `{ IN: { fieldPath: "ok", values: [false] } }`, `{"ok":true}`, false},
	{"IN null literal", `{ IN: { fieldPath: "x", values: [null] } }`, `{"x":null}`, true},
	{"IN null literal, field missing", `{ IN: { fieldPath: "x", values: [null] } }`, `{}`, false},
	{"IN single value not in a list", `{ IN: { fieldPath: "id", values: 3 } }`, `{"id":3}`, true},
	{"IN nested path", `{ IN: { fieldPath: "details.id", values: [3] } }`, `{"details":{"id":3}}`, true},
	{"IN nested path missing", `{ IN: { fieldPath: "details.id", values: [3] } }`, `{"details":{}}`, false},
	{"IN path through a scalar", `{ IN: { fieldPath: "details.id", values: [3] } }`, `{"details":3}`, false},
	{"IN path through a list", `{ IN: { fieldPath: "details.id", values: [3] } }`, `{"details":[{"id":3}]}`, false},
	{"IN field that is a list", `{ IN: { fieldPath: "ids", values: [3] } }`, `{"ids":[3]}`, false},
	{"IN field that is an object", `{ IN: { fieldPath: "ids", values: [3] } }`, `{"ids":{"3":3}}`, false},
	{"IN event not an object", `{ IN: { fieldPath: "id", values: [3] } }`, `3`, false},
	{"IN no values", `{ IN: { fieldPath: "id", values: [] } }`, `{"id":3}`, false},

	{"string argument, string event", `{ IN: { fieldPath: "id", values: ["{{ args.id }}"] } }`, `{"id":"1"}`, true},
	{"string argument, number event", `{ IN: { fieldPath: "id", values: ["{{ args.id }}"] } }`, `{"id":1}`, false},
	{"number argument, number event", `{ IN: { fieldPath: "id", values: ["{{ args.intID }}"] } }`, `{"id":1}`, true},
	{"number argument, string event", `{ IN: { fieldPath: "id", values: ["{{ args.intID }}"] } }`, `{"id":"1"}`, false},
	{"string literal, number event", `{ IN: { fieldPath: "id", values: ["1"] } }`, `{"id":1}`, false},
	{"number literal, string event", `{ IN: { fieldPath: "id", values: [1] } }`, `{"id":"1"}`, false},
	{"bool argument, string event", `{ IN: { fieldPath: "ok", values: ["{{ args.yes }}"] } }`, `{"ok":"true"}`, false},
	{"bool argument, bool event", `{ IN: { fieldPath: "ok", values: ["{{ args.yes }}"] } }`, `{"ok":true}`, true},
	{"float argument", `{ IN: { fieldPath: "x", values: ["{{ args.float }}"] } }`, `{"x":1.50}`, true},
	{"integral float argument", `{ IN: { fieldPath: "x", values: ["{{ args.wholeF }}"] } }`, `{"x":3}`, true},
	{"null argument", `{ IN: { fieldPath: "x", values: ["{{ args.null }}"] } }`, `{"x":null}`, true},
	{"null argument, value present", `{ IN: { fieldPath: "x", values: ["{{ args.null }}"] } }`, `{"x":0}`, false},
	{"unset argument gives no values", `{ IN: { fieldPath: "x", values: ["{{ args.unset }}", 2] } }`, `{"x":2}`, true},
	{"unset argument matches nothing", `{ IN: { fieldPath: "x", values: ["{{ args.unset }}"] } }`, `{"x":null}`, false},
	{"argument through a null input", `{ IN: { fieldPath: "x", values: ["{{ args.input.none.id }}"] } }`, `{"x":null}`, false},
	{"nested argument", `{ IN: { fieldPath: "x", values: ["{{ args.input.id }}"] } }`, `{"x":"x"}`, true},

	{"list arguments expand", `{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}", "{{ args.secondIds }}", 3] } }`, `{"id":2}`, true},
	{"list arguments expand, string element", `{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}", "{{ args.secondIds }}", 3] } }`, `{"id":"4"}`, true},
	{"list arguments expand, json.Number element", `{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}", "{{ args.secondIds }}", 3] } }`, `{"id":5}`, true},
	{"list arguments expand, literal", `{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}", "{{ args.secondIds }}", 3] } }`, `{"id":3}`, true},
	{"list arguments expand, element types kept", `{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}", "{{ args.secondIds }}", 3] } }`, `{"id":4}`, false},
	{"list arguments expand, no match", `{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}", "{{ args.secondIds }}", 3] } }`, `{"id":6}`, false},
	{"nested list argument", `{ IN: { fieldPath: "tag", values: ["{{ args.input.tags }}"] } }`, `{"tag":"b"}`, true},
	{"list of null", `{ IN: { fieldPath: "x", values: ["{{ args.nullList }}"] } }`, `{"x":null}`, true},
	{"text around a placeholder", `{ IN: { fieldPath: "key", values: ["user-{{ args.id }}"] } }`, `{"key":"user-1"}`, true},
	{"text around a number placeholder is a string", `{ IN: { fieldPath: "key", values: ["{{ args.intID }}{{ args.intID }}"] } }`, `{"key":11}`, false},
	{"text around a number placeholder", `{ IN: { fieldPath: "key", values: ["{{ args.intID }}{{ args.intID }}"] } }`, `{"key":"11"}`, true},
	{"text around a list placeholder expands", `{ IN: { fieldPath: "key", values: ["user-{{ args.names }}!"] } }`, `{"key":"user-Bo!"}`, true},
	{"text around a list placeholder, no match", `{ IN: { fieldPath: "key", values: ["user-{{ args.names }}!"] } }`, `{"key":"user-Ann"}`, false},
	{"text around a list of numbers", `{ IN: { fieldPath: "key", values: ["n{{ args.firstIds }}"] } }`, `{"key":"n2"}`, true},

	{"AND both", `{ AND: [{ IN: { fieldPath: "a", values: [1] } }, { IN: { fieldPath: "b", values: [2] } }] }`, `{"a":1,"b":2}`, true},
	{"AND one", `{ AND: [{ IN: { fieldPath: "a", values: [1] } }, { IN: { fieldPath: "b", values: [2] } }] }`, `{"a":1,"b":3}`, false},
	{"AND single object", `{ AND: { IN: { fieldPath: "a", values: [1] } } }`, `{"a":1}`, true},
	{"OR one", `{ OR: [{ IN: { fieldPath: "a", values: [1] } }, { IN: { fieldPath: "b", values: [2] } }] }`, `{"a":0,"b":2}`, true},
	{"OR none", `{ OR: [{ IN: { fieldPath: "a", values: [1] } }, { IN: { fieldPath: "b", values: [2] } }] }`, `{"a":0,"b":0}`, false},
	{"NOT", `{ NOT: { IN: { fieldPath: "a", values: [1] } } }`, `{"a":1}`, false},
	{"NOT missing field", `{ NOT: { IN: { fieldPath: "a", values: [1] } } }`, `{}`, true},
	{"NOT NOT", `{ NOT: { NOT: { IN: { fieldPath: "a", values: [1] } } } }`, `{"a":1}`, true},
	{"null next to the set field", `{ IN: { fieldPath: "a", values: [1] }, AND: null }`, `{"a":1}`, true},
	{
		"nested",
		`{ OR: [
			{ AND: [{ IN: { fieldPath: "dept", values: ["eng"] } }, { NOT: { IN: { fieldPath: "details.level", values: [1, 2] } } }] },
			{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}"] } }
		] }`,
		`{"dept":"eng","details":{"level":3},"id":9}`, true,
	},
	{
		"nested, NOT fails",
		`{ OR: [
			{ AND: [{ IN: { fieldPath: "dept", values: ["eng"] } }, { NOT: { IN: { fieldPath: "details.level", values: [1, 2] } } }] },
			{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}"] } }
		] }`,
		`{"dept":"eng","details":{"level":2},"id":9}`, false,
	},
	{
		"nested, other branch",
		`{ OR: [
			{ AND: [{ IN: { fieldPath: "dept", values: ["eng"] } }, { NOT: { IN: { fieldPath: "details.level", values: [1, 2] } } }] },
			{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}"] } }
		] }`,
		`{"dept":"ops","details":{"level":2},"id":2}`, true,
	},
}

func TestFilterMatch(t *testing.T) {
	for _, tc := range filterTests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := compileFilter(parseCondition(t, tc.cond), filterArgs)
			if err != nil {
				t.Fatalf("compileFilter(%s) = %v", tc.cond, err)
			}
			event := mustDecode(t, tc.event)
			if got := f.match(event); got != tc.want {
				t.Errorf("match(%s) = %v; want %v (filter %s)", tc.event, got, tc.want, f.key())
			}
		})
	}
}

func TestFilterNil(t *testing.T) {
	f, err := compileFilter(nil, filterArgs)
	if f != nil || err != nil {
		t.Fatalf("compileFilter(nil) = %v, %v; want nil, nil", f, err)
	}
	if !f.match(map[string]any{}) || f.key() != "" {
		t.Errorf("nil filter: match = %v, key = %q; want true, \"\"", f.match(map[string]any{}), f.key())
	}
}

// TestFilterGoValues checks events decoded without UseNumber.
func TestFilterGoValues(t *testing.T) {
	f, err := compileFilter(parseCondition(t, `{ IN: { fieldPath: "id", values: [1, 2.5] } }`), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{float64(1), int64(1), 1, 2.5} {
		if !f.match(map[string]any{"id": v}) {
			t.Errorf("match({id: %T(%v)}) = false; want true", v, v)
		}
	}
	if f.match(map[string]any{"id": float64(2)}) {
		t.Errorf("match({id: 2.0}) = true; want false")
	}
}

func TestFilterKey(t *testing.T) {
	tests := []struct {
		name  string
		a, b  string
		equal bool
	}{
		{"values in another order", `{ IN: { fieldPath: "id", values: [1, "a", null] } }`, `{ IN: { fieldPath: "id", values: [null, "a", 1] } }`, true},
		{"repeated values", `{ IN: { fieldPath: "id", values: [1, 1] } }`, `{ IN: { fieldPath: "id", values: [1] } }`, true},
		{"numbers written differently", `{ IN: { fieldPath: "id", values: [1.0, 2e0] } }`, `{ IN: { fieldPath: "id", values: [1, 2] } }`, true},
		{"expanded argument", `{ IN: { fieldPath: "id", values: ["{{ args.firstIds }}"] } }`, `{ IN: { fieldPath: "id", values: [2, 1] } }`, true},
		{"string argument", `{ IN: { fieldPath: "id", values: ["{{ args.id }}"] } }`, `{ IN: { fieldPath: "id", values: ["1"] } }`, true},
		{"conditions in another order", `{ AND: [{ IN: { fieldPath: "a", values: [1] } }, { IN: { fieldPath: "b", values: [2] } }] }`, `{ AND: [{ IN: { fieldPath: "b", values: [2] } }, { IN: { fieldPath: "a", values: [1] } }] }`, true},
		{"single condition", `{ OR: [{ IN: { fieldPath: "a", values: [1] } }] }`, `{ IN: { fieldPath: "a", values: [1] } }`, true},
		{"double negation", `{ NOT: { NOT: { IN: { fieldPath: "a", values: [1] } } } }`, `{ IN: { fieldPath: "a", values: [1] } }`, true},
		{"string and number", `{ IN: { fieldPath: "id", values: [1] } }`, `{ IN: { fieldPath: "id", values: ["1"] } }`, false},
		{"other path", `{ IN: { fieldPath: "a.b", values: [1] } }`, `{ IN: { fieldPath: "a", values: [1] } }`, false},
		{"dotted path is not one key", `{ IN: { fieldPath: "a.b", values: [1] } }`, `{ IN: { fieldPath: "a\".\"b", values: [1] } }`, false},
		{"AND and OR", `{ AND: [{ IN: { fieldPath: "a", values: [1] } }, { IN: { fieldPath: "b", values: [2] } }] }`, `{ OR: [{ IN: { fieldPath: "a", values: [1] } }, { IN: { fieldPath: "b", values: [2] } }] }`, false},
		{"NOT", `{ NOT: { IN: { fieldPath: "a", values: [1] } } }`, `{ IN: { fieldPath: "a", values: [1] } }`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := compileFilter(parseCondition(t, tc.a), filterArgs)
			if err != nil {
				t.Fatalf("compileFilter(%s) = %v", tc.a, err)
			}
			b, err := compileFilter(parseCondition(t, tc.b), filterArgs)
			if err != nil {
				t.Fatalf("compileFilter(%s) = %v", tc.b, err)
			}
			if got := a.key() == b.key(); got != tc.equal {
				t.Errorf("key() == key() = %v; want %v\n%s\n%s", got, tc.equal, a.key(), b.key())
			}
		})
	}
	f, err := compileFilter(parseCondition(t, `{ OR: [{ NOT: { IN: { fieldPath: "a.b", values: ["x", null, 2.5, 1, true] } } }, { IN: { fieldPath: "c", values: [] } }] }`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `OR(IN("c":),NOT(IN("a"."b":null,true,1,2.5,"x")))`
	if got := f.key(); got != want {
		t.Errorf("key() = %s; want %s", got, want)
	}
}

func TestCompileFilterErrors(t *testing.T) {
	tests := []struct {
		name string
		cond string
		want string
	}{
		{"none set", `{}`, "sets 0 of AND, IN, NOT and OR; want exactly one"},
		{"only nulls", `{ IN: null, AND: null }`, "sets 0 of AND, IN, NOT and OR"},
		{"two set", `{ IN: { fieldPath: "a", values: [1] }, NOT: { IN: { fieldPath: "a", values: [1] } } }`, "sets 2 of AND, IN, NOT and OR"},
		{"two set nested", `{ NOT: { AND: [], OR: [] } }`, "sets 2 of AND, IN, NOT and OR"},
		{"unknown field", `{ EQ: { fieldPath: "a", values: [1] } }`, `unknown field "EQ"`},
		{"lower case", `{ in: { fieldPath: "a", values: [1] } }`, `unknown field "in"`},
		{"not an object", `"a"`, "is not an input object"},
		{"empty AND", `{ AND: [] }`, "AND lists no conditions"},
		{"empty OR", `{ OR: [] }`, "OR lists no conditions"},
		{"IN not an object", `{ IN: [1] }`, "IN [1] is not an input object"},
		{"IN unknown field", `{ IN: { fieldPath: "a", values: [1], op: "eq" } }`, `IN has unknown field "op"`},
		{"IN without fieldPath", `{ IN: { values: [1] } }`, "needs a string fieldPath"},
		{"IN fieldPath not a string", `{ IN: { fieldPath: 1, values: [1] } }`, "needs a string fieldPath"},
		{"IN without values", `{ IN: { fieldPath: "a" } }`, "needs values"},
		{"IN empty fieldPath", `{ IN: { fieldPath: "", values: [1] } }`, "has an empty segment"},
		{"IN empty segment", `{ IN: { fieldPath: "a..b", values: [1] } }`, "has an empty segment"},
		{"list literal", `{ IN: { fieldPath: "a", values: [[1]] } }`, "value [1] is not a scalar"},
		{"object literal", `{ IN: { fieldPath: "a", values: [{ a: 1 }] } }`, "is not a scalar"},
		{"bad template", `{ IN: { fieldPath: "a", values: ["{{ args.id"] } }`, `unclosed "{{"`},
		{"object argument", `{ IN: { fieldPath: "a", values: ["{{ args.input }}"] } }`, "args.input holds an input object; want scalars"},
		{"nested list argument", `{ IN: { fieldPath: "a", values: ["{{ args.nested }}"] } }`, "args.nested holds a list; want scalars"},
		{"list of objects argument", `{ IN: { fieldPath: "a", values: ["{{ args.objects }}"] } }`, "args.objects holds an input object"},
		{"argument through a scalar", `{ IN: { fieldPath: "a", values: ["{{ args.id.x }}"] } }`, "args.id is not an input object"},
		{"null argument in text", `{ IN: { fieldPath: "a", values: ["x{{ args.null }}"] } }`, "args.null is null"},
		{"unset argument in text", `{ IN: { fieldPath: "a", values: ["x{{ args.unset }}"] } }`, "args.unset is missing"},
		{"list argument with another placeholder", `{ IN: { fieldPath: "a", values: ["{{ args.id }}{{ args.names }}"] } }`, "args.names is a list"},
		{"null element in text", `{ IN: { fieldPath: "a", values: ["x{{ args.nullList }}"] } }`, "args.nullList is null"},
		{"too deep", strings.Repeat(`{ NOT: `, 40) + `{ IN: { fieldPath: "a", values: [1] } }` + strings.Repeat(` }`, 40), "nested more than 32 levels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := compileFilter(parseCondition(t, tc.cond), filterArgs)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Count(err.Error(), "gateway: ") != 1 {
				t.Errorf("compileFilter(%s) = %v, %v; want an error containing %q", tc.cond, f, err, tc.want)
			}
		})
	}
}

func FuzzFilter(f *testing.F) {
	for _, tc := range filterTests {
		f.Add(tc.cond, tc.event)
	}
	f.Fuzz(func(t *testing.T, cond, eventText string) {
		v, err := conditionValue(cond)
		if err != nil {
			return
		}
		d := json.NewDecoder(strings.NewReader(eventText))
		d.UseNumber()
		var event any
		if d.Decode(&event) != nil {
			return
		}
		flt, err := compileFilter(v, filterArgs)
		if err != nil {
			return
		}
		got := flt.match(event)
		// Compiling again gives the same key and the same answer, and the
		// negation gives the other answer.
		again, err := compileFilter(v, filterArgs)
		if err != nil || again.key() != flt.key() || again.match(event) != got {
			t.Fatalf("compileFilter(%s) again = %v, %v; want key %s", cond, again, err, flt.key())
		}
		not := &ast.Value{Kind: ast.ObjectValue, Children: ast.ChildValueList{{Name: "NOT", Value: v}}}
		neg, err := compileFilter(not, filterArgs)
		if err != nil {
			if strings.Contains(err.Error(), "nested more than") {
				return
			}
			t.Fatalf("compileFilter(NOT %s) = %v", cond, err)
		}
		if neg.match(event) == got {
			t.Fatalf("NOT %s match(%s) = %v; want %v", cond, eventText, !got, got)
		}
	})
}
