package kv

import (
	"strings"
	"testing"
)

func TestCompatZsetScratch(t *testing.T) {
	compareZset(t, [][]string{
		{"ZADD", "z", "1", "a", "2", "b", "1.1", "c", "-inf", "d", "+inf", "e"},
		{"ZSCORE", "z", "c"}, {"ZSCORE", "z", "d"}, {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZADD", "z", "NX", "XX", "1", "a"}, {"ZADD", "z", "GT", "LT", "1", "a"}, {"ZADD", "z", "NX", "GT", "1", "a"},
		{"ZADD", "z", "INCR", "1", "a", "2", "b"}, {"ZADD", "z", "1"}, {"ZADD", "z", "x", "a"}, {"ZADD", "z", "nan", "a"},
		{"ZADD", "z", "INCR", "-inf", "e"}, {"ZINCRBY", "z", "+inf", "d"}, {"ZADD", "z", "XX", "INCR", "1", "zz"},
		{"ZADD", "z", "CH", "GT", "5", "a", "0", "b", "3", "new"}, {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZRANGEBYSCORE", "z", "(1", "+inf", "WITHSCORES", "LIMIT", "1", "2"},
		{"ZREVRANGEBYSCORE", "z", "+inf", "(1", "WITHSCORES", "LIMIT", "0", "-1"},
		{"ZRANGE", "z", "(1", "5", "BYSCORE", "REV"}, {"ZRANGE", "z", "5", "(1", "BYSCORE", "REV", "LIMIT", "1", "1"},
		{"ZRANGE", "z", "0", "1", "LIMIT", "1", "1"}, {"ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"},
		{"ZRANGE", "z", "0", "1", "REV", "REV"}, {"ZRANGEBYSCORE", "z", "0", "1", "REV"}, {"ZRANGE", "z", "a", "b", "BYSCORE"},
		{"ZRANGE", "z", "a", "b", "BYLEX"}, {"ZRANGE", "z", "x", "1"}, {"ZRANGE", "z", "0", "1", "LIMIT", "1"},
		{"ZCOUNT", "z", "-inf", "+inf"}, {"ZCOUNT", "z", "(1", "(2"}, {"ZCOUNT", "z", "", "("}, {"ZCOUNT", "z", "x", "1"},
		{"ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d"}, {"ZLEXCOUNT", "l", "-", "+"}, {"ZLEXCOUNT", "l", "(a", "[c"},
		{"ZLEXCOUNT", "l", "a", "c"}, {"ZLEXCOUNT", "l", "+", "-"}, {"ZLEXCOUNT", "l", "[b", "[b"}, {"ZLEXCOUNT", "l", "-x", "+"},
		{"ZRANGEBYLEX", "l", "(a", "+", "LIMIT", "1", "5"}, {"ZREVRANGEBYLEX", "l", "+", "(a"}, {"ZRANGEBYLEX", "l", "-", "+", "WITHSCORES"},
		{"ZRANK", "z", "a"}, {"ZREVRANK", "z", "a"}, {"ZRANK", "z", "nope"}, {"ZRANK", "nokey", "a"},
		{"ZREVRANGE", "z", "0", "2", "WITHSCORES"}, {"ZREVRANGE", "z", "-2", "-1"}, {"ZRANGE", "z", "5", "1"},
		{"ZRANGESTORE", "dst", "z", "0", "2"}, {"ZRANGE", "dst", "0", "-1", "WITHSCORES"}, {"ZRANGESTORE", "dst", "z", "0", "1", "WITHSCORES"},
		{"ZRANGESTORE", "dst", "nokey", "0", "1"}, {"EXISTS", "dst"},
		{"ZPOPMIN", "z"}, {"ZPOPMAX", "z", "2"}, {"ZPOPMIN", "z", "0"}, {"ZPOPMIN", "z", "-1"}, {"ZPOPMIN", "z", "x"}, {"ZPOPMIN", "z", "1", "2"},
		{"ZPOPMIN", "nokey"}, {"ZPOPMIN", "nokey", "-1"},
		{"ZMSCORE", "z", "a", "nope", "b"}, {"ZMSCORE", "nokey", "a"},
		{"ZREMRANGEBYRANK", "l", "0", "0"}, {"ZREMRANGEBYLEX", "l", "[c", "+"}, {"ZREMRANGEBYSCORE", "l", "-inf", "inf"}, {"EXISTS", "l"},
		{"ZREMRANGEBYRANK", "l", "x", "0"}, {"ZREMRANGEBYSCORE", "l", "x", "0"}, {"ZREMRANGEBYLEX", "l", "x", "0"},
		{"SET", "s", "x"}, {"ZADD", "s", "1", "a"}, {"ZRANGE", "s", "0", "1"}, {"ZSCAN", "s", "0"},
		{"ZSCAN", "z", "0"}, {"ZSCAN", "z", "0", "MATCH", "a*"}, {"ZSCAN", "z", "x"}, {"ZSCAN", "nokey", "0", "COUNT", "0"},
		{"ZRANDMEMBER", "nokey"}, {"ZRANDMEMBER", "nokey", "5"}, {"ZRANDMEMBER", "z", "10", "WITHSCORES"}, {"ZRANDMEMBER", "z", "1", "x"},
		{"ZRANDMEMBER", "z", "-9223372036854775808"}, {"ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES"},
		{"ZADD", "u1", "1", "a", "2", "b"}, {"ZADD", "u2", "3", "b", "4", "c"}, {"ZUNIONSTORE", "o", "2", "u1", "u2", "WEIGHTS", "1", "2"}, {"ZRANGE", "o", "0", "-1", "WITHSCORES"},
		{"ZINTERSTORE", "o", "2", "u1", "u2", "AGGREGATE", "MAX"}, {"ZRANGE", "o", "0", "-1", "WITHSCORES"},
		{"ZINTERSTORE", "o", "0", "u1"}, {"ZINTERSTORE", "o", "3", "u1"}, {"ZUNIONSTORE", "o", "1", "s"}, {"ZUNIONSTORE", "o", "1", "u1", "WEIGHTS", "x"},
		{"ZUNIONSTORE", "o", "1", "u1", "AGGREGATE", "foo"}, {"ZINTERSTORE", "o", "2", "u1", "nokey"}, {"EXISTS", "o"},
		{"HELLO", "3"},
		{"ZADD", "r", "1.5", "a", "2", "b"}, {"ZSCORE", "r", "a"}, {"ZRANGE", "r", "0", "-1", "WITHSCORES"}, {"ZPOPMIN", "r"}, {"ZADD", "r", "1", "a"},
		{"ZPOPMIN", "r", "1"}, {"ZRANDMEMBER", "r", "5", "WITHSCORES"}, {"ZMSCORE", "r", "a", "b"}, {"ZADD", "r", "INCR", "1", "b"}, {"ZADD", "r", "NX", "INCR", "1", "b"},
		{"ZSCAN", "r", "0"}, {"ZRANDMEMBER", "nokey"}, {"ZRANK", "r", "x"}, {"ZPOPMAX", "r", "5"}, {"ZPOPMAX", "r", "5"},
		{"BZPOPMIN", "nokey", "r", "0.01"}, {"ZADD", "r", "1", "a"}, {"BZPOPMIN", "r", "0"}, {"BZPOPMIN", "s", "0"},
	})
}

// compareZset is compareWithRedis, but the replies of HELLO (which carry
// the connection id) are not compared.
func compareZset(t *testing.T, script [][]string) {
	t.Helper()
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	for _, args := range script {
		got, want := ours.do(args...), theirs.do(args...)
		if got != want && !strings.EqualFold(args[0], "hello") {
			t.Errorf("%q: evkv replied %q; Redis %q", args, got, want)
		}
	}
}
