// Package resp is the Redis serialization protocol (RESP2 and RESP3):
// parsing requests and replies, and writing them, with no I/O.
//
// A server reads client requests with a Parser and answers through a Writer:
//
//	var p resp.Parser
//	var w resp.Writer // w.Proto = 3 after the client's HELLO 3
//	for {
//		args, n, err := p.Command(in)
//		if errors.Is(err, resp.ErrIncomplete) {
//			break // read more, append, call again
//		}
//		if err != nil {
//			w.Error("ERR " + err.Error()) // then close the connection
//			break
//		}
//		in = in[n:]
//		if len(args) > 0 {
//			handle(&w, args)
//		}
//	}
//	conn.Write(w.Buf)
//	w.Reset()
//
// Command accepts what Redis accepts: arrays of bulk strings, as clients
// send them, and inline commands, as typed into telnet. Its limits and error
// messages are Redis's (see Limits and ProtocolError).
//
// A client reads replies with Parse, which takes every RESP2 and RESP3 type
// into a Value, and sends requests with AppendCommand or Writer.Command.
// RESP3's streamed strings and aggregates of unknown length ("$?", "*?"),
// which Redis never sends, are refused with a *ProtocolError, as go-redis
// refuses them.
//
// # Errors
//
// ErrIncomplete means the input holds only the beginning of a request or
// value, however it was split; append more bytes and call again. Parse is
// stateless: each call starts at the beginning of its input. Command is too,
// but for one thing: it remembers how far it got into an array request that
// has not all arrived, and goes on from there when called again with the
// same bytes and more (the same buffer grown, or moved), so that a request
// of many arguments arriving over many reads costs one parse (see
// Parser.Command and Parser.Reset). Malformed
// input gives a *ProtocolError, after which a server replies with the error
// and closes the connection, as Redis does. A header line or inline request
// longer than Limits.MaxInline is malformed even before its end arrives, so
// a peer cannot make a server buffer without bound.
//
// # Memory
//
// Neither Command nor Writer allocates once its buffers have grown to fit:
// the arguments Command returns point into its input, and Writer appends to
// one reusable buffer. Parse allocates only the element slices of aggregate
// values, and a Verbatim string's Format when it is not "txt" or "mkd"; the
// byte slices in a Value point into its input.
package resp
