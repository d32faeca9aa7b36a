package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/ast"
)

// A projection writes events as GraphQL execution results for one
// subscription's selection set. Events are the root field's value, as
// Cosmo's event-driven subscriptions deliver them: a JSON object decoded with
// encoding/json's Decoder.UseNumber. Value completion follows the GraphQL
// spec ("Value Completion", "Handling Field Errors") the way graphql-js
// executes it, with these choices where an event is not what the schema
// says:
//
//   - A field missing from an event object is null.
//   - The concrete type of an interface or union value is the object's
//     "__typename"; without one, graphql-js's default type resolver fails and
//     so does this, with graphql-js's messages.
//   - A value that is not a JSON object where an object type is expected is
//     a field error worded as graphql-js words it for an object type whose
//     isTypeOf rejects the value: `Expected value of type "Employee" but
//     got: 5.` (without isTypeOf graphql-js would read every field of it as
//     null).
//   - Leaves are serialized as graphql-js's serialize functions do (Int from
//     booleans and numeric strings, String from numbers and booleans, ...).
//     Numbers keep the text they came with where serializing does not change
//     their value, and integers written to String and ID keep all their
//     digits where graphql-js would round them past 2^53.
//   - Custom scalars are passed through as JSON, object keys sorted.
//
// A projection is immutable once compiled: multiple goroutines may call
// appendResult on one projection simultaneously.
type projection struct {
	root *field
	text string
}

// A field is one response key of a compiled selection set, with the field
// nodes merged under it.
type field struct {
	name      string           // the field's name: the key it reads from the event object
	args      ast.ArgumentList // its arguments, the same in every node
	respKey   string           // its response key: the alias, or the name
	jsonKey   string           // respKey as a JSON object key with its colon
	parent    string           // the object type the field is selected on, for messages
	typ       *outType         // nil for __typename
	locations string           // the field nodes' locations as a JSON array, or ""
	locKey    string           // the same, as key text
}

// An outKind is what a compiled output type writes.
type outKind uint8

// The output kinds: the five built-in scalars, enums, custom scalars,
// objects, interfaces and unions, and lists.
const (
	outInt outKind = iota
	outFloat
	outString
	outBoolean
	outID
	outEnum
	outCustom
	outObject
	outAbstract
	outList
)

// An outType is a field's type compiled with its selection set.
type outType struct {
	kind     outKind
	nonNull  bool
	name     string                // the named type's name (not for lists)
	elem     *outType              // outList: the item type
	enum     map[string]struct{}   // outEnum: the values
	object   *selection            // outObject
	possible map[string]*selection // outAbstract: by concrete type name
	order    []*selection          // outAbstract: possible in schema order
	schema   *ast.Schema           // outAbstract: for error messages
}

// A selection is a selection set collected for one object type, fragments
// inlined, @skip and @include applied, fields merged by response key.
type selection struct {
	typeName     string
	typeNameJSON string // typeName as a JSON string, for __typename
	fields       []*field
}

// Limits that keep a hostile operation from costing much to compile.
const (
	maxProjectionDepth  = 128
	maxProjectionFields = 1 << 16
)

// compileProjection compiles roots (the nodes of the subscription's single
// root field, merged under its response key) for events of the field's
// type, given the operation's coerced variables (for @skip and @include).
// A root field that @skip or @include leaves out is an error. The
// operation must have been validated against schema, so that fragment
// spreads have their Definition and the nodes agree on name and arguments.
func compileProjection(schema *ast.Schema, roots []*ast.Field, vars map[string]any) (*projection, error) {
	c := &compiler{schema: schema, vars: vars, enums: map[string]map[string]struct{}{}}
	parent := roots[0].ObjectDefinition
	if parent == nil {
		parent = schema.Subscription
	}
	if parent == nil {
		return nil, fmt.Errorf("gateway: the schema has no subscription type")
	}
	for _, root := range roots {
		include, err := c.included(root.Directives)
		if err != nil {
			return nil, err
		}
		if !include {
			return nil, fmt.Errorf("gateway: the subscription's root field %q is left out by @skip or @include", root.Name)
		}
	}
	f, err := c.compileField(parent, roots, 0)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(parent.Name)
	b.WriteByte('.')
	writeFieldKey(&b, f)
	return &projection{root: f, text: b.String()}, nil
}

// key returns the canonical text of the projection's shape: response keys
// in order with the fields and types they come from, fragments inlined,
// @skip and @include applied, and the locations errors would name. Two
// projections of one schema with equal keys write identical output for
// every event.
func (p *projection) key() string { return p.text }

// A compiler holds what compiling one projection needs.
type compiler struct {
	schema *ast.Schema
	vars   map[string]any
	enums  map[string]map[string]struct{}
	fields int
}

// compileField compiles the field nodes merged under one response key,
// selected on the object type parent.
func (c *compiler) compileField(parent *ast.Definition, nodes []*ast.Field, depth int) (*field, error) {
	if depth > maxProjectionDepth {
		return nil, fmt.Errorf("gateway: selection nested more than %d levels", maxProjectionDepth)
	}
	if c.fields++; c.fields > maxProjectionFields {
		return nil, fmt.Errorf("gateway: selection expands to more than %d fields", maxProjectionFields)
	}
	first := nodes[0]
	f := &field{name: first.Name, args: first.Arguments, respKey: responseKey(first), parent: parent.Name}
	f.jsonKey = string(appendJSONString(nil, f.respKey)) + ":"
	f.locations, f.locKey = fieldLocations(nodes)
	if first.Name == "__typename" {
		return f, nil
	}
	def := parent.Fields.ForName(first.Name)
	if def == nil {
		return nil, fmt.Errorf("gateway: type %s has no field %q", parent.Name, first.Name)
	}
	var sets []ast.SelectionSet
	for _, n := range nodes {
		if len(n.SelectionSet) > 0 {
			sets = append(sets, n.SelectionSet)
		}
	}
	typ, err := c.compileType(def.Type, sets, depth)
	if err != nil {
		return nil, err
	}
	f.typ = typ
	return f, nil
}

// responseKey returns the field's alias, or its name when it has none.
func responseKey(f *ast.Field) string {
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}

// fieldLocations returns the nodes' locations as a JSON array, as graphql-js
// lists them in an error, and as key text.
func fieldLocations(nodes []*ast.Field) (jsonText, keyText string) {
	var j, k []byte
	for _, n := range nodes {
		if n.Position == nil {
			continue
		}
		if j == nil {
			j = append(j, '[')
		} else {
			j = append(j, ',')
			k = append(k, ',')
		}
		j = append(j, `{"line":`...)
		j = strconv.AppendInt(j, int64(n.Position.Line), 10)
		j = append(j, `,"column":`...)
		j = strconv.AppendInt(j, int64(n.Position.Column), 10)
		j = append(j, '}')
		k = strconv.AppendInt(k, int64(n.Position.Line), 10)
		k = append(k, ':')
		k = strconv.AppendInt(k, int64(n.Position.Column), 10)
	}
	if j == nil {
		return "", ""
	}
	return string(append(j, ']')), string(k)
}

// compileType compiles t for the merged selection sets of its field.
func (c *compiler) compileType(t *ast.Type, sets []ast.SelectionSet, depth int) (*outType, error) {
	ot := &outType{nonNull: t.NonNull}
	if t.Elem != nil {
		elem, err := c.compileType(t.Elem, sets, depth)
		if err != nil {
			return nil, err
		}
		ot.kind, ot.elem = outList, elem
		return ot, nil
	}
	def := c.schema.Types[t.NamedType]
	if def == nil {
		return nil, fmt.Errorf("gateway: unknown type %q", t.NamedType)
	}
	ot.name = def.Name
	switch def.Kind {
	case ast.Scalar:
		switch def.Name {
		case "Int":
			ot.kind = outInt
		case "Float":
			ot.kind = outFloat
		case "String":
			ot.kind = outString
		case "Boolean":
			ot.kind = outBoolean
		case "ID":
			ot.kind = outID
		default:
			ot.kind = outCustom
		}
	case ast.Enum:
		ot.kind = outEnum
		ot.enum = c.enums[def.Name]
		if ot.enum == nil {
			ot.enum = make(map[string]struct{}, len(def.EnumValues))
			for _, v := range def.EnumValues {
				ot.enum[v.Name] = struct{}{}
			}
			c.enums[def.Name] = ot.enum
		}
	case ast.Object:
		sel, err := c.compileSelection(def, sets, depth)
		if err != nil {
			return nil, err
		}
		ot.kind, ot.object = outObject, sel
	case ast.Interface, ast.Union:
		ot.kind, ot.schema = outAbstract, c.schema
		ot.possible = map[string]*selection{}
		for _, pt := range c.schema.GetPossibleTypes(def) {
			if pt.Kind != ast.Object || ot.possible[pt.Name] != nil {
				continue
			}
			sel, err := c.compileSelection(pt, sets, depth)
			if err != nil {
				return nil, err
			}
			ot.possible[pt.Name] = sel
			ot.order = append(ot.order, sel)
		}
	default:
		return nil, fmt.Errorf("gateway: %s is not an output type", def.Name)
	}
	return ot, nil
}

// compileSelection collects the selection sets for the object type obj, as
// the spec's CollectFields does, and compiles each response key's fields.
func (c *compiler) compileSelection(obj *ast.Definition, sets []ast.SelectionSet, depth int) (*selection, error) {
	g := fieldGroups{byKey: map[string]int{}}
	visited := map[string]bool{}
	for _, set := range sets {
		if err := c.collectFields(obj, set, visited, &g); err != nil {
			return nil, err
		}
	}
	sel := &selection{typeName: obj.Name, typeNameJSON: string(appendJSONString(nil, obj.Name))}
	for _, nodes := range g.groups {
		f, err := c.compileField(obj, nodes, depth+1)
		if err != nil {
			return nil, err
		}
		sel.fields = append(sel.fields, f)
	}
	return sel, nil
}

// fieldGroups are field nodes grouped by response key, in the order keys
// first appear.
type fieldGroups struct {
	byKey  map[string]int
	groups [][]*ast.Field
}

// collectFields adds the fields of set that apply to the object type obj to
// g: CollectFields from the spec's "Executing Selection Sets".
func (c *compiler) collectFields(obj *ast.Definition, set ast.SelectionSet, visited map[string]bool, g *fieldGroups) error {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			include, err := c.included(s.Directives)
			if err != nil {
				return err
			}
			if !include {
				continue
			}
			key := responseKey(s)
			if i, ok := g.byKey[key]; ok {
				g.groups[i] = append(g.groups[i], s)
			} else {
				g.byKey[key] = len(g.groups)
				g.groups = append(g.groups, []*ast.Field{s})
			}
		case *ast.InlineFragment:
			include, err := c.included(s.Directives)
			if err != nil {
				return err
			}
			if !include || !c.applies(s.TypeCondition, obj) {
				continue
			}
			if err := c.collectFields(obj, s.SelectionSet, visited, g); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			include, err := c.included(s.Directives)
			if err != nil {
				return err
			}
			if visited[s.Name] || !include {
				continue
			}
			visited[s.Name] = true
			if s.Definition == nil {
				return fmt.Errorf("gateway: fragment %q is not defined (was the operation validated?)", s.Name)
			}
			if !c.applies(s.Definition.TypeCondition, obj) {
				continue
			}
			if err := c.collectFields(obj, s.Definition.SelectionSet, visited, g); err != nil {
				return err
			}
		}
	}
	return nil
}

// applies reports whether a fragment with the type condition cond applies
// to the object type obj: DoesFragmentTypeApply.
func (c *compiler) applies(cond string, obj *ast.Definition) bool {
	if cond == "" || cond == obj.Name {
		return true
	}
	def := c.schema.Types[cond]
	if def == nil || def.Kind != ast.Interface && def.Kind != ast.Union {
		return false
	}
	return slices.ContainsFunc(c.schema.GetPossibleTypes(def), func(d *ast.Definition) bool { return d.Name == obj.Name })
}

// included reports whether @skip and @include let a selection through.
func (c *compiler) included(dirs ast.DirectiveList) (bool, error) { return includedBy(dirs, c.vars) }

// includedBy reports whether @skip and @include, with vars, let a
// selection through.
func includedBy(dirs ast.DirectiveList, vars map[string]any) (bool, error) {
	if d := dirs.ForName("skip"); d != nil {
		skip, err := directiveIf(d, vars)
		if err != nil || skip {
			return false, err
		}
	}
	if d := dirs.ForName("include"); d != nil {
		return directiveIf(d, vars)
	}
	return true, nil
}

// directiveIf returns the value of the directive's "if" argument.
func directiveIf(d *ast.Directive, vars map[string]any) (bool, error) {
	arg := d.Arguments.ForName("if")
	if arg == nil {
		return false, fmt.Errorf("gateway: @%s has no \"if\" argument", d.Name)
	}
	v, err := arg.Value.Value(vars)
	if err != nil {
		return false, fmt.Errorf("gateway: @%s(if: %s): %w", d.Name, arg.Value.String(), err)
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("gateway: @%s(if: %s) is not a Boolean", d.Name, arg.Value.String())
	}
	return b, nil
}

// writeFieldKey writes f's key text: respKey:name@locations followed by its
// type.
func writeFieldKey(b *strings.Builder, f *field) {
	b.WriteString(f.respKey)
	b.WriteByte(':')
	b.WriteString(f.name)
	b.WriteByte('@')
	b.WriteString(f.locKey)
	if f.typ != nil {
		b.WriteByte(' ')
		writeTypeKey(b, f.typ)
	}
}

// writeTypeKey writes t as key text: Int!, [Employee{...}], Node<A{...}|B{...}>.
func writeTypeKey(b *strings.Builder, t *outType) {
	switch t.kind {
	case outList:
		b.WriteByte('[')
		writeTypeKey(b, t.elem)
		b.WriteByte(']')
	case outObject:
		writeSelectionKey(b, t.object)
	case outAbstract:
		b.WriteString(t.name)
		b.WriteByte('<')
		for i, sel := range t.order {
			if i > 0 {
				b.WriteByte('|')
			}
			writeSelectionKey(b, sel)
		}
		b.WriteByte('>')
	default:
		b.WriteString(t.name)
	}
	if t.nonNull {
		b.WriteByte('!')
	}
}

// writeSelectionKey writes sel as key text: Type{field field ...}.
func writeSelectionKey(b *strings.Builder, sel *selection) {
	b.WriteString(sel.typeName)
	b.WriteByte('{')
	for i, f := range sel.fields {
		if i > 0 {
			b.WriteByte(' ')
		}
		writeFieldKey(b, f)
	}
	b.WriteByte('}')
}

// appendResult appends event, completed as the root field's value, to dst
// as a GraphQL execution result in compact JSON: {"data":{"<alias>":...}},
// or {"errors":[...],"data":...} when field errors occurred, each error with
// its message, locations and path. A null reaching the non-null root field
// makes "data" null. Without field errors it allocates nothing beyond
// growing dst.
func (p *projection) appendResult(dst []byte, event any) []byte {
	var ex execution
	start := len(dst)
	dst = append(dst, `{"data":`...)
	dataStart := len(dst)
	dst = append(dst, '{')
	dst = append(dst, p.root.jsonKey...)
	dst, ok := ex.complete(dst, p.root.typ, p.root, event)
	ex.addStep(0, p.root.respKey, -1)
	if ok {
		dst = append(dst, '}')
	} else {
		dst = append(dst[:dataStart], "null"...)
	}
	dst = append(dst, '}')
	if len(ex.errs) == 0 {
		return dst
	}
	data := slices.Clone(dst[dataStart : len(dst)-1])
	dst = append(dst[:start], `{"errors":[`...)
	for i := range ex.errs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = ex.errs[i].appendJSON(dst)
	}
	dst = append(dst, `],"data":`...)
	dst = append(dst, data...)
	return append(dst, '}')
}

// An execution is the state of one appendResult call: the field errors so
// far.
type execution struct {
	errs []fieldError
}

// A fieldError is a field error with the field it happened in and its path.
// The path is built while the completion unwinds: each level appends its own
// step, so that the happy path keeps no path at all.
type fieldError struct {
	msg  string
	f    *field
	path []pathStep // innermost first
}

// A pathStep is one step of a response path: a response key, or a list
// index when index >= 0.
type pathStep struct {
	key   string
	index int
}

// fieldError records a field error, for the field f, at the value being
// completed; the callers above add the path to it.
func (ex *execution) fieldError(f *field, msg string) {
	ex.errs = append(ex.errs, fieldError{msg: msg, f: f})
}

// addStep adds a step to the paths of the errors recorded since the first
// n: they happened in the value at that step.
func (ex *execution) addStep(n int, key string, index int) {
	for i := n; i < len(ex.errs); i++ {
		ex.errs[i].path = append(ex.errs[i].path, pathStep{key: key, index: index})
	}
}

// appendJSON appends the error as graphql-js writes it: message, locations,
// path.
func (e *fieldError) appendJSON(b []byte) []byte {
	b = append(b, `{"message":`...)
	b = appendJSONString(b, e.msg)
	if e.f.locations != "" {
		b = append(b, `,"locations":`...)
		b = append(b, e.f.locations...)
	}
	b = append(b, `,"path":[`...)
	for i := len(e.path) - 1; i >= 0; i-- {
		if i < len(e.path)-1 {
			b = append(b, ',')
		}
		if e.path[i].index >= 0 {
			b = strconv.AppendInt(b, int64(e.path[i].index), 10)
		} else {
			b = appendJSONString(b, e.path[i].key)
		}
	}
	return append(b, "]}"...)
}

// A completion is how completing a value ended.
type completion uint8

// How completeValue ended: it wrote a value, it wrote null for a null
// value, or it recorded an error and what it wrote must become null.
const (
	completedValue completion = iota
	completedNull
	completedError
)

// complete appends v completed as type t of field f. ok is false when the
// value is null (or failed) and t is non-null: the error is recorded,
// nothing is appended, and the caller must become null itself.
func (ex *execution) complete(dst []byte, t *outType, f *field, v any) ([]byte, bool) {
	if t == nil { // __typename as the root field
		return appendJSONString(dst, f.parent), true
	}
	start := len(dst)
	dst, how := ex.completeValue(dst, t, f, v)
	switch how {
	case completedNull:
		if t.nonNull {
			ex.fieldError(f, "Cannot return null for non-nullable field "+f.parent+"."+f.name+".")
			return dst[:start], false
		}
	case completedError:
		if t.nonNull {
			return dst[:start], false
		}
		return append(dst[:start], "null"...), true
	}
	return dst, true
}

// completeValue appends v completed as t, ignoring whether t is non-null.
func (ex *execution) completeValue(dst []byte, t *outType, f *field, v any) ([]byte, completion) {
	if v == nil {
		return append(dst, "null"...), completedNull
	}
	switch t.kind {
	case outList:
		list, ok := v.([]any)
		if !ok {
			ex.fieldError(f, `Expected Iterable, but did not find one for field "`+f.parent+"."+f.name+`".`)
			return dst, completedError
		}
		dst = append(dst, '[')
		for i, item := range list {
			if i > 0 {
				dst = append(dst, ',')
			}
			n := len(ex.errs)
			dst, ok = ex.complete(dst, t.elem, f, item)
			if len(ex.errs) > n {
				ex.addStep(n, "", i)
			}
			if !ok {
				return dst, completedError
			}
		}
		return append(dst, ']'), completedValue
	case outObject:
		return ex.completeObject(dst, t.object, f, v)
	case outAbstract:
		sel, msg := t.runtimeType(f, v)
		if sel == nil {
			ex.fieldError(f, msg)
			return dst, completedError
		}
		return ex.completeObject(dst, sel, f, v)
	}
	var msg string
	switch t.kind {
	case outInt:
		dst, msg = appendInt(dst, v)
	case outFloat:
		dst, msg = appendFloat(dst, v)
	case outString:
		dst, msg = appendString(dst, v)
	case outBoolean:
		dst, msg = appendBoolean(dst, v)
	case outID:
		dst, msg = appendID(dst, v)
	case outEnum:
		s, ok := v.(string)
		if _, known := t.enum[s]; ok && known {
			return appendJSONString(dst, s), completedValue
		}
		msg = `Enum "` + t.name + `" cannot represent value: ` + inspect(v)
	default:
		return appendJSONValue(dst, v), completedValue
	}
	if msg != "" {
		ex.fieldError(f, msg)
		return dst, completedError
	}
	return dst, completedValue
}

// completeObject appends the object v with the fields of sel.
func (ex *execution) completeObject(dst []byte, sel *selection, f *field, v any) ([]byte, completion) {
	obj, ok := v.(map[string]any)
	if !ok {
		ex.fieldError(f, `Expected value of type "`+sel.typeName+`" but got: `+inspect(v)+".")
		return dst, completedError
	}
	dst = append(dst, '{')
	for i, sf := range sel.fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, sf.jsonKey...)
		if sf.typ == nil {
			dst = append(dst, sel.typeNameJSON...)
			continue
		}
		n := len(ex.errs)
		dst, ok = ex.complete(dst, sf.typ, sf, obj[sf.name])
		if len(ex.errs) > n {
			ex.addStep(n, sf.respKey, -1)
		}
		if !ok {
			return dst, completedError
		}
	}
	return append(dst, '}'), completedValue
}

// runtimeType returns the selection for v's concrete type, named by its
// "__typename", or graphql-js's message for why there is none.
func (t *outType) runtimeType(f *field, v any) (*selection, string) {
	obj, _ := v.(map[string]any)
	name, ok := obj["__typename"].(string)
	if !ok {
		return nil, `Abstract type "` + t.name + `" must resolve to an Object type at runtime for field "` + f.parent + "." + f.name +
			`". Either the "` + t.name + `" type should provide a "resolveType" function or each possible type should provide an "isTypeOf" function.`
	}
	if sel := t.possible[name]; sel != nil {
		return sel, ""
	}
	def := t.schema.Types[name]
	switch {
	case def == nil:
		return nil, `Abstract type "` + t.name + `" was resolved to a type "` + name + `" that does not exist inside the schema.`
	case def.Kind != ast.Object:
		return nil, `Abstract type "` + t.name + `" was resolved to a non-object type "` + name + `".`
	}
	return nil, `Runtime Object type "` + name + `" is not a possible type for "` + t.name + `".`
}

// Leaf serialization, after graphql-js's serialize functions
// (src/type/scalars.ts). Each appends the JSON of v's serialized value, or
// returns graphql-js's error message.

// appendInt serializes v as an Int: an integral number (or numeric string,
// or boolean as 0 or 1) within 32 bits.
func appendInt(dst []byte, v any) ([]byte, string) {
	var f float64
	switch v := v.(type) {
	case bool:
		return appendBool01(dst, v), ""
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			if i < math.MinInt32 || i > math.MaxInt32 {
				return dst, "Int cannot represent non 32-bit signed integer value: " + inspect(v)
			}
			return strconv.AppendInt(dst, i, 10), ""
		}
		f = jsonNumberFloat(v)
	case string:
		if v == "" {
			return dst, `Int cannot represent non-integer value: ""`
		}
		f = jsStringToNumber(v)
	default:
		var ok bool
		if f, ok = goNumber(v); !ok {
			return dst, "Int cannot represent non-integer value: " + inspect(v)
		}
	}
	if !isInteger(f) {
		return dst, "Int cannot represent non-integer value: " + inspect(v)
	}
	if f < math.MinInt32 || f > math.MaxInt32 {
		return dst, "Int cannot represent non 32-bit signed integer value: " + inspect(v)
	}
	return strconv.AppendInt(dst, int64(f), 10), ""
}

// appendFloat serializes v as a Float: a finite number (or numeric string,
// or boolean as 0 or 1). A JSON number keeps its text.
func appendFloat(dst []byte, v any) ([]byte, string) {
	var f float64
	switch v := v.(type) {
	case bool:
		return appendBool01(dst, v), ""
	case json.Number:
		if f = jsonNumberFloat(v); isFinite(f) {
			return append(dst, v...), ""
		}
	case string:
		if v == "" {
			return dst, `Float cannot represent non numeric value: ""`
		}
		f = jsStringToNumber(v)
	default:
		var ok bool
		if f, ok = goNumber(v); !ok {
			return dst, "Float cannot represent non numeric value: " + inspect(v)
		}
	}
	if !isFinite(f) {
		return dst, "Float cannot represent non numeric value: " + inspect(v)
	}
	return appendJSNumber(dst, f), ""
}

// appendString serializes v as a String: a string, or a boolean or finite
// number as text.
func appendString(dst []byte, v any) ([]byte, string) {
	switch v := v.(type) {
	case string:
		return appendJSONString(dst, v), ""
	case bool:
		if v {
			return append(dst, `"true"`...), ""
		}
		return append(dst, `"false"`...), ""
	}
	if b, ok := appendNumberText(dst, v, false); ok {
		return b, ""
	}
	return dst, "String cannot represent value: " + inspect(v)
}

// appendBoolean serializes v as a Boolean: a boolean, or a finite number as
// whether it is not zero.
func appendBoolean(dst []byte, v any) ([]byte, string) {
	if b, ok := v.(bool); ok {
		return strconv.AppendBool(dst, b), ""
	}
	var f float64
	var ok bool
	if n, isNum := v.(json.Number); isNum {
		f, ok = jsonNumberFloat(n), isJSONNumber(string(n))
	} else {
		f, ok = goNumber(v)
	}
	if !ok || !isFinite(f) {
		return dst, "Boolean cannot represent a non boolean value: " + inspect(v)
	}
	return strconv.AppendBool(dst, f != 0), ""
}

// appendID serializes v as an ID: a string, or an integral number as text.
func appendID(dst []byte, v any) ([]byte, string) {
	if s, ok := v.(string); ok {
		return appendJSONString(dst, s), ""
	}
	if b, ok := appendNumberText(dst, v, true); ok {
		return b, ""
	}
	return dst, "ID cannot represent value: " + inspect(v)
}

// appendNumberText appends the number v as a JSON string of its text, as
// JavaScript's String(n) writes it, but an integer's digits as they came.
// With integral set, only integral values are accepted.
func appendNumberText(dst []byte, v any, integral bool) ([]byte, bool) {
	var f float64
	switch v := v.(type) {
	case json.Number:
		if isIntegerLiteral(string(v)) {
			dst = append(dst, '"')
			if v == "-0" {
				dst = append(dst, '0')
			} else {
				dst = append(dst, v...)
			}
			return append(dst, '"'), true
		}
		if !isJSONNumber(string(v)) {
			return dst, false
		}
		f = jsonNumberFloat(v)
	case int:
		return append(strconv.AppendInt(append(dst, '"'), int64(v), 10), '"'), true
	case int32:
		return append(strconv.AppendInt(append(dst, '"'), int64(v), 10), '"'), true
	case int64:
		return append(strconv.AppendInt(append(dst, '"'), v, 10), '"'), true
	default:
		var ok bool
		if f, ok = goNumber(v); !ok {
			return dst, false
		}
	}
	if !isFinite(f) || integral && !isInteger(f) {
		return dst, false
	}
	return append(appendJSNumber(append(dst, '"'), f), '"'), true
}

// appendBool01 appends 1 for true and 0 for false.
func appendBool01(dst []byte, b bool) []byte {
	if b {
		return append(dst, '1')
	}
	return append(dst, '0')
}

// goNumber returns v as a float64 if it is a Go number: what encoding/json
// decodes without UseNumber, or an integer from a caller.
func goNumber(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int:
		return float64(v), true
	case int32:
		return float64(v), true
	case int64:
		return float64(v), true
	}
	return 0, false
}

// jsonNumberFloat returns n's value; text that overflows float64 is ±Inf,
// as in JavaScript, and text that is not a JSON number is NaN.
func jsonNumberFloat(n json.Number) float64 {
	if !isJSONNumber(string(n)) {
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(string(n), 64) // ±Inf on overflow
	return f
}

// isFinite reports whether f is neither infinite nor NaN.
func isFinite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }

// isInteger reports whether f is finite and integral: Number.isInteger.
func isInteger(f float64) bool { return isFinite(f) && f == math.Trunc(f) }

// isIntegerLiteral reports whether s is a JSON number without fraction or
// exponent.
func isIntegerLiteral(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// jsStringToNumber converts s as JavaScript's Number(s) does: surrounding
// white space trimmed, "" is 0, decimal with optional sign, fraction and
// exponent, "Infinity" with optional sign, and 0x, 0o, 0b integers; NaN for
// anything else.
func jsStringToNumber(s string) float64 {
	s = strings.TrimFunc(s, isJSSpace)
	if s == "" {
		return 0
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			f := 0.0
			for _, c := range s[2:] {
				d := strings.IndexRune("0123456789abcdef", c|0x20)
				if c < '0' || d < 0 || d >= base {
					return math.NaN()
				}
				f = f*float64(base) + float64(d)
			}
			return f
		}
	}
	body := s
	if body[0] == '+' || body[0] == '-' {
		body = body[1:]
	}
	if body == "Infinity" {
		if s[0] == '-' {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	// StrUnsignedDecimalLiteral: digits with an optional fraction (either
	// side of the point may be empty, not both), then an optional exponent.
	i, intDigits, fracDigits := 0, 0, 0
	for i < len(body) && '0' <= body[i] && body[i] <= '9' {
		i, intDigits = i+1, intDigits+1
	}
	if i < len(body) && body[i] == '.' {
		i++
		for i < len(body) && '0' <= body[i] && body[i] <= '9' {
			i, fracDigits = i+1, fracDigits+1
		}
	}
	if intDigits+fracDigits == 0 {
		return math.NaN()
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		i++
		if i < len(body) && (body[i] == '+' || body[i] == '-') {
			i++
		}
		expDigits := 0
		for i < len(body) && '0' <= body[i] && body[i] <= '9' {
			i, expDigits = i+1, expDigits+1
		}
		if expDigits == 0 {
			return math.NaN()
		}
	}
	if i != len(body) {
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(s, 64) // the grammar checked; ±Inf on overflow
	return f
}

// isJSSpace reports whether r is white space or a line terminator to
// JavaScript's String.prototype.trim.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return 0x2000 <= r && r <= 0x200a
}

// inspect formats v for an error message as graphql-js's inspect does:
// strings quoted, numbers as JavaScript prints them, lists and objects to a
// depth of two ({ a: 1, b: [1, 2] }), lists cut after ten items. Object keys
// are sorted, where JavaScript would keep their order.
func inspect(v any) string {
	return string(appendInspect(nil, v, 0))
}

// appendInspect appends inspect's text for v, inside seen enclosing lists
// and objects.
func appendInspect(b []byte, v any, seen int) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendJSString(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case json.Number:
		return appendJSNumber(b, jsonNumberFloat(v))
	case []any:
		if len(v) == 0 {
			return append(b, "[]"...)
		}
		if seen+1 > 2 {
			return append(b, "[Array]"...)
		}
		b = append(b, '[')
		for i, item := range v {
			if i == 10 {
				if rest := len(v) - 10; rest == 1 {
					b = append(b, ", ... 1 more item"...)
				} else {
					b = fmt.Appendf(b, ", ... %d more items", rest)
				}
				break
			}
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendInspect(b, item, seen+1)
		}
		return append(b, ']')
	case map[string]any:
		if len(v) == 0 {
			return append(b, "{}"...)
		}
		if seen+1 > 2 {
			return append(b, "[Object]"...)
		}
		b = append(b, "{ "...)
		for i, k := range sortedKeys(v) {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, k...)
			b = append(b, ": "...)
			b = appendInspect(b, v[k], seen+1)
		}
		return append(b, " }"...)
	}
	if f, ok := goNumber(v); ok {
		return appendJSNumber(b, f)
	}
	return fmt.Append(b, v)
}

// appendJSString appends s quoted as JavaScript's JSON.stringify quotes it:
// only quotes, backslashes and control characters escaped, the latter as
// \b, \t, \n, \f, \r or \u00xx.
func appendJSString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s { // invalid UTF-8 reads as U+FFFD, as a JavaScript string has it
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = appendControlEscape(b, byte(r))
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// appendControlEscape appends the JSON escape for the control character c
// (C0, or DEL and C1 as \u007f to \u009f).
func appendControlEscape(b []byte, c byte) []byte {
	switch c {
	case '\b':
		return append(b, `\b`...)
	case '\t':
		return append(b, `\t`...)
	case '\n':
		return append(b, `\n`...)
	case '\f':
		return append(b, `\f`...)
	case '\r':
		return append(b, `\r`...)
	}
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendJSONString appends s as a JSON string the way encoding/json writes
// it with HTML escaping off: quotes, backslashes and control characters
// escaped, U+2028 and U+2029 escaped, and each byte of invalid UTF-8
// replaced by \ufffd.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			if c == '"' || c == '\\' {
				b = append(b, '\\', c)
			} else {
				b = appendControlEscape(b, c)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, "89"[r-'\u2028'])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONValue appends v, decoded JSON, as compact JSON: a custom
// scalar's value passed through. Object keys are sorted; a json.Number that
// is not a number is written as a string, and a non-finite float as null.
func appendJSONValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return appendJSONString(b, v)
	case json.Number:
		if isJSONNumber(string(v)) {
			return append(b, v...)
		}
		return appendJSONString(b, string(v))
	case []any:
		b = append(b, '[')
		for i, item := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, item)
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONValue(b, v[k])
		}
		return append(b, '}')
	}
	if f, ok := goNumber(v); ok {
		if !isFinite(f) {
			return append(b, "null"...)
		}
		return appendJSNumber(b, f)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...)
	}
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}
