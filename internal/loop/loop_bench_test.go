//go:build unix

package loop

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/poll"
	"golang.org/x/sys/unix"
)

// BenchmarkSubmit measures Submit from 1 and 8 goroutines to a running loop,
// against sending the same func over a buffered channel to one goroutine.
func BenchmarkSubmit(b *testing.B) {
	for _, producers := range []int{1, 8} {
		b.Run(fmt.Sprintf("goroutines=%d/impl=loop", producers), func(b *testing.B) {
			l, err := New(Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Start(); err != nil {
				b.Fatal(err)
			}
			defer l.Stop()
			n := 0
			task := func() { n++ }
			b.ReportAllocs()
			b.ResetTimer()
			produce(b.N, producers, func() { l.Submit(task) })
			done := make(chan struct{})
			l.Submit(func() { close(done) })
			<-done
			b.StopTimer()
			if n != b.N/producers*producers {
				b.Fatalf("ran %d tasks; want %d", n, b.N/producers*producers)
			}
		})
		b.Run(fmt.Sprintf("goroutines=%d/impl=chan", producers), func(b *testing.B) {
			ch := make(chan func(), 1024)
			exited := make(chan struct{})
			go func() {
				for fn := range ch {
					fn()
				}
				close(exited)
			}()
			n := 0
			task := func() { n++ }
			b.ReportAllocs()
			b.ResetTimer()
			produce(b.N, producers, func() { ch <- task })
			close(ch)
			<-exited
		})
	}
}

// produce calls fn n times, split over k goroutines.
func produce(n, k int, fn func()) {
	var wg sync.WaitGroup
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / k {
				fn()
			}
		}()
	}
	wg.Wait()
}

// BenchmarkIteration is the steady-state event path: a wait that returns
// one ready fd, its dispatch, one due timer, and back.
func BenchmarkIteration(b *testing.B) {
	l, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Stop()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		b.Fatal(err)
	}
	unix.SetNonblock(fds[0], true)
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	unix.Write(fds[1], []byte("x"))
	l.Register(fds[0], poll.Read, handlerFunc(func(int, poll.Flags) {}))
	l.Every(0, time.Nanosecond, func() {})
	b.ReportAllocs()
	for b.Loop() {
		l.RunOnce(true)
	}
}

// BenchmarkTimer measures the loop's timers: add and cancel with 1e5 other
// timers live, and an iteration that fires one.
func BenchmarkTimer(b *testing.B) {
	l, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Stop()
	fn := func() {}
	for range 100_000 {
		l.AfterFunc(time.Hour, fn)
	}
	b.Run("op=add-cancel", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.CancelTimer(l.AfterFunc(time.Minute, fn))
		}
	})
	b.Run("op=fire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.AfterFunc(0, fn)
			l.RunOnce(false)
		}
	})
}
