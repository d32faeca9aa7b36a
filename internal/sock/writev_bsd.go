//go:build freebsd || netbsd || dragonfly

package sock

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// writev is the writev(2) system call, which golang.org/x/sys/unix does not
// wrap on these systems.
func writev(fd int, bufs [][]byte) (int, error) {
	var stack [16]unix.Iovec
	iov := stack[:0]
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		if len(iov) == maxIovecs {
			break
		}
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		iov = append(iov, v)
	}
	if len(iov) == 0 {
		return 0, nil
	}
	n, _, errno := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
