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

// TestWatchAndBlockMemory: the tables of the keys watched and of those
// clients block on give their memory back too: after a client WATCHed
// 100,000 keys and UNWATCHed them, and blocked on 100,000 keys until
// CLIENT UNBLOCK, the heap is back to what it was before, within a
// twentieth of what they took. Serial: it measures the process's heap.
func TestWatchAndBlockMemory(t *testing.T) {
	s, addr := startServer(t, Config{})
	rc, ctl := dialRaw(t, addr), dialRaw(t, addr)
	const n = 100000
	keys := func(cmd string, last ...string) []string {
		args := []string{cmd}
		for i := range n {
			args = append(args, "key:"+strconv.Itoa(i))
		}
		return append(args, last...)
	}
	id := rc.do("CLIENT", "ID")
	for _, tc := range []struct {
		name       string
		start, end func()
	}{
		{"WATCH", func() { rc.do(keys("WATCH")...) }, func() { rc.do("UNWATCH") }},
		{"BLPOP", func() {
			rc.send(keys("BLPOP", "0")...)
			waitBlocked(t, ctl, 1)
		}, func() {
			ctl.do("CLIENT", "UNBLOCK", strings.TrimSpace(strings.TrimPrefix(id, ":")))
			rc.read()
		}},
	} {
		before := heapInUse()
		tc.start()
		rc.w.Buf = nil // the test's own copy of the command
		held := heapInUse()
		tc.end()
		left := heapInUse()
		if grown, kept := held-before, left-before; grown < 4<<20 || kept > grown/20 {
			t.Errorf("%s of %d keys took %d bytes, and kept %d once done; want at most a twentieth kept", tc.name, n, grown, kept)
		}
	}
	var watchPeak, blockPeak int
	onLoop(s, func() { watchPeak, blockPeak = s.dbs[0].watchersPeak, s.dbs[0].blockingPeak })
	if watchPeak >= minShrink || blockPeak >= minShrink {
		t.Errorf("the tables were last made for %d watched and %d blocked keys; want them made again smaller", watchPeak, blockPeak)
	}
}
