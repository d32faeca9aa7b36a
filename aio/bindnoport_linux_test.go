package aio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// bindNoPort sets IP_BIND_ADDRESS_NO_PORT on a client socket bound to a
// source address: bind(2) then reserves no port, and connect(2) picks one
// for the whole 4-tuple. Without it, every client of the tests that run
// thousands (and their TIME_WAIT minute after) would hold a port that no
// connect on the machine may pick, and tests of other packages running
// beside these ones would run out.
func bindNoPort(network, address string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	}); err != nil {
		return err
	}
	return serr
}
