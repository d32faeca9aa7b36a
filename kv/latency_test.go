package kv

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/resp"
)

// TestLatencyMonitorSamples: one sample a second, its worst; a ring of
// latencySamples; the worst ever kept past the ring; nothing under the
// threshold, nor with the monitor off.
func TestLatencyMonitorSamples(t *testing.T) {
	var m latencyMonitor
	m.note("command", time.Second, 100)
	if len(m.order) != 0 {
		t.Fatal("sampled with the monitor off")
	}
	m.threshold = 5
	m.note("command", 4*time.Millisecond, 100)
	if len(m.order) != 0 {
		t.Fatal("sampled under the threshold")
	}
	m.note("command", 7*time.Millisecond, 100)
	m.note("command", 9*time.Millisecond, 100)
	m.note("command", 6*time.Millisecond, 100)
	if h := m.events["command"].history(); len(h) != 1 || h[0] != (latencySample{100, 9}) {
		t.Fatalf("three spikes in one second: %v; want one sample of the worst, 9 ms", h)
	}
	m.note("command", 500*time.Millisecond, 101)
	for sec := int64(102); sec < 102+latencySamples; sec++ {
		m.note("command", time.Duration(sec)*time.Millisecond, sec)
	}
	ts := m.events["command"]
	h := ts.history()
	if len(h) != latencySamples || h[0].at != 102 || h[len(h)-1].at != 101+latencySamples || ts.max != 500 {
		t.Fatalf("after %d more seconds: %d samples from %d to %d, max %d; want the last %d, max 500",
			latencySamples, len(h), h[0].at, h[len(h)-1].at, ts.max, latencySamples)
	}
	m.note("expire-cycle", time.Second, 300)
	if !m.reset("command") || m.reset("command") || len(m.order) != 1 || m.order[0] != "expire-cycle" {
		t.Fatalf("after reset: %v", m.order)
	}
}

// TestLatencyCommands samples a slow command and reads it back through
// every subcommand.
func TestLatencyCommands(t *testing.T) {
	c, ctx := serverAndClient(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Do(ctx, "LATENCY", "DOCTOR").Val(); !strings.Contains(got.(string), "latency-monitor-threshold") {
		t.Errorf("LATENCY DOCTOR with the monitor off = %q", got)
	}
	must(c.ConfigSet(ctx, "latency-monitor-threshold", "1").Err())
	items := make([]any, 100000)
	for i := range items {
		items[i] = "item"
	}
	for range 5 {
		must(c.RPush(ctx, "l", items...).Err())
	}
	// LRANGE of 500,000 items takes well over a millisecond.
	for range 3 {
		must(c.LRange(ctx, "l", 0, -1).Err())
	}
	latest, err := c.Do(ctx, "LATENCY", "LATEST").Slice()
	must(err)
	var events []string
	for _, e := range latest {
		f := e.([]any)
		events = append(events, f[0].(string))
		if at, ms, worst := f[1].(int64), f[2].(int64), f[3].(int64); at < time.Now().Unix()-60 || ms < 1 || worst < ms {
			t.Errorf("LATENCY LATEST %q: at %d, latest %d ms, worst %d ms", f[0], at, ms, worst)
		}
	}
	if !strings.Contains(strings.Join(events, " "), "command") {
		t.Fatalf("LATENCY LATEST = %v; want a command event", latest)
	}
	event := "command"
	if !strings.Contains(" "+strings.Join(events, " ")+" ", " command ") {
		event = events[0]
	}
	hist, err := c.Do(ctx, "LATENCY", "HISTORY", event).Slice()
	must(err)
	if len(hist) == 0 || hist[0].([]any)[1].(int64) < 1 {
		t.Fatalf("LATENCY HISTORY %s = %v", event, hist)
	}
	graph, err := c.Do(ctx, "LATENCY", "GRAPH", event).Text()
	must(err)
	if !strings.HasPrefix(graph, event+" - high ") || !strings.Contains(graph, "s\n") {
		t.Errorf("LATENCY GRAPH %s = %q", event, graph)
	}
	doctor, err := c.Do(ctx, "LATENCY", "DOCTOR").Text()
	must(err)
	if !strings.Contains(doctor, ". "+event+": ") || !strings.Contains(doctor, "SLOWLOG") {
		t.Errorf("LATENCY DOCTOR = %q", doctor)
	}
	if err := c.Do(ctx, "LATENCY", "GRAPH", "nosuch").Err(); err == nil || err.Error() != "ERR No samples available for event 'nosuch'" {
		t.Errorf("LATENCY GRAPH of an event never sampled: %v", err)
	}
	hg, err := c.Do(ctx, "LATENCY", "HISTOGRAM", "lrange", "nosuch", "config").Result()
	must(err)
	m, _ := hg.(map[any]any)
	lr, _ := m["lrange"].(map[any]any)
	buckets, _ := lr["histogram_usec"].(map[any]any)
	cs, _ := m["config|set"].(map[any]any)
	if len(m) != 2 || lr["calls"] != int64(3) || len(buckets) == 0 || cs["calls"] != int64(1) {
		t.Errorf("LATENCY HISTOGRAM lrange nosuch config = %v; want lrange's 3 calls and config|set's 1", hg)
	}
	info := c.Info(ctx, "latencystats").Val()
	if !strings.Contains(info, "latency_percentiles_usec_lrange:p50=") || !strings.Contains(info, ",p99.9=") {
		t.Errorf("INFO latencystats = %q", info)
	}
	if n := c.Do(ctx, "LATENCY", "RESET", "nosuch", event).Val(); n != int64(1) {
		t.Errorf("LATENCY RESET nosuch %s = %v; want 1", event, n)
	}
	if got := c.Do(ctx, "LATENCY", "HISTORY", event).Val(); len(got.([]any)) != 0 {
		t.Errorf("LATENCY HISTORY after RESET = %v", got)
	}
}

// TestCompatLatency compares the replies that do not depend on timing.
func TestCompatLatency(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"LATENCY", "LATEST"}, {"LATENCY", "HISTORY", "command"}, {"LATENCY", "GRAPH", "command"},
		{"LATENCY", "RESET"}, {"LATENCY", "RESET", "a", "b"}, {"LATENCY"}, {"LATENCY", "NOSUCH"},
		{"LATENCY", "HISTORY"}, {"LATENCY", "LATEST", "x"},
		{"CONFIG", "GET", "latency-monitor-threshold"}, {"CONFIG", "SET", "latency-monitor-threshold", "-1"},
		{"CONFIG", "SET", "latency-monitor-threshold", "x"}, {"CONFIG", "SET", "latency-monitor-threshold", "100"},
		{"CONFIG", "GET", "latency-monitor-threshold"}, {"SLOWLOG", "HELP"}, {"LATENCY", "HELP"},
		{"LATENCY", "HISTOGRAM", "nosuch"}, {"CONFIG", "GET", "latency-tracking"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "101"}, {"CONFIG", "SET", "latency-tracking-info-percentiles", "abc"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.9 100"}, {"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", ""}, {"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", " 50  99"}, {"CONFIG", "SET", "latency-tracking-info-percentiles", "99.123456789 0.0000001"},
		{"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking", "maybe"}, {"CONFIG", "SET", "latency-tracking", "no"}, {"SET", "k", "v"},
		{"LATENCY", "HISTOGRAM", "set"}, {"INFO", "latencystats"},
	})
}

// TestHelpReplies sends every HELP subcommand followed by a PING: each
// reply must hold as many elements as its header says, end with HELP's
// own line as Redis's do, and leave the PING its +PONG.
func TestHelpReplies(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	for _, cm := range topCommands() {
		if cm.subs["help"] == nil {
			continue
		}
		name := strings.ToUpper(cm.name)
		v, _, err := resp.Parse([]byte(rc.do(name, "HELP")))
		if err != nil || len(v.Elems) < 3 {
			t.Fatalf("%s HELP: %v, %v", name, v, err)
		}
		if last := string(v.Elems[len(v.Elems)-1].Str); last != "    Prints this help." {
			t.Errorf("%s HELP ends with %q", name, last)
		}
		if got := rc.do("PING"); got != "+PONG\r\n" {
			t.Fatalf("PING after %s HELP = %q", name, got)
		}
	}
}

// TestLatencyHistogram checks the buckets and percentiles against what
// Redis 7.0 reported for the same durations: two SETs of 7 µs and one of
// 9 µs gave histogram_usec {8: 2, 16: 3} and p50=7.007, p99=9.023.
func TestLatencyHistogram(t *testing.T) {
	var h latencyHist
	for _, us := range []int64{7, 7, 9} {
		h.record(time.Duration(us) * time.Microsecond)
	}
	upTo, counts := h.cumulative()
	if len(upTo) != 2 || upTo[0]/1000 != 8 || counts[0] != 2 || upTo[1]/1000 != 16 || counts[1] != 3 {
		t.Errorf("buckets %v, counts %v; want 8 µs: 2, 16 µs: 3", upTo, counts)
	}
	if p50, p99 := h.percentile(50), h.percentile(99); p50 != 7007 || p99 != 9023 {
		t.Errorf("p50 %d, p99 %d ns; want 7007 and 9023", p50, p99)
	}
	// Durations under a microsecond count as 1 ns (Redis: p50=0.001 for
	// PING), over a second as one; 47 µs as Redis's 47.103; the 0th
	// percentile is its bucket's lowest value (Redis: ECHO's p0=1.000).
	var g latencyHist
	for _, d := range []time.Duration{0, 300 * time.Nanosecond, 47 * time.Microsecond, 5 * time.Second} {
		g.record(d)
	}
	upTo, counts = g.cumulative()
	want := []int64{1, 66, 1082130}
	var got []int64
	for _, u := range upTo {
		got = append(got, u/1000)
	}
	if !slices.Equal(got, want) || !slices.Equal(counts, []uint64{2, 3, 4}) {
		t.Errorf("buckets %v µs, counts %v; want about %v with 2, 3, 4", got, counts, want)
	}
	if p := g.percentile(50); p != 1 {
		t.Errorf("p50 = %d ns; want 1", p)
	}
	var e latencyHist
	e.record(time.Microsecond)
	if p0, p100 := e.percentile(0), e.percentile(100); p0 != 1000 || p100 != 1003 {
		t.Errorf("1 µs: p0 %d, p100 %d ns; want 1000 and 1003", p0, p100)
	}
	if p := g.percentile(75); p != 47103 {
		t.Errorf("p75 = %d ns; want 47103", p)
	}
	if p := g.percentile(100); p != 1002438655 {
		t.Errorf("p100 = %d ns; want 1002438655, the highest of the second's bucket", p)
	}
}

// TestLatencyTimedAsRedis: EXEC's time includes the commands it ran; a
// blocking command is counted in its histogram when data serves it, not
// when it times out; the clock's new epoch each cron does not make the
// command being timed negative.
func TestLatencyTimedAsRedis(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	items := []string{"RPUSH", "big"}
	for range 200000 {
		items = append(items, "x")
	}
	rc.do(items...)
	rc.do("MULTI")
	rc.do("LRANGE", "big", "0", "-1")
	rc.do("EXEC")
	usec := func(info, cmd string) int {
		i := strings.Index(info, "cmdstat_"+cmd+":")
		if i < 0 {
			t.Fatalf("no cmdstat_%s in %q", cmd, info)
		}
		f := info[i:]
		f = f[strings.Index(f, "usec=")+5:]
		n, _ := strconv.Atoi(f[:strings.IndexByte(f, ',')])
		return n
	}
	info := rc.do("INFO", "commandstats")
	if exec, lrange := usec(info, "exec"), usec(info, "lrange"); exec < lrange {
		t.Errorf("EXEC took %d µs, the LRANGE it ran %d", exec, lrange)
	}

	_, addr2 := startServer(t, Config{})
	for name, addr := range map[string]string{"evkv": addr2, "Redis": redisServer(t)} {
		waiter, pusher := dialRaw(t, addr), dialRaw(t, addr)
		waiter.do("BLPOP", "nolist", "0.01")
		waiter.send("BLPOP", "l", "0")
		for !strings.Contains(pusher.do("CLIENT", "LIST"), "cmd=blpop") {
			time.Sleep(time.Millisecond)
		}
		pusher.do("RPUSH", "l", "x")
		waiter.read()
		v, _, err := resp.Parse([]byte(pusher.do("LATENCY", "HISTOGRAM", "blpop")))
		if err != nil || len(v.Elems) != 2 || len(v.Elems[1].Elems) < 2 || v.Elems[1].Elems[1].Int != 1 {
			t.Errorf("%s: LATENCY HISTOGRAM blpop = %v, %v; want 1 call, the served one", name, v, err)
		}
	}

	s, _ := directServer(t)
	s.mono = s.tick()
	time.Sleep(20 * time.Millisecond)
	s.cron()
	if d := s.tick() - s.mono; d < 20*time.Millisecond || d > 10*time.Second {
		t.Errorf("a command timed across cron took %v; want about 20 ms", d)
	}
}
