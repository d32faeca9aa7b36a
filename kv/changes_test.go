package kv

import (
	"strconv"
	"strings"
	"testing"
)

// changeCases are writes of each command, onto keys that setup makes,
// with one element and several, changing all, some or none of them.
var changeCases = []struct {
	setup, script [][]string
}{
	// Strings.
	{nil, [][]string{{"SET", "s", "1"}, {"SET", "s", "2", "GET"}, {"SET", "s", "3", "NX"}, {"SET", "t", "1", "XX"}, {"SET", "s", "1", "EX", "100"}}},
	{nil, [][]string{{"SETNX", "s", "1"}, {"SETNX", "s", "1"}, {"SETEX", "s", "100", "1"}, {"PSETEX", "s", "100000", "1"}}},
	{[][]string{{"SET", "s", "1"}}, [][]string{{"GETSET", "s", "2"}, {"GETSET", "t", "2"}, {"GETDEL", "s"}, {"GETDEL", "s"}}},
	{[][]string{{"SET", "s", "1"}}, [][]string{{"GETEX", "s"}, {"GETEX", "s", "EX", "100"}, {"GETEX", "s", "PERSIST"}, {"GETEX", "s", "PERSIST"}, {"GETEX", "s", "PX", "-1"}}},
	{[][]string{{"SET", "a", "1"}}, [][]string{{"MSET", "a", "1", "b", "2", "c", "3"}, {"MSETNX", "d", "1", "e", "2"}, {"MSETNX", "e", "1", "f", "2"}}},
	{nil, [][]string{{"APPEND", "s", "ab"}, {"APPEND", "s", ""}, {"SETRANGE", "s", "1", "xyz"}, {"SETRANGE", "t", "0", ""}, {"SETRANGE", "s", "0", ""}}},
	{[][]string{{"SET", "x", "a"}}, [][]string{{"INCR", "i"}, {"DECR", "i"}, {"INCRBY", "i", "5"}, {"DECRBY", "i", "2"}, {"INCRBYFLOAT", "f", "1.5"}, {"INCR", "x"}, {"INCRBYFLOAT", "x", "1"}}},
	// Keys.
	{[][]string{{"MSET", "a", "1", "b", "2", "c", "3"}}, [][]string{{"DEL", "a", "b", "nokey"}, {"UNLINK", "c", "nokey"}}},
	{[][]string{{"MSET", "a", "1", "b", "2"}}, [][]string{{"RENAME", "a", "c"}, {"RENAMENX", "c", "b"}, {"RENAMENX", "c", "d"}, {"RENAME", "b", "b"}}},
	{[][]string{{"MSET", "a", "1", "b", "2"}}, [][]string{{"COPY", "a", "c"}, {"COPY", "a", "b"}, {"COPY", "a", "b", "REPLACE"}, {"MOVE", "a", "1"}, {"MOVE", "b", "1"}}},
	{[][]string{{"MSET", "a", "1", "b", "2"}}, [][]string{{"EXPIRE", "a", "100"}, {"PEXPIRE", "a", "100000", "NX"}, {"EXPIREAT", "a", "4000000000"}, {"PEXPIREAT", "a", "4000000000000"}, {"PERSIST", "a"}, {"PERSIST", "a"}, {"EXPIRE", "b", "-1"}}},
	{[][]string{{"MSET", "a", "1", "b", "2", "c", "3"}}, [][]string{{"FLUSHDB"}, {"FLUSHDB"}}},
	{[][]string{{"MSET", "a", "1", "b", "2"}}, [][]string{{"FLUSHALL"}}},
	{[][]string{{"MSET", "a", "1", "b", "2"}}, [][]string{{"SWAPDB", "0", "1"}}},
	// Lists.
	{nil, [][]string{{"LPUSH", "l", "a", "b", "c"}, {"RPUSH", "l", "d", "e"}, {"LPUSHX", "l", "f", "g", "h"}, {"RPUSHX", "l", "i"}, {"LPUSHX", "nokey", "a", "b"}}},
	{[][]string{{"RPUSH", "l", "a", "b", "a", "c", "a"}}, [][]string{{"LINSERT", "l", "BEFORE", "b", "x"}, {"LINSERT", "l", "AFTER", "nope", "x"}, {"LSET", "l", "0", "y"}, {"LREM", "l", "0", "a"}, {"LREM", "l", "0", "nope"}}},
	{[][]string{{"RPUSH", "l", "a", "b", "c", "d", "e", "f", "g"}}, [][]string{{"LPOP", "l"}, {"LPOP", "l", "2"}, {"RPOP", "l", "2"}, {"RPOP", "l"}, {"LTRIM", "l", "1", "0"}}},
	{[][]string{{"RPUSH", "l", "a", "b", "c", "d", "e", "f", "g"}}, [][]string{{"LTRIM", "l", "1", "-2"}, {"LTRIM", "l", "0", "-1"}, {"LMOVE", "l", "m", "LEFT", "RIGHT"}, {"RPOPLPUSH", "l", "l"}, {"LMPOP", "2", "nokey", "l", "RIGHT", "COUNT", "2"}}},
	{[][]string{{"RPUSH", "l", "a", "b", "c", "d", "e", "f", "g"}}, [][]string{{"BLPOP", "l", "0"}, {"BRPOP", "l", "0"}, {"BLMOVE", "l", "m", "LEFT", "LEFT", "0"}, {"BRPOPLPUSH", "l", "m", "0"}, {"BLMPOP", "0", "1", "l", "LEFT", "COUNT", "5"}}},
	// Sets.
	{[][]string{{"SADD", "s", "a"}}, [][]string{{"SADD", "s", "a", "b", "c"}, {"SADD", "s", "a"}, {"SREM", "s", "a", "b", "nope"}, {"SREM", "s", "nope"}}},
	{[][]string{{"SADD", "s", "a", "b", "c", "d", "e", "f"}}, [][]string{{"SPOP", "s"}, {"SPOP", "s", "2"}, {"SPOP", "s", "0"}, {"SMOVE", "s", "t", "nope"}, {"SPOP", "s", "10"}}},
	{[][]string{{"SADD", "s", "a", "b", "c"}, {"SADD", "t", "c", "d"}}, [][]string{{"SMOVE", "s", "t", "a"}, {"SMOVE", "s", "t", "c"}, {"SINTERSTORE", "i", "s", "t"}, {"SUNIONSTORE", "u", "s", "t"}, {"SDIFFSTORE", "d", "s", "t"}, {"SDIFFSTORE", "d", "s", "s"}, {"SDIFFSTORE", "e", "s", "s"}}},
	// Hashes.
	{[][]string{{"HSET", "h", "a", "1"}}, [][]string{{"HSET", "h", "a", "1", "b", "2", "c", "3"}, {"HSET", "h", "a", "2"}, {"HMSET", "h", "d", "1", "e", "2"}, {"HSETNX", "h", "a", "1"}, {"HSETNX", "h", "z", "1"}}},
	{[][]string{{"HSET", "h", "a", "1", "b", "2", "c", "3"}}, [][]string{{"HDEL", "h", "a", "b", "nope"}, {"HDEL", "h", "nope"}, {"HINCRBY", "h", "n", "5"}, {"HINCRBYFLOAT", "h", "f", "1.5"}, {"HDEL", "h", "c", "n", "f"}}},
	// Sorted sets.
	{[][]string{{"ZADD", "z", "1", "a"}}, [][]string{{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, {"ZADD", "z", "5", "a", "5", "b"}, {"ZADD", "z", "NX", "1", "a", "1", "d"}, {"ZADD", "z", "INCR", "1", "a"}, {"ZINCRBY", "z", "2", "e"}}},
	{[][]string{{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f", "7", "g"}}, [][]string{{"ZREM", "z", "a", "b", "nope"}, {"ZPOPMIN", "z"}, {"ZPOPMAX", "z", "2"}, {"BZPOPMIN", "z", "0"}, {"BZPOPMAX", "z", "0"}, {"ZMPOP", "1", "z", "MIN", "COUNT", "5"}}},
	{[][]string{{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f", "7", "g"}}, [][]string{{"BZMPOP", "0", "1", "z", "MAX", "COUNT", "2"}, {"ZREMRANGEBYRANK", "z", "0", "0"}, {"ZREMRANGEBYSCORE", "z", "3", "4"}, {"ZREMRANGEBYLEX", "z", "-", "+"}}},
	{[][]string{{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, {"ZADD", "y", "1", "b"}}, [][]string{{"ZRANGESTORE", "r", "z", "0", "-1"}, {"ZRANGESTORE", "r", "z", "5", "6"}, {"ZUNIONSTORE", "u", "2", "z", "y"}, {"ZINTERSTORE", "i", "2", "z", "y"}, {"ZDIFFSTORE", "d", "2", "z", "y"}, {"ZDIFFSTORE", "d", "1", "nokey"}}},
	// Bitmaps.
	{nil, [][]string{{"SETBIT", "b", "7", "1"}, {"SETBIT", "b", "7", "1"}, {"SETBIT", "b", "100", "0"}, {"BITFIELD", "f", "SET", "u8", "0", "1", "SET", "u8", "8", "2", "GET", "u8", "0"}, {"BITFIELD", "f", "INCRBY", "u8", "0", "1"}, {"BITFIELD", "g", "GET", "u8", "0"}, {"BITOP", "OR", "o", "b", "f"}, {"BITOP", "AND", "o", "nokey"}}},
	// HyperLogLogs.
	{nil, [][]string{{"PFADD", "h", "a", "b", "c"}, {"PFADD", "h", "a"}, {"PFADD", "h2"}, {"PFCOUNT", "h"}, {"PFCOUNT", "h"}, {"PFADD", "h", "d"}, {"PFCOUNT", "h", "h2"}, {"PFMERGE", "m", "h", "h2"}, {"PFMERGE", "m"}, {"PFDEBUG", "TODENSE", "h"}, {"PFDEBUG", "TODENSE", "h"}, {"PFDEBUG", "GETREG", "h2"}}},
	// SORT.
	{[][]string{{"RPUSH", "l", "3", "1", "2"}}, [][]string{{"SORT", "l", "STORE", "d"}, {"SORT", "l"}, {"SORT", "nokey", "STORE", "d"}}},
	// Transactions.
	{nil, [][]string{{"MULTI"}, {"RPUSH", "l", "a", "b", "c"}, {"SADD", "s", "a", "b"}, {"GET", "x"}, {"EXEC"}}},
	{nil, [][]string{{"MULTI"}, {"GET", "x"}, {"EXEC"}}},
}

// TestCompatChangeCounts compares the changes each write counts
// (rdb_changes_since_last_save, which says when a snapshot is due) with
// Redis 7.0's: as many as the elements it adds, removes or changes, for
// most commands, where evkv counted one a command.
func TestCompatChangeCounts(t *testing.T) {
	changes := func(rc *rawConn) int { return persistenceField(t, rc, "rdb_changes_since_last_save") }
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	for _, tc := range changeCases {
		var deltas [2][]int // each command's, by server
		for i, rc := range []*rawConn{ours, theirs} {
			rc.do("FLUSHALL")
			for _, args := range tc.setup {
				rc.do(args...)
			}
			before, queuing := changes(rc), false
			for _, args := range tc.script {
				rc.do(args...)
				// In a transaction, INFO would be queued: EXEC counts
				// what was queued.
				switch strings.ToUpper(args[0]) {
				case "MULTI":
					queuing = true
				case "EXEC", "DISCARD":
					queuing = false
				}
				after := before
				if !queuing {
					after = changes(rc)
				}
				deltas[i] = append(deltas[i], after-before)
				before = after
			}
		}
		for j, args := range tc.script {
			if deltas[0][j] != deltas[1][j] {
				t.Errorf("%q after %q: evkv counts %d changes; Redis %d", args, append(tc.setup, tc.script[:j]...), deltas[0][j], deltas[1][j])
			}
		}
	}
}

// TestCompatChangeCountsServedLate: a push that serves a blocked client
// counts its own changes and the blocked command's, as Redis 7.0's.
func TestCompatChangeCountsServedLate(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	for _, tc := range []struct{ wait, push []string }{
		{[]string{"BLPOP", "l", "0"}, []string{"RPUSH", "l", "a", "b", "c"}},
		{[]string{"BRPOP", "nokey", "l", "0"}, []string{"LPUSH", "l", "a", "b", "c"}},
		{[]string{"BLMOVE", "l", "m", "LEFT", "RIGHT", "0"}, []string{"RPUSH", "l", "a", "b", "c"}},
		{[]string{"BRPOPLPUSH", "l", "l", "0"}, []string{"RPUSH", "l", "a", "b", "c"}},
		{[]string{"BLMPOP", "0", "1", "l", "LEFT", "COUNT", "2"}, []string{"RPUSH", "l", "a", "b", "c"}},
		{[]string{"BLMPOP", "0", "1", "l", "LEFT", "COUNT", "5"}, []string{"RPUSH", "l", "a", "b", "c"}},
		{[]string{"BZPOPMIN", "z", "0"}, []string{"ZADD", "z", "1", "a", "2", "b"}},
		{[]string{"BZMPOP", "0", "1", "z", "MAX", "COUNT", "2"}, []string{"ZADD", "z", "1", "a", "2", "b", "3", "c"}},
	} {
		var deltas [2]int
		for i, a := range []string{addr, raddr} {
			rc, blocked := dialRaw(t, a), dialRaw(t, a)
			rc.do("FLUSHALL")
			blocked.send(tc.wait...)
			waitBlocked(t, rc, 1)
			before := persistenceField(t, rc, "rdb_changes_since_last_save")
			rc.do(tc.push...)
			blocked.read()
			deltas[i] = persistenceField(t, rc, "rdb_changes_since_last_save") - before
		}
		if deltas[0] != deltas[1] {
			t.Errorf("%q serving %q: evkv counts %d changes; Redis %d", tc.push, tc.wait, deltas[0], deltas[1])
		}
	}
}

// persistenceField returns the integer field name of INFO persistence.
func persistenceField(t *testing.T, rc *rawConn, name string) int {
	t.Helper()
	for _, line := range strings.Split(rc.do("INFO", "persistence"), "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatalf("INFO persistence has no %s", name)
	return 0
}
