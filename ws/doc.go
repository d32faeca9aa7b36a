// Package ws is WebSocket (RFC 6455) on evloop's event loops, entered by
// an upgrade from an http1 server's handler of either kind:
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
// compressors and decompressors are pooled, never held by a connection.
//
// A Conn reads frames as they arrive: a message that arrived whole is
// handed to Handler.OnMessage without a copy; one arriving in pieces or in
// fragments is gathered, and checked as it comes — text must be UTF-8
// (the connection fails at the first bad byte, with 1007), a message past
// Options.MaxMessageSize fails with 1009 before its bytes are buffered,
// and protocol errors (unmasked client frames, reserved bits and opcodes,
// fragmented or long control frames, continuation errors, bad close
// payloads) fail with 1002. Pings are answered, control frames may come
// between fragments, and the close handshake echoes the peer's code; the
// server closes the TCP connection first. Between messages a Conn holds no
// buffer: an idle connection costs its struct (128 bytes) and the
// reactor's.
//
// Messages are handled on the loop (OnMessage must not block; write with
// WriteMessage), or, with Options.Workers, on a pool of goroutines, one
// message of a connection at a time, in order (write with Send). A Group
// broadcasts a message to many connections: it is framed and compressed
// once, and each loop writes that frame to its own members.
package ws
