//go:build unix

package hello

import (
	"golang.org/x/sys/unix"
)

// Conn is one client connection as the examples keep it: its fd, the bytes
// of an incomplete request, and the response bytes not yet written.
type Conn struct {
	Fd  int
	in  []byte
	out []byte
	// Closing: the connection is to close once out is written.
	Closing bool
}

// Status says what a connection needs after Handle or Flush.
type Status int

const (
	// WantRead: everything is written; wait until the socket is readable.
	WantRead Status = iota
	// WantWrite: the socket's send buffer is full; wait until it is writable.
	WantWrite
	// Done: the peer left, the request was bad, or it asked to close: close the fd.
	Done
)

// Handle reads what the socket has, answers every complete request, and
// writes the answers. buf is scratch space for reading.
func (c *Conn) Handle(buf []byte) Status {
	for !c.Closing {
		n, err := unix.Read(c.Fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			return Done // a reset
		}
		if n == 0 {
			// EOF: the client sent all it will, but may still read what it
			// is owed (a half-close after pipelined requests).
			c.Closing = true
			break
		}
		c.in = append(c.in, buf[:n]...)
		var consumed int
		consumed, c.out, c.Closing, _ = Serve(c.in, c.out)
		c.in = append(c.in[:0], c.in[consumed:]...)
		if n < len(buf) || len(c.out) > 64<<10 {
			// A short read drained the socket (level-triggered readiness
			// says when there is more), and a pipelining client that does
			// not read gets its answers before more requests are taken.
			break
		}
	}
	return c.Flush()
}

// Flush writes as much of the pending output as the socket takes.
func (c *Conn) Flush() Status {
	for len(c.out) > 0 {
		n, err := unix.Write(c.Fd, c.out)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return WantWrite
		}
		if err != nil {
			return Done
		}
		c.out = c.out[:copy(c.out, c.out[n:])]
	}
	if c.Closing {
		return Done
	}
	return WantRead
}
