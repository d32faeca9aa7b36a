//go:build darwin

package sock

import "golang.org/x/sys/unix"

// setKeepAlivePeriod sets the idle time before the first probe, which macOS
// calls TCP_KEEPALIVE.
func setKeepAlivePeriod(fd, secs int) error {
	return setInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPALIVE, secs)
}
