//go:build unix

package loop

import (
	"testing"
	"time"

	"github.com/evloop/evloop/internal/poll"
	"golang.org/x/sys/unix"
)

// nappingLoop returns a loop driven by the test with RunOnce, and n socket
// pairs whose first ends it reads, counting the events in *served.
func nappingLoop(t *testing.T, nap time.Duration, n int) (l *Loop, peers []int, served *int) {
	t.Helper()
	l, err := New(Options{Nap: nap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Stop(); l.RunOnce(false); l.Close() })
	served = new(int)
	h := handlerFunc(func(fd int, _ poll.Flags) {
		var buf [64]byte
		unix.Read(fd, buf[:])
		*served++
	})
	for range n {
		a, b := socketpair(t)
		if err := l.Register(a, poll.Read, h); err != nil {
			t.Fatal(err)
		}
		peers = append(peers, b)
	}
	return l, peers, served
}

func poke(t *testing.T, fd int) {
	t.Helper()
	if _, err := unix.Write(fd, []byte{1}); err != nil {
		t.Fatal(err)
	}
}

// busy makes l serve one event, so that its next wait may nap.
func busy(t *testing.T, l *Loop, peer int, served *int) {
	t.Helper()
	before := *served
	poke(t, peer)
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if *served != before+1 {
		t.Fatalf("served %d events; want 1", *served-before)
	}
}

func TestNapServesWhatComesMeanwhileTogether(t *testing.T) {
	l, peers, served := nappingLoop(t, 300*time.Millisecond, 3)
	busy(t, l, peers[0], served)
	// Two events some time apart, both within the nap: without it the
	// loop would wake for the first alone.
	go func() {
		time.Sleep(10 * time.Millisecond)
		unix.Write(peers[1], []byte{1})
		time.Sleep(10 * time.Millisecond)
		unix.Write(peers[2], []byte{1})
	}()
	*served = 0
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if *served != 2 {
		t.Fatalf("the iteration after a nap served %d events; want both", *served)
	}
	if l.napBackoff != 0 || l.napSkip != 0 {
		t.Fatalf("after a nap that found two events: backoff %d, skip %d; want 0, 0", l.napBackoff, l.napSkip)
	}
}

func TestFruitlessNapsBackOff(t *testing.T) {
	l, peers, served := nappingLoop(t, 50*time.Microsecond, 1) // a raw nap (maxRawNap)
	idle := func() {
		t.Helper()
		// Nothing comes: the wait ends with a timer.
		fired := false
		l.AfterFunc(3*time.Millisecond, func() { fired = true })
		for !fired {
			if err := l.RunOnce(true); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []int{1, 2, 4, 8, 16, 32, 64, 64}
	for _, w := range want {
		// The nap is skipped in the busy waits the last backoff set.
		for range l.napSkip + 1 {
			busy(t, l, peers[0], served)
			idle()
		}
		if l.napBackoff != w || l.napSkip != w {
			t.Fatalf("backoff %d, skip %d; want %d", l.napBackoff, l.napSkip, w)
		}
	}
	// An idle loop does not nap: only a busy one uses up its skips.
	idle()
	idle()
	if l.napSkip != 64 {
		t.Fatalf("idle waits used up skips: %d left; want 64", l.napSkip)
	}
}

func TestTaskSubmittedDuringNapRuns(t *testing.T) {
	l, peers, served := nappingLoop(t, 50*time.Millisecond, 1)
	busy(t, l, peers[0], served)
	ran := false
	go func() {
		time.Sleep(5 * time.Millisecond)
		l.Submit(func() { ran = true })
	}()
	// The Submit during the nap does not wake the loop, which is not
	// waiting on the poller: the look for tasks after the nap finds it, or
	// the Submit came before the nap and woke the poller. Either way this
	// RunOnce runs it rather than block.
	for start := time.Now(); !ran; {
		if err := l.RunOnce(true); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the task did not run")
		}
	}
}

func TestNapNeverMakesATimerEarly(t *testing.T) {
	l, peers, served := nappingLoop(t, 20*time.Millisecond, 1)
	for range 5 {
		busy(t, l, peers[0], served)
		start := time.Now()
		var late time.Duration = -1
		l.AfterFunc(3*time.Millisecond, func() { late = time.Since(start) - 3*time.Millisecond })
		for late == -1 {
			if err := l.RunOnce(true); err != nil {
				t.Fatal(err)
			}
		}
		if late < 0 {
			t.Fatalf("timer fired %v early", -late)
		}
	}
}

func TestNoNapWithTasksQueued(t *testing.T) {
	l, peers, served := nappingLoop(t, time.Hour, 1)
	busy(t, l, peers[0], served)
	ran := false
	if err := l.Submit(func() { ran = true }); err != nil {
		t.Fatal(err)
	}
	// A nap of an hour would stop the test: the queued task is run first.
	if err := l.RunOnce(true); err != nil {
		t.Fatal(err)
	}
	if !ran {
		t.Fatal("the queued task did not run")
	}
}
