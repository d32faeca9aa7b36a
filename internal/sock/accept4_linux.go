package sock

import "golang.org/x/sys/unix"

// accept4 is accept4(2) without asking for the peer's address: unix.Accept4
// would allocate it, and most connections never need it (RemoteAddr asks
// the kernel when they do).
func accept4(fd int) (int, error) {
	nfd, _, e := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(fd), 0, 0, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(nfd), nil
}
