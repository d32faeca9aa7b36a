//go:build linux

package sock

import "golang.org/x/sys/unix"

func setKeepAlivePeriod(fd, secs int) error {
	if err := setInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, secs); err != nil {
		return err
	}
	return setInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs)
}
