//go:build linux || darwin || freebsd || netbsd || dragonfly

package sock

import "golang.org/x/sys/unix"

// setKeepAliveTimes sets the idle time and the interval in seconds and the
// probe count, each if above 0.
func setKeepAliveTimes(fd, idle, interval, count int) error {
	for _, o := range [...]struct{ opt, v int }{{tcpKeepIdle, idle}, {unix.TCP_KEEPINTVL, interval}, {unix.TCP_KEEPCNT, count}} {
		if o.v > 0 {
			if err := setInt(fd, unix.IPPROTO_TCP, o.opt, o.v); err != nil {
				return err
			}
		}
	}
	return nil
}
