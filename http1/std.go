package http1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evloop/evloop"
)

// stdRequest is a request a pooled net/http handler answers. The loop
// owns the fields marked so; the worker owns the rest until it submits
// finished.
type stdRequest struct {
	hc      *conn // loop
	ls      *loopState
	c       *evloop.Conn
	s       *Server
	h       http.Handler
	req     *http.Request
	w       *responseWriter
	body    *bodyPipe // nil: the request has no body
	cancel  context.CancelFunc
	keep    bool // the client allows another request
	upgrade bool // the request asks to switch protocols

	local, remote net.Addr // for timeout errors

	// Loop's: the body still to read.
	bodyLeft int64           // Content-Length bytes not yet read
	dec      *ChunkedDecoder // a chunked body's decoder
	bodyRead int64           // chunked bytes read
	bodyDone bool            // all of the body was read (or failed)
	gone     bool            // the connection closed

	// Loop's: the read and write deadlines (in loop ticks; 0: none), and
	// the request's place in its loop's deadline list, at the earliest.
	readAt, writeAt, at int64
	prevDL, nextDL      *stdRequest
	listed              bool
	// sending: the handler returned with some of its answer still queued,
	// and the write deadline bounds it (see sent).
	sending bool
}

// startStd hands req to h on the worker pool. The loop stops serving the
// connection's next requests until h is done.
func (hc *conn) startStd(h http.Handler, req *Request) {
	hc.ls.flushOut() // the pooled handler's answer goes after them
	s := hc.ls.s
	sr := &stdRequest{hc: hc, ls: hc.ls, c: hc.c, s: s, h: h, keep: req.KeepAlive, upgrade: req.Upgrade}
	sr.local, sr.remote = hc.c.LocalAddr(), hc.c.RemoteAddr()
	r, err := hc.newRequest(req, sr.remote)
	if err != nil {
		hc.fail(http.StatusBadRequest)
		return
	}
	parent := s.ctx
	if ctx, ok := hc.ls.connCtx[hc]; ok {
		parent = ctx
	}
	ctx, cancel := context.WithCancel(parent)
	sr.cancel = cancel
	if sr.local != nil {
		ctx = context.WithValue(ctx, http.LocalAddrContextKey, sr.local)
	}
	r = r.WithContext(ctx)
	switch {
	case req.Chunked:
		sr.dec = &ChunkedDecoder{KeepTrailer: true}
		sr.body = newBodyPipe(sr, req.Expect100, -1)
	case req.ContentLength > 0:
		sr.bodyLeft = req.ContentLength
		sr.body = newBodyPipe(sr, req.Expect100, req.ContentLength)
	default:
		sr.bodyDone = true
	}
	if sr.body != nil {
		r.Body = sr.body
		if d := s.ReadTimeout; d > 0 {
			// For the handler's own check: from the request's first
			// bytes, as the loop counts it.
			start := hc.ls.start.Add(time.Duration(hc.began) * tickEvery)
			if !hc.arriving() {
				start = time.Now() // the head came in one read
			}
			sr.body.deadline = start.Add(d)
		}
		hc.enter(inBody)
	} else {
		r.Body = http.NoBody
		hc.enter(handling)
	}
	sr.req = r
	sr.w = newResponseWriter(sr, req)
	hc.std = sr
	if s.WriteTimeout > 0 {
		sr.w.deadline = time.Now().Add(s.WriteTimeout)
		sr.writeAt = hc.ls.ticks(sr.w.deadline)
		sr.schedule()
	}
	s.active.Add(1)
	s.pool.Submit(sr.run)
	sr.feed()
	if hc.eof {
		// The client's EOF came while a request before this one was
		// handled: it has gone away for this one too, whose context is
		// cancelled as net/http's server cancels it, and the rest of the
		// body will not come.
		sr.clientGone()
	}
}

// newRequest builds the *http.Request net/http's server would for req,
// from remote.
func (hc *conn) newRequest(req *Request, remote net.Addr) (*http.Request, error) {
	r := &http.Request{
		Method:     method(req.Method),
		Proto:      proto(req.Major, req.Minor),
		ProtoMajor: req.Major,
		ProtoMinor: req.Minor,
		Header:     make(http.Header, len(req.Headers)),
		RequestURI: string(req.Target),
		Close:      !req.KeepAlive,
	}
	rawurl := r.RequestURI
	justAuthority := r.Method == http.MethodConnect && !strings.HasPrefix(rawurl, "/")
	if justAuthority {
		rawurl = "http://" + rawurl
	}
	var err error
	if r.URL, err = url.ParseRequestURI(rawurl); err != nil {
		return nil, err
	}
	if justAuthority {
		r.URL.Scheme = ""
	}
	for _, f := range req.Headers {
		key := textproto.CanonicalMIMEHeaderKey(string(f.Name))
		r.Header[key] = append(r.Header[key], string(f.Value))
	}
	r.Host = r.URL.Host
	if r.Host == "" {
		r.Host = string(req.Host)
	}
	// As net/http's server: Host lives in Request.Host, not the map;
	// several Content-Length fields, which the Parser found equal, are
	// one; and an HTTP/1.0 cache's "Pragma: no-cache" is read as
	// "Cache-Control: no-cache" when there is none (RFC 9111 section 5.4).
	delete(r.Header, "Host")
	if cl := r.Header["Content-Length"]; len(cl) > 1 {
		r.Header["Content-Length"] = cl[:1]
	}
	if p := r.Header["Pragma"]; len(p) > 0 && p[0] == "no-cache" && r.Header["Cache-Control"] == nil {
		r.Header["Cache-Control"] = []string{"no-cache"}
	}
	switch {
	case req.Chunked:
		r.ContentLength = -1
		r.TransferEncoding = []string{"chunked"}
		delete(r.Header, "Transfer-Encoding")
	case req.ContentLength > 0:
		r.ContentLength = req.ContentLength
	}
	if r.Trailer, err = declaredTrailer(r.Header, req.Chunked); err != nil {
		return nil, err
	}
	if remote != nil { // not kept by the connection: an idle one stays small
		r.RemoteAddr = remote.String()
	}
	if cs, ok := hc.c.ConnectionState(); ok {
		r.TLS = &cs
	}
	return r, nil
}

// errTrailerKey is a chunked request's Trailer field naming a field that
// may not be a trailer: the request is refused, as by net/http's server.
var errTrailerKey = errors.New("http1: bad trailer key")

// declaredTrailer returns the keys the Trailer field of a chunked
// request's header names, with no values yet, as net/http's server
// declares them in Request.Trailer (nil if it names none), and takes the
// field out of the header; the body's reader fills in the values at its
// end. Naming Transfer-Encoding, Trailer or Content-Length is an error.
// Without a chunked body the field stays in the header, unread, as with
// net/http.
func declaredTrailer(h http.Header, chunked bool) (http.Header, error) {
	vv, ok := h["Trailer"]
	if !ok || !chunked {
		return nil, nil
	}
	delete(h, "Trailer")
	t := make(http.Header)
	for _, v := range vv {
		for _, k := range strings.Split(v, ",") {
			switch k = textproto.CanonicalMIMEHeaderKey(textproto.TrimString(k)); k {
			case "":
			case "Transfer-Encoding", "Trailer", "Content-Length":
				return nil, errTrailerKey
			default:
				t[k] = nil
			}
		}
	}
	if len(t) == 0 {
		return nil, nil
	}
	return t, nil
}

// parseTrailer returns the fields of a trailer section's lines, which the
// ChunkedDecoder checked.
func parseTrailer(lines []byte) http.Header {
	if len(lines) == 0 {
		return nil
	}
	h := make(http.Header)
	for len(lines) > 0 {
		var line []byte
		line, lines, _ = bytes.Cut(lines, []byte("\r\n"))
		name, value, _ := bytes.Cut(line, []byte(":"))
		k := textproto.CanonicalMIMEHeaderKey(string(name))
		h[k] = append(h[k], string(bytes.Trim(value, " \t")))
	}
	return h
}

func method(m []byte) string {
	switch string(m) {
	case "GET":
		return http.MethodGet
	case "POST":
		return http.MethodPost
	case "HEAD":
		return http.MethodHead
	case "PUT":
		return http.MethodPut
	case "DELETE":
		return http.MethodDelete
	}
	return string(m)
}

func proto(major, minor int) string {
	switch {
	case major == 1 && minor == 1:
		return "HTTP/1.1"
	case major == 1 && minor == 0:
		return "HTTP/1.0"
	}
	return "HTTP/" + strconv.Itoa(major) + "." + strconv.Itoa(minor)
}

// feed moves the body bytes that arrived to the handler, and pauses
// reading while the handler is behind or requests pile up behind it. It
// runs on the loop.
func (sr *stdRequest) feed() {
	c := sr.c
	for !sr.bodyDone {
		in, _ := c.Peek(0)
		if len(in) == 0 {
			break
		}
		if sr.dec == nil {
			k := int(min(int64(len(in)), sr.bodyLeft))
			sr.body.push(in[:k])
			c.Discard(k)
			if sr.bodyLeft -= int64(k); sr.bodyLeft == 0 {
				sr.finishBody(nil)
			}
			continue
		}
		data, n, err := sr.dec.Decode(in)
		c.Discard(n)
		sr.bodyRead += int64(len(data))
		switch {
		case err != nil && !errors.Is(err, ErrIncomplete):
			sr.finishBody(err)
		case sr.s.MaxBodyBytes > 0 && sr.bodyRead > sr.s.MaxBodyBytes:
			// As http.MaxBytesReader: the bytes up to the limit, then the error.
			over := sr.bodyRead - sr.s.MaxBodyBytes
			sr.body.push(data[:int64(len(data))-over])
			sr.finishBody(&http.MaxBytesError{Limit: sr.s.MaxBodyBytes})
		default:
			sr.body.push(data)
			if sr.dec.Done() {
				sr.body.setTrailer(parseTrailer(sr.dec.Trailer()))
				sr.finishBody(nil)
			}
		}
		if n == 0 {
			break
		}
	}
	if !sr.bodyDone && sr.body.full() {
		c.PauseReading()
	} else if sr.bodyDone && c.InboundBuffered() > maxPipelined && !sr.upgrade {
		c.PauseReading()
	}
}

// finishBody ends the body the handler reads: at its end (err nil), or
// with the error that stopped it, after which the connection closes once
// the answer is out.
func (sr *stdRequest) finishBody(err error) {
	sr.bodyDone = true
	sr.hc.enter(handling)
	if err != nil {
		sr.c.PauseReading() // the rest is not a request
	}
	sr.body.finish(err)
}

// resume continues reading after the handler caught up with the body.
func (sr *stdRequest) resume() {
	if sr.hc.std != sr || sr.gone {
		return
	}
	sr.c.ResumeReading()
	sr.feed()
}

// clientGone: the client sent EOF. As net/http's server does, the request's
// context is cancelled; the answer is still sent.
func (sr *stdRequest) clientGone() {
	sr.cancel()
	sr.w.notifyClose()
	if !sr.bodyDone {
		sr.finishBody(io.ErrUnexpectedEOF)
	}
}

// readTimedOut: Server.ReadTimeout passed before the body's end. As with
// net/http's server, a Read waiting then fails with a timeout error, and
// later ones too unless the handler set a read deadline of its own (the
// pipe's deadline is ReadTimeout's until then); the answer is still sent,
// then the connection closes.
func (sr *stdRequest) readTimedOut() { sr.readExpired() }

// connClosed: the connection is gone (or detached by Hijack).
func (sr *stdRequest) connClosed(err error) {
	sr.gone = true
	sr.hc.ls.deadlines.remove(sr)
	if errors.Is(err, evloop.ErrDetached) {
		return
	}
	sr.cancel()
	if !sr.bodyDone {
		sr.bodyDone = true
		sr.body.finish(io.ErrUnexpectedEOF)
	}
	sr.w.connGone()
}

// run runs the handler on a worker goroutine.
func (sr *stdRequest) run() {
	w := sr.w
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				sr.s.Logger.Error("http1: panic serving request", "remote", sr.req.RemoteAddr,
					"panic", v, "stack", string(debug.Stack()))
			}
			w.returned.Store(true)
			w.abort()
		}
		if f := sr.req.MultipartForm; f != nil {
			// The files ParseMultipartForm wrote the request's uploads
			// to, as net/http's server removes them.
			f.RemoveAll()
		}
		sr.done()
	}()
	sr.h.ServeHTTP(w, sr.req)
	w.returned.Store(true)
	w.finish()
}

// done hands the connection back to its loop.
func (sr *stdRequest) done() {
	if sr.c.Submit(sr.finished) != nil {
		sr.cancel()
		sr.s.active.Add(-1)
	}
}

// finished runs on the loop once the handler returned and its answer was
// queued: the connection goes on with its next request, or closes. The
// request counts as active until then, so that Shutdown, waiting for the
// active ones, sees a connection the handler switched to a Protocol.
func (sr *stdRequest) finished() {
	hc, c, w := sr.hc, sr.c, sr.w
	sr.cancel()
	defer sr.s.active.Add(-1)
	if sr.gone || hc.std != sr {
		return
	}
	hc.std = nil
	hc.ls.deadlines.remove(sr)
	ends := sr.bodyEndsConn(true) // before the pipe lets go of what the handler left
	var unread int64              // what the handler left in the pipe
	if sr.body != nil {
		// A body kept past the handler reads ErrBodyReadAfterClose, as
		// net/http's server closes it.
		unread = sr.body.release()
	}
	switch {
	case w.aborted:
		// As net/http's server after a panic: what went out goes, the
		// rest of the answer does not, and the connection closes (a FIN,
		// not a reset, which could destroy what went out before the
		// client read it).
		c.Close()
		return
	case w.pastDeadline():
		c.Abort() // a timed-out answer cannot be completed: as net/http, no more of it
		return
	}
	if w.proto == nil && sr.writeAt != 0 && w.queued() > 0 {
		// What is still queued of the answer goes out within the write
		// deadline, as net/http's server's last writes of it must.
		sr.sending, hc.unsent = true, sr
		sr.readAt = 0 // the handler is done with the body
		hc.ls.deadlines.add(sr)
	}
	switch {
	case w.failed() != nil:
		// Some of the answer was refused (the outbound queue was full):
		// what went before it goes out, then the connection ends, as
		// net/http's server ends one after a failed write. Another answer
		// after this one's would be read as the rest of it.
		hc.close()
		return
	case w.proto != nil:
		c.ResumeReading()
		hc.switchTo(w.proto)
		return
	}
	var held *responseWriter // sent once the body is dropped, or now if the connection closes
	if w.held {
		held = w
		sr.req = nil
	}
	if w.closeAfter || !sr.keep || ends || hc.ls.closesConns() {
		hc.sendHeld(held, false)
		hc.close()
		return
	}
	if !sr.bodyDone && sr.body.deadlinePast() {
		// As net/http's server, whose drop of the rest would fail on the
		// read deadline: the connection ends after the answer.
		hc.sendHeld(held, false)
		hc.close()
		return
	}
	if !sr.bodyDone {
		// Unread body: drop a little to reach the next request.
		if sr.dec != nil {
			// What the handler left in the pipe counts, as it does for
			// net/http's server, which drops it through the body.
			left := maxDiscard - unread
			if left <= 0 {
				hc.sendHeld(held, false)
				hc.close()
				return
			}
			hc.drop, hc.discard = &chunkDrop{dec: sr.dec, held: held}, left
		} else if sr.bodyLeft < maxDiscard {
			hc.discard = sr.bodyLeft
		} else {
			hc.close()
			return
		}
		// The rest must come within ReadTimeout of the request's start,
		// or within IdleTimeout if there is none or the handler set its
		// own read deadline (which took the connection off ReadTimeout's
		// list, and ends with the handler).
		if hc.ls.s.ReadTimeout <= 0 || hc.list != inBody+1 {
			hc.enter(idle)
		}
	} else if !hc.sendHeld(held, true) {
		hc.close()
		return
	}
	c.ResumeReading()
	hc.serve()
}

// sent runs once the last of the answer's bytes still queued when the
// handler returned was written, or dropped with the connection: the write
// deadline no longer applies, and a connection waiting for its next
// request gets IdleTimeout from now, or ReadHeaderTimeout if the start of
// its head came meanwhile, as net/http's server reads the next request
// once the answer is written; unless a later pooled answer is still going
// out, whose own sent does so.
func (sr *stdRequest) sent() {
	sr.sending = false
	sr.ls.deadlines.remove(sr)
	hc := sr.hc
	if sr.c.Closed() || sr.c.Context() != hc || hc.unsent != sr {
		return // closed, switched to another protocol (hc is not its state), or a later answer is unsent
	}
	hc.unsent = nil
	if hc.phase != sending {
		return
	}
	if in, _ := hc.c.Peek(0); len(in) > 0 {
		hc.enter(inHead) // the start of a head came meanwhile (serve)
		return
	}
	hc.enter(idle)
	hc.noteIdle()
}

// bodyPipe carries a request's body from the loop to the handler, a
// bounded amount ahead.
type bodyPipe struct {
	sr *stdRequest

	mu     sync.Mutex
	cond   sync.Cond
	buf    []byte // received, not yet read
	off    int    // buf[off:] is unread
	err    error  // io.EOF at the end; set when the loop is done, or timed out
	paused bool   // the loop paused reading for the reader to catch up
	asked  bool   // the request has "Expect: 100-continue"
	expect bool   // "100 Continue" owed before the first read
	closed bool   // the handler closed the body
	sawEOF bool   // the handler read the body to its end
	left   int64  // the loop's bodyLeft, for the handler's goroutine; -1: chunked

	deadline time.Time // the read deadline: the handler's, or Server.ReadTimeout's
	timedOut bool      // a Read failed on the deadline before the body's end: reads fail
	waiting  bool      // a Read waits for the client

	trailer http.Header // a chunked body's trailer, for the read that meets its end
}

// newBodyPipe returns the pipe for a body of length bytes (-1: chunked).
func newBodyPipe(sr *stdRequest, expect100 bool, length int64) *bodyPipe {
	p := &bodyPipe{sr: sr, asked: expect100, expect: expect100, left: length}
	p.cond.L = &p.mu
	return p
}

// push adds body bytes (on the loop).
func (p *bodyPipe) push(b []byte) {
	if len(b) == 0 {
		return
	}
	p.mu.Lock()
	if p.left > 0 {
		if p.left -= int64(len(b)); p.left == 0 && p.err == nil {
			// The last of a Content-Length body: its end is known now,
			// so that the read that takes these bytes returns io.EOF with
			// them, as net/http's body does, before the loop's finish.
			p.err = io.EOF
		}
	}
	if !p.closed {
		if p.off == len(p.buf) {
			p.buf, p.off = p.buf[:0], 0
		} else if p.off > 0 && len(b) > cap(p.buf)-len(p.buf) {
			// Move the unread bytes to the front rather than grow: the
			// buffer stays near what is unread, which the loop bounds
			// (maxBodyAhead), however far the handler lags behind.
			n := copy(p.buf, p.buf[p.off:])
			p.buf, p.off = p.buf[:n], 0
		}
		p.buf = append(p.buf, b...)
		p.cond.Signal()
	}
	p.mu.Unlock()
}

// full reports whether the reader is far enough behind for the loop to
// stop reading; the reader resumes it.
func (p *bodyPipe) full() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf)-p.off >= maxBodyAhead && !p.closed {
		p.paused = true
		return true
	}
	return false
}

// setTrailer keeps the body's trailer (on the loop), for the handler's
// read that meets the body's end to put in Request.Trailer.
func (p *bodyPipe) setTrailer(h http.Header) {
	p.mu.Lock()
	p.trailer = h
	p.mu.Unlock()
}

// finish ends the body with err (nil: its end).
func (p *bodyPipe) finish(err error) {
	if err == nil {
		err = io.EOF
	}
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.cond.Broadcast()
	p.mu.Unlock()
}

// arriving reports whether the body is still arriving, in a request
// without "Expect: 100-continue": one whose rest the client sends whether
// or not it is read.
func (p *bodyPipe) arriving() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err == nil && !p.asked
}

// release drops the bytes the handler, which returned, did not read, and
// returns how many there were.
func (p *bodyPipe) release() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.buf) - p.off
	p.buf, p.off, p.closed = nil, 0, true
	p.cond.Broadcast() // a Read a goroutine of the handler's left waiting fails
	return int64(n)
}

// noContinue drops the "100 Continue" owed, once the answer's final
// status is written: as net/http's server, no 100 goes out after it.
func (p *bodyPipe) noContinue() {
	p.mu.Lock()
	p.expect = false
	p.mu.Unlock()
}

// Read reads the body. The first Read answers "Expect: 100-continue",
// unless the answer's final status was written.
func (p *bodyPipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	if p.checkDeadline(); p.timedOut {
		return 0, p.err
	}
	if p.expect {
		p.expect = false
		if p.err == nil {
			// Sent as the answer's bytes are, so that a Flush or Hijack
			// after it waits for it (the pipe's lock is not held while
			// the writer's is taken).
			p.mu.Unlock()
			p.sr.w.send(continueResponse, nil)
			p.mu.Lock()
			if p.closed {
				return 0, http.ErrBodyReadAfterClose
			}
		}
	}
	var a alarm
	// A Read of no bytes waits for none, as net/http's body's does; the
	// body's end or failure, if it came, is reported all the same.
	for len(b) > 0 && p.off == len(p.buf) && p.err == nil && !p.closed {
		p.waiting = true
		a.wait(&p.cond, p.deadline)
		p.waiting = false
		p.checkDeadline()
	}
	a.stop()
	if p.closed {
		return 0, http.ErrBodyReadAfterClose // closed while it waited
	}
	if p.off == len(p.buf) {
		p.sawEOF = p.err == io.EOF
		p.takeTrailer()
		return 0, p.err
	}
	n := copy(b, p.buf[p.off:])
	p.off += n
	if p.off == len(p.buf) && p.err == io.EOF {
		// The body's last bytes: with io.EOF, as net/http's body
		// returns them.
		p.sawEOF = true
		p.takeTrailer()
		return n, io.EOF
	}
	if p.paused && len(p.buf)-p.off < maxBodyAhead/2 {
		p.paused = false
		p.sr.c.Submit(p.sr.resume)
	}
	return n, nil
}

// takeTrailer puts the trailer of a body read to its end in
// Request.Trailer, on the reader's goroutine as net/http's body does: its
// values join the keys the head declared. p.mu is held.
func (p *bodyPipe) takeTrailer() {
	if !p.sawEOF || p.trailer == nil {
		return
	}
	r := p.sr.req
	if r.Trailer == nil {
		r.Trailer = make(http.Header, len(p.trailer))
	}
	maps.Copy(r.Trailer, p.trailer)
	p.trailer = nil
}

// Close closes the body: later reads fail, and what arrives is dropped.
func (p *bodyPipe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.buf, p.off = nil, 0
	p.cond.Broadcast() // a Read waiting fails
	if p.paused {
		p.paused = false
		p.sr.c.Submit(p.sr.resume)
	}
	return nil
}

// takeRest returns the body bytes received and not read, for Hijack,
// whose reader hands them on: later reads fail, rather than return them
// again or wait for bytes the hijacked connection now receives, unless
// the body was read to its end. No "100 Continue" goes out after it.
func (p *bodyPipe) takeRest() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	rest := slices.Clone(p.buf[p.off:])
	p.buf, p.off = nil, 0
	p.expect = false
	if !p.sawEOF {
		p.err = http.ErrHijacked
		p.cond.Broadcast()
	}
	return rest
}

// Sizes of the buffers a pooled handler's answer is written through.
const (
	writeBuffer  = 4 << 10   // bytes gathered before they go to the loop
	maxInflight  = 256 << 10 // bytes handed to the loop and not yet written
	chunkReserve = 8         // room for a chunk's size line before its data
	sniffLen     = 512       // bytes http.DetectContentType looks at
)

// errAfterReturn is what a write, flush or hijack of a pooled handler's
// ResponseWriter returns once the handler returned: its answer is complete,
// and the connection may be carrying the next. (net/http's server panics
// or loses the bytes; its ResponseWriter may not be used then.)
var errAfterReturn = errors.New("http1: ResponseWriter used after the handler returned")

// responseWriter is the http.ResponseWriter of a pooled handler. It
// gathers the body in a buffer and hands full buffers to the loop with
// AsyncWrite; a handler that writes faster than the client reads waits.
type responseWriter struct {
	sr     *stdRequest
	c      *evloop.Conn
	header http.Header // the handler's
	sent   http.Header // header as it was at WriteHeader, if the handler may have changed it since
	status int

	calledHeader bool // the handler got header: it may change it after WriteHeader
	wroteHeader  bool
	headSent     bool
	handlerDone  bool
	held         bool // the answer waits for the body's end: holdForBody
	fullDuplex   bool // EnableFullDuplex was called
	autoLength   bool // Content-Length is added: the handler returned before the head went out
	chunked      bool
	closeAfter   bool // the connection closes after this answer
	isHead       bool
	minor        int
	hijacked     bool
	aborted      bool
	proto        Protocol
	declared     int64    // Content-Length from the header, or -1
	trailers     []string // declared in the head's Trailer field
	written      int64
	refused      int64  // of written, the bytes refused past declared
	buf          []byte // buf[chunkReserve:] is body not yet handed over

	mu       sync.Mutex
	cond     sync.Cond
	inflight int
	err      error     // the connection failed or closed, or the deadline passed
	deadline time.Time // the write deadline
	timedOut bool      // the deadline passed: writes fail, and the connection is reset
	// connLost: the connection is gone; closeNotify, if CloseNotify was
	// called, got true then.
	connLost    bool
	closeNotify chan bool

	// returned: ServeHTTP returned (or panicked). A goroutine of the
	// handler's that writes, flushes or hijacks later is refused
	// (errAfterReturn): the connection may be serving its next request.
	returned atomic.Bool
}

func newResponseWriter(sr *stdRequest, req *Request) *responseWriter {
	w := &responseWriter{
		sr:       sr,
		c:        sr.c,
		header:   make(http.Header),
		isHead:   string(req.Method) == "HEAD",
		minor:    req.Minor,
		declared: -1,
	}
	w.cond.L = &w.mu
	return w
}

// Header returns the header fields to send. As with net/http's server,
// changes after WriteHeader do not change the answer's head, but for the
// trailers.
func (w *responseWriter) Header() http.Header {
	if w.returned.Load() {
		// The answer is the server's now, sent from this header even
		// later if it waits for the body's end (holdForBody): a goroutine
		// the handler left behind gets one of its own, which goes nowhere.
		return make(http.Header)
	}
	if w.wroteHeader && !w.headSent && w.sent == nil {
		w.sent = w.header.Clone()
	}
	w.calledHeader = true
	return w.header
}

// head returns the header fields of the answer's head.
func (w *responseWriter) head() http.Header {
	if w.sent != nil {
		return w.sent
	}
	return w.header
}

// WriteHeader sends the status and the header fields (with the body's
// first bytes, or when the handler returns). 1xx codes other than 101 are
// sent at once, as informational answers, without the fields that
// describe a body; to an HTTP/1.0 client, which would take one for the
// final answer, they are not sent (RFC 9110 section 15.2).
func (w *responseWriter) WriteHeader(code int) {
	if w.hijacked {
		w.sr.s.Logger.Warn("http1: WriteHeader on a hijacked connection", "remote", w.sr.remote)
		return
	}
	if w.wroteHeader {
		// From the address the request kept, not the request, which the
		// connection lets go of once the handler returned (finished).
		w.sr.s.Logger.Warn("http1: superfluous WriteHeader call", "remote", w.sr.remote, "code", code)
		return
	}
	checkStatusCode(code)
	if (code < 101 || code > 199) && w.sr.body != nil {
		w.sr.body.noContinue()
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		if w.sr.req.ProtoMinor == 0 {
			return
		}
		b := appendStatusLine(nil, code)
		b = appendHeader(b, w.header, "Content-Length", "Transfer-Encoding")
		b = append(b, "\r\n"...)
		w.send(b, nil)
		return
	}
	w.wroteHeader = true
	w.status = code
	if w.calledHeader {
		w.sent = w.header.Clone()
	}
	h := w.head()
	if v := h.Get("Content-Length"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			w.declared = n
		} else {
			w.sr.s.Logger.Warn("http1: invalid Content-Length", "value", v)
			h.Del("Content-Length")
		}
	}
}

// Write writes body bytes.
func (w *responseWriter) Write(p []byte) (int, error) { return writeBody(w, p) }

// writeBody is Write and WriteString: the bytes are copied into the
// answer's buffer either way.
func writeBody[T string | []byte](w *responseWriter, p T) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if w.returned.Load() {
		return 0, errAfterReturn
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil // as net/http's: nothing to refuse
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.declared >= 0 && w.written+int64(len(p)) > w.declared {
		// Counted as written, as net/http's server counts it: the
		// answer is broken, and the writes after it fail too.
		w.written += int64(len(p))
		w.refused += int64(len(p))
		return 0, http.ErrContentLength
	}
	if err := w.failed(); err != nil {
		return 0, err
	}
	w.written += int64(len(p))
	if w.isHead {
		// No body goes out; its first bytes are kept to sniff the
		// Content-Type from, as for GET.
		if !w.headSent {
			if w.buf == nil {
				w.buf = getBuffer()
			}
			k := copy(w.buf[len(w.buf):chunkReserve+sniffLen], p)
			w.buf = w.buf[:len(w.buf)+k]
		}
		return len(p), nil
	}
	n := len(p)
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = getBuffer()
		}
		k := copy(w.buf[len(w.buf):cap(w.buf)-2], p)
		w.buf = w.buf[:len(w.buf)+k]
		p = p[k:]
		if len(w.buf) == cap(w.buf)-2 {
			if err := w.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// WriteString writes body bytes.
func (w *responseWriter) WriteString(s string) (int, error) { return writeBody(w, s) }

// Flush sends what was written so far.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError sends what was written so far and waits until it reached the
// kernel, or the connection failed.
func (w *responseWriter) FlushError() error {
	if w.hijacked {
		return http.ErrHijacked
	}
	if w.returned.Load() {
		return errAfterReturn
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if err := w.flush(); err != nil {
		return err
	}
	return w.waitWritten()
}

// flush hands the head, if not sent yet, and the buffered body to the
// loop; nothing once the connection failed or the write deadline passed.
func (w *responseWriter) flush() error {
	if err := w.failed(); err != nil {
		if w.buf != nil {
			putBuffer(w.buf)
			w.buf = nil
		}
		return err
	}
	b, buf := w.take()
	if b == nil {
		return w.failed()
	}
	return w.sendAndWait(b, buf)
}

// take returns what goes out next, b: the head, if it was not sent yet,
// and the body buffered, framed for the wire; and buf, the write buffer b
// lies in, which is the caller's to put back once b is written.
func (w *responseWriter) take() (b, buf []byte) {
	if !w.headSent {
		w.headSent = true
		noLength := bodyAllowed(w.status) && !w.isHead && w.declared < 0
		// A handler's "Transfer-Encoding: identity" asks for the body to
		// end with the connection rather than be chunked, as net/http's
		// server reads it (Server-Sent Events); "chunked" is what it gets
		// anyway.
		w.chunked = noLength && w.minor > 0 && w.head().Get("Transfer-Encoding") != "identity"
		if noLength && !w.chunked {
			w.closeAfter = true // HTTP/1.0, or identity: the body ends with the connection
		}
		b = w.appendHead(getBuffer()[:0])
	}
	buf = b
	if data := w.body(); len(data) > 0 {
		if b == nil {
			b, buf = data, w.buf // data starts past the buffer's start
			w.buf = nil
		} else {
			b = append(b, data...)
			buf = b
			putBuffer(w.buf)
			w.buf = nil
		}
	} else if w.buf != nil {
		putBuffer(w.buf)
		w.buf = nil
	}
	return b, buf
}

// body returns the buffered body framed for the wire: as a chunk when
// chunked.
func (w *responseWriter) body() []byte {
	if w.buf == nil || len(w.buf) == chunkReserve || w.isHead {
		return nil
	}
	data := w.buf[chunkReserve:]
	if !w.chunked {
		return data
	}
	var size [chunkReserve]byte
	line := strconv.AppendInt(size[:0], int64(len(data)), 16)
	line = append(line, "\r\n"...)
	start := chunkReserve - len(line)
	copy(w.buf[start:], line)
	return append(w.buf[start:], "\r\n"...) // within cap: two bytes kept free
}

// appendHead appends the status line and the fields: those of the
// header as it was at WriteHeader, and the framing's.
func (w *responseWriter) appendHead(b []byte) []byte {
	s := w.sr.s
	h := w.head()
	b = appendStatusLine(b, w.status)
	if _, ok := h["Date"]; !ok {
		b = append(b, *s.date.Load()...)
	}
	if _, ok := h["Server"]; !ok && s.Name != "" {
		b = appendField(b, "Server", s.Name)
	}
	if w.status == http.StatusSwitchingProtocols {
		// No body: no framing fields, as net/http's server sends none.
		b = appendHeader(b, h, "Transfer-Encoding", "Content-Length")
		return append(b, "\r\n"...)
	}
	var omitted [4]string
	omit := append(omitted[:0], "Transfer-Encoding")
	switch {
	case bodyAllowed(w.status):
		// Sniffed as net/http's server sniffs: not for an encoded body,
		// whose bytes are not the content's, nor a Transfer-Encoding of
		// the handler's.
		if _, ok := h["Content-Type"]; !ok && w.buf != nil && len(w.buf) > chunkReserve &&
			h.Get("Content-Encoding") == "" && h.Get("Transfer-Encoding") == "" {
			b = appendField(b, "Content-Type", http.DetectContentType(w.buf[chunkReserve:]))
		}
	case w.status == http.StatusNotModified:
		omit = append(omit, "Content-Length", "Content-Type") // as net/http's server
	default:
		omit = append(omit, "Content-Length")
	}
	if !w.closeAfter && (!w.sr.keep || s.closesConns() || fieldHasToken(h, "Connection", "close") ||
		w.sr.bodyEndsConn(w.handlerDone)) {
		w.closeAfter = true
	}
	if w.closeAfter {
		omit = append(omit, "Connection")
	}
	b = appendHeader(b, h, omit...) // leaves out TrailerPrefix names: not tokens
	if w.autoLength {
		b = appendLength(b, w.declared)
	}
	if w.chunked {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		w.declareTrailers(h)
	}
	switch {
	case w.closeAfter:
		b = append(b, "Connection: close\r\n"...)
	case w.minor == 0 && !fieldHasToken(h, "Connection", "keep-alive"):
		b = append(b, "Connection: keep-alive\r\n"...)
	}
	return append(b, "\r\n"...)
}

// fieldHasToken reports whether one of h's name fields lists token.
func fieldHasToken(h http.Header, name, token string) bool {
	for _, v := range h[name] {
		if hasToken(v, token) {
			return true
		}
	}
	return false
}

// appendHeader appends h's fields but those named in omit, sorted by
// name, with CR and LF in values replaced by spaces and invalid names left
// out, as net/http does.
func appendHeader(b []byte, h http.Header, omit ...string) []byte {
	keys := make([]string, 0, len(h))
	for k := range h {
		if validFieldName(k) && !slices.Contains(omit, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			start := len(b)
			b = append(b, textproto.TrimString(v)...)
			for i := start; i < len(b); i++ {
				if b[i] == '\r' || b[i] == '\n' {
					b[i] = ' '
				}
			}
			b = append(b, "\r\n"...)
		}
	}
	return b
}

// finish completes the answer once the handler returned: the head, with a
// Content-Length if the whole body is known, the rest of the body, and the
// chunked body's end.
func (w *responseWriter) finish() {
	if w.hijacked || w.proto != nil {
		return
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.handlerDone = true
	if w.declared >= 0 && w.written-w.refused < w.declared && !w.isHead && bodyAllowed(w.status) {
		// Fewer bytes than declared: the framing is broken; close.
		w.closeAfter = true
	}
	if !w.headSent && w.declared < 0 && bodyAllowed(w.status) && (!w.isHead || w.written > 0) &&
		!hasTrailers(w.head()) && w.head().Get("Transfer-Encoding") == "" {
		// A Transfer-Encoding the handler set keeps its framing, as with
		// net/http's server.
		w.autoLength = true
		w.declared = w.written
	}
	if w.holdForBody() {
		return // the loop sends the answer once the body has ended
	}
	if w.flush() == nil && w.chunked {
		end := w.appendEnd(getBuffer()[:0])
		w.send(end, end)
	}
}

// appendEnd appends the end of a chunked body: the last chunk and the
// trailer.
func (w *responseWriter) appendEnd(b []byte) []byte {
	b = append(b, "0\r\n"...)
	b = w.appendTrailers(b)
	return append(b, "\r\n"...)
}

// holdForBody reports whether the answer, none of which went out yet,
// waits for the loop to drop the rest of a chunked body the handler left
// unread. net/http's server drops up to 256 KiB of such a body before it
// writes the head, so that the head can say whether the connection stays
// open; here the loop drops it, holding no worker, and then sends the
// answer (conn.sendHeld), with "Connection: close" if more was left, the
// body was malformed, or it did not come.
func (w *responseWriter) holdForBody() bool {
	if w.headSent || w.closeAfter || w.fullDuplex || !w.sr.keep || w.sr.dec == nil ||
		w.sr.s.closesConns() || fieldHasToken(w.head(), "Connection", "close") {
		return false // the connection closes after the answer anyway
	}
	w.held = w.sr.body.arriving()
	return w.held
}

// hasTrailers reports whether the header h says trailers will be sent, as
// net/http's server sees it: then the body is chunked even when the
// handler returns before writing it all.
func hasTrailers(h http.Header) bool {
	if len(h["Trailer"]) > 0 {
		return true
	}
	for k := range h {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			return true
		}
	}
	return false
}

// declareTrailers records the trailers the head's Trailer field names.
func (w *responseWriter) declareTrailers(h http.Header) {
	for _, v := range h["Trailer"] {
		for name := range strings.SplitSeq(v, ",") {
			name = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name))
			if validFieldName(name) && !forbiddenTrailer[name] {
				w.trailers = append(w.trailers, name)
			}
		}
	}
}

// appendTrailers appends the trailer fields of a chunked body: those the
// head declared, with the values the handler set by the end, and any set
// under http.TrailerPrefix, as net/http's server sends them.
func (w *responseWriter) appendTrailers(b []byte) []byte {
	if !hasTrailers(w.header) {
		return b
	}
	t := make(http.Header)
	for k, vv := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			if name = textproto.CanonicalMIMEHeaderKey(name); !forbiddenTrailer[name] {
				t[name] = append(t[name], vv...)
			}
		}
	}
	for _, k := range w.trailers {
		t[k] = append(t[k], w.header[k]...)
	}
	return appendHeader(b, t)
}

// forbiddenTrailer are the fields that must not be trailers (RFC 9110,
// section 6.5.1), as net/http's server leaves them out.
var forbiddenTrailer = map[string]bool{
	"Authorization":       true,
	"Cache-Control":       true,
	"Connection":          true,
	"Content-Encoding":    true,
	"Content-Length":      true,
	"Content-Range":       true,
	"Content-Type":        true,
	"Expect":              true,
	"Host":                true,
	"Keep-Alive":          true,
	"Max-Forwards":        true,
	"Pragma":              true,
	"Proxy-Authenticate":  true,
	"Proxy-Authorization": true,
	"Proxy-Connection":    true,
	"Range":               true,
	"Realm":               true,
	"Te":                  true,
	"Trailer":             true,
	"Transfer-Encoding":   true,
	"Www-Authenticate":    true,
}

// abort is what a panicking handler gets: the answer's buffered bytes are
// dropped, and the connection closes after what went out (finished).
func (w *responseWriter) abort() {
	if w.buf != nil {
		putBuffer(w.buf)
		w.buf = nil
	}
	w.aborted = true
}

// send hands b to the loop, unless the write deadline has passed; buf,
// if not nil, is the write buffer (from getBuffer) b lies in, put back
// once b is written or dropped. The deadline is checked here again, under
// the lock the loop's tick takes to fail the bytes in flight: a deadline
// passing between the caller's check and here found none to fail, and the
// loop no longer watches it.
func (w *responseWriter) send(b, buf []byte) {
	w.mu.Lock()
	if w.checkDeadline(); w.timedOut {
		w.mu.Unlock()
		putBuffer(buf)
		return
	}
	w.inflight += len(b)
	w.mu.Unlock()
	w.c.AsyncWrite(b, func(err error) {
		w.mu.Lock()
		w.inflight -= len(b)
		if err != nil && w.err == nil {
			w.err = err
		}
		w.cond.Broadcast()
		left := w.inflight
		w.mu.Unlock()
		putBuffer(buf)
		if left == 0 && w.sr.sending {
			w.sr.sent()
		}
	})
}

// queued returns how many of the answer's bytes handed to the loop are not
// yet written.
func (w *responseWriter) queued() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inflight
}

// awaitInflight waits, lock held, until at most limit bytes are in flight,
// the answer failed, or its write deadline passed.
func (w *responseWriter) awaitInflight(limit int) error {
	var a alarm
	for w.inflight > limit && w.err == nil {
		a.wait(&w.cond, w.deadline)
		w.checkDeadline()
	}
	a.stop()
	return w.err
}

// sendAndWait sends b, in buf, then waits while too much is in flight.
func (w *responseWriter) sendAndWait(b, buf []byte) error {
	w.send(b, buf)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.awaitInflight(w.sr.s.inflightLimit())
}

// inflightLimit is how many bytes of a pooled answer may wait on the loop
// before its writer waits for the client: maxInflight, or a quarter of
// Engine.MaxOutbound if that is less, which leaves room for the buffer
// sent next, the head, and answers queued before it, so that the loop
// does not refuse the answer of a handler that merely writes faster than
// its client reads.
func (s *Server) inflightLimit() int {
	if m := s.Engine.MaxOutbound; m > 0 {
		return min(maxInflight, m/4)
	}
	return maxInflight
}

func (w *responseWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checkDeadline()
	return w.err
}

// pastDeadline reports whether the write deadline passed.
func (w *responseWriter) pastDeadline() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.timedOut
}

// connGone fails the writes to come (on the loop, when the connection
// closed).
func (w *responseWriter) connGone() {
	w.mu.Lock()
	if w.err == nil {
		w.err = evloop.ErrClosed
	}
	w.notifyCloseLocked()
	w.cond.Broadcast()
	w.mu.Unlock()
}

// notifyClose tells CloseNotify's channel that the client is gone: its
// connection closed, or it sent EOF while the handler runs.
func (w *responseWriter) notifyClose() {
	w.mu.Lock()
	w.notifyCloseLocked()
	w.mu.Unlock()
}

func (w *responseWriter) notifyCloseLocked() {
	if !w.connLost && w.closeNotify != nil {
		w.closeNotify <- true // buffered: sent once
	}
	w.connLost = true
}

// CloseNotify implements http.CloseNotifier, as net/http's ResponseWriter
// does (deprecated there for Request.Context, but frameworks still assert
// it): the channel receives true once the client's connection is gone.
func (w *responseWriter) CloseNotify() <-chan bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closeNotify == nil {
		w.closeNotify = make(chan bool, 1)
		if w.connLost {
			w.closeNotify <- true
		}
	}
	return w.closeNotify
}

// Hijack takes the connection off the server for the handler: what was
// written is sent first, and the returned reader holds the bytes received
// and not yet read. The server does nothing more with the connection; the
// handler closes it.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	if w.returned.Load() {
		return nil, nil, errAfterReturn
	}
	if w.wroteHeader {
		if err := w.FlushError(); err != nil {
			return nil, nil, err
		}
	} else if err := w.waitWritten(); err != nil {
		return nil, nil, err
	}
	if err := w.waitQueue(); err != nil {
		return nil, nil, err
	}
	type detached struct {
		nc   net.Conn
		rest []byte
		err  error
	}
	res := make(chan detached, 1)
	if w.c.Submit(func() {
		if w.sr.gone {
			res <- detached{err: evloop.ErrClosed}
			return
		}
		nc, rest, err := w.c.Detach()
		res <- detached{nc, rest, err}
	}) != nil {
		return nil, nil, evloop.ErrClosed
	}
	d := <-res
	if d.err != nil {
		return nil, nil, d.err
	}
	w.hijacked = true
	var pending []byte
	if w.sr.body != nil {
		pending = w.sr.body.takeRest()
	}
	r := io.Reader(d.nc)
	if len(pending)+len(d.rest) > 0 {
		r = io.MultiReader(bytes.NewReader(append(pending, d.rest...)), d.nc)
	}
	return d.nc, bufio.NewReadWriter(bufio.NewReader(r), bufio.NewWriter(d.nc)), nil
}

// waitWritten waits until everything handed to the loop was written.
func (w *responseWriter) waitWritten() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.awaitInflight(0)
}

// waitQueue waits until every byte queued on the connection was written,
// the answers to the requests before this one too (a client slow to read
// them), within the write deadline: an empty write queued behind them,
// counted in flight as one byte, completes once they are.
func (w *responseWriter) waitQueue() error {
	w.mu.Lock()
	w.inflight++
	w.mu.Unlock()
	w.c.AsyncWrite(nil, func(err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.inflight--
		if err != nil && w.err == nil {
			w.err = err
		}
		w.cond.Broadcast()
	})
	return w.waitWritten()
}

// SwitchProtocols answers 101 Switching Protocols with the header fields
// set, and hands the connection to p once the handler returns, as
// Response.SwitchProtocols does for a fast handler. It fails if the
// answer was begun.
func (w *responseWriter) SwitchProtocols(p Protocol) error {
	if w.hijacked {
		return http.ErrHijacked
	}
	if w.wroteHeader {
		return errors.New("http1: SwitchProtocols after WriteHeader")
	}
	w.WriteHeader(http.StatusSwitchingProtocols)
	w.headSent = true
	w.proto = p
	head := w.appendHead(getBuffer()[:0])
	return w.sendAndWait(head, head)
}

// EnableFullDuplex returns nil: a pooled handler may always read the
// request's body while it writes the answer. As with net/http's server,
// the answer of a handler that called it does not wait for the end of a
// body it left unread (see holdForBody). It is what
// http.ResponseController's EnableFullDuplex calls.
func (w *responseWriter) EnableFullDuplex() error {
	w.fullDuplex = true
	return nil
}

// bodyEndsConn reports whether, for the request's body, the connection
// closes after the answer: the body ended in an error (malformed, too
// long, cut short, timed out); or the request has "Expect: 100-continue"
// and the handler has not read the body to its end, as net/http's server
// does, since the bytes that follow may or may not be the body; or, once
// the handler returned (done), more of the body is left unread than the
// server drops to reach the next request (a chunked body's length is
// found out while dropping it).
func (sr *stdRequest) bodyEndsConn(done bool) bool {
	if sr.body == nil {
		return false
	}
	p := sr.body
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.err != nil && p.err != io.EOF:
		return true
	case p.asked && !p.sawEOF:
		return true
	}
	// What is left of the body counts, received or not (the whole body
	// may have come), as net/http's server counts it: left is what the
	// loop has not yet passed on.
	return done && p.left+int64(len(p.buf)-p.off) >= maxDiscard
}

var buffers = sync.Pool{New: func() any { b := make([]byte, chunkReserve, writeBuffer); return &b }}

// getBuffer returns a write buffer: empty but for the room kept for a
// chunk's size line.
func getBuffer() []byte {
	b := *buffers.Get().(*[]byte)
	return b[:chunkReserve]
}

func putBuffer(b []byte) {
	if cap(b) != writeBuffer {
		return
	}
	b = b[:chunkReserve]
	buffers.Put(&b)
}
