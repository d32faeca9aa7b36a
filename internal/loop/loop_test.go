//go:build unix

package loop

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/poll"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is a log sink safe for the loop goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newLoop(t *testing.T, opts Options) *Loop {
	t.Helper()
	l, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(l.Stop)
	return l
}

func startLoop(t *testing.T, opts Options) *Loop {
	t.Helper()
	l := newLoop(t, opts)
	if err := l.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return l
}

// onLoop runs fn on the loop and waits for it.
func onLoop(t *testing.T, l *Loop, fn func()) {
	t.Helper()
	done := make(chan struct{})
	if err := l.Submit(func() { fn(); close(done) }); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("task did not run")
	}
}

func socketpair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	unix.SetNonblock(fds[0], true)
	unix.SetNonblock(fds[1], true)
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

type handlerFunc func(fd int, ev poll.Flags)

func (f handlerFunc) HandleIO(fd int, ev poll.Flags) { f(fd, ev) }

func TestSubmitFromManyGoroutinesKeepsOrder(t *testing.T) {
	l := startLoop(t, Options{})
	const producers, each = 8, 20_000
	got := make([][]int, producers) // touched only on the loop
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := l.Submit(func() { got[p] = append(got[p], i) }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	onLoop(t, l, func() {
		for p, seq := range got {
			if len(seq) != each {
				t.Errorf("producer %d: %d tasks ran; want %d", p, len(seq), each)
				continue
			}
			for i, v := range seq {
				if v != i {
					t.Errorf("producer %d: task %d ran as #%d: order lost", p, v, i)
					break
				}
			}
		}
	})
}

func TestSubmitWakesBlockedLoop(t *testing.T) {
	t.Run("parked", func(t *testing.T) { submitWakes(t, Options{}) })
	t.Run("blocking", func(t *testing.T) { submitWakes(t, Options{BlockingPoll: true}) })
}

func submitWakes(t *testing.T, opts Options) {
	l := startLoop(t, opts)
	for range 100 {
		// Each round lets the loop go back to sleep before submitting.
		before := l.Stats().Iterations
		onLoop(t, l, func() {})
		if l.Stats().Iterations == before {
			t.Fatal("task ran without an iteration")
		}
	}
}

func TestStop(t *testing.T) {
	before := runtime.NumGoroutine()
	l, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(); err != nil {
		t.Fatal(err)
	}
	if err := l.Start(); !errors.Is(err, ErrRunning) {
		t.Errorf("second Start = %v; want ErrRunning", err)
	}
	var ran atomic.Int32
	block := make(chan struct{})
	l.Submit(func() { <-block })
	for range 100 {
		l.Submit(func() { ran.Add(1) })
	}
	stopped := make(chan struct{})
	go func() { l.Stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while a task was still running")
	case <-time.After(20 * time.Millisecond):
	}
	close(block)
	<-stopped
	if got := ran.Load(); got != 100 {
		t.Errorf("%d of 100 queued tasks ran before Stop returned", got)
	}
	// The goroutine that called Stop may not have returned yet; the loop's
	// own goroutine must be gone once it has.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > before {
		t.Errorf("goroutines after Stop = %d; want at most %d", got, before)
	}
	if err := l.Submit(func() {}); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Stop = %v; want ErrClosed", err)
	}
	if err := l.Start(); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Stop = %v; want ErrClosed", err)
	}
	if err := l.RunOnce(false); !errors.Is(err, ErrClosed) {
		t.Errorf("RunOnce after Stop = %v; want ErrClosed", err)
	}
	l.Stop() // twice is fine
	l.StopAsync()
}

func TestStopNeverStarted(t *testing.T) {
	l, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Stop()
	if err := l.Submit(func() {}); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit = %v; want ErrClosed", err)
	}
}

func TestStopAsyncFromLoop(t *testing.T) {
	l := newLoop(t, Options{})
	l.Submit(l.StopAsync)
	done := make(chan error)
	go func() { done <- l.Run() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v; want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("StopAsync on the loop did not end Run")
	}
}

func TestTimersNeverEarlyAndInOrder(t *testing.T) {
	t.Run("parked", func(t *testing.T) { timersInOrder(t, Options{}) })
	t.Run("blocking", func(t *testing.T) { timersInOrder(t, Options{BlockingPoll: true}) })
}

func timersInOrder(t *testing.T, opts Options) {
	l := startLoop(t, opts)
	type firing struct {
		i    int
		late time.Duration
	}
	var fired []firing
	done := make(chan struct{})
	delays := []time.Duration{30, 5, 20, 1, 10, 10, 0, 15} // ms
	// The loop reads its clock inside AfterFunc, so each deadline lies
	// between the clock read before the call plus d and the one after.
	lo := make([]time.Duration, len(delays))
	hi := make([]time.Duration, len(delays))
	onLoop(t, l, func() {
		for i, d := range delays {
			d := d * time.Millisecond
			start := time.Now()
			lo[i] = l.Now() + d
			l.AfterFunc(d, func() {
				fired = append(fired, firing{i, time.Since(start) - d})
				if len(fired) == len(delays) {
					close(done)
				}
			})
			hi[i] = l.Now() + d
		}
	})
	<-done
	pos := make([]int, len(delays))
	var order []int
	for n, f := range fired {
		if f.late < 0 {
			t.Errorf("timer %d (%v) fired %v early", f.i, delays[f.i]*time.Millisecond, -f.late)
		}
		pos[f.i] = n
		order = append(order, f.i)
	}
	// By deadline, ties in the order added. A pause between two AfterFunc
	// calls (a busy machine) can reorder timers whose delays differ by
	// less than the pause, so only pairs whose order the bounds settle are
	// checked; with no pause the order is 6 3 1 4 5 7 2 0.
	for i := range delays {
		for j := i + 1; j < len(delays); j++ {
			if hi[i] <= lo[j] && pos[i] > pos[j] {
				t.Errorf("firing order = %v: timer %d (deadline by %v) fired after timer %d (deadline from %v)", order, i, hi[i], j, lo[j])
			}
			if hi[j] < lo[i] && pos[j] > pos[i] {
				t.Errorf("firing order = %v: timer %d (deadline by %v) fired after timer %d (deadline from %v)", order, j, hi[j], i, lo[i])
			}
		}
	}
}

func TestRepeatingTimerAndCancel(t *testing.T) {
	l := startLoop(t, Options{})
	ticks := make(chan time.Time, 100)
	var id TimerID
	var start time.Time
	onLoop(t, l, func() {
		n := 0
		start = time.Now()
		id = l.Every(2*time.Millisecond, 3*time.Millisecond, func() {
			ticks <- time.Now()
			n++
			if n == 5 {
				if !l.CancelTimer(id) {
					t.Error("CancelTimer from its own function = false")
				}
			}
		})
	})
	for i := range 5 {
		select {
		case ts := <-ticks:
			// Fixed rate, like time.Ticker: tick i is due 2ms + i×3ms after
			// the start, and never comes before.
			if due := start.Add(2*time.Millisecond + time.Duration(i)*3*time.Millisecond); ts.Before(due) {
				t.Errorf("tick %d came %v early", i, due.Sub(ts))
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("tick %d never came", i)
		}
	}
	// Cancelled: no sixth tick, and the timer is gone.
	onLoop(t, l, func() {
		if n := l.Timers(); n != 0 {
			t.Errorf("Timers = %d after cancel; want 0", n)
		}
		if l.CancelTimer(id) {
			t.Error("second CancelTimer = true")
		}
	})
	select {
	case <-ticks:
		t.Error("timer ticked after it was cancelled")
	case <-time.After(20 * time.Millisecond):
	}
}

func TestResetTimer(t *testing.T) {
	l := startLoop(t, Options{})
	fired := make(chan time.Time, 1)
	var start time.Time
	onLoop(t, l, func() {
		start = time.Now()
		id := l.AfterFunc(time.Millisecond, func() { fired <- time.Now() })
		if !l.ResetTimer(id, 30*time.Millisecond) {
			t.Error("ResetTimer = false")
		}
	})
	if d := (<-fired).Sub(start); d < 30*time.Millisecond {
		t.Fatalf("reset timer fired after %v; want at least 30ms", d)
	}
}

func TestTimerAddedWhenDueDoesNotSpin(t *testing.T) {
	l := startLoop(t, Options{})
	var n atomic.Int32
	var again func()
	again = func() {
		if n.Add(1) < 1000 {
			l.AfterFunc(0, again)
		}
	}
	onLoop(t, l, func() { l.AfterFunc(0, again) })
	deadline := time.Now().Add(10 * time.Second)
	for n.Load() < 1000 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 1000 chained timers fired", n.Load())
		}
		onLoop(t, l, func() {})
	}
}

func TestHugeDurationsDoNotWrap(t *testing.T) {
	l := newLoop(t, Options{})
	fired := 0
	l.AfterFunc(math.MaxInt64, func() { fired++ })
	l.Every(0, math.MaxInt64, func() { fired++ })
	for range 5 {
		if err := l.RunOnce(false); err != nil {
			t.Fatal(err)
		}
	}
	if fired != 1 {
		t.Fatalf("timers fired %d times; want 1 (the repeating one, once)", fired)
	}
}

func TestStopStepping(t *testing.T) {
	l, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.RunOnce(false); err != nil {
		t.Fatal(err)
	}
	// Another goroutine stops a loop its owner drives: the owner's next
	// RunOnce releases it.
	stopped := make(chan struct{})
	go func() { l.Stop(); close(stopped) }()
	<-stopped
	if err := l.RunOnce(true); !errors.Is(err, ErrClosed) {
		t.Fatalf("RunOnce after Stop = %v; want ErrClosed", err)
	}
	if err := l.Submit(func() {}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after release = %v; want ErrClosed", err)
	}
	l.Close()
}

func TestPanicsAreRecovered(t *testing.T) {
	var logs syncBuffer
	l := startLoop(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	l.Submit(func() { panic("task boom") })
	onLoop(t, l, func() { l.AfterFunc(0, func() { panic("timer boom") }) })
	a, b := socketpair(t)
	var told atomic.Value
	onLoop(t, l, func() {
		if err := l.Register(a, poll.Read, &panicky{l: l, told: &told}); err != nil {
			t.Error(err)
		}
	})
	unix.Write(b, []byte("x"))
	deadline := time.Now().Add(10 * time.Second)
	for l.Stats().Panics < 3 || told.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("panics recovered = %d, handler told = %v; want 3, true", l.Stats().Panics, told.Load())
		}
		onLoop(t, l, func() {})
	}
	if v := told.Load(); v != "io boom" {
		t.Errorf("HandlePanic got %v; want io boom", v)
	}
	out := logs.String()
	for _, want := range []string{"task boom", "timer boom", "io boom", "stack="} {
		if !bytes.Contains([]byte(out), []byte(want)) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	// The loop still works.
	onLoop(t, l, func() {})
}

type panicky struct {
	l    *Loop
	told *atomic.Value
}

func (p *panicky) HandleIO(fd int, ev poll.Flags) { panic("io boom") }
func (p *panicky) HandlePanic(fd int, v any) {
	p.l.Unregister(fd)
	p.told.Store(v)
}

func TestIOEvents(t *testing.T) {
	l := startLoop(t, Options{})
	a, b := socketpair(t)
	got := make(chan []byte, 10)
	onLoop(t, l, func() {
		err := l.Register(a, poll.Read, handlerFunc(func(fd int, ev poll.Flags) {
			buf := make([]byte, 64)
			n, _ := unix.Read(fd, buf)
			if n > 0 {
				got <- buf[:n]
			}
		}))
		if err != nil {
			t.Error(err)
		}
	})
	for _, msg := range []string{"one", "two", "three"} {
		unix.Write(b, []byte(msg))
		select {
		case g := <-got:
			if string(g) != msg {
				t.Errorf("read %q; want %q", g, msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event for %q", msg)
		}
	}
}

// TestEach registers fds in different blocks of the registration table and
// unregisters one from inside Each.
func TestEach(t *testing.T) {
	l := newLoop(t, Options{})
	a, _ := socketpair(t)
	fds := []int{a}
	for _, atLeast := range []int{600, 1300} {
		hi, err := unix.FcntlInt(uintptr(a), unix.F_DUPFD, atLeast)
		if err != nil {
			t.Skipf("dup to %d or above: %v", atLeast, err)
		}
		t.Cleanup(func() { unix.Close(hi) })
		fds = append(fds, hi)
	}
	h := handlerFunc(func(int, poll.Flags) {})
	for _, fd := range fds {
		if err := l.Register(fd, poll.Read, h); err != nil {
			t.Fatal(err)
		}
	}
	var seen []int
	l.Each(func(fd int, _ Handler) {
		seen = append(seen, fd)
		if fd == fds[1] {
			l.Unregister(fd)
		}
	})
	if !slices.Equal(seen, fds) {
		t.Errorf("Each visited %v; want %v", seen, fds)
	}
	seen = seen[:0]
	l.Each(func(fd int, _ Handler) { seen = append(seen, fd) })
	if want := []int{a, fds[2]}; !slices.Equal(seen, want) {
		t.Errorf("after Unregister, Each visited %v; want %v", seen, want)
	}
}

// TestStaleEventsAreDropped closes and replaces an fd from a handler running
// earlier in the same batch: the batch's event for the old fd must not reach
// the handler registered for the new one.
func TestStaleEventsAreDropped(t *testing.T) {
	l := newLoop(t, Options{})
	a1, b1 := socketpair(t)
	a2, b2 := socketpair(t)
	unix.Write(b1, []byte("x"))
	unix.Write(b2, []byte("x"))
	var newCalls, oldCalls int
	var first int = -1
	h := handlerFunc(func(fd int, ev poll.Flags) {
		if first >= 0 {
			oldCalls++
			return
		}
		first = fd
		// Replace the other fd's registration with a new one for the same
		// number, as a close and an accept that reuses the number would.
		other := a1 + a2 - fd
		if err := l.Unregister(other); err != nil {
			t.Error(err)
		}
		if err := l.Register(other, poll.Write, handlerFunc(func(int, poll.Flags) { newCalls++ })); err != nil {
			t.Error(err)
		}
	})
	if err := l.Register(a1, poll.Read, h); err != nil {
		t.Fatal(err)
	}
	if err := l.Register(a2, poll.Read, h); err != nil {
		t.Fatal(err)
	}
	if err := l.RunOnce(false); err != nil {
		t.Fatal(err)
	}
	if oldCalls != 0 || newCalls != 0 {
		t.Fatalf("after replacing a registration mid-batch: old handler called %d times, new %d; want 0, 0", oldCalls, newCalls)
	}
	l.RunOnce(false)
	if newCalls == 0 {
		t.Fatal("new registration got no event in the next iteration")
	}
}

func TestUnregisterClosedFd(t *testing.T) {
	l := newLoop(t, Options{})
	fds, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	defer unix.Close(fds[1])
	if err := l.Register(fds[0], poll.Read, handlerFunc(func(int, poll.Flags) {})); err != nil {
		t.Fatal(err)
	}
	unix.Close(fds[0]) // the application closes it behind the loop's back
	if err := l.Unregister(fds[0]); err != nil {
		t.Fatalf("Unregister of a closed fd = %v; want nil", err)
	}
	if err := l.RunOnce(false); err != nil {
		t.Fatal(err)
	}
}

// TestRegisterAfterFailedDelete: an fd whose Unregister the kernel did not
// carry out (its Delete failed, the loop forgot the fd all the same) can be
// registered again: the kernel's registration is taken over, with the new
// tag and interest, where Register failed with EEXIST for good and a paused
// listener never resumed.
func TestRegisterAfterFailedDelete(t *testing.T) {
	l := newLoop(t, Options{})
	a, b := socketpair(t)
	var oldCalls, newCalls int
	if err := l.Register(a, poll.Read, handlerFunc(func(int, poll.Flags) { oldCalls++ })); err != nil {
		t.Fatal(err)
	}
	*l.lookup(a) = reg{} // what Unregister leaves when the poller's Delete fails
	if err := l.Register(a, poll.Read, handlerFunc(func(int, poll.Flags) { newCalls++ })); err != nil {
		t.Fatalf("Register after a failed Delete = %v; want nil", err)
	}
	unix.Write(b, []byte("x"))
	if err := l.RunOnce(false); err != nil {
		t.Fatal(err)
	}
	if oldCalls != 0 || newCalls != 1 {
		t.Errorf("handlers called: old %d times, new %d; want 0, 1", oldCalls, newCalls)
	}
}

func TestBadInput(t *testing.T) {
	l := newLoop(t, Options{})
	a, _ := socketpair(t)
	h := handlerFunc(func(int, poll.Flags) {})
	if err := l.Register(a, poll.Read, h); err != nil {
		t.Fatal(err)
	}
	r, w := socketpair(t)
	unix.Close(w)
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"Register negative fd", l.Register(-1, poll.Read, h), ErrBadFD},
		{"Register nil handler", l.Register(r, poll.Read, nil), ErrNilFunc},
		{"Register twice", l.Register(a, poll.Read, h), ErrRegistered},
		{"Modify unregistered", l.Modify(r, poll.Write), ErrNotRegistered},
		{"Unregister unregistered", l.Unregister(r), ErrNotRegistered},
		{"Unregister negative", l.Unregister(-3), ErrNotRegistered},
		{"Submit nil", l.Submit(nil), ErrNilFunc},
	}
	for _, tc := range tests {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s = %v; want %v", tc.name, tc.err, tc.want)
		}
	}
	if err := l.Register(w, poll.Read, h); err == nil {
		t.Error("Register of a closed fd = nil; want an error")
	}
	if huge := int(^uint(0) >> 1); l.Register(huge, poll.Read, h) == nil {
		t.Errorf("Register of fd %d = nil; want an error", huge)
	}
	if id := l.AfterFunc(time.Second, nil); id != 0 {
		t.Error("AfterFunc(nil) returned a timer")
	}
}

func TestPinCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pinning is Linux-only")
	}
	startLoop(t, Options{PinCPU: true, CPU: 0})
	// CPU counts the CPUs the process may run on, modulo their number.
	startLoop(t, Options{PinCPU: true, CPU: 100000})
	l, err := New(Options{PinCPU: true, CPU: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(); err == nil {
		t.Error("Start pinned to CPU -1 = nil; want an error")
	}
	l.Stop()
}

func TestStats(t *testing.T) {
	l := startLoop(t, Options{})
	done := make(chan struct{})
	onLoop(t, l, func() { l.AfterFunc(0, func() { close(done) }) })
	<-done
	onLoop(t, l, func() {})
	s := l.Stats()
	if s.Iterations == 0 || s.Tasks < 2 || s.TimersFired != 1 {
		t.Errorf("Stats = %+v; want iterations > 0, tasks >= 2, timers fired 1", s)
	}
}

// TestSteadyStateDoesNotAllocate proves the event path (wait, dispatch,
// timers, next wait) allocates nothing once warm.
func TestSteadyStateDoesNotAllocate(t *testing.T) {
	l := newLoop(t, Options{})
	a, b := socketpair(t)
	unix.Write(b, []byte("x")) // level-triggered: readable on every iteration
	calls := 0
	if err := l.Register(a, poll.Read, handlerFunc(func(int, poll.Flags) { calls++ })); err != nil {
		t.Fatal(err)
	}
	l.Every(0, time.Nanosecond, func() {})
	task := func() {}
	allocs := testing.AllocsPerRun(1000, func() {
		l.Submit(task)
		if err := l.RunOnce(true); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("one iteration allocates %v times; want 0", allocs)
	}
	if calls < 1000 {
		t.Fatalf("handler called %d times; want at least 1000", calls)
	}
}

func TestAgainSkipsOneBlockingWait(t *testing.T) {
	l := newLoop(t, Options{})
	done := make(chan error, 1)
	go func() {
		l.Again()
		err := l.RunOnce(true) // nothing is ready, no timer: would block
		if err == nil && l.again {
			err = errors.New("Again still set after the wait")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		l.Wake() // free the blocked RunOnce for the cleanup
		<-done
		t.Fatal("RunOnce blocked after Again")
	}
}

// TestDispatchReady: from inside a handler, DispatchReady hands the
// other descriptors their events, keeps the excepted one's for the
// caller, runs no timer, and refuses to run from a handler it runs.
func TestDispatchReady(t *testing.T) {
	l := newLoop(t, Options{})
	held, heldPeer := socketpair(t)
	other, otherPeer := socketpair(t)
	fired := false
	l.AfterFunc(0, func() { fired = true })
	var otherCalls int
	var nestedErr error
	if err := l.Register(other, poll.Read, handlerFunc(func(fd int, ev poll.Flags) {
		otherCalls++
		unix.Read(fd, make([]byte, 16))
		_, nestedErr = l.DispatchReady(-1)
	})); err != nil {
		t.Fatal(err)
	}
	// queued is ready in the same wait as held: its event is in the
	// iteration's batch, dispatched once, by DispatchReady if held's
	// handler comes first.
	queued, queuedPeer := socketpair(t)
	var queuedCalls, queuedByReturn int
	if err := l.Register(queued, poll.Read|poll.Edge, handlerFunc(func(fd int, ev poll.Flags) {
		queuedCalls++
	})); err != nil {
		t.Fatal(err)
	}
	var kept poll.Flags
	var err error
	var firedInside bool
	if err := l.Register(held, poll.Read, handlerFunc(func(fd int, ev poll.Flags) {
		unix.Read(fd, make([]byte, 16))
		unix.Write(heldPeer, []byte("again"))
		unix.Write(otherPeer, []byte("x"))
		kept, err = l.DispatchReady(fd)
		firedInside = fired
		queuedByReturn = queuedCalls
	})); err != nil {
		t.Fatal(err)
	}
	unix.Write(heldPeer, []byte("first"))
	unix.Write(queuedPeer, []byte("q"))
	if err := l.RunOnce(false); err != nil {
		t.Fatal(err)
	}
	switch {
	case err != nil:
		t.Fatalf("DispatchReady: %v", err)
	case otherCalls != 1:
		t.Fatalf("the other descriptor's handler ran %d times; want 1", otherCalls)
	case kept&poll.Readable == 0:
		t.Fatalf("the held descriptor's readability was not kept: %v", kept)
	case !errors.Is(nestedErr, ErrNested):
		t.Fatalf("DispatchReady from a handler it ran: %v; want ErrNested", nestedErr)
	case firedInside:
		t.Fatal("a timer fired inside DispatchReady")
	case !fired:
		t.Fatal("the timer did not fire in the iteration")
	case queuedCalls != 1 || queuedByReturn != 1:
		t.Fatalf("the batch's other event was dispatched %d times, %d by DispatchReady's return; want 1, 1", queuedCalls, queuedByReturn)
	}
}
