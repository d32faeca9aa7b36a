package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Entities: a subscription's root type may be an entity of Apollo
// Federation (a type with @key). Its event then carries the key fields and
// the fields marked @external — as the entity of Cosmo's event-driven
// subgraph does — and every other field a subscription selects is
// resolved by the upstream GraphQL service (Config.Upstream) with
// Federation's _entities query:
//
//	query($representations: [_Any!]!) {
//	  _entities(representations: $representations) { ... on Employee { name } }
//	}
//
// One request per event serves every selection set of the trigger: each
// adds its own inline fragment. The fields fetched are merged into the
// event before it is projected.

// entityFetch is what a subscription asks the upstream for.
type entityFetch struct {
	typeName  string
	keys      []string // the key's top-level fields, copied from the event
	selection string   // the fields resolved upstream, printed; never ""
}

// planFetch returns the upstream part of proj's selection, or nil when the
// event carries all of it (or the root field's type is no entity). It is
// printed from the compiled projection, whose fields are merged by
// response key and whose fragments were each followed once, so that its
// text grows with the projection rather than with the document's spreads.
func planFetch(schema *ast.Schema, proj *projection, vars map[string]any) (*entityFetch, error) {
	ot := proj.root.typ
	for ot.kind == outList {
		ot = ot.elem
	}
	if ot.kind != outObject {
		return nil, nil
	}
	t := schema.Types[ot.name]
	key := t.Directives.ForName("key")
	if key == nil {
		return nil, nil
	}
	keys := keyFields(stringArg(key, "fields", ""))
	var fetched []*field
	for _, f := range ot.object.fields {
		def := t.Fields.ForName(f.name)
		if f.typ == nil || def == nil || def.Directives.ForName("external") != nil || slices.Contains(keys, f.name) {
			continue
		}
		fetched = append(fetched, f)
	}
	if len(fetched) == 0 {
		return nil, nil
	}
	var b strings.Builder
	if err := printFields(&b, fetched, vars); err != nil {
		return nil, err
	}
	return &entityFetch{typeName: t.Name, keys: keys, selection: b.String()}, nil
}

// keyFields returns the top-level field names of a @key's field set
// ("id", "id org { id }" → id, org).
func keyFields(set string) []string {
	var keys []string
	depth := 0
	for _, tok := range strings.Fields(strings.NewReplacer("{", " { ", "}", " } ").Replace(set)) {
		switch tok {
		case "{":
			depth++
		case "}":
			depth--
		default:
			if depth == 0 {
				keys = append(keys, tok)
			}
		}
	}
	return keys
}

// printFields prints the fields of one selection set of a fetch, each
// followed by a space: its name (results are merged into the event by
// name, so aliases are left to the projection), its arguments with
// variables substituted, and its selection.
func printFields(b *strings.Builder, fields []*field, vars map[string]any) error {
	for _, f := range fields {
		b.WriteString(f.name)
		if len(f.args) > 0 {
			b.WriteByte('(')
			for i, arg := range f.args {
				if i > 0 {
					b.WriteByte(' ')
				}
				v, err := arg.Value.Value(vars)
				if err != nil {
					return err
				}
				b.WriteString(arg.Name + ": ")
				printValue(b, v)
			}
			b.WriteByte(')')
		}
		if err := printSelection(b, f.typ, vars); err != nil {
			return err
		}
		b.WriteByte(' ')
	}
	return nil
}

// printSelection prints the selection of a field of type t, if it has
// one: an object's fields, or each possible type's in an inline fragment.
// An empty selection (all of it skipped) asks for __typename, as a
// selection set may not be empty.
func printSelection(b *strings.Builder, t *outType, vars map[string]any) error {
	for t != nil && t.kind == outList {
		t = t.elem
	}
	switch {
	case t == nil:
		return nil
	case t.kind == outObject:
		b.WriteString(" { ")
		if len(t.object.fields) == 0 {
			b.WriteString("__typename ")
		}
		if err := printFields(b, t.object.fields, vars); err != nil {
			return err
		}
		b.WriteByte('}')
	case t.kind == outAbstract:
		b.WriteString(" { ")
		empty := true
		for _, sel := range t.order {
			if len(sel.fields) == 0 {
				continue
			}
			empty = false
			b.WriteString("... on " + sel.typeName + " { ")
			if err := printFields(b, sel.fields, vars); err != nil {
				return err
			}
			b.WriteString("} ")
		}
		if empty {
			b.WriteString("__typename ")
		}
		b.WriteByte('}')
	}
	return nil
}

// printValue prints an argument's coerced value as a GraphQL literal.
// Enum values arrive as strings and are printed as strings, which
// GraphQL's input coercion does not accept for enums; an enum argument
// inside a fetched field is therefore sent as a string.
func printValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(strconv.Quote(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case int:
		b.WriteString(strconv.Itoa(v))
	case float64:
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	case json.Number:
		b.WriteString(v.String())
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(' ')
			}
			printValue(b, x)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(k + ": ")
			printValue(b, v[k])
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%q", fmt.Sprint(v))
	}
}

// upstream is the GraphQL service that resolves entities' other fields.
type upstream struct {
	url    string
	client *http.Client
}

// errUpstream wraps what went wrong fetching entities.
var errUpstream = errors.New("gateway: upstream")

// fetchEntities asks the upstream for the fields of event's entity that
// fetches name, in one request, and merges them into event. headers are
// the subscribers' forwarded request fields.
func (u *upstream) fetchEntities(ctx context.Context, event any, fetches []*entityFetch, headers map[string]string) error {
	obj, ok := event.(map[string]any)
	if !ok {
		return nil // the projection reports it
	}
	f0 := fetches[0]
	rep := map[string]any{"__typename": f0.typeName}
	if tn, ok := obj["__typename"].(string); ok {
		rep["__typename"] = tn
	}
	for _, k := range f0.keys {
		v, ok := obj[k]
		if !ok {
			return fmt.Errorf("%w: the event lacks key field %q", errUpstream, k)
		}
		rep[k] = v
	}
	var q strings.Builder
	q.WriteString("query($representations: [_Any!]!) { _entities(representations: $representations) {")
	seen := map[string]bool{}
	for _, f := range fetches {
		if !seen[f.selection] {
			seen[f.selection] = true
			q.WriteString(" ... on " + f.typeName + " { " + f.selection + "}")
		}
	}
	q.WriteString(" } }")
	body, err := json.Marshal(map[string]any{"query": q.String(), "variables": map[string]any{"representations": []any{rep}}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", u.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/graphql-response+json, application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", errUpstream, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%w: %v", errUpstream, err)
	}
	var result struct {
		Data struct {
			Entities []any `json:"_entities"`
		} `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&result); err != nil {
		return fmt.Errorf("%w: status %d, %v", errUpstream, resp.StatusCode, err)
	}
	if len(result.Errors) > 0 {
		return fmt.Errorf("%w: %s", errUpstream, result.Errors[0].Message)
	}
	if len(result.Data.Entities) != 1 {
		return fmt.Errorf("%w: %d entities for one representation", errUpstream, len(result.Data.Entities))
	}
	if e, ok := result.Data.Entities[0].(map[string]any); ok {
		merge(obj, e)
	}
	return nil
}

// merge copies src's fields into dst, merging objects field by field.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				merge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// spliceError adds an error with msg at the front of an execution
// result's errors.
func spliceError(result []byte, msg string) []byte {
	e := appendJSONString([]byte(`{"message":`), msg)
	e = append(e, '}')
	out := make([]byte, 0, len(result)+len(e)+16)
	if rest, ok := bytes.CutPrefix(result, []byte(`{"errors":[`)); ok {
		out = append(out, `{"errors":[`...)
		out = append(out, e...)
		out = append(out, ',')
		return append(out, rest...)
	}
	out = append(out, `{"errors":[`...)
	out = append(out, e...)
	out = append(out, "],"...)
	return append(out, result[1:]...)
}
