package events

import (
	"testing"
)

// BenchmarkWakeup is the round trip between two idle goroutines: each op is
// two wake-ups of a goroutine that is blocked waiting. With impl=events,
// each side owns a Loop blocked in Next and the other Emits to it; with
// impl=chan, each side is blocked receiving from a channel.
func BenchmarkWakeup(b *testing.B) {
	b.Run("impl=events", func(b *testing.B) {
		ping, err := New[int]()
		if err != nil {
			b.Fatal(err)
		}
		defer ping.Close()
		pong, err := New[int]()
		if err != nil {
			b.Fatal(err)
		}
		exited := make(chan struct{})
		go func() {
			defer close(exited)
			defer pong.Close()
			for k := range pong.Events() {
				ping.Emit(k)
			}
		}()
		b.ReportAllocs()
		for b.Loop() {
			pong.Emit(1)
			if _, err := ping.Next(); err != nil {
				b.Fatal(err)
			}
		}
		pong.Stop()
		<-exited
	})
	b.Run("impl=chan", func(b *testing.B) {
		ping, pong := make(chan int), make(chan int)
		go func() {
			for k := range pong {
				ping <- k
			}
		}()
		b.ReportAllocs()
		for b.Loop() {
			pong <- 1
			<-ping
		}
		close(pong)
	})
}

// BenchmarkEmit measures Emit and Next on one goroutine: the cost of an
// event without a wake-up.
func BenchmarkEmit(b *testing.B) {
	l, err := New[int]()
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ReportAllocs()
	for b.Loop() {
		l.Emit(1)
		l.Next()
	}
}
