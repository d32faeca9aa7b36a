package kv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// debugPair starts evkv and Redis with enable-debug-command set to
// allow, each with a directory of its own, and returns a raw connection to
// each and a function that sends a command to both and fails the test
// unless their replies are the same.
func debugPair(t *testing.T, allow string) (ours, theirs *rawConn, same func(args ...string) string) {
	t.Helper()
	root := t.TempDir()
	ourDir, theirDir := filepath.Join(root, "ours"), filepath.Join(root, "theirs")
	os.Mkdir(ourDir, 0o755)
	os.Mkdir(theirDir, 0o755)
	_, addr := startServer(t, Config{Dir: ourDir, Settings: map[string]string{"enable-debug-command": allow}})
	ours = dialRaw(t, addr)
	theirs = dialRaw(t, redisServer(t, "--dir", theirDir, "--enable-debug-command", allow))
	same = func(args ...string) string {
		t.Helper()
		got, want := ours.do(args...), theirs.do(args...)
		if got != want {
			t.Errorf("%q: evkv %q; Redis %q", args, got, want)
		}
		return got
	}
	return ours, theirs, same
}

// TestDebugAllowed checks enable-debug-command against Redis: DEBUG is
// refused with Redis's error under "no" (before authentication, as
// Redis checks it), served under "local" to a client of 127.0.0.1.
func TestDebugAllowed(t *testing.T) {
	_, _, same := debugPair(t, "no")
	if got := same("DEBUG", "SLEEP", "0"); !strings.Contains(got, "DEBUG command not allowed") {
		t.Errorf("DEBUG under enable-debug-command no: %q", got)
	}
	same("DEBUG")
	same("CONFIG", "GET", "enable-debug-command")
	same("CONFIG", "SET", "enable-debug-command", "yes")

	_, _, same = debugPair(t, "local")
	same("DEBUG", "SLEEP", "0")
	same("CONFIG", "GET", "enable-debug-command")
}

// TestDebugDigestWithRedis fills evkv and Redis alike, every type in its
// small and large encodings, TTLs, two databases, and checks that DEBUG
// DIGEST and DIGEST-VALUE give Redis's digests, and change as the data
// does.
func TestDebugDigestWithRedis(t *testing.T) {
	_, _, same := debugPair(t, "yes")
	if got := same("DEBUG", "DIGEST"); got != "+"+strings.Repeat("0", 40)+"\r\n" {
		t.Errorf("the empty keyspace's digest: %q", got)
	}
	long := strings.Repeat("x", 100)
	var big []string
	for i := range 300 {
		big = append(big, fmt.Sprint(i*7), fmt.Sprintf("m%d-%s", i, long[:i%90]))
	}
	cmds := [][]string{
		{"SET", "s", "hello"}, {"SET", "n", "12345"}, {"SET", "raw", long}, {"SET", "ttl", "v", "EX", "1000"},
		{"APPEND", "edited", "ab"}, {"SETRANGE", "edited", "5", "z"},
		{"RPUSH", "l", "a", "1", "-2", long, "b"}, {"RPUSH", "bl"}, {"SELECT", "1"}, {"RPUSH", "l", "other"}, {"SELECT", "0"},
		{"SADD", "is", "3", "1", "2", "-70000"}, {"SADD", "ss", "x", "y", "z", "10"},
		{"HSET", "h", "f", "v", "g", "12", "long", long}, {"HSET", "hs", "a", "1"},
		{"ZADD", "z", "1", "a", "2.5", "b", "-0.1", "c", "1e20", "d", "inf", "e", "-inf", "f", "0", "g"},
		{"EXPIRE", "hs", "500"},
	}
	cmds[7] = append([]string{"RPUSH", "bl"}, big...)
	zbig := []string{"ZADD", "zbig"}
	sbig := []string{"SADD", "sbig"}
	hbig := []string{"HSET", "hbig"}
	for i := 0; i < len(big); i += 2 {
		zbig = append(zbig, big[i]+".25", big[i+1])
		sbig = append(sbig, big[i+1])
		hbig = append(hbig, big[i+1], big[i])
	}
	cmds = append(cmds, zbig, sbig, hbig, []string{"SADD", "ibig"})
	for i := range 600 {
		cmds[len(cmds)-1] = append(cmds[len(cmds)-1], fmt.Sprint(i*3-900))
	}
	for _, c := range cmds {
		same(c...)
	}
	same("DEBUG", "DIGEST")
	same("DEBUG", "DIGEST-VALUE", "s", "n", "raw", "ttl", "edited", "l", "bl", "is", "ss", "h", "hs", "z", "zbig", "sbig", "hbig", "ibig", "missing")
	same("DEBUG", "DIGEST-VALUE")
	for _, types := range []string{"OBJECT ENCODING", "TYPE"} {
		for _, k := range []string{"s", "n", "raw", "edited", "l", "bl", "is", "ss", "ibig", "h", "hbig", "z", "zbig"} {
			same(append(strings.Fields(types), k)...)
		}
	}
	before := same("DEBUG", "DIGEST")
	same("ZINCRBY", "z", "1", "a")
	if same("DEBUG", "DIGEST") == before {
		t.Error("the digest did not change with a score")
	}
	same("ZINCRBY", "z", "-1", "a")
	if got := same("DEBUG", "DIGEST"); got != before {
		t.Errorf("the digest after the score came back: %q, was %q", got, before)
	}
	same("LSET", "l", "0", "b")
	same("LSET", "l", "4", "a") // the same items, in another order
	if same("DEBUG", "DIGEST") == before {
		t.Error("the digest did not change with the list's order")
	}
	same("PERSIST", "ttl")
	same("DEBUG", "DIGEST-VALUE", "ttl")
}

// TestDebugObjectWithRedis compares DEBUG OBJECT's lines with Redis's, but
// for the address and the access clock (whose idle seconds are only checked
// to be few), and its errors.
func TestDebugObjectWithRedis(t *testing.T) {
	ours, theirs, same := debugPair(t, "yes")
	// Too varied for LZF: Redis's compressor and evkv's differ.
	long := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for _, c := range [][]string{
		{"SET", "s", "hello"}, {"SET", "n", "12"}, {"SET", "big", "123456"}, {"SET", "raw", long},
		{"RPUSH", "l", "a", "b", "7"}, {"SADD", "is", "1", "2"}, {"SADD", "ss", "a"},
		{"HSET", "h", "f", "v"}, {"ZADD", "z", "1", "a", "2", "b"},
	} {
		same(c...)
	}
	addr := regexp.MustCompile(`Value at:\S+ `)
	lru := regexp.MustCompile(` lru:\d+`)
	// The idle seconds come from a clock of whole seconds, so a key set just
	// before a second's turn and read just after it is a second idle, and a
	// loaded machine adds more: only a single digit is asked of them.
	idle := regexp.MustCompile(` lru_seconds_idle:(\d+)`)
	for _, k := range []string{"s", "n", "big", "raw", "l", "is", "ss", "h", "z"} {
		got, want := ours.do("DEBUG", "OBJECT", k), theirs.do("DEBUG", "OBJECT", k)
		if !strings.HasPrefix(got, "+Value at:0x") {
			t.Errorf("DEBUG OBJECT %s = %q; want an address first", k, got)
		}
		for _, reply := range []string{got, want} {
			if m := idle.FindStringSubmatch(reply); m == nil || len(m[1]) > 1 {
				t.Errorf("DEBUG OBJECT %s = %q; want lru_seconds_idle below 10", k, reply)
			}
		}
		mask := func(s string) string {
			return idle.ReplaceAllString(lru.ReplaceAllString(addr.ReplaceAllString(s, ""), ""), "")
		}
		if got, want = mask(got), mask(want); got != want {
			t.Errorf("DEBUG OBJECT %s: evkv %q; Redis %q", k, got, want)
		}
	}
	same("DEBUG", "OBJECT", "missing")
	same("DEBUG", "OBJECT")
	same("DEBUG", "OBJECT", "s", "extra")
}

// TestDebugPopulateWithRedis checks DEBUG POPULATE's keys and values, with
// and without a prefix and a size, keys that exist left alone, and its
// errors, against Redis.
func TestDebugPopulateWithRedis(t *testing.T) {
	_, _, same := debugPair(t, "yes")
	same("SET", "key:3", "mine")
	same("DEBUG", "POPULATE", "10")
	same("DEBUG", "POPULATE", "5", "p")
	same("DEBUG", "POPULATE", "4", "sized", "3")
	same("DEBUG", "POPULATE", "3", "wide", "20")
	same("DEBUG", "POPULATE", "0")
	for _, k := range []string{"key:0", "key:3", "key:9", "p:4", "sized:3", "wide:2"} {
		same("GET", k)
	}
	same("DBSIZE")
	same("DEBUG", "DIGEST")
	same("DEBUG", "POPULATE", "-1")
	same("DEBUG", "POPULATE", "x")
	same("DEBUG", "POPULATE", "1", "p", "-5")
	same("DEBUG", "POPULATE", "1", "p", "1", "extra")
	same("INFO", "keyspace")
}

// TestDebugReloadWithRedis checks DEBUG RELOAD and its options against
// Redis: the keyspace comes back from the file whole (the digest the
// same), NOSAVE loads the file as it was, NOFLUSH MERGE adds it to the
// keyspace, and a bad option is refused. NOFLUSH without MERGE meeting a
// key the keyspace holds stops Redis; evkv answers an error.
func TestDebugReloadWithRedis(t *testing.T) {
	ours, _, same := debugPair(t, "yes")
	for _, c := range [][]string{
		{"SET", "s", "v"}, {"RPUSH", "l", "a", "b"}, {"HSET", "h", "f", "1"}, {"SADD", "st", "1", "x"},
		{"ZADD", "z", "1.5", "m"}, {"SET", "t", "x", "EX", "100"}, {"SELECT", "2"}, {"SET", "other", "db"}, {"SELECT", "0"},
	} {
		same(c...)
	}
	digest := same("DEBUG", "DIGEST")
	same("DEBUG", "RELOAD")
	if got := same("DEBUG", "DIGEST"); got != digest {
		t.Errorf("the digest after DEBUG RELOAD: %q, was %q", got, digest)
	}
	same("SET", "s", "changed")
	same("DEL", "l")
	same("SET", "new", "1")
	same("DEBUG", "RELOAD", "NOSAVE")
	if got := same("DEBUG", "DIGEST"); got != digest {
		t.Errorf("the digest after DEBUG RELOAD NOSAVE: %q, was the file's %q", got, digest)
	}
	same("SET", "s", "changed")
	same("SET", "new", "1")
	same("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE")
	same("GET", "s")
	same("GET", "new")
	same("DBSIZE")
	same("DEBUG", "RELOAD", "NOSAVE", "BOGUS")
	if got := ours.do("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH"); got != "-ERR Error trying to load the RDB dump\r\n" {
		t.Errorf("DEBUG RELOAD NOSAVE NOFLUSH over the same keys = %q; want the load's error", got)
	}
	if got := ours.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING after the failed load: %q", got)
	}
}

// TestDebugRepliesWithRedis compares DEBUG's other subcommands with
// Redis's, in RESP2 and RESP3: PROTOCOL's sample replies, ERROR, LOG,
// SLEEP, SET-ACTIVE-EXPIRE, and unknown subcommands or counts.
func TestDebugRepliesWithRedis(t *testing.T) {
	ours, theirs, same := debugPair(t, "yes")
	for _, proto := range []string{"2", "3"} {
		if proto == "3" {
			ours.do("HELLO", "3")
			theirs.do("HELLO", "3")
		}
		for _, typ := range []string{"string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "push", "verbatim", "true", "false", "bogus", "STRING"} {
			if typ == "push" && proto == "3" {
				got, want := ours.do("DEBUG", "PROTOCOL", typ)+ours.read(), theirs.do("DEBUG", "PROTOCOL", typ)+theirs.read()
				if got != want {
					t.Errorf("RESP3 DEBUG PROTOCOL push: evkv %q; Redis %q", got, want)
				}
				continue
			}
			same("DEBUG", "PROTOCOL", typ)
		}
	}
	same("DEBUG", "ERROR", "MYERR something\r\nwent wrong")
	same("DEBUG", "ERROR", "")
	same("DEBUG", "LOG", "a line")
	same("DEBUG", "SLEEP", "0.01")
	same("DEBUG", "SLEEP", "junk")
	same("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	same("SET", "k", "v", "PX", "1")
	same("DEBUG", "SLEEP", "0.3")
	same("DEBUG", "DIGEST-VALUE", "k") // there still: nothing expired it
	same("DBSIZE")
	same("DEBUG", "SET-ACTIVE-EXPIRE", "1")
	same("DEBUG", "BOGUS")
	same("DEBUG", "SLEEP")
	same("DEBUG", "DIGEST", "extra")
	same("DEBUG", "HELP", "extra")
	if got := ours.do("DEBUG", "HELP"); !strings.HasPrefix(got, "*") || !strings.Contains(got, "RELOAD [option ...]") {
		t.Errorf("DEBUG HELP = %q", got)
	}
	same("COMMAND", "INFO", "DEBUG")
}

// TestDebugPopulateSignalsWithRedis: DEBUG POPULATE signals each key it
// adds to WATCHes, and cuts long names, as Redis 7.0's does.
func TestDebugPopulateSignalsWithRedis(t *testing.T) {
	ours, theirs, same := debugPair(t, "yes")
	// Redis signals each key it adds (signalModifiedKey): a WATCH of it
	// fails the transaction.
	for _, c := range []*rawConn{ours, theirs} {
		c.do("WATCH", "key:0")
	}
	same("DEBUG", "POPULATE", "1") // from the same client: Redis's touch is not per client
	for _, c := range []*rawConn{ours, theirs} {
		c.do("MULTI")
		c.do("SET", "x", "1")
	}
	same("EXEC")
	// Redis names the keys with snprintf into a 128-byte buffer: a long
	// prefix is cut, and every key gets the same 127 bytes.
	long := strings.Repeat("p", 130)
	same("DEBUG", "POPULATE", "3", long)
	same("DBSIZE")
	same("DEBUG", "DIGEST")
}

// TestDebugReloadIdleTime: the keys DEBUG RELOAD loads are new objects, as
// in Redis, their access time now.
func TestDebugReloadIdleTime(t *testing.T) {
	t.Parallel()
	_, _, same := debugPair(t, "yes")
	same("SET", "k", "v")
	same("DEBUG", "SLEEP", "2.2")
	same("DEBUG", "RELOAD")
	same("OBJECT", "IDLETIME", "k")
	same("INFO", "keyspace")
}

// TestDebugReloadFailedMerge: a file whose checksum is wrong fails DEBUG
// RELOAD NOSAVE NOFLUSH MERGE (Redis exits) and leaves the keyspace as it
// was: the file is read whole before anything changes.
func TestDebugReloadFailedMerge(t *testing.T) {
	dir := t.TempDir()
	_, addr := startServer(t, Config{Dir: dir, Settings: map[string]string{"enable-debug-command": "yes"}})
	rc := dialRaw(t, addr)
	rc.do("SET", "a", "from the file")
	rc.do("SAVE")
	path := filepath.Join(dir, "dump.rdb")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-1] ^= 0xff // the checksum
	os.WriteFile(path, b, 0o644)
	rc.do("SET", "a", "in memory")
	if got := rc.do("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE"); got != "-ERR Error trying to load the RDB dump\r\n" {
		t.Fatalf("DEBUG RELOAD of a corrupt file = %q", got)
	}
	if got := rc.do("GET", "a"); got != "$9\r\nin memory\r\n" {
		t.Errorf("GET a after the failed reload = %q; want the keyspace as it was", got)
	}
}

// TestDebugReloadDuringRewrite: DEBUG RELOAD while BGREWRITEAOF is
// walking the keyspace. The rewrite's walk goes by slot and by the
// generation mark of each entry; the reload replaces entries (fresh
// marks), moves keys between slots, and logs nothing to the rewrite's
// tail. The file the rewrite makes must replay to the keyspace the server
// has (less the keys whose time passed, which the rewrite leaves out).
//
// The walk's slice is 0, so that a step walks one batch (rewriteBatch
// keys), far fewer than the lists, whatever the machine's speed.
func TestDebugReloadDuringRewrite(t *testing.T) {
	const lists = 10000
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"RELOAD", nil},
		{"RELOAD NOSAVE NOFLUSH MERGE", []string{"nosave", "noflush", "merge"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slice := rewriteSlice
			rewriteSlice = 0
			t.Cleanup(func() { rewriteSlice = slice }) // after the servers' Cleanups
			cfg := Config{AppendOnly: true, Dir: t.TempDir(), Settings: map[string]string{"enable-debug-command": "yes"}}
			s, addr := startServer(t, cfg)
			rc := dialRaw(t, addr)
			c := goRedis(t, addr)
			ctx := context.Background()
			// Keys whose time passes, in the lowest slots: a reload leaves
			// them out, and the keys after them move down.
			rc.do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
			for i := range 1000 {
				rc.do("SET", fmt.Sprint("e", i), "x", "PX", "1")
			}
			pipe := c.Pipeline()
			for i := range lists {
				pipe.RPush(ctx, fmt.Sprint("l", i), "v")
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond) // the e keys' time passes
			if got := rc.do("SAVE"); got != "+OK\r\n" {
				t.Fatalf("SAVE = %q", got)
			}
			onLoop(s, func() {
				if err := s.startRewrite(); err != nil {
					t.Errorf("startRewrite: %v", err)
					return
				}
				s.aof.rw.step() // a slice of the walk, as the loop runs it
				args := make([][]byte, len(tc.args))
				for i, a := range tc.args {
					args[i] = []byte(a)
				}
				debugReload(s, args)
				if string(s.w.Buf) != "+OK\r\n" {
					t.Errorf("DEBUG %s = %q", tc.name, s.w.Buf)
				}
				s.w.Reset()
			})
			waitRewritten(t, rc, 1)
			s.Shutdown(ctx)

			_, addr2 := startServer(t, cfg)
			c2 := goRedis(t, addr2)
			pipe = c2.Pipeline()
			lens := make([]*redis.IntCmd, lists)
			for i := range lens {
				lens[i] = pipe.LLen(ctx, fmt.Sprint("l", i))
			}
			pipe.Exec(ctx)
			var doubled, missing []int
			for i, l := range lens {
				switch l.Val() {
				case 0:
					missing = append(missing, i)
				case 2:
					doubled = append(doubled, i)
				}
			}
			if len(doubled)+len(missing) > 0 {
				t.Errorf("after the rewritten log is replayed: %d lists with their item twice (%v...), %d lists missing (%v...)",
					len(doubled), doubled[:min(3, len(doubled))], len(missing), missing[:min(3, len(missing))])
			}
		})
	}
}
