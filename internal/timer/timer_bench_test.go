package timer

import (
	"container/heap"
	"fmt"
	"sync"
	"testing"
	"time"
)

// The benchmarks compare Queue with the two things a Go program would use
// instead: container/heap with index-tracking items, and time.AfterFunc.
// Each runs with 1e5 and 1e6 other timers live, far in the future.

var liveCounts = []int{100_000, 1_000_000}

type item struct {
	when  int64
	index int
}

type stdHeap []*item

func (h stdHeap) Len() int           { return len(h) }
func (h stdHeap) Less(i, j int) bool { return h[i].when < h[j].when }
func (h stdHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *stdHeap) Push(x any) { it := x.(*item); it.index = len(*h); *h = append(*h, it) }
func (h *stdHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// liveAfterFuncs arms n runtime timers an hour or more away and returns
// the function that stops them.
func liveAfterFuncs(n int) (stop func()) {
	live := make([]*time.Timer, n)
	for i := range live {
		live[i] = time.AfterFunc(time.Hour+time.Duration(spread(i, n, 0)), func() {})
	}
	return func() {
		for _, t := range live {
			t.Stop()
		}
	}
}

// spread returns the i-th of n deadlines scattered over [base, base+n).
func spread(i, n int, base int64) int64 { return base + int64(i*7919%n) }

func BenchmarkAddCancel(b *testing.B) {
	for _, n := range liveCounts {
		b.Run(fmt.Sprintf("live=%d/impl=evloop", n), func(b *testing.B) {
			var q Queue[struct{}]
			for i := range n {
				q.Add(spread(i, n, 1<<40), struct{}{})
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				id := q.Add(spread(i, n, 1<<40), struct{}{})
				q.Remove(id)
				i++
			}
		})
		b.Run(fmt.Sprintf("live=%d/impl=container-heap", n), func(b *testing.B) {
			h := make(stdHeap, 0, n)
			for i := range n {
				heap.Push(&h, &item{when: spread(i, n, 1<<40)})
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				it := &item{when: spread(i, n, 1<<40)}
				heap.Push(&h, it)
				heap.Remove(&h, it.index)
				i++
			}
		})
		b.Run(fmt.Sprintf("live=%d/impl=time.AfterFunc", n), func(b *testing.B) {
			defer liveAfterFuncs(n)()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				t := time.AfterFunc(time.Hour+time.Duration(spread(i, n, 0)), func() {})
				t.Stop()
				i++
			}
		})
	}
}

// BenchmarkFire measures taking the earliest timer off when it is due; for
// the heaps the cost is the pop, and a replacement keeps the count steady.
// For time.AfterFunc it is the runtime's whole path from arming a 1µs timer
// to its function having run.
func BenchmarkFire(b *testing.B) {
	for _, n := range liveCounts {
		b.Run(fmt.Sprintf("live=%d/impl=evloop", n), func(b *testing.B) {
			var q Queue[struct{}]
			for i := range n {
				q.Add(spread(i, n, 0), struct{}{})
			}
			b.ReportAllocs()
			now := int64(n)
			for b.Loop() {
				id, _, _ := q.Peek()
				q.Remove(id)
				q.Add(now, struct{}{})
				now++
			}
		})
		b.Run(fmt.Sprintf("live=%d/impl=container-heap", n), func(b *testing.B) {
			h := make(stdHeap, 0, n)
			for i := range n {
				heap.Push(&h, &item{when: spread(i, n, 0)})
			}
			b.ReportAllocs()
			now := int64(n)
			for b.Loop() {
				it := heap.Pop(&h).(*item)
				it.when = now
				heap.Push(&h, it)
				now++
			}
		})
		b.Run(fmt.Sprintf("live=%d/impl=time.AfterFunc", n), func(b *testing.B) {
			defer liveAfterFuncs(n)()
			b.ReportAllocs()
			var wg sync.WaitGroup
			fired := func() { wg.Done() }
			for b.Loop() {
				wg.Add(1)
				time.AfterFunc(time.Microsecond, fired)
			}
			wg.Wait()
		})
	}
}
