package evloop

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evloop/evloop/internal/buf"
	"github.com/evloop/evloop/internal/sock"
)

// TLS on the loops.
//
// A connection accepted by a ListenTLS or ServeTLS listener is served by
// crypto/tls's Conn over a transport of the package's own (tlsWire). Its
// handshake, a sequence of blocking reads and writes in crypto/tls, runs on
// a goroutine of its own, from the client's first whole record to the
// handshake's end, bounded by Options.HandshakeTimeout: the loop hands it
// the bytes it reads and queues what it writes, and the signatures and key
// exchanges are computed off the loop. A client that connects and sends
// nothing, or part of its hello, costs no goroutine, only its timer. Once established the connection is the loop's
// alone, as any other: what arrives is decrypted on the loop before OnData
// sees it, and what the handler writes is encrypted as it is queued.
// crypto/tls's reads take a temporary error of the transport as "nothing
// more for now" and go on where they stopped at the next call, which is
// what lets the loop decrypt what a read brought and no more.

// ErrHandshakeTimeout closes a TLS connection whose handshake took longer
// than Options.HandshakeTimeout.
var ErrHandshakeTimeout = errors.New("evloop: TLS handshake timed out")

// tlsState is a TLS connection's.
type tlsState struct {
	tc      *tls.Conn
	w       tlsWire
	started bool               // the handshake's goroutine was started
	held    bool               // plaintext kept from OnData while reading is paused (ResumeReading)
	record  int                // what a record adds to its plaintext at most (recordOverhead)
	cancel  context.CancelFunc // ends the handshake's context
	err     error              // the TLS failure that closes the connection, for OnClose
}

// stop ends a handshake still under way, its connection closed: its
// goroutine's reads and writes fail, and its context ends, which
// crypto/tls hands the configuration's callbacks (ClientHelloInfo's
// Context: an ACME client's GetCertificate waits on it), lest the
// goroutine outlive the connection for as long as they take, and Shutdown
// wait for it.
func (t *tlsState) stop() {
	t.w.close()
	if t.cancel != nil {
		t.cancel()
	}
}

// How a tlsWire carries bytes.
const (
	wireHandshake = iota // between the loop and the handshake's goroutine
	wireLoop             // on the loop, established
	wireDetached         // through a net.Conn of Go's, after Detach
)

// handshakeInbound bounds the bytes read for the handshake's goroutine
// and not yet taken by it: past it, the loop stops reading the connection
// until the goroutine has taken them all. A peer that sends its first
// messages right after its last handshake message (a client's first
// request) is read at the goroutine's pace until the handshake is done.
const handshakeInbound = 64 << 10

// errWouldBlock is what a tlsWire's Read returns on the loop when the
// bytes read from the socket are all taken: crypto/tls keeps what it has
// of a record and reads on at the next call.
var errWouldBlock net.Error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "evloop: no more TLS bytes for now" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

// tlsWire is the net.Conn under a TLS connection's crypto/tls Conn.
// mode says who uses it: it changes only on the loop, while nobody else
// does (the handshake's goroutine has ended, or the loop detaches).
type tlsWire struct {
	c      *Conn
	mode   uint8
	local  net.Addr
	remote net.Addr

	// wireHandshake: the loop appends what it reads to in, and the
	// handshake's goroutine, woken through ready, takes it.
	mu    sync.Mutex
	in    []byte
	eof   bool // the peer's EOF follows in (wireLoop: src)
	shut  bool
	ready chan struct{}
	// paused: the loop stopped reading, in being full; the goroutine
	// resumes it once it has taken in.
	paused atomic.Bool

	// wireLoop: the bytes read, while they are decrypted, and the bytes
	// Write queued during one call of crypto/tls's. wireDetached: src
	// holds the bytes the loop read and did not decrypt, read before nc's.
	src    []byte
	queued int

	nc net.Conn // wireDetached
}

func (w *tlsWire) Read(b []byte) (int, error) {
	if w.mode != wireHandshake {
		switch {
		case len(w.src) > 0: // read by the loop, not yet decrypted
			n := copy(b, w.src)
			w.src = w.src[n:]
			return n, nil
		case w.mode == wireDetached:
			return w.nc.Read(b)
		case w.eof:
			// The peer's FIN: crypto/tls tells one at a record's
			// boundary (io.EOF) from one within a record
			// (io.ErrUnexpectedEOF).
			return 0, io.EOF
		}
		return 0, errWouldBlock
	}
	for {
		w.mu.Lock()
		n := copy(b, w.in)
		w.in = w.in[n:]
		shut, eof := w.shut, w.eof
		resume := len(w.in) == 0 && w.paused.Load()
		w.mu.Unlock()
		if resume {
			w.paused.Store(false)
			c := w.c
			c.ls.l.Submit(func() {
				if c.state == handshaking {
					c.updateInterest()
				}
			})
		}
		switch {
		case n > 0:
			return n, nil
		case shut:
			return 0, net.ErrClosed
		case eof:
			return 0, io.EOF
		}
		<-w.ready
	}
}

func (w *tlsWire) Write(b []byte) (int, error) {
	switch w.mode {
	case wireLoop:
		if w.c.flags&fWriteShut != 0 {
			// After CloseWrite's close_notify: crypto/tls answering
			// the peer's key update request, which nothing may
			// follow. Its error waits for a write, which CloseWrite
			// refuses first.
			return 0, ErrClosed
		}
		w.c.appendCopy(b)
		w.queued += len(b)
		return len(b), nil
	case wireDetached:
		return w.nc.Write(b)
	}
	// From the handshake's goroutine: crypto/tls reuses b once Write
	// returns.
	w.mu.Lock()
	shut := w.shut
	w.mu.Unlock()
	if shut {
		return 0, net.ErrClosed
	}
	b = append([]byte(nil), b...)
	c := w.c
	if c.ls.l.Submit(func() {
		if c.state == handshaking {
			c.pushSegment(segment{b: b})
			c.queued(len(b))
		}
	}) != nil {
		return 0, net.ErrClosed
	}
	return len(b), nil
}

// feed hands what the loop read during the handshake to its goroutine,
// and reports whether the loop should stop reading until it has taken it.
func (w *tlsWire) feed(b []byte) (full bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.in = append(w.in, b...)
	w.wake()
	if len(w.in) >= handshakeInbound {
		w.paused.Store(true)
		return true
	}
	return false
}

// readEOF tells the handshake's goroutine that the peer's EOF follows
// what it was handed.
func (w *tlsWire) readEOF() {
	w.mu.Lock()
	w.eof = true
	w.wake()
	w.mu.Unlock()
}

// close wakes the handshake's goroutine, if any, for good: the connection
// is closed.
func (w *tlsWire) close() {
	w.mu.Lock()
	w.shut = true
	w.in = nil
	w.wake()
	w.mu.Unlock()
}

func (w *tlsWire) wake() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

func (w *tlsWire) Close() error {
	if w.mode == wireDetached {
		return w.nc.Close()
	}
	return nil // the loop closes the socket
}

func (w *tlsWire) LocalAddr() net.Addr  { return w.local }
func (w *tlsWire) RemoteAddr() net.Addr { return w.remote }

func (w *tlsWire) SetDeadline(t time.Time) error {
	if w.mode == wireDetached {
		return w.nc.SetDeadline(t)
	}
	return nil
}

func (w *tlsWire) SetReadDeadline(t time.Time) error {
	if w.mode == wireDetached {
		return w.nc.SetReadDeadline(t)
	}
	return nil
}

func (w *tlsWire) SetWriteDeadline(t time.Time) error {
	if w.mode == wireDetached {
		return w.nc.SetWriteDeadline(t)
	}
	return nil
}

// checkTLSConfig refuses a server configuration without certificates, as
// tls.Listen does.
func checkTLSConfig(config *tls.Config) error {
	if config == nil || len(config.Certificates) == 0 && config.GetCertificate == nil && config.GetConfigForClient == nil {
		return errors.New("evloop: TLS configuration without Certificates, GetCertificate or GetConfigForClient")
	}
	return nil
}

// prepareTLS gives c the TLS side of a server (an accepted connection) or
// of a client (a dialed one) with config.
func (c *Conn) prepareTLS(config *tls.Config, client bool) {
	t := &tlsState{}
	t.w = tlsWire{c: c, ready: make(chan struct{}, 1)}
	if client {
		t.tc = tls.Client(&t.w, config)
	} else {
		t.tc = tls.Server(&t.w, config)
	}
	c.secure = true
	if c.ls.tls == nil {
		c.ls.tls = make(map[*Conn]*tlsState)
	}
	c.ls.tls[c] = t
}

// startHandshake waits for a connected TLS connection's handshake, for at
// most Options.HandshakeTimeout. A client's starts at once; a server's
// with the client's first whole record.
func (c *Conn) startHandshake(client bool) {
	t := c.tlsState()
	t.w.local, t.w.remote = sock.LocalAddr(int(c.fd)), sock.RemoteAddr(int(c.fd))
	c.state = handshaking
	if client {
		c.runHandshake()
	}
	if d := c.ls.s.opts.HandshakeTimeout; d > 0 {
		c.closeTimer = c.ls.l.AfterFunc(d, func() {
			if c.state == handshaking {
				c.ls.s.opts.Logger.Debug("evloop: TLS handshake timed out", "remote", t.w.remote)
				c.finalize(ErrHandshakeTimeout)
			}
		})
	}
}

// readHandshake hands what arrived during the handshake to its goroutine,
// started once the client's first record is whole.
func (c *Conn) readHandshake(t *tlsState, b []byte) {
	if t.w.feed(b) {
		c.updateInterest()
	}
	if !t.started && t.w.firstRecord() {
		c.runHandshake()
	}
}

// firstRecord reports whether the client's first TLS record has come
// whole (or what came is no TLS record, which crypto/tls refuses): a
// server's handshake goroutine starts with it, so that a client that sends
// part of its hello and stalls costs a timer, not a goroutine, until
// HandshakeTimeout.
func (w *tlsWire) firstRecord() bool {
	const header = 5 // type, version, length
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.in) < header {
		return false
	}
	length := int(w.in[3])<<8 | int(w.in[4])
	if w.in[0] != 22 || length > 1<<14+2048 {
		// Not a handshake record, or longer than any record may be
		// (which the loop, pausing at handshakeInbound, might never
		// read whole): crypto/tls says why.
		return true
	}
	return len(w.in) >= header+length
}

// runHandshake starts the handshake's goroutine.
func (c *Conn) runHandshake() {
	t := c.tlsState()
	t.started = true
	s := c.ls.s
	s.handshakes.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go func() {
		defer s.handshakes.Done()
		err := t.tc.HandshakeContext(ctx)
		c.ls.l.Submit(func() { c.handshakeDone(err) })
	}()
}

// handshakeEOF handles the peer's EOF during the handshake. Its
// goroutine, if started, reads it after what came before and ends the
// handshake with its error: a client that refused the server's
// certificate, say, sends its alert and closes, and the handshake's
// outcome, not the EOF, is what tells why.
func (c *Conn) handshakeEOF() {
	t := c.tlsState()
	if !t.started {
		c.finalize(io.EOF)
		return
	}
	t.w.readEOF()
	c.updateInterest()
}

// handshakeDone opens a connection whose handshake succeeded, or closes
// one whose handshake failed after the alert crypto/tls queued. It runs on
// the loop.
func (c *Conn) handshakeDone(err error) {
	if c.state != handshaking {
		return // closed meanwhile: timed out, shut down, the peer gone
	}
	ls := c.ls
	ls.l.CancelTimer(c.closeTimer)
	c.closeTimer = 0
	t := c.tlsState()
	t.cancel() // the goroutine has ended
	res, dialed := ls.dials[c]
	delete(ls.dials, c)
	if err != nil {
		ls.s.opts.Logger.Debug("evloop: TLS handshake failed", "remote", t.w.remote, "err", err)
		t.err = err
		if h, ok := ls.h.(HandshakeErrorHandler); ok && !dialed {
			var answer []byte
			ls.guard("OnHandshakeError", func() { answer = h.OnHandshakeError(t.w.remote, err) })
			if len(answer) > 0 {
				answer = append([]byte(nil), answer...)
				c.pushSegment(segment{b: answer})
				c.queued(len(answer))
			}
		}
		c.state = closing
		c.startClose()
		if dialed {
			res <- dialResult{err: handshakeError{err}}
		}
		return
	}
	t.w.mu.Lock()
	t.w.mode = wireLoop
	t.w.mu.Unlock()
	t.w.paused.Store(false)
	t.record = recordOverhead(t.tc.ConnectionState().CipherSuite) // the handshake's lock is free
	c.state = open
	c.updateInterest() // reading, if it paused
	if c.state != open {
		if dialed {
			res <- dialResult{err: ErrClosed}
		}
		return
	}
	c.flags |= fOpened
	panicked := c.runOnOpen()
	if dialed {
		if panicked != nil {
			res <- dialResult{err: &PanicError{Value: panicked}}
		} else {
			res <- dialResult{c: c}
		}
	}
	if c.state != open {
		return
	}
	// The client may have sent its first request with its last handshake
	// message, which crypto/tls has read already; and the loop may have
	// read more since, which stays in the wire until now: OnOpen may have
	// detached the connection, whose reads then begin with it. A FIN read
	// during the handshake comes after it all, as the peer's EOF.
	t.w.mu.Lock()
	rest := t.w.in
	t.w.in = nil
	t.w.mu.Unlock()
	func() {
		defer c.closeOnPanic()
		eof := c.decryptAndDeliver(t, rest)
		c.keepInbound()
		if !eof && c.flags&fReadEOF != 0 && c.state == open {
			c.deliverEOF()
		}
	}()
}

// readTLSEOF handles the peer's FIN on an open TLS connection: its EOF,
// unless it came within a record, which ends the connection with
// io.ErrUnexpectedEOF (decryptAndDeliver), as crypto/tls ends it.
func (c *Conn) readTLSEOF() {
	t := c.tlsState()
	t.w.eof = true
	c.decryptAndDeliver(t, nil)
}

// readTLS takes what a read brought on a TLS connection.
func (c *Conn) readTLS(b []byte) {
	t := c.tlsState()
	if c.state == handshaking {
		c.readHandshake(t, b)
		return
	}
	c.decryptAndDeliver(t, b)
}

// decryptAndDeliver decrypts b, and what crypto/tls kept of earlier reads,
// hands the plaintext to OnData, and closes the connection if the peer
// ended its TLS session (its close_notify is its EOF, and eof is true) or
// broke it (after the alert crypto/tls queued).
func (c *Conn) decryptAndDeliver(t *tlsState, b []byte) (eof bool) {
	n, err := c.decrypt(t, b)
	switch {
	case n == 0 || c.state != open:
	case c.flags&fUserPaused != 0:
		// Paused in OnOpen, with the first request read along with
		// the handshake: kept until ResumeReading.
		t.held = true
	default:
		c.ls.h.OnData(c)
	}
	switch {
	case err == nil || c.state != open:
	case errors.Is(err, errWouldBlock):
	case errors.Is(err, io.EOF):
		c.deliverEOF()
		return true
	default:
		t.err = err
		c.state = closing
		c.startClose()
	}
	return false
}

// decrypt appends to the inbound bytes the plaintext of b and of what
// crypto/tls kept, and returns how much it appended and the error that
// stopped it: errWouldBlock once every whole record is decrypted.
func (c *Conn) decrypt(t *tlsState, b []byte) (int, error) {
	w := &t.w
	w.src = b
	w.queued = 0
	defer func() {
		w.src = nil
		// An alert, or an answer to a key update: accounted for once
		// the reads are done, as OnBackPressure may close the
		// connection.
		if w.queued > 0 {
			c.queued(w.queued)
		}
	}()
	total := 0
	for {
		if len(c.in) == 0 && c.inChunk == nil {
			c.inChunk = buf.Get()
			c.in = c.inChunk[:0]
		}
		space := c.inSpace()
		n, err := t.tc.Read(space)
		c.in = c.in[:len(c.in)+n]
		total += n
		if err != nil {
			return total, err
		}
	}
}

// overhead bounds what encrypting n bytes adds: a record's overhead for
// records of at least 1 KiB of plaintext but the last (crypto/tls's
// smallest, while a connection's first bytes go out, are about 1.2 KiB).
func (t *tlsState) overhead(n int) int { return (n/1024 + 1) * t.record }

// recordOverhead is what a record of suite adds to its plaintext at most:
// a header, explicit nonce, type and tag (29 bytes at most, AES-GCM in
// TLS 1.2) for an AEAD; a header, IV, MAC and padding (69 bytes at most,
// AES-CBC with SHA-256) for a CBC suite, which crypto/tls still offers
// TLS 1.2 clients.
func recordOverhead(suite uint16) int {
	if strings.Contains(tls.CipherSuiteName(suite), "_CBC_") {
		return 5 + 16 + 32 + 16
	}
	return 29
}

// encrypt queues b encrypted: the write of an established TLS connection.
func (c *Conn) encrypt(b []byte) (int, error) {
	sealed, err := c.seal(b)
	if sealed > 0 {
		c.queued(sealed)
	}
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// seal queues b encrypted and returns how many bytes that queued, which
// the caller accounts for (queued) once it has queued all it will: the
// handler that queued may close the connection from OnBackPressure, after
// which its TLS state is gone and nothing more may be queued.
func (c *Conn) seal(b []byte) (int, error) {
	t := c.tlsState()
	t.w.queued = 0
	_, err := t.tc.Write(b)
	return t.w.queued, err
}

// closeNotify queues TLS's close_notify, once, ahead of the FIN of a
// connection that closes or shuts down its writing side. A connection
// that a TLS failure closes sends none: crypto/tls queued its fatal alert,
// after which nothing more may be sent (RFC 8446, section 6.2), or the
// peer sent one; crypto/tls would write the close_notify after it all
// the same.
func (c *Conn) closeNotify() {
	t := c.tlsState()
	if t == nil || t.w.mode != wireLoop || t.err != nil || c.flags&fWriteShut != 0 {
		return
	}
	w := &t.w
	w.queued = 0
	t.tc.CloseWrite() // fails harmlessly a second time
	if w.queued > 0 {
		c.queued(w.queued)
	}
}

// detachTLS gives the TLS connection itself to Detach's caller, on nc.
func (c *Conn) detachTLS(nc net.Conn) net.Conn {
	t := c.tlsState()
	w := &t.w
	w.nc = nc
	w.mu.Lock()
	w.src = w.in // in OnOpen: what the loop read after the handshake
	w.in = nil
	w.mode = wireDetached
	w.mu.Unlock()
	return t.tc
}

// ConnectionState returns the TLS state of a connection accepted by a
// ListenTLS or ServeTLS listener or dialed with a TLSConfig, once its
// handshake is done (OnOpen runs after it), and false for one without TLS
// or whose handshake is not done (EachConn hands those too).
func (c *Conn) ConnectionState() (tls.ConnectionState, bool) {
	t := c.tlsState()
	if t == nil || c.flags&fOpened == 0 {
		// Until its end, the handshake's goroutine holds the lock that
		// crypto/tls's ConnectionState takes, while it waits for the
		// loop to bring it bytes: taken here, on the loop, it would
		// never be released.
		return tls.ConnectionState{}, false
	}
	return t.tc.ConnectionState(), true
}

// encryptv is encrypt for Writev's buffers, n bytes in all: the small
// ones gathered into chunks, each sealed whole, so that a record holds
// 1 KiB or more but the last of each seal, as canWrite reckons (an
// answer's head and body share one), where each buffer made records of
// its own and many small buffers passed MaxOutbound. A buffer of a chunk
// or more is sealed as it is.
func (c *Conn) encryptv(bs [][]byte, n int) (int, error) {
	ch := buf.Get()
	defer buf.Put(ch)
	p := ch[:0]
	sealed := 0
	var err error
	seal := func(b []byte) {
		if len(b) > 0 && err == nil {
			var k int
			k, err = c.seal(b)
			sealed += k
		}
	}
	for _, b := range bs {
		if len(b) >= len(ch) {
			seal(p)
			p = ch[:0]
			seal(b)
			continue
		}
		for len(b) > 0 {
			k := copy(ch[len(p):], b)
			p, b = ch[:len(p)+k], b[k:]
			if len(p) == len(ch) {
				seal(p)
				p = ch[:0]
			}
		}
	}
	seal(p)
	if sealed > 0 {
		c.queued(sealed)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// tlsState returns a TLS connection's state, nil for a plain one, or for
// one closed once OnClose has run.
func (c *Conn) tlsState() *tlsState {
	if !c.secure {
		return nil
	}
	return c.ls.tls[c]
}
