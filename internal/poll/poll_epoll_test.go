//go:build linux

package poll

import (
	"testing"
	"time"
)

// A Poller whose Waits block their thread must stay unknown to the
// runtime's poller, whose thread its events would otherwise wake too; a
// parked Wait registers it.
func TestRegisteredOnlyToPark(t *testing.T) {
	blocking := newPoller(t)
	blocking.SetBlocking(true)
	parked := newPoller(t)
	for _, p := range []*Poller{blocking, parked} {
		a, b := socketpair(t)
		if err := p.Add(a, 1, Read); err != nil {
			t.Fatal(err)
		}
		if got := wait(t, p, 10*time.Millisecond); len(got) != 0 {
			t.Fatalf("events before any data: %v", got)
		}
		write(t, b, "x")
		if got := wait(t, p, time.Second); got[int32(a)].Flags&Readable == 0 {
			t.Fatalf("events = %v; want %d readable", got, a)
		}
		if err := p.Wake(); err != nil {
			t.Fatal(err)
		}
		wait(t, p, -1) // the wake-up, and the still-unread byte
	}
	if blocking.file != nil || blocking.rc != nil {
		t.Error("a blocking Poller was registered with the runtime's poller")
	}
	if parked.rc == nil {
		t.Error("a Poller that parked is not registered with the runtime's poller")
	}
}
