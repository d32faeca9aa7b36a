package kv

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The latency monitor, as Redis's: with latency-monitor-threshold set (in
// milliseconds; 0, the default, turns it off), each event that took at
// least that long is sampled under its class — "command" and
// "fast-command" for commands, "expire-cycle" for the active expiry,
// "aof-write" and "aof-fsync-always" for the append-only file — and
// LATENCY reports the samples.

func init() {
	register(
		cmd("latency", -2, "", 0, 0, 0, "server", "2.8.13", "A container for latency diagnostics commands.", nil).withSubs(
			cmd("latest", 2, "admin noscript loading stale", 0, 0, 0, "", "2.8.13", "Returns the latest latency samples for all events.", latencyLatest),
			cmd("history", 3, "admin noscript loading stale", 0, 0, 0, "", "2.8.13", "Returns timestamp-latency samples for an event.", latencyHistory),
			cmd("reset", -2, "admin noscript loading stale", 0, 0, 0, "", "2.8.13", "Resets the latency data for one or more events.", latencyReset),
			cmd("graph", 3, "admin noscript loading stale", 0, 0, 0, "", "2.8.13", "Returns a latency graph for an event.", latencyGraph),
			cmd("doctor", 2, "admin noscript loading stale", 0, 0, 0, "", "2.8.13", "Returns a human-readable latency analysis report.", latencyDoctor),
			cmd("histogram", -2, "admin noscript loading stale", 0, 0, 0, "", "7.0.0", "Returns the cumulative distribution of latencies of a subset or all commands.", latencyHistogram),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "2.8.13", "Returns helpful text about the different subcommands.", latencyHelp),
		),
	)
}

// latencySamples is how many samples an event class keeps, one a second
// at most: Redis's LATENCY_TS_LEN.
const latencySamples = 160

// latencySample is an event class's worst latency in one second.
type latencySample struct {
	at int64 // Unix seconds; 0 for a slot not used yet
	ms int64
}

// latencySeries is an event class's samples, a ring, and its worst ever.
type latencySeries struct {
	samples [latencySamples]latencySample
	next    int // the slot the next second's sample takes
	max     int64
}

// latencyMonitor holds the event classes sampled, in the order they first
// were.
type latencyMonitor struct {
	threshold int64 // latency-monitor-threshold, ms
	events    map[string]*latencySeries
	order     []string
}

// on reports whether the monitor samples anything.
func (m *latencyMonitor) on() bool { return m.threshold > 0 }

// note samples d under event if it reaches the threshold.
func (m *latencyMonitor) note(event string, d time.Duration, nowSec int64) {
	ms := d.Milliseconds()
	if m.threshold <= 0 || ms < m.threshold {
		return
	}
	ts := m.events[event]
	if ts == nil {
		if m.events == nil {
			m.events = make(map[string]*latencySeries)
		}
		ts = new(latencySeries)
		m.events[event] = ts
		m.order = append(m.order, event)
	}
	ts.max = max(ts.max, ms)
	if prev := ts.last(); prev.at == nowSec {
		prev.ms = max(prev.ms, ms) // one sample a second: its worst
		return
	}
	ts.samples[ts.next] = latencySample{at: nowSec, ms: ms}
	ts.next = (ts.next + 1) % latencySamples
}

// last returns the latest sample.
func (ts *latencySeries) last() *latencySample {
	return &ts.samples[(ts.next+latencySamples-1)%latencySamples]
}

// history returns an event class's samples, oldest first.
func (ts *latencySeries) history() []latencySample {
	var out []latencySample
	for j := range latencySamples {
		if sm := ts.samples[(ts.next+j)%latencySamples]; sm.at != 0 {
			out = append(out, sm)
		}
	}
	return out
}

// reset forgets event and reports whether it had samples.
func (m *latencyMonitor) reset(event string) bool {
	if m.events[event] == nil {
		return false
	}
	delete(m.events, event)
	m.order = slices.DeleteFunc(m.order, func(e string) bool { return e == event })
	return true
}

// clock returns the time, to time an event with since, when the monitor
// is on; when it is off, the zero time, without reading the clock.
func (m *latencyMonitor) clock() time.Time {
	if !m.on() {
		return time.Time{}
	}
	return time.Now()
}

// since returns the time since start, a time from clock, or 0 when the
// monitor is off.
func (m *latencyMonitor) since(start time.Time) time.Duration {
	if !m.on() || start.IsZero() {
		return 0
	}
	return time.Since(start)
}

func latencyLatest(s *Server, c *client, args [][]byte) {
	m := &s.latency
	s.w.Array(len(m.order))
	for _, event := range m.order {
		ts := m.events[event]
		last := ts.last()
		s.w.Array(4)
		s.w.BulkString(event)
		s.w.Int(last.at)
		s.w.Int(last.ms)
		s.w.Int(ts.max)
	}
}

func latencyHistory(s *Server, c *client, args [][]byte) {
	ts := s.latency.events[string(args[2])]
	if ts == nil {
		s.w.Array(0)
		return
	}
	h := ts.history()
	s.w.Array(len(h))
	for _, sm := range h {
		s.w.Array(2)
		s.w.Int(sm.at)
		s.w.Int(sm.ms)
	}
}

func latencyReset(s *Server, c *client, args [][]byte) {
	m := &s.latency
	n := 0
	if len(args) == 2 {
		n = len(m.order)
		m.events, m.order = nil, nil
	}
	for _, a := range args[2:] {
		if m.reset(string(a)) {
			n++
		}
	}
	s.w.Int(int64(n))
}

// latencyGraph draws an event class's samples, oldest on the left, as
// columns scaled between the lowest and the highest, each labelled below
// with how long ago it was taken, in blocks of 80 columns.
func latencyGraph(s *Server, c *client, args [][]byte) {
	event := string(args[2])
	ts := s.latency.events[event]
	if ts == nil {
		s.w.Error("ERR No samples available for event '" + event + "'")
		return
	}
	h := ts.history()
	low, high := int64(math.MaxInt64), int64(0)
	for _, sm := range h {
		low, high = min(low, sm.ms), max(high, sm.ms)
	}
	const rows = 4
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, high, low, ts.max)
	b.WriteString(strings.Repeat("-", 80) + "\n")
	heights := make([]int, len(h)) // in half cells: 1 to 2*rows
	for i, sm := range h {
		heights[i] = 1 // the lowest sample still shows
		if high > low {
			heights[i] = 1 + int((sm.ms-low)*(rows*2-1)/(high-low))
		}
	}
	// Ages, written down each column: "12s", "5m", "2h", "1d".
	now := s.now() / 1000
	ages := make([]string, len(h))
	depth := 0
	for i, sm := range h {
		ages[i] = shortAge(now - sm.at)
		depth = max(depth, len(ages[i]))
	}
	// 80 columns a block: a column's top cell is '#' (a whole cell) or
	// '_' (a half), with '|' under it.
	for start := 0; start < len(h); start += 80 {
		end := min(start+80, len(h))
		for row := rows - 1; row >= 0; row-- {
			line := make([]byte, end-start)
			for i, ht := range heights[start:end] {
				top := (ht - 1) / 2
				switch {
				case row < top:
					line[i] = '|'
				case row == top && ht%2 == 0:
					line[i] = '#'
				case row == top:
					line[i] = '_'
				default:
					line[i] = ' '
				}
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat(" ", end-start) + "\n")
		for row := range depth {
			line := make([]byte, end-start)
			for i, a := range ages[start:end] {
				line[i] = ' '
				if row < len(a) {
					line[i] = a[row]
				}
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	s.w.Verbatim("txt", []byte(b.String()))
}

// shortAge writes an age in seconds in its largest unit.
func shortAge(sec int64) string {
	switch {
	case sec < 60:
		return strconv.FormatInt(sec, 10) + "s"
	case sec < 3600:
		return strconv.FormatInt(sec/60, 10) + "m"
	case sec < 86400:
		return strconv.FormatInt(sec/3600, 10) + "h"
	}
	return strconv.FormatInt(sec/86400, 10) + "d"
}

// latencyDoctor reports on each event class: how many spikes, their mean
// and mean deviation, how often they came, the worst; and what may help.
func latencyDoctor(s *Server, c *client, args [][]byte) {
	m := &s.latency
	var b strings.Builder
	switch {
	case !m.on() && len(m.order) == 0:
		b.WriteString("The latency monitor is off: CONFIG SET latency-monitor-threshold <milliseconds> turns it on, and the events that take at least that long are then sampled.\n")
	case len(m.order) == 0:
		fmt.Fprintf(&b, "No event has taken %d ms or more since the latency monitor was turned on or reset.\n", m.threshold)
	default:
		b.WriteString("Latency spikes were observed:\n\n")
		advice := map[string]bool{}
		for i, event := range m.order {
			h := m.events[event].history()
			var sum int64
			for _, sm := range h {
				sum += sm.ms
			}
			mean := float64(sum) / float64(len(h))
			var dev float64
			for _, sm := range h {
				dev += math.Abs(float64(sm.ms) - mean)
			}
			dev /= float64(len(h))
			period := 0.0
			if len(h) > 1 {
				period = float64(h[len(h)-1].at-h[0].at) / float64(len(h)-1)
			}
			fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %.0f ms, mean deviation %.0f ms, one every %.2f s). Worst ever %d ms.\n",
				i+1, event, len(h), mean, dev, period, m.events[event].max)
			advice[event] = true
		}
		b.WriteString("\nWhat may help:\n\n")
		if advice["command"] || advice["fast-command"] {
			b.WriteString("- SLOWLOG GET lists the commands that ran longest, with their arguments.\n")
			if s.slowlog.slowerThan < 0 || s.slowlog.slowerThan > m.threshold*1000 {
				fmt.Fprintf(&b, "- The slow log keeps only commands slower than the threshold it has: CONFIG SET slowlog-log-slower-than %d logs those this monitor samples.\n", m.threshold*1000)
			}
		}
		if advice["fast-command"] {
			b.WriteString("- Commands that run in constant or logarithmic time were slow: the process may have been starved of CPU (another process, a virtual machine's neighbours) or paused by the collector.\n")
		}
		if advice["command"] {
			b.WriteString("- Commands over large values (KEYS, SMEMBERS or LRANGE of large collections, DEL of large values) take time in proportion to them: SCAN, HSCAN, SSCAN and UNLINK spread that work.\n")
		}
		if advice["expire-cycle"] {
			b.WriteString("- Many keys expired at once: expiry times spread over a range rather than one instant keep the expiry cycle short.\n")
		}
		if advice["aof-write"] || advice["aof-fsync-always"] {
			b.WriteString("- Writing the append-only file was slow: a faster disk, or appendfsync everysec, which syncs once a second off the loop.\n")
		}
	}
	s.w.Verbatim("txt", []byte(b.String()))
}

func latencyHelp(s *Server, c *client, args [][]byte) {
	s.help("LATENCY",
		"DOCTOR", "    Return a human readable latency analysis report.",
		"GRAPH <event>", "    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>", "    Return time-latency samples for the <event> class.",
		"LATEST", "    Return the latest latency samples for all events.",
		"RESET [<event> ...]", "    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]", "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
	)
}

// Per-command latency histograms, as Redis 7.0 keeps them with
// latency-tracking on (the default): each command's duration in whole
// microseconds, recorded in nanoseconds and clamped to [1 ns, 1 s],
// counted in the buckets of an HDR histogram of two significant digits —
// exact below 256 ns, then 128 buckets in each power of two. LATENCY
// HISTOGRAM reports cumulative counts at the powers of two from 1024 ns;
// INFO latencystats percentiles.
const (
	histMaxNs   = 1_000_000_000
	histSubBits = 7                        // 2^7 buckets in each power of two from 2^7 up
	histRows    = 1 + 29 - histSubBits + 1 // row 0: values under 2^7, exact; then one a power of two, 2^7 to 2^29
)

// latencyHist counts a command's durations: a row of buckets per power of
// two, allocated when a duration first falls in it.
type latencyHist struct {
	rows  [histRows]*[1 << histSubBits]uint64
	total uint64
}

// histBucket returns the row and column of ns, clamped to the range.
func histBucket(ns int64) (row, col int) {
	ns = min(max(ns, 1), histMaxNs)
	if ns < 1<<histSubBits {
		return 0, int(ns)
	}
	exp := bits.Len64(uint64(ns)) - 1
	return exp - histSubBits + 1, int(ns>>(exp-histSubBits)) - 1<<histSubBits
}

// histRange returns the lowest and highest values row, col's bucket holds.
func histRange(row, col int) (low, high int64) {
	if row == 0 {
		return int64(col), int64(col)
	}
	shift := row - 1 // the bucket's width is 2^shift
	low = int64(1<<histSubBits+col) << shift
	return low, low + 1<<shift - 1
}

// record counts a command that took d.
func (h *latencyHist) record(d time.Duration) {
	row, col := histBucket(d.Microseconds() * 1000)
	r := h.rows[row]
	if r == nil {
		r = new([1 << histSubBits]uint64)
		h.rows[row] = r
	}
	r[col]++
	h.total++
}

// each calls fn for every bucket that holds counts, in order.
func (h *latencyHist) each(fn func(low, high int64, n uint64) bool) {
	for row, r := range h.rows {
		if r == nil {
			continue
		}
		for col, n := range r {
			if n > 0 {
				if low, high := histRange(row, col); !fn(low, high, n) {
					return
				}
			}
		}
	}
}

// percentile returns the value at the p-th percentile, in nanoseconds, as
// an HDR histogram reports it: the highest value of its bucket, the
// lowest for the 0th.
func (h *latencyHist) percentile(p float64) int64 {
	want := max(uint64(min(p, 100)/100*float64(h.total)+0.5), 1)
	var sum uint64
	at := int64(0)
	h.each(func(low, high int64, n uint64) bool {
		sum += n
		if sum < want {
			return true
		}
		at = high
		if p == 0 {
			at = low
		}
		return false
	})
	return at
}

// cumulative returns, for the powers of two from 1024 ns up, the highest
// value of each one's bucket and how many durations fell at or below it,
// where that count grew, until it reaches the total: LATENCY HISTOGRAM's
// buckets.
func (h *latencyHist) cumulative() (upTo []int64, counts []uint64) {
	var sum, prev uint64
	level := int64(1024)
	next := func() {
		if sum > prev {
			_, high := histRange(histBucket(level))
			if level > histMaxNs {
				high = level + level>>histSubBits - 1 // past the clamp: the level's own width
			}
			upTo, counts = append(upTo, high), append(counts, sum)
			prev = sum
		}
		level <<= 1
	}
	h.each(func(low, high int64, n uint64) bool {
		for low > level {
			next() // the levels below this bucket
		}
		sum += n // a level's own bucket counts at it
		return true
	})
	for prev < sum {
		next()
	}
	return upTo, counts
}

func latencyHistogram(s *Server, c *client, args [][]byte) {
	var cmds []*command
	add := func(cm *command) {
		if s.cmdStats[cm.id].hist != nil {
			cmds = append(cmds, cm)
		}
	}
	if len(args) == 2 {
		for _, cm := range allCommands() {
			add(cm)
		}
	}
	for _, a := range args[2:] {
		cm := namedCommand(string(a))
		if cm == nil {
			continue // as Redis: no entry for a name it does not know
		}
		add(cm)
		subs := slices.SortedFunc(maps.Values(cm.subs), func(a, b *command) int { return strings.Compare(a.name, b.name) })
		for _, sc := range subs {
			add(sc)
		}
	}
	s.w.Map(len(cmds))
	for _, cm := range cmds {
		h := s.cmdStats[cm.id].hist
		s.w.BulkString(cm.name)
		s.w.Map(2)
		s.w.BulkString("calls")
		s.w.Int(int64(h.total))
		s.w.BulkString("histogram_usec")
		upTo, counts := h.cumulative()
		s.w.Map(len(upTo))
		for i := range upTo {
			s.w.Int(upTo[i] / 1000)
			s.w.Int(int64(counts[i]))
		}
	}
}

// latencyStats writes INFO's latencystats lines: each command's
// percentiles, as latency-tracking-info-percentiles lists them.
func (s *Server) latencyStats(b *strings.Builder) {
	if !s.latencyTracking {
		return
	}
	for _, cm := range allCommands() {
		h := s.cmdStats[cm.id].hist
		if h == nil {
			continue
		}
		fmt.Fprintf(b, "latency_percentiles_usec_%s:", cm.name)
		for i, p := range s.latencyPercentiles {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "p%s=%.3f", formatPercentile(p), float64(h.percentile(p))/1000)
		}
		b.WriteString("\r\n")
	}
}

// parsePercentiles parses latency-tracking-info-percentiles: numbers
// between 0 and 100, each after one space, as Redis splits them.
func parsePercentiles(v string) ([]float64, error) {
	if v == "" {
		return nil, nil
	}
	var out []float64
	for _, f := range strings.Split(v, " ") {
		p, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(p) {
			return nil, configError("Invalid latency-tracking-info-percentiles parameters")
		}
		if p < 0 || p > 100 {
			return nil, configError("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
		out = append(out, p)
	}
	return out, nil
}

// formatPercentile writes p as Redis does: six decimals, trailing zeros
// and point trimmed.
func formatPercentile(p float64) string {
	s := strconv.FormatFloat(p, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// formatPercentiles writes latency-tracking-info-percentiles as CONFIG
// GET shows it.
func formatPercentiles(ps []float64) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = formatPercentile(p)
	}
	return strings.Join(out, " ")
}
