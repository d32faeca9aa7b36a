//go:build !unix

package kv

import "time"

// cpuTimes reports no CPU times where getrusage is missing.
func cpuTimes() (user, sys time.Duration, ok bool) { return 0, 0, false }
