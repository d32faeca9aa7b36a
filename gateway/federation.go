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
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Entities: a subscription's root type may be an entity of Apollo
// Federation (a type with @key), or a list of them. Its event then
// carries the key fields and the fields marked @external — as the entity
// of Cosmo's event-driven subgraph does — and every other field a
// subscription selects is resolved by the upstream GraphQL service
// (Config.Upstream) with Federation's _entities query:
//
//	query($representations: [_Any!]!) {
//	  _entities(representations: $representations) { ... on Employee { name } }
//	}
//
// One request per event serves every entity in it (a list's, each with a
// representation of its own) and every distinct selection set of the
// trigger: each asks for _entities under an alias of its own (e0, e1, ...),
// so that selections passing different arguments to a field do not
// conflict, and an error the upstream reports at one alias fails that
// selection only. A request the upstream refuses whole, as it does when it
// cannot validate one of the selections, is asked again in parts (see
// ask), so that one selection cannot fail the others. The fields each
// fetches are merged into a copy of the event, which is projected for the
// subscribers with that selection.

// entityFetch is what a subscription asks the upstream for.
type entityFetch struct {
	typeName  string
	keys      []string // the key's top-level fields, copied from the event
	lists     int      // the lists around the entity in the root field's type
	selection string   // the fields resolved upstream, printed; never ""
}

// planFetch returns the upstream part of proj's selection, or nil when the
// event carries all of it (or the root field's type is no entity). It is
// printed from the compiled projection, whose fields are merged by
// response key and whose fragments were each followed once, so that its
// text grows with the projection rather than with the document's spreads.
func planFetch(schema *ast.Schema, proj *projection, vars map[string]any) (*entityFetch, error) {
	ot, lists := proj.root.typ, 0
	for ot.kind == outList {
		ot, lists = ot.elem, lists+1
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
	p := &fetchPrinter{schema: schema, vars: vars}
	if err := p.printFields(fetched); err != nil {
		return nil, err
	}
	return &entityFetch{typeName: t.Name, keys: keys, lists: lists, selection: p.b.String()}, nil
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

// A fetchPrinter prints the fields a subscription fetches from the
// upstream, with the operation's coerced variables.
type fetchPrinter struct {
	schema *ast.Schema
	vars   map[string]any
	b      strings.Builder
}

// printFields prints fields, one selection set of a fetch (or the
// selection sets of fields of one name, merged), each name once and
// followed by a space: the name (results are merged into the event by
// name, so aliases are left to the projection), its arguments with
// variables substituted, and the selection sets of its fields, merged. A
// name whose fields take different arguments is an error, at any depth:
// the event holds one value by that name.
func (p *fetchPrinter) printFields(fields []*field) error {
	var names []string
	byName := make(map[string][]*field, len(fields))
	for _, f := range fields {
		if byName[f.name] == nil {
			names = append(names, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	for _, name := range names {
		same := byName[name]
		args, err := p.arguments(same[0])
		if err != nil {
			return err
		}
		for _, f := range same[1:] {
			other, err := p.arguments(f)
			if err != nil {
				return err
			}
			if other != args {
				return fmt.Errorf("gateway: field %q of %s is selected with different arguments where the event holds one value for it (under two response keys, or within two fields of one name); what the upstream resolves is merged into the event by field name", name, f.parent)
			}
		}
		p.b.WriteString(name)
		p.b.WriteString(args)
		if err := p.printSelection(same); err != nil {
			return err
		}
		p.b.WriteByte(' ')
	}
	return nil
}

// arguments returns f's arguments printed, in parentheses, or "" when it
// has none.
func (p *fetchPrinter) arguments(f *field) (string, error) {
	if len(f.args) == 0 {
		return "", nil
	}
	var defs ast.ArgumentDefinitionList
	if def := p.schema.Types[f.parent].Fields.ForName(f.name); def != nil {
		defs = def.Arguments
	}
	var b strings.Builder
	b.WriteByte('(')
	for i, arg := range f.args {
		if i > 0 {
			b.WriteByte(' ')
		}
		v, err := arg.Value.Value(p.vars)
		if err != nil {
			return "", err
		}
		var t *ast.Type
		if def := defs.ForName(arg.Name); def != nil {
			t = def.Type
		}
		b.WriteString(arg.Name + ": ")
		if err := p.printValue(&b, v, t); err != nil {
			return "", fmt.Errorf("gateway: argument %q of %s.%s: %w", arg.Name, f.parent, f.name, err)
		}
	}
	b.WriteByte(')')
	return b.String(), nil
}

// printSelection prints the selection of same, fields of one name and
// type, if it has one: their objects' fields, or each possible type's in
// an inline fragment, merged. An empty selection (all of it skipped) asks
// for __typename, as a selection set may not be empty.
func (p *fetchPrinter) printSelection(same []*field) error {
	types := make([]*outType, len(same))
	for i, f := range same {
		t := f.typ
		for t != nil && t.kind == outList {
			t = t.elem
		}
		types[i] = t
	}
	switch t := types[0]; {
	case t == nil:
		return nil
	case t.kind == outObject:
		var fields []*field
		for _, t := range types {
			fields = append(fields, t.object.fields...)
		}
		p.b.WriteString(" { ")
		if len(fields) == 0 {
			p.b.WriteString("__typename ")
		}
		if err := p.printFields(fields); err != nil {
			return err
		}
		p.b.WriteByte('}')
	case t.kind == outAbstract:
		var names []string
		byType := map[string][]*field{}
		for _, t := range types {
			for _, sel := range t.order {
				if len(sel.fields) == 0 {
					continue
				}
				if byType[sel.typeName] == nil {
					names = append(names, sel.typeName)
				}
				byType[sel.typeName] = append(byType[sel.typeName], sel.fields...)
			}
		}
		p.b.WriteString(" { ")
		if len(names) == 0 {
			p.b.WriteString("__typename ")
		}
		for _, name := range names {
			p.b.WriteString("... on " + name + " { ")
			if err := p.printFields(byType[name]); err != nil {
				return err
			}
			p.b.WriteString("} ")
		}
		p.b.WriteByte('}')
	}
	return nil
}

// printValue prints to b v, an argument's coerced value of type t (nil
// where the schema does not say), as a GraphQL literal: a string as
// appendGraphQLString writes it, an enum value (which must be one of the
// enum's) as an enum value, not a string, and a single value for a list
// as itself, which GraphQL's input coercion reads as a list of one. An
// object's keys must be names.
func (p *fetchPrinter) printValue(b *strings.Builder, v any, t *ast.Type) error {
	if v == nil {
		b.WriteString("null")
		return nil
	}
	if items, ok := v.([]any); ok {
		var elem *ast.Type // nil for a custom scalar's list
		if t != nil {
			elem = t.Elem
		}
		b.WriteByte('[')
		for i, x := range items {
			if i > 0 {
				b.WriteByte(' ')
			}
			if err := p.printValue(b, x, elem); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	if t != nil && t.Elem != nil {
		return p.printValue(b, v, t.Elem)
	}
	var def *ast.Definition
	if t != nil {
		def = p.schema.Types[t.NamedType]
	}
	switch v := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(v) {
			var ft *ast.Type
			if def != nil && def.Kind == ast.InputObject {
				fd := def.Fields.ForName(k)
				if fd == nil {
					return fmt.Errorf("%s has no field %q", def.Name, k)
				}
				ft = fd.Type
			} else if !isName(k) {
				return fmt.Errorf("the object key %q is not a GraphQL name", k)
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(k + ": ")
			if err := p.printValue(b, v[k], ft); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case string:
		if def != nil && def.Kind == ast.Enum {
			if def.EnumValues.ForName(v) == nil {
				return fmt.Errorf("%s is not a value of the enum %s", inspect(v), def.Name)
			}
			b.WriteString(v)
			return nil
		}
		b.Write(appendGraphQLString(nil, v))
		return nil
	}
	if def != nil && def.Kind == ast.Enum {
		return fmt.Errorf("%s is not a value of the enum %s", inspect(v), def.Name)
	}
	switch v := v.(type) {
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case int:
		b.WriteString(strconv.Itoa(v))
	case float64:
		if !isFinite(v) {
			return fmt.Errorf("%v is not a GraphQL number", v)
		}
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	case json.Number:
		if !isJSONNumber(string(v)) {
			return fmt.Errorf("%q is not a GraphQL number", string(v))
		}
		b.WriteString(v.String())
	default:
		b.Write(appendGraphQLString(nil, fmt.Sprint(v)))
	}
	return nil
}

// appendGraphQLString appends s as a GraphQL string literal: in JSON's
// syntax, which GraphQL's includes (quotes, backslashes and the C0
// control characters escaped: \", \n, \u001f), with DEL and the C1
// control characters escaped too (\u007f, \u0085), so that no control
// character is written as it is. GraphQL has none of Go's \x, \a or \U
// escapes.
func appendGraphQLString(b []byte, s string) []byte {
	quoted := appendJSONString(nil, s)
	for i := 0; i < len(quoted); i++ {
		switch c := quoted[i]; {
		case c == 0x7f:
			b = appendControlEscape(b, c)
		case c == 0xc2 && i+1 < len(quoted) && quoted[i+1] >= 0x80 && quoted[i+1] <= 0x9f: // U+0080 to U+009F
			i++
			b = appendControlEscape(b, quoted[i])
		default:
			b = append(b, c)
		}
	}
	return b
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

// fetchEntities asks the upstream, in one request (or more, as ask
// tells), for the fields of event's entities that each of fetches
// (distinct selections) names, and returns for each the event with those
// fields merged in; event itself is left as it is. The entities are
// event, or for a root field of a list type each object in it (at every
// level of nested lists), all in one _entities call. An error the
// upstream reports for one fetch fails that fetch; an error returned
// fails them all. headers are the subscribers' forwarded request fields.
func (u *upstream) fetchEntities(ctx context.Context, event any, fetches []*entityFetch, headers map[string]string) ([]fetched, error) {
	out := make([]fetched, len(fetches))
	for i := range out {
		out[i].event = event
	}
	f0 := fetches[0]
	objs := entityObjects(nil, event, f0.lists)
	if len(objs) == 0 {
		return out, nil // null, an empty list, or what the projection reports
	}
	reps := make([]any, len(objs))
	for i, obj := range objs {
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
		reps[i] = rep
	}
	answers, err := u.ask(ctx, reps, fetches, headers)
	if err != nil {
		return nil, err
	}
	for i, a := range answers {
		if a.err != nil {
			out[i].err = a.err
			continue
		}
		out[i].event = withEntities(event, f0.lists, func(j int, obj map[string]any) any {
			if e, ok := a.entities[j].(map[string]any); ok {
				return merged(obj, e)
			}
			return obj
		})
	}
	return out, nil
}

// An answer is what the upstream answered for one fetch: its entities, one
// per representation, or the error that kept them from it; neither when
// it said nothing of the fetch.
type answer struct {
	entities []any
	err      error
}

// ask asks the upstream, in one request, for each of fetches' selections
// of the entities reps, and returns each fetch's answer. The fetches of
// which the upstream says nothing (no entities under their alias, no
// error at it) are asked again without the others: all of them, when it
// says nothing of any (as for a query it refuses whole, with errors
// without a path and no data, for one selection it cannot validate), in
// two halves, so that a selection the upstream refuses fails its own
// fetch only, in at most 2n-1 requests for n fetches. A fetch asked alone
// of which it says nothing takes the error it reported for the whole
// request. An error returned (the upstream unreachable, its answer no
// GraphQL response or a server error) fails them all.
func (u *upstream) ask(ctx context.Context, reps []any, fetches []*entityFetch, headers map[string]string) ([]answer, error) {
	answers, whole, err := u.post(ctx, reps, fetches, headers)
	if err != nil {
		return nil, err
	}
	var silent []int // the fetches it said nothing of
	for i, a := range answers {
		if a.entities == nil && a.err == nil {
			silent = append(silent, i)
		}
	}
	switch {
	case len(silent) == 0:
		return answers, nil
	case len(fetches) == 1:
		if whole == nil {
			whole = fmt.Errorf("%w: no entities", errUpstream)
		}
		answers[0].err = whole
		return answers, nil
	}
	parts := [][]int{silent}
	if len(silent) == len(fetches) {
		parts = [][]int{silent[:len(silent)/2], silent[len(silent)/2:]}
	}
	for _, part := range parts {
		again := make([]*entityFetch, len(part))
		for j, i := range part {
			again[j] = fetches[i]
		}
		got, err := u.ask(ctx, reps, again, headers)
		for j, i := range part {
			if err != nil {
				answers[i].err = err
			} else {
				answers[i] = got[j]
			}
		}
	}
	return answers, nil
}

// post sends one request for fetches' selections of the entities reps,
// each under an alias of its own, and returns what the upstream answered
// for each fetch (at its alias), and the first error it reported for the
// whole request (without a path, or at no fetch's alias), if any.
func (u *upstream) post(ctx context.Context, reps []any, fetches []*entityFetch, headers map[string]string) (answers []answer, whole, err error) {
	var q strings.Builder
	q.WriteString("query($representations: [_Any!]!) {")
	for i, f := range fetches {
		q.WriteString(" " + entitiesAlias(i) + ": _entities(representations: $representations) { ... on " + f.typeName + " { " + f.selection + "} }")
	}
	q.WriteString(" }")
	body, err := json.Marshal(map[string]any{"query": q.String(), "variables": map[string]any{"representations": reps}})
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", u.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/graphql-response+json, application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := u.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errUpstream, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errUpstream, err)
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
		return nil, nil, fmt.Errorf("%w: status %d, %v", errUpstream, resp.StatusCode, err)
	}
	answers = make([]answer, len(fetches))
	for _, e := range result.Errors {
		at := -1 // the fetch the error is at
		if len(e.Path) > 0 {
			alias, _ := e.Path[0].(string)
			if i, err := strconv.Atoi(strings.TrimPrefix(alias, "e")); err == nil && i >= 0 && i < len(answers) && entitiesAlias(i) == alias {
				at = i
			}
		}
		err := fmt.Errorf("%w: %s", errUpstream, e.Message)
		switch {
		case at >= 0 && answers[at].err == nil:
			answers[at].err = err
		case at < 0 && whole == nil:
			whole = err
		}
	}
	if resp.StatusCode >= 500 {
		if whole == nil {
			whole = fmt.Errorf("%w: status %d", errUpstream, resp.StatusCode)
		}
		return nil, nil, whole
	}
	for i := range answers {
		entities, ok := result.Data[entitiesAlias(i)]
		switch {
		case answers[i].err != nil || !ok || entities == nil:
		case len(entities) != len(reps):
			answers[i].err = fmt.Errorf("%w: %d entities for %d representations", errUpstream, len(entities), len(reps))
		default:
			answers[i].entities = entities
		}
	}
	return answers, whole, nil
}

// entityObjects appends to objs the objects of v, a value of a type with
// lists levels of lists around an entity type, in order: v itself, or
// each object in its lists. Nulls, and values of other kinds (which the
// projection reports), are passed over.
func entityObjects(objs []map[string]any, v any, lists int) []map[string]any {
	if lists == 0 {
		if obj, ok := v.(map[string]any); ok {
			objs = append(objs, obj)
		}
		return objs
	}
	items, _ := v.([]any)
	for _, item := range items {
		objs = entityObjects(objs, item, lists-1)
	}
	return objs
}

// withEntities returns v, as for entityObjects, with each of its objects
// replaced by what with returns for it and its index among them; the lists
// are new, v is left as it is.
func withEntities(v any, lists int, with func(int, map[string]any) any) any {
	n := 0
	var walk func(v any, lists int) any
	walk = func(v any, lists int) any {
		if lists == 0 {
			if obj, ok := v.(map[string]any); ok {
				n++
				return with(n-1, obj)
			}
			return v
		}
		items, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(items))
		for i, item := range items {
			out[i] = walk(item, lists-1)
		}
		return out
	}
	return walk(v, lists)
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
