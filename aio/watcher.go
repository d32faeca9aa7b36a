package aio

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"reflect"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
	"weak"

	"github.com/evloop/evloop/internal/loop"
	"github.com/evloop/evloop/internal/poll"
	"github.com/evloop/evloop/internal/sock"
	"github.com/evloop/evloop/internal/timer"
)

// defaultBufferSize is the size of a swap buffer for NewWatcher.
const defaultBufferSize = 64 << 10

// Watcher runs asynchronous reads and writes on the connections submitted
// to it, on an event loop of its own, and hands their completions to
// WaitIO. WaitIO is for one goroutine at a time; the other methods may be
// called from any goroutine, at once.
type Watcher struct {
	// The loop holds the watcher, never the Watcher: a Watcher the
	// application dropped can be found unreachable and closed.
	*watcher
}

type watcher struct {
	l *loop.Loop

	// Submissions, from any goroutine: appended under smu, taken by the
	// loop in one task bound once, so that submitting allocates nothing.
	smu     sync.Mutex
	pending []*aiocb
	taking  []*aiocb
	takeFn  func()

	// The loop's own.
	descs     map[uintptr]*fdesc // by the address of the submitted conn
	deadlines timer.Queue[*aiocb]
	dtimer    loop.TimerID // fires at the earliest deadline
	dtimerAt  int64
	expireFn  func()
	done      []OpResult // completed in this iteration
	doneBufs  [][]byte   // swap buffers the loop moved past since the last publish
	swap      []byte     // the swap buffer being filled, from swapOff
	swapOff   int
	bufSize   int
	epoch     time.Time                           // the zero of the loop's clock, or just before it
	write     func(fd int, p []byte) (int, error) // sock.Write; tests make it fail

	// Completions handed to WaitIO, and the swap buffers they point into.
	rmu       sync.Mutex
	ready     []OpResult
	readyBufs [][]byte
	held      [][]byte // pointed into by the results WaitIO returned last
	free      [][]byte // swap buffers no result points into
	notify    chan struct{}

	// Conns the garbage collector found unreachable.
	gcmu     sync.Mutex
	gcList   []*fdesc
	gcFound  uint32
	gcClosed uint32
	gcFn     func()

	closed    atomic.Bool
	die       chan struct{}
	closeOnce sync.Once
}

// aiocb is one submitted operation.
type aiocb struct {
	op       OpType
	ctx      any
	conn     net.Conn
	ptr      unsafe.Pointer // conn's address: its identity
	buf      []byte
	size     int
	err      error
	readFull bool
	swap     bool // buf is in the swap buffer
	deadline time.Time
	tid      timer.ID // in deadlines; 0 if not
	desc     *fdesc
}

var cbPool = sync.Pool{New: func() any { return new(aiocb) }}

// NewWatcher starts a Watcher whose swap buffers are 64 KiB.
func NewWatcher() (*Watcher, error) { return NewWatcherSize(defaultBufferSize) }

// NewWatcherSize starts a Watcher whose swap buffers, for reads submitted
// without a buffer, are bufsize bytes, and 16 at least. The first is
// allocated here, as gaio allocates its own: a size the runtime cannot
// allocate panics in the caller, not on the loop.
func NewWatcherSize(bufsize int) (*Watcher, error) {
	bufsize = max(bufsize, 16)
	w := &watcher{
		descs:   make(map[uintptr]*fdesc),
		swap:    make([]byte, bufsize),
		bufSize: bufsize,
		notify:  make(chan struct{}, 1),
		die:     make(chan struct{}),
		write:   sock.Write,
	}
	w.takeFn, w.expireFn, w.gcFn = w.take, w.expire, w.collect
	l, err := loop.New(loop.Options{EndOfIteration: w.publish, Logger: slog.Default()})
	if err != nil {
		return nil, err
	}
	w.l = l
	// Read before the loop's clock: a deadline is never early on it.
	t0 := time.Now()
	w.epoch = t0.Add(-l.Now())
	if err := l.Start(); err != nil {
		l.Close()
		return nil, err
	}
	wrapper := &Watcher{w}
	runtime.AddCleanup(wrapper, func(w *watcher) { go w.Close() }, w)
	return wrapper, nil
}

// Close stops the Watcher and closes every connection delegated to it;
// their pending operations are dropped. Close may be called more than once.
func (w *watcher) Close() error {
	w.closeOnce.Do(func() {
		w.closed.Store(true)
		close(w.die)
		w.l.Submit(w.shutdown)
		w.l.Stop()
	})
	return nil
}

// shutdown closes every connection. It runs on the loop.
func (w *watcher) shutdown() {
	for _, d := range w.descs {
		w.release(d, nil)
	}
}

// WaitIO blocks until operations have completed and returns their results.
// The swap-buffer bytes of the results it returned before may be reused
// from this call on. After Close it returns ErrWatcherClosed.
func (w *watcher) WaitIO() ([]OpResult, error) {
	w.rmu.Lock()
	// Spare buffers for as many as the last results pointed into, and two:
	// the buffers a burst took go back to the garbage collector.
	n := len(w.held)
	w.free = append(w.free, w.held...)
	clear(w.held)
	w.held = w.held[:0]
	if len(w.free) > n+2 {
		clear(w.free[n+2:])
		w.free = w.free[:n+2]
	}
	w.rmu.Unlock()
	for {
		w.rmu.Lock()
		if w.closed.Load() {
			w.rmu.Unlock()
			return nil, ErrWatcherClosed
		}
		if len(w.ready) > 0 {
			r := w.ready
			w.ready = nil
			w.held, w.readyBufs = w.readyBufs, w.held
			w.rmu.Unlock()
			return r, nil
		}
		w.rmu.Unlock()
		select {
		case <-w.notify:
		case <-w.die:
		}
	}
}

// Read submits a read into buf, or, if buf is nil, into the swap buffer.
// It completes once some bytes arrived.
func (w *watcher) Read(ctx any, conn net.Conn, buf []byte) error {
	return w.submit(ctx, OpRead, conn, buf, time.Time{}, false)
}

// ReadTimeout is Read with a deadline.
func (w *watcher) ReadTimeout(ctx any, conn net.Conn, buf []byte, deadline time.Time) error {
	return w.submit(ctx, OpRead, conn, buf, deadline, false)
}

// ReadFull submits a read that completes once buf is full, or with the
// error that stopped it, or with ErrDeadline once deadline passes (a zero
// deadline is none). buf must not be empty.
func (w *watcher) ReadFull(ctx any, conn net.Conn, buf []byte, deadline time.Time) error {
	if len(buf) == 0 {
		return ErrEmptyBuffer
	}
	return w.submit(ctx, OpRead, conn, buf, deadline, true)
}

// Write submits a write of all of buf. buf must not be modified until the
// write completes.
func (w *watcher) Write(ctx any, conn net.Conn, buf []byte) error {
	if len(buf) == 0 {
		return ErrEmptyBuffer
	}
	return w.submit(ctx, OpWrite, conn, buf, time.Time{}, false)
}

// WriteTimeout is Write with a deadline.
func (w *watcher) WriteTimeout(ctx any, conn net.Conn, buf []byte, deadline time.Time) error {
	if len(buf) == 0 {
		return ErrEmptyBuffer
	}
	return w.submit(ctx, OpWrite, conn, buf, deadline, false)
}

// Free closes conn at once, after the operations submitted before it were
// started; those still pending complete with io.ErrClosedPipe.
func (w *watcher) Free(conn net.Conn) error {
	return w.submit(nil, opDelete, conn, nil, time.Time{}, false)
}

// GetGC returns how many forgotten connections the garbage collector found,
// and how many of those the Watcher has closed.
func (w *watcher) GetGC() (found uint32, closed uint32) {
	w.gcmu.Lock()
	defer w.gcmu.Unlock()
	return w.gcFound, w.gcClosed
}

// SetPollerAffinity pins the thread that polls to CPU cpuid. Polling and
// the I/O run on one loop here, so it is SetLoopAffinity, but for its
// answer once the Watcher is closed: ErrPollerClosed, as gaio's poller
// gives, where SetLoopAffinity gives gaio's ErrConnClosed.
func (w *watcher) SetPollerAffinity(cpuid int) error { return w.pin(cpuid, ErrPollerClosed) }

// SetLoopAffinity locks the Watcher's loop to an OS thread and pins that
// thread to CPU cpuid (Linux; elsewhere only the locking). cpuid counts
// the CPUs the process may run on, modulo their number: under taskset or a
// container's cpuset, 0 is the first of those, where gaio would ask for
// CPU 0 itself and be refused.
func (w *watcher) SetLoopAffinity(cpuid int) error { return w.pin(cpuid, ErrConnClosed) }

// pin pins the loop's thread to cpuid, or returns closedErr if the loop
// has stopped.
func (w *watcher) pin(cpuid int, closedErr error) error {
	if cpuid < 0 || cpuid >= runtime.NumCPU() {
		return ErrCPUID
	}
	errc := make(chan error, 1)
	if w.l.Submit(func() { errc <- w.l.Pin(cpuid) }) != nil {
		return closedErr
	}
	if err := <-errc; err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

func (w *watcher) submit(ctx any, op OpType, conn net.Conn, buf []byte, deadline time.Time, readFull bool) error {
	if w.closed.Load() {
		return ErrWatcherClosed
	}
	if conn == nil {
		return ErrUnsupported
	}
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return ErrUnsupported
	}
	cb := cbPool.Get().(*aiocb)
	*cb = aiocb{op: op, ctx: ctx, conn: conn, ptr: v.UnsafePointer(), buf: buf, deadline: deadline, readFull: readFull}
	w.smu.Lock()
	first := len(w.pending) == 0
	w.pending = append(w.pending, cb)
	w.smu.Unlock()
	if first && w.l.Submit(w.takeFn) != nil {
		return ErrWatcherClosed
	}
	return nil
}

// take starts the submitted operations, in order. It runs on the loop.
func (w *watcher) take() {
	w.smu.Lock()
	w.pending, w.taking = w.taking[:0], w.pending
	w.smu.Unlock()
	for i, cb := range w.taking {
		w.taking[i] = nil
		if w.closed.Load() {
			recycle(cb)
			continue
		}
		w.startGuarded(cb)
	}
	if cap(w.taking) > burstRoom {
		w.taking = nil // a burst is over: do not keep its memory
	}
}

// startGuarded is start, where a panic in the conn's own methods (its
// SyscallConn or Close: the application's code, for a type of its own) is
// logged, as the loop logs one, and fails cb alone, rather than leave the
// rest of the batch unstarted, never to complete.
func (w *watcher) startGuarded(cb *aiocb) {
	defer func() {
		if v := recover(); v != nil {
			slog.Default().Error("evloop: panic recovered on the event loop", "in", "aio operation",
				"panic", v, "stack", string(debug.Stack()))
			if cb.op == opDelete {
				recycle(cb)
				return
			}
			cb.err = fmt.Errorf("aio: %T panicked: %v", cb.conn, v)
			w.complete(cb)
		}
	}()
	w.start(cb)
}

func (w *watcher) start(cb *aiocb) {
	key := uintptr(cb.ptr)
	d := w.descs[key]
	if d != nil && d.ref.Value() != (*byte)(cb.ptr) {
		// The conn registered at this address was collected, and this is
		// another one allocated in its place before its cleanup came.
		w.release(d, io.ErrClosedPipe)
		d = nil
	}
	if cb.op == opDelete {
		if d != nil {
			w.release(d, io.ErrClosedPipe)
		} else {
			cb.conn.Close() // never submitted: closing it is all Free can do
		}
		recycle(cb)
		return
	}
	if d == nil {
		var err error
		if d, err = w.adopt(cb.conn, cb.ptr); err != nil {
			cb.err = errno(err)
			w.complete(cb)
			return
		}
	}
	cb.desc = d
	q := &d.readers
	if cb.op == OpWrite {
		q = &d.writers
	}
	if q.empty() && d.try(cb) {
		w.complete(cb)
		return
	}
	q.push(cb)
	if !cb.deadline.IsZero() {
		cb.tid = w.deadlines.Add(w.when(cb.deadline), cb)
		w.armDeadline()
	}
}

// adopt takes conn over: the loop registers a duplicate of its fd, and the
// conn itself is closed. It runs on the loop.
func (w *watcher) adopt(conn net.Conn, ptr unsafe.Pointer) (*fdesc, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil, ErrUnsupported
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, ErrUnsupported // as gaio's dupconn, not ErrNoRawConn
	}
	fd, err := sock.DupRaw(rc, func(fd int) error {
		if !sock.IsStream(fd) {
			return ErrUnsupported
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	d := &fdesc{w: w, fd: fd, key: uintptr(ptr), ref: weak.Make((*byte)(ptr))}
	if err := w.l.Register(fd, poll.Read|poll.Write|poll.Edge, d); err != nil {
		sock.Close(fd)
		return nil, err
	}
	w.descs[d.key] = d
	runtime.AddCleanup((*byte)(ptr), w.collected, d)
	conn.Close() // last: if it panics, d is kept as any other
	return d, nil
}

// release closes d's fd; its pending operations complete with err, or are
// dropped if err is nil. It runs on the loop.
func (w *watcher) release(d *fdesc, err error) {
	if d.closed {
		return
	}
	d.closed = true
	if d.retry != 0 {
		w.l.CancelTimer(d.retry)
		d.retry = 0
	}
	for _, q := range []*opQueue{&d.readers, &d.writers} {
		for !q.empty() {
			cb := q.pop()
			if err == nil {
				w.dropDeadline(cb)
				recycle(cb)
				continue
			}
			cb.err = err
			w.complete(cb)
		}
	}
	w.l.Unregister(d.fd)
	sock.Close(d.fd)
	if w.descs[d.key] == d {
		delete(w.descs, d.key)
	}
}

// collected runs when the garbage collector found a delegated conn
// unreachable; it hands d to the loop to close.
func (w *watcher) collected(d *fdesc) {
	w.gcmu.Lock()
	w.gcList = append(w.gcList, d)
	w.gcFound++
	first := len(w.gcList) == 1
	w.gcmu.Unlock()
	if first {
		w.l.Submit(w.gcFn) // a closed Watcher has closed every fd already
	}
}

// collect closes the conns found unreachable. It runs on the loop.
func (w *watcher) collect() {
	w.gcmu.Lock()
	list := w.gcList
	w.gcList = nil
	w.gcmu.Unlock()
	for _, d := range list {
		w.release(d, io.ErrClosedPipe)
	}
	w.gcmu.Lock()
	w.gcClosed += uint32(len(list))
	w.gcmu.Unlock()
}

// complete records cb's result and recycles it. It runs on the loop.
func (w *watcher) complete(cb *aiocb) {
	w.dropDeadline(cb)
	w.done = append(w.done, OpResult{
		Operation:    cb.op,
		Context:      cb.ctx,
		Conn:         cb.conn,
		Buffer:       cb.buf,
		IsSwapBuffer: cb.swap,
		Size:         cb.size,
		Error:        cb.err,
	})
	recycle(cb)
}

func recycle(cb *aiocb) {
	*cb = aiocb{}
	cbPool.Put(cb)
}

// publish hands the iteration's completions to WaitIO. It runs on the loop
// at the end of every iteration.
func (w *watcher) publish() {
	if len(w.done) == 0 && len(w.doneBufs) == 0 {
		return
	}
	w.rmu.Lock()
	if w.ready == nil {
		w.ready = w.done
		// Room for a batch like this one, not for the largest there was:
		// a burst's room would be allocated again at every iteration.
		w.done = make([]OpResult, 0, len(w.ready))
	} else {
		w.ready = append(w.ready, w.done...)
		clear(w.done)
		w.done = w.done[:0]
	}
	w.readyBufs = append(w.readyBufs, w.doneBufs...)
	w.rmu.Unlock()
	clear(w.doneBufs)
	w.doneBufs = w.doneBufs[:0]
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// swapSpace returns where a read without a buffer goes: the free end of
// the swap buffer, or a fresh buffer once that end is small. It runs on
// the loop.
func (w *watcher) swapSpace() []byte {
	if w.swap == nil || len(w.swap)-w.swapOff < min(512, w.bufSize) {
		if w.swap != nil {
			w.doneBufs = append(w.doneBufs, w.swap)
		}
		w.swap, w.swapOff = w.takeBuffer(), 0
	}
	return w.swap[w.swapOff:]
}

func (w *watcher) takeBuffer() []byte {
	w.rmu.Lock()
	defer w.rmu.Unlock()
	if n := len(w.free); n > 0 {
		b := w.free[n-1]
		w.free[n-1] = nil
		w.free = w.free[:n-1]
		return b
	}
	return make([]byte, w.bufSize)
}

// when is deadline on the loop's clock, now for one already passed, and
// saturated rather than wrapped for one centuries ahead. The clock is read
// once: a deadline with a monotonic reading is then always the same
// instant, so that operations sharing it expire in the order they were
// submitted, and one without is taken from the wall clock now, as
// time.Until takes it.
func (w *watcher) when(deadline time.Time) int64 {
	t := time.Now()
	now, left := int64(t.Sub(w.epoch)), int64(deadline.Sub(t))
	switch {
	case left <= 0:
		return int64(w.l.Now()) // due now
	case left > math.MaxInt64-now:
		return math.MaxInt64
	}
	return now + left
}

// armDeadline sets the loop timer for the earliest deadline.
func (w *watcher) armDeadline() {
	_, when, ok := w.deadlines.Peek()
	if !ok || (w.dtimer != 0 && w.dtimerAt <= when) {
		return
	}
	if w.dtimer != 0 {
		w.l.CancelTimer(w.dtimer)
	}
	w.dtimer = w.l.AfterFunc(time.Duration(when)-w.l.Now(), w.expireFn)
	w.dtimerAt = when
}

// expire completes the operations whose deadline passed with ErrDeadline.
func (w *watcher) expire() {
	w.dtimer = 0
	now := int64(w.l.Now())
	for {
		id, when, ok := w.deadlines.Peek()
		if !ok || when > now {
			break
		}
		cb, _ := w.deadlines.Remove(id)
		cb.tid = 0
		cb.desc.remove(cb)
		cb.err = ErrDeadline
		w.complete(cb)
	}
	w.armDeadline()
}

func (w *watcher) dropDeadline(cb *aiocb) {
	if cb.tid != 0 {
		w.deadlines.Remove(cb.tid)
		cb.tid = 0
	}
}
