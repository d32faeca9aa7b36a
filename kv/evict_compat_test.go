package kv

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A key named "" is evicted as any other, where the pool took it for an
// empty place and, once it was the only key left, the loop went round
// the pool for ever.
func TestCompatMaxmemoryEmptyKeyName(t *testing.T) {
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	for _, rc := range []*rawConn{ours, theirs} {
		rc.c.SetDeadline(time.Now().Add(3 * time.Second))
	}
	for _, args := range [][]string{
		{"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"},
		{"SET", "", "v"}, {"SET", "a", "v"},
		{"CONFIG", "SET", "maxmemory", "1"},
		{"DBSIZE"},
	} {
		want := theirs.do(args...)
		ours.send(args...)
		line, err := ours.r.ReadString('\n')
		if err != nil {
			t.Fatalf("%q: evkv did not answer (%v); Redis %q", args, err, want)
		}
		if line != want {
			t.Errorf("%q: evkv %q; Redis %q", args, line, want)
		}
	}
}

// Under an LFU policy an overwritten key keeps its counter, as Redis's
// dbOverwrite keeps the old object's lru field, and SET, SETNX, MSETNX
// and MSET count an access as Redis's lookups for writing do, where every
// write started the counter again.
func TestCompatLFUOverwrite(t *testing.T) {
	script := [][]string{
		{"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"},
		{"CONFIG", "SET", "lfu-log-factor", "0"}, // every access counts
		{"CONFIG", "SET", "lfu-decay-time", "0"}, // no decay
		{"SET", "k", "hello"},
	}
	for range 5 {
		script = append(script, []string{"GET", "k"})
	}
	script = append(script,
		[]string{"OBJECT", "FREQ", "k"},
		[]string{"SET", "k", "world"}, []string{"OBJECT", "FREQ", "k"},
		[]string{"SET", "k", "again", "GET"}, []string{"OBJECT", "FREQ", "k"},
		[]string{"SETNX", "k", "x"}, []string{"OBJECT", "FREQ", "k"},
		[]string{"SET", "n", "100000"}, []string{"INCR", "n"}, []string{"INCR", "n"}, []string{"OBJECT", "FREQ", "n"},
		[]string{"MSET", "n", "1.5"}, []string{"OBJECT", "FREQ", "n"},
		[]string{"CONFIG", "SET", "maxmemory-policy", "noeviction"},
	)
	compareWithRedis(t, script)
}

// DEBUG RELOAD keeps a key's LFU counter and its idle time, as Redis's
// RDB file keeps them (the FREQ and IDLE records under an LFU or LRU
// policy), where they started again.
func TestCompatDebugReloadKeepsAccess(t *testing.T) {
	_, _, same := debugPair(t, "yes")
	same("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
	same("CONFIG", "SET", "lfu-log-factor", "0")
	same("CONFIG", "SET", "lfu-decay-time", "0")
	same("SET", "k", "hello")
	for range 5 {
		same("GET", "k")
	}
	same("OBJECT", "FREQ", "k")
	same("DEBUG", "RELOAD")
	same("OBJECT", "FREQ", "k")
	same("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	same("RESTORE", "i", "0", "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce", "IDLETIME", "5000")
	same("OBJECT", "IDLETIME", "i")
	same("DEBUG", "RELOAD")
	same("OBJECT", "IDLETIME", "i")
}

// A key loaded from the RDB file at start under an LFU policy has
// Redis's counter: the initial 5 without a FREQ record, the file's with
// one, where it had 0, and the loaded keys went before every new one.
func TestCompatRDBLoadAccess(t *testing.T) {
	// Redis writes the file: k without FREQ (noeviction), then under
	// allkeys-lfu r with FREQ 100 (every key gets a FREQ opcode then).
	for _, tc := range []struct {
		name   string
		policy string
	}{{"noeviction", "noeviction"}, {"allkeys-lfu", "allkeys-lfu"}} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			w := dialRaw(t, redisServer(t, "--dir", src, "--maxmemory-policy", tc.policy))
			w.do("SET", "k", "hello")
			if tc.policy == "allkeys-lfu" {
				w.do("RESTORE", "r", "0", "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce", "FREQ", "100")
			}
			if r := w.do("SAVE"); r != "+OK\r\n" {
				t.Fatalf("SAVE: %q", r)
			}
			file, err := os.ReadFile(filepath.Join(src, "dump.rdb"))
			if err != nil {
				t.Fatal(err)
			}
			ourDir, theirDir := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(ourDir, "dump.rdb"), file, 0o644)
			os.WriteFile(filepath.Join(theirDir, "dump.rdb"), file, 0o644)
			_, addr := startServer(t, Config{Dir: ourDir, Settings: map[string]string{"maxmemory-policy": "allkeys-lfu", "lfu-decay-time": "0"}})
			ours := dialRaw(t, addr)
			theirs := dialRaw(t, redisServer(t, "--dir", theirDir, "--maxmemory-policy", "allkeys-lfu", "--lfu-decay-time", "0"))
			for _, key := range []string{"k", "r"} {
				got, want := ours.do("OBJECT", "FREQ", key), theirs.do("OBJECT", "FREQ", key)
				if got != want {
					t.Errorf("OBJECT FREQ %s after loading the RDB file: evkv %q; Redis %q", key, got, want)
				}
			}
		})
	}
}

// maxmemory-eviction-tenacity 0 is Redis's shortest time limit (sixteen
// keys an attempt, the rest in later turns of the loop), where it meant
// no limit and every key went in one command.
func TestCompatEvictionTenacityZero(t *testing.T) {
	_, addr := startServer(t, Config{})
	for _, a := range []string{addr, redisServer(t)} {
		rc := dialRaw(t, a)
		rc.do("CONFIG", "SET", "maxmemory-eviction-tenacity", "0")
		rc.do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
		args := []string{"MSET"}
		for i := range 1000 {
			args = append(args, "key:"+strconv.Itoa(i), "v")
		}
		rc.do(args...)
		rc.sendTogether([]string{"CONFIG", "SET", "maxmemory", "1"}, []string{"DBSIZE"})
		rc.read()
		n := rc.read()
		rc.do("CONFIG", "SET", "maxmemory", "0")
		name := "evkv"
		if a != addr {
			name = "Redis"
		}
		t.Logf("%s: DBSIZE right after CONFIG SET maxmemory 1 under tenacity 0: %q", name, n)
		if n == ":0\r\n" {
			t.Errorf("%s evicted every key in one command under tenacity 0", name)
		}
	}
}

// maxmemory is an unsigned long long, as Redis's: a value past 2^63-1 is
// taken and shown as set, where it was refused.
func TestCompatMaxmemoryUnsigned(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"CONFIG", "SET", "maxmemory", "10000000000000000000"}, {"CONFIG", "GET", "maxmemory"},
		{"CONFIG", "SET", "maxmemory", "18446744073709551615"}, {"CONFIG", "GET", "maxmemory"},
		{"CONFIG", "SET", "maxmemory", "0"},
	})
}

// fillKeys stores n keys of 1,000 bytes through rc, 500 a MSET.
func fillKeys(rc *rawConn, n int) { fillKeysOf(rc, n, 1000) }

// fillKeysOf stores n keys, key:0 up, of size bytes through rc, 500 a
// MSET.
func fillKeysOf(rc *rawConn, n, size int) {
	val := strings.Repeat("v", size)
	for i := 0; i < n; i += 500 {
		args := []string{"MSET"}
		for j := i; j < min(n, i+500); j++ {
			args = append(args, "key:"+strconv.Itoa(j), val)
		}
		rc.do(args...)
	}
}

func dbsize(rc *rawConn) int {
	n, _ := strconv.Atoi(strings.Trim(rc.do("DBSIZE"), ":\r\n"))
	return n
}

// memDebug logs DBSIZE and used_memory (evkv's: the estimate).
func memDebug(t *testing.T, rc *rawConn, what string) {
	t.Logf("%s: DBSIZE %d used_memory %s", what, dbsize(rc), infoField(rc.do("INFO", "memory"), "used_memory"))
}

// pingFor sends PINGs, 100 a write, for d, allocating nothing itself.
func pingFor(t *testing.T, rc *rawConn, d time.Duration) {
	var pings []byte
	for range 100 {
		pings = append(pings, "*1\r\n$4\r\nPING\r\n"...)
	}
	buf := make([]byte, 64<<10)
	for end := time.Now().Add(d); time.Now().Before(end); {
		rc.c.Write(pings)
		for got := 0; got < 700; {
			n, err := rc.c.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
	}
}

// maxmemory set on a server that ran without it evicts no key that fits,
// as Redis's, where the first reading after a collection counted what
// was allocated since the reading before, the whole fill, twice.
func TestMaxmemorySetLate(t *testing.T) {
	_, addr := startServer(t, Config{})
	for _, srv := range bothServers(t, addr) {
		name, a := srv.name, srv.addr
		rc := dialRaw(t, a)
		runtime.GC()
		rc.do("INFO", "memory") // a reading, before the keys
		fillKeys(rc, 20000)
		runtime.GC()
		time.Sleep(100 * time.Millisecond)
		rc.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		rc.do("CONFIG", "SET", "maxmemory", "64mb") // 20,000 keys of 1 KB: about 25 MB
		memDebug(t, rc, name)
		time.Sleep(2 * time.Second)
		n := dbsize(rc)
		memDebug(t, rc, name)
		rc.do("CONFIG", "SET", "maxmemory", "0")
		if n != 20000 {
			t.Errorf("%s: %d of 20000 keys (about 25 MB) left under maxmemory 64mb", name, n)
		}
	}
}

// After a large eviction (maxmemory lowered below the data), garbage made
// later (PINGs') is collected rather than taken from the keys, as Redis
// keeps what maxmemory holds; the evicted keys' estimate hid it, no
// collection was made, and every key went.
func TestMaxmemoryGarbageAfterEviction(t *testing.T) {
	_, addr := startServer(t, Config{})
	for _, srv := range bothServers(t, addr) {
		name, a := srv.name, srv.addr
		rc := dialRaw(t, a)
		runtime.GC()
		base, _ := strconv.ParseInt(infoField(rc.do("INFO", "memory"), "used_memory"), 10, 64)
		rc.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		rc.do("CONFIG", "SET", "maxmemory", "1gb") // read every millisecond from now on
		fillKeys(rc, 20000)
		rc.do("CONFIG", "SET", "maxmemory", strconv.FormatInt(base+4<<20, 10))
		// The cron and the commands evict down to maxmemory.
		for range 20 {
			rc.do("PING")
			time.Sleep(50 * time.Millisecond)
		}
		before := dbsize(rc)
		memDebug(t, rc, name+" before the PINGs")
		pingFor(t, rc, 3*time.Second)
		after := dbsize(rc)
		memDebug(t, rc, name+" after the PINGs")
		if name == "evkv" {
			runtime.GC()
			time.Sleep(100 * time.Millisecond)
			memDebug(t, rc, "evkv after a collection")
		}
		rc.do("CONFIG", "SET", "maxmemory", "0")
		t.Logf("%s: maxmemory %d, DBSIZE %d before 3 s of PINGs, %d after", name, base+4<<20, before, after)
		// 4 MiB holds some 3,500 of these keys (Redis keeps them).
		if after < 900 {
			t.Errorf("%s: %d keys of 1 KB left after PINGs under a maxmemory 4 MiB above the empty server's", name, after)
		}
	}
}

// DEBUG RELOAD, which allocates a snapshot's worth in one command,
// evicts no key that fits, as Redis's.
func TestMaxmemoryDebugReload(t *testing.T) {
	ours, theirs, _ := debugPair(t, "yes")
	for _, rc := range []*rawConn{ours, theirs} {
		name := "evkv"
		if rc == theirs {
			name = "Redis"
		}
		fillKeys(rc, 20000) // about 25 MB
		rc.do("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
		rc.do("CONFIG", "SET", "maxmemory", "64mb")
		for range 10 {
			rc.do("PING")
			time.Sleep(10 * time.Millisecond)
		}
		before := dbsize(rc)
		rc.do("DEBUG", "RELOAD")
		rc.do("PING")
		time.Sleep(500 * time.Millisecond)
		after := dbsize(rc)
		memDebug(t, rc, name)
		rc.do("CONFIG", "SET", "maxmemory", "0")
		if before != 20000 || after != 20000 {
			t.Errorf("%s: %d keys, then %d after DEBUG RELOAD, of 20000 (about 25 MB) under maxmemory 64mb", name, before, after)
		}
	}
}

// bothServers is evkv at addr and a Redis started for the test, by name.
func bothServers(t *testing.T, addr string) []struct{ name, addr string } {
	return []struct{ name, addr string }{{"evkv", addr}, {"Redis", redisServer(t)}}
}
