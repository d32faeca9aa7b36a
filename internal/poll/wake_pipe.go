//go:build netbsd || openbsd

package poll

import (
	"os"

	"golang.org/x/sys/unix"
)

// waker wakes a kqueue through a non-blocking pipe, for the systems whose
// kqueue has no EVFILT_USER.
type waker struct {
	r, w int
}

func (w *waker) init(kq int) error {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return os.NewSyscallError("pipe2", err)
	}
	w.r, w.w = fds[0], fds[1]
	var k unix.Kevent_t
	unix.SetKevent(&k, w.r, unix.EVFILT_READ, unix.EV_ADD)
	if _, err := unix.Kevent(kq, []unix.Kevent_t{k}, nil, nil); err != nil {
		w.close()
		return os.NewSyscallError("kevent", err)
	}
	return nil
}

func (w *waker) owns(fd int) bool { return fd == w.r || fd == w.w }

func (w *waker) isWake(ev *unix.Kevent_t) bool {
	return ev.Filter == unix.EVFILT_READ && int(ev.Ident) == w.r
}

func (w *waker) drain() {
	var b [64]byte
	for {
		if n, err := unix.Read(w.r, b[:]); n <= 0 || err != nil {
			return
		}
	}
}

func (w *waker) trigger(kq int) error {
	for {
		_, err := unix.Write(w.w, []byte{1})
		switch err {
		case nil, unix.EAGAIN: // EAGAIN: the pipe is full, a wake-up is pending anyway.
			return nil
		case unix.EINTR:
		default:
			return os.NewSyscallError("write", err)
		}
	}
}

func (w *waker) close() {
	unix.Close(w.r)
	unix.Close(w.w)
}
