//go:build unix

package poll

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// This file is the conformance suite: every backend runs it unchanged.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newPoller(t *testing.T) *Poller {
	t.Helper()
	p, err := New()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("no poller on %s", runtime.GOOS)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func socketpair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func pipe(t *testing.T) (r, w int) {
	t.Helper()
	var fds [2]int
	if err := unix.Pipe(fds[:]); err != nil {
		t.Fatalf("pipe: %v", err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func write(t *testing.T, fd int, s string) {
	t.Helper()
	if n, err := unix.Write(fd, []byte(s)); n != len(s) || err != nil {
		t.Fatalf("write = %d, %v; want %d, nil", n, err, len(s))
	}
}

// bothWaits runs f with a Poller whose blocking Waits park the goroutine
// (the default) and with one whose Waits block the thread (SetBlocking).
func bothWaits(t *testing.T, f func(t *testing.T, p *Poller)) {
	t.Run("parked", func(t *testing.T) { f(t, newPoller(t)) })
	t.Run("blocking", func(t *testing.T) {
		p := newPoller(t)
		p.SetBlocking(true)
		f(t, p)
	})
}

// wait returns the events of one Wait, merged per fd, since kqueue may
// report read and write readiness of one fd in two events.
func wait(t *testing.T, p *Poller, timeout time.Duration) map[int32]Event {
	t.Helper()
	evs := make([]Event, 64)
	n, err := p.Wait(evs, timeout)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	got := make(map[int32]Event)
	for _, ev := range evs[:n] {
		m := got[ev.Fd]
		if m.Flags != 0 && m.Tag != ev.Tag {
			t.Fatalf("fd %d reported with tags %d and %d", ev.Fd, m.Tag, ev.Tag)
		}
		got[ev.Fd] = Event{Fd: ev.Fd, Tag: ev.Tag, Flags: m.Flags | ev.Flags}
	}
	return got
}

func TestReadReadiness(t *testing.T) { bothWaits(t, readReadiness) }

func readReadiness(t *testing.T, p *Poller) {
	a, b := socketpair(t)
	if err := p.Add(a, 0xdeadbeef, Read); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if got := wait(t, p, 0); len(got) != 0 {
		t.Fatalf("Wait on an empty socket = %v; want no events", got)
	}
	write(t, b, "x")
	got := wait(t, p, time.Second)
	ev, ok := got[int32(a)]
	if !ok || ev.Flags&Readable == 0 || ev.Tag != 0xdeadbeef {
		t.Fatalf("Wait = %v; want fd %d readable with tag 0xdeadbeef", got, a)
	}
	if ev.Flags&Writable != 0 {
		t.Errorf("Wait reported Writable for a Read registration: %v", ev)
	}
}

func TestLevelTriggeredRepeats(t *testing.T) {
	p := newPoller(t)
	a, b := socketpair(t)
	if err := p.Add(a, 1, Read); err != nil {
		t.Fatal(err)
	}
	write(t, b, "hello")
	for i := range 3 {
		if got := wait(t, p, time.Second); got[int32(a)].Flags&Readable == 0 {
			t.Fatalf("Wait #%d = %v; want fd still readable (level-triggered)", i, got)
		}
	}
	buf := make([]byte, 16)
	if _, err := unix.Read(a, buf); err != nil {
		t.Fatal(err)
	}
	if got := wait(t, p, 0); len(got) != 0 {
		t.Fatalf("Wait after draining = %v; want none", got)
	}
}

func TestEdgeTriggeredOnce(t *testing.T) {
	p := newPoller(t)
	a, b := socketpair(t)
	if err := p.Add(a, 1, Read|Edge); err != nil {
		t.Fatal(err)
	}
	write(t, b, "hello")
	if got := wait(t, p, time.Second); got[int32(a)].Flags&Readable == 0 {
		t.Fatalf("Wait = %v; want readable", got)
	}
	if got := wait(t, p, 0); len(got) != 0 {
		t.Fatalf("second Wait without new data = %v; want none (edge-triggered)", got)
	}
	write(t, b, "again")
	if got := wait(t, p, time.Second); got[int32(a)].Flags&Readable == 0 {
		t.Fatalf("Wait after new data = %v; want readable", got)
	}
}

func TestModifyTogglesEdge(t *testing.T) {
	p := newPoller(t)
	a, b := socketpair(t)
	if err := p.Add(a, 1, Read|Edge); err != nil {
		t.Fatal(err)
	}
	write(t, b, "x")
	if got := wait(t, p, time.Second); got[int32(a)].Flags&Readable == 0 {
		t.Fatalf("Wait = %v; want readable", got)
	}
	if got := wait(t, p, 0); len(got) != 0 {
		t.Fatalf("edge-triggered: second Wait = %v; want none", got)
	}
	if err := p.Modify(a, 1, Read); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if got := wait(t, p, time.Second); got[int32(a)].Flags&Readable == 0 {
			t.Fatalf("level-triggered after Modify: Wait #%d = %v; want readable", i, got)
		}
	}
	if err := p.Modify(a, 1, Read|Edge); err != nil {
		t.Fatal(err)
	}
	wait(t, p, time.Second)
	if got := wait(t, p, 0); len(got) != 0 {
		t.Fatalf("edge-triggered again: second Wait = %v; want none", got)
	}
}

func TestWriteReadiness(t *testing.T) {
	p := newPoller(t)
	a, _ := socketpair(t)
	if err := p.Add(a, 7, Write); err != nil {
		t.Fatal(err)
	}
	got := wait(t, p, time.Second)
	if ev := got[int32(a)]; ev.Flags&Writable == 0 || ev.Tag != 7 {
		t.Fatalf("Wait = %v; want fd %d writable, tag 7", got, a)
	}
	// Fill the socket: writability must go away.
	chunk := make([]byte, 64<<10)
	for {
		if _, err := unix.Write(a, chunk); err != nil {
			if err != unix.EAGAIN {
				t.Fatal(err)
			}
			break
		}
	}
	if got := wait(t, p, 0); got[int32(a)].Flags&Writable != 0 {
		t.Fatalf("Wait on a full socket = %v; want not writable", got)
	}
}

func TestModifyChangesInterestAndTag(t *testing.T) {
	p := newPoller(t)
	a, b := socketpair(t)
	if err := p.Add(a, 1, Read); err != nil {
		t.Fatal(err)
	}
	if got := wait(t, p, 0); len(got) != 0 {
		t.Fatalf("Wait = %v; want none", got)
	}
	if err := p.Modify(a, 2, Write); err != nil {
		t.Fatalf("Modify: %v", err)
	}
	if ev := wait(t, p, time.Second)[int32(a)]; ev.Flags&Writable == 0 || ev.Tag != 2 {
		t.Fatalf("after Modify(Write): event %v; want writable with tag 2", ev)
	}
	if err := p.Modify(a, 3, ReadWrite); err != nil {
		t.Fatal(err)
	}
	write(t, b, "x")
	if ev := wait(t, p, time.Second)[int32(a)]; ev.Flags&(Readable|Writable) != Readable|Writable || ev.Tag != 3 {
		t.Fatalf("after Modify(ReadWrite): event %v; want readable and writable with tag 3", ev)
	}
	if err := p.Modify(a, 4, Read); err != nil {
		t.Fatal(err)
	}
	if ev := wait(t, p, time.Second)[int32(a)]; ev.Flags&Writable != 0 || ev.Tag != 4 {
		t.Fatalf("after Modify(Read): event %v; want not writable, tag 4", ev)
	}
}

func TestDeleteStopsEvents(t *testing.T) {
	p := newPoller(t)
	a, b := socketpair(t)
	if err := p.Add(a, 1, ReadWrite); err != nil {
		t.Fatal(err)
	}
	write(t, b, "x")
	if err := p.Delete(a); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if got := wait(t, p, 0); len(got) != 0 {
		t.Fatalf("Wait after Delete = %v; want none", got)
	}
	// The fd can be registered again.
	if err := p.Add(a, 9, Read); err != nil {
		t.Fatalf("Add after Delete: %v", err)
	}
	if ev := wait(t, p, time.Second)[int32(a)]; ev.Tag != 9 {
		t.Fatalf("event %v; want tag 9", ev)
	}
}

func TestHangup(t *testing.T) {
	p := newPoller(t)
	a, b := socketpair(t)
	if err := p.Add(a, 1, Read); err != nil {
		t.Fatal(err)
	}
	unix.Close(b)
	ev := wait(t, p, time.Second)[int32(a)]
	if ev.Flags&(Readable|Hangup) != Readable|Hangup {
		t.Fatalf("after peer close: event %v; want Readable|Hangup", ev)
	}
}

func TestPipe(t *testing.T) {
	p := newPoller(t)
	r, w := pipe(t)
	if err := p.Add(r, 1, Read); err != nil {
		t.Fatal(err)
	}
	if err := p.Add(w, 2, Write); err != nil {
		t.Fatal(err)
	}
	got := wait(t, p, time.Second)
	if got[int32(w)].Flags&Writable == 0 || got[int32(r)].Flags != 0 {
		t.Fatalf("Wait = %v; want only the write end ready", got)
	}
	write(t, w, "x")
	if got := wait(t, p, time.Second); got[int32(r)].Flags&Readable == 0 || got[int32(r)].Tag != 1 {
		t.Fatalf("Wait = %v; want read end readable", got)
	}
}

func TestManyFds(t *testing.T) {
	p := newPoller(t)
	const n = 300
	peers := make(map[int32]int, n)
	for i := range n {
		a, b := socketpair(t)
		if err := p.Add(a, uint32(i), Read); err != nil {
			t.Fatal(err)
		}
		peers[int32(a)] = b
		write(t, b, "x")
	}
	seen := make(map[int32]bool)
	evs := make([]Event, 16) // smaller than n: several Waits share the work
	for len(seen) < n {
		k, err := p.Wait(evs, time.Second)
		if err != nil || k == 0 {
			t.Fatalf("Wait = %d, %v after %d of %d fds", k, err, len(seen), n)
		}
		for _, ev := range evs[:k] {
			if _, ok := peers[ev.Fd]; !ok {
				t.Fatalf("event for unknown fd %d", ev.Fd)
			}
			seen[ev.Fd] = true
			buf := make([]byte, 8)
			unix.Read(int(ev.Fd), buf)
		}
	}
}

func TestWakeBreaksBlockingWait(t *testing.T) { bothWaits(t, wakeBreaksBlockingWait) }

func wakeBreaksBlockingWait(t *testing.T, p *Poller) {
	done := make(chan error)
	go func() {
		n, err := p.Wait(make([]Event, 8), -1)
		if err == nil && n != 0 {
			err = errors.New("Wait returned events on an empty poller")
		}
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let it block; a wake before the wait is tested too
	if err := p.Wake(); err != nil {
		t.Fatalf("Wake: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wake did not end a blocking Wait")
	}
}

func TestWakeBeforeWait(t *testing.T) { bothWaits(t, wakeBeforeWait) }

func wakeBeforeWait(t *testing.T, p *Poller) {
	if err := p.Wake(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := p.Wait(make([]Event, 8), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Wait after Wake took %v; want an immediate return", d)
	}
	if !p.Woke() {
		t.Fatal("Woke() = false after a Wait that took a wake-up")
	}
	if _, err := p.Wait(make([]Event, 8), 0); err != nil || p.Woke() {
		t.Fatalf("the next Wait: %v, Woke() = %v; want false", err, p.Woke())
	}
}

func TestWakesCoalesce(t *testing.T) { bothWaits(t, wakesCoalesce) }

func wakesCoalesce(t *testing.T, p *Poller) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				if err := p.Wake(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if _, err := p.Wait(make([]Event, 8), time.Second); err != nil {
		t.Fatal(err)
	}
	// All 8000 wakes were drained by one Wait: the next one times out.
	start := time.Now()
	if _, err := p.Wait(make([]Event, 8), 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("Wait after a drained wake-up returned after %v; want the full 30ms timeout", d)
	}
	// And the wake-up still works afterwards.
	if err := p.Wake(); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	p.Wait(make([]Event, 8), 30*time.Second)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Wait after a second Wake took %v", d)
	}
}

func TestTimeoutNeverEarly(t *testing.T) { bothWaits(t, timeoutNeverEarly) }

func timeoutNeverEarly(t *testing.T, p *Poller) {
	for _, d := range []time.Duration{300 * time.Microsecond, time.Millisecond, 15 * time.Millisecond} {
		start := time.Now()
		if _, err := p.Wait(make([]Event, 8), d); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got < d {
			t.Errorf("Wait(%v) returned after %v", d, got)
		}
	}
}

func TestBadInput(t *testing.T) {
	p := newPoller(t)
	a, _ := socketpair(t)
	r, w := pipe(t)
	unix.Close(w) // a closed fd number

	tests := []struct {
		name string
		call func() error
	}{
		{"Add negative fd", func() error { return p.Add(-1, 0, Read) }},
		{"Add closed fd", func() error { return p.Add(w, 0, Read) }},
		{"Add closed fd with no interest", func() error { return p.Add(w, 0, 0) }},
		{"Add closed fd for edges alone", func() error { return p.Add(w, 0, Edge) }},
		{"Modify unregistered fd", func() error { return p.Modify(r, 0, Read) }},
		{"Delete unregistered fd", func() error { return p.Delete(r) }},
		{"Modify negative fd", func() error { return p.Modify(-5, 0, Read) }},
		{"Add fd past the C int range", func() error { return p.Add(int(^uint(0)>>1), 0, Read) }},
		{"Add fd past the open ones with no interest", func() error { return p.Add(1<<30, 0, 0) }},
		{"Modify fd past the table", func() error { return p.Modify(1<<30, 0, Read) }},
		{"Delete negative fd", func() error { return p.Delete(-5) }},
		{"Add twice", func() error {
			if err := p.Add(a, 0, Read); err != nil {
				return nil // the first Add must succeed; report as "no error"
			}
			return p.Add(a, 0, Read)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err == nil {
				t.Errorf("%s = nil; want an error", tc.name)
			}
		})
	}
}

func TestAfterClose(t *testing.T) {
	p := newPoller(t)
	a, _ := socketpair(t)
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close = %v; want nil", err)
	}
	if err := p.Add(a, 0, Read); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close = %v; want ErrClosed", err)
	}
	if err := p.Delete(a); !errors.Is(err, ErrClosed) {
		t.Errorf("Delete after Close = %v; want ErrClosed", err)
	}
	if _, err := p.Wait(make([]Event, 4), 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Wait after Close = %v; want ErrClosed", err)
	}
	if err := p.Wake(); err != nil && !errors.Is(err, ErrClosed) {
		t.Errorf("Wake after Close = %v; want nil or ErrClosed", err)
	}
}

func TestTimeoutMillis(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want int
	}{
		{-1, -1},
		{0, 0},
		{1, 1},
		{time.Millisecond, 1},
		{time.Millisecond + 1, 2},
		{1500 * time.Microsecond, 2},
		{time.Duration(1 << 62), 1 << 30},
		{math.MaxInt64, 1 << 30}, // rounding up must not wrap into "forever"
		{math.MaxInt64 - time.Millisecond + 2, 1 << 30},
	}
	for _, tc := range tests {
		if got := timeoutMillis(tc.in); got != tc.want {
			t.Errorf("timeoutMillis(%v) = %d; want %d", tc.in, got, tc.want)
		}
	}
}
