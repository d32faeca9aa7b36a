package evloop

import "net"

// Handler receives a connection's events. Its methods are called on the
// connection's loop goroutine, never concurrently for one connection, and
// for one connection in this order: OnOpen once, OnData any number of
// times, OnClose once. A Handler serves every connection of a Server, so it
// keeps per-connection state in the Conn's context (Conn.SetContext) or in
// a map owned by the loop. Handlers must not block: while one runs, every
// other connection of its loop waits. Work that blocks goes to another
// goroutine, which answers with Conn.AsyncWrite.
type Handler interface {
	// OnOpen is called when the connection is accepted, dialed or adopted.
	OnOpen(c *Conn)
	// OnData is called when bytes arrived, and after Conn.Wake. The handler
	// consumes what it can with Peek, Next or Discard; what it leaves stays
	// buffered and is seen again, with the bytes after it, next time.
	OnData(c *Conn)
	// OnClose is called once the connection is closed, whatever closed it.
	// err is nil for Close and Abort, io.EOF when the peer closed, and the
	// error otherwise: a *net.OpError for I/O errors, a *PanicError when a
	// handler method panicked, ErrCloseTimeout, ErrInboundFull or
	// ErrShutdown; on a TLS connection, io.ErrUnexpectedEOF when the
	// peer's FIN cut a record short, and crypto/tls's error when a record
	// did not decrypt or the peer sent an alert.
	OnClose(c *Conn, err error)
}

// BackPressureHandler may be implemented by a Handler to learn when a
// connection's outbound queue passes Options.HighWater, at which point the
// loop stops reading the connection (paused is true), and when it drains
// below Options.LowWater and reading resumes (paused is false). A handler
// that produces data on its own, not in answer to reads, should stop
// writing while paused.
type BackPressureHandler interface {
	OnBackPressure(c *Conn, paused bool)
}

// WrittenHandler may be implemented by a Handler to learn when a
// connection's outbound queue, which the socket could not take at once
// (the peer reads slower than the handler writes), has all been written:
// OnWritten is called once it is empty again. Writes the socket takes at
// once do not call it, so it costs nothing while peers keep up. A protocol
// that times the peer's next request from the end of its answer, as an
// HTTP server does, restarts the timeout there.
type WrittenHandler interface {
	OnWritten(c *Conn)
}

// ReadEOFHandler may be implemented by a Handler whose protocol lets a
// peer half-close: send its last request, shut down its writing side and
// wait for the answer. By default a connection whose peer sent EOF writes
// what is queued and closes; for a ReadEOFHandler it stays open for
// writing, OnReadEOF is called once (after OnData saw the last bytes), and
// the handler closes the connection when it has answered. A peer that
// closed both ways is noticed at the next write, and OnClose runs.
type ReadEOFHandler interface {
	OnReadEOF(c *Conn)
}

// HandshakeErrorHandler may be implemented by a Handler to learn of a
// TLS connection whose handshake failed (ListenTLS): OnOpen and OnClose
// never run for it. It is called on the loop with the peer's address and
// crypto/tls's error, and what it returns is written to the peer in the
// clear, after the alert crypto/tls sent if any, before the connection
// closes: an HTTP server answers a plain request sent to its TLS port
// there, as net/http answers one (tls.RecordHeaderError says so).
type HandshakeErrorHandler interface {
	OnHandshakeError(remote net.Addr, err error) []byte
}

// BaseHandler is a Handler that does nothing: embed it and define only the
// methods you need. Its OnData discards what arrived.
type BaseHandler struct{}

// OnOpen does nothing.
func (BaseHandler) OnOpen(*Conn) {}

// OnData discards the buffered bytes.
func (BaseHandler) OnData(c *Conn) { c.Discard(c.InboundBuffered()) }

// OnClose does nothing.
func (BaseHandler) OnClose(*Conn, error) {}
