package evloop

import (
	"cmp"
	"errors"
	"io"
	"net"
	"runtime/debug"
	"time"

	"github.com/evloop/evloop/internal/buf"
	"github.com/evloop/evloop/internal/loop"
	"github.com/evloop/evloop/internal/poll"
	"github.com/evloop/evloop/internal/sock"
)

// Connection states:
//
//	connecting ── connected ──► open; handshaking ── TLS handshake done ──► open
//	open ── Close, peer EOF, panic ──► closing ── outbound queue written ──► closed
//	  │                                   │
//	  └─ Abort, I/O error ────────────────┴─ CloseTimeout, Abort, error ────► closed
type connState uint8

const (
	connecting  connState = iota // Dial: waiting for the connect to finish
	handshaking                  // ListenTLS: waiting for the TLS handshake to finish
	open
	closing
	closed
)

// flags of a Conn.
const (
	fDirty      uint16 = 1 << iota // on its loop's list to flush
	fWriteArmed                    // waiting for writability
	fReadPaused                    // outbound over the high-water mark
	fInShared                      // in points into the loop's read buffer
	fWriteShut                     // CloseWrite: no more writes
	fShutDone                      // the write side is shut down
	fOpened                        // OnOpen ran: OnClose is owed
	fReadEOF                       // the peer sent EOF: nothing more to read
	fPeerClosed                    // closing because of the peer's EOF: OnClose gets io.EOF
	fUserPaused                    // PauseReading: not read until ResumeReading
	fLingering                     // closing: waiting for the peer's EOF, lingerTimeout at most
	fReadMore                      // on its loop's list to read again: the last read filled its buffer
	fHungUp                        // readiness reported the peer's hang-up: read until EOF
	fWritable                      // write-armed, and reported writable: flush at the iteration's end
	fNoBuffers                     // on its loop's list to flush again: a write met ENOBUFS
	fWroteLast                     // WriteLast: no more writes, the connection stays open
)

// segment is a run of outbound bytes: copied by Write into the loop's write
// arena or a pooled chunk of the connection's own, or the caller's own slice
// from AsyncWrite, with its completion. A segment lies within one chunk.
type segment struct {
	b     []byte
	chunk *buf.Chunk
	done  func(error)
	arena bool // chunk is the loop's, valid until the end of this iteration
}

// Conn is one connection, owned by the loop it was placed on.
//
// Its methods must be called on that loop's goroutine — in the Handler's
// methods, in a timer function from AfterFunc, or in a function passed to
// Submit — except AsyncWrite, Wake and Submit, which any goroutine may call.
type Conn struct {
	ls    *loopState
	fd    int32 // not int: the struct then fits a smaller size class
	state connState
	// secure: a TLS connection, whose state is in its loop's tls map, so
	// that a plain one pays nothing for it (the byte is padding otherwise).
	secure bool
	flags  uint16

	// in holds the inbound bytes not yet consumed. During OnData it may
	// point into the loop's read buffer (fInShared); afterwards into
	// inChunk or, past a chunk's size, into a heap buffer.
	in      []byte
	inChunk *buf.Chunk

	// out[outHead:] is the outbound queue; drained, it goes back to the
	// loop for the next connection that writes.
	out     []segment
	outHead int
	outLen  int

	ctx        any
	closeTimer loop.TimerID // while handshaking, the handshake's timeout
}

// HandleIO is the connection's readiness handler. It runs on the loop.
func (c *Conn) HandleIO(fd int, ev poll.Flags) {
	if c.state == connecting {
		c.connected()
		return
	}
	if ev&poll.Hangup != 0 {
		c.flags |= fHungUp
	}
	wasReading := c.reading()
	if ev&poll.Readable != 0 && wasReading {
		c.read()
	}
	if c.state == closed {
		return
	}
	if ev&poll.Writable != 0 && c.flags&fWriteArmed != 0 {
		c.writable()
	}
	if c.state != closed && ev&poll.Error != 0 && !wasReading && c.flags&fWriteArmed == 0 {
		// An error (a reset) while registered for neither reading nor
		// writing (paused): nothing else will see it.
		if err := sock.SocketError(int(c.fd)); err != nil {
			c.finalize(c.opError("read", err))
		} else {
			c.finalize(io.EOF)
		}
	}
	// A hang-up while paused is only noted: the bytes the peer sent
	// before it are read, then its EOF, once reading resumes.
}

// writable notes that a write-armed connection's socket can take bytes:
// they are written at the end of the iteration, with the rest of its
// writes, after Options.BeforeFlush, never while events are dispatched.
func (c *Conn) writable() {
	c.flags |= fWritable
	c.markDirty()
}

// HandlePanic closes a connection whose handler panicked; the loop has
// already logged the panic. The panic may have cut HandleIO short: an
// edge-triggered event's writability, which will not be reported again,
// is kept for the iteration's flush, and a full read's remainder read on.
func (c *Conn) HandlePanic(fd int, v any) {
	c.closeAfterPanic(v)
	if c.state == closing && c.flags&fWriteArmed != 0 {
		c.writable()
	}
	c.readAgainIf(true)
}

// reading reports whether the connection wants readability: while open
// and not paused, and while closing, to drain what the peer still sends, so
// that the close sends a FIN rather than a reset; never after EOF.
func (c *Conn) reading() bool {
	if c.flags&fReadEOF != 0 {
		return false
	}
	return (c.state == open && c.flags&(fReadPaused|fUserPaused) == 0) || c.state == closing ||
		c.state == handshaking && !c.tlsState().w.paused.Load()
}

// interest is what the connection waits for. Readiness is edge-
// triggered: the kernel reports new bytes once rather than at every wait
// while some are unread, which spares it a second look at every socket it
// reported. A read that does not fill its buffer has taken everything;
// one that does puts the connection on the loop's list to read again (see
// read). A change of interest makes the kernel look afresh, so bytes that
// came while reading was paused are reported when it resumes.
func (c *Conn) interest() poll.Interest {
	in := poll.Edge
	if c.reading() {
		in |= poll.Read
	}
	if c.flags&fWriteArmed != 0 {
		in |= poll.Write
	}
	return in
}

func (c *Conn) updateInterest() {
	if err := c.ls.l.Modify(int(c.fd), c.interest()); err != nil {
		c.finalize(c.opError("epoll_ctl", err))
	}
}

// read takes what the socket has and hands it to OnData. One read per
// readiness event: a read that fills its buffer may have left bytes in the
// socket, and one after the peer's hang-up was reported has the EOF still
// to see, neither of which edge-triggered readiness reports again, so then
// the connection reads again at the end of the iteration (readMore), after
// the others have had their turn.
func (c *Conn) read() {
	ls := c.ls
	shared := len(c.in) == 0
	var p []byte
	if shared || c.secure { // TLS: in holds plaintext; ciphertext goes here
		p = ls.rbuf
	} else {
		p = c.inSpace()
	}
	n, err := sock.Read(int(c.fd), p)
	switch {
	case err == sock.ErrAgain:
		return
	case err != nil:
		c.finalize(c.opError("read", err))
		return
	case n == 0:
		if c.secure && c.state == open {
			c.readTLSEOF()
			return
		}
		c.peerClosed()
		return
	}
	if c.state == closing {
		// Closing: drain what comes so that close sends a FIN, not a RST.
		c.readAgainIf(n == len(p) || c.flags&fHungUp != 0)
		return
	}
	switch {
	case c.secure:
		c.readTLS(p[:n])
	case shared:
		c.in = p[:n]
		c.flags |= fInShared
		c.ls.h.OnData(c)
	default:
		c.in = c.in[:len(c.in)+n]
		c.ls.h.OnData(c)
	}
	c.keepInbound()
	c.readAgainIf(n == len(p) || c.flags&fHungUp != 0)
}

// readAgainIf puts the connection on its loop's list to read again if
// more may be there and it still reads.
func (c *Conn) readAgainIf(more bool) {
	if more && c.flags&fReadMore == 0 && c.state != closed && c.reading() {
		c.flags |= fReadMore
		c.ls.more = append(c.ls.more, c)
	}
}

// inSpace returns free space after the buffered inbound bytes, compacting
// or growing their buffer as needed.
func (c *Conn) inSpace() []byte {
	const want = 4 << 10
	if cap(c.in)-len(c.in) >= want {
		return c.in[len(c.in):cap(c.in)]
	}
	var backing []byte
	if c.inChunk != nil {
		backing = c.inChunk[:]
	}
	if len(c.in)+want <= len(backing) {
		n := copy(backing, c.in)
		c.in = backing[:n]
	} else {
		grown := make([]byte, len(c.in), 2*len(c.in)+want)
		copy(grown, c.in)
		c.releaseChunk()
		c.in = grown
	}
	return c.in[len(c.in):cap(c.in)]
}

// keepInbound moves bytes the handler left in the loop's read buffer into
// storage of the connection's own, and releases that storage once empty.
func (c *Conn) keepInbound() {
	if c.state == closed {
		return
	}
	if len(c.in) == 0 {
		c.releaseIn()
		return
	}
	if c.flags&fInShared != 0 {
		c.flags &^= fInShared
		c.releaseChunk() // emptied by Next or Discard outside OnData, not yet returned
		var dst []byte
		if len(c.in) <= buf.ChunkSize {
			c.inChunk = buf.Get()
			dst = c.inChunk[:]
		} else {
			dst = make([]byte, 2*len(c.in))
		}
		c.in = dst[:copy(dst, c.in)]
	}
	if len(c.in) > c.ls.s.opts.MaxInbound {
		c.finalize(ErrInboundFull)
	}
}

func (c *Conn) releaseIn() {
	c.in = nil
	c.flags &^= fInShared
	c.releaseChunk()
}

func (c *Conn) releaseChunk() {
	if c.inChunk != nil {
		buf.Put(c.inChunk)
		c.inChunk = nil
	}
}

// peerClosed handles EOF: the peer sends no more. What is queued is still
// written, then the connection closes with io.EOF — unless the handler is a
// ReadEOFHandler, which decides.
func (c *Conn) peerClosed() {
	c.flags |= fReadEOF
	if c.state == handshaking {
		c.handshakeEOF()
		return
	}
	if c.state == open {
		if h, ok := c.ls.h.(ReadEOFHandler); ok {
			c.updateInterest()
			if c.state == open {
				h.OnReadEOF(c)
			}
			return
		}
		c.state = closing
		c.flags |= fPeerClosed
		c.startClose()
		return
	}
	// Closing already: the peer is done too. Stop reading; the flush decides.
	c.updateInterest()
	c.finalizeIfFlushed()
}

// PauseReading stops reading the connection until ResumeReading: what
// the peer sends waits in the kernel, whose receive window then closes, so
// the peer stops. A protocol busy with one request pauses so that the next
// ones cannot pile up in memory. The peer's EOF is seen once reading
// resumes, after the bytes the peer sent before it; a reset is noticed at
// once on Linux (epoll reports it without read interest), when reading
// resumes on kqueue. It must be called on the loop.
func (c *Conn) PauseReading() {
	if c.flags&fUserPaused == 0 {
		c.flags |= fUserPaused
		if c.state == open {
			c.updateInterest()
		}
	}
}

// ResumeReading undoes PauseReading. Bytes buffered before the pause are
// not handed to OnData again until more arrive: a handler that left some
// unconsumed processes them itself, or calls Wake.
func (c *Conn) ResumeReading() {
	if c.flags&fUserPaused != 0 {
		c.flags &^= fUserPaused
		if c.state == open {
			c.updateInterest()
		}
		_, eof := c.ls.eofs[c]
		if t := c.tlsState(); eof || t != nil && t.held {
			c.resumeHeld()
		}
	}
}

// deliverEOF reports the peer's EOF, or keeps it while the handler has
// reading paused: it is reported once reading resumes (resumeHeld), after
// the bytes read before it, as a plain connection's peer's EOF is, which
// is not read while paused. A TLS connection's close_notify, or a FIN read
// with its handshake, comes with the bytes before it: closed at once, it
// could not answer them.
func (c *Conn) deliverEOF() {
	if c.flags&fUserPaused == 0 {
		c.peerClosed()
		return
	}
	c.flags |= fReadEOF // there is nothing more to read
	if c.ls.eofs == nil {
		c.ls.eofs = make(map[*Conn]struct{})
	}
	c.ls.eofs[c] = struct{}{}
}

// resumeHeld hands a connection whose reading resumed what was kept while
// it was paused, which no read will report again: a TLS connection's
// plaintext read along with its handshake, then the peer's EOF.
func (c *Conn) resumeHeld() {
	c.ls.l.Submit(func() {
		if c.state != open || c.flags&fUserPaused != 0 {
			return // closed, or paused again: the next ResumeReading hands it
		}
		defer c.closeOnPanic()
		if t := c.tlsState(); t != nil && t.held {
			t.held = false
			c.ls.h.OnData(c)
			c.keepInbound()
		}
		if _, eof := c.ls.eofs[c]; eof && c.state == open && c.flags&fUserPaused == 0 {
			delete(c.ls.eofs, c)
			c.peerClosed()
		}
	})
}

// ReplayEOF reports again the peer's EOF, which OnReadEOF reported
// already, once reading is not paused: at once if it is not, else after
// ResumeReading. A protocol that takes a connection over after its earlier
// handler was told of the EOF (an HTTP upgrade whose client sent its last
// bytes and its FIN before the switch) learns of it so in its turn, after
// the bytes buffered before it, as if the EOF had come after the switch.
// It does nothing unless the peer's EOF was read and the connection is
// open. It must be called on the loop.
func (c *Conn) ReplayEOF() {
	if c.state == open && c.flags&fReadEOF != 0 {
		c.deliverEOF()
	}
}

// InboundBuffered returns how many received bytes are buffered, unconsumed.
func (c *Conn) InboundBuffered() int { return len(c.in) }

// Peek returns the next n buffered bytes without consuming them; n <= 0
// means all of them. If fewer than n are buffered, it returns them all and
// io.ErrShortBuffer. The slice is valid until the handler method returns
// or the next Next or Discard, whichever comes first; it must not be kept.
func (c *Conn) Peek(n int) ([]byte, error) {
	if n <= 0 {
		return c.in, nil
	}
	if n > len(c.in) {
		return c.in, io.ErrShortBuffer
	}
	return c.in[:n], nil
}

// Next returns the next n buffered bytes and consumes them; n <= 0 means
// all of them. If fewer than n are buffered, it consumes and returns them
// all, with io.ErrShortBuffer. The slice is valid until the handler method
// returns; it must not be kept.
func (c *Conn) Next(n int) ([]byte, error) {
	b, err := c.Peek(n)
	c.in = c.in[len(b):]
	return b, err
}

// Discard consumes the next n buffered bytes, or as many as there are, and
// returns how many it consumed.
func (c *Conn) Discard(n int) int {
	n = min(max(n, 0), len(c.in))
	c.in = c.in[n:]
	return n
}

// Write queues a copy of b to be written at the end of the loop's current
// iteration, after the bytes queued before it, and returns len(b). It fails
// with ErrClosed after Close, CloseWrite or WriteLast, and with
// ErrOutboundFull if the queue would pass Options.MaxOutbound.
func (c *Conn) Write(b []byte) (int, error) {
	if err := c.canWrite(len(b)); err != nil {
		return 0, err
	}
	if c.secure {
		return c.encrypt(b)
	}
	c.appendCopy(b)
	c.queued(len(b))
	return len(b), nil
}

// Writev is Write for several buffers at once.
func (c *Conn) Writev(bs [][]byte) (int, error) {
	n := 0
	for _, b := range bs {
		n += len(b)
	}
	if err := c.canWrite(n); err != nil {
		return 0, err
	}
	if c.secure {
		return c.encryptv(bs, n)
	}
	for _, b := range bs {
		c.appendCopy(b)
	}
	c.queued(n)
	return n, nil
}

// WriteLast queues a copy of b as the last bytes the connection writes,
// even if the queue would pass Options.MaxOutbound, and returns len(b):
// a protocol's final word — a WebSocket close frame, an error answer —
// reaches a peer that reads slowly, after everything queued before it,
// where Write would drop it. Later writes fail with ErrClosed; the
// connection stays open, reading, until it is closed. The queue's bound is
// passed by one WriteLast at most, and only while the peer has not taken
// the bytes before it; past Options.HighWater, reading pauses until the
// queue drains to LowWater, as for any write. It fails with ErrClosed after
// Close, CloseWrite or another WriteLast.
func (c *Conn) WriteLast(b []byte) (int, error) {
	if err := c.writeOpen(); err != nil {
		return 0, err
	}
	c.flags |= fWroteLast
	if c.secure {
		return c.encrypt(b)
	}
	c.appendCopy(b)
	c.queued(len(b))
	return len(b), nil
}

// writeOpen returns ErrClosed if the connection takes no more writes.
func (c *Conn) writeOpen() error {
	if c.state != open || c.flags&(fWriteShut|fWroteLast) != 0 {
		return ErrClosed
	}
	return nil
}

func (c *Conn) canWrite(n int) error {
	if err := c.writeOpen(); err != nil {
		return err
	}
	if c.secure {
		n += c.tlsState().overhead(n) // the queue holds the records
	}
	if c.outLen+n > c.ls.s.opts.MaxOutbound {
		return ErrOutboundFull
	}
	return nil
}

// pushSegment appends s to the outbound queue, reusing the queue's space.
func (c *Conn) pushSegment(s segment) {
	if c.out == nil {
		c.out = c.ls.getQueue()
	}
	if c.outHead > 0 && len(c.out) == cap(c.out) {
		n := copy(c.out, c.out[c.outHead:])
		clear(c.out[n:])
		c.out, c.outHead = c.out[:n], 0
	}
	c.out = append(c.out, s)
}

// appendCopy copies b to the end of the outbound queue: into the loop's
// write arena while the socket is not known to be full (the flush at the end
// of this iteration will most likely take it all), else into chunks of the
// connection's own.
func (c *Conn) appendCopy(b []byte) {
	ls := c.ls
	for len(b) > 0 {
		if k := len(c.out) - 1; k >= c.outHead {
			if n := ls.grow(&c.out[k], b); n > 0 {
				b = b[n:]
				continue
			}
		}
		var s segment
		if c.flags&fWriteArmed == 0 {
			s = ls.arenaSegment()
		}
		if s.chunk == nil {
			ch := buf.Get()
			s = segment{b: ch[:0], chunk: ch}
		}
		c.pushSegment(s)
	}
}

// keepOutbound moves the queued bytes that are still in the loop's write
// arena to chunks of the connection's own, before the arena is reused.
func (c *Conn) keepOutbound() {
	for i := c.outHead; i < len(c.out); i++ {
		if s := &c.out[i]; s.arena {
			ch := buf.Get()
			s.b = ch[:copy(ch[:], s.b)]
			s.chunk, s.arena = ch, false
		}
	}
}

// queued accounts for n new outbound bytes: the connection is flushed at
// the end of the iteration, and reading pauses above the high-water mark.
func (c *Conn) queued(n int) {
	c.outLen += n
	c.markDirty()
	if c.outLen > c.ls.s.opts.HighWater && c.flags&fReadPaused == 0 && c.state == open {
		c.flags |= fReadPaused
		c.updateInterest()
		if bp, ok := c.ls.h.(BackPressureHandler); ok && c.state != closed {
			bp.OnBackPressure(c, true)
		}
	}
}

func (c *Conn) markDirty() {
	if c.flags&fDirty == 0 {
		c.flags |= fDirty
		c.ls.dirty = append(c.ls.dirty, c)
	}
}

// AsyncWrite queues b to be written, from any goroutine, after every byte
// queued before it on this connection. b is not copied: it must not be
// modified until done is called. done, if not nil, is called exactly once
// on the loop goroutine: with nil once all of b reached the kernel, or with
// the error that stopped it (ErrClosed if the connection closed first, or
// takes no more writes: CloseWrite, WriteLast). If
// the loop is gone, done is called with ErrClosed before AsyncWrite returns.
// On the loop goroutine itself, use Write: an AsyncWrite made there is
// queued behind whatever the running handler writes after it.
func (c *Conn) AsyncWrite(b []byte, done func(error)) {
	err := c.ls.l.Submit(func() {
		defer c.closeOnPanic()
		if err := c.canWrite(len(b)); err != nil {
			if done != nil {
				done(err)
			}
			return
		}
		n := len(b)
		if c.secure {
			// Encrypted now, into the queue; done is called once the
			// bytes queued before it are written. They are accounted
			// for with done queued, so that a close in OnBackPressure
			// completes it.
			sealed, err := c.seal(b)
			if err != nil {
				if sealed > 0 {
					c.queued(sealed)
				}
				if done != nil {
					done(err)
				}
				return
			}
			b, n = nil, sealed
		}
		c.pushSegment(segment{b: b, done: done})
		c.queued(n)
	})
	if err != nil && done != nil {
		done(ErrClosed)
	}
}

// Wake calls the handler's OnData on the loop goroutine, whether or not
// bytes arrived: a goroutine that prepared something for the connection
// says so with Wake. Any goroutine may call it; it does nothing once the
// connection is closed.
func (c *Conn) Wake() {
	c.ls.l.Submit(func() {
		if c.state == open {
			defer c.closeOnPanic()
			c.ls.h.OnData(c)
			c.keepInbound()
		}
	})
}

// Submit runs fn on the connection's loop goroutine, where fn may use every
// method of the Conn. Any goroutine may call it; it fails with ErrClosed once
// the loop is stopped. A panic in fn is treated as one in OnData: logged,
// and the connection closed with a *PanicError. What fn consumed of the
// buffered inbound bytes is let go as after OnData: an emptied buffer goes
// back to the loop's pool.
func (c *Conn) Submit(fn func()) error {
	if c.ls.l.Submit(func() {
		defer c.closeOnPanic()
		fn()
		c.keepInbound()
	}) != nil {
		return ErrClosed
	}
	return nil
}

// ServeOthers serves the other connections of c's loop once, from inside a
// handler of c's that takes long, so that they are not kept waiting
// meanwhile, as Redis serves its clients while a script runs past its
// time: the readiness events there are now are taken without waiting and
// handed to their connections and listeners, and what those wrote is
// written. c itself is not read meanwhile: what arrives for it is read
// after its handler has returned, and what it queued goes out at the end
// of the iteration, as always. Timers, tasks, Options.BeforeFlush and the
// second reads of connections whose read filled its buffer wait for the
// iteration too. ServeOthers reports false and does nothing when called
// from a handler it runs itself or for a closed c; it reports false too if
// the poller's wait failed, what it had served written. On c's loop
// goroutine only.
func (c *Conn) ServeOthers() bool {
	ls := c.ls
	if ls.serving || c.state == closed {
		return false
	}
	ls.serving = true
	// c's bytes may be in the shared read buffer, which its handler is
	// still reading: the others are read into a buffer of their own.
	rbuf := ls.rbuf
	if ls.rbufOthers == nil {
		ls.rbufOthers = make([]byte, len(rbuf))
	}
	ls.rbuf = ls.rbufOthers
	defer func() {
		ls.rbuf = rbuf
		ls.serving = false
	}()
	// A wait that failed (which takes a bug) still leaves what the rest
	// of the batch made of the others, and what it kept of c's, to handle.
	kept, err := ls.l.DispatchReady(int(c.fd))
	if c.state != closed {
		// Edge-triggered: what was reported for c is not reported again.
		if kept&poll.Hangup != 0 {
			c.flags |= fHungUp
		}
		if kept&poll.Readable != 0 {
			c.readAgainIf(true)
		}
		if kept&poll.Writable != 0 && c.flags&fWriteArmed != 0 {
			c.writable()
		}
		if kept&poll.Error != 0 {
			// HandleIO's, for an error that nothing else would see (c
			// neither reads nor writes), once c's handler has returned.
			ls.l.Submit(func() {
				if c.state != closed {
					c.HandleIO(int(c.fd), poll.Error)
				}
			})
		}
	}
	if len(ls.more) > 0 {
		// Called after the iteration's readMore (from a callback of the
		// flush), the list would wait for an event to wake the loop.
		ls.l.Again()
	}
	ls.flushOthers(c)
	return err == nil
}

// OutboundBuffered returns how many bytes are queued and not yet written.
func (c *Conn) OutboundBuffered() int { return c.outLen }

// writeFD and writevFD are sock.Write and sock.Writev, the flush's system
// calls; tests replace them to make writes fail.
var (
	writeFD  = sock.Write
	writevFD = sock.Writev
)

// flush writes the outbound queue, one write or writev per call, and
// completes the segments that went out.
func (c *Conn) flush() {
	ls := c.ls
	blocked := c.flags&fWriteArmed != 0 // the socket did not take the queue at once
	for {
		for c.completeEmpty(); c.outLen > 0; c.completeEmpty() {
			iov := ls.iov[:0]
			total := 0
			for i := c.outHead; i < len(c.out) && len(iov) < cap(ls.iov); i++ {
				if len(c.out[i].b) > 0 {
					iov = append(iov, c.out[i].b)
					total += len(c.out[i].b)
				}
			}
			var n int
			var err error
			if len(iov) == 1 {
				n, err = writeFD(int(c.fd), iov[0])
			} else {
				n, err = writevFD(int(c.fd), iov)
			}
			clear(iov)
			if err == sock.ErrAgain {
				c.armWrite(true)
				return
			}
			if err != nil {
				if errors.Is(err, sock.ErrNoBuffers) {
					// macOS and the BSDs: the kernel is short of mbufs for a
					// moment and took nothing. Tried again at the next write
					// readiness, or, since none may come (the socket has
					// room), after a while, as the aio face does.
					c.armWrite(true)
					c.ls.retryWrite(c)
					return
				}
				c.finalize(c.opError("write", err))
				return
			}
			c.consume(n)
			if c.state == closed {
				return
			}
			if n < total {
				c.armWrite(true) // the socket is full: wait, rather than try again now
				c.drained()
				return
			}
		}
		c.armWrite(false)
		c.drained()
		if c.state == closed {
			return
		}
		if c.outLen == 0 {
			break
		}
		// OnBackPressure(false) queued more: written now, and OnWritten
		// waits for the queue to be empty.
	}
	if blocked && c.state == open {
		if wh, ok := c.ls.h.(WrittenHandler); ok {
			c.written(wh)
			if c.state == closed {
				return
			}
		}
	}
	if c.flags&(fWriteShut|fShutDone) == fWriteShut {
		c.flags |= fShutDone
		if err := sock.ShutdownWrite(int(c.fd)); err != nil {
			c.finalize(c.opError("shutdown", err))
			return
		}
	}
	c.finalizeIfFlushed()
}

// drained resumes reading paused by back-pressure once the outbound
// queue is at or below Options.LowWater.
func (c *Conn) drained() {
	if c.flags&fReadPaused != 0 && c.outLen <= c.ls.s.opts.LowWater && c.state == open {
		c.flags &^= fReadPaused
		c.updateInterest()
		if bp, ok := c.ls.h.(BackPressureHandler); ok && c.state != closed {
			bp.OnBackPressure(c, false)
		}
	}
}

// written calls wh.OnWritten; a panic in it closes c as one in a handler
// does.
func (c *Conn) written(wh WrittenHandler) {
	defer c.closeOnPanic()
	wh.OnWritten(c)
}

// completeEmpty completes the empty segments at the head of the queue:
// AsyncWrites of nothing, whose turn has come.
func (c *Conn) completeEmpty() {
	for c.outHead < len(c.out) && len(c.out[c.outHead].b) == 0 && c.state != closed {
		s := c.popSegment()
		if s.done != nil {
			c.completed(s.done)
		}
	}
}

// completed calls an AsyncWrite's done with nil. A panic in it closes c as
// one in a handler does, after the rest of the queue; the write it
// completes must not be interrupted, or the bytes written after its
// segment would be counted as unwritten and sent again.
func (c *Conn) completed(done func(error)) {
	defer c.closeOnPanic()
	done(nil)
}

// consume drops n written bytes from the head of the queue.
func (c *Conn) consume(n int) {
	c.outLen -= n
	for n > 0 && c.outHead < len(c.out) {
		s := &c.out[c.outHead]
		if n < len(s.b) {
			s.b = s.b[n:]
			return
		}
		n -= len(s.b)
		seg := c.popSegment()
		if seg.done != nil {
			c.completed(seg.done)
			if c.state == closed {
				return
			}
		}
	}
}

func (c *Conn) popSegment() segment {
	s := c.out[c.outHead]
	c.out[c.outHead] = segment{}
	c.outHead++
	if c.outHead == len(c.out) {
		c.ls.putQueue(c.out)
		c.out, c.outHead = nil, 0
	}
	if s.chunk != nil && !s.arena {
		buf.Put(s.chunk)
	}
	return s
}

func (c *Conn) armWrite(on bool) {
	if on == (c.flags&fWriteArmed != 0) {
		return
	}
	c.flags ^= fWriteArmed
	c.updateInterest()
}

// flushDirty runs at the end of every iteration of the connection's loop.
func (c *Conn) flushDirty() {
	c.flags &^= fDirty
	if c.state == closed || c.state == connecting {
		return
	}
	if c.flags&fWriteArmed == 0 || c.flags&fWritable != 0 {
		c.flags &^= fWritable
		c.flush()
		if c.state != closed && c.outLen > 0 {
			c.keepOutbound()
		}
		return
	}
	c.finalizeIfFlushed()
}

// Close closes the connection gracefully: reading stops, the queued bytes
// are written, then the fd is closed (a FIN, not a reset) and OnClose runs.
// If the peer takes none of the queued bytes for Options.CloseTimeout, the
// connection is aborted; one that takes them, however slowly, gets them
// all. Close of a connection still being dialed (EachConn hands those
// too) ends the dial, as Abort does: its Dial fails with ErrClosed. Close
// returns ErrClosed if the connection was already closing or closed.
func (c *Conn) Close() error {
	if c.state == connecting || c.state == handshaking {
		c.finalize(nil)
		return nil
	}
	if c.state != open {
		return ErrClosed
	}
	c.state = closing
	c.startClose()
	return nil
}

func (c *Conn) startClose() {
	c.closeNotify()
	c.updateInterest()
	if c.state == closed {
		return
	}
	if t := c.ls.s.opts.CloseTimeout; t > 0 && c.outLen > 0 {
		c.abortAfterStall(t, c.outLen)
	}
	c.markDirty()
}

// abortAfterStall aborts closing c with ErrCloseTimeout once its peer has
// taken none of the queued bytes for t; left bytes were queued when the
// wait began. A peer that takes them, however slowly, gets them all. The
// socket's writability found in this iteration counts as taking: the
// iteration's flush, after the timers, has not yet written.
func (c *Conn) abortAfterStall(t time.Duration, left int) {
	c.closeTimer = c.ls.l.AfterFunc(t, func() {
		if c.state == closing && c.outLen > 0 && (c.outLen < left || c.flags&fWritable != 0) {
			c.abortAfterStall(t, c.outLen)
			return
		}
		sock.SetLingerZero(int(c.fd))
		c.finalize(ErrCloseTimeout)
	})
}

func (c *Conn) finalizeIfFlushed() {
	if c.state != closing || c.outLen != 0 || len(c.out) != 0 {
		return
	}
	c.drainInbound()
	if c.flags&fReadEOF == 0 && c.state == closing {
		c.linger()
		return
	}
	var err error
	if c.flags&fPeerClosed != 0 {
		err = io.EOF
	}
	c.finalize(err)
}

// lingerTimeout bounds how long a closing connection waits for its peer's
// EOF after sending its own.
const lingerTimeout = time.Second

// linger closes gracefully a connection whose peer may still be sending:
// closing the fd now, with bytes arriving, would reset the connection, and
// a reset can destroy the last bytes written (an error response, a close
// frame) before the peer reads them. So the write side is shut down (the
// peer reads EOF), what arrives is read and dropped, and the fd is closed
// at the peer's EOF or after lingerTimeout.
func (c *Conn) linger() {
	if c.flags&fLingering != 0 {
		return
	}
	c.flags |= fLingering
	if c.flags&fShutDone == 0 { // else CloseWrite's flush shut it down
		c.flags |= fShutDone | fWriteShut
		if sock.ShutdownWrite(int(c.fd)) != nil {
			c.finalize(nil)
			return
		}
	}
	c.ls.l.CancelTimer(c.closeTimer)
	c.closeTimer = c.ls.l.AfterFunc(lingerTimeout, func() { c.finalize(nil) })
}

// drainInbound reads and drops what the peer sent and nobody will read:
// closing a socket with unread bytes resets the connection, and a reset
// can destroy the last bytes written before they are read.
func (c *Conn) drainInbound() {
	for range 16 {
		if n, err := sock.Read(int(c.fd), c.ls.rbuf); n <= 0 || err != nil {
			return
		}
	}
}

// closeNow is Shutdown's close: graceful unless abort. A connection still
// being dialed fails its Dial.
func (c *Conn) closeNow(abort bool) {
	switch {
	case c.state == connecting || c.state == handshaking:
		c.finalize(ErrShutdown) // a Dial returns the error
	case abort:
		sock.SetLingerZero(int(c.fd))
		c.finalizeWith(ErrShutdown, ErrShutdown)
	default:
		c.Close()
	}
}

// CloseWrite shuts down the writing side once the queued bytes are
// written: the peer reads EOF, and this side goes on reading. Later writes
// fail with ErrClosed.
func (c *Conn) CloseWrite() error {
	if c.state != open || c.flags&fWriteShut != 0 {
		return ErrClosed
	}
	c.closeNotify()
	c.flags |= fWriteShut
	c.markDirty()
	return nil
}

// Abort closes the connection at once with a reset (RST): queued bytes are
// dropped and their AsyncWrites complete with ErrAborted.
func (c *Conn) Abort() error {
	if c.state == closed {
		return ErrClosed
	}
	sock.SetLingerZero(int(c.fd))
	c.finalizeWith(nil, ErrAborted)
	return nil
}

// Detach takes the connection off its loop and gives it to the caller as
// a net.Conn of Go's own (on a duplicate of its fd), with the bytes
// received and not yet consumed: an HTTP server hijacking a connection
// for a handler that wants blocking I/O uses it. The loop forgets the
// connection — no FIN is sent, the socket lives on in the returned
// net.Conn — and OnClose runs with ErrDetached. It must be called on the
// loop, with nothing queued to write (else ErrOutboundPending: wait for
// the queue to drain, as AsyncWrite's completion tells), and not after
// CloseWrite or WriteLast, which ended its writes (else ErrClosed).
func (c *Conn) Detach() (net.Conn, []byte, error) {
	if c.state != open || c.flags&(fWriteShut|fWroteLast) != 0 {
		return nil, nil, ErrClosed
	}
	if c.outLen > 0 {
		return nil, nil, ErrOutboundPending
	}
	nc, err := sock.FileConn(int(c.fd))
	if err != nil {
		return nil, nil, err
	}
	var rest []byte
	if len(c.in) > 0 {
		rest = append([]byte(nil), c.in...)
	}
	if c.secure {
		nc = c.detachTLS(nc)
	}
	// Nothing is left to write: the AsyncWrites still listed (those
	// written in the flush whose completion detaches, or of nothing)
	// reached the kernel, and the socket lives on to send them.
	c.finalizeWith(ErrDetached, nil)
	return nc, rest, nil
}

// finalize closes the fd and runs OnClose with err, once.
func (c *Conn) finalize(err error) {
	werr := err
	if werr == nil {
		werr = ErrClosed
	}
	c.finalizeWith(err, werr)
}

// finalizeWith closes the fd, completes queued writes with writeErr, and
// runs OnClose with err.
func (c *Conn) finalizeWith(err, writeErr error) {
	if c.state == closed {
		return
	}
	c.state = closed
	ls := c.ls
	if len(ls.panics) > 0 {
		if pe, ok := ls.panics[c]; ok {
			delete(ls.panics, c)
			err = pe // whatever ended the close, a panic began it
		}
	}
	ls.l.CancelTimer(c.closeTimer)
	ls.l.Unregister(int(c.fd))
	sock.Close(int(c.fd))
	if c.secure {
		t := c.tlsState()
		t.stop() // a handshake still under way fails
		if err == nil && t.err != nil {
			err = t.err
		}
	}
	if res, ok := ls.dials[c]; ok {
		// Still being dialed, whoever ended it (Shutdown, the Dial's
		// context, Abort through EachConn, a panic): its Dial returns.
		delete(ls.dials, c)
		res <- dialResult{err: cmp.Or(err, ErrClosed)}
	}
	c.releaseIn()
	// Whatever the callbacks below do, even panic, the server must learn
	// that the connection is gone, or Shutdown would wait for it forever.
	defer ls.gone()
	for len(c.out) > 0 {
		s := c.popSegment()
		if s.done != nil {
			ls.guard("AsyncWrite completion", func() { s.done(writeErr) })
		}
	}
	c.outLen = 0
	if c.flags&fOpened != 0 {
		ls.guard("OnClose", func() { ls.h.OnClose(c, err) })
	}
	if c.secure {
		delete(ls.tls, c) // after OnClose, which may ask ConnectionState
	}
	if len(ls.eofs) > 0 {
		delete(ls.eofs, c)
	}
}

// Loop returns the index of the loop the connection is placed on, for
// Server.Submit, AfterFunc and Every.
func (c *Conn) Loop() int { return c.ls.index }

// Server returns the Server whose loop owns the connection: the one that
// accepted, dialed or adopted it. Loop indexes are a Server's own, so the
// pair of the two names a loop among several Servers' (a client's
// connections from Dial and a listener's, say).
func (c *Conn) Server() *Server { return c.ls.s }

// Fd returns the connection's file descriptor, or -1 once closed: for
// what identifies a connection to its operators (Redis's CLIENT LIST
// shows it) and for socket options the package does not set. The loop
// owns it: it must not be read, written or closed.
func (c *Conn) Fd() int {
	if c.state == closed {
		return -1
	}
	return int(c.fd)
}

// Closed reports whether the connection is closed or closing.
func (c *Conn) Closed() bool { return c.state >= closing }

// SetContext attaches a value of the application's to the connection.
func (c *Conn) SetContext(v any) { c.ctx = v }

// Context returns the value given to SetContext.
func (c *Conn) Context() any { return c.ctx }

// LocalAddr returns the local address, or nil once closed. It asks the
// kernel each time rather than keep the address in every connection.
func (c *Conn) LocalAddr() net.Addr {
	if c.state == closed {
		return nil
	}
	return sock.LocalAddr(int(c.fd))
}

// RemoteAddr returns the peer's address, or nil once closed. It asks the
// kernel each time rather than keep the address in every connection.
func (c *Conn) RemoteAddr() net.Addr {
	if c.state == closed {
		return nil
	}
	return sock.RemoteAddr(int(c.fd))
}

// SetKeepAlive sets the connection's TCP keep-alive period, in place of
// Options.KeepAlive's (negative: off). Call it on the loop goroutine, in
// a handler; it fails once the connection is closed.
func (c *Conn) SetKeepAlive(period time.Duration) error {
	if c.state == closed {
		return net.ErrClosed
	}
	return sock.SetKeepAlive(int(c.fd), period)
}

// SetKeepAliveConfig sets the connection's TCP keep-alive as
// net.TCPConn's SetKeepAliveConfig does: an Idle or Interval of zero is
// 15 seconds, a Count of zero 9 probes, a negative field leaves the
// system's value; times are rounded up to whole seconds. Where the system
// sets keep-alive timing only for itself (OpenBSD), only Enable applies.
// Call it on the loop goroutine, in a handler; it fails once the
// connection is closed.
func (c *Conn) SetKeepAliveConfig(cfg net.KeepAliveConfig) error {
	if c.state == closed {
		return net.ErrClosed
	}
	if cfg.Idle == 0 {
		cfg.Idle = 15 * time.Second
	}
	if cfg.Interval == 0 {
		cfg.Interval = 15 * time.Second
	}
	if cfg.Count == 0 {
		cfg.Count = 9
	}
	return sock.SetKeepAliveConfig(int(c.fd), cfg)
}

// Timer is a timer on a connection's loop.
type Timer struct {
	l  *loop.Loop
	id loop.TimerID
}

// Stop cancels the timer and reports whether it had not yet fired. Must be
// called on the loop goroutine.
func (t Timer) Stop() bool { return t.l != nil && t.l.CancelTimer(t.id) }

// Reset moves the timer to d from now and reports whether it had not yet
// fired. A timer that fired or was stopped is not armed again (unlike a
// time.Timer's): it reports false, and AfterFunc makes a new one. Must be
// called on the loop goroutine.
func (t Timer) Reset(d time.Duration) bool { return t.l != nil && t.l.ResetTimer(t.id, d) }

// AfterFunc calls fn on the connection's loop goroutine after d, unless the
// connection is closed by then (OnClose ran; it is still called while a
// closing connection writes what it queued, when Closed already reports
// true): the building block for idle and read timeouts. Must be called on
// the loop goroutine.
func (c *Conn) AfterFunc(d time.Duration, fn func()) Timer {
	return Timer{l: c.ls.l, id: c.ls.l.AfterFunc(d, func() {
		if c.state != closed {
			defer c.closeOnPanic()
			fn()
		}
	})}
}

// runOnOpen runs OnOpen for an accepted, dialed or adopted connection. A
// panic there is logged and closes the connection as one in a handler
// does (what OnOpen queued goes out first, then OnClose gets the
// *PanicError), and is returned, for a Dial to return.
func (c *Conn) runOnOpen() (panicked any) {
	defer func() {
		if panicked = recover(); panicked != nil {
			c.ls.s.opts.Logger.Error("evloop: panic recovered in OnOpen", "panic", panicked)
			c.closeAfterPanic(panicked)
		}
	}()
	c.ls.h.OnOpen(c)
	return nil
}

// closeOnPanic, deferred around the application's code that runs for c
// outside its I/O handler (Wake, Submit, AsyncWrite completions, timers), treats a
// panic there as one in OnData: logged, and the connection closed with a
// *PanicError.
func (c *Conn) closeOnPanic() {
	if v := recover(); v != nil {
		c.ls.s.opts.Logger.Error("evloop: panic recovered", "panic", v, "stack", string(debug.Stack()))
		c.closeAfterPanic(v)
	}
}

// closeAfterPanic closes c after the application's code for it panicked
// with v. It closes as Close does: what was queued before is written
// first (the answers a protocol completed before the one that panicked
// reach the peer), and OnClose gets a *PanicError. What arrived and was
// not consumed is dropped: no handler method runs for c again.
func (c *Conn) closeAfterPanic(v any) {
	ls := c.ls
	if _, again := ls.panics[c]; again || c.state == connecting || c.state == handshaking || c.state == closed {
		// A second panic while closing after one (a completion, a
		// timer, or the flush itself): close at once, with the first.
		c.finalize(&PanicError{Value: v})
		return
	}
	if ls.panics == nil {
		ls.panics = make(map[*Conn]*PanicError)
	}
	ls.panics[c] = &PanicError{Value: v}
	c.releaseIn()
	if c.state == open {
		c.state = closing
		c.startClose()
		return
	}
	c.markDirty() // closing already: a panic in the flush is flushed again
}

func (c *Conn) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return err
	}
	local := c.LocalAddr()
	network := "tcp"
	if _, ok := local.(*net.UnixAddr); ok {
		network = "unix"
	}
	return &net.OpError{Op: op, Net: network, Source: local, Addr: c.RemoteAddr(), Err: err}
}
