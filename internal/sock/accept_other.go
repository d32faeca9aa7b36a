//go:build darwin || netbsd || openbsd

package sock

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// These systems have no accept4 or SOCK_NONBLOCK in socket(2): the flags are
// set after the call, under the fork lock, as package net does, so that no
// fork in between inherits the fd.

func socket(family int) (int, error) {
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(family, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("setnonblock", err)
	}
	return fd, nil
}

// Accept takes one pending connection off listening socket fd, as a
// non-blocking, close-on-exec fd. With none pending it returns ErrAgain.
func Accept(fd int) (int, error) {
	for {
		syscall.ForkLock.RLock()
		nfd, _, err := unix.Accept(fd)
		if err == nil {
			unix.CloseOnExec(nfd)
		}
		syscall.ForkLock.RUnlock()
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return -1, ErrAgain
		}
		if err != nil {
			return -1, os.NewSyscallError("accept", err)
		}
		if err := unix.SetNonblock(nfd, true); err != nil {
			unix.Close(nfd)
			return -1, os.NewSyscallError("setnonblock", err)
		}
		return nfd, nil
	}
}
