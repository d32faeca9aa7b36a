package gateway

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// The definitions a Cosmo event-driven subgraph uses. A schema may declare
// them itself (Cosmo's examples do); whatever it leaves out is added, so
// that a schema written for Cosmo loads unchanged.
var preludeDefinitions = []struct{ name, sdl string }{
	{"@edfs__natsSubscribe", `directive @edfs__natsSubscribe(subjects: [String!]!, providerId: String! = "default", streamConfiguration: edfs__NatsStreamConfiguration) on FIELD_DEFINITION`},
	{"edfs__NatsStreamConfiguration", `input edfs__NatsStreamConfiguration { consumerInactiveThreshold: Int! = 30 consumerName: String! streamName: String! }`},
	{"@edfs__natsPublish", `directive @edfs__natsPublish(subject: String!, providerId: String! = "default") on FIELD_DEFINITION`},
	{"@edfs__natsRequest", `directive @edfs__natsRequest(subject: String!, providerId: String! = "default") on FIELD_DEFINITION`},
	{"@edfs__redisSubscribe", `directive @edfs__redisSubscribe(channels: [String!]!, providerId: String! = "default") on FIELD_DEFINITION`},
	{"@edfs__redisPublish", `directive @edfs__redisPublish(channel: String!, providerId: String! = "default") on FIELD_DEFINITION`},
	{"@edfs__kafkaSubscribe", `directive @edfs__kafkaSubscribe(topics: [String!]!, providerId: String! = "default") on FIELD_DEFINITION`},
	{"@edfs__kafkaPublish", `directive @edfs__kafkaPublish(topic: String!, providerId: String! = "default") on FIELD_DEFINITION`},
	{"edfs__PublishResult", `type edfs__PublishResult { success: Boolean! }`},
	{"@openfed__subscriptionFilter", `directive @openfed__subscriptionFilter(condition: openfed__SubscriptionFilterCondition!) on FIELD_DEFINITION`},
	{"openfed__SubscriptionFilterValue", `scalar openfed__SubscriptionFilterValue`},
	{"openfed__SubscriptionFieldCondition", `input openfed__SubscriptionFieldCondition { fieldPath: String! values: [openfed__SubscriptionFilterValue]! }`},
	{"openfed__SubscriptionFilterCondition", `input openfed__SubscriptionFilterCondition { AND: [openfed__SubscriptionFilterCondition!] IN: openfed__SubscriptionFieldCondition NOT: openfed__SubscriptionFilterCondition OR: [openfed__SubscriptionFilterCondition!] }`},
	// Apollo Federation's directives, which entity types in a subgraph carry.
	{"openfed__FieldSet", `scalar openfed__FieldSet`},
	{"@key", `directive @key(fields: openfed__FieldSet!, resolvable: Boolean = true) repeatable on OBJECT | INTERFACE`},
	{"@external", `directive @external on FIELD_DEFINITION | OBJECT`},
	{"@requires", `directive @requires(fields: openfed__FieldSet!) on FIELD_DEFINITION`},
	{"@provides", `directive @provides(fields: openfed__FieldSet!) on FIELD_DEFINITION`},
	{"@shareable", `directive @shareable repeatable on FIELD_DEFINITION | OBJECT`},
	{"@extends", `directive @extends on OBJECT | INTERFACE`},
	{"@tag", `directive @tag(name: String!) repeatable on FIELD_DEFINITION | OBJECT | INTERFACE | UNION | ARGUMENT_DEFINITION | SCALAR | ENUM | ENUM_VALUE | INPUT_OBJECT | INPUT_FIELD_DEFINITION`},
	{"@inaccessible", `directive @inaccessible on FIELD_DEFINITION | OBJECT | INTERFACE | UNION | ARGUMENT_DEFINITION | SCALAR | ENUM | ENUM_VALUE | INPUT_OBJECT | INPUT_FIELD_DEFINITION`},
	{"@override", `directive @override(from: String!) on FIELD_DEFINITION`},
	{"@interfaceObject", `directive @interfaceObject on OBJECT`},
}

// Kind is the kind of event system a field is bound to.
type Kind string

// The kinds of event system a schema's directives name.
const (
	NATS  Kind = "nats"
	Redis Kind = "redis"
)

// binding is what one root field's event directive says: where its events
// come from (a subscription) or go to (a mutation).
type binding struct {
	field    *ast.FieldDefinition
	kind     Kind
	provider string
	subjects []*template   // subscribe: subjects or channels; publish: one
	stream   *StreamConfig // NATS JetStream consumer, if configured
	filter   *ast.Value    // @openfed__subscriptionFilter's condition
}

// StreamConfig is a subscription's JetStream consumer, from the
// streamConfiguration argument of @edfs__natsSubscribe.
type StreamConfig struct {
	StreamName        string
	ConsumerName      string
	InactiveThreshold int // seconds
}

// Schema is a GraphQL schema whose subscription and mutation fields carry
// Cosmo's event directives. It is read-only once loaded: any goroutine may
// use it.
type Schema struct {
	ast  *ast.Schema
	subs map[string]*binding // Subscription fields by name
	pubs map[string]*binding // Mutation fields by name
}

// LoadSchemaFile reads and parses the SDL file at path.
func LoadSchemaFile(path string) (*Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseSchema(path, string(b))
}

// ParseSchema parses SDL. Subscription fields must carry
// @edfs__natsSubscribe or @edfs__redisSubscribe, mutation fields
// @edfs__natsPublish or @edfs__redisPublish (and return
// edfs__PublishResult!); every template in them must name the field's
// arguments. The directives' definitions, and Apollo Federation's, are
// added when the SDL does not declare them.
func ParseSchema(sdl string) (*Schema, error) { return parseSchema("schema", sdl) }

func parseSchema(name, sdl string) (*Schema, error) {
	doc, err := parser.ParseSchema(&ast.Source{Name: name, Input: sdl})
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, d := range doc.Directives {
		declared["@"+d.Name] = true
	}
	for _, d := range doc.Definitions {
		declared[d.Name] = true
	}
	var prelude strings.Builder
	for _, d := range preludeDefinitions {
		if !declared[d.name] {
			prelude.WriteString(d.sdl)
			prelude.WriteByte('\n')
		}
	}
	schema, err := gqlparser.LoadSchema(
		&ast.Source{Name: "prelude", Input: prelude.String(), BuiltIn: true},
		&ast.Source{Name: name, Input: sdl},
	)
	if err != nil {
		return nil, err
	}
	s := &Schema{ast: schema, subs: map[string]*binding{}, pubs: map[string]*binding{}}
	if schema.Subscription != nil {
		for _, f := range schema.Subscription.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			b, err := subscribeBinding(f)
			if err != nil {
				return nil, fmt.Errorf("field Subscription.%s: %w", f.Name, err)
			}
			s.subs[f.Name] = b
		}
	}
	if schema.Mutation != nil {
		for _, f := range schema.Mutation.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			b, err := publishBinding(f)
			if err != nil {
				return nil, fmt.Errorf("field Mutation.%s: %w", f.Name, err)
			}
			s.pubs[f.Name] = b
		}
	}
	if len(s.subs) == 0 {
		return nil, errors.New("the schema has no Subscription field to serve")
	}
	return s, nil
}

func subscribeBinding(f *ast.FieldDefinition) (*binding, error) {
	b := &binding{field: f}
	var list string
	switch d := f.Directives; {
	case d.ForName("edfs__natsSubscribe") != nil:
		b.kind, list = NATS, "subjects"
		dir := d.ForName("edfs__natsSubscribe")
		if sc := dir.Arguments.ForName("streamConfiguration"); sc != nil {
			cfg, err := streamConfig(sc.Value)
			if err != nil {
				return nil, err
			}
			b.stream = cfg
		}
	case d.ForName("edfs__redisSubscribe") != nil:
		b.kind, list = Redis, "channels"
	case d.ForName("edfs__kafkaSubscribe") != nil:
		return nil, errors.New("@edfs__kafkaSubscribe: Kafka is not supported")
	default:
		return nil, errors.New("no @edfs__natsSubscribe or @edfs__redisSubscribe: the gateway has nothing to resolve it with")
	}
	dir := f.Directives.ForName("edfs__" + string(b.kind) + "Subscribe")
	b.provider = stringArg(dir, "providerId", "default")
	arg := dir.Arguments.ForName(list)
	if arg == nil || arg.Value.Kind != ast.ListValue || len(arg.Value.Children) == 0 {
		return nil, fmt.Errorf("@%s needs a non-empty list of %s", dir.Name, list)
	}
	for _, c := range arg.Value.Children {
		if c.Value.Kind != ast.StringValue {
			return nil, fmt.Errorf("@%s: %s must be strings", dir.Name, list)
		}
		t, err := fieldTemplate(f, c.Value.Raw)
		if err != nil {
			return nil, err
		}
		if b.kind == NATS {
			if err := checkSubjectTemplate(t); err != nil {
				return nil, err
			}
		}
		b.subjects = append(b.subjects, t)
	}
	if fd := f.Directives.ForName("openfed__subscriptionFilter"); fd != nil {
		if c := fd.Arguments.ForName("condition"); c != nil {
			b.filter = c.Value
			// Compiled once with no arguments to find mistakes at load;
			// placeholders are checked against the field's arguments.
			if err := checkFilterTemplates(f, c.Value); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

func publishBinding(f *ast.FieldDefinition) (*binding, error) {
	b := &binding{field: f}
	var arg string
	switch d := f.Directives; {
	case d.ForName("edfs__natsPublish") != nil:
		b.kind, arg = NATS, "subject"
	case d.ForName("edfs__redisPublish") != nil:
		b.kind, arg = Redis, "channel"
	case d.ForName("edfs__natsRequest") != nil:
		return nil, errors.New("@edfs__natsRequest is not supported")
	default:
		return nil, errors.New("no @edfs__natsPublish or @edfs__redisPublish: the gateway has nothing to resolve it with")
	}
	if t := f.Type; t.NamedType != "edfs__PublishResult" || !t.NonNull {
		return nil, fmt.Errorf("a publishing field must return edfs__PublishResult!, not %s", t)
	}
	dir := f.Directives.ForName("edfs__" + string(b.kind) + "Publish")
	b.provider = stringArg(dir, "providerId", "default")
	a := dir.Arguments.ForName(arg)
	if a == nil || a.Value.Kind != ast.StringValue {
		return nil, fmt.Errorf("@%s needs a %s string", dir.Name, arg)
	}
	t, err := fieldTemplate(f, a.Value.Raw)
	if err != nil {
		return nil, err
	}
	if b.kind == NATS {
		if err := checkSubjectTemplate(t); err != nil {
			return nil, err
		}
	}
	b.subjects = []*template{t}
	return b, nil
}

// fieldTemplate parses s and checks that its placeholders name arguments
// of f (and, for nested paths, fields of input objects).
func fieldTemplate(f *ast.FieldDefinition, s string) (*template, error) {
	t, err := parseTemplate(s)
	if err != nil {
		return nil, err
	}
	for _, p := range t.paths() {
		if len(p) == 0 || f.Arguments.ForName(p[0]) == nil {
			return nil, fmt.Errorf("%q names no argument of %s", s, f.Name)
		}
	}
	return t, nil
}

// checkFilterTemplates checks the placeholders in a filter condition's
// values.
func checkFilterTemplates(f *ast.FieldDefinition, v *ast.Value) error {
	if v == nil {
		return nil
	}
	if v.Kind == ast.StringValue && strings.Contains(v.Raw, "{{") {
		_, err := fieldTemplate(f, v.Raw)
		return err
	}
	for _, c := range v.Children {
		if err := checkFilterTemplates(f, c.Value); err != nil {
			return err
		}
	}
	return nil
}

func streamConfig(v *ast.Value) (*StreamConfig, error) {
	if v.Kind != ast.ObjectValue {
		return nil, errors.New("streamConfiguration must be an object")
	}
	cfg := &StreamConfig{InactiveThreshold: 30}
	for _, c := range v.Children {
		switch c.Name {
		case "streamName":
			cfg.StreamName = c.Value.Raw
		case "consumerName":
			cfg.ConsumerName = c.Value.Raw
		case "consumerInactiveThreshold":
			var n int
			if _, err := fmt.Sscan(c.Value.Raw, &n); err != nil || n < 0 {
				return nil, fmt.Errorf("consumerInactiveThreshold %q is not a number of seconds", c.Value.Raw)
			}
			cfg.InactiveThreshold = n
		}
	}
	if cfg.StreamName == "" || cfg.ConsumerName == "" {
		return nil, errors.New("streamConfiguration needs streamName and consumerName")
	}
	return cfg, nil
}

func stringArg(d *ast.Directive, name, def string) string {
	if a := d.Arguments.ForName(name); a != nil && a.Value.Kind == ast.StringValue {
		return a.Value.Raw
	}
	return def
}

// providers lists the (kind, provider) pairs the schema's fields use, in
// a stable order.
func (s *Schema) providers() []providerKey {
	seen := map[providerKey]bool{}
	for _, m := range []map[string]*binding{s.subs, s.pubs} {
		for _, b := range m {
			seen[providerKey{b.kind, b.provider}] = true
		}
	}
	keys := make([]providerKey, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b providerKey) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

// providerKey names one event system: a kind and a provider ID.
type providerKey struct {
	kind Kind
	id   string
}

func (k providerKey) String() string { return string(k.kind) + ":" + k.id }
