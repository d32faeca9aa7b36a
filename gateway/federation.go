package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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
// One request per event serves every distinct selection set of the
// trigger: each asks for _entities under an alias of its own (e0, e1, ...),
// so that selections passing different arguments to a field do not
// conflict, and an error the upstream reports at one alias fails that
// selection only. The fields each fetches are merged into a copy of the
// event, which is projected for the subscribers with that selection.

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
// variables substituted, and its selection. A field selected under two
// response keys with different arguments is an error: the event holds one
// value by that name.
func printFields(b *strings.Builder, fields []*field, vars map[string]any) error {
	printed := make(map[string]string, len(fields)) // each name's arguments
	for _, f := range fields {
		var a strings.Builder
		if len(f.args) > 0 {
			a.WriteByte('(')
			for i, arg := range f.args {
				if i > 0 {
					a.WriteByte(' ')
				}
				v, err := arg.Value.Value(vars)
				if err != nil {
					return err
				}
				a.WriteString(arg.Name + ": ")
				printValue(&a, v)
			}
			a.WriteByte(')')
		}
		if prev, ok := printed[f.name]; ok && prev != a.String() {
			return fmt.Errorf("gateway: field %q of %s is selected with different arguments under two response keys; what the upstream resolves is merged into the event by field name, which holds one value", f.name, f.parent)
		}
		printed[f.name] = a.String()
		b.WriteString(f.name)
		b.WriteString(a.String())
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

// fetched is what one of a trigger's fetches made of an event: the event
// with the fields fetched merged in, or the event as it came with the
// error that kept them from it.
type fetched struct {
	event any
	err   error
}

// entitiesAlias is the response key of the _entities field of the i-th
// fetch of a request.
func entitiesAlias(i int) string { return "e" + strconv.Itoa(i) }

// fetchEntities asks the upstream, in one request, for the fields of
// event's entity that each of fetches (distinct selections) names, and
// returns for each the event with those fields merged in; event itself is
// left as it is. An error the upstream reports at one fetch's alias fails
// that fetch; an error returned fails them all. headers are the
// subscribers' forwarded request fields.
func (u *upstream) fetchEntities(ctx context.Context, event any, fetches []*entityFetch, headers map[string]string) ([]fetched, error) {
	out := make([]fetched, len(fetches))
	for i := range out {
		out[i].event = event
	}
	obj, ok := event.(map[string]any)
	if !ok {
		return out, nil // the projection reports it
	}
	f0 := fetches[0]
	rep := map[string]any{"__typename": f0.typeName}
	if tn, ok := obj["__typename"].(string); ok {
		rep["__typename"] = tn
	}
	for _, k := range f0.keys {
		v, ok := obj[k]
		if !ok {
			return nil, fmt.Errorf("%w: the event lacks key field %q", errUpstream, k)
		}
		rep[k] = v
	}
	var q strings.Builder
	q.WriteString("query($representations: [_Any!]!) {")
	for i, f := range fetches {
		q.WriteString(" " + entitiesAlias(i) + ": _entities(representations: $representations) { ... on " + f.typeName + " { " + f.selection + "} }")
	}
	q.WriteString(" }")
	body, err := json.Marshal(map[string]any{"query": q.String(), "variables": map[string]any{"representations": []any{rep}}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", u.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/graphql-response+json, application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUpstream, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUpstream, err)
	}
	var result struct {
		Data   map[string][]any `json:"data"`
		Errors []struct {
			Message string `json:"message"`
			Path    []any  `json:"path"`
		} `json:"errors"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&result); err != nil {
		return nil, fmt.Errorf("%w: status %d, %v", errUpstream, resp.StatusCode, err)
	}
	for _, e := range result.Errors {
		var at string // the alias the error is at; "" for the whole request
		if len(e.Path) > 0 {
			at, _ = e.Path[0].(string)
		}
		for i := range out {
			if out[i].err == nil && (at == "" || at == entitiesAlias(i)) {
				out[i].err = fmt.Errorf("%w: %s", errUpstream, e.Message)
			}
		}
	}
	for i := range out {
		if out[i].err != nil {
			continue
		}
		entities := result.Data[entitiesAlias(i)]
		if len(entities) != 1 {
			out[i].err = fmt.Errorf("%w: %d entities for one representation", errUpstream, len(entities))
			continue
		}
		if e, ok := entities[0].(map[string]any); ok {
			out[i].event = merged(obj, e)
		}
	}
	return out, nil
}

// merged returns dst with src's fields added, objects merged field by
// field, in new maps: dst and the maps in it are left as they are.
func merged(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	maps.Copy(out, dst)
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				out[k] = merged(dv, sv)
				continue
			}
		}
		out[k] = v
	}
	return out
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
