// Package gateway is a GraphQL subscription gateway on evloop's event
// loops, in the manner of Cosmo Router's event-driven federated
// subscriptions: a schema's subscription fields are bound to subjects of
// an event system by directives (@edfs__natsSubscribe,
// @edfs__redisSubscribe, with {{ args.x }} templates and
// @openfed__subscriptionFilter), its mutation fields publish events
// (@edfs__natsPublish, @edfs__redisPublish), and clients subscribe over
// WebSocket with graphql-ws's protocol (graphql-transport-ws) or the
// legacy one of subscriptions-transport-ws (graphql-ws). Mutations may
// also come as POST /graphql, answered as GraphQL-over-HTTP says: in
// application/graphql-response+json when the Accept field prefers it (a
// request that does not validate is then 400), else in application/json
// (such a request 200, its errors in the body). Queries are served for introspection
// (__schema, __type, __typename), over either, so that GraphiQL, Apollo's
// tools and code generators can read the schema; it is shown without the
// gateway's own directives and the types only they use, as Cosmo's
// router shows its client schema. The gateway resolves no other query.
//
// # Entities
//
// When a subscription's root type is a Federation entity (a type with
// @key), or a list of them, its events carry the key fields and the fields
// marked @external, as the entity of Cosmo's event-driven subgraph does;
// the other fields a subscription selects are fetched from
// Config.Upstream with _entities, one request per event for every entity
// in it (a list's each with a representation of its own) and every
// selection set of the trigger (each with its own arguments, under an
// alias of _entities of its own), on the worker pool, and merged into a
// copy of the event that is projected for the subscribers with that
// selection. A subscription that selects such a field twice with
// different arguments, at any depth (under two aliases, or within two
// aliases of one field), is refused: the event holds one value by the
// field's name. An upstream failure is reported in the next message's
// errors to the subscribers it concerns, and the subscription goes on: a
// request the upstream refuses whole (a selection it cannot validate) is
// asked again in parts, down to each selection alone, so that only the
// subscribers of the selection it refuses get its error.
// Config.ForwardHeaders names connection_init fields sent upstream as
// header fields; subscribers whose values differ get triggers of their
// own.
//
// # Goroutines
//
// Each client connection lives on an evloop loop, which owns its session:
// its messages are parsed and validated there, and its subscriptions'
// messages written there. One engine loop owns every trigger (one upstream
// subscription shared by all the subscribers whose provider, rendered
// subjects and root field are the same) and which subscribers it has. An
// event is decoded, filtered and projected onto each distinct selection
// set on a bounded worker pool, once per trigger and selection, and each
// client loop writes the one payload to its own subscribers. Sources
// deliver events on their own goroutines (one per NATS subscription, one
// per JetStream consumer, shared by the subscriptions reading it, and one
// per Redis pub/sub connection). An upstream subscription that ends by
// itself (its NATS or Redis connection closed for good, its JetStream
// consumer deleted, or gone when the connection came back) ends each of
// its operations with an error message, and the next subscription to the
// same subjects subscribes again. One whose connection is lost and comes
// back goes on, and its subscribers are not told: a JetStream
// subscription gets what was published meanwhile, once, when it is back;
// a core NATS or Redis one misses it.
//
// # Bounds
//
// A client's message is at most Config.MaxMessageSize; an operation's
// document has at most Config.MaxFields fields (500) nested at most
// Config.MaxDepth deep (100, fragments where they are spread), and its
// validation's pairwise comparison of the fields each selection gathers
// is bounded by MaxFields squared, checked before the validation, which
// one message could otherwise make hold a worker for minutes; a
// connection runs at most Config.MaxSubscriptions
// operations; a connection whose unsent messages stay past
// Config.MaxOutbound for 100 ms, or pass 4 times it, is closed with
// CloseSlowConsumer (1008), so a client that stops reading
// costs at most 4 times MaxOutbound (and one message) and never blocks a
// loop. A trigger keeps at most 4,096 events waiting to be resolved and
// drops the oldest past that (Stats.EventsDropped, and the log: once when
// it starts, then how many every 10 s while it goes on); it resolves its next
// event only while fewer than 64 of those before it are still being
// resolved or written by the loops, so a burst waits in its trigger's
// queue, not in the loops ahead of other triggers' messages.
//
// # Subprotocols
//
// The client's offer is matched against graphql-transport-ws first, then
// graphql-ws. A client that offers neither (or none) completes the
// handshake and is closed at once with 4406, as graphql-ws's server does.
package gateway
