package kv

import (
	"strconv"
	"strings"
	"testing"
)

// compareListScript runs script against evkv and Redis as compareWithRedis
// does, after HELLO proto (whose replies, naming each server, are not
// compared) when proto is 3.
func compareListScript(t *testing.T, proto int, script [][]string) {
	t.Helper()
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	if proto == 3 {
		ours.do("HELLO", "3")
		theirs.do("HELLO", "3")
	}
	for _, args := range script {
		if testing.Verbose() {
			t.Logf("%q", args)
		}
		got, want := ours.do(args...), theirs.do(args...)
		if got != want {
			t.Errorf("RESP%d %q: evkv replied %q; Redis %q", proto, args, got, want)
		}
	}
}

// listScript covers every list command with good and bad arguments.
var listScript = [][]string{
	// Pushes.
	{"LPUSH", "l", "a", "b", "c"}, {"RPUSH", "l", "d", "e"}, {"LRANGE", "l", "0", "-1"},
	{"LPUSHX", "nokey", "a"}, {"RPUSHX", "nokey", "a"}, {"EXISTS", "nokey"},
	{"LPUSHX", "l", "x", "y"}, {"RPUSHX", "l", "z"}, {"LRANGE", "l", "0", "-1"},
	{"LPUSH", "l"}, {"RPUSH"}, {"LPUSHX", "l"}, {"RPUSHX", "l"},
	{"SET", "str", "v"}, {"LPUSH", "str", "a"}, {"RPUSH", "str", "a"}, {"LPUSHX", "str", "a"}, {"RPUSHX", "str", "a"},
	{"TYPE", "l"}, {"OBJECT", "ENCODING", "l"},
	// LLEN, LINDEX.
	{"LLEN", "l"}, {"LLEN", "nokey"}, {"LLEN", "str"}, {"LLEN"}, {"LLEN", "a", "b"},
	{"LINDEX", "l", "0"}, {"LINDEX", "l", "-1"}, {"LINDEX", "l", "7"}, {"LINDEX", "l", "8"}, {"LINDEX", "l", "-8"},
	{"LINDEX", "l", "-9"}, {"LINDEX", "l", "x"}, {"LINDEX", "nokey", "x"}, {"LINDEX", "nokey", "0"}, {"LINDEX", "str", "0"},
	{"LINDEX", "l", "99999999999999999999"}, {"LINDEX", "l"},
	// LRANGE.
	{"LRANGE", "l", "0", "0"}, {"LRANGE", "l", "-3", "-1"}, {"LRANGE", "l", "-100", "100"}, {"LRANGE", "l", "5", "2"},
	{"LRANGE", "l", "8", "10"}, {"LRANGE", "l", "-1", "-3"}, {"LRANGE", "l", "x", "1"}, {"LRANGE", "l", "1", "x"},
	{"LRANGE", "nokey", "0", "-1"}, {"LRANGE", "nokey", "x", "-1"}, {"LRANGE", "str", "0", "-1"}, {"LRANGE", "l", "0"},
	{"LRANGE", "l", "-9223372036854775808", "9223372036854775807"},
	// LSET.
	{"LSET", "l", "0", "A"}, {"LSET", "l", "-1", "Z"}, {"LSET", "l", "8", "no"}, {"LSET", "l", "-9", "no"},
	{"LSET", "l", "x", "no"}, {"LSET", "nokey", "0", "v"}, {"LSET", "nokey", "x", "v"}, {"LSET", "str", "0", "v"},
	{"LSET", "l", "0"}, {"LRANGE", "l", "0", "-1"},
	// LINSERT.
	{"LINSERT", "l", "BEFORE", "A", "first"}, {"LINSERT", "l", "after", "Z", "last"}, {"LINSERT", "l", "After", "c", "mid"},
	{"LINSERT", "l", "before", "nope", "v"}, {"LINSERT", "l", "middle", "c", "v"}, {"LINSERT", "nokey", "before", "a", "v"},
	{"LINSERT", "nokey", "middle", "a", "v"}, {"LINSERT", "str", "before", "a", "v"}, {"LINSERT", "l", "before", "a"},
	{"LRANGE", "l", "0", "-1"},
	// LREM.
	{"RPUSH", "r", "a", "b", "a", "c", "a", "b", "a"}, {"LREM", "r", "2", "a"}, {"LRANGE", "r", "0", "-1"},
	{"LREM", "r", "-1", "a"}, {"LRANGE", "r", "0", "-1"}, {"LREM", "r", "0", "b"}, {"LRANGE", "r", "0", "-1"},
	{"LREM", "r", "0", "zz"}, {"LREM", "r", "x", "a"}, {"LREM", "nokey", "0", "a"}, {"LREM", "nokey", "x", "a"},
	{"LREM", "str", "0", "a"}, {"LREM", "r", "0", "a"}, {"LREM", "r", "0", "c"}, {"EXISTS", "r"}, {"LREM", "r", "1"},
	// LTRIM.
	{"RPUSH", "t", "1", "2", "3", "4", "5", "6"}, {"LTRIM", "t", "1", "-2"}, {"LRANGE", "t", "0", "-1"},
	{"LTRIM", "t", "-100", "100"}, {"LRANGE", "t", "0", "-1"}, {"LTRIM", "t", "x", "1"}, {"LTRIM", "t", "1", "x"},
	{"LTRIM", "nokey", "0", "1"}, {"LTRIM", "nokey", "x", "1"}, {"LTRIM", "str", "0", "1"}, {"LTRIM", "t", "1"},
	{"LTRIM", "t", "2", "1"}, {"EXISTS", "t"}, {"RPUSH", "t", "1", "2"}, {"LTRIM", "t", "5", "10"}, {"EXISTS", "t"},
	// LPOS.
	{"RPUSH", "p", "a", "b", "c", "a", "b", "c", "a"}, {"LPOS", "p", "a"}, {"LPOS", "p", "c"}, {"LPOS", "p", "zz"},
	{"LPOS", "p", "a", "RANK", "2"}, {"LPOS", "p", "a", "RANK", "-1"}, {"LPOS", "p", "a", "RANK", "-2"}, {"LPOS", "p", "a", "RANK", "4"},
	{"LPOS", "p", "a", "RANK", "0"}, {"LPOS", "p", "a", "RANK", "x"}, {"LPOS", "p", "a", "RANK", "-9223372036854775808"},
	{"LPOS", "p", "a", "RANK", "-9223372036854775807"}, {"LPOS", "p", "a", "COUNT", "0"}, {"LPOS", "p", "a", "COUNT", "2"},
	{"LPOS", "p", "a", "COUNT", "-1"}, {"LPOS", "p", "a", "COUNT", "x"}, {"LPOS", "p", "zz", "COUNT", "0"},
	{"LPOS", "p", "a", "MAXLEN", "3"}, {"LPOS", "p", "a", "MAXLEN", "0"}, {"LPOS", "p", "a", "MAXLEN", "-1"}, {"LPOS", "p", "a", "MAXLEN", "x"},
	{"LPOS", "p", "c", "MAXLEN", "2"}, {"LPOS", "p", "a", "COUNT", "0", "MAXLEN", "4"}, {"LPOS", "p", "a", "RANK", "-1", "COUNT", "2", "MAXLEN", "5"},
	{"LPOS", "p", "a", "RANK", "2", "COUNT", "0"}, {"LPOS", "p", "a", "rank", "1", "count", "1", "maxlen", "1"},
	{"LPOS", "p", "b", "RANK", "2", "MAXLEN", "4"}, {"LPOS", "p", "a", "RANK"}, {"LPOS", "p", "a", "FOO", "1"}, {"LPOS", "p", "a", "COUNT"},
	{"LPOS", "nokey", "a"}, {"LPOS", "nokey", "a", "COUNT", "1"}, {"LPOS", "nokey", "a", "RANK", "0"}, {"LPOS", "str", "a"},
	{"LPOS", "str", "a", "COUNT", "1"}, {"LPOS", "p"}, {"LPOS", "p", "a", "RANK", "1", "RANK", "2"},
	// LPOP, RPOP.
	{"RPUSH", "q", "1", "2", "3", "4", "5"}, {"LPOP", "q"}, {"RPOP", "q"}, {"LPOP", "q", "0"}, {"LPOP", "q", "1"},
	{"RPOP", "q", "1"}, {"LPOP", "q", "-1"}, {"LPOP", "q", "x"}, {"RPOP", "q", "10"}, {"EXISTS", "q"},
	{"LPOP", "q"}, {"RPOP", "q"}, {"LPOP", "q", "2"}, {"RPOP", "q", "0"}, {"LPOP", "q", "-1"}, {"LPOP", "str"},
	{"RPOP", "str", "1"}, {"LPOP"}, {"LPOP", "q", "1", "2"}, {"RPOP", "q", "1", "2"},
	{"RPUSH", "q", "a", "b", "c"}, {"RPOP", "q", "2"}, {"LPOP", "q", "5"}, {"LPOP", "str", "-1"},
	// LMOVE, RPOPLPUSH.
	{"RPUSH", "m", "1", "2", "3"}, {"LMOVE", "m", "n", "LEFT", "RIGHT"}, {"LMOVE", "m", "n", "right", "left"},
	{"LRANGE", "m", "0", "-1"}, {"LRANGE", "n", "0", "-1"}, {"LMOVE", "m", "m", "LEFT", "RIGHT"}, {"LMOVE", "m", "m", "LEFT", "LEFT"},
	{"LMOVE", "m", "n", "UP", "LEFT"}, {"LMOVE", "m", "n", "LEFT", "DOWN"}, {"LMOVE", "nokey", "n", "LEFT", "LEFT"},
	{"LMOVE", "nokey", "n", "UP", "LEFT"}, {"LMOVE", "m", "str", "LEFT", "LEFT"}, {"LMOVE", "str", "n", "LEFT", "LEFT"},
	{"LMOVE", "nokey", "str", "LEFT", "LEFT"}, {"LMOVE", "m", "n", "LEFT"}, {"RPOPLPUSH", "n", "m"}, {"RPOPLPUSH", "n", "m"},
	{"RPOPLPUSH", "n", "m"}, {"EXISTS", "n"}, {"RPOPLPUSH", "n", "m"}, {"RPOPLPUSH", "m", "str"}, {"RPOPLPUSH", "str", "m"},
	{"RPOPLPUSH", "m"}, {"LRANGE", "m", "0", "-1"}, {"RPOPLPUSH", "m", "m"}, {"LRANGE", "m", "0", "-1"},
	// LMPOP.
	{"RPUSH", "mp1", "a", "b", "c"}, {"RPUSH", "mp2", "d"}, {"LMPOP", "2", "nokey", "mp1", "LEFT"},
	{"LMPOP", "2", "nokey", "mp1", "RIGHT", "COUNT", "10"}, {"LMPOP", "2", "mp1", "mp2", "left", "count", "2"},
	{"LMPOP", "2", "mp1", "mp2", "left"}, {"LMPOP", "1", "nokey", "LEFT"}, {"LMPOP", "0", "a", "LEFT"}, {"LMPOP", "-1", "a", "LEFT"},
	{"LMPOP", "x", "a", "LEFT"}, {"LMPOP", "3", "a", "LEFT"}, {"LMPOP", "100", "a", "LEFT"}, {"LMPOP", "1", "a", "UP"},
	{"LMPOP", "1", "a", "LEFT", "COUNT"}, {"LMPOP", "1", "a", "LEFT", "COUNT", "0"}, {"LMPOP", "1", "a", "LEFT", "COUNT", "-1"},
	{"LMPOP", "1", "a", "LEFT", "COUNT", "x"}, {"LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "2"}, {"LMPOP", "1", "a", "LEFT", "FOO"},
	{"LMPOP", "2", "str", "mp1", "LEFT"}, {"LMPOP", "2", "nokey", "str", "LEFT"}, {"LMPOP", "1", "a"}, {"LMPOP", "1", "a", "b", "LEFT"},
	{"RPUSH", "mp1", "x"}, {"LMPOP", "2", "mp1", "str", "RIGHT"},
	// Blocking commands that need not wait, and their argument errors.
	{"RPUSH", "b1", "a", "b", "c"}, {"BLPOP", "nokey", "b1", "0"}, {"BRPOP", "b1", "nokey", "0"}, {"BLPOP", "b1", "x"},
	{"BLPOP", "b1", "-1"}, {"BLPOP", "b1", "0.5"}, {"BLPOP", "str", "b1", "0"}, {"BLPOP", "b1", "str", "0"},
	{"BLPOP", "b1"}, {"BRPOP", "b1"}, {"RPUSH", "b1", "a", "b", "c"},
	{"BLMOVE", "b1", "b2", "LEFT", "RIGHT", "0"}, {"BLMOVE", "b1", "b2", "UP", "RIGHT", "0"}, {"BLMOVE", "b1", "b2", "LEFT", "UP", "0"},
	{"BLMOVE", "b1", "b2", "LEFT", "RIGHT", "x"}, {"BLMOVE", "b1", "b2", "LEFT", "RIGHT", "-1"}, {"BLMOVE", "b1", "str", "LEFT", "RIGHT", "0"},
	{"BLMOVE", "str", "b2", "LEFT", "RIGHT", "0"}, {"BLMOVE", "b1", "b2", "LEFT", "RIGHT"}, {"BRPOPLPUSH", "b1", "b2", "0"},
	{"BRPOPLPUSH", "b1", "b2", "x"}, {"BRPOPLPUSH", "b1", "b2", "-1"}, {"BRPOPLPUSH", "str", "b2", "0"}, {"BRPOPLPUSH", "b1", "str", "0"},
	{"BRPOPLPUSH", "b1", "b2"}, {"LRANGE", "b2", "0", "-1"},
	{"BLMPOP", "0", "2", "nokey", "b2", "LEFT", "COUNT", "5"}, {"RPUSH", "b2", "z"}, {"BLMPOP", "0", "1", "b2", "RIGHT"}, {"BLMPOP", "x", "1", "b2", "RIGHT"},
	{"BLMPOP", "-1", "1", "b2", "RIGHT"}, {"BLMPOP", "x", "0", "b2", "RIGHT"}, {"BLMPOP", "x", "1", "b2", "UP"},
	{"BLMPOP", "x", "1", "b2", "LEFT", "COUNT", "0"}, {"BLMPOP", "0", "1", "str", "LEFT"}, {"BLMPOP", "0", "1", "b2"},
	{"BLMPOP", "0", "5", "b2", "LEFT"},
	// Transactions: a blocking command that would wait answers at once.
	{"MULTI"}, {"BLPOP", "nokey", "0"}, {"BRPOP", "nokey", "0"}, {"BLMOVE", "nokey", "b2", "LEFT", "LEFT", "0"},
	{"BRPOPLPUSH", "nokey", "b2", "0"}, {"BLMPOP", "0", "1", "nokey", "LEFT"}, {"RPUSH", "nokey", "v"}, {"BLPOP", "nokey", "0"}, {"EXEC"},
	{"MULTI"}, {"LPUSH", "tx", "a"}, {"LPOP", "tx", "x"}, {"LRANGE", "tx", "0", "-1"}, {"EXEC"},
	// Big lists and values.
	{"RPUSH", "big", strings.Repeat("x", 100), strings.Repeat("y", 10000)}, {"LRANGE", "big", "0", "-1"},
	{"OBJECT", "ENCODING", "big"},
}

func TestListCompat(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) { compareListScript(t, proto, listScript) })
	}
}
