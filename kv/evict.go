package kv

import (
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// An evictPolicy is maxmemory-policy: which keys go when the memory used
// passes maxmemory, as Redis's evict.c chooses them.
type evictPolicy uint8

const (
	noEviction evictPolicy = iota
	allKeysLRU
	volatileLRU
	allKeysLFU
	volatileLFU
	allKeysRandom
	volatileRandom
	volatileTTL
)

var evictPolicyNames = [...]string{
	noEviction:     "noeviction",
	allKeysLRU:     "allkeys-lru",
	volatileLRU:    "volatile-lru",
	allKeysLFU:     "allkeys-lfu",
	volatileLFU:    "volatile-lfu",
	allKeysRandom:  "allkeys-random",
	volatileRandom: "volatile-random",
	volatileTTL:    "volatile-ttl",
}

func (p evictPolicy) String() string { return evictPolicyNames[p] }

// volatile reports whether p takes only keys with a TTL.
func (p evictPolicy) volatile() bool {
	return p == volatileLRU || p == volatileLFU || p == volatileRandom || p == volatileTTL
}

// lru reports whether p evicts the least recently used keys.
func (p evictPolicy) lru() bool { return p == allKeysLRU || p == volatileLRU }

// lfu reports whether p keeps access frequencies (an entry's lru field
// holds them then, as Redis's lru field does).
func (p evictPolicy) lfu() bool { return p == allKeysLFU || p == volatileLFU }

func parseEvictPolicy(v string) (evictPolicy, bool) {
	for p, name := range evictPolicyNames {
		if strings.EqualFold(v, name) {
			return evictPolicy(p), true
		}
	}
	return 0, false
}

// eviction is maxmemory and its policy, and what they need.
type eviction struct {
	max      int64  // maxmemory, bytes; 0: none
	maxSet   uint64 // maxmemory as set: an unsigned long long in Redis, beyond what max holds
	policy   evictPolicy
	samples  int // maxmemory-samples
	tenacity int // maxmemory-eviction-tenacity

	lfuLogFactor int64 // lfu-log-factor
	lfuDecayTime int64 // lfu-decay-time, minutes

	// oom is whether the memory used was past maxmemory, with nothing
	// left to evict, when the last command was checked: a script that
	// began then may not add to it (Redis's pre_command_oom_state).
	oom bool

	nextDB int  // the random policies' next database
	later  bool // evictLater's task is queued
	pool   [evictPoolSize]evictCandidate
	mem    memEstimate
}

// memEstimate is the memory the server uses, as maxmemory counts it: the
// heap's live bytes when the collector last marked them, plus what was
// allocated since (the arguments of the commands that will store them
// until the next reading of the runtime's counters), less what the keys
// evicted since were estimated to hold. Garbage made since the last
// collection counts until the next (see performEvictions).
type memEstimate struct {
	cycles  uint64 // the collections seen
	live    int64  // the live heap they left
	allocs  int64  // the allocation counter when the last was seen
	now     int64  // the allocation counter at the last reading
	readAt  int64  // the server's time of the last reading, Unix ms
	pending int64  // argument bytes of commands since then
	freed   int64  // evicted keys' estimated bytes since the last collection
	gc      atomic.Bool
}

// memMetrics are the runtime's counters memEstimate reads.
var memMetrics = [...]string{"/gc/cycles/total:gc-cycles", "/gc/heap/live:bytes", "/gc/heap/allocs:bytes", "/memory/classes/heap/objects:bytes"}

// read reads the runtime's counters: a collection that ended since the
// last reading restarts the count from the heap it left, and from the
// allocation counter as it was at the collection's end, or less, which
// errs on the side of evicting: the larger of two bounds below it, the
// counter at the last reading (exact to what a millisecond allocates
// while commands run, as they read it) and the counter less what the
// heap's objects hold beyond the live ones (exact once the dead objects
// are swept; before, as many as the live ones under GOGC's default).
func (m *memEstimate) read() {
	var samples [len(memMetrics)]metrics.Sample
	for i, name := range memMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples[:])
	cycles, live := samples[0].Value.Uint64(), int64(samples[1].Value.Uint64())
	allocs, objects := int64(samples[2].Value.Uint64()), int64(samples[3].Value.Uint64())
	switch {
	case m.cycles == 0: // the first reading: the heap is what there is
		m.cycles, m.live, m.allocs = cycles, objects, allocs
	case cycles != m.cycles:
		m.cycles, m.live, m.allocs, m.freed = cycles, live, max(m.now, allocs-max(0, objects-live)), 0
	}
	m.now, m.pending = allocs, 0
}

// used returns the estimate.
func (m *memEstimate) used() int64 {
	return max(0, m.live+m.now-m.allocs+m.pending-m.freed)
}

// usedMemory returns the memory maxmemory is compared with, the runtime's
// counters read at most once a millisecond.
func (s *Server) usedMemory() int64 {
	m := &s.evict.mem
	if m.readAt != s.ms || m.cycles == 0 {
		m.read()
		m.readAt = s.ms
	}
	return m.used()
}

// mayBeGarbage reports whether a collection may take the estimate down by
// enough to matter: as much was allocated since the last, and not offset
// by evictions, as a sixteenth of maxmemory (values overwritten, keys
// deleted, buffers let go), or a quarter of it was allocated or evicted
// at all (keys evicted in a burst make what is allocated after them look
// like data offset by them, and the figure's ground, the live heap, is
// then out of date).
func (m *memEstimate) mayBeGarbage(max int64) bool {
	allocated := m.now - m.allocs + m.pending
	return allocated-m.freed >= max/16 || allocated >= max/4 || m.freed >= max/4
}

// collect makes a collection, so that the estimate's garbage is taken
// off: a small heap (below syncCollect) at once, on the loop, a few
// milliseconds at most, after which the estimate is read again and
// reported done; a larger one on a goroutine of its own, the loop going
// on, meanwhile allowed an eighth past maxmemory (performEvictions).
func (s *Server) collect() (done bool) {
	m := &s.evict.mem
	if m.live < syncCollect {
		runtime.GC()
		m.read()
		return true
	}
	m.gc.Store(true)
	go func() {
		runtime.GC()
		m.gc.Store(false)
	}()
	return false
}

// syncCollect is the live heap below which a collection is made on the
// loop.
const syncCollect = 8 << 20

// Results of performEvictions, as Redis's.
const (
	evictOK      = iota // within maxmemory
	evictRunning        // keys went, more must: the time for it ran out
	evictFail           // past maxmemory and nothing can go
)

// performEvictions evicts keys, as the policy picks them, until the
// memory used is back within maxmemory, or the time
// maxmemory-eviction-tenacity allows is up, as Redis's performEvictions
// (the rest then goes in a task of the loop's, after what is queued).
// It runs before each command while maxmemory is set, and in the cron.
// Past maxmemory, garbage may be what makes the excess: a collection is
// made first if it may take enough off (mayBeGarbage).
func (s *Server) performEvictions() int {
	ev := &s.evict
	if ev.max == 0 || s.replay || s.clientsPaused() {
		return evictOK // as Redis: nothing goes while clients are paused
	}
	// While a collection runs, which will take garbage off the estimate,
	// it may pass maxmemory by an eighth, as garbage goes on being made.
	bound := ev.max
	collecting := ev.mem.gc.Load()
	if collecting {
		bound += ev.max / 8
	}
	used := s.usedMemory()
	if used <= bound {
		return evictOK
	}
	if !collecting && ev.mem.mayBeGarbage(ev.max) {
		if !s.collect() {
			return evictOK // within the eighth while the collection runs
		}
		if used = ev.mem.used(); used <= bound {
			return evictOK
		}
	}
	if ev.policy == noEviction {
		return evictFail
	}
	toFree := used - bound
	limit := ev.timeLimit()
	start := time.Now()
	var freed int64
	for n := 1; freed < toFree; n++ {
		d, key, e := s.evictionVictim()
		if d == nil {
			return evictFail
		}
		freed += s.evictKey(d, key, e)
		if limit >= 0 && n%16 == 0 && time.Since(start) > limit {
			s.evictLater()
			return evictRunning
		}
	}
	return evictOK
}

// evictLater evicts in a task of the loop's, after what is queued: what
// performEvictions ran out of time for, as Redis's evictionTimeProc goes
// on at each turn of its loop, and what a new maxmemory asks; one task at
// a time.
func (s *Server) evictLater() {
	if s.evict.later || s.ev == nil {
		return
	}
	s.evict.later = true
	s.ev.Submit(0, func() {
		s.evict.later = false
		s.tick()
		s.performEvictions()
	})
}

// outOfMemory evicts what the policy lets go, if the memory used is past
// maxmemory, and reports whether cmd is to be refused, as Redis's
// processCommand does: past maxmemory with nothing left to evict, a
// command that may add to the memory used (denyoom, or an EXEC of one) is
// refused, and so is any queued in MULTI but EXEC, DISCARD, QUIT and
// RESET. The arguments of a command that may add to the memory used count
// in the estimate until the runtime's counters are read again.
func (s *Server) outOfMemory(c *client, cmd *command, args [][]byte) bool {
	oom := s.performEvictions() == evictFail
	s.evict.oom = oom
	if cmd.flags&cmdDenyOOM != 0 {
		for _, a := range args {
			s.evict.mem.pending += int64(len(a))
		}
	}
	if !oom {
		return false
	}
	switch {
	case cmd.flags&cmdDenyOOM != 0:
		return true
	case cmd.name == "exec":
		return c.flags&flagQueuedDenyOOM != 0
	case c.flags&flagMulti != 0:
		return cmd.name != "discard" && cmd.name != "quit" && cmd.name != "reset"
	}
	return false
}

// timeLimit is how long one performEvictions may evict keys for
// maxmemory-eviction-tenacity, as Redis's evictionTimeLimitUs: 50 µs a
// point up to 10 (0: sixteen keys, then the check), growing 15% a point
// beyond; at 100, -1: no limit.
func (ev *eviction) timeLimit() time.Duration {
	t := ev.tenacity
	switch {
	case t <= 10:
		return time.Duration(50*t) * time.Microsecond
	case t < 100:
		return time.Duration(500*math.Pow(1.15, float64(t-10))) * time.Microsecond
	}
	return -1
}

// evictKey deletes key, whose entry e is, from d for maxmemory, as Redis's
// eviction does: the log gets a DEL, the evicted event is sent, WATCHes
// and caching clients see a change. It returns the bytes the key was estimated to hold.
func (s *Server) evictKey(d *db, key []byte, e *entry) int64 {
	size := int64(d.keyBytes(key, e, memorySamples))
	s.evict.mem.freed += size
	d.expiring(key) // the rewrite under way is told, as of an expired key
	d.remove(key)
	s.stats.evictedKeys++
	if s.aof != nil {
		s.propagate(d.id, [][]byte{[]byte("DEL"), key})
	}
	s.notify(notifyEvicted, "evicted", key, d.id)
	s.keyChanged(d, key, nil)
	return size
}

// keyBytes estimates the bytes key and its entry e take in d, the
// elements of an aggregate sampled as MEMORY USAGE samples them.
func (d *db) keyBytes(key []byte, e *entry, samples int) int {
	size := d.keys.slotBytes() + heapBytes(len(key)) + valueBytes(e, samples)
	if e.exp != 0 {
		size += d.expires.slotBytes()
	}
	return size
}

// evictPoolSize is how many candidates the pool keeps, as Redis's
// EVPOOL_SIZE.
const evictPoolSize = 16

// An evictCandidate is a key the pool holds, with its score: the higher,
// the sooner it goes.
type evictCandidate struct {
	score uint64
	db    int
	key   string
	used  bool // false: an empty place
}

// evictionVictim returns the key to evict next, its database and its
// entry, or a nil database if no key can go: for the LRU, LFU and TTL
// policies the best of the pool, which each call refills with keys
// sampled from every database, as Redis's evictionPoolPopulate; for the
// random ones a random key of the next database that has one. The key's
// bytes are the keyspace's or the pool's own string's, read only (as
// reclaim reads an expired key's).
func (s *Server) evictionVictim() (*db, []byte, *entry) {
	ev := &s.evict
	volatile := ev.policy.volatile()
	if ev.policy == allKeysRandom || ev.policy == volatileRandom {
		for range s.dbs {
			d := s.dbs[ev.nextDB%len(s.dbs)]
			ev.nextDB++
			if volatile && d.expires.len() > 0 {
				k, _ := d.expires.at(d.expires.random())
				return d, stringBytes(k), d.keys.get(stringBytes(k))
			}
			if !volatile && d.keys.len() > 0 {
				k, e := d.keys.at(d.keys.random())
				return d, stringBytes(k), e
			}
		}
		return nil, nil, nil
	}
	for {
		keys := 0
		for _, d := range s.dbs {
			if volatile {
				keys += d.expires.len()
			} else {
				keys += d.keys.len()
			}
			s.populatePool(d, volatile)
		}
		if keys == 0 {
			return nil, nil, nil
		}
		// The best candidate still there; one deleted since it was
		// sampled is passed over, and when all were, the pool is filled
		// again.
		for k := evictPoolSize - 1; k >= 0; k-- {
			c := &ev.pool[k]
			if !c.used {
				continue
			}
			d, key := s.dbs[c.db], stringBytes(c.key)
			c.key, c.used = "", false
			if e := d.keys.get(key); e != nil && (!volatile || e.exp != 0) {
				return d, key, e
			}
		}
	}
}

// populatePool samples maxmemory-samples keys of d (of those with a TTL
// if volatile) into the pool, each in the place its score gives it among
// those there, the pool's worst dropped when it is full.
func (s *Server) populatePool(d *db, volatile bool) {
	ev := &s.evict
	n := d.keys.len()
	if volatile {
		n = d.expires.len()
	}
	for range min(ev.samples, n) {
		var key string
		var e *entry
		if volatile {
			key, _ = d.expires.at(d.expires.random())
			e = d.keys.get(stringBytes(key))
		} else {
			key, e = d.keys.at(d.keys.random())
		}
		if e == nil {
			continue
		}
		ev.insertCandidate(s.evictScore(e), d.id, key)
	}
}

// evictScore is e's score: how long it has been idle, how rarely it is
// used, or how soon it expires, as the policy counts.
func (s *Server) evictScore(e *entry) uint64 {
	switch {
	case s.evict.policy.lfu():
		return 255 - uint64(s.lfuDecayed(e))
	case s.evict.policy == volatileTTL:
		return math.MaxUint64 - uint64(e.exp)
	}
	return uint64(s.clock() - e.lru)
}

// insertCandidate puts key in the pool, kept in ascending order of score,
// as Redis's evictionPoolPopulate does: past the worst of a full pool it
// is not taken.
func (ev *eviction) insertCandidate(score uint64, db int, key string) {
	p := &ev.pool
	k := 0
	for k < evictPoolSize && p[k].used && p[k].score < score {
		k++
	}
	switch {
	case k == 0 && p[evictPoolSize-1].used:
		return // no better than the worst of a full pool
	case k < evictPoolSize && !p[k].used:
		// an empty place
	case !p[evictPoolSize-1].used:
		copy(p[k+1:], p[k:evictPoolSize-1]) // room on the right
	default:
		k--
		copy(p[:k], p[1:k+1]) // the worst goes
	}
	p[k] = evictCandidate{score: score, db: db, key: key, used: true}
}

// The LFU counter, as Redis's: an entry's lru field holds the minutes
// (16 bits) when its counter was last decremented and the counter (8
// bits), a logarithm of its accesses.
const lfuInitVal = 5

// lfuMinutes is the server's time in minutes, 16 bits of it.
func (s *Server) lfuMinutes() uint32 { return uint32(s.now()/60000) & 0xffff }

// lfuNew is the lru field of a new entry under an LFU policy.
func (s *Server) lfuNew() uint32 { return s.lfuMinutes()<<8 | lfuInitVal }

// lfuDecayed returns e's counter less a point for each lfu-decay-time
// minutes since it was last decremented, as Redis's LFUDecrAndReturn.
func (s *Server) lfuDecayed(e *entry) uint32 {
	return lfuDecay(e.lru, s.lfuMinutes(), s.evict.lfuDecayTime)
}

// lfuDecay is lfuDecayed of an lru field at minute now, with
// lfu-decay-time decayTime.
func lfuDecay(lru, now uint32, decayTime int64) uint32 {
	ldt, counter := lru>>8&0xffff, lru&0xff
	elapsed := now - ldt
	if now < ldt {
		elapsed = 0xffff - ldt + now
	}
	if decayTime > 0 {
		periods := int64(elapsed) / decayTime
		counter = uint32(max(0, int64(counter)-periods))
	}
	return counter
}

// loadedLRU is the lru field of a value RESTORE or the RDB file gives,
// with the idle seconds or the frequency given with it (-1: none), as
// Redis's objectSetLRUOrLFU: the frequency under an LFU policy, the idle
// time under the others, else a new entry's.
func (s *Server) loadedLRU(idle, freq int64) uint32 {
	lfu := s.evict.policy.lfu()
	switch {
	case lfu && freq >= 0:
		return s.lfuMinutes()<<8 | uint32(freq)
	case !lfu && idle >= 0:
		return s.clock() - uint32(idle) // wraps as the idle time does back
	}
	return s.newLRU()
}

// accessSaver is what the RDB writer saves of an entry's access, as
// Redis's rdbSaveKeyValuePair saves it: its idle seconds under an LRU
// policy, its counter under an LFU one, nothing under the others; the
// server's clocks are taken when the writer is made, as a background
// save writes apart from the loop.
type accessSaver struct {
	lru, lfu      bool
	clock, minute uint32
	decayTime     int64
}

func (s *Server) accessSaver() accessSaver {
	p := s.evict.policy
	return accessSaver{
		lru: p.lru(), lfu: p.lfu(),
		clock: s.clock(), minute: s.lfuMinutes(), decayTime: s.evict.lfuDecayTime,
	}
}

// lfuTouch counts an access to e, as Redis's updateLFU: the counter
// decays, then grows with a probability that falls as it grows.
func (s *Server) lfuTouch(e *entry) {
	counter := s.lfuDecayed(e)
	if counter < 255 {
		base := float64(counter) - lfuInitVal
		if base < 0 {
			base = 0
		}
		if p := 1 / (base*float64(s.evict.lfuLogFactor) + 1); rand.Float64() < p {
			counter++
		}
	}
	e.lru = s.lfuMinutes()<<8 | counter
}

// touch records an access to e for the eviction policy: its time, or its
// frequency under an LFU policy.
func (s *Server) touch(e *entry) {
	if s.evict.policy.lfu() {
		s.lfuTouch(e)
		return
	}
	e.lru = s.clock()
}

// overwriteLRU is the lru field of a value that replaces old's: under an
// LFU policy old's counter, as Redis's dbOverwrite keeps the old object's
// field (the command's lookup counted the access); else a new entry's.
func (s *Server) overwriteLRU(old *entry) uint32 {
	if s.evict.policy.lfu() {
		return old.lru
	}
	return s.newLRU()
}

// newLRU is the lru field of a new entry: now, or an LFU policy's
// initial counter.
func (s *Server) newLRU() uint32 {
	if s.evict.policy.lfu() {
		return s.lfuNew()
	}
	return s.clock()
}

// evictionParams are the configuration parameters of eviction.
var evictionParams = []configParam{
	{"maxmemory", func(s *Server) string { return strconv.FormatUint(s.evict.maxSet, 10) }, func(s *Server, v string) error {
		u, err := memoryParamULL(v)
		if err != nil {
			return err
		}
		n := int64(min(u, math.MaxInt64))
		s.evict.max, s.evict.maxSet = n, u
		if n == 0 {
			return nil
		}
		if used := s.usedMemory(); used > n {
			s.log.Warn("kv: maxmemory is below the memory in use: keys are evicted as the policy says, or writes refused", "maxmemory", n, "used", used, "policy", s.evict.policy.String())
		}
		// After the command, as Redis's startEvictionTimeProc: the
		// commands of an EXEC that set it run first.
		s.evictLater()
		return nil
	}},
	{"maxmemory-policy", func(s *Server) string { return s.evict.policy.String() }, func(s *Server, v string) error {
		p, ok := parseEvictPolicy(v)
		if !ok {
			return configError("argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction")
		}
		s.evict.policy = p
		return nil
	}},
	{"maxmemory-samples", func(s *Server) string { return strconv.Itoa(s.evict.samples) }, setInt(1, math.MaxInt32, func(s *Server, n int64) {
		s.evict.samples = int(n)
	})},
	{"maxmemory-eviction-tenacity", func(s *Server) string { return strconv.Itoa(s.evict.tenacity) }, setInt(0, 100, func(s *Server, n int64) {
		s.evict.tenacity = int(n)
	})},
	{"lfu-log-factor", func(s *Server) string { return strconv.FormatInt(s.evict.lfuLogFactor, 10) }, setInt(0, math.MaxInt32, func(s *Server, n int64) {
		s.evict.lfuLogFactor = n
	})},
	{"lfu-decay-time", func(s *Server) string { return strconv.FormatInt(s.evict.lfuDecayTime, 10) }, setInt(0, math.MaxInt32, func(s *Server, n int64) {
		s.evict.lfuDecayTime = n
	})},
}

// memoryParamULL reads maxmemory's value as Redis's memtoull does: digits,
// saturated at 2^64-1 as strtoull saturates, times the unit, wrapping
// around as an unsigned long long does.
func memoryParamULL(v string) (uint64, error) {
	digits, mul, ok := memoryUnit(v)
	if !ok {
		return 0, errNotMemory
	}
	var n uint64
	for _, c := range []byte(digits) {
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			n = math.MaxUint64
			break
		}
		n = n*10 + d
	}
	return n * mul, nil
}

// errOOM refuses a command that may add to the memory used while it is
// past maxmemory and nothing can be evicted.
const errOOM = "OOM command not allowed when used memory > 'maxmemory'."
