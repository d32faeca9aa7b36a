package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/ws"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The subprotocols, in the order the gateway prefers them.
const (
	// ProtocolTransportWS is graphql-ws's protocol (PROTOCOL.md of
	// enisdenjo/graphql-ws).
	ProtocolTransportWS = "graphql-transport-ws"
	// ProtocolLegacyWS is subscriptions-transport-ws's protocol, which
	// Apollo's older clients speak.
	ProtocolLegacyWS = "graphql-ws"
)

// Close codes. The 44xx codes are graphql-ws's; CloseSlowConsumer is the
// gateway's own.
const (
	CloseBadRequest               = 4400 // a message that is not valid in the protocol
	CloseUnauthorized             = 4401 // subscribe before connection_ack
	CloseForbidden                = 4403 // connection_init refused by authentication
	CloseSubprotocolNotAcceptable = 4406 // the client offered neither subprotocol
	CloseInitTimeout              = 4408 // no connection_init in time
	CloseSubscriberExists         = 4409 // subscribe with an id in use
	CloseTooManyInits             = 4429 // a second connection_init
	CloseInternalError            = 4500
	// CloseSlowConsumer closes a connection that does not read its
	// messages fast enough: more than Config.MaxOutbound bytes are queued
	// for it. The code is RFC 6455's "policy violation".
	CloseSlowConsumer = ws.ClosePolicyViolation
	// CloseGoingAway is sent to every client when the gateway shuts down,
	// after each subscription got complete.
	CloseGoingAway = ws.CloseGoingAway
)

// protocol is a session's subprotocol.
type protocol uint8

const (
	transportWS protocol = iota + 1
	legacyWS
)

// session is one client connection's state. It is owned by the
// connection's loop.
type session struct {
	g     *Gateway
	wc    *ws.Conn
	proto protocol
	acked bool
	init  bool          // connection_init received
	timer evloop.Timer  // connection_init timeout, or the legacy keep-alive
	subs  []*subscriber // operations under way, in the order they started
	gone  bool          // closing or closed: nothing more is sent
	// watching is set while the outbound queue, found past MaxOutbound,
	// is given slowGrace to drain.
	watching bool
	// headers are the connection_init fields forwarded to the upstream
	// (Config.ForwardHeaders).
	headers map[string]string
}

// subscriber is one subscription of a session. done and the session's
// list are the connection loop's; t and g are the engine's. What
// subscribers with the same request share (projection, subjects, filter,
// trigger) is in their one operation.
type subscriber struct {
	s       *session
	id      string
	op      *operation
	trigger string // op.trigger, or with the forwarded header fields
	loop    int
	done    bool // ended on the loop's side
	joined  bool // handed to the engine

	t *trigger
	g *group
}

// OnOpen implements ws.Handler.
func (g *Gateway) OnOpen(wc *ws.Conn) {
	s := &session{g: g, wc: wc}
	wc.SetContext(s)
	g.stats.Connections.Add(1)
	g.sessions.add(s)
	switch wc.Subprotocol() {
	case ProtocolTransportWS:
		s.proto = transportWS
	case ProtocolLegacyWS:
		s.proto = legacyWS
	default:
		// As graphql-ws's server does: the handshake succeeds, and the
		// connection is closed at once with 4406.
		s.closeWith(CloseSubprotocolNotAcceptable, "Subprotocol not acceptable")
		return
	}
	s.timer = wc.Conn().AfterFunc(g.cfg.InitTimeout, func() {
		if !s.init {
			s.closeWith(CloseInitTimeout, "Connection initialisation timeout")
		}
	})
}

// OnClose implements ws.Handler.
func (g *Gateway) OnClose(wc *ws.Conn, err error) {
	s, _ := wc.Context().(*session)
	if s == nil {
		return
	}
	s.gone = true
	s.timer.Stop()
	for _, sub := range slices.Clone(s.subs) {
		s.end(sub)
	}
	g.sessions.remove(s)
	g.stats.Connections.Add(-1)
}

// OnMessage implements ws.Handler.
func (g *Gateway) OnMessage(wc *ws.Conn, _ ws.Opcode, data []byte) {
	s, _ := wc.Context().(*session)
	if s == nil || s.gone {
		return
	}
	m, err := parseMessage(data)
	if s.proto == legacyWS {
		if err != nil {
			// The old protocol ignores a message it cannot parse, and
			// says so, keeping the connection.
			s.send(appendLegacyError(nil, "connection_error", "", "Invalid message received: "+err.Error()))
			return
		}
		s.legacy(&m)
		return
	}
	if err != nil {
		s.closeWith(CloseBadRequest, "Invalid message received: "+err.Error())
		return
	}
	switch m.Type {
	case "connection_init":
		if !payloadIsObject(m.Payload) {
			s.closeWith(CloseBadRequest, `"connection_init" message expects the 'payload' property to be an object or nullish or missing`)
			return
		}
		if s.init {
			s.closeWith(CloseTooManyInits, "Too many initialisation requests")
			return
		}
		s.init = true
		s.timer.Stop()
		if !s.authenticate(m.Payload) {
			s.closeWith(CloseForbidden, "Forbidden")
			return
		}
		s.acked = true
		s.send([]byte(`{"type":"connection_ack"}`))
	case "ping":
		if !payloadIsObject(m.Payload) {
			s.closeWith(CloseBadRequest, `"ping" message expects the 'payload' property to be an object or nullish or missing`)
			return
		}
		s.send(appendPong(nil, m.Payload))
	case "pong":
		if !payloadIsObject(m.Payload) {
			s.closeWith(CloseBadRequest, `"pong" message expects the 'payload' property to be an object or nullish or missing`)
		}
	case "subscribe":
		id, r, err := m.subscribe()
		if err != nil {
			s.closeWith(CloseBadRequest, err.Error())
			return
		}
		if !s.acked {
			s.closeWith(CloseUnauthorized, "Unauthorized")
			return
		}
		if s.find(id) != nil {
			s.closeWith(CloseSubscriberExists, "Subscriber for "+id+" already exists")
			return
		}
		s.start(id, r, m.Payload)
	case "complete":
		id, err := m.id()
		if err != nil {
			s.closeWith(CloseBadRequest, err.Error())
			return
		}
		if sub := s.find(id); sub != nil {
			s.end(sub)
		}
	case "connection_ack", "next", "error":
		s.closeWith(CloseBadRequest, "Unexpected message of type "+m.Type+" received")
	default:
		s.closeWith(CloseBadRequest, "Invalid message 'type' property "+strconv.Quote(m.Type))
	}
}

// legacy handles a message of subscriptions-transport-ws's protocol.
func (s *session) legacy(m *message) {
	switch m.Type {
	case "connection_init":
		if s.init {
			return // the old server answers each; once is enough
		}
		s.init = true
		s.timer.Stop()
		if !payloadIsObject(m.Payload) || !s.authenticate(m.Payload) {
			s.send([]byte(`{"type":"connection_error","payload":{"message":"Forbidden"}}`))
			s.closeWith(CloseForbidden, "Forbidden")
			return
		}
		s.acked = true
		s.send([]byte(`{"type":"connection_ack"}`))
		s.keepAlive()
	case "start":
		id, r, err := m.subscribe()
		if err != nil {
			s.send(s.appendError(nil, idOr(m), gqlerror.List{gqlerror.Errorf("%s", err.Error())}))
			return
		}
		if !s.acked {
			s.send(s.appendError(nil, id, gqlerror.List{gqlerror.Errorf("connection not initialised: send connection_init first")}))
			return
		}
		if old := s.find(id); old != nil {
			s.end(old) // the old server replaces an operation with the same id
		}
		s.start(id, r, m.Payload)
	case "stop":
		if id, err := m.id(); err == nil {
			if sub := s.find(id); sub != nil {
				s.end(sub)
				s.send(s.appendComplete(nil, id))
			}
		}
	case "connection_terminate":
		s.closeWith(ws.CloseNormal, "")
	default:
		s.send(appendLegacyError(nil, "error", idOr(m), "Invalid message type!"))
	}
}

// keepAlive sends the legacy protocol's "ka" now and every KeepAlive.
func (s *session) keepAlive() {
	if s.gone {
		return
	}
	s.send([]byte(`{"type":"ka"}`))
	s.timer = s.wc.Conn().AfterFunc(s.g.cfg.KeepAlive, s.keepAlive)
}

// authenticate checks connection_init's payload with the configured
// Authenticate function.
func (s *session) authenticate(raw json.RawMessage) bool {
	var p map[string]any
	if len(raw) > 0 {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		d.Decode(&p)
	}
	s.headers = forwarded(s.g.cfg.ForwardHeaders, p)
	if s.g.cfg.Authenticate == nil {
		return true
	}
	return s.g.cfg.Authenticate(p) == nil
}

// start runs a request under id: a subscription joins its trigger, a
// mutation publishes, an introspection query is answered. The id is taken at once, so that a complete for it
// cancels the operation while it is being prepared. A request seen before
// (the same payload, byte for byte) reuses its operation; a document not
// seen before is parsed, validated and prepared on the worker pool, off
// the loop, as is a query.
func (s *session) start(id string, r *request, raw []byte) {
	if len(s.subs) >= s.g.cfg.MaxSubscriptions {
		s.send(s.appendError(nil, id, gqlerror.List{gqlerror.Errorf("too many operations on this connection (at most %d)", s.g.cfg.MaxSubscriptions)}))
		return
	}
	sub := &subscriber{s: s, id: id, loop: s.wc.Conn().Loop()}
	s.subs = append(s.subs, sub)
	if op, ok := s.g.ops.get(string(raw)); ok {
		s.run(sub, op)
		return
	}
	if p, ok := s.g.docs.get(r.Query); ok && !hasQuery(p) {
		op, errs := s.g.prepare(r)
		s.prepared(sub, raw, op, errs)
		return
	}
	// A document not seen before, or a query, whose answer (introspection)
	// may take a while to make: off the loop.
	s.g.pool.Submit(func() {
		op, errs := s.g.prepare(r)
		s.wc.Submit(func() { s.prepared(sub, raw, op, errs) })
	})
}

// hasQuery reports whether a parsed document has a query operation.
func hasQuery(p *parsed) bool {
	return p.doc != nil && slices.ContainsFunc(p.doc.Operations, func(op *ast.OperationDefinition) bool { return op.Operation == ast.Query })
}

// prepared runs sub's operation, prepared from its request, and keeps it
// for the next client that sends the same payload: but a query's, whose
// answer it holds, which may be large.
func (s *session) prepared(sub *subscriber, raw []byte, op *operation, errs gqlerror.List) {
	if sub.done {
		return
	}
	if errs != nil {
		s.fail(sub, errs)
		return
	}
	if op.kind != ast.Query {
		s.g.ops.put(string(raw), op)
	}
	s.run(sub, op)
}

// run runs sub's operation.
func (s *session) run(sub *subscriber, op *operation) {
	id := sub.id
	sub.op = op
	if op.kind == ast.Query {
		s.send(s.proto.appendNext(nil, id, op.result))
		s.send(s.appendComplete(nil, id))
		s.end(sub)
		return
	}
	if op.kind == ast.Mutation {
		// Publishing may wait on the network: off the loop.
		s.g.pool.Submit(func() {
			payload := s.g.publish(op)
			s.wc.Submit(func() {
				if sub.done {
					return
				}
				s.send(s.proto.appendNext(nil, id, payload))
				s.send(s.appendComplete(nil, id))
				s.end(sub)
			})
		})
		return
	}
	sub.trigger = op.trigger
	if len(s.headers) > 0 {
		sub.trigger = triggerKey(op.provider, op.root.Name, op.subjects, op.bind.stream, s.headers)
	}
	sub.joined = true
	e := s.g.engine
	if e.l.Submit(func() { e.add(sub) }) != nil {
		s.fail(sub, gqlerror.List{gqlerror.Errorf("the gateway is shutting down")})
	}
}

// find returns the session's operation with id, or nil.
func (s *session) find(id string) *subscriber {
	for _, sub := range s.subs {
		if sub.id == id {
			return sub
		}
	}
	return nil
}

// forwarded returns the fields of a connection_init payload named by
// names (at its top level or under "headers", without regard to case), or
// nil.
func forwarded(names []string, p map[string]any) map[string]string {
	var h map[string]string
	for _, name := range names {
		for _, m := range []map[string]any{p, asMap(p["headers"])} {
			for k, v := range m {
				if str, ok := v.(string); ok && strings.EqualFold(k, name) {
					if h == nil {
						h = make(map[string]string)
					}
					h[name] = str
				}
			}
		}
	}
	return h
}

// end ends sub on this side: nothing more is sent for it, and it leaves
// its trigger.
func (s *session) end(sub *subscriber) {
	if sub.done {
		return
	}
	sub.done = true
	if i := slices.Index(s.subs, sub); i >= 0 {
		s.subs = slices.Delete(s.subs, i, i+1)
	}
	if sub.joined {
		e := s.g.engine
		e.l.Submit(func() { e.remove(sub) })
	}
}

// fail sends errors for sub, which ends it.
func (s *session) fail(sub *subscriber, errs gqlerror.List) {
	if sub.done {
		return
	}
	s.end(sub)
	s.send(s.appendError(nil, sub.id, errs))
}

// complete sends complete for sub, which ends it.
func (s *session) complete(sub *subscriber) {
	if sub.done {
		return
	}
	s.end(sub)
	s.send(s.appendComplete(nil, sub.id))
}

// slowGrace is how long a connection's outbound queue may stay past
// Config.MaxOutbound: a burst of events queued within one loop iteration
// passes it before the loop writes any of it, which is no sign of a slow
// client; a queue still past it a moment later is.
const slowGrace = 100 * time.Millisecond

// slowBurst bounds the burst slowGrace lets pass: a queue past slowBurst
// times Config.MaxOutbound closes the connection at once, whatever the
// rate of its messages, so that it never holds more.
const slowBurst = 4

// watchOutbound closes the connection as a slow consumer if its outbound
// queue is still past max after slowGrace.
func (s *session) watchOutbound(max int) {
	if s.watching {
		return
	}
	s.watching = true
	s.wc.Conn().AfterFunc(slowGrace, func() {
		s.watching = false
		if s.wc.Conn().OutboundBuffered() > max {
			s.slow()
		}
	})
}

// slow closes a connection that does not take its messages.
func (s *session) slow() {
	if s.gone {
		return
	}
	s.g.stats.SlowConsumers.Add(1)
	s.closeWith(CloseSlowConsumer, "slow consumer: too many messages waiting")
}

// goingAway completes every subscription and closes the connection with
// 1001: the gateway is shutting down. The completes are not held to the
// outbound bounds as send holds messages: queued together, they are no
// sign of a slow client, and the close follows them.
func (s *session) goingAway() {
	for _, sub := range slices.Clone(s.subs) {
		s.end(sub)
		if !s.gone {
			s.wc.WriteMessage(ws.Text, s.appendComplete(nil, sub.id))
		}
	}
	s.closeWith(CloseGoingAway, "server shutting down")
}

// send queues msg, and holds the connection to the bounds on what waits
// for it (queued), whatever the message: a client that sends pings and
// does not read the pongs is a slow consumer as one that does not read
// its events is.
func (s *session) send(msg []byte) {
	if s.gone {
		return
	}
	if err := s.wc.WriteMessage(ws.Text, msg); err != nil {
		if errors.Is(err, evloop.ErrOutboundFull) {
			s.slow()
		}
		return
	}
	s.queued(s.g.cfg.MaxOutbound)
}

// queued closes the connection as a slow consumer if its outbound queue
// is past slowBurst times max, and watches it (watchOutbound) if past max.
func (s *session) queued(max int) {
	if n := s.wc.Conn().OutboundBuffered(); n > slowBurst*max {
		s.slow()
	} else if n > max {
		s.watchOutbound(max)
	}
}

// closeWith starts the close handshake with code and reason (cut to what a
// close frame holds).
func (s *session) closeWith(code int, reason string) {
	if s.gone {
		return
	}
	s.gone = true
	if len(reason) > 123 {
		reason = reason[:123]
		for !utf8.ValidString(reason) {
			reason = reason[:len(reason)-1]
		}
	}
	s.wc.Close(code, reason)
}

// appendNext appends a next (or, in the legacy protocol, data) message.
func (p protocol) appendNext(dst []byte, id string, payload []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, id)
	if p == legacyWS {
		dst = append(dst, `,"type":"data","payload":`...)
	} else {
		dst = append(dst, `,"type":"next","payload":`...)
	}
	dst = append(dst, payload...)
	return append(dst, '}')
}

func (s *session) appendComplete(dst []byte, id string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, id)
	return append(dst, `,"type":"complete"}`...)
}

// appendError appends an error message for operation id: its payload the
// list of errors in graphql-transport-ws, an Error object in the legacy
// protocol ({"message": the first's, "errors": all of them}, which its
// client library reads as the list).
func (s *session) appendError(dst []byte, id string, errs gqlerror.List) []byte {
	b, err := json.Marshal(errs)
	if err != nil || len(errs) == 0 {
		b, errs = []byte(`[{"message":"internal error"}]`), gqlerror.List{gqlerror.Errorf("internal error")}
	}
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, id)
	dst = append(dst, `,"type":"error","payload":`...)
	if s.proto == legacyWS {
		dst = append(dst, `{"message":`...)
		dst = appendJSONString(dst, errs[0].Message)
		dst = append(dst, `,"errors":`...)
		dst = append(dst, b...)
		return append(dst, "}}"...)
	}
	dst = append(dst, b...)
	return append(dst, '}')
}

// message is a message of either protocol, as received.
type message struct {
	Type    string
	ID      json.RawMessage
	Payload json.RawMessage
}

// parseMessage reads a message: a JSON object whose members "type" (a
// string), "id" and "payload" are named exactly so, as the protocols'
// JavaScript reads them (encoding/json would take "TYPE" or "Id" too).
func parseMessage(data []byte) (message, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return message{}, err
	}
	m := message{ID: fields["id"], Payload: fields["payload"]}
	if t, ok := fields["type"]; ok {
		if err := json.Unmarshal(t, &m.Type); err != nil {
			return message{}, errors.New("the 'type' property must be a string")
		}
	}
	return m, nil
}

// id returns the message's id: a non-empty string.
func (m *message) id() (string, error) {
	var id string
	if len(m.ID) == 0 || m.ID[0] != '"' || json.Unmarshal(m.ID, &id) != nil || id == "" {
		return "", fmt.Errorf("%q message requires a non-empty 'id' property", m.Type)
	}
	return id, nil
}

// subscribe returns a subscribe (or start) message's id and request.
func (m *message) subscribe() (string, *request, error) {
	id, err := m.id()
	if err != nil {
		return "", nil, err
	}
	if !isObject(m.Payload) {
		return id, nil, fmt.Errorf("%q message expects the 'payload' property to be an object", m.Type)
	}
	var fields map[string]json.RawMessage
	json.Unmarshal(m.Payload, &fields)
	if q := fields["query"]; len(q) == 0 || q[0] != '"' {
		return id, nil, fmt.Errorf("%q message payload expects the 'query' property to be a string", m.Type)
	}
	for _, f := range []string{"variables", "extensions"} {
		if v := fields[f]; len(v) > 0 && !payloadIsObject(v) {
			return id, nil, fmt.Errorf("%q message payload expects the '%s' property to be a an object or nullish or missing", m.Type, f)
		}
	}
	if v := fields["operationName"]; len(v) > 0 && v[0] != '"' && string(v) != "null" {
		return id, nil, fmt.Errorf("%q message payload expects the 'operationName' property to be a string or nullish or missing", m.Type)
	}
	r, err := requestFrom(fields)
	if err != nil {
		return id, nil, fmt.Errorf("%q message payload: %v", m.Type, err)
	}
	return id, r, nil
}

// appendPong appends the pong to a ping with payload: the payload echoed,
// as graphql-ws's own server echoes it, if it has one.
func appendPong(dst []byte, payload json.RawMessage) []byte {
	if len(payload) == 0 || string(payload) == "null" {
		return append(dst, `{"type":"pong"}`...)
	}
	dst = append(dst, `{"type":"pong","payload":`...)
	dst = append(dst, payload...)
	return append(dst, '}')
}

// appendLegacyError appends the old protocol's message of type typ (error
// or connection_error) for id (none if empty) with an Error payload.
func appendLegacyError(dst []byte, typ, id, msg string) []byte {
	dst = append(dst, '{')
	if id != "" {
		dst = append(dst, `"id":`...)
		dst = appendJSONString(dst, id)
		dst = append(dst, ',')
	}
	dst = append(dst, `"type":`...)
	dst = appendJSONString(dst, typ)
	dst = append(dst, `,"payload":{"message":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, "}}"...)
}

// idOr returns m's id if it has a valid one, else "".
func idOr(m *message) string {
	id, _ := m.id()
	return id
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}

// payloadIsObject reports whether an optional payload is an object, null or
// missing.
func payloadIsObject(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null" || isObject(raw)
}

// sessions is every open session, by loop, for Shutdown.
type sessions struct {
	loops map[int]*loopSessions // under Gateway.mu
	g     *Gateway
}

type loopSessions struct {
	submit func(func()) error
	set    map[*session]struct{} // owned by the loop
}

func (ss *sessions) add(s *session) {
	i := s.wc.Conn().Loop()
	ss.g.mu.Lock()
	ls := ss.loops[i]
	if ls == nil {
		ls = &loopSessions{submit: s.wc.Submit, set: make(map[*session]struct{})}
		ss.loops[i] = ls
	}
	ss.g.mu.Unlock()
	ls.set[s] = struct{}{}
}

func (ss *sessions) remove(s *session) {
	ss.g.mu.Lock()
	ls := ss.loops[s.wc.Conn().Loop()]
	ss.g.mu.Unlock()
	delete(ls.set, s)
}

// each runs fn on every session, on its loop, and returns when all ran.
func (ss *sessions) each(fn func(*session)) {
	ss.g.mu.Lock()
	loops := make([]*loopSessions, 0, len(ss.loops))
	for _, ls := range ss.loops {
		loops = append(loops, ls)
	}
	ss.g.mu.Unlock()
	done := make(chan struct{}, len(loops))
	for _, ls := range loops {
		if ls.submit(func() {
			for s := range ls.set {
				fn(s)
			}
			done <- struct{}{}
		}) != nil {
			done <- struct{}{}
		}
	}
	for range loops {
		<-done
	}
}

// defaultInitTimeout is graphql-ws's connectionInitWaitTimeout.
const defaultInitTimeout = 3 * time.Second
