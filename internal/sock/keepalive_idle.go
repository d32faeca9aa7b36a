//go:build linux || freebsd || netbsd || dragonfly

package sock

import "golang.org/x/sys/unix"

// tcpKeepIdle is the option of the idle time before the first probe.
const tcpKeepIdle = unix.TCP_KEEPIDLE
