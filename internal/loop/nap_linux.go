package loop

import (
	"time"

	"golang.org/x/sys/unix"
)

// napSlack is the timer slack a nap's thread is given: the kernel's
// default, 50µs, would let a nap of 20µs last 70µs.
const napSlack = time.Microsecond

// nap sleeps the calling thread for d. It holds its P meanwhile, as a
// parked goroutine would not, because the runtime's own timers could not
// wake it in time: its poller waits in whole milliseconds.
func nap(d time.Duration) {
	// The slack is the thread's, and a goroutine is not tied to one:
	// setting it each time costs less than a nap by far.
	unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(napSlack), 0, 0, 0)
	ts := unix.NsecToTimespec(int64(d))
	unix.Nanosleep(&ts, nil) // an interrupted nap is just shorter
}
