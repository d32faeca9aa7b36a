package aio

import (
	"io"
	"os"
	"time"
	"weak"

	"github.com/evloop/evloop/internal/loop"
	"github.com/evloop/evloop/internal/poll"
	"github.com/evloop/evloop/internal/sock"
)

// fdesc is a delegated connection: its duplicated fd, registered on the
// loop edge-triggered for both directions, and its pending operations.
type fdesc struct {
	w       *watcher
	fd      int
	key     uintptr
	ref     weak.Pointer[byte] // the submitted conn, to tell it from a successor at its address
	readers opQueue
	writers opQueue
	closed  bool
	retry   loop.TimerID // set while writes that met ENOBUFS wait to be tried again
}

// HandleIO runs the pending operations the readiness allows. Edge-
// triggered: each direction is worked until it would block or has nothing
// left to do, and an operation submitted later tries at once.
func (d *fdesc) HandleIO(fd int, ev poll.Flags) {
	if ev&(poll.Readable|poll.Hangup|poll.Error) != 0 {
		d.run(&d.readers)
	}
	if ev&(poll.Writable|poll.Hangup|poll.Error) != 0 && !d.closed {
		d.run(&d.writers)
	}
}

func (d *fdesc) run(q *opQueue) {
	for !q.empty() && d.try(q.front()) {
		d.w.complete(q.pop())
	}
}

// try moves cb forward and reports whether it completed.
func (d *fdesc) try(cb *aiocb) bool {
	if cb.op == OpWrite {
		return d.tryWrite(cb)
	}
	return d.tryRead(cb)
}

func (d *fdesc) tryRead(cb *aiocb) bool {
	buf := cb.buf
	swap := len(buf) == 0
	if swap {
		buf = d.w.swapSpace()
	}
	for {
		n, err := sock.Read(d.fd, buf[cb.size:])
		if err == sock.ErrAgain {
			return false
		}
		switch {
		case err != nil:
			cb.err = errno(err)
		case n == 0:
			cb.err = io.EOF
		default:
			cb.size += n
		}
		if cb.err != nil || !cb.readFull || cb.size == len(buf) {
			break
		}
	}
	if swap {
		cb.buf, cb.swap = buf[:cb.size:cb.size], true
		d.w.swapOff += cb.size
	}
	return true
}

func (d *fdesc) tryWrite(cb *aiocb) bool {
	for cb.size < len(cb.buf) {
		n, err := d.w.write(d.fd, cb.buf[cb.size:])
		if err == sock.ErrAgain {
			return false
		}
		if err != nil && errno(err) == sock.ErrNoBuffers {
			// As gaio: tried again at the next write readiness, or, since
			// none may come (the send buffer has room), after a while.
			d.retryWrites()
			return false
		}
		if err != nil {
			cb.err = errno(err)
			return true
		}
		cb.size += n
	}
	return true
}

// noBuffersRetry is how long writes that met ENOBUFS wait before they are
// tried again, if no write readiness came first.
const noBuffersRetry = 10 * time.Millisecond

// retryWrites tries d's writes again after noBuffersRetry.
func (d *fdesc) retryWrites() {
	if d.retry != 0 {
		return
	}
	d.retry = d.w.l.AfterFunc(noBuffersRetry, func() {
		d.retry = 0
		d.run(&d.writers)
	})
}

// errno is err without the system call's name that sock wraps it in: the
// bare syscall.Errno, which gaio's results carry.
func errno(err error) error {
	if se, ok := err.(*os.SyscallError); ok {
		return se.Err
	}
	return err
}

// remove takes cb out of its queue wherever it is (its deadline passed).
func (d *fdesc) remove(cb *aiocb) {
	if cb.op == OpWrite {
		d.writers.remove(cb)
	} else {
		d.readers.remove(cb)
	}
}

// opQueue is a FIFO of operations that reuses its space.
type opQueue struct {
	ops  []*aiocb
	head int
}

func (q *opQueue) empty() bool   { return q.head == len(q.ops) }
func (q *opQueue) front() *aiocb { return q.ops[q.head] }

func (q *opQueue) push(cb *aiocb) {
	if q.head > 0 && len(q.ops) == cap(q.ops) {
		n := copy(q.ops, q.ops[q.head:])
		clear(q.ops[n:])
		q.ops, q.head = q.ops[:n], 0
	}
	q.ops = append(q.ops, cb)
}

func (q *opQueue) pop() *aiocb {
	cb := q.ops[q.head]
	q.ops[q.head] = nil
	q.head++
	if q.empty() {
		q.reset()
	}
	return cb
}

// burstRoom is the room a queue keeps once emptied, past which it lets a
// burst's memory go, as the loop's task queue does.
const burstRoom = 1 << 16

// reset empties q, and lets go of a burst's memory.
func (q *opQueue) reset() {
	q.ops, q.head = q.ops[:0], 0
	if cap(q.ops) > burstRoom {
		q.ops = nil
	}
}

func (q *opQueue) remove(cb *aiocb) {
	if !q.empty() && q.front() == cb { // as operations sharing a deadline go
		q.pop()
		return
	}
	for i := q.head; i < len(q.ops); i++ {
		if q.ops[i] == cb {
			copy(q.ops[i:], q.ops[i+1:])
			q.ops[len(q.ops)-1] = nil
			q.ops = q.ops[:len(q.ops)-1]
			if q.empty() {
				q.reset()
			}
			return
		}
	}
}
