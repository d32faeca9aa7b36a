package kv

import (
	"strings"
	"testing"
)

// keymissScript reads present keys, absent keys and keys of other types
// with the commands of strings, bitmaps, HyperLogLogs, lists, sets and
// keys in general.
var keymissScript = [][]string{
	{"SET", "s", "1"}, {"RPUSH", "l", "a", "b"}, {"SADD", "set", "m"},
	{"GET", "s"}, {"GET", "none"}, {"GET", "l"}, {"MGET", "s", "none", "l"}, {"STRLEN", "none"}, {"STRLEN", "s"},
	{"GETRANGE", "none", "0", "-1"}, {"SUBSTR", "s", "0", "1"}, {"GETDEL", "none"}, {"GETEX", "none"}, {"GETEX", "s"},
	{"GETSET", "none2", "x"}, {"APPEND", "none3", "x"}, {"INCR", "none4"}, {"SETRANGE", "none5", "1", "x"},
	{"EXISTS", "s", "none", "l"}, {"TYPE", "none"}, {"TYPE", "l"}, {"TTL", "none"}, {"PTTL", "s"}, {"EXPIRETIME", "none"},
	{"PEXPIRETIME", "s"}, {"OBJECT", "ENCODING", "none"}, {"OBJECT", "ENCODING", "s"}, {"OBJECT", "FREQ", "none"},
	{"TOUCH", "s", "none"}, {"DEL", "none"}, {"UNLINK", "none"}, {"EXPIRE", "none", "10"}, {"PERSIST", "none"},
	{"RENAME", "none", "x"}, {"RENAME", "none4", "none4b"}, {"RENAMENX", "none", "x"}, {"COPY", "none", "x"}, {"COPY", "s", "s2"},
	{"MOVE", "none", "1"}, {"RANDOMKEY"}, {"DBSIZE"}, {"KEYS", "n*"}, {"SCAN", "0"},
	{"LLEN", "none"}, {"LLEN", "l"}, {"LRANGE", "none", "0", "-1"}, {"LRANGE", "s", "0", "-1"}, {"LINDEX", "none", "0"},
	{"LINDEX", "l", "0"}, {"LPOS", "none", "a"}, {"LPOS", "l", "a"}, {"LPOP", "none"}, {"RPOP", "l"}, {"LPUSHX", "none", "a"},
	{"LINSERT", "none", "BEFORE", "a", "b"}, {"LREM", "none", "0", "a"}, {"LSET", "none", "0", "a"}, {"LTRIM", "none", "0", "1"},
	{"LMOVE", "none", "l", "LEFT", "LEFT"}, {"RPOPLPUSH", "none", "l"}, {"LMPOP", "2", "none", "l", "LEFT"},
	{"SCARD", "none"}, {"SCARD", "set"}, {"SISMEMBER", "none", "m"}, {"SMISMEMBER", "set", "m"}, {"SMEMBERS", "none"},
	{"SRANDMEMBER", "none"}, {"SRANDMEMBER", "set"}, {"SPOP", "none"}, {"SREM", "none", "m"}, {"SMOVE", "none", "set", "m"},
	{"SINTER", "set", "none"}, {"SUNION", "none", "set"}, {"SDIFF", "none", "set"}, {"SINTERCARD", "2", "set", "none"},
	{"SINTERSTORE", "d", "set", "none"}, {"SUNIONSTORE", "d", "none", "set"}, {"SDIFFSTORE", "d", "set", "none"},
	{"SSCAN", "none", "0"}, {"SSCAN", "set", "0"},
	{"HGET", "none", "f"}, {"ZSCORE", "none", "m"}, {"ZCARD", "none"},
	{"GETBIT", "none", "1"}, {"GETBIT", "l", "1"}, {"BITCOUNT", "none"}, {"BITPOS", "s", "1"}, {"BITFIELD_RO", "none", "GET", "u8", "0"},
	{"BITFIELD", "none6", "GET", "u8", "0"}, {"SETBIT", "none7", "1", "1"}, {"BITOP", "AND", "d2", "none", "s"},
	{"SORT", "none"}, {"SORT", "set", "ALPHA"}, {"SORT", "set", "BY", "w_*", "GET", "g_*", "GET", "#"}, {"SORT_RO", "s"}, {"LCS", "none", "s"},
	{"PFCOUNT", "none"}, {"PFCOUNT", "s"}, {"PFCOUNT", "none", "s"}, {"PFADD", "none8", "a"}, {"PFCOUNT", "none8", "none"},
	{"PFMERGE", "none9", "none"}, {"PFMERGE", "d3", "none", "s"}, {"PFDEBUG", "ENCODING", "none"},
	{"MULTI"}, {"GET", "none"}, {"LLEN", "l"}, {"EXEC"},
}

// TestCompatKeymissEvents compares the keymiss events (the class m of
// notify-keyspace-events) with Redis's: one for each read that finds no
// key, as Redis's lookupKeyRead sends.
func TestCompatKeymissEvents(t *testing.T) {
	compareEventsOf(t, "KEm", keymissScript)
}

// TestCompatKeyspaceStats compares keyspace_hits and keyspace_misses with
// Redis's, for the commands of strings, lists, sets and keys in general.
func TestCompatKeyspaceStats(t *testing.T) {
	stats := func(addr string) string {
		rc := dialRaw(t, addr)
		var out []string
		for _, args := range keymissScript {
			rc.do(args...)
			info := rc.do("INFO", "stats")
			var line []string
			for _, f := range strings.Split(info, "\r\n") {
				if strings.HasPrefix(f, "keyspace_") {
					line = append(line, f)
				}
			}
			rc.do("CONFIG", "RESETSTAT")
			out = append(out, strings.Join(args, " ")+": "+strings.Join(line, " "))
		}
		return strings.Join(out, "\n")
	}
	_, addr := startServer(t, Config{})
	got, want := strings.Split(stats(addr), "\n"), strings.Split(stats(redisServer(t)), "\n")
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("evkv  %s\nRedis %s", got[i], want[i])
		}
	}
}

// TestCompatExecLog compares how EXEC's writes are logged with Redis 7.0:
// several in MULTI and EXEC, after the SELECT of the first one's database;
// one alone bare; none, nothing.
func TestCompatExecLog(t *testing.T) {
	compareLogs(t, func(addr string) {
		rc := dialRaw(t, addr)
		for _, script := range [][][]string{
			{{"MULTI"}, {"SET", "a", "1"}, {"EXEC"}},
			{{"MULTI"}, {"SET", "a", "2"}, {"INCR", "b"}, {"EXEC"}},
			{{"MULTI"}, {"GET", "a"}, {"EXEC"}},
			{{"MULTI"}, {"SELECT", "1"}, {"SET", "c", "1"}, {"SELECT", "0"}, {"DEL", "a"}, {"EXEC"}},
			{{"SELECT", "2"}, {"MULTI"}, {"GET", "x"}, {"SET", "x", "1"}, {"EXEC"}, {"SELECT", "0"}},
			{{"MULTI"}, {"DEL", "nokey"}, {"SET", "d", "1"}, {"EXEC"}},
			{{"INCRBY", "n", "5"}, {"DECR", "n"}, {"DECRBY", "n", "2"}, {"INCR", "n"}, {"INCRBYFLOAT", "f", "1.5"},
				{"GETDEL", "f"}, {"SETNX", "n", "x"}, {"SETNX", "m", "x"}, {"GETSET", "m", "y"}, {"APPEND", "m", "z"},
				{"SETRANGE", "m", "1", "w"}, {"MSET", "p", "1", "q", "2"}, {"MSETNX", "p", "3", "r", "4"}, {"SET", "p", "5", "GET"}},
		} {
			for _, args := range script {
				rc.do(args...)
			}
		}
	})
}
