package sock

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's reads, writes and non-blocking polls cannot block: their fds
// are non-blocking. So they are made as raw system calls, without telling
// the scheduler that the goroutine may block (entersyscall/exitsyscall),
// which costs about as much as the call itself for the small reads and
// writes of a busy loop.

func read(fd int, p []byte) (int, error)  { return rawIO(unix.SYS_READ, fd, p) }
func write(fd int, p []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, p) }

// rawIO is read(2) or write(2) on p.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func writev(fd int, bufs [][]byte) (int, error) {
	var iovs [64]unix.Iovec
	iov := iovs[:0]
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
	n, _, e := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}
