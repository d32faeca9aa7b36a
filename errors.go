package evloop

import (
	"errors"
	"fmt"
	"net"
)

// Errors returned by the reactor. Compare with errors.Is.
var (
	// ErrClosed is returned by operations on a closed connection or server;
	// it wraps net.ErrClosed.
	ErrClosed = fmt.Errorf("evloop: %w", net.ErrClosed)
	// ErrOutboundFull is returned by Write when the bytes queued for a
	// connection would pass Options.MaxOutbound.
	ErrOutboundFull = errors.New("evloop: outbound queue full")
	// ErrInboundFull closes a connection whose handler left more than
	// Options.MaxInbound bytes unconsumed.
	ErrInboundFull = errors.New("evloop: unconsumed inbound bytes over the limit")
	// ErrCloseTimeout closes a connection whose peer took none of the
	// bytes queued before Close for Options.CloseTimeout.
	ErrCloseTimeout = errors.New("evloop: close timed out with bytes unwritten")
	// ErrAborted completes the writes still queued when a connection is
	// aborted.
	ErrAborted = errors.New("evloop: connection aborted")
	// ErrShutdown closes connections that were still open when a
	// Shutdown's context ended.
	ErrShutdown = errors.New("evloop: server shut down")
	// ErrDetached is what OnClose receives for a connection taken off its
	// loop by Detach.
	ErrDetached = errors.New("evloop: connection detached from its loop")
	// ErrOutboundPending is returned by Detach while bytes are queued.
	ErrOutboundPending = errors.New("evloop: outbound bytes still queued")
	// ErrUnsupported is returned where the OS has no event loop backend,
	// and by Adopt and Serve for conns and listeners with no file descriptor
	// or not of stream sockets.
	ErrUnsupported = errors.New("evloop: unsupported")
	// ErrNotListening is returned by Unlisten for an address the server
	// does not listen on.
	ErrNotListening = errors.New("evloop: not listening on the address")
)

// PanicError is the error OnClose receives for a connection whose handler
// panicked. Such a connection is closed as Close closes one: the bytes
// queued before the panic are written first, and nothing more is read.
type PanicError struct {
	Value any
}

func (e *PanicError) Error() string { return fmt.Sprintf("evloop: handler panicked: %v", e.Value) }
