package gateway

import (
	"math"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// maxVariableErrors bounds the errors one request's variables get, as
// graphql-js's maxErrors does.
const maxVariableErrors = 50

// coerceVariables returns the values of op's variables, coerced from the
// request's (normalized) as the spec's CoerceVariableValues and
// graphql-js's coerceInputValue coerce them, with graphql-js's messages:
//
//   - A variable not given takes its default, if it has one; a non-null
//     one without a default is an error, and so is null for a non-null
//     type, at any depth.
//   - A single value for a list is a list of one; lists are []any.
//   - Int is an integral number within 32 bits (an integral float64 is
//     made an int64), Float a finite number, String a string, Boolean a
//     boolean, ID a string or an integral number (kept as it came, as a
//     literal argument is). A numeric string is no number.
//   - An enum value is a string spelled as one of the enum's values.
//   - An input object is an object with no field its type lacks, and
//     its missing fields take their defaults; a OneOf input object's has
//     exactly one field, not null.
//   - A custom scalar is taken as it came.
//
// Variables op does not define are left out.
func coerceVariables(schema *ast.Schema, op *ast.OperationDefinition, given map[string]any) (map[string]any, gqlerror.List) {
	c := &coercion{schema: schema}
	vars := make(map[string]any, len(op.VariableDefinitions))
	for _, def := range op.VariableDefinitions {
		if len(c.errs) >= maxVariableErrors {
			c.errs = append(c.errs, gqlerror.Errorf("Too many errors processing variables, error limit reached. Execution aborted."))
			break
		}
		c.def = def
		v, ok := given[def.Variable]
		switch {
		case !ok && def.DefaultValue != nil:
			vars[def.Variable], _ = literalValue(schema, def.DefaultValue, def.Type, nil)
		case !ok:
			if def.Type.NonNull {
				c.errs = append(c.errs, gqlerror.ErrorPosf(def.Position, "Variable \"$%s\" of required type \"%s\" was not provided.", def.Variable, def.Type))
			}
		case v == nil && def.Type.NonNull:
			c.errs = append(c.errs, gqlerror.ErrorPosf(def.Position, "Variable \"$%s\" of non-null type \"%s\" must not be null.", def.Variable, def.Type))
		default:
			vars[def.Variable] = c.coerce(v, def.Type, "")
		}
	}
	if c.errs != nil {
		return nil, c.errs
	}
	return vars, nil
}

// A coercion is the coercion of one request's variables.
type coercion struct {
	schema *ast.Schema
	def    *ast.VariableDefinition // the variable being coerced
	errs   gqlerror.List
}

// fail records that v, at path within the variable's value, cannot be
// coerced: msg says why.
func (c *coercion) fail(v any, path, msg string) {
	if len(c.errs) >= maxVariableErrors {
		return
	}
	var b strings.Builder
	b.WriteString(`Variable "$` + c.def.Variable + `" got invalid value ` + inspect(v))
	if path != "" {
		b.WriteString(` at "` + c.def.Variable + path + `"`)
	}
	b.WriteString("; " + msg)
	c.errs = append(c.errs, gqlerror.ErrorPosf(c.def.Position, "%s", b.String()))
}

// coerce returns v coerced to t, or nil after recording why it cannot be.
// path is where v is within the variable's value: "", "[0]", ".a[1]".
func (c *coercion) coerce(v any, t *ast.Type, path string) any {
	if v == nil {
		if t.NonNull {
			c.fail(v, path, `Expected non-nullable type "`+t.String()+`" not to be null.`)
		}
		return nil
	}
	if t.Elem != nil {
		items, ok := v.([]any)
		if !ok {
			return []any{c.coerce(v, t.Elem, path)}
		}
		out := make([]any, len(items))
		for i, item := range items {
			out[i] = c.coerce(item, t.Elem, path+"["+strconv.Itoa(i)+"]")
		}
		return out
	}
	def := c.schema.Types[t.NamedType]
	if def == nil {
		c.fail(v, path, `Unknown type "`+t.NamedType+`".`)
		return nil
	}
	switch def.Kind {
	case ast.InputObject:
		return c.coerceObject(v, def, path)
	case ast.Enum:
		s, ok := v.(string)
		switch {
		case !ok:
			c.fail(v, path, `Enum "`+def.Name+`" cannot represent non-string value: `+inspect(v)+".")
		case def.EnumValues.ForName(s) == nil:
			msg := `Value "` + s + `" does not exist in "` + def.Name + `" enum.`
			for _, ev := range def.EnumValues {
				if strings.EqualFold(ev.Name, s) {
					msg += ` Did you mean the enum value "` + ev.Name + `"?`
					break
				}
			}
			c.fail(v, path, msg)
		default:
			return s
		}
		return nil
	case ast.Scalar:
		out, msg := coerceScalar(def.Name, v)
		if msg != "" {
			c.fail(v, path, msg)
		}
		return out
	}
	c.fail(v, path, `Type "`+def.Name+`" is not an input type.`)
	return nil
}

// coerceObject returns v coerced to the input object type def.
func (c *coercion) coerceObject(v any, def *ast.Definition, path string) any {
	obj, ok := v.(map[string]any)
	if !ok {
		c.fail(v, path, `Expected type "`+def.Name+`" to be an object.`)
		return nil
	}
	out := make(map[string]any, len(obj))
	for _, f := range def.Fields {
		fv, ok := obj[f.Name]
		switch {
		case ok:
			out[f.Name] = c.coerce(fv, f.Type, path+"."+f.Name)
		case f.DefaultValue != nil:
			out[f.Name], _ = literalValue(c.schema, f.DefaultValue, f.Type, nil)
		case f.Type.NonNull:
			c.fail(v, path, `Field "`+f.Name+`" of required type "`+f.Type.String()+`" was not provided.`)
		}
	}
	for _, k := range sortedKeys(obj) {
		if def.Fields.ForName(k) == nil {
			c.fail(v, path, `Field "`+k+`" is not defined by type "`+def.Name+`".`)
		}
	}
	if def.Directives.ForName("oneOf") != nil {
		switch len(out) {
		case 1:
			for k, x := range out {
				if x == nil {
					c.fail(nil, path+"."+k, `Field "`+k+`" must be non-null.`)
				}
			}
		default:
			c.fail(v, path, `Exactly one key must be specified for OneOf type "`+def.Name+`".`)
		}
	}
	return out
}

// coerceScalar returns v, a normalized variable value, coerced to the
// scalar type named name, or graphql-js's message for why it cannot be.
func coerceScalar(name string, v any) (any, string) {
	switch name {
	case "Int":
		f, ok := goNumber(v)
		if !ok || !isInteger(f) {
			return nil, "Int cannot represent non-integer value: " + inspect(v)
		}
		if f < math.MinInt32 || f > math.MaxInt32 {
			return nil, "Int cannot represent non 32-bit signed integer value: " + inspect(v)
		}
		return int64(f), ""
	case "Float":
		if f, ok := goNumber(v); !ok || !isFinite(f) {
			return nil, "Float cannot represent non numeric value: " + inspect(v)
		}
	case "String":
		if _, ok := v.(string); !ok {
			return nil, "String cannot represent a non string value: " + inspect(v)
		}
	case "Boolean":
		if _, ok := v.(bool); !ok {
			return nil, "Boolean cannot represent a non boolean value: " + inspect(v)
		}
	case "ID":
		if _, ok := v.(string); ok {
			return v, ""
		}
		f, ok := goNumber(v)
		if !ok || !isInteger(f) {
			return nil, "ID cannot represent value: " + inspect(v)
		}
		if _, ok := v.(float64); ok && math.Abs(f) < 1<<63 {
			return int64(f), "" // as a JSON integer normalized would be
		}
	}
	return v, ""
}

// argumentValues returns field's arguments as the spec's
// CoerceArgumentValues gives them, from its literals, vars (coerced by
// coerceVariables) and its arguments' defaults: an argument neither given
// nor defaulted is left out.
func argumentValues(schema *ast.Schema, field *ast.Field, vars map[string]any) map[string]any {
	out := make(map[string]any)
	if field.Definition == nil {
		return out
	}
	for _, def := range field.Definition.Arguments {
		var given *ast.Value
		if arg := field.Arguments.ForName(def.Name); arg != nil {
			given = arg.Value
		}
		if v, ok := valueOrDefault(schema, given, def.DefaultValue, def.Type, vars); ok {
			out[def.Name] = v
		}
	}
	return out
}

// valueOrDefault is the value of the literal given, or, if it is absent
// or an unset variable, of the default dflt (literalValue).
func valueOrDefault(schema *ast.Schema, given, dflt *ast.Value, t *ast.Type, vars map[string]any) (any, bool) {
	if v, ok := literalValue(schema, given, t, vars); ok {
		return v, true
	}
	return literalValue(schema, dflt, t, nil)
}

// literalValue returns the value of the validated literal v of type t, as
// graphql-js's valueFromAST makes it: an input object's fields not given
// (or given an unset variable) take their defaults, at any depth, as they
// do in a variable's value; a single value for a list is a list of one.
// ok is false when v is absent or an unset variable without a default.
func literalValue(schema *ast.Schema, v *ast.Value, t *ast.Type, vars map[string]any) (any, bool) {
	if v == nil {
		return nil, false
	}
	switch v.Kind {
	case ast.Variable:
		x, ok := vars[v.Raw]
		return x, ok
	case ast.NullValue:
		return nil, true
	}
	if t.Elem != nil {
		if v.Kind != ast.ListValue {
			x, _ := literalValue(schema, v, t.Elem, vars)
			return []any{x}, true
		}
		items := make([]any, len(v.Children))
		for i, c := range v.Children {
			items[i], _ = literalValue(schema, c.Value, t.Elem, vars)
		}
		return items, true
	}
	if def := schema.Types[t.NamedType]; v.Kind == ast.ObjectValue && def != nil && def.Kind == ast.InputObject {
		out := make(map[string]any, len(def.Fields))
		for _, f := range def.Fields {
			if x, ok := valueOrDefault(schema, v.Children.ForName(f.Name), f.DefaultValue, f.Type, vars); ok {
				out[f.Name] = x
			}
		}
		return out, true
	}
	x, err := v.Value(vars)
	return x, err == nil
}
