package resp

import (
	"errors"
	"strconv"
)

// ErrIncomplete reports that b holds only the beginning of a request or
// value: read more bytes and call again with them appended.
var ErrIncomplete = errors.New("resp: incomplete")

// ProtocolError is malformed input. A server replies "-ERR " followed by
// Error() and closes the connection, as Redis does; Msg is the text after
// "Protocol error: ". Compare with errors.As, never by string.
type ProtocolError struct {
	Msg string
}

// Error returns "Protocol error: " followed by e.Msg, the text Redis sends
// after "-ERR ".
func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

// Errors with fixed text are allocated once, so that a flood of malformed
// input costs nothing but the error reply.
var (
	// Requests (Parser.Command), with Redis's messages.
	errMultibulkLength   = &ProtocolError{"invalid multibulk length"}
	errBulkLength        = &ProtocolError{"invalid bulk length"}
	errBigMultibulkCount = &ProtocolError{"too big mbulk count string"}
	errBigBulkCount      = &ProtocolError{"too big bulk count string"}
	errBigInline         = &ProtocolError{"too big inline request"}
	errUnbalancedQuotes  = &ProtocolError{"unbalanced quotes in request"}
	errUnauthMultibulk   = &ProtocolError{"unauthenticated multibulk length"}
	errUnauthBulk        = &ProtocolError{"unauthenticated bulk length"}

	// Values (Parse).
	errBulkFormat      = &ProtocolError{"invalid bulk format: data not followed by CRLF"}
	errLine            = &ProtocolError{"invalid line: CR or LF inside, or CR without LF"}
	errInteger         = &ProtocolError{"invalid integer"}
	errAggregateLength = &ProtocolError{"invalid aggregate length"}
	errDouble          = &ProtocolError{"invalid double"}
	errBoolean         = &ProtocolError{"invalid boolean"}
	errNull            = &ProtocolError{"invalid null"}
	errBigNumber       = &ProtocolError{"invalid big number"}
	errVerbatim        = &ProtocolError{"invalid verbatim string"}
	errTooDeep         = &ProtocolError{"value nested too deep"}
)

// errExpectedBulk is Redis's message for an array element that is not a bulk
// string: "expected '$', got 'X'", with X the byte found, or a space for a
// '\r' or '\n', which Redis makes spaces as an error line cannot carry them.
func errExpectedBulk(c byte) error {
	if c == '\r' || c == '\n' {
		c = ' '
	}
	return &ProtocolError{"expected '$', got '" + string([]byte{c}) + "'"}
}

// errUnknownType reports a value starting with a byte that is no RESP type:
// a printable ASCII byte as itself, any other escaped as Go escapes it
// ('\r', '\x00', '\xff'), so that the text holds no '\r' or '\n' and is
// UTF-8.
func errUnknownType(c byte) error {
	if ' ' <= c && c <= '~' {
		return &ProtocolError{"unknown type byte '" + string([]byte{c}) + "'"}
	}
	q := strconv.Quote(string([]byte{c}))
	return &ProtocolError{"unknown type byte '" + q[1:len(q)-1] + "'"}
}
