package http1

import (
	"errors"
	"net/http"
	"time"

	"github.com/evloop/evloop"
)

// How much a connection buffers while a pooled handler answers its
// current request: the requests pipelined behind it, and the body bytes
// read ahead of the handler. Past these, reading pauses.
const (
	maxPipelined = 64 << 10
	maxBodyAhead = 64 << 10
)

// maxDiscard bounds the unread body bytes a connection reads and drops
// after a handler returned, to reach the next request: a rest of this many
// or more closes the connection, as net/http's server closes it.
const maxDiscard = 256 << 10

// conn is the state of one HTTP connection, owned by its loop. Between
// requests it is all the connection holds: no buffer, no goroutine.
type conn struct {
	ls *loopState
	c  *evloop.Conn
	p  Parser

	// A fast route's request whose body is not all here yet: the head and
	// body stay buffered until need bytes are (Content-Length), or body
	// collects the decoded chunks.
	need int
	fast *fastBody

	std *stdRequest // a request a pooled handler is answering
	// unsent is the last pooled answer whose handler returned with some
	// of it still queued under a write deadline: until it is written
	// (stdRequest.sent), the connection waits for its next request in
	// phase sending, not idle.
	unsent *stdRequest

	// discard counts body bytes still to drop after a pooled handler
	// returned without reading its body, or after the server's own answer
	// (answerOwnEarly); drop is there if it is chunked.
	discard int64
	drop    *chunkDrop

	// The connection's place in its loop's timeouts.
	prev, next *conn
	deadline   int64 // in loop ticks
	began      int64 // the loop's tick when the request's first bytes were seen
	list       phase // which list, plus one; 0: none
	// flushLeft is how many bytes of answers were queued when the
	// current stretch of phase flushing began.
	flushLeft int

	phase   phase
	cont    bool // "100 Continue" sent for the current request
	eof     bool // the client sent EOF
	serving bool // serve is running
	// pressed: the connection's outbound queue passed the engine's
	// high-water mark (the client does not read its answers as fast as
	// it pipelines requests): serve answers no more until it drains.
	pressed  bool
	released bool // closed or switched while serving: recycle when it returns
	awaited  bool // Shutdown waits for its request under way (Server.finishing)
	begun    bool // a request's bytes came: no longer new (StateActive)
	// reported is the last state told to Server.ConnState, plus one (0:
	// none yet).
	reported uint8
}

// A connection's phase decides which timeout applies.
type phase uint8

const (
	idle   phase = iota // waiting for a request: IdleTimeout
	inHead              // a head is arriving: ReadHeaderTimeout
	inBody              // a body is arriving: ReadTimeout
	// flushing: waiting for a request, or for the rest of its head, while
	// answers without a write deadline (fast handlers', the server's own,
	// a pooled one without WriteTimeout) wait for a client slow to take
	// them: the wait's timeout, IdleTimeout or ReadHeaderTimeout, bounds
	// each stretch in which the client takes none of them (flushWait),
	// and starts afresh once they are all written (written). A stretch
	// waits in the list of the timeout it lasts, idle's or inHead's.
	flushing
	handling // a handler has the request: no timeout
	// sending: waiting for a request, or for the rest of its head, while
	// a pooled handler's answer is still going out under its write
	// deadline, which bounds it (stdRequest.sent starts IdleTimeout or
	// ReadHeaderTimeout once it is written).
	sending
)

// arriving reports whether a request is arriving: its head or its body.
func (hc *conn) arriving() bool { return hc.phase == inHead || hc.phase == inBody }

// chunkDrop is a connection's state while it drops the rest of a chunked
// body a pooled handler left unread, or the server's own answer did not
// need: the body's decoder, and the answer that waits for the body's end,
// if one does: the handler's (responseWriter.holdForBody) or the server's
// own (answerOwnEarly).
type chunkDrop struct {
	dec  *ChunkedDecoder
	held *responseWriter
	own  *ownAnswer
}

// ownAnswer is the server's own answer (answerOwn) waiting for the end
// of its request's chunked body: only then does its head say whether the
// connection stays, as net/http's server reads up to 256 KiB of a body
// its handler left before it answers.
type ownAnswer struct {
	req     Request // the request's method and version (answerOwn's use of it)
	status  int
	allowed string
}

// sendOwn sends the server's own answer held in d, if there is one, and
// says whether the connection stays.
func (hc *conn) sendOwn(d *chunkDrop, keep bool) {
	if a := d.own; a != nil {
		d.own = nil
		hc.answerOwn(&a.req, a.status, a.allowed, keep)
	}
}

// fastBody collects a chunked body for a fast route. The request's head
// is kept aside and the chunks' bytes are dropped from the connection's
// buffer as they are decoded, so that what the connection holds is the
// head and the body, whatever the chunks' framing adds.
type fastBody struct {
	dec  ChunkedDecoder
	head []byte
	body []byte
}

// serve handles what the connection has buffered: heads are parsed and
// answered in order, until the bytes run out or a pooled handler takes a
// request (it continues when that handler is done).
func (hc *conn) serve() {
	c := hc.c
	hc.serving = true
	defer func() {
		if ls := hc.ls; ls.answering == hc { // its fast handler panicked
			ls.answering = nil
			if ls.outc == hc {
				ls.out = ls.out[:ls.answerAt]
			}
		}
		hc.ls.flushOut()
		if hc.pressed && hc.std == nil && hc.phase == handling && !c.Closed() && !hc.released {
			// Waiting for the client to read its answers: as long as
			// it may take to send another request.
			hc.waitNext()
		}
		hc.serving = false
		if hc.released {
			hc.ls.recycle(hc)
			return
		}
		hc.noteIdle()
	}()
	for !c.Closed() && !hc.pressed {
		if hc.std != nil {
			hc.std.feed()
			return
		}
		if hc.dropping() {
			var held *responseWriter
			if hc.drop != nil {
				held = hc.drop.held
			}
			if !hc.discardBody() {
				if hc.eof && !c.Closed() {
					hc.close() // the rest of the body will not come
				}
				return
			}
			// The answer held, or already sent, and the body dropped:
			// the request is done. Keep-alives disabled (or a shutdown)
			// since it began close the connection now.
			if keep := !hc.ls.closesConns(); !hc.sendHeld(held, keep) || !keep {
				hc.close()
				return
			}
			hc.enter(handling) // the next request begins afresh
		}
		in, _ := c.Peek(0)
		if len(in) > 0 {
			hc.begun = true
			hc.connState(http.StateActive) // a request's bytes came
		}
		switch {
		case hc.fast != nil:
			if !hc.decodeFast() {
				if !c.Closed() {
					hc.waitBody()
				}
				return
			}
			in = hc.fast.head
		case len(in) == 0:
			if hc.eof {
				hc.close()
				return
			}
			hc.waitNext()
			return
		case hc.need > len(in):
			hc.waitBody()
			return
		}
		ls := hc.ls
		req := &ls.req
		n, err := hc.p.Parse(in, req)
		if err == ErrIncomplete {
			if hc.eof {
				hc.close()
				return
			}
			hc.waitFor(inHead)
			return
		}
		if err != nil {
			var perr *Error
			errors.As(err, &perr)
			hc.fail(perr.Status)
			return
		}
		if !hc.dispatch(req, in, n) {
			return
		}
		if len(ls.out) >= maxBatch || c.OutboundBuffered()+len(ls.out) > ls.s.highWater {
			// Queued once the burst's answers pass the high-water mark,
			// so that back pressure pauses the burst (backPressure)
			// before the answers pass the queue's bound.
			ls.flushOut()
		}
	}
}

// waitFirst is a new connection's wait for its first request: bounded by
// ReadHeaderTimeout where that is shorter than IdleTimeout, as net/http's
// server bounds its first read. The connection waits in inHead's list,
// whose deadlines are as far off (it stays idle: the timeout closes it
// without a 408).
func (hc *conn) waitFirst() {
	ls := hc.ls
	s := ls.s
	d := s.ReadHeaderTimeout
	if d <= 0 || s.IdleTimeout > 0 && s.IdleTimeout <= d {
		hc.enter(idle)
		return
	}
	ls.timeouts.remove(hc)
	hc.phase = idle
	ls.catchUp()
	hc.began = ls.now
	hc.deadline = ls.after(d)
	ls.timeouts.push(hc, inHead)
}

// waitNext waits for the next request: with IdleTimeout, or, while a
// pooled answer is still going out under its write deadline, in phase
// sending until it is written.
func (hc *conn) waitNext() { hc.waitFor(idle) }

// waitFor enters phase p (idle, or inHead for the rest of a head), or
// sending while a pooled answer is still going out under its write
// deadline: stdRequest.sent starts p's timeout once it is written, as
// net/http's server reads the next request once the answer is written.
func (hc *conn) waitFor(p phase) {
	switch {
	case hc.unsent != nil:
		hc.enter(sending)
	case hc.phase != flushing: // else p's timeout starts when the answers are written
		hc.enter(p)
	}
}

// maxBatch is how many bytes of answers serve batches before it queues
// them on the connection.
const maxBatch = 64 << 10

// batch returns the loop's answer batch for hc to append to (and store
// back in ls.out), first queueing another connection's, if it holds one.
func (hc *conn) batch() []byte {
	ls := hc.ls
	if ls.outc != hc {
		ls.flushOut()
		ls.outc = hc
	}
	return ls.out
}

// flushOut queues the batched answers on their connection. Whatever
// writes to a connection other than through the batch, or closes it,
// or hands it to other code, flushes first, so that answers keep their
// order; serve flushes before it returns.
func (ls *loopState) flushOut() {
	if len(ls.out) > 0 {
		_, err := ls.outc.c.Write(ls.out)
		ls.outc.writeFailed(err)
	}
	ls.out, ls.outc, ls.answerAt = trim(ls.out), nil, 0
}

// writeFailed closes the connection if err says its answers could not be
// queued (its outbound queue is at the engine's bound): the answers queued
// before go out, the rest cannot, and later ones must not go out of turn.
func (hc *conn) writeFailed(err error) {
	if err != nil && !hc.c.Closed() {
		hc.ls.s.Logger.Warn("http1: answers dropped and the connection closed", "remote", hc.c.RemoteAddr(), "err", err)
		hc.c.Close()
	}
}

// backPressure records whether the connection's outbound queue is past the
// engine's high-water mark, and serves the requests buffered meanwhile
// once it has drained.
func (hc *conn) backPressure(paused bool) {
	hc.pressed = paused
	if !paused && !hc.serving && hc.std == nil && !hc.c.Closed() {
		hc.serve()
	}
}

// close closes the connection after the answers batched for it, and
// the answer held for the end of its request's body, if there is one.
// The batch is the connection's last word (an error answer, say), queued
// past the outbound queue's bound if it must be (evloop.Conn.WriteLast).
func (hc *conn) close() {
	if d := hc.drop; d != nil {
		hc.sendOwn(d, false)
		if d.held != nil {
			hc.sendHeld(d.held, false)
			d.held = nil
		}
	}
	if ls := hc.ls; ls.outc == hc && len(ls.out) > 0 && !hc.c.Closed() {
		hc.c.WriteLast(ls.out)
		ls.out, ls.outc, ls.answerAt = trim(ls.out), nil, 0
	}
	hc.ls.flushOut()
	hc.c.Close()
}

// sendHeld sends w, a pooled handler's answer that waited for the end of
// its request's body (responseWriter.holdForBody), with "Connection:
// close" unless keep. It reports whether the connection stays open; with
// w nil, it does nothing and reports true.
func (hc *conn) sendHeld(w *responseWriter, keep bool) bool {
	if w == nil {
		return true
	}
	if !keep {
		w.closeAfter = true
	}
	b, buf := w.take() // the head decides closeAfter
	if w.chunked {
		b = w.appendEnd(b)
	}
	hc.ls.flushOut()
	_, err := hc.c.Write(b)
	putBuffer(buf)
	hc.writeFailed(err)
	return !w.closeAfter && !hc.c.Closed()
}

// optionsStar is dispatch's status for "OPTIONS *": 200, with no body.
const optionsStar = -1

// dispatch hands the request parsed from in (head of n bytes) to its
// handler. It reports whether serve goes on with the next request.
func (hc *conn) dispatch(req *Request, in []byte, n int) bool {
	s := hc.ls.s
	c := hc.c
	var rt *route
	var status int
	var allowed string
	if string(req.Target) == "*" && string(req.Method) == "OPTIONS" {
		// About the server, not a resource: answered here, whatever the
		// routes, as net/http's server answers it.
		rt, status = &route{}, optionsStar
	} else {
		rt, status, allowed = s.routes.match(req, &hc.ls.route)
	}
	if rt == nil {
		var other route // no pattern matched: the Handler, or none
		if status == 0 {
			if s.Handler == nil {
				status = 404
			} else {
				other.std = s.Handler
			}
		}
		rt = &other
	}
	if rt.std != nil {
		if req.ContentLength > s.MaxBodyBytes && s.MaxBodyBytes > 0 {
			hc.fail(413)
			return false
		}
		c.Discard(n)
		hc.startStd(rt.std, req)
		return hc.std == nil
	}
	if status != 0 && (req.Chunked || req.ContentLength > int64(len(in)-n)) {
		return hc.answerOwnEarly(req, n, int64(len(in)-n), status, allowed)
	}
	// Answered on the loop: the body must be here whole.
	total := n
	var body []byte
	switch {
	case req.Chunked:
		if hc.fast == nil {
			hc.fast = &fastBody{head: append([]byte(nil), in[:n]...)}
			c.Discard(n)
			hc.p.Parse(hc.fast.head, req) // as before, from the copy
			hc.continue100(req)
			if !hc.decodeFast() {
				if !c.Closed() {
					hc.waitBody()
				}
				return false
			}
		}
		total, body = 0, hc.fast.body // the head and chunks are consumed
		hc.fast = nil
	case req.ContentLength > 0:
		if req.ContentLength > s.fastBodyLimit() && status == 0 {
			hc.fail(413)
			return false
		}
		total += int(req.ContentLength)
		if len(in) < total {
			hc.need = total
			hc.continue100(req)
			hc.waitBody()
			return false
		}
		body = in[n:total]
	}
	hc.need, hc.cont = 0, false
	hc.enter(handling)
	req.Body = body
	// A client that half-closed still gets the answers to every request it
	// sent; serve closes once they are all answered.
	keep := req.KeepAlive && !hc.ls.closesConns()
	if status == 0 {
		keep = hc.runFast(rt.fast, req, keep)
	} else {
		hc.answerOwn(req, status, allowed, keep)
	}
	req.Body = nil
	c.Discard(total)
	if p := hc.ls.resp.proto; p != nil && status == 0 {
		hc.ls.resp.proto = nil
		hc.switchTo(p)
		return false
	}
	if !keep {
		hc.close()
		return false
	}
	return true
}

// answerOwnEarly gives the server's own answer (404, 405, OPTIONS *) to
// a request whose body it does not need and which is not all here (here
// bytes of it are, or it is chunked), rather than ask for the body with
// 100 Continue: at once, or, for a chunked body, once the body has ended
// (ownAnswer). The body is dropped to reach the next request, as
// net/http's server drops one its handler left unread: up to 256 KiB of
// it, within ReadTimeout of the request's start (IdleTimeout without one);
// a chunked body through its decoder, as it arrives. The connection closes
// after the answer if more is to come (a Content-Length body with more
// than 256 KiB left; a chunked body that goes on past 256 KiB, or whose
// framing is bad, found before its answer goes), or if the client waits
// for 100 Continue before it sends the body (it may never send it). It
// reports whether serve goes on.
func (hc *conn) answerOwnEarly(req *Request, n int, here int64, status int, allowed string) bool {
	hc.c.Discard(n)
	hc.need, hc.cont = 0, false
	keep := req.KeepAlive && !hc.ls.closesConns() && !req.Expect100
	if req.Chunked {
		// What has arrived is dropped now; serve drops the rest. If the
		// body has not ended, the answer waits until it does (or passes
		// what may be dropped), so that its head can say whether the
		// connection stays.
		hc.drop, hc.discard = &chunkDrop{dec: new(ChunkedDecoder)}, maxDiscard
		ended, ok := hc.dropChunks()
		keep = keep && ok
		if keep && !ended {
			a := &ownAnswer{req: Request{Major: req.Major, Minor: req.Minor}, status: status, allowed: allowed}
			if string(req.Method) == "HEAD" {
				a.req.Method = []byte("HEAD")
			}
			hc.drop.own = a
			hc.enterBodyWait()
			return true
		}
	} else {
		keep = keep && req.ContentLength-here < maxDiscard
		hc.discard = req.ContentLength
	}
	hc.enterBodyWait()
	hc.answerOwn(req, status, allowed, keep)
	if !keep {
		hc.drop, hc.discard = nil, 0
		hc.close()
		return false
	}
	return true
}

// enterBodyWait starts the wait for the rest of a body the server drops:
// within ReadTimeout of the request's start, or IdleTimeout without one.
func (hc *conn) enterBodyWait() {
	if hc.ls.s.ReadTimeout > 0 {
		hc.enter(inBody)
	} else {
		hc.enter(idle)
	}
}

// answerOwn answers req with the server's own answer: to "OPTIONS *"
// (status optionsStar), or a status with the Allow field for 405.
func (hc *conn) answerOwn(req *Request, status int, allowed string, keep bool) {
	switch status {
	case optionsStar:
		b := hc.ls.appendHead(hc.batch(), http.StatusOK, req, keep, 0)
		hc.ls.out = append(b, "Content-Length: 0\r\n\r\n"...)
	case http.StatusMethodNotAllowed:
		hc.answerStatus(req, status, keep, "Allow", allowed)
	case http.StatusTemporaryRedirect:
		hc.answerStatus(req, status, keep, "Location", allowed)
	default:
		hc.answerStatus(req, status, keep)
	}
}

// idle reports whether the connection waits for a request with nothing
// of it received.
func (hc *conn) idle() bool {
	return hc.std == nil && hc.fast == nil && !hc.holds() && hc.need == 0 && hc.c.InboundBuffered() == 0
}

// holds reports whether the connection holds an answer, a pooled
// handler's or its own, until its request's body has ended.
func (hc *conn) holds() bool {
	return hc.drop != nil && (hc.drop.held != nil || hc.drop.own != nil)
}

// switchTo hands the connection to another protocol: p serves it from
// now on, starting with the bytes already buffered.
func (hc *conn) switchTo(p Protocol) {
	if hc.released {
		return // closed under the handler (Abort, Detach): nothing to serve
	}
	ls := hc.ls
	ls.flushOut()
	ls.timeouts.remove(hc)
	delete(ls.connCtx, hc)
	hc.connState(http.StateHijacked)
	c := hc.c
	c.SetContext(p)
	eof := hc.eof
	hc.settle()
	hc.release() // hc may be recycled from here on
	sd, leaves := p.(Shutdowner)
	if leaves {
		ls.s.leaving.Add(1)
	}
	p.OnOpen(c)
	if c.InboundBuffered() > 0 && !c.Closed() {
		p.OnData(c)
	}
	if eof && !c.Closed() {
		// The client's EOF came before the switch (while a pooled
		// handler still had the connection): the protocol learns of it
		// after the bytes before it, as from OnReadEOF, once it reads
		// (a protocol busy with those bytes may have paused).
		c.ReplayEOF()
		return
	}
	if leaves && ls.shuttingDown && !c.Closed() {
		sd.OnShutdown(c)
	}
}

// decodeFast decodes more of a fast route's chunked body from the bytes
// buffered, consuming them. It reports whether the body is complete; a
// malformed or oversized body fails the request.
func (hc *conn) decodeFast() bool {
	f := hc.fast
	for !f.dec.Done() {
		in, _ := hc.c.Peek(0)
		if len(in) == 0 {
			break
		}
		data, n, err := f.dec.Decode(in)
		if err != nil && !errors.Is(err, ErrIncomplete) {
			var perr *Error
			errors.As(err, &perr)
			hc.fail(perr.Status)
			return false
		}
		if int64(len(f.body)+len(data)) > hc.ls.s.fastBodyLimit() {
			hc.fail(413)
			return false
		}
		f.body = append(f.body, data...)
		hc.c.Discard(n)
		if n == 0 {
			break
		}
	}
	return f.dec.Done()
}

// waitBody waits for the rest of a fast route's body; if the client
// already sent EOF, it will not come.
func (hc *conn) waitBody() {
	if hc.eof {
		hc.close()
		return
	}
	hc.enter(inBody)
}

// continue100 answers "Expect: 100-continue" for a body the server will
// read.
func (hc *conn) continue100(req *Request) {
	if req.Expect100 && !hc.cont {
		hc.cont = true
		hc.ls.out = append(hc.batch(), continueResponse...)
	}
}

var continueResponse = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// dropping reports whether the connection drops the rest of a body
// before the next request: a Content-Length body's discard bytes, or a
// chunked body to its end (discard is then what may still be dropped,
// which may be 0 with the end still to come).
func (hc *conn) dropping() bool { return hc.discard != 0 || hc.drop != nil }

// discardBody drops the body a pooled handler left unread, or the
// server's own answer did not need. It reports whether the next request
// may be read.
func (hc *conn) discardBody() bool {
	if hc.drop != nil {
		ended, ok := hc.dropChunks()
		if !ok {
			hc.close()
			return false
		}
		if !ended {
			return false
		}
		hc.sendOwn(hc.drop, !hc.ls.closesConns())
		hc.drop, hc.discard = nil, 0
		return true
	}
	c := hc.c
	in, _ := c.Peek(0)
	n := int64(c.Discard(int(min(hc.discard, int64(len(in))))))
	hc.discard -= n
	return hc.discard == 0
}

// dropChunks decodes and drops what has arrived of the chunked body
// being dropped. It reports whether the body has ended, and ok false if
// its framing is bad or it went on past what may still be dropped (the
// connection must close, as net/http's does).
func (hc *conn) dropChunks() (ended, ok bool) {
	c, d := hc.c, hc.drop
	in, _ := c.Peek(0)
	for len(in) > 0 && !d.dec.Done() {
		data, n, err := d.dec.Decode(in)
		if err != nil && !errors.Is(err, ErrIncomplete) {
			return false, false
		}
		c.Discard(n)
		in = in[n:]
		if hc.discard -= int64(len(data)); hc.discard < 0 {
			return false, false
		}
		if n == 0 {
			break
		}
	}
	return d.dec.Done(), true
}

// fail answers a request the server refuses with status, and closes.
func (hc *conn) fail(status int) {
	hc.fast, hc.need = nil, 0
	hc.answerStatus(nil, status, false)
	hc.close()
}

// readEOF: the client sent its last bytes. What is under way is answered,
// then the connection closes.
func (hc *conn) readEOF() {
	hc.eof = true
	if hc.std != nil {
		hc.std.clientGone()
		return
	}
	hc.serve()
}

// closed runs when the connection is gone.
func (hc *conn) closed(err error) {
	if errors.Is(err, evloop.ErrDetached) {
		hc.connState(http.StateHijacked)
	} else {
		hc.connState(http.StateClosed)
	}
	hc.settle()
	hc.ls.timeouts.remove(hc)
	delete(hc.ls.connCtx, hc)
	if hc.std != nil {
		hc.std.connClosed(err) // the worker still refers to hc
		return
	}
	hc.release()
}

// settle tells Shutdown that the request it waited for is done with.
func (hc *conn) settle() {
	if hc.awaited {
		hc.awaited = false
		hc.ls.s.finishing.Add(-1)
	}
}

// release gives hc back to its loop once nothing uses it: at once, or
// when serve, which may be what closed the connection, returns.
func (hc *conn) release() {
	if hc.serving {
		hc.released = true
		return
	}
	hc.ls.recycle(hc)
}

// connState tells Server.ConnState, if it is set, of the connection's
// new state, once: a state it is in already, or any after it closed or
// was handed on, is not told.
func (hc *conn) connState(st http.ConnState) {
	f := hc.ls.s.ConnState
	last := http.ConnState(hc.reported) - 1
	if f == nil || hc.reported != 0 && (st == last || last == http.StateClosed || last == http.StateHijacked) {
		return
	}
	hc.reported = uint8(st) + 1
	f(hc.c, st)
}

// noteIdle reports the connection idle if it waits for a request with
// nothing of one received, no body being dropped, and every answer queued
// (a pooled handler's too), none waiting for a slow client to take it.
func (hc *conn) noteIdle() {
	if hc.ls.s.ConnState != nil && hc.idle() && !hc.dropping() && hc.unsent == nil &&
		hc.phase != flushing && !hc.c.Closed() {
		hc.connState(http.StateIdle)
	}
}

// enter moves the connection to phase p and starts the timeout that goes
// with it: the connection goes to the end of its loop's list for that
// timeout, which the loop checks every tick.
func (hc *conn) enter(p phase) {
	// Small enough to inline: the requests of a pipelined burst after the
	// first are already handling.
	if p == hc.phase && p != idle || p == inHead && hc.phase == inBody {
		return
	}
	hc.switchPhase(p)
}

// switchPhase is enter's change of phase: the timeout of the new one.
func (hc *conn) switchPhase(p phase) {
	ls := hc.ls
	ls.catchUp()
	if !hc.arriving() {
		hc.began = ls.now // a request begins (with ReadTimeout's wait)
	}
	hc.phase = p
	ls.timeouts.remove(hc)
	s := ls.s
	var d time.Duration
	switch p {
	case idle:
		d = s.IdleTimeout
	case inHead:
		d = s.ReadHeaderTimeout
	case inBody:
		d = s.ReadTimeout
	}
	if d <= 0 {
		return
	}
	hc.deadline = ls.after(d)
	if p == inBody {
		// From the request's first bytes (it may have passed already, and
		// then acts at the next tick). Heads take their own time, so the
		// body's deadline may come before those of bodies already
		// waiting: it is put in order.
		hc.deadline += hc.began - ls.now
		ls.timeouts.insert(hc, p)
		return
	}
	ls.timeouts.push(hc, p)
}

// timeout runs when the connection's deadline passed: it is closed, with
// 408 if a request was arriving, unless it waits for a request or the
// rest of a head behind answers a slow client is still taking
// (flushWait). A pooled handler's body fails instead, and the connection
// closes after its answer.
func (hc *conn) timeout() {
	switch {
	case hc.c.Closed():
	case hc.std != nil:
		hc.std.readTimedOut()
	case hc.dropping():
		hc.close() // the answer went out, or goes now: no 408 after it
	case (hc.phase == idle || hc.phase == inHead || hc.phase == flushing) && hc.flushWait():
	case hc.phase == inHead || hc.phase == inBody:
		hc.fail(408)
	default:
		hc.close()
	}
}

// flushWait runs when a wait for a request or the rest of its head timed
// out: if answers are still queued (the client is slow to take them), it
// keeps the connection waiting, in phase flushing, for another stretch of
// the same timeout, and reports true; unless the client took none of them
// during a whole stretch of flushing. Once they are all written, written
// starts the wait's timeout afresh: net/http's server reads the next
// request once the answer is written, and a write without a deadline
// waits for the client as long as the client takes bytes. The answers
// are bounded by the engine's HighWater, past which reading pauses.
func (hc *conn) flushWait() bool {
	c := hc.c
	left := c.OutboundBuffered()
	if left == 0 || hc.phase == flushing && left >= hc.flushLeft {
		return false
	}
	// The stretch goes in the list of the timeout it lasts, in order there.
	list, d := idle, hc.ls.s.IdleTimeout
	if t := hc.ls.s.ReadHeaderTimeout; t > 0 && c.InboundBuffered() > 0 {
		list, d = inHead, t
	}
	hc.phase = flushing // left through switchPhase, which restarts began
	hc.flushLeft = left
	if d > 0 { // else IdleTimeout is none: no stretch ends
		hc.deadline = hc.ls.after(d)
		hc.ls.timeouts.push(hc, list)
	}
	return true
}

// written runs once answers the socket could not take at once are all
// written (evloop.WrittenHandler): a connection waiting for a request, or
// for the rest of a request a fast handler will answer, waits from now,
// as net/http's server reads the next request once its write returned.
func (hc *conn) written() {
	if hc.std != nil || hc.unsent != nil || hc.dropping() || hc.c.Closed() {
		return // a pooled request, or its answer's deadline, or a body's drop: timed as they are
	}
	p := hc.phase
	switch p {
	case idle, flushing:
		p = idle
		if hc.c.InboundBuffered() > 0 {
			p = inHead
		}
	case inHead, inBody:
	default:
		return
	}
	hc.ls.catchUp()
	hc.began = hc.ls.now
	hc.switchPhase(p)
	hc.noteIdle()
}

// maxInsertSteps bounds timeouts.insert's search.
const maxInsertSteps = 64

// timeouts keeps a loop's connections that wait for a deadline, in one
// list per timeout (idle's, inHead's and inBody's, which flushing's
// stretches share), in order of deadline: a connection costs two
// pointers, not a timer. A connection waiting for a head or for its next
// request joins at the end of its list (the same timeout, from now); one
// waiting for a body is put in order from the end (see switchPhase).
type timeouts struct {
	lists [flushing]struct{ head, tail *conn }
}

// insert puts hc in list p in order of deadline, searching from the end,
// where it mostly belongs: the later of equal deadlines goes last. The
// search stops after maxInsertSteps: past so many later deadlines (many
// heads that took longer than this one's, all done since), hc takes the
// deadline where it stopped, a little later than its own, rather than let
// clients make the loop search long lists.
func (t *timeouts) insert(hc *conn, p phase) {
	l := &t.lists[p]
	at := l.tail
	for steps := 0; at != nil && at.deadline > hc.deadline; steps++ {
		if steps == maxInsertSteps {
			hc.deadline = at.deadline
			break
		}
		at = at.prev
	}
	hc.list = p + 1
	hc.prev = at
	if at == nil {
		hc.next, l.head = l.head, hc
	} else {
		hc.next, at.next = at.next, hc
	}
	if hc.next != nil {
		hc.next.prev = hc
	} else {
		l.tail = hc
	}
}

func (t *timeouts) push(hc *conn, p phase) {
	l := &t.lists[p]
	hc.list = p + 1
	hc.prev, hc.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = hc
	} else {
		l.head = hc
	}
	l.tail = hc
}

func (t *timeouts) remove(hc *conn) {
	if hc.list == 0 {
		return
	}
	l := &t.lists[hc.list-1]
	if hc.prev != nil {
		hc.prev.next = hc.next
	} else {
		l.head = hc.next
	}
	if hc.next != nil {
		hc.next.prev = hc.prev
	} else {
		l.tail = hc.prev
	}
	hc.prev, hc.next, hc.list = nil, nil, 0
}

// expire times out the connections whose deadline is not after now.
func (t *timeouts) expire(now int64) {
	for i := range t.lists {
		l := &t.lists[i]
		for l.head != nil && l.head.deadline <= now {
			hc := l.head
			t.remove(hc)
			hc.timeout()
		}
	}
}
