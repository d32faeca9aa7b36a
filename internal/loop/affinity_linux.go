//go:build linux

package loop

import (
	"os"

	"golang.org/x/sys/unix"
)

// pinToCPU restricts the calling OS thread to the i-th of the CPUs it may
// run on (modulo their number), so that a process confined to some CPUs
// (taskset, a container's cpuset) pins its loops among them.
func pinToCPU(i int) error {
	if i < 0 {
		return os.NewSyscallError("sched_setaffinity", unix.EINVAL)
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
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
