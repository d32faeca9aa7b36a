package aio

import (
	"errors"
	"net"
)

// The errors of gaio, with its messages.
var (
	// ErrUnsupported: the Watcher cannot take this kind of connection.
	ErrUnsupported = errors.New("unsupported connection type")
	// ErrNoRawConn is gaio's, which never returns it; nor does aio: a
	// connection that gives no syscall.RawConn completes with
	// ErrUnsupported, as in gaio.
	ErrNoRawConn = errors.New("net.Conn does implement net.RawConn")
	// ErrWatcherClosed: the Watcher is closed.
	ErrWatcherClosed = errors.New("watcher closed")
	// ErrPollerClosed: the poller is closed; SetPollerAffinity on a closed
	// Watcher returns it, as gaio's does.
	ErrPollerClosed = errors.New("poller closed")
	// ErrConnClosed: the connection was freed; SetLoopAffinity on a closed
	// Watcher returns it, as gaio's does.
	ErrConnClosed = errors.New("connection closed")
	// ErrDeadline: the operation's deadline passed before it completed.
	ErrDeadline = errors.New("operation exceeded deadline")
	// ErrEmptyBuffer: the operation needs a buffer and was given none.
	ErrEmptyBuffer = errors.New("empty buffer")
	// ErrCPUID: there is no CPU of that number.
	ErrCPUID = errors.New("no such core")
)

// OpType is the kind of an operation.
type OpType int

const (
	// OpRead is a read.
	OpRead OpType = iota
	// OpWrite is a write.
	OpWrite
	opDelete // Free
)

// Readiness bits, as gaio exports them.
const (
	EV_READ  = 0x1
	EV_WRITE = 0x2
)

// Signal is gaio's batch of readiness events, which its poller goroutine
// hands to its loop goroutine. gaio exports the type, though nothing of its
// API takes or returns one; here polling and I/O run on one loop, and
// nothing makes a Signal. It is kept so that code naming it builds, and it
// is not comparable, as gaio's is not.
type Signal struct {
	_ [0]func()
}

// OpResult is the completion of one operation.
type OpResult struct {
	// Operation is OpRead or OpWrite.
	Operation OpType
	// Context is the value given when the operation was submitted.
	Context any
	// Conn is the connection of the operation.
	Conn net.Conn
	// Buffer is the buffer given, or for a read without one, the bytes read
	// in the Watcher's swap buffer, valid until the next WaitIO.
	Buffer []byte
	// IsSwapBuffer reports that Buffer is in the Watcher's swap buffer.
	IsSwapBuffer bool
	// Size is how many bytes were read or written: Buffer[:Size].
	Size int
	// Error is what stopped the operation, io.EOF at the end of the
	// stream, ErrDeadline if its deadline passed, the bare syscall.Errno
	// if a system call failed (syscall.ECONNRESET), the conn's own error if
	// it could not be taken over (a closed conn's *net.OpError); nil on
	// success.
	Error error
}
