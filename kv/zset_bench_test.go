package kv

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// zsetBenchMembers are members as redis-benchmark's ZADD writes them.
func zsetBenchMembers(n int) [][]byte {
	members := make([][]byte, n)
	for i := range members {
		members[i] = fmt.Appendf(nil, "element:%012d", i)
	}
	return members
}

// BenchmarkZset measures the paths of redis-benchmark's ZADD and ZPOPMIN
// on a set of 100,000 members: adding, a new score for a member, and
// popping the lowest.
func BenchmarkZset(b *testing.B) {
	members := zsetBenchMembers(100000)
	fill := func() *zset {
		z := newZset(nil)
		for i, m := range members {
			z.set(m, float64(i))
		}
		return z
	}
	b.Run("add", func(b *testing.B) {
		b.ReportAllocs()
		z, i := newZset(nil), 0
		for b.Loop() {
			if i == len(members) {
				z, i = newZset(nil), 0
			}
			z.set(members[i], float64(i))
			i++
		}
	})
	b.Run("update", func(b *testing.B) {
		b.ReportAllocs()
		z := fill()
		rng := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			z.set(members[rng.IntN(len(members))], float64(rng.IntN(len(members))))
		}
	})
	b.Run("pop", func(b *testing.B) {
		b.ReportAllocs()
		z := fill()
		var one [1]zentry
		for b.Loop() {
			if z.len() == 0 {
				b.StopTimer()
				z = fill()
				b.StartTimer()
			}
			z.pop(one[:0], 1, false)
		}
	})
}
