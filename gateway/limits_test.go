package gateway

import (
	"fmt"
	"strings"
	"testing"
)

// A document past the bounds on fields or depth gets an error before it
// is validated: 20,000 fields in one message (which the validation took
// 43 s of a worker to compare pairwise), fields nested 102 deep, or 103
// deep through fragments, each spread within the one before. The
// connection goes on: the next subscription within the bounds is served.
// So does one within them whose validation would compare fields pairwise
// too many times: 400 fields under 20 nested inline fragments, or a
// fragment of 400 reached by 10 operations. Fragments spread many times
// count once, as the validation compares two fragments once: 31 of them,
// each spreading the one before twice, are within the bounds. A
// gateway's own bounds replace the defaults.
func TestDocumentLimits(t *testing.T) {
	var chain strings.Builder
	chain.WriteString("subscription { employeeUpdated(id: 1) { ...F0 } } ")
	for i := range 101 {
		fmt.Fprintf(&chain, "fragment F%d on Employee { a { ...F%d } } ", i, i+1)
	}
	chain.WriteString("fragment F101 on Employee { b }")
	deep := "subscription { employeeUpdated(id: 1) { " + strings.Repeat("a { ", 100) + "b" + strings.Repeat(" }", 100) + " } }"
	for _, tc := range []struct {
		name, query, want string
	}{
		{"20,000 fields", "subscription { employeeUpdated(id: 1) { " + strings.Repeat("id ", 20000) + "} }",
			"The document has 20001 fields, past this gateway's limit of 500."},
		{"102 deep", deep, "The document nests fields 102 deep, fragments where they are spread, past this gateway's limit of 100."},
		{"103 deep through fragments", chain.String(),
			"The document nests fields 103 deep, fragments where they are spread, past this gateway's limit of 100."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, src, addr := startGateway(t, nil)
			c := dialSubscribe(t, addr, "1", tc.query)
			if got, want := c.readRaw(), `{"id":"1","type":"error","payload":[{"message":"`+tc.want+`"}]}`; got != want {
				t.Fatalf("got %s; want %s", got, want)
			}
			c.send(`{"id":"2","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { id } }"}}`)
			waitFor(t, "the subscription after", func() bool { return src.Subscribers("employee.1") == 1 })
		})
	}
	t.Run("costly to validate", func(t *testing.T) {
		_, src, addr := startGateway(t, nil)
		// 400 fields under 20 nested inline fragments: each compares them
		// all pairwise.
		nested := "subscription { employeeUpdated(id: 1) { " + strings.Repeat("... { ", 20) + strings.Repeat("id ", 400) + strings.Repeat("} ", 20) + "} }"
		// A fragment of 400 fields reached by 10 operations: walked for
		// each.
		var ops strings.Builder
		for i := range 10 {
			fmt.Fprintf(&ops, "subscription S%d { ...F } ", i)
		}
		ops.WriteString("fragment F on Subscription { employeeUpdated(id: 1) { " + strings.Repeat("id ", 400) + "} }")
		c := dial(t, addr, ProtocolTransportWS)
		c.init()
		for id, q := range map[string]string{"nested": nested, "operations": ops.String()} {
			c.send(fmt.Sprintf(`{"id":%q,"type":"subscribe","payload":{"query":%q,"operationName":"S0"}}`, id, q))
			if got := c.readRaw(); !strings.Contains(got, `"id":"`+id+`","type":"error"`) || !strings.Contains(got, "comparisons to validate, past this gateway's limit of 250000 (500 fields in one selection).") {
				t.Errorf("%s: %s; want an error saying it would cost too much to validate", id, got)
			}
		}
		c.send(`{"id":"3","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { id } }"}}`)
		waitFor(t, "the subscription after", func() bool { return src.Subscribers("employee.1") == 1 })
	})
	t.Run("fragments spread many times", func(t *testing.T) {
		var bomb strings.Builder
		bomb.WriteString("subscription { employeeUpdated(id: 1) { ...F30 } } fragment F0 on Employee { id } ")
		for i := 1; i <= 30; i++ {
			fmt.Fprintf(&bomb, "fragment F%d on Employee { ...F%d ...F%d } ", i, i-1, i-1)
		}
		_, src, addr := startGateway(t, nil)
		dialSubscribe(t, addr, "1", bomb.String())
		waitFor(t, "the subscription", func() bool { return src.Subscribers("employee.1") == 1 })
	})
	t.Run("the gateway's own", func(t *testing.T) {
		_, src, addr := startGateway(t, func(c *Config) { c.MaxFields, c.MaxDepth = 3, 2 })
		c := dialSubscribe(t, addr, "1", "subscription { employeeUpdated(id: 1) { id name id } }")
		if got := c.readRaw(); !strings.Contains(got, "has 4 fields") || !strings.Contains(got, "limit of 3") {
			t.Fatalf("4 fields of 3: %s", got)
		}
		c.send(`{"id":"2","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { details { forename } } }"}}`)
		if got := c.readRaw(); !strings.Contains(got, "nests fields 3 deep") || !strings.Contains(got, "limit of 2") {
			t.Fatalf("3 deep of 2: %s", got)
		}
		c.send(`{"id":"3","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { id name } }"}}`)
		waitFor(t, "a subscription within them", func() bool { return src.Subscribers("employee.1") == 1 })
	})
}
