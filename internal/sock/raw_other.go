//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package sock

import "golang.org/x/sys/unix"

func read(fd int, p []byte) (int, error)  { return unix.Read(fd, p) }
func write(fd int, p []byte) (int, error) { return unix.Write(fd, p) }
