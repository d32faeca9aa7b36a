//go:build linux

package loop

import (
	"os"

	"golang.org/x/sys/unix"
)

// pinToCPU restricts the calling OS thread to cpu.
func pinToCPU(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return os.NewSyscallError("sched_setaffinity", err)
	}
	return nil
}
