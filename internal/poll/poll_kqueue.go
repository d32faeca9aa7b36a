//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package poll

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Poller is the kqueue backend. Read and write interest are two filters in
// kqueue, so the Poller remembers each fd's interest to turn Modify into the
// filter changes it takes, and each fd's tag, because kqueue's udata field
// is a pointer and a tag is not one.
type Poller struct {
	kq   int
	regs []kreg // indexed by fd
	raw  []unix.Kevent_t
	wake waker
	woke bool // the last Wait took a wake-up (see Woke)

	wakePending atomic.Bool

	// mu keeps Close from releasing the wake-up under a concurrent Wake.
	mu     sync.RWMutex
	closed bool
}

// maxKqueueWait is the longest timeout passed to kevent, as in Go's runtime.
const maxKqueueWait = 1e6 * time.Second

type kreg struct {
	tag uint32
	in  Interest
	ok  bool
}

// New returns a kqueue Poller.
func New() (*Poller, error) {
	// No kqueue1 everywhere: set close-on-exec under the fork lock, as
	// package net does, so that no fork in between inherits the fd.
	syscall.ForkLock.RLock()
	kq, err := unix.Kqueue()
	if err == nil {
		unix.CloseOnExec(kq)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, os.NewSyscallError("kqueue", err)
	}
	p := &Poller{kq: kq}
	if err := p.wake.init(kq); err != nil {
		unix.Close(kq)
		return nil, err
	}
	return p, nil
}

// reg returns fd's entry, or nil if fd was never added.
func (p *Poller) reg(fd int) *kreg {
	if fd >= len(p.regs) {
		return nil
	}
	return &p.regs[fd]
}

// kchange is one filter change and the change that undoes it.
type kchange struct {
	filter, flags, undo int
}

func addFlags(in Interest) int {
	if in&Edge != 0 {
		return unix.EV_ADD | unix.EV_ENABLE | unix.EV_CLEAR
	}
	return unix.EV_ADD | unix.EV_ENABLE
}

// apply moves fd's filters from interest old to interest in. The changes go
// to the kernel one at a time, so that when one fails the ones before it
// are undone and fd is left as it was: a kevent call with several changes
// may apply some and fail on the next, and EV_RECEIPT, which would say
// which, is not on every BSD.
func (p *Poller) apply(fd int, old, in Interest) error {
	var buf [4]kchange
	changes := buf[:0]
	for _, f := range [...]struct {
		bit    Interest
		filter int
	}{{Read, unix.EVFILT_READ}, {Write, unix.EVFILT_WRITE}} {
		had, want := old&f.bit != 0, in&f.bit != 0
		switch {
		case had && want && (old^in)&Edge != 0:
			// EV_ADD on a live knote keeps its EV_CLEAR: replace the knote.
			changes = append(changes,
				kchange{f.filter, unix.EV_DELETE, addFlags(old)},
				kchange{f.filter, addFlags(in), unix.EV_DELETE})
		case want && !had:
			changes = append(changes, kchange{f.filter, addFlags(in), unix.EV_DELETE})
		case had && !want:
			changes = append(changes, kchange{f.filter, unix.EV_DELETE, addFlags(old)})
		}
	}
	for i, c := range changes {
		if err := p.kevent(fd, c.filter, c.flags); err != nil {
			for j := i - 1; j >= 0; j-- {
				_ = p.kevent(fd, changes[j].filter, changes[j].undo)
			}
			return err
		}
	}
	return nil
}

func (p *Poller) kevent(fd, filter, flags int) error {
	var k [1]unix.Kevent_t
	unix.SetKevent(&k[0], fd, filter, flags)
	for {
		_, err := unix.Kevent(p.kq, k[:], nil, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("kevent", err)
		}
		return nil
	}
}

func (p *Poller) check(fd int) error {
	if p.closed {
		return ErrClosed
	}
	if fd < 0 || fd > maxFD || p.wake.owns(fd) {
		return os.NewSyscallError("kevent", unix.EBADF)
	}
	return nil
}

// Add registers fd with the given interest and tag.
func (p *Poller) Add(fd int, tag uint32, in Interest) error {
	if err := p.check(fd); err != nil {
		return err
	}
	if r := p.reg(fd); r != nil && r.ok {
		return os.NewSyscallError("kevent", unix.EEXIST)
	}
	// The kernel checks fd before the table grows for it, so a bogus fd
	// number costs an error, not memory. With no filter to add, apply
	// makes no call, and fcntl checks it instead.
	if in&ReadWrite == 0 {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return os.NewSyscallError("fcntl", err)
		}
	}
	if err := p.apply(fd, 0, in); err != nil {
		return err
	}
	if fd >= len(p.regs) {
		regs := make([]kreg, max(2*len(p.regs), fd+1, 64))
		copy(regs, p.regs)
		p.regs = regs
	}
	p.regs[fd] = kreg{tag: tag, in: in, ok: true}
	return nil
}

// Modify replaces the interest and tag of a registered fd.
func (p *Poller) Modify(fd int, tag uint32, in Interest) error {
	if err := p.check(fd); err != nil {
		return err
	}
	r := p.reg(fd)
	if r == nil || !r.ok {
		return os.NewSyscallError("kevent", unix.ENOENT)
	}
	if err := p.apply(fd, r.in, in); err != nil {
		return err
	}
	r.tag, r.in = tag, in
	return nil
}

// Delete removes fd's registration.
func (p *Poller) Delete(fd int) error {
	if err := p.check(fd); err != nil {
		return err
	}
	r := p.reg(fd)
	if r == nil || !r.ok {
		return os.NewSyscallError("kevent", unix.ENOENT)
	}
	old := r.in
	*r = kreg{}
	return p.apply(fd, old, 0)
}

// Wait blocks until at least one registered fd is ready, Wake is called, or
// timeout passes (negative: no timeout; zero: do not block), and fills events
// from the start. It returns the number filled, which is zero after a wake-up,
// a timeout or an interrupted wait. An fd ready for both reading and writing
// may be reported in two events.
func (p *Poller) Wait(events []Event, timeout time.Duration) (int, error) {
	if p.closed {
		return 0, ErrClosed
	}
	if len(events) == 0 {
		return 0, nil
	}
	if cap(p.raw) < len(events) {
		p.raw = make([]unix.Kevent_t, len(events))
	}
	raw := p.raw[:len(events)]
	var ts *unix.Timespec
	if timeout >= 0 {
		// macOS rejects long timeouts with EINVAL; the caller waits again.
		t := unix.NsecToTimespec(int64(min(timeout, maxKqueueWait)))
		ts = &t
	}
	p.woke = false
	n, err := unix.Kevent(p.kq, nil, raw, ts)
	if err != nil {
		if err == unix.EINTR {
			return 0, nil
		}
		return 0, os.NewSyscallError("kevent", err)
	}
	j := 0
	for i := range n {
		ev := &raw[i]
		if p.wake.isWake(ev) {
			p.wake.drain()
			p.wakePending.Store(false)
			p.woke = true
			continue
		}
		fd := int(ev.Ident)
		if fd >= len(p.regs) || !p.regs[fd].ok {
			continue // deleted earlier in this batch's changes
		}
		var f Flags
		switch ev.Filter {
		case unix.EVFILT_READ:
			f = Readable
		case unix.EVFILT_WRITE:
			f = Writable
		}
		if ev.Flags&unix.EV_EOF != 0 {
			f |= Hangup
			if ev.Fflags != 0 {
				f |= Error
			}
		}
		if ev.Flags&unix.EV_ERROR != 0 {
			f |= Error | Readable | Writable
		}
		events[j] = Event{Fd: int32(fd), Tag: p.regs[fd].tag, Flags: f}
		j++
	}
	return j, nil
}

// SetBlocking is there for the same methods as epoll's: a kqueue Wait
// always blocks its thread in kevent.
func (p *Poller) SetBlocking(on bool) {}

// Woke reports whether the last Wait took a wake-up (Wake's), which a
// Wait that returns no events may have: the caller tells it from nothing
// ready with it.
func (p *Poller) Woke() bool { return p.woke }

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
	if err := p.wake.trigger(p.kq); err != nil {
		p.wakePending.Store(false) // let the next Wake try again
		return err
	}
	return nil
}

// Close releases the kqueue and the wake-up. It does not close the registered
// fds. Close may be called more than once.
func (p *Poller) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	p.wake.close()
	if err := unix.Close(p.kq); err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}

// IsGone reports whether err from Modify or Delete means the kernel holds no
// registration for the fd: it was never added, or its owner closed it, which
// drops the registration.
func IsGone(err error) bool { return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EBADF) }

// IsRegistered reports false: Add (EV_ADD) of an fd the kernel holds
// already takes its registration over.
func IsRegistered(err error) bool { return false }

// IsUnpollable reports whether err from Add means the kernel cannot poll
// the fd. kqueue polls regular files itself: it reports false.
func IsUnpollable(err error) bool { return false }
