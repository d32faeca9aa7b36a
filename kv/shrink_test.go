package kv

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// heapInUse returns the bytes of the heap in use once the garbage is
// collected.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestPubSubMemory: the Pub/Sub tables give their memory back as their
// names leave: after a client subscribed to 100,000 channels and as many
// patterns and unsubscribed from all, the heap is back to what it was
// before, within a twentieth of what they took, where Go's maps (the
// server's by name, the client's own) kept the slots of all 100,000.
// Serial: it measures the process's heap.
func TestPubSubMemory(t *testing.T) {
	s, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	const n = 100000
	name := func(i int) string { return "channel:" + strconv.Itoa(i) }
	before := heapInUse()
	for _, kind := range []string{"SUBSCRIBE", "PSUBSCRIBE"} {
		rc.doMany(n, func(i int) []string { return []string{kind, name(i)} })
	}
	subscribed := heapInUse()
	for _, kind := range []string{"UNSUBSCRIBE", "PUNSUBSCRIBE"} {
		rc.doMany(n, func(i int) []string { return []string{kind, name(i)} })
	}
	left := heapInUse()
	rc.do("RESET")
	if info := rc.do("INFO", "stats"); !strings.Contains(info, "\r\npubsub_channels:0\r\n") || !strings.Contains(info, "\r\npubsub_patterns:0\r\n") {
		t.Fatalf("INFO stats after the unsubscribes: %q; want no channel or pattern", info)
	}
	if grown, kept := subscribed-before, left-before; grown < 8<<20 || kept > grown/20 {
		t.Errorf("%d channels and patterns took %d bytes, and kept %d once unsubscribed; want at most a twentieth kept", 2*n, grown, kept)
	}
	var peak int
	onLoop(s, func() { peak = s.channels.peak })
	if peak >= minShrink {
		t.Errorf("the channels' table was last made for %d names; want it made again smaller", peak)
	}
}
