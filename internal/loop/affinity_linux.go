//go:build linux

package loop

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// allowedCPUs is the set of CPUs the process may run on. It is read once,
// by the first pinToCPU, before any thread is pinned: the set of a thread
// pinned already is its one CPU, and a loop that Pin moves again would be
// numbering the CPUs from that set, every number naming that one CPU.
var allowedCPUs = sync.OnceValues(func() (unix.CPUSet, error) {
	var set unix.CPUSet
	err := unix.SchedGetaffinity(0, &set)
	return set, err
})

// pinToCPU restricts the calling OS thread to the i-th of the CPUs the
// process may run on (modulo their number), so that a process confined to
// some CPUs (taskset, a container's cpuset) pins its loops among them.
func pinToCPU(i int) error {
	if i < 0 {
		return os.NewSyscallError("sched_setaffinity", unix.EINVAL)
	}
	allowed, err := allowedCPUs()
	if err != nil {
		return os.NewSyscallError("sched_getaffinity", err)
	}
	n := allowed.Count()
	if n == 0 {
		return os.NewSyscallError("sched_getaffinity", unix.EINVAL)
	}
	i %= n
	var set unix.CPUSet
	for cpu := 0; ; cpu++ {
		if allowed.IsSet(cpu) {
			if i == 0 {
				set.Set(cpu)
				break
			}
			i--
		}
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return os.NewSyscallError("sched_setaffinity", err)
	}
	return nil
}
