package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// subscribeDirective is the one event directive the baseline serves,
// declared for schemas that do not declare it themselves.
const subscribeDirective = `directive @edfs__natsSubscribe(subjects: [String!]!, providerId: String! = "default") on FIELD_DEFINITION`

// schema is the loaded schema and its subscription fields' subjects.
// Read-only once loaded.
type schema struct {
	ast  *ast.Schema
	subs map[string][]template // subject templates by Subscription field

	mu   sync.Mutex
	docs map[string]*parsed // validated documents by query text, bounded
}

type parsed struct {
	doc  *ast.QueryDocument
	errs gqlerror.List
}

func loadSchema(sdl string) (*schema, error) {
	var srcs []*ast.Source
	if !strings.Contains(sdl, "directive @edfs__natsSubscribe") {
		srcs = append(srcs, &ast.Source{Name: "directives", Input: subscribeDirective, BuiltIn: true})
	}
	srcs = append(srcs, &ast.Source{Name: "schema", Input: sdl})
	sa, err := gqlparser.LoadSchema(srcs...)
	if err != nil {
		return nil, err
	}
	s := &schema{ast: sa, subs: map[string][]template{}, docs: map[string]*parsed{}}
	if sa.Subscription == nil {
		return nil, errors.New("no Subscription type")
	}
	for _, f := range sa.Subscription.Fields {
		d := f.Directives.ForName("edfs__natsSubscribe")
		if d == nil {
			continue
		}
		arg := d.Arguments.ForName("subjects")
		if arg == nil || arg.Value == nil {
			return nil, fmt.Errorf("%s: @edfs__natsSubscribe without subjects", f.Name)
		}
		for _, c := range arg.Value.Children {
			s.subs[f.Name] = append(s.subs[f.Name], parseTemplate(c.Value.Raw))
		}
	}
	return s, nil
}

// template is a subject with {{ args.x }} placeholders: literal, argument
// name, literal, argument name, ..., literal.
type template []string

func parseTemplate(s string) template {
	var t template
	for {
		i := strings.Index(s, "{{")
		j := strings.Index(s, "}}")
		if i < 0 || j < i {
			return append(t, s)
		}
		name := strings.TrimPrefix(strings.TrimSpace(s[i+2:j]), "args.")
		t = append(t, s[:i], name)
		s = s[j+2:]
	}
}

func (t template) render(args map[string]any) (string, error) {
	var b strings.Builder
	for i, p := range t {
		if i%2 == 0 {
			b.WriteString(p)
			continue
		}
		v, ok := args[p]
		if !ok || v == nil {
			return "", fmt.Errorf("argument %s is null", p)
		}
		fmt.Fprint(&b, v)
	}
	return b.String(), nil
}

// request is a subscribe message's payload.
type request struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
}

// operation is a validated subscription: its root field (with the
// selection set to project events onto) and its rendered subjects.
type operation struct {
	root     *ast.Field
	subjects []string
}

// prepare parses (once per query text), validates and binds r.
func (s *schema) prepare(r *request) (*operation, gqlerror.List) {
	s.mu.Lock()
	p := s.docs[r.Query]
	s.mu.Unlock()
	if p == nil {
		p = &parsed{}
		doc, err := parser.ParseQuery(&ast.Source{Input: r.Query})
		if err != nil {
			p.errs = gqlerror.List{gqlerror.Wrap(err)}
		} else if errs := validator.ValidateWithRules(s.ast, doc, nil); len(errs) > 0 {
			p.errs = errs
		} else {
			p.doc = doc
		}
		s.mu.Lock()
		if len(s.docs) >= 1024 {
			clear(s.docs)
		}
		s.docs[r.Query] = p
		s.mu.Unlock()
	}
	if p.errs != nil {
		return nil, p.errs
	}
	var op *ast.OperationDefinition
	if r.OperationName != "" {
		op = p.doc.Operations.ForName(r.OperationName)
	} else if len(p.doc.Operations) == 1 {
		op = p.doc.Operations[0]
	}
	if op == nil || op.Operation != ast.Subscription {
		return nil, gqlerror.List{gqlerror.Errorf("one subscription operation is served")}
	}
	if len(op.SelectionSet) != 1 {
		return nil, gqlerror.List{gqlerror.Errorf("a subscription must select one root field")}
	}
	root, ok := op.SelectionSet[0].(*ast.Field)
	if !ok {
		return nil, gqlerror.List{gqlerror.Errorf("a subscription must select one root field")}
	}
	tmpls, ok := s.subs[root.Name]
	if !ok {
		return nil, gqlerror.List{gqlerror.Errorf("field %q has no event binding", root.Name)}
	}
	vars, err := validator.VariableValues(s.ast, op, r.Variables)
	if err != nil {
		return nil, gqlerror.List{gqlerror.Wrap(err)}
	}
	o := &operation{root: root}
	args := root.ArgumentMap(vars)
	for _, t := range tmpls {
		subj, err := t.render(args)
		if err != nil {
			return nil, gqlerror.List{gqlerror.Errorf("%s", err.Error())}
		}
		o.subjects = append(o.subjects, subj)
	}
	return o, nil
}

// triggerKey is what makes two subscriptions share a trigger.
func (o *operation) triggerKey() string {
	return o.root.Name + "\x00" + strings.Join(slices.Sorted(slices.Values(o.subjects)), "\x00")
}

// appendResult appends the execution result of an event: the event
// projected onto the root field's selection set.
func (o *operation) appendResult(dst []byte, event any) []byte {
	dst = append(dst, `{"data":{`...)
	dst = appendKey(dst, o.root.Alias)
	dst = appendValue(dst, o.root, event)
	return append(dst, "}}"...)
}

// appendValue appends v as field f selects it: leaves as they are,
// objects (and lists of them) projected onto f's selection set.
func appendValue(dst []byte, f *ast.Field, v any) []byte {
	if len(f.SelectionSet) == 0 || v == nil {
		b, err := json.Marshal(v)
		if err != nil {
			return append(dst, "null"...)
		}
		return append(dst, b...)
	}
	switch v := v.(type) {
	case []any:
		dst = append(dst, '[')
		for i, x := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, f, x)
		}
		return append(dst, ']')
	case map[string]any:
		dst = append(dst, '{')
		dst, _ = appendObject(dst, f.SelectionSet, f.Definition.Type.Name(), v, false)
		return append(dst, '}')
	}
	return append(dst, "null"...)
}

// appendObject appends obj's fields that set selects, fragments included;
// more tells whether a field was written before, and is returned updated.
func appendObject(dst []byte, set ast.SelectionSet, typename string, obj map[string]any, more bool) ([]byte, bool) {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			if more {
				dst = append(dst, ',')
			}
			more = true
			dst = appendKey(dst, sel.Alias)
			if sel.Name == "__typename" {
				dst = appendValue(dst, sel, typename)
			} else {
				dst = appendValue(dst, sel, obj[sel.Name])
			}
		case *ast.InlineFragment:
			dst, more = appendObject(dst, sel.SelectionSet, typename, obj, more)
		case *ast.FragmentSpread:
			if sel.Definition != nil {
				dst, more = appendObject(dst, sel.Definition.SelectionSet, typename, obj, more)
			}
		}
	}
	return dst, more
}

func appendKey(dst []byte, k string) []byte {
	b, _ := json.Marshal(k)
	dst = append(dst, b...)
	return append(dst, ':')
}
