//go:build unix

package hello

import (
	"errors"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Listen listens on the TCP address addr with package net and returns the
// listener and its fd, for an event loop to watch and accept from. The fd
// stays the listener's: it is valid until the listener is closed, and
// closing the listener closes it, so unwatch the fd first. It is
// non-blocking and close-on-exec, as every socket of package net, and the
// listener sets SO_REUSEADDR, so that a restarted server can listen again
// while the old one's connections linger in TIME_WAIT. Package net's own
// poller goes on watching the fd as well, to no effect: nothing calls the
// listener's Accept.
func Listen(addr string) (net.Listener, int, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, -1, err
	}
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		ln.Close()
		return nil, -1, err
	}
	lfd := -1
	if err := rc.Control(func(fd uintptr) { lfd = int(fd) }); err != nil {
		ln.Close()
		return nil, -1, err
	}
	return ln, lfd, nil
}

// Accept takes one pending connection off the listening socket lfd, as a
// non-blocking, close-on-exec fd. With none pending it returns unix.EAGAIN.
// A connection that was reset before it was taken (ECONNABORTED, or EPROTO
// on Linux) is skipped, as package net skips it.
func Accept(lfd int) (int, error) {
	for {
		fd, err := accept(lfd)
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR, unix.ECONNABORTED, unix.EPROTO:
			continue
		case unix.EAGAIN:
			return -1, err
		}
		return -1, os.NewSyscallError("accept", err)
	}
}

// OutOfFiles reports whether an error of Accept says that the process or
// the system ran out of file descriptors or of the memory for another
// socket. The listener then stays readable, the connection still pending:
// stop watching it for a while, or the loop spins.
func OutOfFiles(err error) bool {
	for _, e := range []error{unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
