// Package poll is the only place the kernel's readiness APIs appear: epoll on
// Linux, kqueue on the BSDs and macOS, and a stub everywhere else so that the
// module builds on every GOOS.
//
// Every backend defines a Poller with the same methods:
//
//	New() (*Poller, error)
//	(*Poller).Add(fd int, tag uint32, in Interest) error
//	(*Poller).Modify(fd int, tag uint32, in Interest) error
//	(*Poller).Delete(fd int) error
//	(*Poller).Wait(events []Event, timeout time.Duration) (int, error)
//	(*Poller).Wake() error
//	(*Poller).Woke() bool
//	(*Poller).SetBlocking(on bool)
//	(*Poller).Close() error
//
// and passes the conformance suite in poll_test.go.
//
// A Poller is owned by one goroutine, which calls Add, Modify, Delete, Wait
// and Close. Wake is the exception: any goroutine may call it at any time,
// and it is cheap to call often, because wake-ups coalesce: between two
// returns of Wait, at most one Wake reaches the kernel.
//
// Registrations carry a caller-chosen tag, returned with every event, so that
// an owner that reuses fd numbers can tell a stale event (one for an fd that
// was deleted and re-added in the same batch) from a current one. The tag is
// plain data, never a Go pointer.
package poll

import (
	"errors"
	"time"
)

// Interest says which readiness a registration asks for.
type Interest uint8

const (
	// Read asks for readability (and peer hang-up).
	Read Interest = 1 << iota
	// Write asks for writability.
	Write
	// Edge asks for edge-triggered notification: an event is reported when
	// readiness changes, not while it lasts. The owner must then read or write
	// until EAGAIN. Without Edge, notification is level-triggered.
	Edge
)

// ReadWrite asks for both readability and writability.
const ReadWrite = Read | Write

// Flags says what a returned Event reports.
type Flags uint8

const (
	// Readable: a read will not block (data, EOF or a pending error).
	Readable Flags = 1 << iota
	// Writable: a write will not block.
	Writable
	// Hangup: the peer closed its side, or the fd hung up. Data may still be
	// readable. A hang-up comes with the flag of each direction it ends
	// that the owner waits on (Readable, Writable): a read or write there
	// no longer blocks.
	Hangup
	// Error: the fd has a pending error (read it with SO_ERROR or by I/O).
	// Backends report it with Readable or Writable, so that an owner that
	// reads or writes on those meets the error.
	Error
)

// Event is one readiness report.
type Event struct {
	Fd    int32
	Tag   uint32
	Flags Flags
}

// ErrClosed is returned by a Poller's methods after Close.
var ErrClosed = errors.New("poll: poller closed")

// ErrUnsupported is returned by New on an OS that has no backend.
var ErrUnsupported = errors.New("poll: no poller for this OS")

// maxFD is the largest fd number a Poller takes: the kernel's are C ints,
// and a larger Go int would be truncated to some other fd.
const maxFD = 1<<31 - 1

// timeoutMillis converts a wait timeout to whole milliseconds for the kernel,
// rounding up so that a wait never ends before the timeout: a timer that is
// due in 300µs must not make the loop spin. Negative means wait forever.
func timeoutMillis(d time.Duration) int {
	if d < 0 {
		return -1
	}
	ms := d / time.Millisecond
	if d%time.Millisecond != 0 {
		ms++ // not d+time.Millisecond-1, which wraps for the longest d
	}
	if ms > 1<<30 {
		ms = 1 << 30
	}
	return int(ms)
}
