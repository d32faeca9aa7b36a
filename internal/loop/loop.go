// Package loop is the event loop under every public face of evloop: one
// goroutine that owns a poller, the fds registered on it, a timer queue and a
// task queue.
//
// # Goroutines
//
// A Loop is owned by the goroutine that runs it: the one Start makes, or the
// one that calls Run or RunOnce. Only that goroutine may call Register,
// Modify, Unregister, AfterFunc, Every, CancelTimer, ResetTimer and RunOnce,
// and the loop calls every Handler, timer function and task on it, one at a
// time. Any goroutine may call Submit, Wake, Stats and StopAsync, and any
// goroutine but the loop's own may call Stop.
//
// # Iteration
//
//	┌─► wait for I/O, the earliest timer, or a Wake
//	│     │
//	│   dispatch I/O events to their handlers
//	│     │
//	│   fire the timers that are due
//	│     │
//	└── run the queued tasks
//
// The wait ends no earlier than the earliest timer's deadline, and a timer
// fires only once the clock has reached its deadline, never earlier. The loop
// sleeps only when no task is queued, and it tells Submit when it sleeps, so
// a task submitted to a busy loop costs a lock and an append, never a syscall.
//
// # Panics
//
// A panic in a handler, timer function or task is recovered, logged through
// the loop's *slog.Logger with its stack, and counted; the loop goes on. A
// Handler that also implements PanicHandler is told, so that it can release
// what the failed call left behind (the reactor closes the connection).
package loop

import (
	"errors"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evloop/evloop/internal/poll"
	"github.com/evloop/evloop/internal/timer"
)

// Handler receives readiness events for a registered fd.
type Handler interface {
	// HandleIO is called on the loop goroutine with the readiness of fd.
	HandleIO(fd int, ev poll.Flags)
}

// PanicHandler may be implemented by a Handler that wants to know when its
// HandleIO panicked. HandlePanic runs on the loop goroutine after the panic
// was recovered and logged.
type PanicHandler interface {
	HandlePanic(fd int, v any)
}

// TimerID names a timer of a Loop. The zero TimerID names no timer.
type TimerID = timer.ID

// Options configure a Loop. The zero value is ready to use.
type Options struct {
	// LockOSThread runs the loop goroutine on its own OS thread.
	LockOSThread bool
	// PinCPU pins the loop's OS thread to one CPU of those the process
	// may run on: the CPU-th of them, counted modulo their number (Linux
	// only; it implies LockOSThread). Start fails if the pinning does.
	PinCPU bool
	CPU    int
	// BlockingPoll makes the loop wait for events with its thread blocked
	// in the kernel (epoll_wait) instead of parked in the Go runtime's
	// poller; see poll.Poller.SetBlocking for what each costs.
	BlockingPoll bool
	// Nap is how long a loop that has just served events, and finds nothing
	// more ready, sleeps before it waits on the poller again (zero: it
	// waits at once). Events that come in meanwhile are served in one
	// batch, and a client on another CPU pays no wake-up of a loop blocked
	// in the kernel for each request it sends: a loop that answers each
	// request as it comes keeps such a client's CPU busier than its own.
	// A loop whose naps find fewer than two events naps less and less
	// often (one wait in up to 64), so a loop under light load, or whose
	// clients share its CPU, spends next to nothing on it. A request that
	// comes during a nap waits for its end: Nap is the latency it may add.
	Nap time.Duration
	// EventBatch is how many readiness events one wait can return (default 1024).
	EventBatch int
	// Logger receives recovered panics (default slog.Default()).
	Logger *slog.Logger
	// EndOfIteration, if set, is called on the loop goroutine at the end of
	// every iteration, after the tasks and before the next wait: the place
	// to write out what the iteration queued, once per iteration.
	EndOfIteration func()
}

// Stats are a loop's counters since it was made.
type Stats struct {
	Iterations  uint64 // waits on the poller
	Events      uint64 // readiness events dispatched
	Tasks       uint64 // submitted functions run
	TimersFired uint64 // timer functions run
	Panics      uint64 // panics recovered
}

type reg struct {
	h   Handler
	gen uint32
	in  poll.Interest
	ok  bool
}

// The registrations live in blocks of 1<<regBits, allocated as fds reach
// them: the table never copies itself, and a loop with n connections holds
// about n registrations' worth of memory, not up to twice that.
const (
	regBits = 9
	regMask = 1<<regBits - 1
)

type regBlock [1 << regBits]reg

type timerFunc struct {
	fn    func()
	every time.Duration
}

// Lifecycle states:
//
//	        Start, Run               StopAsync, Stop
//	idle ───────────────► running ─────────────────► closed
//	  │ RunOnce                                         ▲
//	  └───────► stepping ── Close, or RunOnce after ────┘
//	                        StopAsync or Stop
//	idle ── Stop, Close ──► closed
//
// Only the goroutine that owns the loop releases it (closes the poller),
// except from idle, where no goroutine owns it yet.
const (
	idle int32 = iota
	running
	stepping
	closed
)

// Loop is an event loop. Its methods' comments say which goroutine may call
// them; see the package comment.
type Loop struct {
	poller *poll.Poller
	opts   Options
	log    *slog.Logger
	base   time.Time

	// Owned by the loop goroutine.
	events []poll.Event
	regs   []*regBlock // by fd: regs[fd>>regBits][fd&regMask]
	gen    uint32
	timers timer.Queue[timerFunc]
	batch  []func() // the tasks being run; swapped with tasks
	again  bool     // Again: the next wait does not block
	busy   bool     // the last wait returned events

	// The event of the batch dispatched next, and the batch's length.
	next, batchN int

	// DispatchReady's events, and whether one is running.
	nestedEvents []poll.Event
	nested       bool

	// Napping (Options.Nap): the waits still to skip the nap, and how many
	// the next fruitless nap makes skip.
	napSkip, napBackoff int

	// The task queue: Submit appends under tmu, the loop swaps it out.
	tmu      sync.Mutex
	tasks    []func()
	tclosed  bool
	sleeping atomic.Bool // the loop is in, or about to enter, a blocking wait

	stopReq atomic.Bool

	state atomic.Int32
	done  chan struct{} // closed when the loop has released its resources

	iterations, nevents, ntasks, fired, panics atomic.Uint64
}

// Errors.
var (
	// ErrClosed: the loop was stopped or closed.
	ErrClosed = errors.New("loop: closed")
	// ErrRunning: Run, RunOnce or Start was called on a loop that is already running.
	ErrRunning = errors.New("loop: already running")
	// ErrRegistered: the fd is already registered on this loop.
	ErrRegistered = errors.New("loop: fd already registered")
	// ErrNotRegistered: the fd is not registered on this loop.
	ErrNotRegistered = errors.New("loop: fd not registered")
	// ErrBadFD: the fd is negative.
	ErrBadFD = errors.New("loop: bad file descriptor")
	// ErrNilFunc: a nil function or handler was passed.
	ErrNilFunc = errors.New("loop: nil function")
	// ErrNested: DispatchReady was called from a handler it runs.
	ErrNested = errors.New("loop: already dispatching from inside a handler")
)

// New returns a Loop that is not yet running.
func New(opts Options) (*Loop, error) {
	p, err := poll.New()
	if err != nil {
		return nil, err
	}
	p.SetBlocking(opts.BlockingPoll)
	if opts.EventBatch <= 0 {
		opts.EventBatch = 1024
	}
	l := &Loop{
		poller: p,
		opts:   opts,
		log:    opts.Logger,
		base:   time.Now(),
		events: make([]poll.Event, opts.EventBatch),
		done:   make(chan struct{}),
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	return l, nil
}

// Now returns the loop's monotonic clock: time since New.
func (l *Loop) Now() time.Duration { return time.Since(l.base) }

// Start runs the loop on a new goroutine and returns once it is running, or
// with the error that kept it from starting (thread pinning).
func (l *Loop) Start() error {
	if err := l.begin(); err != nil {
		return err
	}
	started := make(chan error, 1)
	go l.run(started)
	return <-started
}

// Run runs the loop on the calling goroutine until Stop or StopAsync, then
// runs the tasks still queued, releases the poller and returns nil. It
// returns early only if the poller fails.
func (l *Loop) Run() error {
	if err := l.begin(); err != nil {
		return err
	}
	return l.run(nil)
}

func (l *Loop) begin() error {
	if l.state.CompareAndSwap(idle, running) {
		return nil
	}
	if l.state.Load() == closed {
		return ErrClosed
	}
	return ErrRunning
}

func (l *Loop) run(started chan<- error) (err error) {
	pinned := false
	if l.opts.LockOSThread || l.opts.PinCPU {
		runtime.LockOSThread()
		if l.opts.PinCPU {
			if perr := pinToCPU(l.opts.CPU); perr != nil {
				// The thread is locked and unpinned: unlocking is safe.
				runtime.UnlockOSThread()
				l.release()
				if started != nil {
					started <- perr
				}
				return perr
			}
			// A pinned thread must not return to the scheduler's pool:
			// staying locked makes it exit with this goroutine.
			pinned = true
		}
	}
	if started != nil {
		started <- nil
	}
	defer func() {
		if !pinned && (l.opts.LockOSThread || l.opts.PinCPU) {
			runtime.UnlockOSThread()
		}
		l.release()
	}()
	for !l.stopReq.Load() {
		if err = l.iterate(true); err != nil {
			l.log.Error("evloop: poller failed; loop stopped", "err", err)
			return err
		}
	}
	return nil
}

// Pin locks the loop goroutine to its OS thread, for good, and restricts
// that thread to cpu (Linux only). Must be called on the loop goroutine of a
// started loop; a thread once pinned exits with the loop rather than go back
// to the scheduler's pool.
func (l *Loop) Pin(cpu int) error {
	runtime.LockOSThread() // never undone: the thread ends with the goroutine
	return pinToCPU(cpu)
}

// RunOnce runs one iteration on the calling goroutine: it waits for I/O,
// a timer or a Wake if block is true and nothing is queued, then dispatches
// what is ready. It is for owners that drive the loop themselves, and must
// not be mixed with Run or Start. Once the loop is asked to stop, RunOnce
// releases it and returns ErrClosed.
func (l *Loop) RunOnce(block bool) error {
	if s := l.state.Load(); s != stepping {
		switch {
		case s == idle && l.state.CompareAndSwap(idle, stepping):
		case l.state.Load() == running:
			return ErrRunning
		default:
			return ErrClosed
		}
	}
	if l.stopReq.Load() {
		l.release()
		return ErrClosed
	}
	return l.iterate(block)
}

// StopAsync asks the loop to stop and returns at once. Any goroutine,
// the loop's own included, may call it.
func (l *Loop) StopAsync() {
	l.stopReq.Store(true)
	l.poller.Wake()
}

// Stop stops the loop. For a loop that runs on its own goroutine (Start,
// Run), it returns when that goroutine has finished: queued tasks have run,
// the poller is released, and Submit returns ErrClosed. For a loop that an
// owner drives with RunOnce, it asks and returns: the owner's next RunOnce
// releases the loop. Registered fds are not closed; their owners close them,
// before Stop, through Submit. Stop may be called more than once. It must
// not be called on the loop goroutine, where it would wait for itself: call
// StopAsync there.
func (l *Loop) Stop() {
	if l.state.CompareAndSwap(idle, closed) {
		l.release()
		return
	}
	l.StopAsync()
	if l.state.Load() != stepping {
		<-l.done
	}
}

// Close releases a loop at once. Must be called on the goroutine that drives
// it with RunOnce; for a loop started with Start or Run, Close is Stop.
// Close may be called more than once.
func (l *Loop) Close() error {
	switch l.state.Load() {
	case stepping:
		l.release()
	case closed:
		<-l.done
	default:
		l.Stop()
	}
	return nil
}

// release runs the tasks still queued, refuses new ones and frees the
// poller. Only the owner calls it, once.
func (l *Loop) release() {
	l.stopReq.Store(true)
	l.tmu.Lock()
	l.tclosed = true
	tasks := l.tasks
	l.tasks = nil
	l.tmu.Unlock()
	for _, fn := range tasks {
		l.call(fn)
	}
	if l.opts.EndOfIteration != nil {
		l.call(l.opts.EndOfIteration)
	}
	l.poller.Close()
	l.state.Store(closed)
	close(l.done)
}

// Wake makes a blocked wait return, so that the loop iterates once more.
// Any goroutine may call it.
func (l *Loop) Wake() error { return l.poller.Wake() }

// Submit queues fn to run on the loop goroutine and wakes the loop if it is
// blocked. Tasks run in the order they were submitted. Any goroutine may call
// it; it returns ErrClosed once the loop is stopped, and the tasks it
// accepted before that all run.
func (l *Loop) Submit(fn func()) error {
	if fn == nil {
		return ErrNilFunc
	}
	l.tmu.Lock()
	if l.tclosed {
		l.tmu.Unlock()
		return ErrClosed
	}
	l.tasks = append(l.tasks, fn)
	l.tmu.Unlock()
	if l.sleeping.CompareAndSwap(true, false) {
		// The task is queued either way. Wake fails only once the poller is
		// closed, and then release runs the task.
		_ = l.poller.Wake()
	}
	return nil
}

func (l *Loop) hasTasks() bool {
	l.tmu.Lock()
	n := len(l.tasks)
	l.tmu.Unlock()
	return n > 0
}

// Again makes the loop's next wait on the poller return at once, whether
// or not anything is ready: its owner has work left for the next
// iteration (a socket read to the end of its buffer, under edge-triggered
// readiness, has more to read). Loop goroutine only.
func (l *Loop) Again() { l.again = true }

// wait fills l.events from the poller: without blocking if block is false
// or work is queued, else until an event, the earliest timer or a wake-up.
func (l *Loop) wait(block bool) (int, error) {
	timeout := time.Duration(0)
	if l.again {
		l.again = false
		block = false
	}
	if block {
		timeout = -1
		if _, when, ok := l.timers.Peek(); ok {
			timeout = max(0, time.Duration(when)-l.Now())
		}
	}
	if timeout == 0 {
		return l.poller.Wait(l.events, 0)
	}
	didNap := false
	if l.busy && l.opts.Nap > 0 {
		if l.napSkip > 0 {
			l.napSkip--
		} else if !l.hasTasks() && !l.stopReq.Load() {
			if n, err := l.poller.Wait(l.events, 0); n > 0 || err != nil || l.poller.Woke() {
				return n, err // a wake-up it took is a reason to return, as in the wait below
			}
			d := l.opts.Nap
			if timeout > 0 {
				d = min(d, timeout)
				timeout -= d // the nap may oversleep: the timer is never early
			}
			nap(d)
			didNap = true
		}
	}
	// Publish that we are going to sleep, then look once more: a Submit
	// that comes after the look sees sleeping and wakes us. (A nap does not
	// publish it: tasks submitted during one are found here.)
	l.sleeping.Store(true)
	if l.hasTasks() || l.stopReq.Load() {
		timeout = 0
	}
	n, err := l.poller.Wait(l.events, timeout)
	l.sleeping.Store(false)
	if didNap {
		l.napped(n)
	}
	return n, err
}

// napped takes note of what the wait after a nap found. A nap that found
// one event or none saved nothing: the loop skips the nap in the waits
// after it, twice as many after each such nap up to 64, until one finds
// two or more.
func (l *Loop) napped(n int) {
	if n >= 2 {
		l.napBackoff = 0
		return
	}
	l.napBackoff = min(max(1, 2*l.napBackoff), maxNapBackoff)
	l.napSkip = l.napBackoff
}

const maxNapBackoff = 64

// iterate is one turn of the loop.
func (l *Loop) iterate(block bool) error {
	n, err := l.wait(block)
	if err != nil {
		return err
	}
	l.busy = n > 0
	l.iterations.Add(1)
	// next and batchN are fields, for DispatchReady: it takes the rest of
	// the batch when a handler calls it.
	for l.next, l.batchN = 0, n; l.next < l.batchN; {
		ev := l.events[l.next]
		l.next++
		fd := int(ev.Fd)
		r := l.lookup(fd)
		if r == nil || r.gen != ev.Tag {
			continue // unregistered, or re-registered, earlier in this batch
		}
		l.dispatch(r.h, fd, ev.Flags)
	}
	if n > 0 {
		l.nevents.Add(uint64(n))
	}
	l.fireTimers()
	l.runTasks()
	if l.opts.EndOfIteration != nil {
		l.call(l.opts.EndOfIteration)
	}
	return nil
}

// DispatchReady dispatches the events ready now, without waiting, from
// inside a handler the loop is running: for an owner that keeps serving
// the loop's other descriptors while one of them takes long (a script
// that runs past its time). The events of the descriptor except are not
// dispatched: their flags are returned, for the caller to act on once
// its handler has returned. The events the iteration's wait returned and
// the loop has not dispatched yet are dispatched first. Timers and tasks
// wait for the iteration.
// Called from a handler that DispatchReady itself runs, it returns
// ErrNested and does nothing. Loop goroutine only.
func (l *Loop) DispatchReady(except int) (poll.Flags, error) {
	if l.nested {
		return 0, ErrNested
	}
	if l.nestedEvents == nil {
		l.nestedEvents = make([]poll.Event, len(l.events))
	}
	l.nested = true
	defer func() { l.nested = false }()
	var kept poll.Flags
	handle := func(ev poll.Event) {
		fd := int(ev.Fd)
		r := l.lookup(fd)
		switch {
		case r == nil || r.gen != ev.Tag:
		case fd == except:
			kept |= ev.Flags
		default:
			l.dispatch(r.h, fd, ev.Flags)
		}
	}
	// First the rest of the iteration's batch, which the kernel will not
	// report again.
	for l.next < l.batchN {
		ev := l.events[l.next]
		l.next++
		handle(ev)
	}
	n, err := l.poller.Wait(l.nestedEvents, 0)
	if err != nil {
		return kept, err
	}
	for _, ev := range l.nestedEvents[:n] {
		handle(ev)
	}
	if n > 0 {
		l.nevents.Add(uint64(n))
	}
	return kept, nil
}

func (l *Loop) dispatch(h Handler, fd int, f poll.Flags) {
	defer func() {
		if v := recover(); v != nil {
			l.recovered("I/O handler", v)
			if ph, ok := h.(PanicHandler); ok {
				l.call(func() { ph.HandlePanic(fd, v) })
			}
		}
	}()
	h.HandleIO(fd, f)
}

// call runs fn, recovering a panic.
func (l *Loop) call(fn func()) {
	defer func() {
		if v := recover(); v != nil {
			l.recovered("function", v)
		}
	}()
	fn()
}

func (l *Loop) recovered(what string, v any) {
	l.panics.Add(1)
	l.log.Error("evloop: panic recovered on the event loop", "in", what, "panic", v, "stack", string(debug.Stack()))
}

func (l *Loop) fireTimers() {
	if l.timers.Len() == 0 {
		return
	}
	now := int64(l.Now())
	// Fire at most the timers there were at the start, so that a function
	// that adds a timer already due cannot keep this pass going forever.
	fired := uint64(0)
	for range l.timers.Len() {
		id, when, ok := l.timers.Peek()
		if !ok || when > now {
			break
		}
		t, _ := l.timers.Get(id)
		if t.every > 0 {
			next := deadline(when, t.every)
			if next <= now {
				// Behind by a whole period or more: skip the missed ticks,
				// as time.Ticker does, rather than fire them in a burst.
				next = deadline(now, t.every)
			}
			l.timers.Reset(id, next)
		} else {
			l.timers.Remove(id)
		}
		fired++
		l.call(t.fn)
	}
	l.fired.Add(fired)
}

func (l *Loop) runTasks() {
	l.tmu.Lock()
	if len(l.tasks) == 0 {
		l.tmu.Unlock()
		return
	}
	l.tasks, l.batch = l.batch[:0], l.tasks
	l.tmu.Unlock()
	// Counted before they run, so a task that reads Stats (or signals a
	// goroutine that does) sees itself counted.
	l.ntasks.Add(uint64(len(l.batch)))
	for i, fn := range l.batch {
		l.batch[i] = nil
		l.call(fn)
	}
	if cap(l.batch) > 1<<16 {
		l.batch = nil // a burst is over: do not keep its memory
	}
}

// Stats returns the loop's counters. Any goroutine may call it.
func (l *Loop) Stats() Stats {
	return Stats{
		Iterations:  l.iterations.Load(),
		Events:      l.nevents.Load(),
		Tasks:       l.ntasks.Load(),
		TimersFired: l.fired.Load(),
		Panics:      l.panics.Load(),
	}
}

// Register adds fd to the loop with interest in; h is called with its events.
// Must be called on the loop goroutine.
func (l *Loop) Register(fd int, in poll.Interest, h Handler) error {
	if fd < 0 {
		return ErrBadFD
	}
	if h == nil {
		return ErrNilFunc
	}
	if l.lookup(fd) != nil {
		return ErrRegistered
	}
	// The kernel checks fd before the table grows for it, so a bogus fd
	// number costs an error, not memory. One it holds already was
	// unregistered by a Delete that failed: the loop forgot it, the kernel
	// did not, and Modify takes that registration over.
	err := l.poller.Add(fd, l.gen+1, in)
	if err != nil && poll.IsRegistered(err) {
		err = l.poller.Modify(fd, l.gen+1, in)
	}
	if err != nil {
		return err
	}
	l.gen++
	b := fd >> regBits
	if b >= len(l.regs) {
		l.regs = append(l.regs, make([]*regBlock, b+1-len(l.regs))...)
	}
	if l.regs[b] == nil {
		l.regs[b] = new(regBlock)
	}
	l.regs[b][fd&regMask] = reg{h: h, gen: l.gen, in: in, ok: true}
	return nil
}

// Each calls fn for every registered fd, in fd order, with its handler. fn
// may register and unregister fds; one registered during Each may or may not
// be visited. Must be called on the loop goroutine.
func (l *Loop) Each(fn func(fd int, h Handler)) {
	for b := 0; b < len(l.regs); b++ {
		for i := 0; l.regs[b] != nil && i <= regMask; i++ {
			if r := &l.regs[b][i]; r.ok {
				fn(b<<regBits|i, r.h)
			}
		}
	}
}

// Modify changes the interest of a registered fd. Must be called on the
// loop goroutine.
func (l *Loop) Modify(fd int, in poll.Interest) error {
	r := l.lookup(fd)
	if r == nil {
		return ErrNotRegistered
	}
	if r.in == in {
		return nil
	}
	if err := l.poller.Modify(fd, r.gen, in); err != nil {
		return err
	}
	r.in = in
	return nil
}

// Interest returns the interest fd is registered with.
// Must be called on the loop goroutine.
func (l *Loop) Interest(fd int) (poll.Interest, bool) {
	if r := l.lookup(fd); r != nil {
		return r.in, true
	}
	return 0, false
}

// Unregister removes fd from the loop: no event for it is dispatched after
// Unregister returns, not even one already waiting in the current batch. If
// the application closed fd before unregistering it, the kernel has already
// dropped the registration and Unregister only forgets it (unless a dup of
// the fd keeps the file open: then epoll goes on reporting it under the
// closed number, and the loop drops those events). Unregister before
// closing. Must be called on the loop goroutine.
func (l *Loop) Unregister(fd int) error {
	r := l.lookup(fd)
	if r == nil {
		return ErrNotRegistered
	}
	*r = reg{}
	if err := l.poller.Delete(fd); err != nil && !poll.IsGone(err) {
		return err
	}
	return nil
}

func (l *Loop) lookup(fd int) *reg {
	b := fd >> regBits
	if fd < 0 || b >= len(l.regs) || l.regs[b] == nil {
		return nil
	}
	if r := &l.regs[b][fd&regMask]; r.ok {
		return r
	}
	return nil
}

// AfterFunc calls fn on the loop goroutine once, d after now, and never
// earlier. Must be called on the loop goroutine.
func (l *Loop) AfterFunc(d time.Duration, fn func()) TimerID {
	return l.Every(d, 0, fn)
}

// Every calls fn on the loop goroutine first after d, then every period (0:
// once). A repeating timer that falls a whole period behind skips the ticks
// it missed. Must be called on the loop goroutine.
func (l *Loop) Every(d, period time.Duration, fn func()) TimerID {
	if fn == nil {
		return 0
	}
	return l.timers.Add(deadline(int64(l.Now()), d), timerFunc{fn: fn, every: max(period, 0)})
}

// CancelTimer stops timer id and reports whether it was live. Must be
// called on the loop goroutine.
func (l *Loop) CancelTimer(id TimerID) bool {
	_, ok := l.timers.Remove(id)
	return ok
}

// ResetTimer moves timer id to d after now and reports whether it was live.
// Must be called on the loop goroutine.
func (l *Loop) ResetTimer(id TimerID, d time.Duration) bool {
	return l.timers.Reset(id, deadline(int64(l.Now()), d))
}

// deadline returns now+d, with a negative d counting as zero and a sum
// past the clock's range saturating, so that a huge duration means "never"
// rather than wrapping around into the past.
func deadline(now int64, d time.Duration) int64 {
	if d <= 0 {
		return now
	}
	if now > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return now + int64(d)
}

// Timers returns the number of live timers. Must be called on the loop goroutine.
func (l *Loop) Timers() int { return l.timers.Len() }

// Sleeping reports whether the loop is blocked in a wait, or about to be.
// Any goroutine may call it; the answer may be stale by the time it returns.
func (l *Loop) Sleeping() bool { return l.sleeping.Load() }
