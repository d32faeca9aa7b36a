//go:build unix

package loop

import (
	"testing"
	"time"
)

// Wake's promise: a blocked wait returns, or the next one does, "so that the
// loop iterates once more", with a nap before the wait too: the nap's
// probe (a Wait with timeout 0) that takes the wake-up returns.
func TestWakeBeforeNapNotLost(t *testing.T) {
	l, peers, served := nappingLoop(t, 50*time.Microsecond, 1)
	busy(t, l, peers[0], served) // the next wait may nap
	if err := l.Wake(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.RunOnce(true) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		// Unblock the stuck RunOnce so that the cleanup can run.
		l.Wake()
		<-done
		t.Fatal("RunOnce(true) after Wake blocked: the nap's probe swallowed the wake-up")
	}
}

// The same without a nap: the Wake makes the next RunOnce(true) return.
func TestWakeBeforeWaitWithoutNap(t *testing.T) {
	l, peers, served := nappingLoop(t, 0, 1)
	busy(t, l, peers[0], served)
	l.Wake()
	done := make(chan error, 1)
	go func() { done <- l.RunOnce(true) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		l.Wake()
		<-done
		t.Fatal("RunOnce(true) after Wake blocked")
	}
}
