package gateway

// Conformance to the protocols' texts, each test naming the text it
// checks:
//
//   graphql-transport-ws: PROTOCOL.md of enisdenjo/graphql-ws
//   graphql-ws (legacy):  PROTOCOL.md of apollographql/subscriptions-transport-ws

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// tryRead returns the next message's text, or the read error (a
// *websocket.CloseError on a close), within d.
func (c *client) tryRead(d time.Duration) (string, error) {
	c.ws.SetReadDeadline(time.Now().Add(d))
	_, b, err := c.ws.ReadMessage()
	return string(b), err
}

// closeCode returns the code of a close error, or 0.
func closeCode(err error) int {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return 0
}

// TestFieldNamesAreCaseSensitive: message fields are matched by their
// exact names, as the protocols' JavaScript reads them: a message with
// "TYPE" or "ID" has no type or id, and a payload's "Variables" are no
// variables. They were matched without regard to case (encoding/json's
// struct matching).
//
// PROTOCOL.md: "**All** messages contain the `type` field"; "Messages
// corresponding to operations must contain the `id` field"; "Receiving a
// message of a type or format which is not specified in this document will
// result in an **immediate** socket closure with the event `4400`".
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	_, src, addr := startGateway(t, nil)
	t.Run("TYPE instead of type", func(t *testing.T) {
		c := dial(t, addr, ProtocolTransportWS)
		c.send(`{"TYPE":"connection_init"}`)
		msg, err := c.tryRead(2 * time.Second)
		if code := closeCode(err); code != CloseBadRequest {
			t.Fatalf("a message without a \"type\" field: got %q, %v; want close 4400", msg, err)
		}
	})
	t.Run("ID instead of id", func(t *testing.T) {
		c := dial(t, addr, ProtocolTransportWS)
		c.init()
		c.send(`{"ID":"1","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 21) { id } }"}}`)
		msg, err := c.tryRead(2 * time.Second)
		if code := closeCode(err); code != CloseBadRequest {
			t.Fatalf("subscribe without an \"id\" field: got %q, %v (upstream subscribers %d); want close 4400",
				msg, err, src.Subscribers("employee.21"))
		}
	})
	t.Run("Variables instead of variables", func(t *testing.T) {
		// The subscribe is valid in shape; "Variables" is an unknown
		// field, so $id is not provided: an error message is due.
		c := dial(t, addr, ProtocolTransportWS)
		c.init()
		c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription($id: ID!) { employeeUpdated(id: $id) { id } }","Variables":{"id":"22"}}}`)
		msg, err := c.tryRead(2 * time.Second)
		var m struct{ Type string }
		json.Unmarshal([]byte(msg), &m)
		if err != nil || m.Type != "error" {
			t.Fatalf("got %q, %v (upstream subscribers of employee.22: %d); want an error: variable \"$id\" was not provided",
				msg, err, src.Subscribers("employee.22"))
		}
	})
}

// TestLegacyParseErrorKeepsConnection: in the legacy protocol a
// message that is not JSON gets connection_error and the socket stays;
// it was closed with 4400.
//
// subscriptions-transport-ws PROTOCOL.md (GQL_CONNECTION_ERROR): "It
// server also respond with this message in case of a parsing errors of
// the message (which does not disconnect the client, just ignore the
// message)."
func TestLegacyParseErrorKeepsConnection(t *testing.T) {
	c := legacyClient(t)
	c.send(`{"type":`)
	msg, err := c.tryRead(2 * time.Second)
	var m struct{ Type string }
	json.Unmarshal([]byte(msg), &m)
	if err != nil || m.Type != "connection_error" {
		t.Fatalf("after a message that is not JSON: got %q, %v; want connection_error and the socket kept", msg, err)
	}
}

// TestLegacyErrorPayloadIsAnObject: the legacy protocol's error
// message carries an Error object, with "message" (and "errors", which
// its client library reads as the list), where it carried the
// transport-ws payload, an array of errors.
//
// subscriptions-transport-ws PROTOCOL.md (GQL_ERROR): "`payload: Error` :
// payload with the error attributed to the operation failing on the
// server" (the reference server sends {message: ...}).
func TestLegacyErrorPayloadIsAnObject(t *testing.T) {
	c := legacyClient(t)
	c.send(`{"id":"1","type":"start","payload":{"query":"subscription { nope }"}}`)
	raw := c.readRaw()
	var m struct {
		ID, Type string
		Payload  json.RawMessage
	}
	json.Unmarshal([]byte(raw), &m)
	var obj map[string]any
	if m.Type != "error" || m.ID != "1" || json.Unmarshal(m.Payload, &obj) != nil || obj["message"] == nil {
		t.Fatalf("error for an invalid operation = %s; want payload an Error object {\"message\": ...}", raw)
	}
}

// TestLegacyInvalidTypeErrorHasID: an unknown message type with an
// id gets an error with that id; it had none.
//
// subscriptions-transport-ws PROTOCOL.md (GQL_ERROR): "`id: string` :
// operation ID of the operation that failed on the server" (the reference
// server sends sendError(connectionContext, opId, {message: 'Invalid
// message type!'})).
func TestLegacyInvalidTypeErrorHasID(t *testing.T) {
	c := legacyClient(t)
	c.send(`{"id":"7","type":"bogus"}`)
	if m := c.read(); m["type"] != "error" || m["id"] != "7" {
		t.Fatalf("after an unknown type with id 7 got %v; want an error with id 7", m)
	}
}

// legacyClient connects a client of the legacy protocol to a new gateway
// and has it acknowledged.
func legacyClient(t *testing.T) *client {
	t.Helper()
	_, _, addr := startGateway(t, func(c *Config) { c.KeepAlive = time.Hour })
	c := dial(t, addr, ProtocolLegacyWS)
	c.send(`{"type":"connection_init","payload":{}}`)
	if m := c.read(); m["type"] != "connection_ack" {
		t.Fatalf("got %v; want connection_ack", m)
	}
	if m := c.read(); m["type"] != "ka" {
		t.Fatalf("got %v; want ka", m)
	}
	return c
}

// A ping's payload comes back in the pong, as graphql-ws's own server
// sends it (PROTOCOL.md: "A response to the Ping message. Must be sent as
// soon as the Ping message is received"; the payload is "optional" and
// the reference echoes it); a ping without one gets a pong without one.
func TestPongEchoesPayload(t *testing.T) {
	_, _, addr := startGateway(t, nil)
	c := dial(t, addr, ProtocolTransportWS)
	c.send(`{"type":"ping","payload":{"at":1}}`)
	if got, want := c.readRaw(), `{"type":"pong","payload":{"at":1}}`; got != want {
		t.Fatalf("pong = %s; want %s", got, want)
	}
	c.send(`{"type":"ping","payload":null}`)
	if got, want := c.readRaw(), `{"type":"pong"}`; got != want {
		t.Fatalf("pong = %s; want %s", got, want)
	}
}
