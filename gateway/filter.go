package gateway

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// The schema side of Cosmo's subscription filters, which compileFilter reads:
//
//	directive @openfed__subscriptionFilter(condition: openfed__SubscriptionFilterCondition!) on FIELD_DEFINITION
//	scalar openfed__SubscriptionFilterValue
//	input openfed__SubscriptionFieldCondition { fieldPath: String!  values: [openfed__SubscriptionFilterValue]! }
//	input openfed__SubscriptionFilterCondition {
//	  AND: [openfed__SubscriptionFilterCondition!]
//	  IN: openfed__SubscriptionFieldCondition
//	  NOT: openfed__SubscriptionFilterCondition
//	  OR: [openfed__SubscriptionFilterCondition!]
//	}
//
// Comparisons follow Cosmo's engine (graphql-go-tools, resolve.SubscriptionFilter):
//
//   - Types must agree: the string "1" never equals the number 1, nor "true"
//     the boolean true. An ID argument written as a string literal ("1") or
//     sent as a JSON string matches only string values in events; one written
//     as an integer literal (gqlparser coerces it to int64) matches only
//     numbers.
//   - Numbers compare by value: 1, 1.0 and 1e0 are equal (Cosmo compares
//     their JSON text, so there they are not). Integral values within int64
//     compare exactly, others as float64. Strings compare after JSON
//     unescaping.
//   - A field missing from the event, or a path through something that is
//     not an object, matches no value (so NOT of it matches). A null in the
//     event matches a null value: a null literal or an argument that is null.
//   - A field that is a list or an object in the event matches nothing: IN
//     compares scalars only, as Cosmo does.
//   - A value that is exactly one placeholder takes the argument's value with
//     its type; a list argument expands to its elements; a missing (optional,
//     unset) argument contributes no values. A value with text around a
//     single placeholder that names a list expands to one string per element
//     ("user.{{ args.ids }}" with [1, 2] gives "user.1" and "user.2", as
//     Cosmo's engine does); otherwise text with placeholders renders to a
//     string as a template does.

// A filter is a compiled subscription filter condition for one
// subscription's arguments. It is immutable: multiple goroutines may call
// match on one filter simultaneously.
type filter struct {
	op   filterOp
	subs []*filter // AND and OR: two or more conditions; NOT: one
	in   *fieldCondition
	text string // canonical text, see key
}

// A filterOp is the kind of a filter condition.
type filterOp uint8

// The filter condition kinds, one for each field of the condition input.
const (
	filterIn filterOp = iota
	filterAnd
	filterOr
	filterNot
)

// A fieldCondition is a compiled IN: the event's value at path must equal
// one of the values, which are kept by kind, sorted and without duplicates.
type fieldCondition struct {
	path                  []string
	null, isTrue, isFalse bool
	ints                  []int64
	floats                []float64
	strs                  []string
	hasValues, hasNumbers bool
}

// maxFilterDepth bounds how deeply conditions may nest (Cosmo's composition
// allows five levels).
const maxFilterDepth = 32

// compileFilter compiles the directive's condition (the *ast.Value of its
// "condition" argument, from the schema) for one subscription's arguments,
// which are what argumentValues gives. Each condition object must
// set exactly one of AND, IN, NOT and OR; AND and OR must list at least one
// condition; a list or an object among the values, or a placeholder that
// cannot be rendered, is an error. A nil cond compiles to a nil filter.
func compileFilter(cond *ast.Value, args map[string]any) (*filter, error) {
	if cond == nil {
		return nil, nil
	}
	return compileCondition(cond, args, 0)
}

// compileCondition compiles one condition object at nesting depth.
func compileCondition(v *ast.Value, args map[string]any, depth int) (*filter, error) {
	if depth > maxFilterDepth {
		return nil, fmt.Errorf("gateway: subscription filter nested more than %d levels", maxFilterDepth)
	}
	if v.Kind != ast.ObjectValue {
		return nil, fmt.Errorf("gateway: subscription filter condition %s is not an input object", v.String())
	}
	var set *ast.ChildValue
	n := 0
	for _, c := range v.Children {
		switch c.Name {
		case "AND", "IN", "NOT", "OR":
		default:
			return nil, fmt.Errorf("gateway: subscription filter condition has unknown field %q", c.Name)
		}
		if c.Value.Kind != ast.NullValue {
			set = c
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("gateway: subscription filter condition %s sets %d of AND, IN, NOT and OR; want exactly one", v.String(), n)
	}
	switch set.Name {
	case "IN":
		in, err := compileIn(set.Value, args)
		if err != nil {
			return nil, err
		}
		return &filter{op: filterIn, in: in, text: in.key()}, nil
	case "NOT":
		sub, err := compileCondition(set.Value, args, depth+1)
		if err != nil {
			return nil, err
		}
		if sub.op == filterNot {
			return sub.subs[0], nil // NOT NOT x is x
		}
		return &filter{op: filterNot, subs: []*filter{sub}, text: "NOT(" + sub.text + ")"}, nil
	}
	op := filterAnd
	if set.Name == "OR" {
		op = filterOr
	}
	var subs []*filter
	for _, item := range listItems(set.Value) {
		sub, err := compileCondition(item, args, depth+1)
		if err != nil {
			return nil, err
		}
		subs = append(subs, sub)
	}
	if len(subs) == 0 {
		return nil, fmt.Errorf("gateway: subscription filter %s lists no conditions", set.Name)
	}
	// The order of conditions does not change the outcome, nor do repeats.
	slices.SortFunc(subs, func(a, b *filter) int { return strings.Compare(a.text, b.text) })
	subs = slices.CompactFunc(subs, func(a, b *filter) bool { return a.text == b.text })
	if len(subs) == 1 {
		return subs[0], nil
	}
	texts := make([]string, len(subs))
	for i, s := range subs {
		texts[i] = s.text
	}
	return &filter{op: op, subs: subs, text: set.Name + "(" + strings.Join(texts, ",") + ")"}, nil
}

// listItems returns the items of a list value; any other value is a list of
// one, as GraphQL input coercion treats it.
func listItems(v *ast.Value) []*ast.Value {
	if v.Kind != ast.ListValue {
		return []*ast.Value{v}
	}
	items := make([]*ast.Value, len(v.Children))
	for i, c := range v.Children {
		items[i] = c.Value
	}
	return items
}

// compileIn compiles an openfed__SubscriptionFieldCondition.
func compileIn(v *ast.Value, args map[string]any) (*fieldCondition, error) {
	if v.Kind != ast.ObjectValue {
		return nil, fmt.Errorf("gateway: subscription filter IN %s is not an input object", v.String())
	}
	var fieldPath, values *ast.Value
	for _, c := range v.Children {
		switch c.Name {
		case "fieldPath":
			fieldPath = c.Value
		case "values":
			values = c.Value
		default:
			return nil, fmt.Errorf("gateway: subscription filter IN has unknown field %q", c.Name)
		}
	}
	if fieldPath == nil || fieldPath.Kind != ast.StringValue && fieldPath.Kind != ast.BlockValue {
		return nil, fmt.Errorf("gateway: subscription filter IN needs a string fieldPath")
	}
	if values == nil || values.Kind == ast.NullValue {
		return nil, fmt.Errorf("gateway: subscription filter IN on %q needs values", fieldPath.Raw)
	}
	fc := &fieldCondition{path: strings.Split(fieldPath.Raw, ".")}
	if slices.Contains(fc.path, "") {
		return nil, fmt.Errorf("gateway: subscription filter fieldPath %q has an empty segment", fieldPath.Raw)
	}
	for _, item := range listItems(values) {
		if err := fc.addLiteral(item, args); err != nil {
			return nil, fmt.Errorf("gateway: subscription filter IN on %q: %s", fieldPath.Raw, strings.TrimPrefix(err.Error(), "gateway: "))
		}
	}
	fc.normalize()
	return fc, nil
}

// addLiteral adds the values a literal in the directive's values list stands
// for.
func (fc *fieldCondition) addLiteral(v *ast.Value, args map[string]any) error {
	switch v.Kind {
	case ast.NullValue:
		fc.null = true
		return nil
	case ast.BooleanValue:
		return fc.add(v.Raw == "true", nil)
	case ast.IntValue, ast.FloatValue:
		return fc.add(json.Number(v.Raw), nil)
	case ast.EnumValue:
		return fc.add(v.Raw, nil)
	case ast.StringValue, ast.BlockValue:
	default:
		return fmt.Errorf("value %s is not a scalar", v.String())
	}
	t, err := parseTemplate(v.Raw)
	if err != nil {
		return err
	}
	if path, ok := t.single(); ok {
		arg, err := lookupArg(args, path)
		if ae, ok := err.(*argError); ok && ae.missing {
			return nil // an unset optional argument stands for no values
		} else if err != nil {
			return err
		}
		if list, ok := arg.([]any); ok {
			for _, e := range list {
				if err := fc.add(e, path); err != nil {
					return err
				}
			}
			return nil
		}
		return fc.add(arg, path)
	}
	if ps := t.paths(); len(ps) == 1 {
		if arg, err := lookupArg(args, ps[0]); err == nil {
			if list, ok := arg.([]any); ok {
				return fc.addExpanded(t, list)
			}
		}
	}
	s, err := t.render(args)
	if err != nil {
		return err
	}
	return fc.add(s, nil)
}

// addExpanded adds one string for each element of list: t, whose only
// placeholder names list, rendered with that element in its place.
func (fc *fieldCondition) addExpanded(t *template, list []any) error {
	var path []string
	for _, p := range t.parts {
		if p.path != nil {
			path = p.path
		}
	}
	for _, e := range list {
		var b []byte
		for _, p := range t.parts {
			if p.path == nil {
				b = append(b, p.text...)
				continue
			}
			var err error
			if b, err = appendArgText(b, e, path); err != nil {
				return err
			}
		}
		fc.strs = append(fc.strs, string(b))
	}
	return nil
}

// add adds the scalar v, an argument at path (nil for a literal) or one of
// its list elements.
func (fc *fieldCondition) add(v any, path []string) error {
	switch v := v.(type) {
	case nil:
		fc.null = true
	case bool:
		if v {
			fc.isTrue = true
		} else {
			fc.isFalse = true
		}
	case string:
		fc.strs = append(fc.strs, v)
	case []any, map[string]any:
		what := "a list"
		if _, ok := v.(map[string]any); ok {
			what = "an input object"
		}
		if path == nil {
			return fmt.Errorf("value is %s", what)
		}
		return fmt.Errorf("%s holds %s; want scalars", argPathText(path), what)
	default:
		n, ok := toNumber(v)
		if !ok {
			if path == nil {
				return fmt.Errorf("value %v is not a number", v)
			}
			return fmt.Errorf("%s holds %v (%T); want a scalar", argPathText(path), v, v)
		}
		if n.isInt {
			fc.ints = append(fc.ints, n.i)
		} else {
			fc.floats = append(fc.floats, n.f)
		}
	}
	return nil
}

// normalize sorts the values and drops duplicates, so that equal sets of
// values have equal keys and can be searched.
func (fc *fieldCondition) normalize() {
	slices.Sort(fc.ints)
	fc.ints = slices.Compact(fc.ints)
	slices.Sort(fc.floats)
	fc.floats = slices.Compact(fc.floats)
	slices.Sort(fc.strs)
	fc.strs = slices.Compact(fc.strs)
	fc.hasNumbers = len(fc.ints)+len(fc.floats) > 0
	fc.hasValues = fc.null || fc.isTrue || fc.isFalse || fc.hasNumbers || len(fc.strs) > 0
}

// key returns the condition's canonical text:
// IN("a"."b":null,false,true,1,2,1.5,"x").
func (fc *fieldCondition) key() string {
	var b []byte
	b = append(b, "IN("...)
	for i, seg := range fc.path {
		if i > 0 {
			b = append(b, '.')
		}
		b = strconv.AppendQuote(b, seg)
	}
	b = append(b, ':')
	sep := func() {
		if b[len(b)-1] != ':' {
			b = append(b, ',')
		}
	}
	if fc.null {
		sep()
		b = append(b, "null"...)
	}
	if fc.isFalse {
		sep()
		b = append(b, "false"...)
	}
	if fc.isTrue {
		sep()
		b = append(b, "true"...)
	}
	for _, i := range fc.ints {
		sep()
		b = strconv.AppendInt(b, i, 10)
	}
	for _, f := range fc.floats {
		sep()
		b = strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	for _, s := range fc.strs {
		sep()
		b = strconv.AppendQuote(b, s)
	}
	return string(append(b, ')'))
}

// A number is a JSON or argument number in canonical form: an int64 when it
// is integral and within range, else a float64.
type number struct {
	isInt bool
	i     int64
	f     float64
}

// toNumber converts a numeric argument or event value. ok is false for
// anything else, for text that is not a number, and for NaN.
func toNumber(v any) (n number, ok bool) {
	switch v := v.(type) {
	case int:
		return number{isInt: true, i: int64(v)}, true
	case int32:
		return number{isInt: true, i: int64(v)}, true
	case int64:
		return number{isInt: true, i: v}, true
	case float32:
		return floatNumber(float64(v))
	case float64:
		return floatNumber(v)
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return number{isInt: true, i: i}, true
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !isRangeError(err) {
			return number{}, false
		}
		return floatNumber(f)
	}
	return number{}, false
}

// isRangeError reports whether err is strconv's "value out of range": the
// text was a number, too large for float64, and parsed to ±Inf.
func isRangeError(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// floatNumber puts f in canonical form.
func floatNumber(f float64) (number, bool) {
	if math.IsNaN(f) {
		return number{}, false
	}
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return number{isInt: true, i: int64(f)}, true
	}
	return number{f: f}, true
}

// key returns the canonical text of the compiled filter: subscribers of one
// field whose filters have equal keys get the same events. Conditions of AND
// and OR and the values of IN are sorted and deduplicated, and numbers are
// written in canonical form, so that filters differing only in order or in
// how a number was written share a key. A nil filter's key is "".
func (f *filter) key() string {
	if f == nil {
		return ""
	}
	return f.text
}

// match reports whether the filter lets event through. event is JSON as
// encoding/json's Decoder.UseNumber decodes it (map[string]any, []any,
// string, json.Number, bool, nil); float64 and integers are accepted too. A
// nil filter matches everything.
func (f *filter) match(event any) bool {
	if f == nil {
		return true
	}
	switch f.op {
	case filterAnd:
		for _, s := range f.subs {
			if !s.match(event) {
				return false
			}
		}
		return true
	case filterOr:
		for _, s := range f.subs {
			if s.match(event) {
				return true
			}
		}
		return false
	case filterNot:
		return !f.subs[0].match(event)
	}
	return f.in.match(event)
}

// match reports whether the event's value at fc.path is one of fc's values.
func (fc *fieldCondition) match(event any) bool {
	if !fc.hasValues {
		return false
	}
	v := event
	for _, name := range fc.path {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[name]; !ok {
			return false
		}
	}
	switch v := v.(type) {
	case nil:
		return fc.null
	case bool:
		if v {
			return fc.isTrue
		}
		return fc.isFalse
	case string:
		_, found := slices.BinarySearch(fc.strs, v)
		return found
	case []any, map[string]any:
		return false
	}
	if !fc.hasNumbers {
		return false
	}
	n, ok := toNumber(v)
	if !ok {
		return false
	}
	if n.isInt {
		_, found := slices.BinarySearch(fc.ints, n.i)
		return found
	}
	_, found := slices.BinarySearch(fc.floats, n.f)
	return found
}
