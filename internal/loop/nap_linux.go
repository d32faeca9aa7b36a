package loop

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// napSlack is the timer slack a nap's thread is given: the kernel's
// default, 50µs, would let a nap of 20µs last 70µs.
const napSlack = time.Microsecond

// maxRawNap is the longest nap taken out of the runtime's sight.
const maxRawNap = 100 * time.Microsecond

// nap sleeps the calling thread for d. It holds its P meanwhile, as a
// parked goroutine would not, because the runtime's own timers could not
// wake it in time: its poller waits in whole milliseconds.
//
// A nap of up to maxRawNap is a raw system call, which the runtime does
// not see: seen, the runtime's monitor took the P from each nap that
// outlasted its 20µs tick, and kept waking every 20µs to do so, on the
// loop's CPU (with 1,000 redis-benchmark clients on one pinned CPU, a
// tenth of the loop's time went to the monitor's wake-ups and the
// switches they caused). A longer nap is a system call the runtime
// knows of, so that it cannot hold up a garbage collection for long.
func nap(d time.Duration) {
	// The slack is the thread's, and a goroutine is not tied to one:
	// setting it each time costs less than a nap by far.
	unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_TIMERSLACK, uintptr(napSlack), 0, 0, 0, 0)
	ts := unix.NsecToTimespec(int64(d))
	if d <= maxRawNap {
		unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		return
	}
	unix.Nanosleep(&ts, nil) // an interrupted nap is just shorter
}
