//go:build unix && !linux && !darwin && !freebsd && !netbsd && !dragonfly

package sock

// setKeepAlivePeriod does nothing: OpenBSD and the rest set keep-alive
// timing for the whole system only (sysctl net.inet.tcp.keepidle).
func setKeepAlivePeriod(fd, secs int) error { return nil }
