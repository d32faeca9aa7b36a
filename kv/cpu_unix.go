//go:build unix

package kv

import (
	"time"

	"golang.org/x/sys/unix"
)

// cpuTimes returns the process's user and system CPU time, for INFO.
func cpuTimes() (user, sys time.Duration, ok bool) {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}
