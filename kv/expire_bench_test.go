package kv

import (
	"testing"
	"time"
)

// BenchmarkActiveExpire measures the reclaiming of stale keys by active
// expiry: an op is one sample of expireSample keys, all of them expired,
// out of a keyspace of a million (refilled when it runs out), with no log
// and no keyspace events, as kvexpire's servers run.
func BenchmarkActiveExpire(b *testing.B) {
	const keys = 1000000
	s, _ := directServer(b)
	d := s.dbs[0]
	now := time.Now().UnixMilli()
	b.ReportAllocs()
	for b.Loop() {
		if d.expires.len() < expireSample {
			b.StopTimer()
			d.flush()
			fillExpiring(d, "key:", keys, now-1)
			b.StartTimer()
		}
		// A deadline passed: the cycle stops after its first sample.
		if _, expired, _ := d.activeExpire(now, time.Time{}, expireSample); expired != expireSample {
			b.Fatalf("a sample of stale keys reclaimed %d; want %d", expired, expireSample)
		}
	}
}
