//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package sock

import "golang.org/x/sys/unix"

// isNoNet reports false: ENONET is Linux's alone.
func isNoNet(e unix.Errno) bool { return false }
