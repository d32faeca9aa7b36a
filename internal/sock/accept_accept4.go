//go:build linux || freebsd || dragonfly

package sock

import (
	"os"

	"golang.org/x/sys/unix"
)

func socket(family int) (int, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	return fd, nil
}

// Accept takes one pending connection off listening socket fd, as a
// non-blocking, close-on-exec fd. With none pending it returns ErrAgain.
func Accept(fd int) (int, error) {
	for {
		nfd, err := accept4(fd)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return -1, ErrAgain
		}
		if err != nil {
			return -1, os.NewSyscallError("accept4", err)
		}
		return nfd, nil
	}
}
