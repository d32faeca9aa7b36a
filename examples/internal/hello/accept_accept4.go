//go:build linux || freebsd || dragonfly

package hello

import "golang.org/x/sys/unix"

// accept is accept4(2), which makes the fd non-blocking and close-on-exec
// in the same call.
func accept(lfd int) (int, error) {
	fd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
	return fd, err
}
