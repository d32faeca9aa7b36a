//go:build unix && !(linux || freebsd || dragonfly)

package hello

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// accept is accept(2), then the flags that accept4(2) would have set, as
// macOS and the other systems here have no accept4 in golang.org/x/sys/unix.
// Close-on-exec is set under syscall.ForkLock, as package net sets it, so
// that no exec started in between inherits the fd.
func accept(lfd int) (int, error) {
	syscall.ForkLock.RLock()
	fd, _, err := unix.Accept(lfd)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
