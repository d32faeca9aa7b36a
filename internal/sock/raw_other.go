//go:build unix && !linux

package sock

import "golang.org/x/sys/unix"

func read(fd int, p []byte) (int, error)  { return unix.Read(fd, p) }
func write(fd int, p []byte) (int, error) { return unix.Write(fd, p) }
