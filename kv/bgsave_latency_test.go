package kv

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestBgsaveLatency measures, with EVKV_BGSAVE_LATENCY=1, how long the
// loop is held during a background save of a million small keys: the
// longest step of the walk, and the longest PING a client sends
// meanwhile waits for its reply, beside the longest of as many PINGs
// before the save, which the machine's own delays make.
func TestBgsaveLatency(t *testing.T) {
	if os.Getenv("EVKV_BGSAVE_LATENCY") == "" {
		t.Skip("set EVKV_BGSAVE_LATENCY=1 to measure")
	}
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir})
	rc := dialRaw(t, addr)
	const n, batch = 1_000_000, 10_000
	cmds := make([][]string, batch)
	for i := 0; i < n; i += batch {
		for j := range batch {
			k := strconv.Itoa(i + j)
			cmds[j] = []string{"SET", "key:" + k, "value:" + k}
		}
		rc.sendTogether(cmds...)
		for range batch {
			rc.read()
		}
	}
	ping := dialRaw(t, addr)
	idle := func(n int) time.Duration {
		var worst time.Duration
		for range n {
			t0 := time.Now()
			ping.do("PING")
			worst = max(worst, time.Since(t0))
		}
		return worst
	}
	idle(1000)
	start := time.Now()
	if got := rc.do("BGSAVE"); got != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE = %q", got)
	}
	var worst time.Duration
	pings := 0
	for {
		t0 := time.Now()
		ping.do("PING")
		worst = max(worst, time.Since(t0))
		pings++
		if pings%100 == 0 && infoField(ping.do("INFO", "persistence"), "rdb_bgsave_in_progress") == "0" {
			break
		}
	}
	took := time.Since(start)
	before := idle(pings)
	var step time.Duration
	onLoop(s, func() { step = s.snap.lastBgsaveStep })
	st, _ := os.Stat(filepath.Join(dir, "dump.rdb"))
	t.Logf("%d keys saved in %v (%d bytes); longest walk step %v; longest of %d PINGs meanwhile %v, after it %v", n, took, st.Size(), step, pings, worst, before)
}
