//go:build darwin || openbsd

package sock

import "golang.org/x/sys/unix"

func writev(fd int, bufs [][]byte) (int, error) { return unix.Writev(fd, bufs) }
