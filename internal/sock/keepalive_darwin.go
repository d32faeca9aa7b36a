package sock

import "golang.org/x/sys/unix"

// tcpKeepIdle is the option of the idle time before the first probe,
// which macOS calls TCP_KEEPALIVE.
const tcpKeepIdle = unix.TCP_KEEPALIVE
