package workpool

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBoundAndOrder(t *testing.T) {
	p := New(3)
	defer p.Close()
	var running, most atomic.Int32
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := range 50 {
		wg.Add(1)
		p.Submit(func() {
			defer wg.Done()
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			if i < 3 {
				<-release // the first three hold every worker
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			running.Add(-1)
		})
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if m := most.Load(); m != 3 {
		t.Fatalf("%d ran at once, want 3", m)
	}
	if len(order) != 50 {
		t.Fatalf("%d ran, want 50", len(order))
	}
}

// With one worker, what waits in the queue runs in the order submitted.
func TestQueueOrder(t *testing.T) {
	p := New(1)
	defer p.Close()
	var order []int
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := range 20 {
		wg.Add(1)
		p.Submit(func() {
			defer wg.Done()
			if i == 0 {
				<-release
			}
			order = append(order, i) // one worker: no race
		})
	}
	close(release)
	wg.Wait()
	for i, v := range order {
		if i != v {
			t.Fatalf("order %v", order)
		}
	}
}

func TestSubmitAfterClose(t *testing.T) {
	p := New(2)
	p.Close()
	done := make(chan struct{})
	p.Submit(func() { close(done) })
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("work submitted after Close never ran")
	}
}

// A pool that never catches up keeps a queue as long as its backlog, not
// one entry for every function that ever waited.
func TestBackloggedQueueStaysBounded(t *testing.T) {
	p := New(1)
	defer p.Close()
	var wg sync.WaitGroup
	gate := make(chan struct{})
	submit := func() {
		wg.Add(1)
		p.Submit(func() { defer wg.Done(); <-gate })
	}
	const backlog = 10
	for range backlog {
		submit()
	}
	most := 0
	for range 10_000 {
		gate <- struct{}{} // one runs, one more waits: the backlog stays
		submit()
		p.mu.Lock()
		most = max(most, cap(p.queue))
		p.mu.Unlock()
	}
	close(gate)
	wg.Wait()
	if most > 4*backlog {
		t.Fatalf("queue capacity reached %d with at most %d waiting; want it bounded by the backlog", most, backlog)
	}
}
