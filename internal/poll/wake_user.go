//go:build darwin || dragonfly || freebsd

package poll

import (
	"os"

	"golang.org/x/sys/unix"
)

// waker wakes a kqueue with an EVFILT_USER event, which costs no fd. Its
// ident lives in EVFILT_USER's own namespace, apart from fd numbers.
type waker struct{}

const wakeIdent = 0

func (w *waker) init(kq int) error {
	var k unix.Kevent_t
	unix.SetKevent(&k, wakeIdent, unix.EVFILT_USER, unix.EV_ADD|unix.EV_CLEAR)
	if _, err := unix.Kevent(kq, []unix.Kevent_t{k}, nil, nil); err != nil {
		return os.NewSyscallError("kevent", err)
	}
	return nil
}

func (w *waker) owns(fd int) bool { return false }

func (w *waker) isWake(ev *unix.Kevent_t) bool { return ev.Filter == unix.EVFILT_USER }

// drain has nothing to do: EV_CLEAR resets the event when it is reported.
func (w *waker) drain() {}

func (w *waker) trigger(kq int) error {
	var k unix.Kevent_t
	unix.SetKevent(&k, wakeIdent, unix.EVFILT_USER, 0)
	k.Fflags = unix.NOTE_TRIGGER
	for {
		_, err := unix.Kevent(kq, []unix.Kevent_t{k}, nil, nil)
		if err != unix.EINTR {
			if err != nil {
				return os.NewSyscallError("kevent", err)
			}
			return nil
		}
	}
}

func (w *waker) close() {}
