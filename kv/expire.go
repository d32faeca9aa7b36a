package kv

import "time"

// Active expiry reclaims keys whose time has passed that no client reads,
// as Redis's activeExpireCycle (expire.c) does, in two cycles:
//
//   - the slow cycle, from cron ten times a second, may take a quarter
//     of its period, 25 ms;
//   - the fast cycle runs at the end of a loop iteration, as the loop is
//     about to wait (Redis's beforeSleep), only while the cycle before it
//     stopped at its time limit with stale keys left. It takes at most
//     fastExpireBound, and starts at most once every fastExpirePeriod, so
//     that a client's request waits for it no longer than that bound.
//
// Where Redis runs its fast cycle only when its loop iterates for some
// other reason (a client's request, a timer), the loop here, while stale
// keys are left, sets a timer to come back for the next fast cycle: a
// server no client talks to reclaims them as fast as a busy one.
//
// The figures below are those of active-expire-effort 1, the default;
// expireEffort scales them for the others.
const (
	expireSample = 20 // keys sampled at a time, as Redis's
	// slowExpirePerc is the percentage of cron's period the slow cycle
	// may take, as Redis's ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC.
	slowExpirePerc = 25
	// fastExpireBound is the longest a fast cycle holds the loop, and
	// fastExpirePeriod the least time from the start of one to the next
	// (Redis: 1000 µs and twice that). A quarter of Redis's bound, for
	// the same share of the loop: a request that comes during a cycle
	// waits less.
	fastExpireBound  = 250 * time.Microsecond
	fastExpirePeriod = 2 * fastExpireBound
)

// expireEffort is what active-expire-effort (1 to 10) makes of the
// cycles, as Redis's activeExpireCycle scales its own: with e the effort
// less one, a sample of expireSample + expireSample/4*e keys, fast cycles
// of fastExpireBound + fastExpireBound/4*e each at most (and twice that
// from one to the next), and a slow cycle of slowExpirePerc + 2*e percent
// of cron's period. A cycle goes on in a database while more than a
// quarter of its last sample had expired, whatever the effort (Redis 7's
// threshold is 10 - e percent).
type expireEffort struct {
	sample    int
	fastBound time.Duration
	slowPerc  int
}

func newExpireEffort(effort int) expireEffort {
	e := effort - 1
	return expireEffort{
		sample:    expireSample + expireSample/4*e,
		fastBound: fastExpireBound + fastExpireBound/4*time.Duration(e),
		slowPerc:  slowExpirePerc + 2*e,
	}
}

// activeExpiry is the state of active expiry across cycles. Owned by the loop.
type activeExpiry struct {
	off      bool // DEBUG SET-ACTIVE-EXPIRE 0: keys expire only when met
	effort   int  // active-expire-effort, 1 to 10
	params   expireEffort
	next     int       // the database the next cycle starts with
	behind   bool      // the last cycle stopped at its time limit, stale keys left
	lastFast time.Time // when the last fast cycle, or the slow one, ran
	armed    bool      // a timer is set for the next fast cycle

	// As INFO's expired_stale_perc (a running average of the share of
	// sampled keys found expired), expired_time_cap_reached_count and
	// expire_cycle_cpu_milliseconds (the cycles' time, wall clock as
	// Redis's).
	stale     float64
	capped    int64
	timeSpent time.Duration
}

// expireCycle runs one cycle of active expiry, started at start, until
// deadline at the latest: each database in turn, starting with the one
// after where the last cycle started, as Redis's, so that one database
// with many stale keys does not keep the cycle from the others. Keys
// whose expiry is at or before now (Unix ms) are deleted.
func (s *Server) expireCycle(now int64, start, deadline time.Time) {
	x := &s.expiry
	x.behind = false
	var sampled, expired int
	for range len(s.dbs) {
		d := s.dbs[x.next]
		x.next = (x.next + 1) % len(s.dbs)
		n, e, capped := d.activeExpire(now, deadline, x.params.sample)
		sampled, expired = sampled+n, expired+e
		if capped {
			x.behind = true
			x.capped++
			break
		}
	}
	elapsed := time.Since(start)
	x.timeSpent += elapsed
	s.latency.note("expire-cycle", elapsed, now/1000)
	perc := 0.0
	if sampled > 0 {
		perc = float64(expired) / float64(sampled)
	}
	x.stale = perc*0.05 + x.stale*0.95
}

// slowExpire is cron's cycle, started at start, cron's period being
// period. The fast cycles wait a period of their own after it.
func (s *Server) slowExpire(start time.Time, period time.Duration) {
	if s.expiry.off || s.clientsPaused() {
		return
	}
	s.expireCycle(s.now(), start, start.Add(period*time.Duration(s.expiry.params.slowPerc)/100))
	s.expiry.lastFast = time.Now()
}

// fastExpire runs a fast cycle at start if the last cycle left stale keys
// and the last fast one started at least twice the fast cycles' bound
// before (fastExpirePeriod at effort 1); it reports whether stale keys are
// left for the next.
func (s *Server) fastExpire(start time.Time) (behind bool) {
	x := &s.expiry
	if !x.behind || x.off || s.clientsPaused() {
		return false
	}
	if start.Sub(x.lastFast) < 2*x.params.fastBound {
		return true
	}
	x.lastFast = start
	s.expireCycle(start.UnixMilli(), start, start.Add(x.params.fastBound))
	return x.behind
}

// fastExpireLater runs a fast cycle if one is due, at the end of a loop
// iteration, and, with stale keys left, sets a timer for the loop to
// iterate again when the next is due, whatever else it waits for.
func (s *Server) fastExpireLater() {
	x := &s.expiry
	if !x.behind || !s.fastExpire(time.Now()) || x.armed || s.ev == nil {
		return
	}
	x.armed = true
	s.ev.AfterFunc(0, max(0, 2*x.params.fastBound-time.Since(x.lastFast)), func() { x.armed = false })
}

// activeExpire samples keys with a TTL and deletes those whose expiry is
// at or before now, as Redis's expire cycle does: sample at a time, again
// while more than a quarter of a sample had expired, until deadline. It returns the keys it sampled and deleted, and whether it
// stopped at the deadline with more than a quarter of the last sample
// expired: stale keys left.
func (d *db) activeExpire(now int64, deadline time.Time, sample int) (sampled, expired int, capped bool) {
	for d.expires.len() > 0 {
		n := min(sample, d.expires.len())
		gone := 0
		for range n {
			if d.reclaim(d.expires.random(), now) {
				gone++
			}
		}
		sampled, expired = sampled+n, expired+gone
		if gone <= sample/4 {
			return sampled, expired, false
		}
		if time.Now().After(deadline) {
			return sampled, expired, true
		}
	}
	return sampled, expired, false
}

// reclaim deletes the key at position i of d.expires if its expiry is at
// or before now, as expire does, and reports whether it did. The key is
// hashed once and found once: its entry's slot and index position in
// d.keys serve its deletion there, and its hash its deletion from
// d.expires at i.
func (d *db) reclaim(i int, now int64) bool {
	k, _ := d.expires.at(i)
	key := stringBytes(k) // read only, as k stays referenced here
	h := dictHashString(k)
	slot, pos := d.keys.findHashed(key, h)
	if slot < 0 {
		return false
	}
	if _, e := d.keys.at(slot); e.exp == 0 || e.exp > now {
		return false
	}
	d.s.preserveRemoved(d, key)
	d.expiring(key)
	d.keys.remove(slot, pos)
	d.expires.deleteAtHashed(i, h)
	d.expired(key)
	return true
}

// setExpireEffort sets active-expire-effort, 1 to 10.
func (s *Server) setExpireEffort(effort int) {
	s.expiry.effort, s.expiry.params = effort, newExpireEffort(effort)
}
