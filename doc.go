// Package evloop is an event-driven networking framework: event loops over
// epoll (Linux) and kqueue (BSD, macOS), each owning its connections, for
// servers that hold many connections and move many small messages.
//
// This package is the reactor face. A Server runs one loop per CPU by
// default; connections it accepts, dials or adopts are spread over the
// loops, and a Handler's methods are called on the connection's loop:
//
//	type echo struct{ evloop.BaseHandler }
//
//	func (echo) OnData(c *evloop.Conn) {
//		b, _ := c.Next(-1)
//		c.Write(b)
//	}
//
//	srv, err := evloop.Listen("tcp", "127.0.0.1:7000", echo{}, evloop.Options{})
//	...
//	defer srv.Shutdown(context.Background())
//
// The callback-less face is package events; the engine under both is
// internal.
//
// # Memory
//
// A loop reads into one buffer of its own. Only bytes a handler leaves
// unconsumed are kept per connection, in pooled chunks returned when
// drained; bytes written are queued in pooled chunks until the kernel takes
// them. An idle connection holds no buffer: its cost is a Conn and the
// kernel's socket.
//
// # Writes and closes
//
// Write and Writev copy and queue; the loop writes each connection's queue
// with one write or writev at the end of the iteration, so many small
// writes in one OnData cost one system call. Writes keep their order,
// AsyncWrite's included. A write the kernel refuses for want of buffers
// for a moment (ENOBUFS, on macOS and the BSDs) stays queued and is tried
// again at the connection's next write readiness, or after 10 ms. Above Options.HighWater queued bytes the loop stops
// reading the connection (and tells a BackPressureHandler), below
// Options.LowWater it reads again, and Options.MaxOutbound bounds the queue:
// a peer that never reads cannot make the server buffer without bound.
// WriteLast queues a protocol's final word (a close frame, an error
// answer) past that bound, once, after which the connection takes no more
// writes, so that a slow reader still learns why it is being closed.
// Close writes what is queued, then closes with a FIN; Abort resets. OnClose
// runs exactly once per connection, whatever closed it, and only the
// connection's loop ever closes its fd, so a reused fd number can never
// reach a stale handler.
//
// # Goroutines
//
// Each loop is one goroutine, started by NewServer and stopped by Shutdown
// or Close. It owns its connections, their buffers and timers; other
// goroutines reach a connection only through Conn.AsyncWrite, Conn.Wake and
// Conn.Submit, which queue work on its loop. Handlers must not block: while
// one runs, the loop's other connections wait. A handler that must block
// hands the work to a goroutine of its own and answers with AsyncWrite. One
// that computes for long on the loop, because its work must see no other
// connection's between its steps (a script over a store the loop owns),
// calls Conn.ServeOthers now and then: the loop's other connections are
// served from inside it, as Redis serves its clients during a long script.
//
// # TLS
//
// ListenTLS and ServeTLS accept TLS connections, and DialOptions.TLSConfig
// dials them, with crypto/tls. A handshake, a sequence of blocking reads and
// writes in crypto/tls, runs on a goroutine of its own while it lasts
// (Options.HandshakeTimeout at most): the loop hands it what it reads and
// writes what it writes, and signatures and key exchanges are computed off
// the loops. A server's waits for the client's first whole record, so a
// client that connects and sends nothing, or part of its hello, costs a
// timer. Once the handshake is
// done, OnOpen runs and the connection is the loop's as a plain one: what
// arrives is decrypted before OnData sees it, and what the handler writes
// is encrypted as it is queued; Close and CloseWrite send close_notify,
// and the peer's close_notify is its EOF. An idle TLS connection keeps
// crypto/tls's state: its ciphers and the buffers its handshake grew, some
// kilobytes, where a plain one keeps none.
package evloop
