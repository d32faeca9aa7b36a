package gateway

import (
	"encoding/json"
	"testing"
)

// A client's message, whatever its bytes, is either refused with an error
// or yields a request whose id is a non-empty string and whose query is a
// string; its type is the member named "type" exactly, and the pong
// echoing its payload is JSON.
func FuzzClientMessage(f *testing.F) {
	for _, s := range []string{
		`{"type":"connection_init"}`,
		`{"type":"connection_init","payload":{"token":"x"}}`,
		`{"id":"1","type":"subscribe","payload":{"query":"subscription { all { id } }","variables":{"a":1},"operationName":null}}`,
		`{"id":"1","type":"start","payload":{"query":"{ x }","extensions":[]}}`,
		`{"id":1,"type":"subscribe"}`,
		`{"id":"","type":"complete"}`,
		`{"type":"ping","payload":"x"}`,
		`[]`, `null`, `{`, `{"type":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMessage(data)
		if err != nil {
			return
		}
		var fields map[string]any
		json.Unmarshal(data, &fields)
		if typ, _ := fields["type"].(string); typ != m.Type {
			t.Fatalf("parseMessage(%q) type %q; want %q", data, m.Type, typ)
		}
		if pong := appendPong(nil, m.Payload); !json.Valid(pong) {
			t.Fatalf("appendPong for %q = %q; not JSON", data, pong)
		}
		payloadIsObject(m.Payload)
		if id, err := m.id(); err == nil && id == "" {
			t.Fatalf("id() = \"\", nil for %q", data)
		}
		id, r, err := m.subscribe()
		if err != nil {
			return
		}
		if id == "" || r == nil {
			t.Fatalf("subscribe() = %q, %v for %q", id, r, data)
		}
		normalizeVariables(r.Variables)
	})
}

// Any SDL is loaded or refused with an error.
func FuzzParseSchema(f *testing.F) {
	f.Add(testSchema)
	f.Add(redisSchema)
	f.Add(`type Subscription { x(a: String): Int @edfs__natsSubscribe(subjects: ["a.{{ args.a }}"], streamConfiguration: {streamName: "s", consumerName: "c"}) }`)
	f.Add(`type Mutation { p: edfs__PublishResult! @edfs__natsPublish(subject: "x") } type Subscription { x: Int @edfs__redisSubscribe(channels: []) }`)
	f.Fuzz(func(t *testing.T, sdl string) {
		s, err := ParseSchema(sdl)
		if err == nil && len(s.subs) == 0 {
			t.Fatalf("ParseSchema(%q) served no subscription field", sdl)
		}
	})
}
