package main

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// A database's heap is mostly its keyspace: long-lived, and large next to
// what a request allocates. Go's default collector lets the heap grow to
// twice what is live before collecting, which for a keyspace of a few
// hundred megabytes doubles the server's memory for nothing. tuneGC lowers
// GOGC as the live heap grows, so that the heap may grow past what is live
// by gcHeadroom or an eighth, whichever is more, and keeps Go's default
// while the heap is small. GOGC set in the environment turns it off.
const (
	gcHeadroom = 16 << 20
	gcMinGOGC  = 10
)

// gcPercent returns the GOGC for a live heap of live bytes.
func gcPercent(live uint64) int {
	if live == 0 {
		return 100
	}
	room := max(gcHeadroom, live/8)
	return int(max(gcMinGOGC, min(100, room*100/live)))
}

// tuneGC adjusts GOGC every interval until ctx is done.
func tuneGC(ctx context.Context, interval time.Duration) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	current := 100
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if p := gcPercent(sample[0].Value.Uint64()); p != current {
			debug.SetGCPercent(p)
			current = p
		}
	}
}
