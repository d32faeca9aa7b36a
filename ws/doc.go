// Package ws is WebSocket (RFC 6455) on evloop's event loops: servers'
// connections, entered by an upgrade from an http1 server's handler of
// either kind, and clients', opened by a Dialer (see Clients below):
//
//	srv.HandleFastFunc("GET /ws", func(w *http1.Response, r *http1.Request) {
//		ws.Upgrade(w, r, handler, opts) // 101, then handler.OnOpen on the loop
//	})
//	srv.HandleFunc("GET /std/ws", func(w http.ResponseWriter, r *http.Request) {
//		ws.UpgradeHTTP(w, r, handler, opts) // from a pooled net/http handler
//	})
//
// The handshake is checked (method, version 13 or 426, key, Origin with
// Options.CheckOrigin, 403 when refused), a subprotocol chosen from
// Options.Subprotocols, and permessage-deflate (RFC 7692) accepted when
// Options.Compression is set — always answered with
// server_no_context_takeover and client_no_context_takeover, so that
// compressors and decompressors are pooled, never held by a connection,
// and with the offer's server_max_window_bits when it names one, which the
// server keeps by compressing only the messages that fit in the window.
//
// A Conn reads frames as they arrive: a message that arrived whole is
// handed to Handler.OnMessage without a copy; one arriving in pieces or in
// fragments is gathered, and checked as it comes — text must be UTF-8
// (the connection fails at the first bad byte, with 1007), a message past
// Options.MaxMessageSize fails with 1009 before its bytes are buffered,
// and protocol errors (unmasked client frames, reserved bits and opcodes,
// lengths not in the fewest bytes, fragmented or long control frames,
// continuation errors, bad close payloads) fail with 1002. A compressed
// message is inflated once its last frame is in (all of it: a block with
// BFINAL set may end one deflate stream and another follow, as RFC 7692
// allows), and checked as it is inflated: at its first bad byte of text, or once its inflated length
// passes the limit, it fails without the rest being inflated. Pings are
// answered, control frames may come between fragments, and the close
// handshake echoes the peer's code and reason; the server closes the TCP
// connection first. OnClose reports the peer's close frame, or 1006 when
// none came (RFC 6455 section 7.1.5), also after this side's Close. Between messages a Conn holds no buffer: an idle connection
// costs its struct (136 bytes) and the reactor's.
//
// Messages are handled on the loop (OnMessage must not block; write with
// WriteMessage), or, with Options.Workers, on a pool of goroutines, one
// message of a connection at a time, in order (write with Send). A Group
// broadcasts a message to many connections: it is framed and compressed
// once, and each loop writes that frame to its own members. Text going
// out is checked as text coming in is: WriteMessage, Send and Broadcast
// refuse text that is not UTF-8 (ErrNotUTF8) rather than send what the
// peer must fail the connection for.
//
// # Clients
//
// A Dialer opens client connections on event loops of its own; each is a
// *Conn served by a Handler, with the same Options, as a server's is:
//
//	d := &ws.Dialer{}
//	defer d.Close()
//	c, resp, err := d.Dial(ctx, "ws://example.com/socket",
//		http.Header{"Origin": {"https://example.com"}}, handler, &ws.Options{
//			Subprotocols: []string{"graphql-transport-ws"},
//			Compression:  true,
//		})
//	c.Send(ws.Text, []byte("hello")) // from any goroutine
//
// Dial sends a random 16-byte Sec-WebSocket-Key, the caller's extra
// fields, the subprotocols of Options.Subprotocols and, with
// Options.Compression, a permessage-deflate offer with no context
// takeover either way. It checks the answer as RFC 6455 section 4.1 has
// a client check it — 101, the Upgrade and Connection tokens,
// Sec-WebSocket-Accept, a subprotocol and extensions among those offered
// — and fails with a *HandshakeError that gives the answer's status and
// header fields (and the response, with the start of a refusal's body).
// Dialer.HandshakeTimeout and the context bound the name lookup, the
// connect and the handshake. Bytes that came after the 101 answer in the
// same read are read as frames.
//
// A client's Conn masks every frame it sends with a fresh key from
// crypto/rand, and fails the connection with 1002 when a server's frame
// is masked; the other checks, limits and the close handshake are the
// server side's, except that after the close handshake the client waits
// for the server to close the TCP connection (RFC 6455 section 7.1.1), up
// to Options.CloseTimeout. The Dialer dials wss:// over TLS on its loops
// (Dialer.TLSConfig); a server serves wss:// through http1.Server's
// ServeTLS.
//
// # Shutting down
//
// http1.Server.Shutdown starts the close handshake of every WebSocket
// connection with 1001 (going away), and waits for the clients' answers
// (each up to Options.CloseTimeout) until its context ends; a Conn is an
// http1.Shutdowner. Dialer.Shutdown does the same for a client's
// connections; Dialer.Close closes them without the handshake.
//
// # Goroutines
//
// A Dialer's loops (one per CPU by default, Dialer.Engine.Loops) start at
// its first Dial and stop at Dialer.Close or Dialer.Shutdown; each owns
// the connections dialed on it, as a server's loop does. The goroutines of an Options'
// worker pool (Options.Workers) start as messages need them and end after
// 10 seconds without work, or at Options.CloseWorkers.
package ws
