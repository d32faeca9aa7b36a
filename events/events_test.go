//go:build unix

package events

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newLoop[K comparable](t *testing.T) *Loop[K] {
	t.Helper()
	l, err := New[K]()
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func pipe(t *testing.T) (r, w int) {
	t.Helper()
	fds := rawPipe(t)
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// rawPipe returns a non-blocking pipe that the caller closes.
func rawPipe(t *testing.T) [2]int {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		t.Fatalf("pipe: %v", err)
	}
	for _, fd := range fds {
		unix.SetNonblock(fd, true)
	}
	return fds
}

func write(t *testing.T, fd int) {
	t.Helper()
	if _, err := unix.Write(fd, []byte("x")); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// ready returns the keys of one iteration that does not block: Signal
// turns the wait into a poll, and the keys it queued are then drained.
func ready[K comparable](t *testing.T, l *Loop[K]) []K {
	t.Helper()
	l.Signal()
	if k, err := l.Next(); !errors.Is(err, ErrSignaled) {
		t.Fatalf("Next after Signal = %v, %v; want ErrSignaled", k, err)
	}
	var keys []K
	for l.Queued() > 0 {
		keys = append(keys, next(t, l))
	}
	return keys
}

// next returns the next key, failing the test if it takes too long.
func next[K comparable](t *testing.T, l *Loop[K]) K {
	t.Helper()
	timer := time.AfterFunc(10*time.Second, l.Signal)
	defer timer.Stop()
	k, err := l.Next()
	if err != nil {
		t.Fatalf("Next = %v, %v; want a key", k, err)
	}
	return k
}

// blockedNext runs Next on a new goroutine (which becomes the loop's owner
// until it returns) and waits until the loop is blocked in the kernel.
func blockedNext[K comparable](t *testing.T, l *Loop[K]) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := l.Next()
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !l.Sleeping() {
		if time.Now().After(deadline) {
			t.Fatal("loop never went to sleep")
		}
		runtime.Gosched()
	}
	return done
}

func waitErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("blocked Next never returned")
		return nil
	}
}

func TestEmitManyGoroutinesNoneLostNoneDuplicated(t *testing.T) {
	type key struct{ g, i int }
	const goroutines, each = 8, 100_000
	l := newLoop[key](t)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := l.Emit(key{g, i}); err != nil {
					t.Errorf("Emit: %v", err)
					return
				}
			}
		}()
	}
	nextWant := make([]int, goroutines)
	for range goroutines * each {
		k := next(t, l)
		if k.i != nextWant[k.g] {
			t.Fatalf("got %v; want {%d %d}: an emit was lost, duplicated or reordered", k, k.g, nextWant[k.g])
		}
		nextWant[k.g]++
	}
	wg.Wait()
	if extra := ready(t, l); len(extra) != 0 {
		t.Fatalf("%d keys delivered beyond the %d emitted", len(extra), goroutines*each)
	}
}

func TestEmitSignalStopWakeBlockedWait(t *testing.T) {
	l := newLoop[string](t)
	done := blockedNext(t, l)
	if err := l.Emit("hello"); err != nil {
		t.Fatal(err)
	}
	if err := waitErr(t, done); err != nil {
		t.Fatalf("Next after Emit = %v; want the key", err)
	}

	done = blockedNext(t, l)
	l.Signal()
	if err := waitErr(t, done); !errors.Is(err, ErrSignaled) {
		t.Fatalf("Next after Signal = %v; want ErrSignaled", err)
	}

	done = blockedNext(t, l)
	l.Stop()
	if err := waitErr(t, done); !errors.Is(err, ErrStopped) {
		t.Fatalf("Next after Stop = %v; want ErrStopped", err)
	}
	if _, err := l.Next(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Next after a stopped Next = %v; want ErrStopped", err)
	}
}

func TestSignalWithReadyFd(t *testing.T) {
	l := newLoop[string](t)
	r, w := pipe(t)
	write(t, w)
	if err := l.WatchIO("r", r, Read, false); err != nil {
		t.Fatal(err)
	}
	l.Signal()
	if _, err := l.Next(); !errors.Is(err, ErrSignaled) {
		t.Fatalf("Next after Signal with a ready fd = %v; want ErrSignaled", err)
	}
	if k := next(t, l); k != "r" {
		t.Fatalf("Next = %q; want r, queued by the signaled poll", k)
	}
}

func TestStopDeliversAcceptedEmits(t *testing.T) {
	l := newLoop[int](t)
	r, w := pipe(t)
	write(t, w)
	if err := l.WatchIO(-1, r, Read, false); err != nil {
		t.Fatal(err)
	}
	ready(t, l) // the watch is queued again below, then dropped at Stop
	for i := range 100 {
		if err := l.Emit(i); err != nil {
			t.Fatal(err)
		}
	}
	l.Signal()
	l.Next() // moves the emits and the ready watch into the queue
	l.Stop()
	for i := range 100 {
		k, err := l.Next()
		if err != nil || k != i {
			t.Fatalf("Next after Stop = %d, %v; want emitted key %d", k, err, i)
		}
	}
	if k, err := l.Next(); !errors.Is(err, ErrStopped) {
		t.Fatalf("Next = %d, %v; want ErrStopped once the emits are out", k, err)
	}
}

func TestHugeTimerDurations(t *testing.T) {
	l := newLoop[string](t)
	if err := l.WatchTimer("never", math.MaxInt64, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.WatchTimer("rare", time.Millisecond, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	if k := next(t, l); k != "rare" {
		t.Fatalf("Next = %q; want rare", k)
	}
	for range 3 {
		if got := ready(t, l); len(got) != 0 {
			t.Fatalf("ready = %v; want none: a huge interval must not wrap into the past", got)
		}
	}
}

func TestSignalBeforeNextIsNotLost(t *testing.T) {
	l := newLoop[int](t)
	l.Signal()
	if _, err := l.Next(); !errors.Is(err, ErrSignaled) {
		t.Fatalf("Next = %v; want ErrSignaled", err)
	}
}

func TestIOReadiness(t *testing.T) {
	l := newLoop[string](t)
	r, w := pipe(t)
	if err := l.WatchIO("r", r, Read, false); err != nil {
		t.Fatal(err)
	}
	if err := l.WatchIO("w", w, Write, false); err != nil {
		t.Fatal(err)
	}
	if got := ready(t, l); len(got) != 1 || got[0] != "w" {
		t.Fatalf("ready = %v; want [w]", got)
	}
	write(t, w)
	got := ready(t, l)
	if len(got) != 2 {
		t.Fatalf("ready = %v; want r and w", got)
	}
}

func TestReadAndWriteKeysOnOneFd(t *testing.T) {
	l := newLoop[string](t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.SetNonblock(fds[0], true)
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if err := l.WatchIO("read", fds[0], Read, false); err != nil {
		t.Fatal(err)
	}
	if err := l.WatchIO("write", fds[0], Write, false); err != nil {
		t.Fatalf("second direction on one fd: %v", err)
	}
	if err := l.WatchIO("again", fds[0], Read, false); !errors.Is(err, ErrFDInUse) {
		t.Fatalf("third watch = %v; want ErrFDInUse", err)
	}
	if got := ready(t, l); len(got) != 1 || got[0] != "write" {
		t.Fatalf("ready = %v; want [write]", got)
	}
	write(t, fds[1])
	if got := ready(t, l); len(got) != 2 {
		t.Fatalf("ready = %v; want read and write", got)
	}
	if err := l.Unwatch("write"); err != nil {
		t.Fatal(err)
	}
	if got := ready(t, l); len(got) != 1 || got[0] != "read" {
		t.Fatalf("after Unwatch(write): ready = %v; want [read]", got)
	}
}

func TestOneshotVsRepeatingIO(t *testing.T) {
	l := newLoop[string](t)
	r1, w1 := pipe(t)
	r2, w2 := pipe(t)
	if err := l.WatchIO("once", r1, Read, true); err != nil {
		t.Fatal(err)
	}
	if err := l.WatchIO("always", r2, Read, false); err != nil {
		t.Fatal(err)
	}
	write(t, w1)
	write(t, w2)
	counts := map[string]int{}
	for range 5 {
		for _, k := range ready(t, l) {
			counts[k]++
		}
	}
	if counts["once"] != 1 || counts["always"] != 5 {
		t.Fatalf("deliveries over 5 polls of still-readable fds = %v; want once:1 always:5", counts)
	}
	// The one-shot is unwatched: its key is free, and watching again re-arms it.
	if err := l.Unwatch("once"); !errors.Is(err, ErrNotWatched) {
		t.Fatalf("Unwatch of a fired one-shot = %v; want ErrNotWatched", err)
	}
	if err := l.WatchIO("once", r1, Read, true); err != nil {
		t.Fatalf("re-watch after one-shot: %v", err)
	}
	if got := ready(t, l); len(got) != 2 {
		t.Fatalf("ready = %v; want once and always", got)
	}
}

func TestOneshotVsRepeatingTimers(t *testing.T) {
	l := newLoop[string](t)
	if err := l.WatchTimer("once", time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	const every = 3 * time.Millisecond
	if err := l.WatchTimer("tick", every, every); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var ticks []time.Duration
	once := 0
	for len(ticks) < 5 {
		switch next(t, l) {
		case "once":
			once++
		case "tick":
			ticks = append(ticks, time.Since(start))
		}
	}
	if once != 1 {
		t.Errorf("one-shot delivered %d times; want 1", once)
	}
	for i, at := range ticks {
		if min := time.Duration(i+1) * every; at < min {
			t.Errorf("tick %d at %v; not before %v", i, at, min)
		}
	}
	if err := l.Unwatch("tick"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * every) // a tick would be due here if the timer survived Unwatch
	if got := ready(t, l); len(got) != 0 {
		t.Fatalf("after Unwatch: ready = %v; want none", got)
	}
}

func TestTimersNeverEarlyAndInDeadlineOrder(t *testing.T) {
	l := newLoop[int](t)
	delays := []time.Duration{25, 3, 12, 0, 7, 7, 18, 1, 30, 12}
	start := time.Now()
	due := make([]time.Duration, len(delays))
	for i, d := range delays {
		due[i] = time.Since(start) + d*time.Millisecond
		if err := l.WatchTimer(i, d*time.Millisecond, 0); err != nil {
			t.Fatal(err)
		}
	}
	last := -1
	for range delays {
		k := next(t, l)
		if at := time.Since(start); at < due[k] {
			t.Errorf("timer %d delivered at %v; due at %v", k, at, due[k])
		}
		if last >= 0 && (delays[k] < delays[last] || (delays[k] == delays[last] && k < last)) {
			t.Errorf("timer %d (%dms) delivered after timer %d (%dms)", k, delays[k], last, delays[last])
		}
		last = k
	}
}

func TestUnwatchFromOwnDispatch(t *testing.T) {
	l := newLoop[string](t)
	r1, w1 := pipe(t)
	r2, w2 := pipe(t)
	r3, _ := pipe(t)
	if err := l.WatchIO("a", r1, Read, false); err != nil {
		t.Fatal(err)
	}
	if err := l.WatchIO("b", r2, Read, false); err != nil {
		t.Fatal(err)
	}
	write(t, w1)
	write(t, w2) // both queued in one iteration
	first := next(t, l)
	other := map[string]string{"a": "b", "b": "a"}[first]
	// Inside first's dispatch: unwatch itself, watch its key again on an fd
	// that is not ready, and unwatch the other key, already queued.
	if err := l.Unwatch(first); err != nil {
		t.Fatalf("Unwatch(%s) from its own dispatch: %v", first, err)
	}
	if err := l.WatchIO(first, r3, Read, false); err != nil {
		t.Fatalf("re-watch %s: %v", first, err)
	}
	if err := l.Unwatch(other); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if got := ready(t, l); len(got) != 0 {
			t.Fatalf("after unwatching: ready = %v; want none (fds still readable)", got)
		}
	}
}

func TestWatchedFdClosedByApplication(t *testing.T) {
	l := newLoop[string](t)
	fds := rawPipe(t)
	defer unix.Close(fds[1])
	if err := l.WatchIO("old", fds[0], Read, false); err != nil {
		t.Fatal(err)
	}
	unix.Write(fds[1], []byte("x"))
	unix.Close(fds[0]) // behind the loop's back
	if got := ready(t, l); len(got) != 0 {
		t.Fatalf("ready after close = %v; want none", got)
	}
	// A new fd takes the number; it cannot be watched until the old key is
	// unwatched, and then it works and delivers only its own key.
	r, w := pipe(t)
	if r == fds[0] {
		if err := l.WatchIO("new", r, Read, false); !errors.Is(err, ErrFDInUse) {
			t.Fatalf("WatchIO on the reused number before Unwatch = %v; want ErrFDInUse", err)
		}
	}
	if err := l.Unwatch("old"); err != nil {
		t.Fatalf("Unwatch of a closed fd's key = %v; want nil", err)
	}
	if err := l.WatchIO("new", r, Read, false); err != nil {
		t.Fatal(err)
	}
	write(t, w)
	if got := ready(t, l); len(got) != 1 || got[0] != "new" {
		t.Fatalf("ready = %v; want [new]", got)
	}
}

func TestBadInput(t *testing.T) {
	l := newLoop[any](t)
	r, w := pipe(t)
	closedR, closedW := pipe(t)
	unix.Close(closedR)
	unix.Close(closedW)
	if err := l.WatchIO("taken", r, Read, false); err != nil {
		t.Fatal(err)
	}
	if err := l.WatchTimer("timer", time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"WatchIO nil key", l.WatchIO(nil, w, Write, false), ErrNilKey},
		{"WatchIO unhashable key", l.WatchIO([]int{1}, w, Write, false), ErrBadKey},
		{"WatchIO negative fd", l.WatchIO("neg", -1, Read, false), ErrBadFD},
		{"WatchIO zero mode", l.WatchIO("mode", w, 0, false), ErrBadMode},
		{"WatchIO bad mode", l.WatchIO("mode", w, 8, false), ErrBadMode},
		{"WatchIO same key twice", l.WatchIO("taken", w, Write, false), ErrKeyInUse},
		{"WatchIO timer's key", l.WatchIO("timer", w, Write, false), ErrKeyInUse},
		{"WatchIO fd taken in that mode", l.WatchIO("other", r, Read, false), ErrFDInUse},
		{"WatchTimer same key twice", l.WatchTimer("timer", time.Second, 0), ErrKeyInUse},
		{"WatchTimer nil key", l.WatchTimer(nil, time.Second, 0), ErrNilKey},
		{"WatchTimer negative interval", l.WatchTimer("neg", time.Second, -1), ErrBadDuration},
		{"Unwatch unknown", l.Unwatch("nobody"), ErrNotWatched},
		{"Unwatch nil", l.Unwatch(nil), ErrNilKey},
		{"Unwatch unhashable", l.Unwatch(map[int]int{}), ErrBadKey},
		{"Emit nil", l.Emit(nil), ErrNilKey},
		{"WatchTimer struct key holding a slice", l.WatchTimer(struct{ v any }{[]byte("x")}, time.Second, 0), ErrBadKey},
		{"Unwatch array key holding a map", l.Unwatch([1]any{map[int]int{}}), ErrBadKey},
	}
	for _, tc := range tests {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s = %v; want %v", tc.name, tc.err, tc.want)
		}
	}
	if err := l.WatchIO("closed", closedR, Read, false); !errors.Is(err, ErrBadFD) {
		t.Errorf("WatchIO of a closed fd = %v; want ErrBadFD", err)
	}
	// Failed calls left nothing behind: the keys are free, the loop works.
	if err := l.WatchIO("closed", w, Write, false); err != nil {
		t.Errorf("WatchIO after a failed one: %v", err)
	}
	if got := ready(t, l); len(got) != 1 || got[0] != "closed" {
		t.Errorf("ready = %v; want [closed]", got)
	}
}

func TestCallsAfterStop(t *testing.T) {
	l := newLoop[string](t)
	r, _ := pipe(t)
	l.Stop()
	l.Stop() // twice is fine
	if err := l.WatchIO("k", r, Read, false); !errors.Is(err, ErrStopped) {
		t.Errorf("WatchIO after Stop = %v; want ErrStopped", err)
	}
	if err := l.WatchTimer("t", 0, 0); !errors.Is(err, ErrStopped) {
		t.Errorf("WatchTimer after Stop = %v; want ErrStopped", err)
	}
	if err := l.Emit("e"); !errors.Is(err, ErrStopped) {
		t.Errorf("Emit after Stop = %v; want ErrStopped", err)
	}
	if _, err := l.Next(); !errors.Is(err, ErrStopped) {
		t.Errorf("Next after Stop = %v; want ErrStopped", err)
	}
	if err := l.Unwatch("k"); !errors.Is(err, ErrStopped) {
		t.Errorf("Unwatch after Close = %v; want ErrStopped", err)
	}
	l.Signal() // harmless
	if err := l.Close(); err != nil {
		t.Errorf("Close after Stop = %v", err)
	}
}

func TestEventsIterator(t *testing.T) {
	l := newLoop[int](t)
	for i := range 5 {
		l.Emit(i)
	}
	l.Signal() // does not end the iteration
	var got []int
	for k := range l.Events() {
		got = append(got, k)
		if k == 4 {
			go l.Stop()
		}
	}
	if len(got) != 5 || l.Err() != nil {
		t.Fatalf("Events = %v, Err = %v; want [0 1 2 3 4], nil", got, l.Err())
	}
}

func TestMillionTimersBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a million timers")
	}
	l := newLoop[int](t)
	const n = 1_000_000
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	var first uint64
	for round := range 3 {
		for i := range n {
			if err := l.WatchTimer(i, time.Hour, 0); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			if err := l.Unwatch(i); err != nil {
				t.Fatal(err)
			}
		}
		if got := ready(t, l); len(got) != 0 {
			t.Fatalf("cancelled timers delivered %d keys", len(got))
		}
		if round == 0 {
			first = heap()
		} else if got := heap(); got > first+first/10+4<<20 {
			t.Fatalf("round %d: heap in use %d bytes, %d after round 0: memory grows", round, got, first)
		}
	}
}

// TestSteadyStateDoesNotAllocate: the event path from wait to Next
// returning allocates nothing once warm, for I/O and for Emit.
func TestSteadyStateDoesNotAllocate(t *testing.T) {
	l := newLoop[int](t)
	r, w := pipe(t)
	write(t, w)
	if err := l.WatchIO(1, r, Read, false); err != nil {
		t.Fatal(err)
	}
	if err := l.WatchTimer(2, 0, time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(1000, func() { l.Next() }); n != 0 {
		t.Errorf("Next with I/O and timers ready: %v allocs; want 0", n)
	}
	l.Unwatch(1)
	l.Unwatch(2)
	if n := testing.AllocsPerRun(1000, func() {
		l.Emit(3)
		if k, err := l.Next(); k != 3 || err != nil {
			t.Fatalf("Next = %v, %v; want 3", k, err)
		}
	}); n != 0 {
		t.Errorf("Emit and Next: %v allocs; want 0", n)
	}
}

// A key not equal to itself (a NaN, or a struct holding one), which a map
// would never find again, is refused by the calls that keep keys.
func TestNaNKeyRefused(t *testing.T) {
	l := newLoop[float64](t)
	if err := l.WatchTimer(math.NaN(), 0, 1e6); !errors.Is(err, ErrBadKey) {
		t.Fatalf("WatchTimer(NaN) = %v; want ErrBadKey", err)
	}
	type pair struct {
		name string
		v    float64
	}
	p := newLoop[pair](t)
	if err := p.WatchTimer(pair{"x", math.NaN()}, 0, 1e6); !errors.Is(err, ErrBadKey) {
		t.Fatalf("WatchTimer of a key holding NaN = %v; want ErrBadKey", err)
	}
	if err := p.WatchTimer(pair{"x", 1}, 0, 1e6); err != nil {
		t.Fatalf("WatchTimer of a good key = %v", err)
	}
	if err := p.Unwatch(pair{"x", 1}); err != nil {
		t.Fatalf("Unwatch of a good key = %v", err)
	}
}

// A Write watch on an fd that hangs up with no writability to report (a
// pipe's read end, whose writer closed) is delivered: a write to it does
// not block. Before, the kernel reported the hang-up at every wait and the
// loop went round without ever delivering the key.
func TestWriteWatchDeliveredOnHangup(t *testing.T) {
	l := newLoop[string](t)
	fds := rawPipe(t)
	defer unix.Close(fds[0])
	if err := l.WatchIO("w", fds[0], Write, false); err != nil {
		t.Skipf("WatchIO(Write) of a pipe's read end: %v", err)
	}
	unix.Close(fds[1])
	if got := ready(t, l); len(got) != 1 || got[0] != "w" {
		t.Fatalf("ready after hang-up = %v; want [w]", got)
	}
}

// An fd with a Read and a Write key, closed behind the loop's back: each
// key is unwatched without an error, and until both are, its number is
// taken, in either direction.
func TestWatchedFdClosedWithBothDirections(t *testing.T) {
	l := newLoop[string](t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	old := fds[0]
	if err := l.WatchIO("r", old, Read, false); err != nil {
		t.Fatal(err)
	}
	if err := l.WatchIO("w", old, Write, false); err != nil {
		t.Fatal(err)
	}
	unix.Close(old)
	r, w := pipe(t) // takes the closed number
	if r != old {
		t.Skipf("fd %d not reused (got %d)", old, r)
	}
	if err := l.Unwatch("r"); err != nil {
		t.Fatalf("Unwatch(r) of a closed fd = %v; want nil", err)
	}
	if err := l.WatchIO("new", r, Read, false); !errors.Is(err, ErrFDInUse) {
		t.Fatalf("WatchIO(Read) of the reused number while w is watched = %v; want ErrFDInUse", err)
	}
	if err := l.Unwatch("w"); err != nil {
		t.Fatalf("Unwatch(w) of a closed fd = %v; want nil", err)
	}
	if err := l.WatchIO("new", r, Read, false); err != nil {
		t.Fatalf("WatchIO of the reused number once free = %v", err)
	}
	write(t, w)
	if got := ready(t, l); len(got) != 1 || got[0] != "new" {
		t.Fatalf("ready = %v; want [new]", got)
	}
}

// A regular file, which epoll refuses to watch, is always ready, as poll(2)
// and libev (under Ever) have it: the doc's stdin may be redirected from
// one. Before, WatchIO failed with EPERM on Linux.
func TestRegularFileAlwaysReady(t *testing.T) {
	l := newLoop[string](t)
	f, err := os.CreateTemp(t.TempDir(), "events")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Bytes ahead of the offset: kqueue reports a regular file readable
	// only then.
	if _, err := f.WriteAt([]byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	fd := int(f.Fd())
	if err := l.WatchIO("file", fd, Read, false); err != nil {
		t.Fatalf("WatchIO of a regular file = %v", err)
	}
	if err := l.WatchIO("once", fd, Write, true); err != nil {
		t.Fatalf("WatchIO(Write) of a regular file = %v", err)
	}
	if got := ready(t, l); len(got) != 2 {
		t.Fatalf("ready = %v; want file and once", got)
	}
	if k := next(t, l); k != "file" { // a blocking Next does not block
		t.Fatalf("Next = %q; want file", k)
	}
	if err := l.Unwatch("once"); !errors.Is(err, ErrNotWatched) {
		t.Fatalf("Unwatch of a fired one-shot = %v; want ErrNotWatched", err)
	}
	if err := l.WatchIO("again", fd, Read, false); !errors.Is(err, ErrFDInUse) {
		t.Fatalf("second Read watch = %v; want ErrFDInUse", err)
	}
	if err := l.Unwatch("file"); err != nil {
		t.Fatal(err)
	}
	if got := ready(t, l); len(got) != 0 {
		t.Fatalf("after Unwatch: ready = %v; want none", got)
	}
	if err := l.WatchIO("again", fd, ReadWrite, false); err != nil {
		t.Fatalf("WatchIO after Unwatch = %v", err)
	}
	if got := ready(t, l); len(got) != 1 || got[0] != "again" {
		t.Fatalf("ready = %v; want [again]", got)
	}
}

// A burst of deliveries does not leave its queue's memory behind once
// Next has returned them, as drainEmits does not keep its batch's.
func TestBurstQueueReleased(t *testing.T) {
	l := newLoop[int](t)
	const n = 1 << 18
	for i := range n {
		if err := l.Emit(i); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if k := next(t, l); k != i {
			t.Fatalf("Next = %d; want %d", k, i)
		}
	}
	if c := cap(l.ready); c > 1<<16 {
		t.Fatalf("ready queue's capacity after the burst = %d; want at most %d", c, 1<<16)
	}
}

// TestErrAfterPollerFailure: Err says what ended the last iteration over
// Events. A poller failure ends one, and Err returns it; the loop goes on,
// and a later iteration that the caller breaks out of leaves Err nil, as
// its doc says.
func TestErrAfterPollerFailure(t *testing.T) {
	l := newLoop[int](t)
	broken := errors.New("poller broken")
	step := l.step
	fail := true
	l.step = func(block bool) error {
		if fail {
			fail = false
			return broken
		}
		return step(block)
	}
	for k := range l.Events() {
		t.Fatalf("Events yielded %d; want none", k)
	}
	if err := l.Err(); !errors.Is(err, broken) {
		t.Fatalf("Err after a poller failure = %v; want %v", err, broken)
	}
	l.Emit(7)
	var got []int
	for k := range l.Events() {
		got = append(got, k)
		break
	}
	if len(got) != 1 || got[0] != 7 || l.Err() != nil {
		t.Fatalf("Events after the failure = %v, Err = %v; want [7], nil", got, l.Err())
	}
}

// A watched fd closed behind the loop's back, whose number a regular file
// (which epoll cannot poll) then takes: the number stays taken, in either
// direction, until the old key is unwatched, and Unwatch frees it without
// an error, as for any other file. Before, the kernel's EPERM for the
// file was taken for a failure: Unwatch returned it, and so did WatchIO
// in the other direction, where ErrFDInUse was due.
func TestWatchedFdReusedByRegularFile(t *testing.T) {
	l := newLoop[string](t)
	fds := rawPipe(t)
	defer unix.Close(fds[1])
	old := fds[0]
	if err := l.WatchIO("old", old, Read, false); err != nil {
		t.Fatal(err)
	}
	unix.Close(old)
	fd, err := unix.Open(filepath.Join(t.TempDir(), "file"), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if fd != old {
		t.Skipf("fd %d not reused (got %d)", old, fd)
	}
	if err := l.WatchIO("new", fd, Write, false); !errors.Is(err, ErrFDInUse) {
		t.Fatalf("WatchIO(Write) of the number a file took while old is watched = %v; want ErrFDInUse", err)
	}
	if err := l.WatchIO("new", fd, Read, false); !errors.Is(err, ErrFDInUse) {
		t.Fatalf("WatchIO(Read) of the number a file took while old is watched = %v; want ErrFDInUse", err)
	}
	if err := l.Unwatch("old"); err != nil {
		t.Fatalf("Unwatch of a closed fd's key, its number now a file's = %v; want nil", err)
	}
	if err := l.WatchIO("new", fd, Read, false); err != nil {
		t.Fatalf("WatchIO of the file once the number is free = %v", err)
	}
	if got := ready(t, l); len(got) != 1 || got[0] != "new" {
		t.Fatalf("ready = %v; want [new]", got)
	}
}
