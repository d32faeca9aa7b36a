package kv

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"unsafe"
)

// heapMetrics are the runtime's figures MEMORY STATS and INFO read, in
// bytes: the heap's live objects, its spans' unused space, its free spans
// kept, and everything the runtime has mapped and not released.
var heapMetrics = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
}

type heapFigures struct{ objects, unused, free, total, released int64 }

// readHeap reads heapMetrics, without stopping the world as
// runtime.ReadMemStats does.
func readHeap() heapFigures {
	samples := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	v := func(i int) int64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(samples[i].Value.Uint64())
	}
	return heapFigures{v(0), v(1), v(2), v(3), v(4)}
}

// notePeak records the heap's peak; the cron calls it, and MEMORY STATS.
func (s *Server) notePeak(allocated int64) int64 {
	s.memPeak = max(s.memPeak, allocated)
	return s.memPeak
}

// memOverhead is MEMORY STATS's accounting, as Redis's
// getMemoryOverheadData makes it, of the Go heap.
type memOverhead struct {
	peak, total, startup, clients, aofBuffer int64
	dbs                                      []dbOverhead
	overhead, keys, perKey, dataset          int64
	datasetPerc, peakPerc                    float64
	allocated, active, resident, rss         int64
}

type dbOverhead struct {
	id            int
	main, expires int64
}

func (s *Server) memOverhead() memOverhead {
	h := readHeap()
	m := memOverhead{total: h.objects, startup: s.memStartup}
	m.peak = s.notePeak(m.total)
	for _, c := range s.clients {
		m.clients += int64(unsafe.Sizeof(*c)) + int64(c.conn.InboundBuffered()+c.conn.OutboundBuffered())
	}
	if s.aof != nil {
		m.aofBuffer = int64(cap(s.aof.buf))
	}
	m.overhead = m.startup + m.clients + m.aofBuffer
	for _, d := range s.dbs {
		if d.size() == 0 {
			continue
		}
		o := dbOverhead{id: d.id, main: int64(d.keys.overheadBytes()), expires: int64(d.expires.overheadBytes())}
		m.dbs = append(m.dbs, o)
		m.overhead += o.main + o.expires
		m.keys += int64(d.size())
	}
	if m.keys > 0 {
		m.perKey = max(m.total-m.startup, 0) / m.keys
	}
	m.dataset = max(m.total-m.overhead, 0)
	if net := m.total - m.startup; net > 0 {
		m.datasetPerc = float64(m.dataset) * 100 / float64(net)
	}
	if m.peak > 0 {
		m.peakPerc = float64(m.total) * 100 / float64(m.peak)
	}
	m.allocated, m.active, m.resident = h.objects, h.objects+h.unused, h.total-h.released
	m.rss = rss()
	return m
}

// ratio is a/b, or 0 without b.
func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// memoryStats answers MEMORY STATS with Redis's fields, of Go's heap: the
// allocator's are the runtime's (allocated: live objects; active: with
// their spans' unused room; resident: all the runtime holds and has not
// released); Lua, functions, replication and cluster take nothing here.
func memoryStats(s *Server, c *client, args [][]byte) {
	m := s.memOverhead()
	w := &s.w
	w.Map(27 + len(m.dbs))
	num := func(k string, v int64) { w.BulkString(k); w.Int(v) }
	dbl := func(k string, v float64) { w.BulkString(k); w.Double(v) }
	num("peak.allocated", m.peak)
	num("total.allocated", m.total)
	num("startup.allocated", m.startup)
	num("replication.backlog", 0)
	num("clients.slaves", 0)
	num("clients.normal", m.clients)
	num("cluster.links", 0)
	num("aof.buffer", m.aofBuffer)
	num("lua.caches", s.scripts.mem)
	num("functions.caches", 0)
	for _, d := range m.dbs {
		w.BulkString("db." + strconv.Itoa(d.id))
		w.Map(3)
		num("overhead.hashtable.main", d.main)
		num("overhead.hashtable.expires", d.expires)
		num("overhead.hashtable.slot-to-keys", 0)
	}
	num("overhead.total", m.overhead)
	num("keys.count", m.keys)
	num("keys.bytes-per-key", m.perKey)
	num("dataset.bytes", m.dataset)
	dbl("dataset.percentage", m.datasetPerc)
	dbl("peak.percentage", m.peakPerc)
	num("allocator.allocated", m.allocated)
	num("allocator.active", m.active)
	num("allocator.resident", m.resident)
	dbl("allocator-fragmentation.ratio", ratio(m.active, m.allocated))
	num("allocator-fragmentation.bytes", m.active-m.allocated)
	dbl("allocator-rss.ratio", ratio(m.resident, m.active))
	num("allocator-rss.bytes", m.resident-m.active)
	dbl("rss-overhead.ratio", ratio(m.rss, m.resident))
	num("rss-overhead.bytes", m.rss-m.resident)
	dbl("fragmentation", ratio(m.rss, m.total))
	num("fragmentation.bytes", m.rss-m.total)
}

// memoryDoctor answers MEMORY DOCTOR with a report of evkv's own words on
// what Redis's looks at: an instance too small to judge, a past peak far
// above the heap now, a resident size far above the heap, big client
// buffers.
func memoryDoctor(s *Server, c *client, args [][]byte) {
	m := s.memOverhead()
	var b strings.Builder
	switch {
	case m.total < 5<<20:
		b.WriteString("The instance holds less than 5 MB: too little memory to judge. Ask again once it holds its data.\n")
	default:
		var issues []string
		if ratio(m.peak, m.total) > 1.5 {
			issues = append(issues, fmt.Sprintf("Peak memory: the heap once reached %s, more than 1.5 times the %s it holds now. "+
				"Go's collector returns free memory to the system over minutes; MEMORY PURGE returns it at once.", human(m.peak), human(m.total)))
		}
		if ratio(m.rss, m.total) > 1.4 && m.rss-m.total > 10<<20 {
			issues = append(issues, fmt.Sprintf("High resident size: the process holds %s for a heap of %s (%.2f times). "+
				"The collector keeps room to grow the heap before it runs (GOGC), and memory freed after a peak is returned slowly.",
				human(m.rss), human(m.total), ratio(m.rss, m.total)))
		}
		if n := int64(len(s.clients)); n > 0 && m.clients/n > 200<<10 {
			issues = append(issues, fmt.Sprintf("Big client buffers: %s a client on average, past 200 KB. Subscribers that read slowly, "+
				"large replies or long pipelines pile data up here; client-output-buffer-limit bounds them.", human(m.clients/n)))
		}
		if len(issues) == 0 {
			b.WriteString("No memory issue found.\n")
		} else {
			b.WriteString("Memory issues found:\n\n")
			for _, is := range issues {
				b.WriteString(" * " + is + "\n\n")
			}
		}
	}
	s.w.Verbatim("txt", []byte(b.String()))
}

// memoryPurge runs the collector and returns what is free to the system.
func memoryPurge(s *Server, c *client, args [][]byte) {
	debug.FreeOSMemory()
	s.w.OK()
}

// memoryMallocStats answers MEMORY MALLOC-STATS with the Go runtime's
// memory classes, one a line, in bytes.
func memoryMallocStats(s *Server, c *client, args [][]byte) {
	var names []string
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") || strings.HasPrefix(d.Name, "/gc/heap/") {
			names = append(names, d.Name)
		}
	}
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	var b strings.Builder
	b.WriteString("Go runtime memory statistics (runtime/metrics)\n")
	for _, sm := range samples {
		if sm.Value.Kind() == metrics.KindUint64 {
			fmt.Fprintf(&b, "%s %d\n", sm.Name, sm.Value.Uint64())
		}
	}
	s.w.Verbatim("txt", []byte(b.String()))
}
