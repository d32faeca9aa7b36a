package kv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/evloop/evloop/resp"
)

// fillExpiring sets n keys prefix0 ... in d, expiring at at (Unix ms).
func fillExpiring(d *db, prefix string, n int, at int64) {
	for i := range n {
		key := []byte(prefix + fmt.Sprint(i))
		d.setExpire(key, d.setString(key, "v", false), at)
	}
}

// TestFastExpireCycle runs fast cycles by hand on 50,000 stale keys: one
// runs only once a cycle stopped at its time limit, not within
// fastExpirePeriod of the last, holds the loop about fastExpireBound, and
// deletes no key whose time has not come.
func TestFastExpireCycle(t *testing.T) {
	s, _ := directServer(t)
	d := s.dbs[0]
	now := time.Now().UnixMilli()
	fillExpiring(d, "stale", 50000, now-1)
	fillExpiring(d, "later", 1000, now+60_000)
	fillExpiring(d, "hour", 1000, now+3600_000)
	total := d.size()

	if s.fastExpire(time.Now()) || d.size() != total {
		t.Fatalf("fastExpire before any cycle stopped at its limit: %d keys left; want %d, untouched", d.size(), total)
	}
	// A cycle given no time stops after its first sample.
	start := time.Now()
	s.expireCycle(now, start, start)
	if !s.expiry.behind || s.expiry.capped != 1 || d.size() == total {
		t.Fatalf("cycle with no time: behind %v, capped %d, %d keys left of %d; want true, 1, fewer",
			s.expiry.behind, s.expiry.capped, d.size(), total)
	}

	s.expiry.lastFast = time.Now()
	left := d.size()
	if !s.fastExpire(s.expiry.lastFast.Add(fastExpirePeriod-time.Microsecond)) || d.size() != left {
		t.Errorf("fastExpire within fastExpirePeriod of the last: %d keys left; want %d, and stale keys still reported", d.size(), left)
	}

	var took []time.Duration
	for cycles := 0; d.size() > 2000; cycles++ {
		if cycles == 10000 {
			t.Fatalf("%d stale keys left after %d fast cycles", d.size()-2000, cycles)
		}
		// Each cycle due at once: its start is now, as the time limit is
		// read on the clock.
		start := time.Now()
		s.expiry.lastFast = start.Add(-fastExpirePeriod)
		before := d.size()
		behind := s.fastExpire(start)
		took = append(took, time.Since(start))
		if d.size() == before {
			t.Fatalf("fast cycle with %d stale keys deleted none", before-2000)
		}
		if !behind && d.size() > 2000+total/10 {
			t.Fatalf("fast cycle reports no stale keys left with %d of them", d.size()-2000)
		}
		if !behind {
			break
		}
	}
	if len(took) < 3 {
		t.Errorf("%d fast cycles deleted 50,000 keys; want more, each bounded by %v", len(took), fastExpireBound)
	}
	// The limit is checked after each sample of 20 keys: a cycle takes
	// the bound and one sample more (more under the race detector), and
	// a preempted one longer; the median is steady.
	slices.Sort(took)
	if med := took[len(took)/2]; med > fastExpireBound+time.Millisecond {
		t.Errorf("fast cycles' median time %v; want at most %v and a sample", med, fastExpireBound)
	}
	for prefix, n := range map[string]int{"later": 1000, "hour": 1000} {
		for i := range n {
			if d.keys.get([]byte(prefix+fmt.Sprint(i))) == nil {
				t.Fatalf("%s%d, expiring after the cycles' now, deleted", prefix, i)
			}
		}
	}
}

// TestActiveExpiryWithoutClients leaves 100,000 stale keys to a served
// server that no client talks to: once the slow cycle stops at its time
// limit, the fast cycle, at the end of the loop's iterations, reclaims
// keys between cron's runs, and they all go, while keys with an hour to
// live stay with their TTL. The keyspace is read on the loop, not by a
// client.
func TestActiveExpiryWithoutClients(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	onLoop := func(fn func()) {
		t.Helper()
		done := make(chan struct{})
		if err := s.ev.Submit(0, func() { fn(); close(done) }); err != nil {
			t.Fatal(err)
		}
		<-done
	}
	onLoop(func() {
		now := time.Now().UnixMilli()
		fillExpiring(s.dbs[0], "stale", 100000, now-1)
		fillExpiring(s.dbs[3], "stale", 1000, now-1)
		fillExpiring(s.dbs[0], "hour", 100, now+3600_000)
	})

	// Between two looks at the loop with no cron run between them, fast
	// cycles reclaim keys: the fast cycle runs, and the loop comes back
	// for the next without a client's request.
	var between bool
	deadline := time.Now().Add(30 * time.Second)
	for {
		var epoch time.Time
		var expired, capped int64
		onLoop(func() { epoch, expired, capped = s.epoch, s.stats.expiredKeys, s.expiry.capped })
		time.Sleep(5 * time.Millisecond) // twice fastExpirePeriod at least
		var epoch2 time.Time
		var expired2, size int64
		onLoop(func() { epoch2, expired2, size = s.epoch, s.stats.expiredKeys, int64(s.dbs[0].size()+s.dbs[3].size()) })
		if capped > 0 && epoch2.Equal(epoch) && expired2 > expired {
			between = true
		}
		if size == 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d keys left 30 s after their expiry; want 100", size)
		}
	}
	if !between {
		t.Errorf("no keys were reclaimed between cron's runs: no fast cycle ran")
	}
	c, ctx := goRedis(t, addr), context.Background()
	for i := range 100 {
		if ttl := c.TTL(ctx, fmt.Sprint("hour", i)).Val(); ttl < 59*time.Minute {
			t.Fatalf("TTL hour%d = %v; want about an hour", i, ttl)
		}
	}
	if n := c.DBSize(ctx).Val(); n != 100 {
		t.Errorf("DBSIZE = %d; want 100", n)
	}
}

// TestActiveExpiryEffects leaves keys to active expiry, no client
// touching them, and checks what each deletion does besides: expired_keys
// counts them, the EXEC of a client WATCHing one fails, and, when they are
// on, each key's expired event reaches a subscriber and the log records
// its DEL, so that a restart from the log has none of them. With the log
// and the events off, as evkv runs by default, the deletions skip both.
func TestActiveExpiryEffects(t *testing.T) {
	t.Parallel()
	const n = 100
	for _, tc := range []struct {
		name   string
		cfg    Config
		logged bool
	}{
		{name: "log and events", cfg: Config{AppendOnly: true, NotifyKeyspaceEvents: "Ex"}, logged: true},
		{name: "neither", cfg: Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Dir = t.TempDir()
			s, addr := startServer(t, cfg)
			rc, watcher, sub := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
			sub.do("SUBSCRIBE", "__keyevent@0__:expired")
			rc.do("SET", "stays", "v")
			for i := range n {
				rc.send("SET", fmt.Sprint("key:", i), "v", "PX", "300")
			}
			for range n {
				if r := rc.read(); r != "+OK\r\n" {
					t.Fatalf("SET: %q", r)
				}
			}
			if r := watcher.do("WATCH", "key:7"); r != "+OK\r\n" {
				t.Fatalf("WATCH: %q", r)
			}
			if r := rc.do("CONFIG", "RESETSTAT"); r != "+OK\r\n" {
				t.Fatalf("CONFIG RESETSTAT: %q", r)
			}
			for deadline := time.Now().Add(10 * time.Second); rc.do("DBSIZE") != ":1\r\n"; {
				if time.Now().After(deadline) {
					t.Fatalf("DBSIZE = %q 10 s after the keys' expiry; want 1", rc.do("DBSIZE"))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if got := infoInt(t, rc.do("INFO", "stats"), "expired_keys"); got != n {
				t.Errorf("expired_keys = %d; want %d", got, n)
			}
			watcher.do("MULTI")
			watcher.do("SET", "key:7", "new")
			if r := watcher.do("EXEC"); r != "*-1\r\n" {
				t.Errorf("EXEC after the WATCHed key expired: %q; want *-1", r)
			}

			events := map[string]bool{}
			if tc.logged {
				for range n {
					v, _, err := resp.Parse([]byte(sub.read()))
					if err != nil || len(v.Elems) != 3 {
						t.Fatalf("message %v, %v; want an expired event", v, err)
					}
					events[string(v.Elems[2].Str)] = true
				}
			}
			if rest := eventsUntilPong(t, sub); len(rest) != 0 {
				t.Errorf("events besides the keys' expired: %q", rest)
			}
			if err := s.Shutdown(context.Background()); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			log, _ := os.ReadFile(filepath.Join(cfg.Dir, "appendonly.aof"))
			for i := range n {
				key := fmt.Sprint("key:", i)
				if events[key] != tc.logged {
					t.Errorf("expired event of %s: %v; want %v", key, events[key], tc.logged)
				}
				want := 0
				if tc.logged {
					want = 1
				}
				del := string(resp.AppendCommand(nil, []byte("DEL"), []byte(key)))
				if got := strings.Count(string(log), del); got != want {
					t.Errorf("the log records %s's DEL %d times; want %d", key, got, want)
				}
			}
			if !tc.logged {
				return
			}
			_, addr2 := startServer(t, cfg)
			if r := dialRaw(t, addr2).do("DBSIZE"); r != ":1\r\n" {
				t.Errorf("DBSIZE after a restart from the log = %q; want 1, stays", r)
			}
		})
	}
}

// TestExpiresShareKeys: a key given a TTL, by SET ... PX or EXPIRE, or
// brought with one by RENAME, is held in d.expires under the keyspace's
// own string, not a copy of its bytes.
func TestExpiresShareKeys(t *testing.T) {
	s, c := directServer(t)
	setCommand(s, c, argv("SET", "key:a", "v", "PX", "100000"))
	setCommand(s, c, argv("SET", "key:b", "v"))
	expireCommand(s, c, argv("EXPIRE", "key:b", "100"))
	setCommand(s, c, argv("SET", "key:c", "v", "EX", "100"))
	renameCommand(s, c, argv("RENAME", "key:c", "key:d"))
	d := s.dbs[0]
	for _, key := range []string{"key:a", "key:b", "key:d"} {
		i, _ := d.expires.find([]byte(key))
		j, _ := d.keys.find([]byte(key))
		if i < 0 || j < 0 {
			t.Fatalf("%s: slot %d in expires, %d in keys; want both present", key, i, j)
		}
		if ek, kk := d.expires.slot(i).key, d.keys.slot(j).key; unsafe.StringData(ek) != unsafe.StringData(kk) {
			t.Errorf("%s: expires holds its bytes at %p, keys at %p; want the same", key, unsafe.StringData(ek), unsafe.StringData(kk))
		}
	}
}

// TestExpireEffort: active-expire-effort scales the sample, the fast
// cycle's bound and period and the slow cycle's share of cron's period
// as Redis's activeExpireCycle scales its own; CONFIG SET changes them
// and CONFIG GET gives the effort back.
func TestExpireEffort(t *testing.T) {
	for _, tc := range []struct {
		effort int
		want   expireEffort
	}{
		{1, expireEffort{sample: 20, fastBound: 250 * time.Microsecond, slowPerc: 25}},
		{5, expireEffort{sample: 40, fastBound: 500 * time.Microsecond, slowPerc: 33}},
		{10, expireEffort{sample: 65, fastBound: 812500 * time.Nanosecond, slowPerc: 43}},
	} {
		if got := newExpireEffort(tc.effort); got != tc.want {
			t.Errorf("newExpireEffort(%d) = %+v; want %+v", tc.effort, got, tc.want)
		}
	}

	s, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	if r := rc.do("CONFIG", "SET", "active-expire-effort", "10"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET active-expire-effort 10: %q", r)
	}
	if r := rc.do("CONFIG", "GET", "active-expire-effort"); r != "*2\r\n$20\r\nactive-expire-effort\r\n$2\r\n10\r\n" {
		t.Errorf("CONFIG GET active-expire-effort: %q; want 10", r)
	}
	// At effort 10 a fast cycle waits twice its bound of 812.5 µs after
	// the last, where at 1 it waits 500 µs: 600 µs after one, none runs.
	var ran bool
	onLoop(s, func() {
		d, now := s.dbs[0], time.Now()
		fillExpiring(d, "stale", 1000, now.UnixMilli()-1)
		s.expiry.behind, s.expiry.lastFast = true, now
		s.fastExpire(now.Add(600 * time.Microsecond))
		ran = d.size() < 1000
		d.flush()
	})
	if ran {
		t.Errorf("at effort 10, a fast cycle ran 600 µs after the last; want it to wait 1625 µs")
	}
}
