//go:build freebsd || dragonfly

package sock

import "golang.org/x/sys/unix"

func accept4(fd int) (int, error) {
	nfd, _, err := unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
	return nfd, err
}
