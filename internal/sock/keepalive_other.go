//go:build openbsd

package sock

// setKeepAliveTimes does nothing: OpenBSD sets keep-alive timing for the
// whole system only (sysctl net.inet.tcp.keepidle).
func setKeepAliveTimes(fd, idle, interval, count int) error { return nil }
