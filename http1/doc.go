// Package http1 is HTTP/1.1 on evloop's event loops: a Server, and the
// no-I/O parsers it is built on.
//
// # Server
//
// A Server answers each request with the handler of the route it matches.
// Routes are chosen per pattern, and so is where their handler runs:
//
//	srv := &http1.Server{Handler: mux} // any net/http.Handler: the rest
//	srv.HandleFastFunc("GET /plaintext", func(w *http1.Response, r *http1.Request) {
//		w.AddHeader("Content-Type", "text/plain")
//		w.WriteString("Hello, World!")
//	})
//	srv.HandleFunc("POST /upload", upload) // a net/http handler, pooled
//	err := srv.ListenAndServe("127.0.0.1:8080")
//
// A FastHandler runs on the loop that owns the connection, with the
// request and its whole body in memory; it must not block. Everything
// else — Handle's routes and Handler, so any router written for net/http
// — runs on a bounded pool of worker goroutines (Server.Workers), gets a
// *http.Request whose Body streams from the loop and whose Context is
// cancelled when the client goes away (and carries
// http.LocalAddrContextKey), whose Trailer holds a chunked body's trailer
// once the body is read to its end (the keys its Trailer field declares
// from the start), and writes through an http.ResponseWriter
// that streams through the loop with AsyncWrite and supports Flush,
// Hijack, informational 1xx answers, trailers (declared in the Trailer
// field or set under http.TrailerPrefix, sent after a chunked body as
// net/http's server sends them), and http.NewResponseController's Flush,
// Hijack, EnableFullDuplex (a pooled handler may always read the body
// while it writes), SetReadDeadline and SetWriteDeadline, and
// http.CloseNotifier. As with net/http's server, the answer's head holds
// the header fields as they were at WriteHeader; a panic drops what the
// handler had not flushed and closes the connection after what went out.
// Where a client sees a difference: an answer the handler did not flush
// gets Content-Length up to 4 KiB (net/http's server: 2 KiB, then
// chunked); Hijack sends the body written before it, and its reader
// gives the body's bytes received and not read (a chunked body's
// decoded), then the connection's as they come (the rest of a chunked
// body in its framing, as net/http's gives them); a body read through
// http.MaxBytesReader past its limit leaves the connection open (the rest
// is dropped as any unread body is, the answer framed as it must be),
// where net/http's server closes it.
//
// A pooled handler's deadlines behave as net/http's server makes them:
// past the read deadline (or Server.ReadTimeout) a body Read fails (and
// one blocked when it passes returns) with a net.Error whose Timeout is
// true, wrapping os.ErrDeadlineExceeded, and the connection closes after
// the answer; the handler's read deadline replaces Server.ReadTimeout, so
// it may extend past it. Past the write deadline (Server.WriteTimeout,
// unless the handler sets its own), writes and flushes fail alike, one
// blocked on a client that does not read returns, and the connection is
// reset once the handler returns. What of its answer is still queued when
// the handler returns, for a client slow to read, must be written by the
// deadline too, as net/http's server's last writes of it must: the
// connection is reset when it passes with some of it unwritten, and
// IdleTimeout starts once it is all written. A zero time clears a
// deadline. As with a net.Conn's, a deadline that passes while the handler
// neither reads nor writes (nor has answer bytes waiting on the client)
// fails nothing, and a later one replaces it (a Server-Sent Events handler
// that sets one before each event); once a read or write has failed on it,
// it stays passed.
//
// A body a pooled handler leaves unread is dropped to reach the next
// request when at most 256 KiB of it is left (counting what arrived and
// was not read), as net/http's server drops it; otherwise
// the connection closes after the answer. When the handler returns before
// any of its answer went out, a chunked body is still arriving, and the
// connection would otherwise stay open, the answer waits, on the loop and
// holding no worker, until the body has ended, so that its head can say
// "Connection: close" if the connection will not be kept: more than 256
// KiB left, a malformed body, the client's EOF, ReadTimeout (IdleTimeout
// without it, or when the handler set its own read deadline), or Shutdown,
// which sends such an answer at once. Meanwhile the connection keeps the
// answer's buffered bytes and header. A handler that called
// EnableFullDuplex, or whose request has "Expect: 100-continue", is
// answered at once, as by net/http's server.
//
// Per connection the server keeps requests alive, serves pipelined
// requests in order (a pooled handler's answer is awaited before the next
// request is read), reads Content-Length and chunked bodies, answers
// "Expect: 100-continue", frames answers with Content-Length or, when a
// pooled handler streams, chunked (close-delimited for HTTP/1.0), and
// answers "OPTIONS *" itself (200, no body: it asks about the server, not
// a resource), keeps a pooled handler's own Transfer-Encoding (chunked, or
// identity: the body ends with the connection), and
// closes with the right status on bad input: 400, 413, 431, 501, 505 and
// 408 for a client too slow (Server.ReadHeaderTimeout, ReadTimeout,
// IdleTimeout). The next request's timeouts start once the answers before
// it are written, and answers with no write deadline wait for a client
// slow to take them as long as it takes some (Server.IdleTimeout). Timeouts and pooled handlers' deadlines live in per-loop
// lists in deadline order, checked ten times a second (so a timeout acts
// up to 0.2 s late): an idle or slow connection costs a struct of about a
// hundred bytes, no goroutine, no buffer and no timer.
// A pooled handler's read or write that waits for the client wakes at its
// deadline itself, with a runtime timer while it waits.
//
// A handler of either kind may switch the connection to another protocol
// (Response.SwitchProtocols, or the pooled ResponseWriter's
// SwitchProtocols method): a Protocol then serves it on the loop. Package
// ws upgrades to WebSocket that way. Server.Shutdown tells a Protocol that
// is a Shutdowner (a WebSocket sends 1001, going away) and waits for its
// connections to close; it closes the others after their queued bytes.
//
// ServeTLS, StartTLS and ListenAndServeTLS serve HTTPS, as net/http's
// do, with crypto/tls on the loops (the evloop package's doc says how): a
// handshake runs on a goroutine of its own while it lasts, then the
// connection is served as a plain one. ALPN offers http/1.1 alone; a
// pooled handler's Request.TLS and a fast handler's
// Response.Conn().ConnectionState() tell what the handshake agreed, and a
// plain request sent to the TLS port is answered 400, as net/http answers
// it.
//
// # Parsers
//
// A Parser parses request heads (RFC 9112) and a ChunkedDecoder chunked
// request bodies, with no I/O. A server hands either one the connection's
// inbound bytes, split anywhere, and calls again when more arrive.
//
//	var p http1.Parser
//	var r http1.Request
//	n, err := p.Parse(in, &r)
//	switch {
//	case errors.Is(err, http1.ErrIncomplete):
//		// read more, append to in, call again
//	case err != nil:
//		var e *http1.Error
//		errors.As(err, &e) // respond with e.Status, then close
//	default:
//		in = in[n:] // the body: r.ContentLength bytes, or chunked
//	}
//
// Parsing allocates nothing once Request.Headers has grown to fit: every
// byte slice in a Request points into the input.
//
// # Strictness
//
// Framing errors are how requests are smuggled past a proxy that reads them
// differently, so a Parser refuses what RFC 9112 allows a server to refuse,
// with the status it suggests:
//
//   - Lines end with CRLF. A bare LF (which RFC 9112 section 2.2 lets a
//     recipient accept) and a bare CR are 400.
//   - Obsolete line folding (a field line starting with SP or HTAB) is 400;
//     so is whitespace between a field name and its colon, and a control
//     character other than HTAB in a field value. Bytes 0x80-0xFF
//     (obs-text) are accepted in values and request targets.
//   - The request line has single spaces and a version "HTTP/d.d" in upper
//     case. Major versions other than 1 are 505; minor versions above 1
//     are served as HTTP/1.1.
//   - The target's form must fit the method: authority-form only and
//     always for CONNECT, "*" only for OPTIONS, else origin-form or
//     absolute-form.
//   - Content-Length is digits only. Several values, in one list or in
//     several fields, are accepted when all are equal, else 400.
//   - Transfer-Encoding is 400 in HTTP/1.0, with Content-Length, when
//     chunked is not the final coding or appears twice; a coding other
//     than chunked is 501, as no other is decoded.
//   - An HTTP/1.1 request without Host, or any request with more than one,
//     is 400. An Expect that does not name 100-continue is 417; one that
//     names it beside other expectations continues, as net/http's does.
//   - Heads over Limits.MaxHeaderBytes or with more than Limits.MaxHeaders
//     fields are 431; chunk sizes over 16 hex digits, chunk-size lines
//     (extensions included) over 4 KiB, chunk extensions more than 16 KiB
//     past what their chunks' data allows (16 bytes and two a data byte,
//     as Go's own reader allows them) and trailer sections over
//     ChunkedDecoder.MaxTrailerBytes are 400.
//
// # Differences from net/http
//
// net/http's server also refuses the cases above, except that it accepts a
// bare LF as a line end, obsolete line folding (joining the lines),
// Transfer-Encoding in HTTP/1.0 (ignoring it) and with Content-Length
// (ignoring Content-Length), "*" with any method and origin-form with
// CONNECT. It reads the first Expect field alone, where a Parser reads
// them all as one list.
// Where a Parser is more lenient: it skips empty lines before the request
// line, which net/http refuses, and accepts a Content-Length list of equal
// values in one field ("5, 5") and equal lengths written differently in
// several fields ("05" and "5"), which net/http compares as text.
// Every answer's status line says HTTP/1.1, whatever the request's minor
// version, as RFC 9110 section 6.2 says a server should (the highest
// version it conforms to whose major version is the request's); net/http's
// server answers an HTTP/1.0 request with HTTP/1.0. The framing still
// follows the request's version: an HTTP/1.0 client gets no chunked body
// and keeps its connection only when it asked to, and no 1xx answer (RFC
// 9110 section 15.2), which net/http's server sends it. The server's own
// 404 and 405 to a request whose Content-Length body is still to come go
// out before it, which is then dropped as it arrives, as net/http's server
// drops an unread body (the connection kept if at most 256 KiB more is to
// come, closed otherwise); to one whose chunked body is still to come, the
// answer waits, as net/http's server's does, while the body is dropped,
// until it ends (the connection kept) or passes 256 KiB, turns out
// malformed, or times out (the answer then says "Connection: close").
package http1
