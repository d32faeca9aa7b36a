package kv

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestKeyEvents compares the keyspace events of the commands on keys of
// any type with Redis's. COPY ... REPLACE onto an existing key publishes
// copy_to alone: Redis's copyCommand drops the old value with dbDelete,
// which publishes nothing.
func TestKeyEvents(t *testing.T) {
	compareEvents(t, [][]string{
		{"SET", "a", "1"}, {"SET", "b", "2"}, {"DEL", "a", "nokey"}, {"UNLINK", "b"},
		{"SET", "src", "v"}, {"COPY", "src", "dst"}, {"COPY", "src", "dst"}, {"COPY", "src", "dst", "REPLACE"},
		{"COPY", "src", "fresh", "REPLACE"}, {"COPY", "src", "dst", "DB", "1"}, {"COPY", "nokey", "dst", "REPLACE"},
		{"RPUSH", "l", "x"}, {"COPY", "l", "dst", "REPLACE"}, {"TYPE", "dst"},
		{"RENAME", "src", "r"}, {"RENAMENX", "r", "fresh"}, {"RENAMENX", "r", "r2"}, {"RENAME", "r2", "dst"},
		{"MOVE", "fresh", "1"}, {"EXPIRE", "dst", "100"}, {"PERSIST", "dst"}, {"PEXPIRE", "dst", "-1"},
	})
}

// TestCompatRandomKeyNeverExpired: RANDOMKEY never returns a key that has
// expired, in Redis 7.0: dbRandomKey deletes an expired key it draws and
// draws again, for as long as it takes on a master (its 100 tries are a
// replica's). 100,000 keys have expired beside one that has not, none of
// them deleted, the expiry cycle stopped (DEBUG SET-ACTIVE-EXPIRE 0):
// Redis 7.0.15 returns the live key. The two servers run at once.
func TestCompatRandomKeyNeverExpired(t *testing.T) {
	for _, name := range []string{"evkv", "redis"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var a string
			if name == "evkv" {
				_, a = startServer(t, Config{Settings: map[string]string{"enable-debug-command": "yes"}})
			} else {
				a = redisServer(t, "--enable-debug-command", "yes")
			}
			rc := dialRaw(t, a)
			if got := rc.do("DEBUG", "SET-ACTIVE-EXPIRE", "0"); got != "+OK\r\n" {
				t.Fatalf("DEBUG SET-ACTIVE-EXPIRE 0 = %q", got)
			}
			rc.do("SET", "live", "1")
			rc.doMany(100000, func(i int) []string { return []string{"SET", fmt.Sprint("gone", i), "x", "PX", "1"} })
			time.Sleep(5 * time.Millisecond) // the last keys' time passes
			if got := rc.do("RANDOMKEY"); got != "$4\r\nlive\r\n" {
				t.Errorf("%s: RANDOMKEY = %q (EXISTS: %q); want live, the one key left", name, got, rc.do("EXISTS", strings.Split(got, "\r\n")[1]))
			}
			if got := rc.do("RANDOMKEY"); got != "$4\r\nlive\r\n" {
				t.Errorf("%s: RANDOMKEY again = %q; want live", name, got)
			}
		})
	}
}

// TestCompatCopyRenameOntoExpiredKey: COPY and RENAMENX onto a key that
// has expired, not yet deleted, store the source's value, as Redis's do
// (the destination is deleted as expired first). The source is the last
// key set, whose entry deleting the destination moves.
func TestCompatCopyRenameOntoExpiredKey(t *testing.T) {
	_, addr := startServer(t, Config{})
	for name, a := range map[string]string{"evkv": addr, "redis": redisServer(t)} {
		rc := dialRaw(t, a)
		for _, tc := range []struct {
			cmd       []string
			want, src string // the destination's value after, the source's
		}{
			{[]string{"COPY", "src", "dst"}, "$5\r\nvalue\r\n", "$5\r\nvalue\r\n"},
			{[]string{"COPY", "src", "dst", "REPLACE"}, "$5\r\nvalue\r\n", "$5\r\nvalue\r\n"},
			{[]string{"RENAMENX", "src", "dst"}, "$5\r\nvalue\r\n", "$-1\r\n"},
			{[]string{"RENAME", "src", "dst"}, "$5\r\nvalue\r\n", "$-1\r\n"},
		} {
			rc.do("FLUSHALL")
			rc.do("SET", "dst", "old", "PX", "1")
			rc.do("SET", "src", "value")
			time.Sleep(5 * time.Millisecond)
			rc.do(tc.cmd...)
			if got, src := rc.do("GET", "dst"), rc.do("GET", "src"); got != tc.want || src != tc.src {
				t.Errorf("%s: %q onto an expired key: GET dst, src = %q, %q; want %q, %q", name, tc.cmd, got, src, tc.want, tc.src)
			}
		}
	}
}

// TestCompatWriteOntoExpiredKeyEvents: a write onto a key that has
// expired, not yet deleted, publishes the events Redis 7.0's do. A write
// that looks its target up (lookupKeyWrite, as setKey does for MSET,
// RENAME's destination, the *STORE commands and BITOP with a result, as
// SETBIT, BITFIELD, PFADD and PFMERGE do) deletes it as expired first:
// "expired x", then "new x" as it is added again, before the write's own
// event (MSET x 1: new x, set x, expire x, expired x, new x, set x). A
// *STORE or BITOP with an empty result deletes the target as dbDelete
// does, expired or not: "del x". 10000 keys with an hour to live make
// the expiry cycle unlikely to delete x first.
func TestCompatWriteOntoExpiredKeyEvents(t *testing.T) {
	t.Parallel()
	scenarios := [][][]string{
		{{"MSET", "x", "1"}},
		{{"MSETNX", "x", "1"}},
		{{"SET", "x", "1"}},
		{{"SETEX", "x", "100", "1"}},
		{{"GETSET", "x", "1"}},
		{{"SETNX", "x", "1"}},
		{{"INCR", "x"}},
		{{"APPEND", "x", "a"}},
		{{"SET", "s", "1"}, {"RENAME", "s", "x"}},
		{{"SET", "s", "1"}, {"RENAMENX", "s", "x"}},
		{{"SET", "s", "1"}, {"COPY", "s", "x"}},
		{{"RPUSH", "s", "1"}, {"LMOVE", "s", "x", "LEFT", "LEFT"}},
		{{"SADD", "s", "1"}, {"SMOVE", "s", "x", "1"}},
		{{"SADD", "s", "1"}, {"SUNIONSTORE", "x", "s"}},
		{{"RPUSH", "s", "1"}, {"SORT", "s", "STORE", "x"}},
		{{"SORT", "s", "STORE", "x"}},
		{{"RPUSH", "s", "x"}, {"SORT", "s", "BY", "*"}},
		{{"RPUSH", "s", "x"}, {"SORT_RO", "s", "BY", "nosort", "GET", "*"}},
		{{"SUNIONSTORE", "x", "nokey"}},
		{{"SADD", "s", "1"}, {"SINTERSTORE", "x", "s"}},
		{{"SADD", "s", "1"}, {"SINTERSTORE", "x", "s", "nokey"}},
		{{"SADD", "s", "1"}, {"SDIFFSTORE", "x", "s", "s"}},
		{{"SADD", "z", "1"}, {"ZUNIONSTORE", "x", "1", "z"}},
		{{"ZUNIONSTORE", "x", "1", "nokey"}},
		{{"ZADD", "z", "1", "a"}, {"ZINTERSTORE", "x", "2", "z", "nokey"}},
		{{"ZADD", "z", "1", "a"}, {"ZRANGESTORE", "x", "z", "0", "-1"}},
		{{"ZADD", "z", "1", "a"}, {"ZRANGESTORE", "x", "z", "5", "6"}},
		{{"HSET", "x", "f", "v"}},
		{{"SETBIT", "x", "3", "1"}},
		{{"SETBIT", "x", "3", "0"}},
		{{"BITFIELD", "x", "INCRBY", "u8", "0", "1"}},
		{{"BITFIELD", "x", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"}},
		{{"GETBIT", "x", "0"}},
		{{"SET", "s", "1"}, {"BITOP", "OR", "x", "s"}},
		{{"BITOP", "AND", "x", "nokey"}},
		{{"BITOP", "NOT", "x", "x"}},
		{{"PFADD", "x", "a"}},
		{{"PFADD", "x"}},
		{{"PFCOUNT", "x"}},
		{{"PFMERGE", "x"}},
		{{"PFADD", "s", "a"}, {"PFMERGE", "x", "s"}},
		{{"PFDEBUG", "ENCODING", "x"}},
		{{"DEL", "x"}},
	}
	_, addr := startServer(t, Config{})
	var events [2][][]string // by server, by scenario
	for i, a := range []string{addr, redisServer(t)} {
		sub, rc := dialRaw(t, a), dialRaw(t, a)
		rc.doMany(10000, func(k int) []string { return []string{"SET", fmt.Sprint("pad", k), "x", "EX", "3600"} })
		rc.do("CONFIG", "SET", "notify-keyspace-events", "KEAn")
		sub.do("PSUBSCRIBE", "__keyevent@0__:*")
		for _, sc := range scenarios {
			rc.do("DEL", "x", "s", "z")
			rc.do("SET", "x", "old", "PX", "1")
			time.Sleep(5 * time.Millisecond)
			for _, args := range sc {
				rc.do(args...)
			}
			events[i] = append(events[i], eventsUntilPong(t, sub))
		}
	}
	for j, sc := range scenarios {
		if !slices.Equal(events[0][j], events[1][j]) {
			t.Errorf("%q onto an expired x: events differ:\nevkv  %q\nRedis %q", sc, events[0][j], events[1][j])
		}
	}
}
