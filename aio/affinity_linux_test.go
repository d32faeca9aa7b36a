package aio

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestSetLoopAffinityMoves: each SetLoopAffinity pins the loop to the CPU
// it names, as gaio's does, the second one too.
func TestSetLoopAffinityMoves(t *testing.T) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for cpu := 0; len(cpus) < allowed.Count(); cpu++ {
		if allowed.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	if len(cpus) < 2 {
		t.Skip("needs two CPUs")
	}
	w := newWatcher(t, 0)
	loopCPUs := func() unix.CPUSet {
		got := make(chan unix.CPUSet, 1)
		w.l.Submit(func() {
			var set unix.CPUSet
			unix.SchedGetaffinity(0, &set)
			got <- set
		})
		return <-got
	}
	for _, i := range []int{0, 1, 0} {
		if err := w.SetLoopAffinity(i); err != nil {
			t.Fatalf("SetLoopAffinity(%d) = %v", i, err)
		}
		if set := loopCPUs(); set.Count() != 1 || !set.IsSet(cpus[i]) {
			t.Fatalf("after SetLoopAffinity(%d), the loop's thread may run on %d CPUs (CPU %d: %v); want CPU %d alone",
				i, set.Count(), cpus[i], set.IsSet(cpus[i]), cpus[i])
		}
	}
}
