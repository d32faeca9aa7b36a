//go:build linux

package poll

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
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

	// wakePending is set by the Wake that writes the eventfd and cleared by
	// Wait after it has drained it, so that the Wakes in between cost nothing.
	wakePending atomic.Bool

	// mu keeps Close from closing the eventfd under a concurrent Wake, which
	// could otherwise write into an unrelated file that reused the number.
	mu     sync.RWMutex
	closed bool
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
// A Wait first polls without blocking, a raw system call the scheduler
// does not see. With nothing ready it yields to the scheduler, so that
// goroutines queued behind the loop run, and then blocks its thread in
// epoll_wait as a system call the runtime knows of: the runtime's monitor
// hands the thread's P to other goroutines once it sees the call blocked.
// Parking the goroutine in the runtime's own poller instead was measured
// and dropped: a loop parked there is woken only when some thread next
// polls that poller, and with two loops on two Ps at 256 connections
// wrk's p99 went from 6 ms to between 24 and 207 ms.
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
	runtime.Gosched()
	n, _, err = p.poll(events, timeoutMillis(timeout))
	return n, err
}

// poll is one epoll_wait. woke reports that the wake-up fd was among the
// events (and drained), which Wait must treat as a reason to return.
func (p *Poller) poll(events []Event, msec int) (n int, woke bool, err error) {
	if cap(p.raw) < len(events) {
		p.raw = make([]unix.EpollEvent, len(events))
	}
	raw := p.raw[:len(events)]
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
			woke = true
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
	if err2 := unix.Close(p.epfd); err == nil {
		err = err2
	}
	if err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}

// IsGone reports whether err from Modify or Delete means the kernel holds no
// registration for the fd: it was never added, or its owner closed it, which
// drops the registration.
func IsGone(err error) bool { return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EBADF) }

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
