package gateway

import (
	"errors"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Introspection: a query whose root fields are __schema, __type and
// __typename is answered from the schema, as the GraphQL specification's
// section 4 has it, so that GraphiQL, Apollo's tools, graphql-codegen and
// the like can read the schema of the subscriptions and mutations they
// send. The gateway's own directives (@edfs__*, @openfed__*, Federation's
// @key and the rest), which configure it and mean nothing to a client, are
// left out, with the types only they use, and so is what @inaccessible
// marks, as Cosmo's router leaves them out of its client schema.

// rootIntrospection reports whether every root field that set selects on
// the query type named query is an introspection field (the query is
// answered from the schema), and whether any reads the schema (__schema,
// __type: not __typename alone).
func rootIntrospection(set ast.SelectionSet, query string, vars map[string]any) (all, schema bool, err error) {
	in := &introspection{vars: vars}
	groups, err := in.collect(set, query)
	if err != nil {
		return false, false, err
	}
	all = true
	for _, g := range groups {
		all = all && strings.HasPrefix(g.field.Name, "__")
		schema = schema || g.field.Name == "__schema" || g.field.Name == "__type"
	}
	return all, schema, nil
}

// introspect answers op, a query of introspection fields alone, with its
// execution result, {"data":{...}}.
func introspect(schema *ast.Schema, op *ast.OperationDefinition, vars map[string]any) ([]byte, error) {
	in := &introspection{schema: schema, vars: vars}
	dst := append([]byte(nil), `{"data":`...)
	dst, err := in.object(dst, op.SelectionSet, schema.Query.Name, func(dst []byte, f *ast.Field, sub ast.SelectionSet) ([]byte, error) {
		switch f.Name {
		case "__schema":
			return in.schemaObject(dst, sub)
		case "__type":
			// A type types does not show is not found either.
			name, _ := in.arg(f, "name").(string)
			if !in.shows(name) {
				return append(dst, "null"...), nil
			}
			return in.typeObject(dst, ast.NamedType(name, nil), sub)
		}
		return append(dst, "null"...), nil
	})
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

type introspection struct {
	schema *ast.Schema
	vars   map[string]any
	types  []string // reachable's, once made
}

// maxIntrospectionResult bounds an introspection answer. A query's text
// is bounded (Config.MaxMessageSize), and the MaxIntrospectionDepth rule
// bounds how deeply it nests __Type's list fields, but not its aliases or
// ofType: fragments that each select the next under k aliases answer in
// k^levels objects, gigabytes from a query of a kilobyte. The schema of a
// large API (GitHub's) introspects in a few megabytes.
const maxIntrospectionResult = 16 << 20

var errIntrospectionTooLarge = errors.New("the introspection result is too large")

// fieldGroup is the fields a selection set asks for under one response
// key, their selection sets merged.
type fieldGroup struct {
	key   string
	field *ast.Field
	sets  []ast.SelectionSet
}

// collect gathers the fields set selects on the type named typeName, in
// order, by response key, through fragments whose condition is that type
// and past @skip and @include (the CollectFields of the specification).
func (in *introspection) collect(set ast.SelectionSet, typeName string) ([]*fieldGroup, error) {
	var groups []*fieldGroup
	visited := map[string]bool{}
	var walk func(set ast.SelectionSet) error
	walk = func(set ast.SelectionSet) error {
		for _, sel := range set {
			var dirs ast.DirectiveList
			switch sel := sel.(type) {
			case *ast.Field:
				dirs = sel.Directives
			case *ast.InlineFragment:
				dirs = sel.Directives
			case *ast.FragmentSpread:
				dirs = sel.Directives
			}
			if ok, err := includedBy(dirs, in.vars); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			switch sel := sel.(type) {
			case *ast.Field:
				key := sel.Alias
				if key == "" {
					key = sel.Name
				}
				i := slices.IndexFunc(groups, func(g *fieldGroup) bool { return g.key == key })
				if i < 0 {
					groups = append(groups, &fieldGroup{key: key, field: sel})
					i = len(groups) - 1
				}
				groups[i].sets = append(groups[i].sets, sel.SelectionSet)
			case *ast.InlineFragment:
				if sel.TypeCondition == "" || sel.TypeCondition == typeName {
					if err := walk(sel.SelectionSet); err != nil {
						return err
					}
				}
			case *ast.FragmentSpread:
				if d := sel.Definition; d != nil && !visited[sel.Name] && d.TypeCondition == typeName {
					visited[sel.Name] = true
					if err := walk(d.SelectionSet); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return groups, walk(set)
}

// object appends the object of type typeName that set selects: each
// field's value is field's to append, but __typename's.
func (in *introspection) object(dst []byte, set ast.SelectionSet, typeName string, field func(dst []byte, f *ast.Field, sub ast.SelectionSet) ([]byte, error)) ([]byte, error) {
	groups, err := in.collect(set, typeName)
	if err != nil {
		return nil, err
	}
	dst = append(dst, '{')
	for i, g := range groups {
		if len(dst) > maxIntrospectionResult {
			return nil, errIntrospectionTooLarge
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, g.key)
		dst = append(dst, ':')
		if g.field.Name == "__typename" {
			dst = appendJSONString(dst, typeName)
			continue
		}
		if dst, err = field(dst, g.field, slices.Concat(g.sets...)); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// list appends a JSON array of n elements, each appended by elem.
func list(dst []byte, n int, elem func(dst []byte, i int) ([]byte, error)) ([]byte, error) {
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = elem(dst, i); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// arg returns the value of f's argument name, or nil.
func (in *introspection) arg(f *ast.Field, name string) any {
	a := f.Arguments.ForName(name)
	if a == nil || a.Value == nil {
		return nil
	}
	v, _ := a.Value.Value(in.vars)
	return v
}

// includeDeprecated is f's includeDeprecated argument (false by default).
func (in *introspection) includeDeprecated(f *ast.Field) bool {
	b, _ := in.arg(f, "includeDeprecated").(bool)
	return b
}

func appendJSONBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

func appendNullableString(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, s)
}

// hiddenDirective reports whether a directive is not the client's: the
// event bindings and Federation's directives, which configure the gateway
// and compose subgraphs, and @defer, which the gateway does not deliver
// incrementally.
func hiddenDirective(name string) bool {
	return name == "defer" || isPreludeName("@"+name)
}

// isPreludeName reports whether name ("@name" for a directive) is one of
// the definitions a Cosmo event-driven subgraph uses.
func isPreludeName(name string) bool {
	return slices.ContainsFunc(preludeDefinitions, func(d struct{ name, sdl string }) bool { return d.name == name })
}

// shown returns the members of items that introspection shows: those
// visible says are, less the deprecated unless all.
func shown[T any](items []T, all bool, visible func(T) (ast.DirectiveList, bool)) []T {
	var out []T
	for _, it := range items {
		dirs, ok := visible(it)
		if _, dep := deprecation(dirs); ok && (all || !dep) {
			out = append(out, it)
		}
	}
	return out
}

// deprecation returns the reason of a @deprecated among dirs, and whether
// there is one.
func deprecation(dirs ast.DirectiveList) (string, bool) {
	d := dirs.ForName("deprecated")
	if d == nil {
		return "", false
	}
	if a := d.Arguments.ForName("reason"); a != nil && a.Value != nil {
		if v, err := a.Value.Value(nil); err == nil {
			if s, ok := v.(string); ok {
				return s, true
			}
		}
	}
	return "No longer supported", true
}

func (in *introspection) schemaObject(dst []byte, set ast.SelectionSet) ([]byte, error) {
	s := in.schema
	return in.object(dst, set, "__Schema", func(dst []byte, f *ast.Field, sub ast.SelectionSet) ([]byte, error) {
		root := func(def *ast.Definition) ([]byte, error) {
			if def == nil {
				return append(dst, "null"...), nil
			}
			return in.typeObject(dst, ast.NamedType(def.Name, nil), sub)
		}
		switch f.Name {
		case "description":
			return appendNullableString(dst, s.Description), nil
		case "types":
			names := in.reachable()
			return list(dst, len(names), func(dst []byte, i int) ([]byte, error) {
				return in.typeObject(dst, ast.NamedType(names[i], nil), sub)
			})
		case "queryType":
			return root(s.Query)
		case "mutationType":
			return root(s.Mutation)
		case "subscriptionType":
			return root(s.Subscription)
		case "directives":
			var dirs []*ast.DirectiveDefinition
			for name, d := range s.Directives {
				if !hiddenDirective(name) {
					dirs = append(dirs, d)
				}
			}
			slices.SortFunc(dirs, func(a, b *ast.DirectiveDefinition) int { return strings.Compare(a.Name, b.Name) })
			return list(dst, len(dirs), func(dst []byte, i int) ([]byte, error) {
				return in.directiveObject(dst, dirs[i], sub)
			})
		}
		return append(dst, "null"...), nil
	})
}

// reachable returns the names of the types a client can meet, sorted: the
// schema's own and those they, the root types, the introspection types and
// the directives shown lead to, but for what @inaccessible hides. The
// input types of the gateway's own directives are not among them.
func (in *introspection) reachable() []string {
	if in.types != nil {
		return in.types
	}
	s := in.schema
	seen := map[string]bool{}
	var visit func(name string)
	visitType := func(t *ast.Type) {
		for t.Elem != nil {
			t = t.Elem
		}
		visit(t.NamedType)
	}
	visitArgs := func(args ast.ArgumentDefinitionList) {
		for _, a := range args {
			visitType(a.Type)
		}
	}
	visit = func(name string) {
		def := s.Types[name]
		if def == nil || seen[name] || inaccessible(def.Directives) {
			return
		}
		seen[name] = true
		for _, f := range def.Fields {
			if !inaccessible(f.Directives) {
				visitType(f.Type)
				visitArgs(f.Arguments)
			}
		}
		for _, i := range def.Interfaces {
			visit(i)
		}
		for _, t := range s.PossibleTypes[name] {
			visit(t.Name)
		}
	}
	for _, root := range []*ast.Definition{s.Query, s.Mutation, s.Subscription} {
		if root != nil {
			visit(root.Name)
		}
	}
	visit("__Schema")
	for name, def := range s.Types {
		// The schema's own types, used or not, as a schema built from
		// its text holds them; of the definitions the gateway adds or a
		// schema declares for Cosmo, those used.
		if def.Position != nil && def.Position.Src != nil && !def.Position.Src.BuiltIn && !isPreludeName(name) {
			visit(name)
		}
	}
	for name, d := range s.Directives {
		if !hiddenDirective(name) {
			visitArgs(d.Arguments)
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	slices.Sort(names)
	in.types = names
	return names
}

// shows reports whether the type named name is among those introspection
// shows (reachable).
func (in *introspection) shows(name string) bool {
	_, found := slices.BinarySearch(in.reachable(), name)
	return found
}

// visible reports whether a field or argument with dirs, of type t, is
// shown: not @inaccessible, nor of a type that is.
func (in *introspection) visible(dirs ast.DirectiveList, t *ast.Type) bool {
	for t.Elem != nil {
		t = t.Elem
	}
	return in.shows(t.NamedType) && !inaccessible(dirs)
}

// inaccessible reports whether dirs hide what they are on from clients
// (Federation's @inaccessible), as Cosmo's client schema leaves it out.
func inaccessible(dirs ast.DirectiveList) bool { return dirs.ForName("inaccessible") != nil }

// directiveLocations are the locations of directives a client knows
// (graphql-js's DirectiveLocation): gqlparser's prelude names others,
// such as DIRECTIVE_DEFINITION, which typed clients would refuse.
var directiveLocations = []ast.DirectiveLocation{
	ast.LocationQuery, ast.LocationMutation, ast.LocationSubscription, ast.LocationField,
	ast.LocationFragmentDefinition, ast.LocationFragmentSpread, ast.LocationInlineFragment,
	ast.LocationVariableDefinition, ast.LocationSchema, ast.LocationScalar, ast.LocationObject,
	ast.LocationFieldDefinition, ast.LocationArgumentDefinition, ast.LocationInterface,
	ast.LocationUnion, ast.LocationEnum, ast.LocationEnumValue, ast.LocationInputObject,
	ast.LocationInputFieldDefinition,
}

// typeObject appends the __Type of t: a named type's definition, or a list
// or non-null wrapper of another type.
func (in *introspection) typeObject(dst []byte, t *ast.Type, set ast.SelectionSet) ([]byte, error) {
	var def *ast.Definition
	kind := "LIST"
	var of *ast.Type
	switch {
	case t.NonNull:
		kind = "NON_NULL"
		of = &ast.Type{NamedType: t.NamedType, Elem: t.Elem}
	case t.Elem != nil:
		of = t.Elem
	default:
		def = in.schema.Types[t.NamedType]
		if def == nil {
			return append(dst, "null"...), nil
		}
		kind = string(def.Kind)
	}
	return in.object(dst, set, "__Type", func(dst []byte, f *ast.Field, sub ast.SelectionSet) ([]byte, error) {
		if def == nil && f.Name != "kind" && f.Name != "ofType" {
			return append(dst, "null"...), nil // a wrapper has no name, fields, ...
		}
		switch f.Name {
		case "kind":
			return appendJSONString(dst, kind), nil
		case "ofType":
			if of == nil {
				return append(dst, "null"...), nil
			}
			return in.typeObject(dst, of, sub)
		case "name":
			return appendJSONString(dst, def.Name), nil
		case "description":
			return appendNullableString(dst, def.Description), nil
		case "specifiedByURL":
			url := ""
			if d := def.Directives.ForName("specifiedBy"); d != nil && def.Kind == ast.Scalar {
				if a := d.Arguments.ForName("url"); a != nil && a.Value != nil {
					url = a.Value.Raw
				}
			}
			return appendNullableString(dst, url), nil
		case "fields":
			if def.Kind != ast.Object && def.Kind != ast.Interface {
				return append(dst, "null"...), nil
			}
			fields := shown(def.Fields, in.includeDeprecated(f), func(fd *ast.FieldDefinition) (ast.DirectiveList, bool) {
				return fd.Directives, !strings.HasPrefix(fd.Name, "__") && in.visible(fd.Directives, fd.Type)
			})
			return list(dst, len(fields), func(dst []byte, i int) ([]byte, error) {
				return in.fieldObject(dst, fields[i], sub)
			})
		case "interfaces":
			if def.Kind != ast.Object && def.Kind != ast.Interface {
				return append(dst, "null"...), nil
			}
			names := slices.DeleteFunc(slices.Clone(def.Interfaces), func(name string) bool { return !in.shows(name) })
			return list(dst, len(names), func(dst []byte, i int) ([]byte, error) {
				return in.typeObject(dst, ast.NamedType(names[i], nil), sub)
			})
		case "possibleTypes":
			if def.Kind != ast.Interface && def.Kind != ast.Union {
				return append(dst, "null"...), nil
			}
			types := slices.DeleteFunc(slices.Clone(in.schema.PossibleTypes[def.Name]), func(t *ast.Definition) bool { return !in.shows(t.Name) })
			return list(dst, len(types), func(dst []byte, i int) ([]byte, error) {
				return in.typeObject(dst, ast.NamedType(types[i].Name, nil), sub)
			})
		case "enumValues":
			if def.Kind != ast.Enum {
				return append(dst, "null"...), nil
			}
			values := shown(def.EnumValues, in.includeDeprecated(f), func(v *ast.EnumValueDefinition) (ast.DirectiveList, bool) {
				return v.Directives, !inaccessible(v.Directives)
			})
			return list(dst, len(values), func(dst []byte, i int) ([]byte, error) {
				v := values[i]
				return in.object(dst, sub, "__EnumValue", func(dst []byte, f *ast.Field, _ ast.SelectionSet) ([]byte, error) {
					return in.member(dst, f.Name, v.Name, v.Description, v.Directives), nil
				})
			})
		case "isOneOf":
			if def.Kind != ast.InputObject {
				return append(dst, "null"...), nil
			}
			return appendJSONBool(dst, def.Directives.ForName("oneOf") != nil), nil
		case "inputFields":
			if def.Kind != ast.InputObject {
				return append(dst, "null"...), nil
			}
			fields := shown(def.Fields, in.includeDeprecated(f), func(fd *ast.FieldDefinition) (ast.DirectiveList, bool) {
				return fd.Directives, in.visible(fd.Directives, fd.Type)
			})
			return list(dst, len(fields), func(dst []byte, i int) ([]byte, error) {
				fd := fields[i]
				return in.inputValue(dst, fd.Name, fd.Description, fd.Type, fd.DefaultValue, fd.Directives, sub)
			})
		}
		return append(dst, "null"...), nil
	})
}

// member appends the field name of a named member of the schema (a field,
// an argument, an enum value): its name, description, isDeprecated or
// deprecationReason; null for another.
func (in *introspection) member(dst []byte, field, name, description string, dirs ast.DirectiveList) []byte {
	reason, dep := deprecation(dirs)
	switch field {
	case "name":
		return appendJSONString(dst, name)
	case "description":
		return appendNullableString(dst, description)
	case "isDeprecated":
		return appendJSONBool(dst, dep)
	case "deprecationReason":
		if !dep {
			return append(dst, "null"...)
		}
		return appendJSONString(dst, reason)
	}
	return append(dst, "null"...)
}

func (in *introspection) fieldObject(dst []byte, fd *ast.FieldDefinition, set ast.SelectionSet) ([]byte, error) {
	return in.object(dst, set, "__Field", func(dst []byte, f *ast.Field, sub ast.SelectionSet) ([]byte, error) {
		switch f.Name {
		case "type":
			return in.typeObject(dst, fd.Type, sub)
		case "args":
			return in.args(dst, fd.Arguments, in.includeDeprecated(f), sub)
		}
		return in.member(dst, f.Name, fd.Name, fd.Description, fd.Directives), nil
	})
}

// args appends a field's or a directive's arguments as __InputValues.
func (in *introspection) args(dst []byte, args ast.ArgumentDefinitionList, all bool, set ast.SelectionSet) ([]byte, error) {
	args = shown(args, all, func(a *ast.ArgumentDefinition) (ast.DirectiveList, bool) {
		return a.Directives, in.visible(a.Directives, a.Type)
	})
	return list(dst, len(args), func(dst []byte, i int) ([]byte, error) {
		a := args[i]
		return in.inputValue(dst, a.Name, a.Description, a.Type, a.DefaultValue, a.Directives, set)
	})
}

// inputValue appends an __InputValue: an argument or an input object's
// field, its default value as GraphQL text.
func (in *introspection) inputValue(dst []byte, name, description string, t *ast.Type, def *ast.Value, dirs ast.DirectiveList, set ast.SelectionSet) ([]byte, error) {
	return in.object(dst, set, "__InputValue", func(dst []byte, f *ast.Field, sub ast.SelectionSet) ([]byte, error) {
		switch f.Name {
		case "type":
			return in.typeObject(dst, t, sub)
		case "defaultValue":
			if def == nil {
				return append(dst, "null"...), nil
			}
			return appendJSONString(dst, def.String()), nil
		}
		return in.member(dst, f.Name, name, description, dirs), nil
	})
}

func (in *introspection) directiveObject(dst []byte, d *ast.DirectiveDefinition, set ast.SelectionSet) ([]byte, error) {
	return in.object(dst, set, "__Directive", func(dst []byte, f *ast.Field, sub ast.SelectionSet) ([]byte, error) {
		switch f.Name {
		case "name":
			return appendJSONString(dst, d.Name), nil
		case "description":
			return appendNullableString(dst, d.Description), nil
		case "locations":
			locs := slices.DeleteFunc(slices.Clone(d.Locations), func(l ast.DirectiveLocation) bool {
				return !slices.Contains(directiveLocations, l)
			})
			return list(dst, len(locs), func(dst []byte, i int) ([]byte, error) {
				return appendJSONString(dst, string(locs[i])), nil
			})
		case "args":
			return in.args(dst, d.Arguments, in.includeDeprecated(f), sub)
		case "isRepeatable":
			return appendJSONBool(dst, d.IsRepeatable), nil
		}
		return append(dst, "null"...), nil
	})
}
