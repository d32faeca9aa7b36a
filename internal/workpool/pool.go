// Package workpool runs functions on a bounded number of goroutines that
// come and go with the work, for protocols that hand blocking handlers off
// their event loop.
package workpool

import (
	"sync"
	"time"
)

// workerIdle is how long a worker goroutine waits for work before it
// exits.
const workerIdle = 10 * time.Second

// Pool runs functions on at most max goroutines, started as needed and
// ended after workerIdle without work. Functions beyond max wait in a
// queue, in order, without a goroutine. Submit never blocks, so a loop
// may call it. Its methods may be called from any goroutine.
type Pool struct {
	max int

	mu      sync.Mutex
	running int
	idle    []chan func() // parked workers, most recent last
	queue   []func()
	head    int // queue[head:] waits
	closed  bool
}

// New returns a Pool of at most max goroutines.
func New(max int) *Pool { return &Pool{max: max} }

// Submit runs fn on a worker, now or once one is free.
func (p *Pool) Submit(fn func()) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		ch := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		ch <- fn // buffered: never blocks
		return
	}
	if p.running < p.max || (p.closed && p.running == 0) {
		p.running++
		p.mu.Unlock()
		go p.work(fn)
		return
	}
	if p.head > 0 && (p.head == len(p.queue) || (len(p.queue) == cap(p.queue) && p.head >= len(p.queue)/2)) {
		// Move what waits to the front rather than grow the queue past
		// the functions that already ran: a queue that never empties
		// would otherwise keep a slot for every function it ever held.
		n := copy(p.queue, p.queue[p.head:])
		clear(p.queue[n:])
		p.queue, p.head = p.queue[:n], 0
	}
	p.queue = append(p.queue, fn)
	p.mu.Unlock()
}

// work runs fn, then whatever waits in the queue, then parks until
// submit hands it more or it has idled long enough.
func (p *Pool) work(fn func()) {
	ch := make(chan func(), 1)
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		fn()
		p.mu.Lock()
		if p.head < len(p.queue) {
			fn = p.queue[p.head]
			p.queue[p.head] = nil
			p.head++
			p.mu.Unlock()
			continue
		}
		if p.closed {
			p.running--
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, ch)
		p.mu.Unlock()
		t.Reset(workerIdle)
		var ok bool
		select {
		case fn, ok = <-ch:
			if !ok {
				return // closed; close counted this worker out
			}
			continue
		case <-t.C:
		}
		p.mu.Lock()
		if i := indexChan(p.idle, ch); i >= 0 {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			p.running--
			p.mu.Unlock()
			return
		}
		// A submit (or close) took this worker as the timer fired: its
		// work is on the way.
		p.mu.Unlock()
		if fn, ok = <-ch; !ok {
			return
		}
	}
}

// Close ends the parked workers; busy ones end after their work. Work
// still queued runs first.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.running -= len(idle)
	p.mu.Unlock()
	for _, ch := range idle {
		close(ch)
	}
}

func indexChan(s []chan func(), ch chan func()) int {
	for i, c := range s {
		if c == ch {
			return i
		}
	}
	return -1
}
