//go:build !linux

package loop

import "time"

// nap sleeps for d. The runtime's timers wait on kqueue, whose timeouts
// are exact to the nanosecond.
func nap(d time.Duration) { time.Sleep(d) }
