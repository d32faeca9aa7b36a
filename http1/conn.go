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

// maxDiscard is how many unread body bytes a connection reads and drops
// after a handler returned, to reach the next request; a longer rest
// closes the connection (as net/http's server does).
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

	// discard counts body bytes still to drop after a pooled handler
	// returned without reading its body; discardChunked decodes them.
	discard        int64
	discardChunked *ChunkedDecoder

	deadline int32 // loop seconds; 0: none
	timerAt  int32 // when the timer fires; 0: not armed
	timer    evloop.Timer
	phase    phase
	cont     bool // "100 Continue" sent for the current request
	eof      bool // the client sent EOF
	remote   string
}

// A connection's phase decides which timeout applies.
type phase uint8

const (
	idle     phase = iota // waiting for a request: IdleTimeout
	inHead                // a head is arriving: ReadHeaderTimeout
	inBody                // a body is arriving: ReadTimeout
	handling              // a handler has the request: no timeout
)

// fastBody collects a chunked body for a fast route.
type fastBody struct {
	dec  ChunkedDecoder
	raw  int // bytes of the request decoded so far, head included
	body []byte
}

// serve handles what the connection has buffered: heads are parsed and
// answered in order, until the bytes run out or a pooled handler takes a
// request (it continues when that handler is done).
func (hc *conn) serve() {
	c := hc.c
	for !c.Closed() {
		if hc.std != nil {
			hc.std.feed()
			return
		}
		if hc.discard != 0 && !hc.discardBody() {
			return
		}
		in, _ := c.Peek(0)
		if len(in) == 0 {
			if hc.eof {
				c.Close()
				return
			}
			hc.enter(idle)
			return
		}
		if hc.need > len(in) {
			hc.waitBody()
			return
		}
		if hc.fast != nil && !hc.decodeFast(in) {
			if !c.Closed() {
				hc.waitBody()
			}
			return
		}
		ls := hc.ls
		req := &ls.req
		n, err := hc.p.Parse(in, req)
		if errors.Is(err, ErrIncomplete) {
			if hc.eof {
				c.Close()
				return
			}
			hc.enter(inHead)
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
	}
}

// dispatch hands the request parsed from in (head of n bytes) to its
// handler. It reports whether serve goes on with the next request.
func (hc *conn) dispatch(req *Request, in []byte, n int) bool {
	s := hc.ls.s
	c := hc.c
	rt, status, allowed := s.routes.match(req)
	if rt.std == nil && rt.fast == nil && status == 0 {
		if s.Handler == nil {
			status = 404
		} else {
			rt.std = s.Handler
		}
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
	// Answered on the loop: the body must be here whole.
	total := n
	var body []byte
	switch {
	case req.Chunked:
		if hc.fast == nil {
			hc.fast = &fastBody{raw: n}
			hc.continue100(req)
			if !hc.decodeFast(in) {
				if !c.Closed() {
					hc.waitBody()
				}
				return false
			}
		}
		total, body = hc.fast.raw, hc.fast.body
		hc.fast = nil
	case req.ContentLength > 0:
		if req.ContentLength > s.fastBodyLimit() {
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
	keep := req.KeepAlive && !hc.eof && !hc.ls.shuttingDown
	switch status {
	case 0:
		keep = hc.runFast(rt.fast, req, keep)
	case http.StatusMethodNotAllowed:
		hc.answerStatus(req, status, keep, "Allow", allowed)
	default:
		hc.answerStatus(req, status, keep)
	}
	req.Body = nil
	c.Discard(total)
	if p := hc.ls.resp.proto; p != nil && status == 0 {
		hc.ls.resp.proto = nil
		hc.switchTo(p)
		return false
	}
	if !keep {
		c.Close()
		return false
	}
	return true
}

// idle reports whether the connection waits for a request with nothing
// of it received.
func (hc *conn) idle() bool {
	return hc.std == nil && hc.fast == nil && hc.need == 0 && hc.c.InboundBuffered() == 0
}

// switchTo hands the connection to another protocol: p serves it from
// now on, starting with the bytes already buffered.
func (hc *conn) switchTo(p Protocol) {
	hc.timer.Stop()
	hc.deadline = 0
	c := hc.c
	c.SetContext(p)
	if c.InboundBuffered() > 0 {
		p.OnData(c)
	}
}

// decodeFast decodes more of a fast route's chunked body from in (the
// request from its head on). It reports whether the body is complete; a
// malformed or oversized body fails the request.
func (hc *conn) decodeFast(in []byte) bool {
	f := hc.fast
	for f.raw < len(in) && !f.dec.Done() {
		data, n, err := f.dec.Decode(in[f.raw:])
		f.raw += n
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
		hc.c.Close()
		return
	}
	hc.enter(inBody)
}

// continue100 answers "Expect: 100-continue" for a body the server will
// read.
func (hc *conn) continue100(req *Request) {
	if req.Expect100 && !hc.cont {
		hc.cont = true
		hc.c.Write(continueResponse)
	}
}

var continueResponse = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// discardBody drops the body a pooled handler left unread. It reports
// whether the next request may be read.
func (hc *conn) discardBody() bool {
	c := hc.c
	in, _ := c.Peek(0)
	if hc.discardChunked != nil {
		for len(in) > 0 && !hc.discardChunked.Done() {
			data, n, err := hc.discardChunked.Decode(in)
			if err != nil && !errors.Is(err, ErrIncomplete) {
				c.Close()
				return false
			}
			c.Discard(n)
			in = in[n:]
			hc.discard -= int64(len(data))
			if hc.discard < 0 {
				c.Close() // too much left: net/http closes too
				return false
			}
			if n == 0 {
				break
			}
		}
		if !hc.discardChunked.Done() {
			return false
		}
		hc.discardChunked, hc.discard = nil, 0
		return true
	}
	n := int64(c.Discard(int(min(hc.discard, int64(len(in))))))
	hc.discard -= n
	return hc.discard == 0
}

// fail answers a request the server refuses with status, and closes.
func (hc *conn) fail(status int) {
	hc.fast, hc.need = nil, 0
	hc.answerStatus(nil, status, false)
	hc.c.Close()
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
	hc.timer.Stop()
	if hc.std != nil {
		hc.std.connClosed(err)
	}
}

// enter moves the connection to phase p and sets the timeout that goes
// with it. Timers are checked lazily: a later deadline only moves a
// number, an earlier one resets the timer.
func (hc *conn) enter(p phase) {
	if p == hc.phase && p != idle {
		return
	}
	if p == inHead && hc.phase == inBody {
		return
	}
	hc.phase = p
	s := hc.ls.s
	switch p {
	case idle:
		hc.setDeadline(s.IdleTimeout)
	case inHead:
		hc.setDeadline(s.ReadHeaderTimeout)
	case inBody:
		if s.ReadTimeout > 0 {
			hc.setDeadline(s.ReadTimeout) // from the head's start would be exact; a body's start is close
		} else {
			hc.deadline = 0
		}
	case handling:
		hc.deadline = 0
	}
}

// setDeadline sets the connection's deadline d from now (none if d <= 0).
func (hc *conn) setDeadline(d time.Duration) {
	if d <= 0 {
		hc.deadline = 0
		return
	}
	secs := int32((d + time.Second - 1) / time.Second)
	hc.deadline = hc.ls.now + secs
	if hc.timerAt == 0 || hc.deadline < hc.timerAt {
		hc.arm(hc.deadline - hc.ls.now)
	}
}

// arm sets the timer to fire in secs seconds (plus the part of the current
// second that has passed is not known: up to a second late).
func (hc *conn) arm(secs int32) {
	hc.timerAt = hc.ls.now + secs
	d := time.Duration(secs) * time.Second
	if !hc.timer.Reset(d) {
		hc.timer = hc.c.AfterFunc(d, hc.timeout)
	}
}

// timeout runs when the timer fires: if the deadline has passed, the
// connection is closed (with 408 if a request was arriving); if it moved,
// the timer is set again.
func (hc *conn) timeout() {
	hc.timerAt = 0
	if hc.c.Closed() || hc.deadline == 0 {
		return
	}
	ls := hc.ls
	ls.now = int32(time.Since(ls.start) / time.Second)
	if left := hc.deadline - ls.now; left > 0 {
		hc.arm(left)
		return
	}
	switch hc.phase {
	case inHead, inBody:
		hc.fail(408)
	default:
		hc.c.Close()
	}
}
