package kv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxmemory and the parameters of eviction are set and read as Redis's,
// their bad values refused with Redis's errors.
func TestCompatMaxmemoryConfig(t *testing.T) {
	script := [][]string{
		{"CONFIG", "GET", "maxmemory"}, {"CONFIG", "GET", "maxmemory-policy"},
		{"CONFIG", "SET", "maxmemory", "100mb"}, {"CONFIG", "GET", "maxmemory"},
		{"CONFIG", "SET", "maxmemory", "2gb"}, {"CONFIG", "GET", "maxmemory"},
		{"CONFIG", "SET", "maxmemory", "lots"}, {"CONFIG", "SET", "maxmemory", "-1"},
		{"CONFIG", "SET", "maxmemory-samples", "0"}, {"CONFIG", "SET", "maxmemory-samples", "300"},
		{"CONFIG", "SET", "maxmemory-samples", "10"}, {"CONFIG", "GET", "maxmemory-samples"},
		{"CONFIG", "SET", "maxmemory-eviction-tenacity", "101"}, {"CONFIG", "SET", "maxmemory-eviction-tenacity", "50"},
		{"CONFIG", "SET", "lfu-log-factor", "-1"}, {"CONFIG", "SET", "lfu-decay-time", "5"},
		{"CONFIG", "GET", "lfu-log-factor"}, {"CONFIG", "GET", "lfu-decay-time"}, {"CONFIG", "GET", "maxmemory-eviction-tenacity"},
		{"CONFIG", "SET", "maxmemory-policy", "most-recent"},
	}
	for _, p := range evictPolicyNames {
		script = append(script, []string{"CONFIG", "SET", "maxmemory-policy", strings.ToUpper(p)}, []string{"CONFIG", "GET", "maxmemory-policy"})
	}
	script = append(script, []string{"CONFIG", "SET", "maxmemory", "0"})
	compareWithRedis(t, script)
}

// Past maxmemory, with nothing the policy lets go, a command that may add
// to the memory used is refused with Redis's OOM error, and so is anything
// queued in MULTI, while reads, deletions and an empty EXEC run; under
// allkeys-lru every key goes first. A maxmemory of one byte puts both
// servers past it whatever their figures.
func TestCompatMaxmemoryOOM(t *testing.T) {
	compareWithRedis(t, [][]string{
		// Set in a transaction, maxmemory evicts once it is over, as
		// Redis's startEvictionTimeProc: the INCR after it counts on.
		{"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"},
		{"MULTI"}, {"INCR", "x"}, {"CONFIG", "SET", "maxmemory", "1"}, {"INCR", "x"}, {"EXEC"},
		{"DBSIZE"}, {"CONFIG", "SET", "maxmemory", "0"},
		{"SET", "a", "1"}, {"SET", "b", "2"}, {"SET", "v", "3", "EX", "1000"},
		{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"},
		{"SET", "c", "3"}, {"INCR", "a"}, {"RPUSH", "l", "x"}, {"GET", "a"}, {"DBSIZE"}, {"PING"},
		{"MULTI"}, {"GET", "a"}, {"EXEC"},
		{"MULTI"}, {"EXEC"},
		{"MULTI"}, {"DISCARD"},
		{"DEL", "b"}, {"EXISTS", "b"},
		{"CONFIG", "SET", "maxmemory-policy", "volatile-lru"},
		{"SET", "c", "3"}, {"EXISTS", "v"}, {"DBSIZE"},
		{"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"},
		{"SET", "c", "3"}, {"DBSIZE"},
		{"CONFIG", "SET", "maxmemory", "0"},
		{"SET", "c", "3"}, {"GET", "c"},
	})
}

// An evicted key sends the evicted event, as Redis's.
func TestCompatMaxmemoryEvents(t *testing.T) {
	compareEvents(t, [][]string{
		{"SET", "a", "1"}, {"SET", "b", "2", "EX", "100"},
		{"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"}, {"CONFIG", "SET", "maxmemory", "1"},
		{"SET", "c", "3"},
		{"CONFIG", "SET", "maxmemory-policy", "allkeys-random"}, {"SET", "c", "3"},
		{"CONFIG", "SET", "maxmemory", "0"},
	})
}

// An evicted key is logged as a DEL and seen by the WATCHes on it.
func TestMaxmemoryLogAndWatch(t *testing.T) {
	cfg := Config{Dir: t.TempDir(), AppendOnly: true}
	s, addr := startServer(t, cfg)
	ctx := context.Background()
	c, w := goRedis(t, addr), goRedis(t, addr)
	c.Set(ctx, "watched", "v", 0)
	err := w.Watch(ctx, func(tx *redis.Tx) error {
		if err := c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
			return err
		}
		if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
			return err
		}
		if n := c.DBSize(ctx).Val(); n != 0 {
			return fmt.Errorf("DBSIZE %d after maxmemory 1 under allkeys-lru; want 0", n)
		}
		c.ConfigSet(ctx, "maxmemory", "0")
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "watched", "mine", 0)
			return nil
		})
		return err
	}, "watched")
	if err != redis.TxFailedErr {
		t.Fatalf("transaction on a key evicted after WATCH: %v; want it to fail", err)
	}
	if v := infoField(c.Info(ctx, "stats").Val(), "evicted_keys"); v != "1" {
		t.Errorf("evicted_keys %s; want 1", v)
	}
	s.Shutdown(ctx)
	log, err := os.ReadFile(filepath.Join(cfg.Dir, "appendonly.aof"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "DEL\r\n$7\r\nwatched") {
		t.Errorf("the log has no DEL of the evicted key:\n%q", log)
	}
}

// fillToEvict stores cold keys, then hot ones, each of 10 KiB, under a
// maxmemory that holds about 1,500 of the 2,000: cold's values are made
// first, by set (which also gives their idle time or frequency), hot's
// after. It returns how many of each are left.
func fillToEvict(t *testing.T, policy string, cold func(c *redis.Client, key, val string), hot func(c *redis.Client, key, val string)) (coldLeft, hotLeft int) {
	t.Helper()
	_, addr := startServer(t, Config{})
	c := goRedis(t, addr)
	ctx := context.Background()
	runtime.GC()
	base, _ := strconv.ParseInt(infoField(c.Info(ctx, "memory").Val(), "used_memory"), 10, 64)
	const n, size = 1000, 10 << 10
	c.ConfigSet(ctx, "maxmemory-policy", policy)
	c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(base+n*3/2*size, 10))
	val := strings.Repeat("v", size)
	for i := range n {
		cold(c, "cold:"+strconv.Itoa(i), val)
	}
	for i := range n {
		hot(c, "hot:"+strconv.Itoa(i), val)
	}
	// A collection under way lets the memory used pass maxmemory by an
	// eighth; the cron evicts what passes it once the collection is over:
	// within 300 ms, or, on a loaded machine, later.
	time.Sleep(300 * time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); c.DBSize(ctx).Val() > n*3/2+n/20 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	for i := range n {
		coldLeft += int(c.Exists(ctx, "cold:"+strconv.Itoa(i)).Val())
		hotLeft += int(c.Exists(ctx, "hot:"+strconv.Itoa(i)).Val())
	}
	counted, _ := strconv.ParseInt(infoField(c.Info(ctx, "memory").Val(), "used_memory"), 10, 64)
	t.Logf("%s: %d keys of 10 KiB left, %d idle or rare or soon to expire; %d bytes counted for a maxmemory of %d", policy, coldLeft+hotLeft, coldLeft, counted, base+n*3/2*size)
	if coldLeft+hotLeft > n*3/2+n/20 || coldLeft+hotLeft < n {
		t.Errorf("%s: %d keys of 10 KiB left under a maxmemory that holds about %d", policy, coldLeft+hotLeft, n*3/2)
	}
	if e := infoField(c.Info(ctx, "stats").Val(), "evicted_keys"); e == "0" {
		t.Errorf("%s: evicted_keys 0", policy)
	}
	return coldLeft, hotLeft
}

// restoreWith stores val at key through RESTORE with its options
// (IDLETIME, FREQ); val is dumped once, so that the test makes little
// garbage in the server's process.
func restoreWith(opts ...any) func(c *redis.Client, key, val string) {
	var dump string
	return func(c *redis.Client, key, val string) {
		ctx := context.Background()
		if dump == "" {
			c.Set(ctx, "tmp", val, 0)
			dump = c.Dump(ctx, "tmp").Val()
			c.Del(ctx, "tmp")
		}
		c.Do(ctx, append([]any{"RESTORE", key, 0, dump}, opts...)...)
	}
}

func setKey(c *redis.Client, key, val string) { c.Set(context.Background(), key, val, 0) }

// Each policy keeps the memory used within maxmemory, evicting the keys it
// names first: the least recently used (LRU), the least often (LFU), the
// nearest their expiry (volatile-ttl), and only keys with a TTL for the
// volatile ones.
func TestMaxmemoryPolicies(t *testing.T) {
	t.Run("allkeys-lru", func(t *testing.T) {
		cold, hot := fillToEvict(t, "allkeys-lru", restoreWith("IDLETIME", 100000), setKey)
		if hot < 950 || cold > 600 {
			t.Errorf("left %d idle keys and %d recently used; want the idle ones to go first", cold, hot)
		}
	})
	t.Run("allkeys-lfu", func(t *testing.T) {
		cold, hot := fillToEvict(t, "allkeys-lfu", restoreWith("FREQ", 0), restoreWith("FREQ", 200))
		if hot < 950 || cold > 600 {
			t.Errorf("left %d rarely used keys and %d often used; want the rare ones to go first", cold, hot)
		}
	})
	t.Run("volatile-ttl", func(t *testing.T) {
		soon := func(c *redis.Client, key, val string) { c.Set(context.Background(), key, val, 1000e9) }
		late := func(c *redis.Client, key, val string) { c.Set(context.Background(), key, val, 100000e9) }
		cold, hot := fillToEvict(t, "volatile-ttl", soon, late)
		if hot < 950 || cold > 600 {
			t.Errorf("left %d keys expiring soon and %d later; want the soon ones to go first", cold, hot)
		}
	})
	t.Run("volatile-lru", func(t *testing.T) {
		ttl := func(c *redis.Client, key, val string) { c.Set(context.Background(), key, val, 1000e9) }
		cold, hot := fillToEvict(t, "volatile-lru", setKey, ttl)
		if cold != 1000 {
			t.Errorf("left %d of 1000 keys without a TTL; want them all", cold)
		}
		_ = hot
	})
	t.Run("allkeys-random", func(t *testing.T) {
		fillToEvict(t, "allkeys-random", setKey, setKey)
	})
}

// Under an LFU policy OBJECT FREQ gives a key's counter, RESTORE's FREQ
// sets it, and OBJECT IDLETIME is refused, as Redis's.
func TestCompatObjectFreq(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"SET", "k", "v"}, {"OBJECT", "FREQ", "k"}, {"OBJECT", "IDLETIME", "k"},
		{"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"},
		{"SET", "n", "v"}, {"OBJECT", "FREQ", "n"}, {"OBJECT", "IDLETIME", "n"},
		{"RESTORE", "r", "0", "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce", "FREQ", "100"}, {"OBJECT", "FREQ", "r"},
		{"CONFIG", "SET", "lfu-log-factor", "0"}, {"GET", "n"}, {"GET", "n"}, {"OBJECT", "FREQ", "n"},
		{"CONFIG", "SET", "maxmemory-policy", "noeviction"},
	})
}

// Small integers are shared objects but while maxmemory is set with an
// LRU or LFU policy, where each key keeps its own access time, as in
// Redis's OBJECT REFCOUNT.
func TestCompatMaxmemorySharedIntegers(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"SET", "a", "1"}, {"OBJECT", "REFCOUNT", "a"},
		{"CONFIG", "SET", "maxmemory", "1gb"}, {"CONFIG", "SET", "maxmemory-policy", "allkeys-random"},
		{"SET", "b", "1"}, {"OBJECT", "REFCOUNT", "b"},
		{"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"},
		{"SET", "c", "1"}, {"OBJECT", "REFCOUNT", "c"},
		{"CONFIG", "SET", "maxmemory-policy", "volatile-lfu"},
		{"SET", "d", "1"}, {"OBJECT", "REFCOUNT", "d"},
		{"CONFIG", "SET", "maxmemory", "0"}, {"CONFIG", "SET", "maxmemory-policy", "noeviction"},
	})
}

// The compact encodings' thresholds act as Redis's: a sorted set, a hash
// or a set past them takes the other encoding for good, at a write or as
// RESTORE reads it, and OBJECT ENCODING says so.
func TestCompatEncodingThresholds(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"CONFIG", "GET", "zset-max-listpack-entries"}, {"CONFIG", "GET", "hash-max-listpack-value"}, {"CONFIG", "GET", "set-max-intset-entries"},
		{"ZADD", "z", "1", "a"}, {"OBJECT", "ENCODING", "z"},
		{"CONFIG", "SET", "zset-max-listpack-entries", "1"}, {"ZADD", "z", "2", "b"}, {"OBJECT", "ENCODING", "z"},
		{"CONFIG", "SET", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "4"},
		{"ZADD", "z2", "1", "abcd"}, {"OBJECT", "ENCODING", "z2"}, {"ZADD", "z2", "1", "abcde"}, {"OBJECT", "ENCODING", "z2"},
		{"ZREM", "z2", "abcde"}, {"OBJECT", "ENCODING", "z2"},
		{"CONFIG", "SET", "zset-max-listpack-value", "64"},
		{"ZADD", "z3", "1", "a", "2", "b", "3", "c"},
		{"CONFIG", "SET", "zset-max-listpack-entries", "2"},
		{"ZRANGESTORE", "z4", "z3", "0", "-1"}, {"OBJECT", "ENCODING", "z4"},
		{"ZUNIONSTORE", "z5", "1", "z3"}, {"OBJECT", "ENCODING", "z5"},
		{"CONFIG", "SET", "zset-max-listpack-entries", "128"},
		{"CONFIG", "SET", "hash-max-listpack-value", "8"},
		{"HSET", "h", "f", "short"}, {"OBJECT", "ENCODING", "h"}, {"HSET", "h", "f", "longer than 8"}, {"OBJECT", "ENCODING", "h"},
		{"HSET", "h2", "f", "0"}, {"HINCRBYFLOAT", "h2", "f", "0.0000005"}, {"OBJECT", "ENCODING", "h2"},
		{"CONFIG", "SET", "hash-max-listpack-value", "64", "hash-max-listpack-entries", "2"},
		{"HSET", "h3", "a", "1", "b", "2"}, {"OBJECT", "ENCODING", "h3"}, {"HSET", "h3", "c", "3"}, {"OBJECT", "ENCODING", "h3"},
		{"CONFIG", "SET", "hash-max-listpack-entries", "512", "set-max-intset-entries", "2"},
		{"SADD", "s", "1", "2"}, {"OBJECT", "ENCODING", "s"}, {"SADD", "s", "3"}, {"OBJECT", "ENCODING", "s"},
		{"SADD", "s2", "1", "2", "3"}, {"OBJECT", "ENCODING", "s2"},
		{"CONFIG", "SET", "set-max-intset-entries", "512"},
		{"SADD", "s3", "1", "2", "3"}, {"OBJECT", "ENCODING", "s3"},
		{"CONFIG", "SET", "set-max-intset-entries", "2", "zset-max-listpack-entries", "1", "hash-max-listpack-entries", "1"},
		{"RESTORE", "rs", "0", "\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00\x03\x00\n\x00\xa5\x02\\\xe2mnM\x1b"},
		{"OBJECT", "ENCODING", "rs"},
		{"CONFIG", "SET", "set-max-intset-entries", "512", "zset-max-listpack-entries", "128", "hash-max-listpack-entries", "512"},
	})
}
