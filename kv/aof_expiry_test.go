package kv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// describeKeys describes keys as the server at rc holds them: type, value
// (sets sorted) and whether a TTL is set; absent keys are left out.
func describeKeys(t *testing.T, rc *rawConn, keys []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		typ := rc.do("TYPE", k)
		var val string
		switch typ {
		case "+none\r\n":
			continue
		case "+string\r\n":
			val = rc.do("GET", k)
		case "+list\r\n":
			val = rc.do("LRANGE", k, "0", "-1")
		case "+set\r\n":
			val = rc.do("SORT", k, "ALPHA")
		case "+zset\r\n":
			val = rc.do("ZRANGE", k, "0", "-1", "WITHSCORES")
		case "+hash\r\n":
			val = rc.do("HGETALL", k)
		}
		ttl := "persistent"
		if p := rc.do("PTTL", k); p != ":-1\r\n" {
			ttl = "volatile"
		}
		out[k] = fmt.Sprintf("%s %q %s", strings.TrimSpace(typ), val, ttl)
	}
	return out
}

// TestReplayAfterExpiry checks that the log replays as it was written
// when the server restarts after keys' TTLs passed: no key expires while
// it is replayed, as none does while Redis loads (keyIsExpired is false
// while server.loading), so each command meets the keys it met; those
// with a TTL expire once the server runs. Each command found its key
// gone: INCR made a persistent "1" of a counter that had expired, RPUSH a
// list of its last element, and SMOVE, LMOVE, ZUNIONSTORE and SORT STORE,
// which took from a key with a TTL into one without, found nothing to
// take, so that keys without a TTL were lost. A PEXPIREAT in the past
// keeps its key for the commands after it too.
func TestReplayAfterExpiry(t *testing.T) {
	t.Parallel()
	keys := []string{"n", "vl", "src", "dst", "l1", "l2", "zs", "zu", "sl", "sorted", "gone", "kept"}
	cfg := Config{AppendOnly: true, Dir: t.TempDir()}
	s, addr := startServer(t, cfg)
	rc := dialRaw(t, addr)
	past := fmt.Sprint(time.Now().Add(-time.Hour).UnixMilli())
	batch := [][]string{
		{"SET", "n", "5", "PX", "400"},
		{"RPUSH", "vl", "a"}, {"PEXPIRE", "vl", "400"},
		{"SADD", "src", "a", "b"}, {"PEXPIRE", "src", "400"},
		{"RPUSH", "l1", "x", "y"}, {"PEXPIRE", "l1", "400"},
		{"ZADD", "zs", "1", "m"}, {"PEXPIRE", "zs", "400"},
		{"RPUSH", "sl", "3", "1", "2"}, {"PEXPIRE", "sl", "400"},
		{"RPUSH", "gone", "g"},
		// Logged while those keys are there:
		{"INCR", "n"},
		{"RPUSH", "vl", "b"},
		{"SMOVE", "src", "dst", "a"},
		{"LMOVE", "l1", "l2", "LEFT", "RIGHT"},
		{"ZUNIONSTORE", "zu", "1", "zs"},
		{"SORT", "sl", "STORE", "sorted"},
		{"PEXPIREAT", "gone", past}, // deletes it, logged as DEL
		{"SET", "kept", "k"},
	}
	rc.sendTogether(batch...)
	for _, args := range batch {
		if r := rc.read(); strings.HasPrefix(r, "-") {
			t.Fatalf("%q: %q", args, r)
		}
	}
	before := describeKeys(t, rc, keys)
	s.Shutdown(context.Background()) // before any TTL has passed
	time.Sleep(600 * time.Millisecond)
	// What the server would hold now: the keys with a TTL have expired.
	want := map[string]string{}
	for k, v := range before {
		if !strings.HasSuffix(v, " volatile") {
			want[k] = v
		}
	}
	_, addr2 := startServer(t, cfg)
	got := describeKeys(t, dialRaw(t, addr2), keys)
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: absent after replay; want %s", k, w)
		} else if g != w {
			t.Errorf("%s: %s after replay; want %s", k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s after replay; want it absent", k, g)
		}
	}
}
