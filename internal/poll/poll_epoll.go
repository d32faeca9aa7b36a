//go:build linux

package poll

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Poller is the epoll backend. Its wake-up is an eventfd registered on the
// epoll instance itself and filtered out of the events Wait returns.
type Poller struct {
	epfd   int
	wakefd int
	raw    []unix.EpollEvent

	// file is epfd registered with the Go runtime's poller, so that a
	// blocking Wait parks the goroutine instead of its thread; it is made
	// by the first Wait that parks (register). rc is nil until then, and
	// where that could not be done (unregistrable), Wait blocks in
	// epoll_wait.
	file          *os.File
	rc            syscall.RawConn
	unregistrable bool
	deadline      bool // a read deadline is set on file
	ready         func(uintptr) bool
	parked        parked

	// blocking: a Wait that must block does so in epoll_wait, on its
	// thread (see SetBlocking).
	blocking bool

	// woke: the last Wait drained a wake-up (see Woke).
	woke bool

	// wakePending is set by the Wake that writes the eventfd and cleared by
	// Wait after it has drained it, so that the Wakes in between cost nothing.
	wakePending atomic.Bool

	// mu keeps Close from closing the eventfd under a concurrent Wake, which
	// could otherwise write into an unrelated file that reused the number.
	mu     sync.RWMutex
	closed bool
}

// parked carries a parked Wait's arguments and results through the
// runtime's callback.
type parked struct {
	events []Event
	n      int
	err    error
}

// New returns an epoll Poller.
func New() (*Poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wakefd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		unix.Close(wakefd)
		unix.Close(epfd)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	return &Poller{epfd: epfd, wakefd: wakefd}, nil
}

// register makes epfd known to the runtime's poller, which a parked Wait
// needs, at the first such Wait: a Poller whose Waits block their thread
// must not be registered, or every event would also wake the runtime's
// poller, on another thread, for nothing. It reports whether it could;
// a Wait that cannot park blocks its thread.
func (p *Poller) register() bool {
	if p.rc != nil {
		return true
	}
	if p.unregistrable {
		return false
	}
	// epoll_wait ignores O_NONBLOCK; os.NewFile needs it to register the fd
	// with the runtime's poller.
	if err := unix.SetNonblock(p.epfd, true); err != nil {
		p.unregistrable = true
		return false
	}
	p.file = os.NewFile(uintptr(p.epfd), "epoll")
	rc, err := p.file.SyscallConn()
	if err != nil {
		p.unregistrable = true
		return false
	}
	p.rc = rc
	p.ready = p.readyFunc
	return true
}

func epollEvents(in Interest) uint32 {
	var e uint32
	if in&Read != 0 {
		e |= unix.EPOLLIN | unix.EPOLLRDHUP
	}
	if in&Write != 0 {
		e |= unix.EPOLLOUT
	}
	if in&Edge != 0 {
		e |= unix.EPOLLET
	}
	return e
}

func (p *Poller) ctl(op, fd int, tag uint32, in Interest) error {
	if p.closed {
		return ErrClosed
	}
	if fd < 0 || fd > maxFD || fd == p.wakefd {
		return os.NewSyscallError("epoll_ctl", unix.EBADF)
	}
	ev := unix.EpollEvent{Events: epollEvents(in), Fd: int32(fd), Pad: int32(tag)}
	if err := unix.EpollCtl(p.epfd, op, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Add registers fd with the given interest and tag.
func (p *Poller) Add(fd int, tag uint32, in Interest) error {
	return p.ctl(unix.EPOLL_CTL_ADD, fd, tag, in)
}

// Modify replaces the interest and tag of a registered fd.
func (p *Poller) Modify(fd int, tag uint32, in Interest) error {
	return p.ctl(unix.EPOLL_CTL_MOD, fd, tag, in)
}

// Delete removes fd's registration.
func (p *Poller) Delete(fd int) error {
	if p.closed {
		return ErrClosed
	}
	if fd < 0 || fd > maxFD || fd == p.wakefd {
		return os.NewSyscallError("epoll_ctl", unix.EBADF)
	}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// Wait blocks until at least one registered fd is ready, Wake is called, or
// timeout passes (negative: no timeout; zero: do not block), and fills events
// from the start. It returns the number filled, which is zero after a wake-up,
// a timeout or an interrupted wait.
//
// Wait polls first without blocking, a raw system call the scheduler does
// not see. With nothing ready it yields to the scheduler, and then, by
// default, parks the goroutine in the Go runtime's poller (the epoll fd is
// itself pollable) until the epoll fd turns readable or the timeout
// passes; with SetBlocking it blocks its thread in epoll_wait instead.
func (p *Poller) Wait(events []Event, timeout time.Duration) (int, error) {
	if p.closed {
		return 0, ErrClosed
	}
	if len(events) == 0 {
		return 0, nil
	}
	n, woke, err := p.poll(events, 0)
	if n > 0 || woke || err != nil || timeout == 0 {
		return n, err
	}
	// Nothing ready: let the goroutines that are runnable run first (other
	// loops, goroutines this loop readied), then poll once more before
	// sleeping. Events that arrived meanwhile are served without a park
	// and its late wake-up (see SetBlocking): with the yield, parked loops'
	// p99 at 256 connections was 5.7-28 ms, without it 6.5-207 ms. The
	// yield itself does not look at the runtime's poller: the scheduler
	// takes a yielded goroutine back from its queue before it polls.
	runtime.Gosched()
	if p.blocking || !p.register() {
		n, _, err = p.poll(events, timeoutMillis(timeout))
		return n, err
	}
	if timeout > 0 {
		p.file.SetReadDeadline(time.Now().Add(timeout))
		p.deadline = true
	} else if p.deadline {
		p.file.SetReadDeadline(time.Time{})
		p.deadline = false
	}
	// Read calls ready before it parks: that poll sees what came in while
	// the scheduler ran.
	p.parked = parked{events: events}
	rerr := p.rc.Read(p.ready)
	n, err = p.parked.n, p.parked.err
	p.parked = parked{}
	if rerr != nil && !errors.Is(rerr, os.ErrDeadlineExceeded) {
		return 0, rerr
	}
	return n, err
}

// Woke reports whether the last Wait took a wake-up (Wake's), which a
// Wait that returns no events may have: the caller tells it from nothing
// ready with it.
func (p *Poller) Woke() bool { return p.woke }

// SetBlocking chooses how a Wait with nothing ready waits after its yield.
//
// Off (the default), the goroutine parks in the runtime's poller and its
// thread serves other goroutines. A parked loop is woken when some thread
// next polls the runtime's poller: at once if a thread is blocked there,
// otherwise when a thread runs out of work or the runtime's monitor polls,
// up to about 10ms later. Goroutines of the process that wait on the
// runtime's poller (a net.Conn) are woken the same way, and loops that park
// poll it for them.
//
// On, the thread blocks in epoll_wait, as a system call the runtime knows
// of, and the kernel wakes it when an fd is ready: measured with wrk at 256
// connections on two loops, p99 6 ms where parked loops had 6 to 207 ms.
// The epoll fd is then not registered with the runtime's poller, whose
// threads its events would otherwise wake as well, for nothing. The poll
// and the yield before the wait stay: a loop that went straight to
// epoll_wait served wrk's pipelined requests at 256 connections with a
// fifth more CPU a request. The runtime hands the thread's P to other goroutines only once its
// monitor sees the call blocked (20µs to 10ms), and while every P is held
// so, goroutines waiting on the runtime's poller are woken by that monitor
// alone: an in-process net.Conn client of a loop took 340µs a round trip
// this way against 24µs parked. It suits loops whose clients are other
// processes. Set it before the first Wait: a Poller that has parked once
// stays registered with the runtime's poller.
func (p *Poller) SetBlocking(on bool) { p.blocking = on }

// ready is the callback of a parked Wait: it polls, and tells the runtime
// whether to go on waiting. It is a method value bound once, in register, so
// that parking allocates nothing.
func (p *Poller) readyFunc(uintptr) bool {
	n, woke, err := p.poll(p.parked.events, 0)
	p.parked.n, p.parked.err = n, err
	return n > 0 || woke || err != nil
}

// poll is one epoll_wait. woke reports that the wake-up fd was among the
// events (and drained), which Wait must treat as a reason to return.
func (p *Poller) poll(events []Event, msec int) (n int, woke bool, err error) {
	if cap(p.raw) < len(events) {
		p.raw = make([]unix.EpollEvent, len(events))
	}
	raw := p.raw[:len(events)]
	p.woke = false
	k, err := epollWait(p.epfd, raw, msec)
	if err != nil {
		if err == unix.EINTR {
			return 0, false, nil
		}
		return 0, false, os.NewSyscallError("epoll_wait", err)
	}
	for i := range k {
		ev := &raw[i]
		if int(ev.Fd) == p.wakefd {
			p.drainWake()
			woke, p.woke = true, true
			continue
		}
		var f Flags
		if ev.Events&(unix.EPOLLIN|unix.EPOLLPRI) != 0 {
			f |= Readable
		}
		if ev.Events&unix.EPOLLOUT != 0 {
			f |= Writable
		}
		if ev.Events&(unix.EPOLLHUP|unix.EPOLLRDHUP) != 0 {
			f |= Hangup | Readable
		}
		if ev.Events&unix.EPOLLHUP != 0 {
			// Hung up both ways: a write does not block either (it fails).
			// The kernel reports EPOLLHUP whatever the interest, and without
			// EPOLLOUT where the fd has none to report (a pipe's read end), so
			// an owner waiting to write would never be told. The runtime's
			// netpoll reads EPOLLHUP as writable too.
			f |= Writable
		}
		if ev.Events&unix.EPOLLERR != 0 {
			// A pending error is reported until something reads it: say so
			// in the flags an owner acts on.
			f |= Error | Readable | Writable
		}
		events[n] = Event{Fd: ev.Fd, Tag: uint32(ev.Pad), Flags: f}
		n++
	}
	return n, woke, nil
}

func (p *Poller) drainWake() {
	var b [8]byte
	// The read can fail only with EAGAIN (a spurious report); the counter is
	// empty either way.
	_, _ = unix.Read(p.wakefd, b[:])
	// Cleared after the read: a Wake that lands between the two is absorbed,
	// which is safe because the owner looks at its queues after every Wait.
	p.wakePending.Store(false)
}

// Wake makes a blocked or the next Wait return. Any goroutine may call it.
func (p *Poller) Wake() error {
	if !p.wakePending.CompareAndSwap(false, true) {
		return nil
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrClosed
	}
	b := [8]byte{1}
	for {
		_, err := unix.Write(p.wakefd, b[:])
		switch err {
		case nil, unix.EAGAIN: // EAGAIN: the counter is full, a wake-up is pending anyway.
			return nil
		case unix.EINTR:
			continue
		default:
			p.wakePending.Store(false) // let the next Wake try again
			return os.NewSyscallError("write", err)
		}
	}
}

// Close releases the epoll instance and the wake-up fd. It does not close the
// registered fds. Close may be called more than once.
func (p *Poller) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	err := unix.Close(p.wakefd)
	if p.file != nil {
		// Through the File, so that the runtime's poller forgets the fd.
		if err2 := p.file.Close(); err == nil && err2 != nil {
			return err2
		}
	} else if err2 := unix.Close(p.epfd); err == nil {
		err = err2
	}
	if err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}

// IsGone reports whether err from Modify or Delete means the kernel holds no
// registration for the fd: it was never added, or its owner closed it, which
// drops the registration. The closed number may since have gone to a file
// that epoll cannot poll (a regular file), which epoll_ctl refuses with
// EPERM whatever the operation, before it looks for a registration.
func IsGone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EBADF) || errors.Is(err, unix.EPERM)
}

// IsRegistered reports whether err from Add means the kernel holds a
// registration for the fd already (EEXIST): one that a Delete which
// failed left behind. Modify then takes it over.
func IsRegistered(err error) bool { return errors.Is(err, unix.EEXIST) }

// IsUnpollable reports whether err from Add means the kernel cannot poll the
// fd: epoll refuses regular files and some devices (/dev/null) with EPERM.
// poll(2) reports such an fd as always ready, and so does libev.
func IsUnpollable(err error) bool { return errors.Is(err, unix.EPERM) }

// epollWait is epoll_wait; a call that cannot block (msec 0) is made as a
// raw system call (epoll_pwait, which every Linux architecture has, with
// no signal mask), without the scheduler's bookkeeping for one that may.
func epollWait(epfd int, raw []unix.EpollEvent, msec int) (int, error) {
	if msec != 0 {
		return unix.EpollWait(epfd, raw, msec)
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&raw[0])), uintptr(len(raw)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
