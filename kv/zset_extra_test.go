package kv

import (
	"strconv"
	"testing"
)

func zsetEdgeScript() [][]string {
	script := [][]string{
		{"ZADD", "f", "0.1", "a", "1e17", "b", "1e-5", "c", "-0", "d", "3.0", "e", "1e300", "f", "123456789012345678", "g", "-1.5e-300", "h", "0x10", "i"},
		{"ZRANGE", "f", "0", "-1", "WITHSCORES"}, {"ZSCORE", "f", "d"}, {"ZSCORE", "f", "b"}, {"ZINCRBY", "f", "0.2", "a"},
		{"ZADD", "f", " 1", "x"}, {"ZADD", "f", "1 ", "x"}, {"ZADD", "f", "", "x"}, {"ZADD", "f", "1e400", "x"}, {"ZADD", "f", "inf", "x"}, {"ZADD", "f", "-infinity", "y"},
		{"ZCOUNT", "f", " 1", "inf"}, {"ZCOUNT", "f", "(", "(1e400"}, {"ZCOUNT", "f", "nan", "1"}, {"ZCOUNT", "f", "-inf", "(nan"},
		{"ZRANGEBYSCORE", "f", "-inf", "+inf", "LIMIT", "-1", "5"}, {"ZRANGEBYSCORE", "f", "-inf", "+inf", "LIMIT", "2", "0"},
		{"ZRANGEBYSCORE", "f", "-inf", "+inf", "LIMIT", "2", "-5"}, {"ZRANGEBYSCORE", "f", "-inf", "+inf", "limit", "2", "x"},
		{"ZRANGEBYSCORE", "f", "5", "1"}, {"ZREVRANGEBYSCORE", "f", "1", "5"}, {"ZRANGEBYSCORE", "f", "1", "(1"},
		{"ZRANGE", "f", "-100", "100"}, {"ZRANGE", "f", "-1", "-100"}, {"ZRANGE", "f", "100", "200"}, {"ZREVRANGE", "f", "-3", "-1", "WITHSCORES"},
		{"ZRANGE", "f", "0", "-1", "withscores", "withscores"}, {"ZRANGE", "f", "0", "-1", "BYSCORE", "BYLEX"}, {"ZRANGE", "f", "(1", "+inf", "BYSCORE", "LIMIT", "0", "2", "REV"},
		{"ZRANGE", "f", "+", "-", "BYLEX", "REV", "LIMIT", "0", "3"}, {"ZRANGEBYLEX", "f", "[a", "(c", "LIMIT"},
		{"ZREVRANGEBYLEX", "f", "[a", "[z"}, {"ZRANGEBYLEX", "f", "[z", "[a"}, {"ZRANGEBYLEX", "f", "(a", "(a"}, {"ZRANGEBYLEX", "f", "[a", "[a"},
		{"ZRANGEBYLEX", "f", "-", "-"}, {"ZRANGEBYLEX", "f", "+", "+"}, {"ZRANGEBYLEX", "f", "", "+"}, {"ZRANGEBYLEX", "f", "++", "+"},
		{"ZRANGEBYSCORE", "f", "0", "1", "BYLEX"}, {"ZRANGESTORE", "d", "f", "0", "-1", "REV", "BYSCORE"}, {"ZRANGESTORE", "d", "f", "+inf", "-inf", "REV", "BYSCORE", "LIMIT", "1", "3"},
		{"ZRANGE", "d", "0", "-1", "WITHSCORES"}, {"ZRANGESTORE", "d", "f", "[a", "[c", "BYLEX"}, {"ZRANGE", "d", "0", "-1"},
		{"SET", "str", "v"}, {"ZRANGESTORE", "str", "f", "0", "0"}, {"TYPE", "str"}, {"ZRANGESTORE", "d", "str", "0", "0"},
		{"ZRANGESTORE", "d", "f", "5", "1"}, {"EXISTS", "d"}, {"SET", "str", "v"},
		{"ZADD", "k"}, {"ZADD", "k", "1"}, {"ZADD", "k", "NX", "1", "a", "2"}, {"ZADD", "k", "NX"}, {"ZADD", "k", "CH", "INCR", "1", "a"},
		{"ZADD", "k", "XX", "1", "a"}, {"EXISTS", "k"}, {"ZADD", "k", "XX", "INCR", "1", "a"}, {"ZADD", "k", "GT", "CH", "1", "a"},
		{"ZADD", "k", "LT", "CH", "0", "a", "5", "b"}, {"ZADD", "k", "GT", "INCR", "-1", "a"}, {"ZADD", "k", "LT", "INCR", "-1", "a"},
		{"ZADD", "k", "nx", "incr", "1", "a"}, {"ZADD", "k", "xx", "ch", "0", "a", "7", "b", "8", "c"}, {"ZRANGE", "k", "0", "-1", "WITHSCORES"},
		{"ZADD", "k", "GT", "XX", "CH", "1", "a", "1", "b"}, {"ZINCRBY", "k", "x", "a"}, {"ZINCRBY", "k", "1"}, {"ZINCRBY", "nz", "2.5", "m"},
		{"ZINCRBY", "k", "inf", "a"}, {"ZINCRBY", "k", "-inf", "a"}, {"ZSCORE", "k", "a"},
		{"ZREM", "k"}, {"ZREM", "k", "nope"}, {"ZREM", "k", "a", "a", "b", "nope"}, {"ZREM", "nokey", "a"}, {"ZREM", "str", "a"},
		{"ZCARD", "k"}, {"ZCARD", "nokey"}, {"ZCARD", "str"}, {"ZCARD"}, {"ZSCORE", "k"}, {"ZSCORE", "str", "a"}, {"ZMSCORE", "k"}, {"ZMSCORE", "str", "a"},
		{"ZCOUNT", "str", "0", "1"}, {"ZCOUNT", "nokey", "0", "1"}, {"ZLEXCOUNT", "str", "-", "+"}, {"ZLEXCOUNT", "nokey", "-", "+"},
		{"ZRANK", "str", "a"}, {"ZREVRANK", "nokey", "a"}, {"ZRANK", "k", "a", "WITHSCORE"}, {"ZRANGE", "str", "0", "1"}, {"ZRANGE", "nokey", "0", "1"},
		{"ZRANGEBYSCORE", "nokey", "0", "1"}, {"ZRANGEBYSCORE", "str", "0", "1"}, {"ZRANGEBYSCORE", "str", "x", "1"},
		{"ZPOPMIN", "str"}, {"ZPOPMAX", "str", "0"}, {"ZPOPMAX"}, {"ZREMRANGEBYRANK", "str", "0", "1"}, {"ZREMRANGEBYRANK", "nokey", "0", "1"},
		{"ZREMRANGEBYSCORE", "nokey", "0", "1"}, {"ZREMRANGEBYLEX", "str", "-", "+"}, {"ZRANDMEMBER", "str"}, {"ZRANDMEMBER", "str", "1"},
		{"ZRANDMEMBER", "k", "x"}, {"ZRANDMEMBER", "k", "0"}, {"ZRANDMEMBER", "nokey", "0"}, {"ZRANDMEMBER", "k", "1", "WITHSCORES", "x"},
		{"ZRANDMEMBER", "k", "-4611686018427387905", "WITHSCORES"}, {"ZRANDMEMBER", "k", "4611686018427387904", "withscores"},
		{"ZSCAN", "str", "0"}, {"ZSCAN", "k", "0", "COUNT", "0"}, {"ZSCAN", "k", "0", "COUNT", "x"}, {"ZSCAN", "k", "0", "NOSUCH", "x"}, {"ZSCAN", "k", "0", "MATCH"},
		{"ZSCAN", "k", "-1"}, {"ZSCAN", "k", "18446744073709551616"}, {"ZSCAN", "k", "12345"},
		{"BZPOPMIN", "k", "x"}, {"BZPOPMIN", "k", "-1"}, {"BZPOPMIN", "str", "0"}, {"ZADD", "k", "1", "x"}, {"BZPOPMAX", "k", "nokey", "0"}, {"BZPOPMIN", "nokey", "k", "0.01"}, {"BZPOPMIN", "nokey", "0.01"},
		{"ZPOPMIN", "k", "100"}, {"EXISTS", "k"},
		{"ZREMRANGEBYRANK", "f", "-2", "-1"}, {"ZREMRANGEBYRANK", "f", "5", "1"}, {"ZREMRANGEBYRANK", "f", "100", "200"},
		{"ZREMRANGEBYSCORE", "f", "(0", "1"}, {"ZREMRANGEBYLEX", "f", "(a", "[c"}, {"ZRANGE", "f", "0", "-1", "WITHSCORES"},
		{"ZUNIONSTORE", "o", "2", "f", "nokey", "AGGREGATE", "MIN", "WEIGHTS", "2", "3"}, {"ZRANGE", "o", "0", "-1", "WITHSCORES"},
		{"ZUNIONSTORE", "o", "1", "f", "WEIGHTS", "0"}, {"ZRANGE", "o", "0", "-1", "WITHSCORES"},
		{"ZUNIONSTORE", "o", "x", "f"}, {"ZUNIONSTORE", "o", "-1", "f"}, {"ZUNIONSTORE", "o", "2", "f", "WEIGHTS", "1"}, {"ZUNIONSTORE", "o", "1", "f", "WITHSCORES"},
		{"ZUNIONSTORE", "o", "1", "str"}, {"ZINTERSTORE", "o", "1", "f", "AGGREGATE"}, {"ZUNIONSTORE", "o", "1", "nokey"}, {"EXISTS", "o"},
	}
	// Big sets: skiplist encoding, long members.
	for i := range 140 {
		script = append(script, []string{"ZADD", "big", strconv.Itoa(i % 17), "m" + strconv.Itoa(i)})
	}
	script = append(script, [][]string{
		{"ZCARD", "big"}, {"ZRANGE", "big", "10", "20", "WITHSCORES"}, {"ZRANK", "big", "m77"}, {"ZREVRANK", "big", "m77"},
		{"ZCOUNT", "big", "(3", "7"}, {"ZRANGEBYSCORE", "big", "(3", "7", "LIMIT", "5", "10"}, {"ZREVRANGEBYSCORE", "big", "7", "(3", "LIMIT", "5", "10"},
		{"ZRANDMEMBER", "big", "1000"}, {"ZREMRANGEBYRANK", "big", "50", "60"}, {"ZREMRANGEBYSCORE", "big", "16", "+inf"},
		{"ZPOPMAX", "big", "3"}, {"ZPOPMIN", "big", "3"}, {"ZRANGE", "big", "0", "-1", "WITHSCORES"},
		{"ZADD", "long", "1", string(make([]byte, 65))}, {"ZSCAN", "long", "0"},
		{"ZUNIONSTORE", "o", "2", "big", "long"}, {"ZRANGE", "o", "0", "5"},
	}...)
	return script
}

func TestCompatZsetEdges(t *testing.T) {
	compareZset(t, zsetEdgeScript())
}

func TestCompatZsetEdgesRESP3(t *testing.T) {
	compareZset(t, append([][]string{{"HELLO", "3"}}, zsetEdgeScript()...))
}
