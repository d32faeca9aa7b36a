//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package poll

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Poller is the kqueue backend. Read and write interest are two filters in
// kqueue, so the Poller remembers each fd's interest to turn Modify into the
// filter changes it takes, and each fd's tag, because kqueue's udata field
// is a pointer and a tag is not one.
type Poller struct {
	kq      int
	regs    []kreg // indexed by fd
	changes []unix.Kevent_t
	raw     []unix.Kevent_t
	wake    waker

	wakePending atomic.Bool

	// mu keeps Close from releasing the wake-up under a concurrent Wake.
	mu     sync.RWMutex
	closed bool
}

type kreg struct {
	tag uint32
	in  Interest
	ok  bool
}

// New returns a kqueue Poller.
func New() (*Poller, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, os.NewSyscallError("kqueue", err)
	}
	unix.CloseOnExec(kq)
	p := &Poller{kq: kq}
	if err := p.wake.init(kq); err != nil {
		unix.Close(kq)
		return nil, err
	}
	return p, nil
}

func (p *Poller) reg(fd int) *kreg {
	if fd >= len(p.regs) {
		n := max(2*len(p.regs), fd+1, 64)
		regs := make([]kreg, n)
		copy(regs, p.regs)
		p.regs = regs
	}
	return &p.regs[fd]
}

func (p *Poller) change(fd, filter, flags int) {
	var k unix.Kevent_t
	unix.SetKevent(&k, fd, filter, flags)
	p.changes = append(p.changes, k)
}

// apply moves fd from interest old to interest in.
func (p *Poller) apply(fd int, old, in Interest) error {
	p.changes = p.changes[:0]
	add := unix.EV_ADD | unix.EV_ENABLE
	if in&Edge != 0 {
		add |= unix.EV_CLEAR
	}
	edgeChanged := (old^in)&Edge != 0
	for _, f := range [...]struct {
		bit    Interest
		filter int
	}{{Read, unix.EVFILT_READ}, {Write, unix.EVFILT_WRITE}} {
		switch {
		case in&f.bit != 0 && (old&f.bit == 0 || edgeChanged):
			p.change(fd, f.filter, add)
		case in&f.bit == 0 && old&f.bit != 0:
			p.change(fd, f.filter, unix.EV_DELETE)
		}
	}
	if len(p.changes) == 0 {
		return nil
	}
	if _, err := unix.Kevent(p.kq, p.changes, nil, nil); err != nil {
		return os.NewSyscallError("kevent", err)
	}
	return nil
}

func (p *Poller) check(fd int) error {
	if p.closed {
		return ErrClosed
	}
	if fd < 0 || p.wake.owns(fd) {
		return os.NewSyscallError("kevent", unix.EBADF)
	}
	return nil
}

// Add registers fd with the given interest and tag.
func (p *Poller) Add(fd int, tag uint32, in Interest) error {
	if err := p.check(fd); err != nil {
		return err
	}
	r := p.reg(fd)
	if r.ok {
		return os.NewSyscallError("kevent", unix.EEXIST)
	}
	if err := p.apply(fd, 0, in); err != nil {
		return err
	}
	*r = kreg{tag: tag, in: in, ok: true}
	return nil
}

// Modify replaces the interest and tag of a registered fd.
func (p *Poller) Modify(fd int, tag uint32, in Interest) error {
	if err := p.check(fd); err != nil {
		return err
	}
	r := p.reg(fd)
	if !r.ok {
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
	if !r.ok {
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
		t := unix.NsecToTimespec(int64(timeout))
		ts = &t
	}
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
			f |= Error
		}
		events[j] = Event{Fd: int32(fd), Tag: p.regs[fd].tag, Flags: f}
		j++
	}
	return j, nil
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
	return p.wake.trigger(p.kq)
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
