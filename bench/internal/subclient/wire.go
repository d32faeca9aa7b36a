// Package subclient is cmd/gateclient's engine: GraphQL subscriptions over
// graphql-transport-ws held by one epoll loop, each delivery's latency
// measured from the publish time the event carries; and what the client
// and cmd/gatebench say to each other.
//
// A client process prints "open N" once its N connections are subscribed,
// then "ready {...}" (a Ready) once every subscription has received a
// probe (an event with a negative seq). It then answers each line of its
// standard input: "count" with a Count, "report" with a Report of the
// deliveries since the last report (and starts counting afresh). It exits
// when its standard input ends.
package subclient

import (
	"fmt"
	"strconv"

	"github.com/evloop/evloop/bench/internal/hist"
)

// Query is the subscription every connection sends, with variables
// {"id": "<trigger>"}: it selects some of the event's fields.
const Query = `subscription Bench($id: ID!) { employeeUpdated(id: $id) { id seq sentAt details { forename } } }`

// Subject is the NATS subject of trigger k, as the bench schema renders
// employee.{{ args.id }}.
func Subject(k int) string { return "employee." + strconv.Itoa(k) }

// AppendEvent appends the event published for trigger k: seq is its number
// (negative for a probe), sentAt the Unix time of its publication in
// nanoseconds. surname and tag are not selected by Query.
func AppendEvent(dst []byte, k int, seq, sentAt int64) []byte {
	return fmt.Appendf(dst, `{"id":"%d","seq":%d,"sentAt":"%d","details":{"forename":"Ada","surname":"Lovelace"},"tag":"bench"}`, k, seq, sentAt)
}

// Ready is what a client says once every subscription received a probe:
// how many of the probes (one per subscription, the first) were not the
// event projected onto Query's selection, with one of them.
type Ready struct {
	Conns      int    `json:"conns"`
	Mismatched int    `json:"mismatched"`
	Example    string `json:"example,omitempty"`
}

// Count answers "count".
type Count struct {
	Received int64 `json:"received"`
	Closed   int   `json:"closed"`
}

// Report answers "report": the deliveries since the previous report.
type Report struct {
	Received int64 `json:"received"`
	// Events is, per event seq, how many of this client's subscriptions
	// got it and the latest of their latencies (ns): {seq, count, max}.
	Events [][3]int64 `json:"events"`
	// Latency is every delivery's latency, publish to receipt.
	Latency hist.Sparse `json:"latency"`
	Closed  int         `json:"closed"` // connections the server closed, in all
	Bad     int         `json:"bad"`    // messages that were not a valid next for the subscription
	Errors  int         `json:"errors"` // error and complete messages
	Example string      `json:"example,omitempty"`
}
