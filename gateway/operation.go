package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// request is a GraphQL request: the payload of a subscribe (or start)
// message, or the body of POST /graphql.
type request struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
}

// decodeRequest decodes a request from a JSON object whose members are
// named exactly as GraphQL over HTTP and graphql-ws name them: "query",
// "operationName", "variables" and "extensions" (encoding/json would take
// "Query" or "VARIABLES" for them too). Numbers stay as written
// (json.Number). A member of the wrong type is an error.
func decodeRequest(data []byte) (*request, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	return requestFrom(fields)
}

// requestFrom is decodeRequest of an object already split into its
// members.
func requestFrom(fields map[string]json.RawMessage) (*request, error) {
	r := &request{}
	member := func(name string, v any) error {
		raw := fields[name]
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(v); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		return nil
	}
	for _, err := range []error{
		member("query", &r.Query),
		member("operationName", &r.OperationName),
		member("variables", &r.Variables),
		member("extensions", &r.Extensions),
	} {
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

// operation is a validated request, ready to run: its root field, the
// field's event binding and arguments, and the projection of events onto
// its selection.
type operation struct {
	kind ast.Operation
	// result is a query's execution result: only introspection is
	// served, whose answer depends on nothing but the request.
	result []byte
	root   *ast.Field
	bind   *binding
	args   map[string]any
	proj   *projection
	// fetch is the part of a subscription's selection resolved by the
	// upstream, or nil.
	fetch *entityFetch

	// A subscription's trigger: its provider, rendered subjects and
	// filter, the key that names the trigger (without forwarded header
	// fields), and the key of its group within it.
	provider providerKey
	subjects []string
	flt      *filter
	trigger  string
	group    string
}

// cache is a bounded map from a request's text to what was made of it:
// the clients of one application send the same few requests, so each is
// parsed, validated and compiled once and shared. When full it is emptied.
// Any goroutine may use it.
type cache[V any] struct {
	mu  sync.Mutex
	m   map[string]V
	max int
}

func (c *cache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok
}

func (c *cache[V]) put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[string]V)
	}
	c.m[key] = v
}

// parse returns query parsed and validated: from docs, or now (and then
// kept there).
func parse(docs *cache[*parsed], schema *ast.Schema, query string, maxFields, maxDepth int) *parsed {
	if p, ok := docs.get(query); ok {
		return p
	}
	p := &parsed{}
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		p.errs = gqlerror.List{asGQLError(err)}
	} else if err := checkLimits(doc, maxFields, maxDepth); err != nil {
		p.errs = gqlerror.List{err}
	} else if errs := validator.ValidateWithRules(schema, doc, validationRules); len(errs) > 0 {
		p.errs = errs
	} else if err := singleRootField(doc); err != nil {
		p.errs = gqlerror.List{err}
	} else {
		p.doc = doc
	}
	docs.put(query, p)
	return p
}

// validationRules are the specification's rules as gqlparser has them,
// and the 32-bit range of Int literals, which its rule for values of the
// correct type checks only for literals past 64 bits.
var validationRules = func() *rules.Rules {
	r := rules.NewDefaultRules()
	r.AddRule("IntLiteralsWithin32Bits", func(observers *core.Events, addError core.AddErrFunc) {
		observers.OnValue(func(_ *core.Walker, v *ast.Value) {
			if v.Kind != ast.IntValue || v.Definition == nil || v.Definition.Kind != ast.Scalar || v.Definition.Name != "Int" {
				return
			}
			if _, err := strconv.ParseInt(v.Raw, 10, 64); err != nil {
				return // past 64 bits: the rule for values of the correct type says so
			}
			if _, err := strconv.ParseInt(v.Raw, 10, 32); err != nil {
				addError(core.Message("Int cannot represent non 32-bit signed integer value: %s", v.String()), core.At(v.Position))
			}
		})
	})
	return r
}()

type parsed struct {
	doc  *ast.QueryDocument
	errs gqlerror.List
}

func asGQLError(err error) *gqlerror.Error {
	if e, ok := err.(*gqlerror.Error); ok {
		return e
	}
	return gqlerror.Wrap(err)
}

// singleRootField checks that each subscription selects one root field by
// response key. gqlparser's rule compares field names, so "a: f b: f" gets
// past it; the GraphQL specification counts response keys (aliases).
func singleRootField(doc *ast.QueryDocument) *gqlerror.Error {
	for _, op := range doc.Operations {
		if op.Operation != ast.Subscription {
			continue
		}
		keys := map[string]bool{}
		var second *ast.Field
		var walk func(ast.SelectionSet, map[string]bool)
		walk = func(set ast.SelectionSet, seen map[string]bool) {
			for _, sel := range set {
				switch sel := sel.(type) {
				case *ast.Field:
					if !keys[sel.Alias] {
						keys[sel.Alias] = true
						if len(keys) == 2 {
							second = sel
						}
					}
				case *ast.InlineFragment:
					walk(sel.SelectionSet, seen)
				case *ast.FragmentSpread:
					if sel.Definition != nil && !seen[sel.Name] {
						seen[sel.Name] = true
						walk(sel.Definition.SelectionSet, seen)
					}
				}
			}
		}
		walk(op.SelectionSet, map[string]bool{})
		if second != nil {
			name := "Anonymous Subscription"
			if op.Name != "" {
				name = "Subscription " + strconv.Quote(op.Name)
			}
			return gqlerror.ErrorPosf(second.Position, "%s must select only one top level field.", name)
		}
	}
	return nil
}

// prepareQuery makes a query an operation: one of introspection fields
// alone is answered at once; others are refused, as the gateway has no
// resolvers of its own.
func (g *Gateway) prepareQuery(op *ast.OperationDefinition, vars map[string]any) (*operation, gqlerror.List) {
	all, schema, err := rootIntrospection(op.SelectionSet, g.schema.ast.Query.Name, vars)
	switch {
	case err != nil:
	case !all:
		err = gqlerror.Errorf("Queries are not served, but for introspection: this gateway serves subscriptions, and mutations that publish events.")
	case schema && g.cfg.NoIntrospection:
		err = gqlerror.Errorf("Introspection is disabled on this gateway.")
	}
	var result []byte
	if err == nil {
		result, err = introspect(g.schema.ast, op, vars)
	}
	if err != nil {
		return nil, gqlerror.List{asGQLError(err)}
	}
	return &operation{kind: ast.Query, result: result}, nil
}

// prepare validates r against the schema and makes it an operation.
func (g *Gateway) prepare(r *request) (*operation, gqlerror.List) {
	p := parse(&g.docs, g.schema.ast, r.Query, g.cfg.MaxFields, g.cfg.MaxDepth)
	if p.errs != nil {
		return nil, p.errs
	}
	var op *ast.OperationDefinition
	switch {
	case r.OperationName != "":
		op = p.doc.Operations.ForName(r.OperationName)
		if op == nil {
			return nil, gqlerror.List{gqlerror.Errorf("Unknown operation named %q.", r.OperationName)}
		}
	case len(p.doc.Operations) == 1:
		op = p.doc.Operations[0]
	default:
		return nil, gqlerror.List{gqlerror.Errorf("Must provide operation name if query contains multiple operations.")}
	}
	vars, errs := coerceVariables(g.schema.ast, op, normalizeVariables(r.Variables))
	if errs != nil {
		return nil, errs
	}
	var rootType *ast.Definition
	var binds map[string]*binding
	var notOne string
	if op.Operation == ast.Query {
		return g.prepareQuery(op, vars)
	}
	switch op.Operation {
	case ast.Subscription:
		rootType, binds, notOne = g.schema.ast.Subscription, g.schema.subs, "A subscription must select one root field."
	case ast.Mutation:
		rootType, binds, notOne = g.schema.ast.Mutation, g.schema.pubs, "A mutation here must select one root field: each publishes one event."
	}
	keys, err := rootFields(g.schema.ast, rootType, op.SelectionSet, vars)
	if err != nil {
		return nil, gqlerror.List{asGQLError(err)}
	}
	if len(keys) != 1 {
		return nil, gqlerror.List{gqlerror.Errorf("%s", notOne)}
	}
	nodes := keys[0]
	o := &operation{kind: op.Operation, root: nodes[0], bind: binds[nodes[0].Name]}
	if o.bind == nil {
		return nil, gqlerror.List{gqlerror.ErrorPosf(o.root.Position, "Field %q has no event binding.", o.root.Name)}
	}
	o.args = argumentValues(g.schema.ast, o.root, vars)
	proj, perr := compileProjection(g.schema.ast, nodes, vars)
	if perr != nil {
		return nil, gqlerror.List{asGQLError(perr)}
	}
	o.proj = proj
	if o.kind != ast.Subscription {
		return o, nil
	}
	if g.upstream != nil {
		f, err := planFetch(g.schema.ast, proj, vars)
		if err != nil {
			return nil, gqlerror.List{asGQLError(err)}
		}
		o.fetch = f
	}
	b := o.bind
	o.provider = providerKey{b.kind, b.provider}
	for _, t := range b.subjects {
		subj, err := t.render(o.args)
		if err != nil {
			return nil, gqlerror.List{gqlerror.ErrorPosf(o.root.Position, "%s", err.Error())}
		}
		// Templates that render alike name one subject, subscribed to
		// once: twice, NATS would deliver each event twice.
		if !slices.Contains(o.subjects, subj) {
			o.subjects = append(o.subjects, subj)
		}
	}
	if b.filter != nil {
		f, err := compileFilter(b.filter, o.args)
		if err != nil {
			return nil, gqlerror.List{gqlerror.ErrorPosf(o.root.Position, "%s", err.Error())}
		}
		o.flt = f
	}
	o.trigger = triggerKey(o.provider, o.root.Name, o.subjects, b.stream, nil)
	o.group = o.proj.key() + "\x00" + o.flt.key()
	if o.fetch != nil {
		// The projection's key leaves arguments out; what is fetched
		// depends on them.
		o.group += "\x00" + o.fetch.selection
	}
	return o, nil
}

// rootFields returns the root field nodes of an operation whose root type
// is rootType, grouped by response key in the order keys first appear:
// the spec's CollectFields, which follows each fragment once and applies
// @skip and @include. Every node of a key has the same name and arguments
// (validation requires it); their selection sets are merged.
func rootFields(schema *ast.Schema, rootType *ast.Definition, set ast.SelectionSet, vars map[string]any) ([][]*ast.Field, error) {
	c := &compiler{schema: schema, vars: vars}
	g := fieldGroups{byKey: map[string]int{}}
	if err := c.collectFields(rootType, set, map[string]bool{}, &g); err != nil {
		return nil, err
	}
	return g.groups, nil
}

// normalizeVariables turns variables into the values coerceVariables
// reads, in place: the json.Numbers of variables decoded with UseNumber
// into int64 (where they are integers that fit) and float64 values, and
// lists of any element type into []any.
func normalizeVariables(v map[string]any) map[string]any {
	for k, x := range v {
		v[k] = normalizeValue(x)
	}
	return v
}

func normalizeValue(x any) any {
	switch x := x.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		return normalizeVariables(x)
	case []any:
		for i := range x {
			x[i] = normalizeValue(x[i])
		}
	default:
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.Slice {
			list := make([]any, rv.Len())
			for i := range list {
				list[i] = normalizeValue(rv.Index(i).Interface())
			}
			return list
		}
	}
	return x
}
