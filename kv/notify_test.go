package kv

import (
	"slices"
	"testing"
)

// newEventScript writes with a command of each class onto absent keys,
// which it creates, and onto present ones, which it overwrites or
// changes, and with commands that create nothing (an absent key left
// absent, an empty result).
var newEventScript = [][]string{
	// Strings.
	{"SET", "s", "1"}, {"SET", "s", "2"}, {"SET", "s2", "1", "NX"}, {"SET", "s3", "1", "XX"}, {"SET", "s3", "1", "GET"},
	{"SETNX", "s4", "1"}, {"SETNX", "s4", "1"}, {"SETEX", "s5", "100", "1"}, {"PSETEX", "s6", "100000", "1"},
	{"GETSET", "s7", "1"}, {"GETSET", "s7", "2"}, {"GETDEL", "s7"}, {"GETEX", "s", "PERSIST"},
	{"MSET", "s", "1", "m1", "1", "m2", "2"}, {"MSETNX", "m3", "1", "m4", "1"}, {"MSETNX", "m4", "1", "m5", "1"},
	{"APPEND", "a", "x"}, {"APPEND", "a", "y"}, {"SETRANGE", "r", "2", "x"}, {"SETRANGE", "r0", "0", ""},
	{"INCR", "i"}, {"INCR", "i"}, {"DECR", "i2"}, {"INCRBY", "i3", "5"}, {"DECRBY", "i4", "5"}, {"INCRBYFLOAT", "f", "1.5"},
	{"INCRBYFLOAT", "f", "1"},
	// Keys.
	{"RENAME", "s", "rn"}, {"RENAME", "rn", "m1"}, {"RENAMENX", "m1", "m2"}, {"RENAMENX", "m2", "rn2"},
	{"COPY", "rn2", "c"}, {"COPY", "rn2", "c"}, {"COPY", "rn2", "c", "REPLACE"}, {"COPY", "rn2", "c1", "DB", "1"},
	{"SELECT", "1"}, {"SET", "mv", "1"}, {"MOVE", "mv", "0"}, {"SELECT", "0"}, {"MOVE", "mv", "1"},
	{"EXPIRE", "c", "100"}, {"PERSIST", "c"}, {"EXPIRE", "c", "-1"}, {"DEL", "rn2", "nokey"}, {"UNLINK", "a"},
	// Lists.
	{"LPUSH", "l", "a"}, {"LPUSH", "l", "b", "c"}, {"RPUSH", "l2", "a", "b", "c"}, {"LPUSHX", "lx", "a"}, {"RPUSHX", "l", "d"},
	{"LINSERT", "l", "BEFORE", "a", "z"}, {"LINSERT", "lx", "BEFORE", "a", "z"}, {"LSET", "l", "0", "y"},
	{"LMOVE", "l", "l3", "LEFT", "RIGHT"}, {"LMOVE", "l", "l3", "RIGHT", "LEFT"}, {"RPOPLPUSH", "l3", "l4"}, {"RPOPLPUSH", "l4", "l4"},
	{"BLMOVE", "l2", "l5", "LEFT", "LEFT", "0"}, {"BRPOPLPUSH", "l2", "l6", "0"}, {"LMPOP", "2", "nokey", "l2", "LEFT"},
	{"LPOP", "l"}, {"RPOP", "l", "5"}, {"LREM", "l3", "0", "y"}, {"LTRIM", "l4", "1", "0"}, {"BLPOP", "l5", "0"},
	{"LMOVE", "l6", "l6", "LEFT", "RIGHT"},
	// Sets.
	{"SADD", "st", "a", "b", "c"}, {"SADD", "st", "d"}, {"SREM", "st", "d"}, {"SMOVE", "st", "st2", "a"},
	{"SMOVE", "st", "st2", "b"}, {"SMOVE", "st", "st2", "b"}, {"SMOVE", "st", "st2", "c"}, {"SADD", "st", "x", "y"},
	{"SADD", "sp", "a"}, {"SPOP", "sp"}, {"SADD", "sp", "b"},
	{"SINTERSTORE", "si", "st", "st"}, {"SINTERSTORE", "si", "st", "st2"}, {"SUNIONSTORE", "su", "st", "st2"},
	{"SUNIONSTORE", "su", "st"}, {"SDIFFSTORE", "sd", "st", "st2"}, {"SDIFFSTORE", "sd2", "st", "st"},
	// Hashes.
	{"HSET", "h", "f", "v"}, {"HSET", "h", "g", "v"}, {"HSETNX", "h2", "f", "v"}, {"HSETNX", "h2", "f", "v"},
	{"HMSET", "h3", "f", "v", "g", "w"}, {"HINCRBY", "h4", "f", "1"}, {"HINCRBYFLOAT", "h5", "f", "1.5"},
	{"HDEL", "h3", "f", "g"},
	// Sorted sets.
	{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, {"ZADD", "z", "4", "d"}, {"ZADD", "zx", "XX", "1", "a"},
	{"ZADD", "z2", "INCR", "1", "a"}, {"ZINCRBY", "z3", "1", "a"}, {"ZREM", "z3", "a"}, {"ZPOPMIN", "z2"},
	{"ZRANGESTORE", "zr", "z", "0", "1"}, {"ZRANGESTORE", "zr", "z", "0", "-1"}, {"ZRANGESTORE", "zr2", "z", "5", "6"},
	{"ZUNIONSTORE", "zu", "2", "z", "st"}, {"ZINTERSTORE", "zi", "2", "z", "z"}, {"ZDIFFSTORE", "zd", "1", "z"},
	{"ZDIFFSTORE", "zd", "1", "z"}, {"ZMPOP", "1", "z", "MAX"}, {"BZPOPMIN", "z", "0"}, {"BZMPOP", "0", "1", "z", "MIN"},
	{"ZREMRANGEBYSCORE", "zu", "-inf", "+inf"},
	// Bitmaps.
	{"SETBIT", "b", "7", "1"}, {"SETBIT", "b", "100", "0"}, {"SETBIT", "b2", "1", "0"}, {"BITFIELD", "bf", "SET", "u8", "0", "1"},
	{"BITFIELD", "bf2", "GET", "u8", "0"}, {"BITFIELD", "bf3", "INCRBY", "u8", "0", "1"},
	{"BITOP", "OR", "bo", "b", "b2"}, {"BITOP", "AND", "bo", "b", "nokey"}, {"BITOP", "NOT", "bo2", "b"}, {"BITOP", "NOT", "bo2", "b"},
	// HyperLogLogs.
	{"PFADD", "hl", "a"}, {"PFADD", "hl", "b"}, {"PFADD", "hl2"}, {"PFMERGE", "hm", "hl"}, {"PFMERGE", "hm", "hl2"},
	{"PFMERGE", "hm2"}, {"PFCOUNT", "hl"},
	// SORT.
	{"RPUSH", "sl", "3", "1", "2"}, {"SORT", "sl", "STORE", "so"}, {"SORT", "sl", "DESC", "STORE", "so"}, {"SORT", "nokey", "STORE", "so"},
	{"SORT", "sl", "STORE", "so"},
	// Transactions run their commands as they would run alone.
	{"MULTI"}, {"SET", "t", "1"}, {"RPUSH", "t2", "a"}, {"SET", "t", "2"}, {"EXEC"},
	// Emptying.
	{"FLUSHDB"}, {"SET", "s", "1"}, {"SWAPDB", "0", "1"}, {"FLUSHALL"}, {"SET", "s", "1"},
}

// TestCompatNewEvents compares the new events (the class n of
// notify-keyspace-events) with Redis 7.0's, beside every other class's:
// one for each key a write creates, sent as it is added to the keyspace
// (Redis's dbAdd), before the write's own event, and none for a key
// overwritten; RENAME's and COPY's destination and MOVE's key are added
// anew, whether or not they replace another.
func TestCompatNewEvents(t *testing.T) {
	compareEventsOf(t, "KEAn", newEventScript)
}

// TestCompatNewEventsOnly: with n alone, new is the only event sent.
func TestCompatNewEventsOnly(t *testing.T) {
	compareEventsOf(t, "KEn", newEventScript)
}

// TestCompatNewEventServedLate: a blocked BLMOVE, BRPOPLPUSH or BLMPOP
// served by a push creates its destination when it is served, with the
// new event before its push's, as Redis's serveClientBlockedOnList.
func TestCompatNewEventServedLate(t *testing.T) {
	_, addr := startServer(t, Config{})
	var events [2][]string
	for i, a := range []string{addr, redisServer(t)} {
		sub, rc, blocked := dialRaw(t, a), dialRaw(t, a), dialRaw(t, a)
		rc.do("CONFIG", "SET", "notify-keyspace-events", "KEAn")
		sub.do("PSUBSCRIBE", "__key*@0__:*")
		for _, wait := range [][]string{
			{"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"}, {"BRPOPLPUSH", "src", "dst", "0"}, {"BRPOPLPUSH", "src", "dst2", "0"},
			{"BLMPOP", "0", "1", "src", "LEFT"},
		} {
			blocked.send(wait...)
			waitBlocked(t, rc, 1)
			rc.do("RPUSH", "src", "a", "b")
			blocked.read()
			rc.do("DEL", "src")
		}
		events[i] = eventsUntilPong(t, sub)
	}
	if !slices.Equal(events[0], events[1]) {
		t.Errorf("events differ:\nevkv  %q\nRedis %q", events[0], events[1])
	}
}
