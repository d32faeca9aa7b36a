package http1

import (
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// A pooled handler's read and write deadlines — set with
// http.NewResponseController(w).SetReadDeadline and SetWriteDeadline, or
// by Server.WriteTimeout — are kept as net/http's server keeps a
// connection's: past the read deadline, reading the rest of the body
// fails; past the write deadline, writing the answer fails and the
// connection is reset. A zero time clears one. As a net.Conn's, a deadline
// fails only the reads and writes under way or begun when it has passed:
// one that passes while the handler neither reads nor writes (nor has
// bytes waiting on the client) may be replaced by a later one; once a read
// or write failed on it, it stays passed.
//
// The handler's goroutine checks them itself when it reads or writes, so
// that a deadline already passed fails the call at once, and a read or
// write that waits for the client wakes at the deadline (a runtime timer
// while it waits). The loop acts on them too, for the bytes of an answer
// it holds for a client that does not read (also once the handler
// returned, until they are written: stdRequest.sent), and to stop reading
// a body whose Read failed: a request with a deadline is in its loop's
// list of deadlines, in deadline order, checked every tick (tickEvery)
// with the server's timeouts.

// SetReadDeadline sets the deadline for reading the request's body: a
// Read past it (or blocked when it passes) fails with an error that is a
// net.Error whose Timeout is true, and os.ErrDeadlineExceeded; the
// connection then closes after the answer. It replaces Server.ReadTimeout
// for the request, so it may extend past it. A zero time clears it. It is
// what http.ResponseController's SetReadDeadline calls.
func (w *responseWriter) SetReadDeadline(t time.Time) error {
	if w.hijacked {
		return http.ErrHijacked
	}
	sr := w.sr
	if sr.body != nil {
		sr.body.setDeadline(t)
	}
	sr.c.Submit(func() { sr.setReadDeadline(t) })
	return nil
}

// SetWriteDeadline sets the deadline for writing the answer: a write or
// flush past it (or blocked when it passes) fails with an error that is a
// net.Error whose Timeout is true, and os.ErrDeadlineExceeded, and the
// connection is reset once the handler returns. A zero time clears it. It
// is what http.ResponseController's SetWriteDeadline calls.
func (w *responseWriter) SetWriteDeadline(t time.Time) error {
	if w.hijacked {
		return http.ErrHijacked
	}
	w.mu.Lock()
	if !w.timedOut {
		w.deadline = t
		w.cond.Broadcast() // a write waiting goes on to the new deadline
	}
	w.mu.Unlock()
	sr := w.sr
	sr.c.Submit(func() { sr.setWriteDeadline(t) })
	return nil
}

// timeoutError is what a read or write past its deadline returns: the
// error net's conns return, *net.OpError with os.ErrDeadlineExceeded.
func (sr *stdRequest) timeoutError(op string) error {
	return &net.OpError{Op: op, Net: "tcp", Source: sr.local, Addr: sr.remote, Err: os.ErrDeadlineExceeded}
}

// setReadDeadline takes the handler's read deadline over to the loop. The
// server's ReadTimeout no longer applies to the request.
func (sr *stdRequest) setReadDeadline(t time.Time) {
	if sr.hc.std != sr || sr.gone {
		return
	}
	if sr.hc.list == inBody+1 {
		sr.hc.ls.timeouts.remove(sr.hc)
	}
	sr.readAt = sr.hc.ls.ticks(t)
	sr.schedule()
}

// setWriteDeadline takes the handler's write deadline over to the loop.
func (sr *stdRequest) setWriteDeadline(t time.Time) {
	if sr.hc.std != sr || sr.gone {
		return
	}
	sr.writeAt = sr.hc.ls.ticks(t)
	sr.schedule()
}

// ticks converts t to the loop's clock: the first tick at or after t, 0
// for the zero time.
func (ls *loopState) ticks(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(ceilTicks(t.Sub(ls.start)), 1)
}

// ceilTicks is d in ticks, rounded up; it does not overflow.
func ceilTicks(d time.Duration) int64 {
	n := d / tickEvery
	if d%tickEvery > 0 {
		n++
	}
	return int64(n)
}

// after returns the loop's tick at which a wait of d that starts now has
// passed. ls.now is the last tick's, or catchUp's, up to a tick behind the
// time: one more makes the wait at least d, and less than d and two ticks.
func (ls *loopState) after(d time.Duration) int64 {
	return ls.now + ceilTicks(d) + 1
}

// catchUp brings the loop's clock up to the time, for a wait that starts
// now: the loop handles the events of an iteration before its timers, and
// while a tick is overdue (the loop was busy, or its goroutine did not
// run) ls.now lags the time by more than a tick, by which a wait timed
// from it would end early. The waits it makes due act at the next tick.
// It reads the clock once an iteration (caught is cleared as the
// iteration ends), not at every change of phase, which is every request:
// within an iteration ls.now lags by that iteration's work at most.
func (ls *loopState) catchUp() {
	if ls.caught {
		return
	}
	ls.caught = true
	ls.now = max(ls.now, int64(time.Since(ls.start)/tickEvery))
}

// schedule puts the request in its loop's deadline list at its earliest
// deadline, or takes it out if it has none; one already passed acts at
// once.
func (sr *stdRequest) schedule() {
	ls := sr.hc.ls
	ls.deadlines.remove(sr)
	switch {
	case sr.readAt == 0 && sr.writeAt == 0:
	case sr.readAt != 0 && sr.readAt <= ls.now, sr.writeAt != 0 && sr.writeAt <= ls.now:
		sr.deadlinePassed(ls.now)
	default:
		ls.deadlines.add(sr)
	}
}

// deadlinePassed fails what is under way past its deadline: a body Read
// waiting for the client, or answer bytes the client has not taken. What
// is not under way is failed by the handler's own check when it reads or
// writes next, unless it set a later deadline meanwhile.
func (sr *stdRequest) deadlinePassed(now int64) {
	if sr.sending {
		// The handler returned, and the write deadline passed with some of
		// its answer unwritten: as net/http's server's write of it fails,
		// no more of it goes out (sent runs as the queue is dropped).
		sr.c.Abort()
		return
	}
	if sr.readAt != 0 && sr.readAt <= now {
		sr.readAt = 0
		sr.readExpired()
	}
	if sr.writeAt != 0 && sr.writeAt <= now {
		sr.writeAt = 0
		sr.w.expire(sr.timeoutError("write"))
	}
	sr.schedule()
}

// readExpired: the body's read deadline (or Server.ReadTimeout) passed.
// A Read waiting for the client fails, and the rest of the body is not
// read; otherwise nothing fails yet.
func (sr *stdRequest) readExpired() {
	if sr.bodyDone {
		return
	}
	if err := sr.timeoutError("read"); sr.body.expire(err) {
		sr.finishBody(err)
	}
}

// expire fails a Read waiting when the deadline passed, and reports
// whether one was (on the loop).
func (p *bodyPipe) expire(err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.waiting {
		return false
	}
	p.timeoutLocked(err)
	return true
}

// deadlinePast reports whether the body's read deadline has passed.
func (p *bodyPipe) deadlinePast() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.timedOut || !p.deadline.IsZero() && !time.Now().Before(p.deadline)
}

// expire fails the answer's writes when its deadline passed with some of
// it waiting on the client (on the loop): as a write blocked in the
// kernel fails. With nothing waiting, nothing fails yet.
func (w *responseWriter) expire(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inflight > 0 {
		w.timeoutLocked(err)
	}
}

// setDeadline sets the body's read deadline for the handler's own check.
// One a Read failed on stays passed.
func (p *bodyPipe) setDeadline(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.timedOut {
		p.deadline = t
		p.cond.Broadcast() // a Read waiting goes on to the new deadline
	}
}

// alarm wakes a wait on a sync.Cond at a deadline: one runtime timer for
// all the waits of one Read or write, set again only when the deadline
// changes.
type alarm struct {
	t  *time.Timer
	at time.Time
}

// wait waits on c, whose lock is held, until it is signalled or, if
// deadline is not zero, until deadline passes.
func (a *alarm) wait(c *sync.Cond, deadline time.Time) {
	switch {
	case deadline.IsZero():
		a.stop()
	case a.t == nil:
		a.t = time.AfterFunc(time.Until(deadline), func() {
			c.L.Lock()
			c.Broadcast()
			c.L.Unlock()
		})
	case !deadline.Equal(a.at):
		a.t.Reset(time.Until(deadline))
	}
	a.at = deadline
	c.Wait()
}

// stop cancels the alarm, if it was set.
func (a *alarm) stop() {
	if a.t != nil {
		a.t.Stop()
	}
}

// timeoutLocked fails the reads of a body not all received, now and
// later. Lock held.
func (p *bodyPipe) timeoutLocked(err error) {
	if p.err == nil {
		p.err = err
		p.timedOut = true
		p.cond.Broadcast()
	}
}

// checkDeadline times the body out if its deadline passed. Lock held.
func (p *bodyPipe) checkDeadline() {
	if !p.deadline.IsZero() && !time.Now().Before(p.deadline) {
		p.timeoutLocked(p.sr.timeoutError("read"))
	}
}

// timeoutLocked fails the answer's writes, now and later. Lock held.
func (w *responseWriter) timeoutLocked(err error) {
	if !w.timedOut {
		w.timedOut = true
		if w.err == nil {
			w.err = err
		}
		w.cond.Broadcast()
	}
}

// checkDeadline times the answer out if its deadline passed. Lock held.
func (w *responseWriter) checkDeadline() {
	if !w.deadline.IsZero() && !w.timedOut && !time.Now().Before(w.deadline) {
		w.timeoutLocked(w.sr.timeoutError("write"))
	}
}

// deadlines keeps a loop's pooled requests that have a deadline, in order
// of their earliest, for the loop's tick.
type deadlines struct {
	head, tail *stdRequest
}

// add puts sr in place, searching from the end: deadlines set later tend
// to be later.
func (d *deadlines) add(sr *stdRequest) {
	sr.at = sr.readAt
	if sr.at == 0 || (sr.writeAt != 0 && sr.writeAt < sr.at) {
		sr.at = sr.writeAt
	}
	after := d.tail
	for after != nil && after.at > sr.at {
		after = after.prevDL
	}
	sr.prevDL = after
	if after != nil {
		sr.nextDL = after.nextDL
		after.nextDL = sr
	} else {
		sr.nextDL = d.head
		d.head = sr
	}
	if sr.nextDL != nil {
		sr.nextDL.prevDL = sr
	} else {
		d.tail = sr
	}
	sr.listed = true
}

func (d *deadlines) remove(sr *stdRequest) {
	if !sr.listed {
		return
	}
	if sr.prevDL != nil {
		sr.prevDL.nextDL = sr.nextDL
	} else {
		d.head = sr.nextDL
	}
	if sr.nextDL != nil {
		sr.nextDL.prevDL = sr.prevDL
	} else {
		d.tail = sr.prevDL
	}
	sr.prevDL, sr.nextDL, sr.listed = nil, nil, false
}

// expire acts on the deadlines that are not after now.
func (d *deadlines) expire(now int64) {
	for d.head != nil && d.head.at <= now {
		sr := d.head
		d.remove(sr)
		sr.deadlinePassed(now)
	}
}
