//go:build unix && !linux && !darwin && !freebsd && !netbsd && !dragonfly

package sock

// setKeepAliveTimes does nothing: OpenBSD and the rest set keep-alive
// timing for the whole system only (sysctl net.inet.tcp.keepidle).
func setKeepAliveTimes(fd, idle, interval, count int) error { return nil }
