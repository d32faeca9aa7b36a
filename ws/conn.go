package ws

import (
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/internal/workpool"
)

// Handler receives a WebSocket connection's events, a server's or a
// client's alike. OnOpen and OnClose run on the connection's loop;
// OnMessage too, unless Options.Workers hands messages to a pool. On the
// loop, a handler must not block.
type Handler interface {
	// OnOpen runs once the handshake is done: on a server, once its 101
	// answer is queued; on a client, once the server's answer was
	// checked, before Dial returns.
	OnOpen(c *Conn)
	// OnMessage receives a whole message, Text (valid UTF-8) or Binary.
	// data is valid until OnMessage returns.
	OnMessage(c *Conn, op Opcode, data []byte)
	// OnClose runs once, when the connection is gone. err is a
	// *CloseError with the code and reason of the peer's close frame
	// (RFC 6455 section 7.1.5: after this side's Close, those of the
	// peer's answer), or this side's when it failed the connection
	// (CloseProtocolError, CloseInvalidPayload, CloseMessageTooBig,
	// ClosePolicyViolation), or CloseAbnormal when no close frame came:
	// the connection dropped, or the peer did not answer this side's
	// Close within Options.CloseTimeout. With
	// Options.Workers it runs after the last OnMessage has returned: on
	// the loop, or, if the loop stopped meanwhile (a Shutdown whose
	// context ended first), on the worker that ran that OnMessage.
	OnClose(c *Conn, err error)
}

// Options configure upgraded and dialed connections. A nil *Options means
// the zero Options. Options are read at each upgrade or dial and must not
// change after.
type Options struct {
	// Subprotocols are the subprotocols this side speaks, in order of
	// preference. A server chooses the first the client offers; a client
	// offers them all, and refuses an answer that chose another.
	Subprotocols []string
	// CheckOrigin decides whether a request with an Origin field may
	// connect (default: when the Origin's host is the request's Host).
	// A refused request gets 403. Servers only.
	CheckOrigin func(origin, host string) bool
	// MaxMessageSize bounds a message, after decompression (default 1
	// MiB): a longer one closes the connection with CloseMessageTooBig,
	// before its bytes are buffered, or, compressed, as it is inflated,
	// once past the limit. A compressed message's frames may together be
	// a little longer (by an eighth, plus 256 bytes), as deflate makes
	// data that does not compress longer.
	MaxMessageSize int
	// Compression accepts permessage-deflate when the client offers it;
	// on a client, offers it. Messages of at least CompressionThreshold
	// bytes (default 128) are then sent compressed at CompressionLevel,
	// a level of compress/flate: 0, and any outside flate.BestSpeed to
	// flate.BestCompression but flate.DefaultCompression (6), mean
	// flate.BestSpeed.
	Compression          bool
	CompressionThreshold int
	CompressionLevel     int
	// Workers, if positive, runs OnMessage on a pool of at most that many
	// goroutines instead of on the loop (the pool is the Options'): the
	// messages of one connection are handled one at a time, in order, and
	// a connection whose message waits is not read until it is handled:
	// neither its socket nor the frames already received, so that a
	// close frame after a message is acted on once the message was
	// handled. Such a handler writes with Send, not WriteMessage. A peer
	// that resets the connection (rather than close it) while a message
	// waits for the pool ends it at once: the frames received behind that
	// message are dropped, and OnClose has CloseAbnormal, where on the
	// loop they would have been handled first.
	Workers int
	// CloseTimeout bounds the wait for the peer's close frame after Close
	// (default 5s); on a client, also the wait for the server to close
	// the TCP connection after the close handshake. A connection whose
	// peer has not read up to the close frame by then is reset, whether
	// that frame began the handshake, answered the peer's or failed the
	// connection.
	CloseTimeout time.Duration

	once sync.Once
	pool *workpool.Pool
}

func (o *Options) maxMessage() int {
	if o.MaxMessageSize > 0 {
		return o.MaxMessageSize
	}
	return 1 << 20
}

func (o *Options) threshold() int {
	if o.CompressionThreshold > 0 {
		return o.CompressionThreshold
	}
	return 128
}

func (o *Options) closeTimeout() time.Duration {
	if o.CloseTimeout > 0 {
		return o.CloseTimeout
	}
	return 5 * time.Second
}

// CloseWorkers ends the goroutines of the Options' worker pool once they
// are done: for a server shutting down.
func (o *Options) CloseWorkers() {
	o.workers().Close()
}

func (o *Options) workers() *workpool.Pool {
	o.once.Do(func() { o.pool = workpool.New(o.Workers) })
	return o.pool
}

// ErrClosed is returned by writes after the close handshake began.
var ErrClosed = errors.New("websocket: connection closed")

// errNotMessage is what WriteMessage and Send return for an opcode that
// is not a message's: control frames are sent by Ping and Close, and
// continuation and reserved opcodes never.
var errNotMessage = errors.New("websocket: a message's opcode is Text or Binary")

// ErrNotUTF8 is what WriteMessage, Send and Broadcast return for a Text
// message that is not UTF-8, sending nothing: its peer would have to fail
// the connection on it (RFC 6455 sections 5.6 and 8.1).
var ErrNotUTF8 = errors.New("websocket: text message is not UTF-8")

// checkMessage is the check of a message about to be sent: op is Text or
// Binary, and text is UTF-8.
func checkMessage(op Opcode, data []byte) error {
	switch {
	case op != Text && op != Binary:
		return errNotMessage
	case op == Text && !utf8.Valid(data):
		return ErrNotUTF8
	}
	return nil
}

// Errors of Close and CloseAsync for arguments a close frame may not
// carry (RFC 6455 sections 5.5.1 and 7.4).
var (
	ErrCloseCode   = errors.New("websocket: invalid close code")
	ErrCloseReason = errors.New("websocket: close reason is not UTF-8")
)

// flags of a Conn.
const (
	fInFrame    uint8 = 1 << iota // reading a data frame's payload
	fCompressed                   // the message being read is compressed
	fCloseSent
	fCloseRecv
	fBusy // pooled: a message is being handled, so frames wait unparsed
)

// Conn is a WebSocket connection on an event loop: a server's, opened by
// Upgrade, or a client's, opened by Dialer.Dial, which masks the frames it
// sends and refuses masked ones. Its methods run on the loop — in the
// Handler's methods on the loop, timers, or Submit — except Send,
// CloseAsync, Submit and the accessors (Subprotocol, Compressed, Conn,
// Context), which any goroutine may call; SetContext is not synchronized:
// set the context in OnOpen, or on the loop while no other goroutine
// reads it (a pooled OnMessage runs on a worker).
// Between messages it holds no buffer.
type Conn struct {
	c        *evloop.Conn
	h        Handler
	o        *Options
	ctx      any
	protocol uint8 // the chosen subprotocol's index in o.Subprotocols, plus one
	deflate  bool  // permessage-deflate was negotiated; set before the loop runs it
	client   bool  // the client's end; set before the loop runs it
	// window is the server_max_window_bits the client asked for, below
	// 15 (0: none): only messages of up to 2^window bytes are compressed.
	window uint8

	// The frame and message being read.
	hdr   frameHeader
	pos   int    // payload bytes of the frame read so far
	msgOp Opcode // the message's opcode; 0 between messages
	flags uint8
	utf8  utf8State
	msg   []byte // a fragmented or partly arrived message

	closeErr *CloseError
	pending  *pending // pooled delivery
	// owed is OnClose's error while the connection closed with messages
	// still on the pool: OnClose waits for them, so that it runs last and
	// never beside OnMessage.
	owed *CloseError
}

// pending holds a pooled connection's messages not handled yet.
type pending struct {
	mu   sync.Mutex
	msgs []message
	// closed is the owner's done of OnCloseThen, called once the OnClose
	// owed has run (payClose).
	closed func()
}

type message struct {
	op   Opcode
	data []byte
}

// Subprotocol returns the subprotocol chosen at the handshake, or "".
func (wc *Conn) Subprotocol() string {
	if wc.protocol == 0 {
		return ""
	}
	return wc.o.Subprotocols[wc.protocol-1]
}

// Compressed reports whether permessage-deflate was negotiated.
func (wc *Conn) Compressed() bool { return wc.deflate }

// compresses reports whether a message of n bytes is sent compressed:
// with permessage-deflate, from CompressionThreshold bytes, and up to the
// size the client's server_max_window_bits allows, if it named one.
func (wc *Conn) compresses(n int) bool {
	return wc.deflate && n >= wc.o.threshold() && wc.windowFits(n)
}

// windowFits reports whether a message of n bytes compressed alone keeps
// within the window the client allowed.
func (wc *Conn) windowFits(n int) bool { return windowTakes(wc.window, n) }

// windowTakes reports whether server_max_window_bits w (0: none named)
// takes a message of n bytes compressed alone.
func windowTakes(w uint8, n int) bool { return w == 0 || n <= 1<<w }

// Conn returns the underlying connection.
func (wc *Conn) Conn() *evloop.Conn { return wc.c }

// SetContext attaches a value of the application's to the connection.
// It is not synchronized with Context (see Conn).
func (wc *Conn) SetContext(v any) { wc.ctx = v }

// Context returns the value given to SetContext.
func (wc *Conn) Context() any { return wc.ctx }

// OnOpen implements http1.Protocol.
func (wc *Conn) OnOpen(c *evloop.Conn) {
	wc.c = c
	wc.h.OnOpen(wc)
}

// OnData implements http1.Protocol: it reads frames as they arrive. A
// frame that arrived whole is handed over without a copy; one arriving in
// pieces, or a fragmented message, is gathered (and checked as it comes).
func (wc *Conn) OnData(c *evloop.Conn) {
	for !c.Closed() && wc.flags&fBusy == 0 {
		in, _ := c.Peek(0)
		if len(in) == 0 {
			return
		}
		if wc.flags&fCloseRecv != 0 {
			// Nothing may follow the peer's close frame (RFC 6455 section
			// 5.5.1): what does is dropped, not kept until the peer
			// closes the connection.
			c.Discard(len(in))
			return
		}
		if wc.flags&fInFrame != 0 {
			if !wc.readPayload(in) {
				return
			}
			continue
		}
		h, n, cerr := parseHeader(in)
		if cerr == nil && n > 0 {
			cerr = wc.checkHeader(&h)
		}
		if cerr != nil {
			wc.fail(cerr)
			return
		}
		if n == 0 {
			return
		}
		if h.op.isControl() {
			end := n + int(h.length)
			if len(in) < end {
				return // at most 125 bytes: wait for all of it
			}
			payload := in[n:end]
			maskBytes(h.mask, 0, payload)
			c.Discard(end)
			wc.control(h.op, payload)
			continue
		}
		c.Discard(n)
		in = in[n:]
		if h.op != Continuation {
			wc.msgOp = h.op
			wc.utf8 = utf8State{}
			wc.flags &^= fCompressed
			if h.rsv&4 != 0 {
				wc.flags |= fCompressed
			}
		}
		wc.hdr, wc.pos = h, 0
		wc.flags |= fInFrame
		if h.fin && h.op != Continuation && int64(len(in)) >= h.length && wc.pending == nil {
			// The whole message is here: no copy.
			payload := in[:h.length]
			maskBytes(h.mask, 0, payload)
			wc.flags &^= fInFrame
			if !wc.textOK(payload) {
				return
			}
			wc.finish(payload)
			c.Discard(int(h.length))
			continue
		}
		if !wc.readPayload(in) {
			return
		}
	}
}

// checkHeader applies RFC 6455's rules to a frame's header, and the size
// limit to its length before its payload is read.
func (wc *Conn) checkHeader(h *frameHeader) *CloseError {
	switch {
	case !h.masked && !wc.client:
		return protocolError("client frame not masked")
	case h.masked && wc.client:
		return protocolError("server frame masked")
	case h.op > Binary && !h.op.isControl(), h.op > Pong:
		return protocolError("reserved opcode " + h.op.String())
	case h.rsv&3 != 0:
		return protocolError("reserved bits set")
	case h.rsv&4 != 0 && (!wc.deflate || h.op == Continuation || h.op.isControl()):
		return protocolError("RSV1 set without a compressed message's first frame")
	}
	if h.op.isControl() {
		switch {
		case !h.fin:
			return protocolError("fragmented control frame")
		case h.length > 125:
			return protocolError("control frame longer than 125 bytes")
		}
		return nil
	}
	switch {
	case h.op == Continuation && wc.msgOp == 0:
		return protocolError("continuation frame without a message")
	case h.op != Continuation && wc.msgOp != 0:
		return protocolError("new message inside a fragmented one")
	}
	have, limit := 0, wc.o.maxMessage()
	if h.op == Continuation {
		have = len(wc.msg)
	}
	if h.rsv&4 != 0 || (h.op == Continuation && wc.flags&fCompressed != 0) {
		// The limit is on the inflated message, which decompress
		// enforces; its compressed frames get one of their own.
		limit = maxCompressed(limit)
	}
	if h.length > int64(limit-have) {
		return errTooBig
	}
	return nil
}

// readPayload takes what arrived of the current data frame's payload. It
// reports whether the frame is complete.
func (wc *Conn) readPayload(in []byte) bool {
	h := &wc.hdr
	k := int(min(int64(len(in)), h.length-int64(wc.pos)))
	chunk := in[:k]
	wc.pos = maskBytes(h.mask, wc.pos, chunk)
	if !wc.textOK(chunk) {
		return false
	}
	wc.msg = append(wc.msg, chunk...)
	wc.c.Discard(k)
	if int64(wc.pos) < h.length {
		return false
	}
	wc.flags &^= fInFrame
	if h.fin {
		msg := wc.msg
		wc.msg = nil // between messages a connection holds no buffer
		wc.finish(msg)
	}
	return true
}

// textOK feeds b, payload of an uncompressed text message as it arrives,
// to the UTF-8 check, and fails the connection at the first invalid byte.
func (wc *Conn) textOK(b []byte) bool {
	if wc.msgOp == Text && wc.flags&fCompressed == 0 && !wc.utf8.valid(b) {
		wc.fail(errNotUTF8)
		return false
	}
	return true
}

var errNotUTF8 = &CloseError{Code: CloseInvalidPayload, Reason: "text message is not UTF-8"}

// finish delivers a complete message's payload: inflated if compressed,
// text checked as it is inflated (uncompressed text was checked as it
// came).
func (wc *Conn) finish(payload []byte) {
	op := wc.msgOp
	wc.msgOp = 0
	if wc.flags&fCompressed != 0 {
		var text *utf8State
		if op == Text {
			text = &wc.utf8
		}
		out, cerr := decompress(nil, payload, wc.o.maxMessage(), text)
		if cerr != nil {
			wc.fail(cerr)
			return
		}
		payload = out
	}
	if op == Text && !wc.utf8.complete() {
		wc.fail(&CloseError{Code: CloseInvalidPayload, Reason: "text message ends inside a character"})
		return
	}
	wc.deliver(op, payload)
}

// deliver hands a message to the handler, on the loop or the pool.
func (wc *Conn) deliver(op Opcode, data []byte) {
	if wc.o.Workers <= 0 {
		wc.h.OnMessage(wc, op, data)
		return
	}
	if wc.pending == nil {
		wc.pending = new(pending)
	}
	p := wc.pending
	p.mu.Lock()
	p.msgs = append(p.msgs, message{op, append([]byte(nil), data...)})
	start := wc.flags&fBusy == 0
	wc.flags |= fBusy
	p.mu.Unlock()
	wc.c.PauseReading() // until the pool caught up
	if start {
		wc.o.workers().Submit(wc.drain)
	}
}

// drain handles a pooled connection's messages in order, on a worker. A
// panic in OnMessage closes this connection alone, as one on the loop
// does: logged with its stack, then raised again on the connection's loop,
// where the engine closes the connection with an *evloop.PanicError of the
// same value. The messages after it are dropped, and OnClose runs as it
// would have without the pool: then, or at once if the connection closed
// meanwhile.
func (wc *Conn) drain() {
	p := wc.pending
	defer func() {
		if v := recover(); v != nil {
			slog.Default().Error("ws: panic in a pooled OnMessage", "panic", v, "stack", string(debug.Stack()))
			p.mu.Lock()
			p.msgs = nil
			p.mu.Unlock()
			err := wc.c.Submit(func() {
				wc.flags &^= fBusy // OnClose need not wait for the pool
				defer wc.payClose()
				panic(v)
			})
			if err != nil {
				wc.payClose() // the loop is stopped
			}
		}
	}()
	for {
		p.mu.Lock()
		if len(p.msgs) == 0 {
			p.mu.Unlock()
			if wc.c.Submit(wc.caughtUp) != nil {
				// The loop is stopped: nothing runs on it any more, so
				// an OnClose owed runs here.
				wc.payClose()
			}
			return
		}
		m := p.msgs[0]
		p.msgs[0] = message{} // else the array keeps the message
		p.msgs = p.msgs[1:]
		if len(p.msgs) == 0 {
			p.msgs = nil // between messages a connection holds no buffer
		}
		p.mu.Unlock()
		wc.h.OnMessage(wc, m.op, m.data)
	}
}

// caughtUp resumes reading once the pool handled every message (on the
// loop): the frames received meanwhile are parsed, then the socket is read
// again. A message that came meanwhile starts the pool again.
func (wc *Conn) caughtUp() {
	p := wc.pending
	p.mu.Lock()
	more := len(p.msgs) > 0
	if !more {
		wc.flags &^= fBusy
	}
	p.mu.Unlock()
	if more {
		wc.o.workers().Submit(wc.drain)
		return
	}
	if wc.owed != nil {
		wc.payClose()
		return
	}
	wc.OnData(wc.c)
	if wc.flags&fBusy == 0 && !wc.c.Closed() {
		wc.c.ResumeReading()
	}
}

// control acts on a control frame.
func (wc *Conn) control(op Opcode, payload []byte) {
	switch op {
	case Ping:
		if wc.flags&fCloseSent == 0 {
			// With the outbound queue full, the peer, which does not
			// read, would wait for the pong in vain (RFC 6455 section
			// 5.5.2).
			wc.wrote(wc.writeFrame(Pong, payload, false))
		}
	case Pong:
		if ph, ok := wc.h.(PongHandler); ok {
			ph.OnPong(wc, payload)
		}
	case CloseFrame:
		ce, cerr := parseClose(payload)
		if cerr != nil {
			wc.fail(cerr)
			return
		}
		wc.flags |= fCloseRecv
		if wc.closeErr == nil {
			wc.closeErr = ce
		}
		if wc.flags&fCloseSent == 0 {
			// Echo the code (RFC 6455 section 5.5.1), none if none came,
			// and the reason, as browsers do: a peer that began the
			// handshake finds its own in its answer.
			wc.flags |= fCloseSent
			wc.writeClose(ce.Code, ce.Reason)
		}
		if !wc.client {
			// The server closes the TCP connection first, so that it holds
			// TIME_WAIT; the client waits for it (section 7.1.1), or for
			// CloseTimeout.
			wc.c.Close()
		}
	}
}

// PongHandler may be implemented by a Handler to see pongs.
type PongHandler interface {
	OnPong(c *Conn, payload []byte)
}

// fail fails the connection: a close frame with the error's code, then the
// TCP connection closes without waiting for the peer's.
func (wc *Conn) fail(cerr *CloseError) {
	if wc.closeErr == nil {
		wc.closeErr = cerr
	}
	if wc.flags&fCloseSent == 0 {
		wc.flags |= fCloseSent
		wc.writeClose(cerr.Code, cerr.Reason)
	}
	wc.msg = nil
	wc.c.Close()
}

// wrote ends the connection if err says a frame could not be queued:
// with the outbound queue full, the frames queued before it go out, then a
// close frame, 1008 (the gateway's slow consumer's code), so that the peer
// learns why; a later frame must not go out in its place, which would leave
// the peer a stream with a message missing.
func (wc *Conn) wrote(err error) {
	switch {
	case err == nil:
	case errors.Is(err, evloop.ErrOutboundFull):
		wc.fail(&CloseError{Code: ClosePolicyViolation, Reason: "outbound queue full: the peer reads too slowly"})
	default:
		wc.c.Close()
	}
}

// OnClose implements http1.Protocol.
func (wc *Conn) OnClose(c *evloop.Conn, err error) { wc.OnCloseThen(c, err, nil) }

// OnCloseThen implements http1.LateCloser: done, if not nil, is called
// once the handler's OnClose has run, which for a connection whose
// messages are on the pool is once they are handled, so that the
// server's and the Dialer's Shutdown wait for it.
func (wc *Conn) OnCloseThen(c *evloop.Conn, err error, done func()) {
	// At the peer's EOF an http1 server calls it with the connection
	// still open, to close it after: closed first, writes in OnClose fail
	// with ErrClosed, as however else the connection ended.
	c.Close()
	wc.msg = nil
	ce := wc.closeErr
	if ce == nil {
		ce = &CloseError{Code: CloseAbnormal}
		if err != nil && !errors.Is(err, io.EOF) {
			ce.Reason = err.Error()
		}
	}
	if wc.flags&fBusy != 0 {
		wc.owed = ce // the pool's messages first: caughtUp calls it
		wc.pending.closed = done
		return
	}
	if done != nil {
		defer done() // after OnClose, even if it panics
	}
	wc.h.OnClose(wc, ce)
}

// payClose runs the OnClose that waited for the pool's messages.
func (wc *Conn) payClose() {
	if ce := wc.owed; ce != nil {
		wc.owed = nil
		done := wc.pending.closed
		wc.pending.closed = nil
		if done != nil {
			defer done() // after OnClose, even if it panics
		}
		wc.h.OnClose(wc, ce)
	}
}

// WriteMessage sends a message, Text or Binary, compressed if
// permessage-deflate was negotiated and it is long enough. data is
// copied. It fails, sending nothing, for another opcode (control frames
// are sent by Ping and Close) or text that is not UTF-8 (ErrNotUTF8),
// with ErrClosed once the close handshake began or the connection closed,
// and with evloop.ErrOutboundFull when the outbound queue has no room for
// the whole frame (evloop.Options.MaxOutbound): the connection goes on,
// the messages queued before it intact.
func (wc *Conn) WriteMessage(op Opcode, data []byte) error {
	if err := checkMessage(op, data); err != nil {
		return err
	}
	if wc.flags&fCloseSent != 0 || wc.c.Closed() {
		return ErrClosed
	}
	return wc.writeMessage(op, data)
}

// writeMessage is WriteMessage once op, data and the connection were
// checked.
func (wc *Conn) writeMessage(op Opcode, data []byte) error {
	if wc.compresses(len(data)) {
		z := compress(nil, data, wc.o.CompressionLevel)
		return wc.writeFrame(op, z, true)
	}
	return wc.writeFrame(op, data, false)
}

// writeFrame queues a frame whole, or not at all: a frame cut short by a
// full outbound queue would leave the stream unreadable.
func (wc *Conn) writeFrame(op Opcode, payload []byte, rsv1 bool) error {
	if wc.client {
		return wc.writeMasked(op, payload, rsv1)
	}
	var hb [maxHeader]byte
	frame := [2][]byte{appendHeader(hb[:0], true, rsv1, op, len(payload), nil), payload}
	_, err := wc.c.Writev(frame[:])
	return err
}

// writeClose queues the close frame for code and reason as the
// connection's last bytes (evloop.Conn.WriteLast): it goes out after the
// messages queued before it even when they fill the outbound queue, where
// it would be dropped and the peer, having read every message, would see
// the connection end without a close (1006). The connection ends
// CloseTimeout later at the latest (closeTimedOut), whether the frame
// starts the handshake, answers the peer's or fails the connection.
func (wc *Conn) writeClose(code int, reason string) {
	wc.c.AfterFunc(wc.o.closeTimeout(), wc.closeTimedOut)
	var pb [125]byte
	var fb [maxHeader + 125]byte
	var mask *[4]byte
	if wc.client {
		m := newMask()
		mask = &m
	}
	payload := appendClosePayload(pb[:0], code, reason)
	wc.c.WriteLast(appendFrame(fb[:0], true, false, CloseFrame, payload, mask))
}

// writeMasked writes a client's frame: masked with a fresh key, so that
// the payload is copied, masked, into a pooled buffer first.
func (wc *Conn) writeMasked(op Opcode, payload []byte, rsv1 bool) error {
	bp := getFrameBuffer()
	mask := newMask()
	b := appendFrame((*bp)[:0], true, rsv1, op, payload, &mask)
	_, err := wc.c.Write(b)
	putFrameBuffer(bp, b)
	return err
}

// frameBuffers hold frames built before they are queued (a client's
// frames being masked, and Send's); those past maxFrameBuffer are not
// kept.
var frameBuffers sync.Pool

const maxFrameBuffer = 64 << 10

func getFrameBuffer() *[]byte {
	bp, _ := frameBuffers.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	return bp
}

// putFrameBuffer returns bp to the pool, holding b, which was built in it.
func putFrameBuffer(bp *[]byte, b []byte) {
	if cap(b) <= maxFrameBuffer {
		*bp = b
		frameBuffers.Put(bp)
	}
}

// newMask returns a masking key from a strong source of entropy, as RFC
// 6455 section 5.3 requires: a fresh one for every frame a client sends.
func newMask() [4]byte {
	var m [4]byte
	rand.Read(m[:])
	return m
}

// Ping sends a ping with payload. It fails, sending nothing, for a
// payload of more than 125 bytes (what a control frame holds), and with
// ErrClosed once the close handshake began or the connection closed.
func (wc *Conn) Ping(payload []byte) error {
	if len(payload) > 125 {
		return errors.New("websocket: ping payload longer than 125 bytes")
	}
	if wc.flags&fCloseSent != 0 || wc.c.Closed() {
		return ErrClosed
	}
	return wc.writeFrame(Ping, payload, false)
}

// Close starts the close handshake with code and reason: the close frame
// goes out after the messages queued before it, even those that fill the
// outbound queue, and the connection closes when the peer answers, or after
// Options.CloseTimeout (with a reset if the peer has not read up to the
// close frame by then). A reason longer than a control frame holds (123
// bytes) is cut at a character boundary. It fails, sending nothing, for a
// code a close frame may not carry (below 1000, 1004, 1005, 1006, 1015
// to 2999, 5000 and above) or a reason that is not UTF-8 (RFC 6455
// sections 5.5.1 and 7.4): ErrCloseCode, ErrCloseReason; and with
// ErrClosed once the handshake began or the connection closed.
func (wc *Conn) Close(code int, reason string) error {
	if wc.flags&fCloseSent != 0 || wc.c.Closed() {
		return ErrClosed
	}
	if err := checkClose(code, reason); err != nil {
		return err
	}
	wc.flags |= fCloseSent
	wc.writeClose(code, reason)
	return nil
}

// closeTimedOut ends a connection CloseTimeout after its close frame was
// queued: a close handshake the peer did not finish, or a close that
// waits for the peer to read. A peer that has not even been sent the
// close frame, still queued behind what it did not read, is reset: closed
// gracefully, the connection would wait for it to read again, up to the
// engine's CloseTimeout (30 s by default) of no progress, and a Shutdown
// with it.
func (wc *Conn) closeTimedOut() {
	if wc.closeErr == nil {
		wc.closeErr = &CloseError{Code: CloseAbnormal, Reason: "no close frame from the peer within CloseTimeout"}
	}
	if wc.c.OutboundBuffered() > 0 {
		wc.c.Abort()
		return
	}
	wc.c.Close()
}

// Send sends a message, Text or Binary, from any goroutine: it is framed
// (and compressed) on the caller's goroutine, then queued on the loop.
// data is copied. Messages sent by one goroutine go out in order. It
// fails, sending nothing, for another opcode or text that is not UTF-8
// (ErrNotUTF8), and with ErrClosed once the server's loops have stopped;
// otherwise the loop takes the message later, and what happens to it
// there cannot be returned: a message sent
// once this side sent its close frame, after which no message may follow
// (RFC 6455 section 5.5.1), or once the connection closed, is dropped;
// one that does not fit in the outbound queue ends the connection: the
// messages queued before it go out, then a close frame with 1008,
// ClosePolicyViolation (the peer would otherwise get a stream with one
// missing), and OnClose follows with that code. A sender that must know
// uses WriteMessage on the loop (Submit).
func (wc *Conn) Send(op Opcode, data []byte) error {
	if err := checkMessage(op, data); err != nil {
		return err
	}
	var mask *[4]byte
	if wc.client {
		m := newMask()
		mask = &m
	}
	bp := getFrameBuffer()
	var b []byte
	if wc.compresses(len(data)) {
		z := compress(nil, data, wc.o.CompressionLevel)
		b = appendFrame((*bp)[:0], true, true, op, z, mask)
	} else {
		b = appendFrame((*bp)[:0], true, false, op, data, mask)
	}
	err := wc.c.Submit(func() {
		if wc.flags&fCloseSent == 0 && !wc.c.Closed() {
			_, err := wc.c.Write(b)
			wc.wrote(err)
		}
		putFrameBuffer(bp, b)
	})
	if err != nil {
		putFrameBuffer(bp, b)
		return ErrClosed
	}
	return nil
}

// OnShutdown implements http1.Shutdowner: the server is going away, so the
// close handshake starts with 1001, unless one is under way.
func (wc *Conn) OnShutdown(*evloop.Conn) {
	wc.Close(CloseGoingAway, "server shutting down")
}

// checkClose refuses what a close frame may not carry.
func checkClose(code int, reason string) error {
	if !validCloseCode(code) {
		return ErrCloseCode
	}
	if !utf8.ValidString(reason) {
		return ErrCloseReason
	}
	return nil
}

// CloseAsync is Close from any goroutine: code and reason are checked at
// once, with Close's errors, and the handshake starts on the loop, unless
// one is under way or the connection has closed meanwhile. It fails with
// ErrClosed once the server's loops have stopped.
func (wc *Conn) CloseAsync(code int, reason string) error {
	if err := checkClose(code, reason); err != nil {
		return err
	}
	if wc.c.Submit(func() { wc.Close(code, reason) }) != nil {
		return ErrClosed
	}
	return nil
}

// Submit runs fn on the connection's loop, even if the connection has
// closed by then. It fails with evloop.ErrClosed (not ErrClosed) once the
// loop has stopped.
func (wc *Conn) Submit(fn func()) error { return wc.c.Submit(fn) }
