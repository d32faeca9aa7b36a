package kv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evloop/evloop/resp"
)

func TestCompatZsetCommands(t *testing.T) {
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
		{"ZINTERSTORE", "o", "0", "u1"}, {"ZINTERSTORE", "o", "3", "u1"}, {"ZUNIONSTORE", "o", "9223372036854775807", "u1"}, {"ZUNIONSTORE", "o", "1", "s"}, {"ZUNIONSTORE", "o", "1", "u1", "WEIGHTS", "x"},
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
		got, want := doBoth(ours, theirs, args...)
		if strings.EqualFold(args[0], "zscan") {
			got, want = sortScanReply(t, got), sortScanReply(t, want)
		}
		if got != want && !strings.EqualFold(args[0], "hello") {
			t.Errorf("%q: evkv replied %q; Redis %q", args, got, want)
		}
	}
}

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
		{"ZADD", "one", "1.5", "a"}, {"ZRANDMEMBER", "one", "-3", "WITHSCORES"}, {"ZRANDMEMBER", "one", "-2"}, {"ZRANDMEMBER", "one"},
		{"ZRANDMEMBER", "one", "1", "WITHSCORES"}, {"ZRANDMEMBER", "one", "1"},
		{"COPY", "big", "bigcopy"}, {"ZADD", "bigcopy", "100", "new"}, {"ZCARD", "big"}, {"ZRANGE", "bigcopy", "-2", "-1", "WITHSCORES"},
		{"MULTI"}, {"ZADD", "mz", "1", "a"}, {"ZINCRBY", "mz", "x", "a"}, {"ZPOPMIN", "mz"}, {"BZPOPMIN", "mz", "0"}, {"EXEC"},
	}...)
	return script
}

func TestCompatZsetEdges(t *testing.T) {
	compareZset(t, zsetEdgeScript())
}

func TestCompatZsetEdgesRESP3(t *testing.T) {
	compareZset(t, append([][]string{{"HELLO", "3"}}, zsetEdgeScript()...))
}

func TestZsetValue(t *testing.T) {
	z := newZset(nil)
	for i := range 100 {
		z.set([]byte("m"+strconv.Itoa(i)), float64(i)/10)
	}
	if got := z.encoding(); got != "listpack" {
		t.Errorf("encoding = %q; want listpack", got)
	}
	c := z.clone()
	c.remove([]byte("m1"))
	if _, ok := z.score([]byte("m1")); !ok || c.len() != 99 || z.len() != 100 {
		t.Errorf("clone shares state: %d, %d", z.len(), c.len())
	}
	var w resp.Writer
	z.rewrite(&w, []byte("k"))
	b := w.Buf
	rebuilt := newZset(nil)
	for cmds := 0; len(b) > 0; cmds++ {
		v, n, err := resp.Parse(b)
		if err != nil {
			t.Fatalf("rewrite output: %v", err)
		}
		b = b[n:]
		if len(v.Elems) > 2+128 || strings.ToUpper(string(v.Elems[0].Str)) != "ZADD" || string(v.Elems[1].Str) != "k" {
			t.Fatalf("rewrite command %d has %d arguments: %q", cmds, len(v.Elems), v.Elems[0].Str)
		}
		for i := 2; i < len(v.Elems); i += 2 {
			f, ok := parseScore(v.Elems[i].Str)
			if !ok {
				t.Fatalf("bad score %q", v.Elems[i].Str)
			}
			rebuilt.set(v.Elems[i+1].Str, f)
		}
	}
	if rebuilt.len() != z.len() {
		t.Fatalf("rebuilt %d members; want %d", rebuilt.len(), z.len())
	}
	for c := z.tree.first(); c.ok(); c.next() {
		if f, _ := rebuilt.score([]byte(c.member())); f != c.score() {
			t.Errorf("rebuilt %s = %v; want %v", c.member(), f, c.score())
		}
	}
	for i := 100; i < 129; i++ {
		z.set([]byte("m"+strconv.Itoa(i)), 1)
	}
	if got := z.encoding(); got != "skiplist" {
		t.Errorf("encoding of 129 = %q; want skiplist", got)
	}
	z.pop(nil, 100, false)
	if got := z.encoding(); got != "skiplist" {
		t.Errorf("encoding after shrinking = %q; want skiplist", got)
	}
	long := newZset(nil)
	long.set([]byte(strings.Repeat("x", 65)), 1)
	if got := long.encoding(); got != "skiplist" {
		t.Errorf("encoding with a 65-byte member = %q; want skiplist", got)
	}
}

func TestFormatScore(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{1.1, "1.1000000000000001"}, {0.1, "0.10000000000000001"}, {3, "3"}, {-2.5, "-2.5"},
		{1e17, "1e+17"}, {1e16, "10000000000000000"}, {1e-5, "1.0000000000000001e-05"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.Copysign(0, -1), "-0"}, {0, "0"},
		{999999999999999, "999999999999999"}, {-999999999999999, "-999999999999999"}, {1e15, "1000000000000000"},
		{-1e15, "-1000000000000000"}, {123456789, "123456789"}, {-7, "-7"},
	} {
		if got := formatScore(tc.f); got != tc.want {
			t.Errorf("formatScore(%v) = %q; want %q", tc.f, got, tc.want)
		}
	}
	// Integers, written on a shorter path, read as "%.17g" writes them.
	rng := rand.New(rand.NewPCG(5, 6))
	for range 10000 {
		f := math.Trunc(math.Ldexp(rng.Float64(), rng.IntN(60)))
		if rng.IntN(2) == 0 {
			f = -f
		}
		if got, want := formatScore(f), strconv.FormatFloat(f, 'g', 17, 64); got != want {
			t.Fatalf("formatScore(%v) = %q; want %q", f, got, want)
		}
	}
}

func TestZsetGoRedis(t *testing.T) {
	c, ctx := serverAndClient(t)
	if n, err := c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"}).Result(); n != 3 || err != nil {
		t.Fatalf("ZADD = %d, %v; want 3", n, err)
	}
	if n, err := c.ZAddArgs(ctx, "z", redis.ZAddArgs{GT: true, Ch: true, Members: []redis.Z{{Score: 0, Member: "a"}, {Score: 5, Member: "b"}}}).Result(); n != 1 || err != nil {
		t.Errorf("ZADD GT CH = %d, %v; want 1", n, err)
	}
	if f, err := c.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{Members: []redis.Z{{Score: 1.5, Member: "a"}}}).Result(); f != 2.5 || err != nil {
		t.Errorf("ZADD INCR = %v, %v; want 2.5", f, err)
	}
	if err := c.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{NX: true, Members: []redis.Z{{Score: 1, Member: "a"}}}).Err(); err != redis.Nil {
		t.Errorf("ZADD NX INCR on a member = %v; want nil reply", err)
	}
	if err := c.Do(ctx, "ZADD", "z", "NX", "XX", "1", "a").Err(); err == nil || err.Error() != "ERR XX and NX options at the same time are not compatible" {
		t.Errorf("ZADD NX XX = %v", err)
	}
	if f, err := c.ZIncrBy(ctx, "z", 0.5, "c").Result(); f != 3.5 || err != nil {
		t.Errorf("ZINCRBY = %v, %v; want 3.5", f, err)
	}
	c.ZAdd(ctx, "inf", redis.Z{Score: math.Inf(1), Member: "x"})
	if err := c.ZIncrBy(ctx, "inf", math.Inf(-1), "x").Err(); err == nil || err.Error() != "ERR resulting score is not a number (NaN)" {
		t.Errorf("ZINCRBY to NaN = %v", err)
	}
	if n, _ := c.ZCard(ctx, "z").Result(); n != 3 {
		t.Errorf("ZCARD = %d; want 3", n)
	}
	if f, err := c.ZScore(ctx, "z", "b").Result(); f != 5 || err != nil {
		t.Errorf("ZSCORE = %v, %v; want 5", f, err)
	}
	if fs, err := c.ZMScore(ctx, "z", "a", "nope", "c").Result(); err != nil || !slices.Equal(fs, []float64{2.5, 0, 3.5}) {
		t.Errorf("ZMSCORE = %v, %v", fs, err)
	}
	if n, _ := c.ZCount(ctx, "z", "(2.5", "+inf").Result(); n != 2 {
		t.Errorf("ZCOUNT = %d; want 2", n)
	}
	if r, err := c.ZRank(ctx, "z", "c").Result(); r != 1 || err != nil {
		t.Errorf("ZRANK = %d, %v; want 1", r, err)
	}
	if r, err := c.ZRevRank(ctx, "z", "c").Result(); r != 1 || err != nil {
		t.Errorf("ZREVRANK = %d, %v; want 1", r, err)
	}
	if err := c.ZRank(ctx, "z", "nope").Err(); err != redis.Nil {
		t.Errorf("ZRANK of a non-member = %v; want nil", err)
	}
	if zs, err := c.ZRangeWithScores(ctx, "z", 0, -1).Result(); err != nil || len(zs) != 3 || zs[0].Member != "a" || zs[2].Score != 5 {
		t.Errorf("ZRANGE WITHSCORES = %v, %v", zs, err)
	}
	if ms, err := c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: "+inf", Stop: "(2.5", ByScore: true, Rev: true, Count: 1}).Result(); err != nil || !slices.Equal(ms, []string{"b"}) {
		t.Errorf("ZRANGE BYSCORE REV LIMIT = %v, %v", ms, err)
	}
	if ms, _ := c.Do(ctx, "ZRANGEBYSCORE", "z", "3", "5").StringSlice(); !slices.Equal(ms, []string{"c", "b"}) {
		t.Errorf("ZRANGEBYSCORE = %v", ms)
	}
	if ms, _ := c.Do(ctx, "ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "1", "5").StringSlice(); !slices.Equal(ms, []string{"c", "a"}) {
		t.Errorf("ZREVRANGEBYSCORE = %v", ms)
	}
	if ms, _ := c.Do(ctx, "ZREVRANGE", "z", "0", "0").StringSlice(); !slices.Equal(ms, []string{"b"}) {
		t.Errorf("ZREVRANGE = %v", ms)
	}
	if err := c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: 0, Stop: 1, Count: 1}).Err(); err == nil || !strings.Contains(err.Error(), "LIMIT is only supported") {
		t.Errorf("ZRANGE LIMIT by rank = %v", err)
	}
	c.ZAdd(ctx, "lex", redis.Z{Member: "a"}, redis.Z{Member: "b"}, redis.Z{Member: "c"})
	if n, _ := c.ZLexCount(ctx, "lex", "(a", "+").Result(); n != 2 {
		t.Errorf("ZLEXCOUNT = %d; want 2", n)
	}
	if ms, _ := c.Do(ctx, "ZRANGEBYLEX", "lex", "[b", "+").StringSlice(); !slices.Equal(ms, []string{"b", "c"}) {
		t.Errorf("ZRANGEBYLEX = %v", ms)
	}
	if ms, _ := c.Do(ctx, "ZREVRANGEBYLEX", "lex", "(c", "-").StringSlice(); !slices.Equal(ms, []string{"b", "a"}) {
		t.Errorf("ZREVRANGEBYLEX = %v", ms)
	}
	if err := c.ZLexCount(ctx, "lex", "a", "+").Err(); err == nil || err.Error() != errMinMaxLex {
		t.Errorf("ZLEXCOUNT bad range = %v", err)
	}
	if n, err := c.ZRangeStore(ctx, "dst", redis.ZRangeArgs{Key: "z", Start: 0, Stop: 1}).Result(); n != 2 || err != nil {
		t.Errorf("ZRANGESTORE = %d, %v; want 2", n, err)
	}
	if zs, _ := c.ZPopMin(ctx, "dst").Result(); len(zs) != 1 || zs[0].Member != "a" || zs[0].Score != 2.5 {
		t.Errorf("ZPOPMIN = %v", zs)
	}
	if zs, _ := c.ZPopMax(ctx, "dst", 5).Result(); len(zs) != 1 || zs[0].Member != "c" {
		t.Errorf("ZPOPMAX 5 = %v", zs)
	}
	if n, _ := c.Exists(ctx, "dst").Result(); n != 0 {
		t.Errorf("EXISTS of an emptied set = %d; want 0", n)
	}
	if n, _ := c.ZRemRangeByLex(ctx, "lex", "[b", "+").Result(); n != 2 {
		t.Errorf("ZREMRANGEBYLEX = %d; want 2", n)
	}
	if n, _ := c.ZRemRangeByRank(ctx, "lex", 0, -1).Result(); n != 1 {
		t.Errorf("ZREMRANGEBYRANK = %d; want 1", n)
	}
	if n, _ := c.ZRemRangeByScore(ctx, "z", "(3", "3.5").Result(); n != 1 {
		t.Errorf("ZREMRANGEBYSCORE = %d; want 1", n)
	}
	if n, _ := c.ZRem(ctx, "z", "a", "nope").Result(); n != 1 {
		t.Errorf("ZREM = %d; want 1", n)
	}
	if m, err := c.ZRandMember(ctx, "z", 1).Result(); err != nil || !slices.Equal(m, []string{"b"}) {
		t.Errorf("ZRANDMEMBER = %v, %v", m, err)
	}
	if m, _ := c.ZRandMember(ctx, "z", -3).Result(); len(m) != 3 {
		t.Errorf("ZRANDMEMBER -3 = %v; want 3 members", m)
	}
	if keys, cur, err := c.ZScan(ctx, "z", 0, "", 10).Result(); err != nil || cur != 0 || !slices.Equal(keys, []string{"b", "5"}) {
		t.Errorf("ZSCAN = %v, %d, %v", keys, cur, err)
	}
	c.ZAdd(ctx, "z2", redis.Z{Score: 10, Member: "b"}, redis.Z{Score: 1, Member: "x"})
	if n, _ := c.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"z", "z2"}, Weights: []float64{2, 1}}).Result(); n != 2 {
		t.Errorf("ZUNIONSTORE = %d; want 2", n)
	}
	if f, _ := c.ZScore(ctx, "u", "b").Result(); f != 20 {
		t.Errorf("ZUNIONSTORE b = %v; want 20", f)
	}
	if n, _ := c.ZInterStore(ctx, "i", &redis.ZStore{Keys: []string{"z", "z2"}, Aggregate: "MIN"}).Result(); n != 1 {
		t.Errorf("ZINTERSTORE = %d; want 1", n)
	}
	if f, _ := c.ZScore(ctx, "i", "b").Result(); f != 5 {
		t.Errorf("ZINTERSTORE MIN b = %v; want 5", f)
	}
	c.Set(ctx, "s", "x", 0)
	for name, err := range map[string]error{
		"ZADD":    c.ZAdd(ctx, "s", redis.Z{Score: 1, Member: "a"}).Err(),
		"ZRANGE":  c.ZRange(ctx, "s", 0, 1).Err(),
		"ZSCORE":  c.ZScore(ctx, "s", "a").Err(),
		"ZPOPMIN": c.ZPopMin(ctx, "s").Err(),
		"ZSCAN":   c.ZScan(ctx, "s", 0, "", 0).Err(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Errorf("%s on a string = %v; want WRONGTYPE", name, err)
		}
	}
}

func TestZsetRESP3(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := goRedis(t, addr, func(o *redis.Options) { o.Protocol = 3 })
	ctx := context.Background()
	c.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	if zs, err := c.ZRangeWithScores(ctx, "z", 0, -1).Result(); err != nil || len(zs) != 2 || zs[0] != (redis.Z{Score: 1.5, Member: "a"}) {
		t.Errorf("ZRANGE WITHSCORES = %v, %v", zs, err)
	}
	if f, err := c.ZScore(ctx, "z", "a").Result(); f != 1.5 || err != nil {
		t.Errorf("ZSCORE = %v, %v", f, err)
	}
	if zs, err := c.ZPopMax(ctx, "z", 1).Result(); err != nil || len(zs) != 1 || zs[0].Member != "b" {
		t.Errorf("ZPOPMAX 1 = %v, %v", zs, err)
	}
	rc := dialRaw(t, addr)
	rc.do("HELLO", "3")
	if got, want := rc.do("ZSCORE", "z", "a"), ",1.5\r\n"; got != want {
		t.Errorf("ZSCORE = %q; want %q", got, want)
	}
	if got, want := rc.do("ZRANGE", "z", "0", "-1", "WITHSCORES"), "*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n"; got != want {
		t.Errorf("ZRANGE WITHSCORES = %q; want %q", got, want)
	}
	if got, want := rc.do("ZSCORE", "z", "nope"), "_\r\n"; got != want {
		t.Errorf("ZSCORE of a non-member = %q; want %q", got, want)
	}
}

func TestZsetMulti(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := goRedis(t, addr)
	ctx := context.Background()
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"})
		p.ZIncrBy(ctx, "z", 2, "a")
		p.BZPopMin(ctx, 0, "empty")
		p.ZPopMin(ctx, "z")
		return nil
	})
	if !errors.Is(err, redis.Nil) || len(cmds) != 4 {
		t.Fatalf("EXEC = %v, %v; want BZPOPMIN's nil", cmds, err)
	}
	if f := cmds[1].(*redis.FloatCmd).Val(); f != 3 {
		t.Errorf("ZINCRBY in MULTI = %v; want 3", f)
	}
	if zs := cmds[3].(*redis.ZSliceCmd).Val(); len(zs) != 1 || zs[0].Score != 3 {
		t.Errorf("ZPOPMIN in MULTI = %v", zs)
	}

	// A change to a WATCHed sorted set fails the transaction.
	c.ZAdd(ctx, "w", redis.Z{Score: 1, Member: "a"})
	other := goRedis(t, addr)
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		if err := other.ZAdd(ctx, "w", redis.Z{Score: 2, Member: "a"}).Err(); err != nil {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, "w", redis.Z{Score: 3, Member: "b"})
			return nil
		})
		return err
	}, "w")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Errorf("EXEC after a change to a watched key = %v; want TxFailedErr", err)
	}
	// Scores equal to the old ones change nothing: the transaction runs.
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		other.ZAdd(ctx, "w", redis.Z{Score: 2, Member: "a"})
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, "w", redis.Z{Score: 3, Member: "b"})
			return nil
		})
		return err
	}, "w")
	if err != nil {
		t.Errorf("EXEC after a no-op ZADD = %v", err)
	}
}

func TestZsetBlockingPop(t *testing.T) {
	_, addr := startServer(t, Config{})
	ctx := context.Background()
	c := goRedis(t, addr)
	res := make(chan *redis.ZWithKey, 2)
	errs := make(chan error, 2)
	for _, min := range []bool{true, false} {
		go func() {
			bc := goRedis(t, addr)
			var r *redis.ZWithKey
			var err error
			if min {
				r, err = bc.BZPopMin(ctx, 5*time.Second, "a", "b").Result()
			} else {
				r, err = bc.BZPopMax(ctx, 5*time.Second, "b").Result()
			}
			res <- r
			errs <- err
		}()
	}
	// Wait for both to block.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		info, _ := c.Info(ctx, "clients").Result()
		if strings.Contains(info, "blocked_clients:2") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("clients did not block: %s", info)
		}
	}
	c.ZAdd(ctx, "b", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"})
	got := map[string]float64{}
	for range 2 {
		r, err := <-res, <-errs
		if err != nil {
			t.Fatalf("BZPOP: %v", err)
		}
		if r.Key != "b" {
			t.Errorf("BZPOP key = %q; want b", r.Key)
		}
		got[r.Member.(string)] = r.Score
	}
	if got["x"] != 1 || got["y"] != 2 {
		t.Errorf("BZPOPMIN and BZPOPMAX served %v; want x 1 and y 2", got)
	}
	if n, _ := c.Exists(ctx, "b").Result(); n != 0 {
		t.Errorf("EXISTS b = %d; want 0 after both pops", n)
	}
	start := time.Now()
	if err := c.Do(ctx, "BZPOPMIN", "none", "0.05").Err(); err != redis.Nil {
		t.Errorf("BZPOPMIN timeout = %v; want nil", err)
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Errorf("BZPOPMIN returned after %v; want about 50ms", d)
	}
}

// TestZsetAppendOnly checks that the log replays the sorted sets as
// written: ZADD, ZINCRBY, ZPOPMAX, ZRANGESTORE, and a BZPOPMIN served
// late, which is logged as ZPOPMIN. (The rewritten form is checked by
// TestZsetValue.)
func TestZsetAppendOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	s, addr := startServer(t, Config{AppendOnly: true, Dir: dir, AppendFsync: "always"})
	c := goRedis(t, addr)
	want := map[string][]redis.Z{}
	populate := func(prefix string) {
		for i := range 200 {
			c.ZAdd(ctx, prefix+"big", redis.Z{Score: float64(i) / 7, Member: "m" + strconv.Itoa(i)})
		}
		c.ZAdd(ctx, prefix+"small", redis.Z{Score: 1.1, Member: "a"}, redis.Z{Score: math.Inf(-1), Member: "b"}, redis.Z{Score: 3, Member: "c"})
		c.ZIncrBy(ctx, prefix+"small", 0.1, "a")
		c.ZPopMax(ctx, prefix+"small")
		c.ZRangeStore(ctx, prefix+"copy", redis.ZRangeArgs{Key: prefix + "big", Start: 10, Stop: 20})
		bc := goRedis(t, addr)
		done := make(chan error, 1)
		go func() { done <- bc.BZPopMin(ctx, 5*time.Second, prefix+"late").Err() }()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			info, _ := c.Info(ctx, "clients").Result()
			if strings.Contains(info, "blocked_clients:1") || time.Now().After(deadline) {
				break
			}
		}
		c.ZAdd(ctx, prefix+"late", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"})
		if err := <-done; err != nil {
			t.Fatalf("BZPOPMIN: %v", err)
		}
	}
	populate("")
	populate("after:")
	for _, k := range []string{"big", "small", "copy", "late", "after:big", "after:small", "after:copy", "after:late"} {
		want[k] = c.ZRangeWithScores(ctx, k, 0, -1).Val()
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "appendonly.aof")); err == nil {
		t.Logf("log: %d bytes %q", len(b), b[:min(len(b), 300)])
	}
	_, addr2 := startServer(t, Config{AppendOnly: true, Dir: dir})
	c2 := goRedis(t, addr2)
	for k, zs := range want {
		got := c2.ZRangeWithScores(ctx, k, 0, -1).Val()
		if fmt.Sprint(got) != fmt.Sprint(zs) {
			t.Errorf("%s after replay = %v; want %v", k, got, zs)
		}
	}
}

// TestZsetDifferential sends random sorted-set commands to evkv and Redis
// and compares every reply.
func TestZsetDifferential(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(7, uint64(len(proto))))
			script := [][]string{{"HELLO", proto}}
			for range 3000 {
				script = append(script, randomZsetCommand(rng))
			}
			compareZset(t, script)
		})
	}
}

func randomZsetCommand(rng *rand.Rand) []string {
	key := func() string { return "z" + strconv.Itoa(rng.IntN(4)) }
	// Ranges of members are defined only where all scores are equal; in
	// large sets Redis's own answer depends on the skiplist's shape. The
	// "l" keys hold only scores of 0.
	lexKey := func() string { return "l" + strconv.Itoa(rng.IntN(2)) }
	member := func() string {
		if rng.IntN(10) == 0 {
			return strings.Repeat("long", 17) + strconv.Itoa(rng.IntN(3))
		}
		return string(rune('a' + rng.IntN(12)))
	}
	score := func() string {
		switch rng.IntN(12) {
		case 0:
			return "-inf"
		case 1:
			return "+inf"
		case 2:
			return strconv.FormatFloat(rng.Float64()*10-5, 'g', -1, 64)
		case 3:
			return "x"
		}
		return strconv.Itoa(rng.IntN(10) - 3)
	}
	bound := func() string {
		s := score()
		if rng.IntN(3) == 0 {
			s = "(" + s
		}
		return s
	}
	lex := func() string {
		switch rng.IntN(8) {
		case 0:
			return "-"
		case 1:
			return "+"
		case 2:
			return member()
		case 3:
			return "(" + member()
		}
		return "[" + member()
	}
	index := func() string { return strconv.Itoa(rng.IntN(20) - 10) }
	opts := func(choices ...string) []string {
		var out []string
		for _, o := range choices {
			if rng.IntN(3) == 0 {
				out = append(out, o)
			}
		}
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	limit := func() []string {
		if rng.IntN(3) == 0 {
			return []string{"LIMIT", index(), index()}
		}
		return nil
	}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	switch rng.IntN(24) {
	case 0, 1, 2, 3:
		args := cat([]string{"ZADD", key()}, opts("NX", "XX", "GT", "LT", "CH"))
		if rng.IntN(8) == 0 {
			return cat(args, []string{"INCR", score(), member()})
		}
		for range 1 + rng.IntN(5) {
			args = append(args, score(), member())
		}
		return args
	case 4:
		if rng.IntN(2) == 0 {
			args := []string{"ZADD", lexKey()}
			for range 1 + rng.IntN(8) {
				args = append(args, "0", member())
			}
			return args
		}
		return []string{"ZINCRBY", key(), score(), member()}
	case 5:
		return []string{"ZREM", []string{key(), lexKey()}[rng.IntN(2)], member(), member()}
	case 6:
		return []string{"ZCARD", key()}
	case 7:
		return []string{"ZSCORE", key(), member()}
	case 8:
		return []string{"ZMSCORE", key(), member(), member(), member()}
	case 9:
		return []string{"ZCOUNT", key(), bound(), bound()}
	case 10:
		return []string{"ZLEXCOUNT", lexKey(), lex(), lex()}
	case 11:
		return []string{[]string{"ZRANK", "ZREVRANK"}[rng.IntN(2)], key(), member()}
	case 12, 13:
		switch rng.IntN(3) {
		case 0:
			return cat([]string{"ZRANGE", key(), index(), index()}, opts("REV", "WITHSCORES"), limit())
		case 1:
			return cat([]string{"ZRANGE", key(), bound(), bound(), "BYSCORE"}, opts("REV", "WITHSCORES"), limit())
		}
		return cat([]string{"ZRANGE", lexKey(), lex(), lex(), "BYLEX"}, opts("REV", "WITHSCORES"), limit())
	case 14:
		name := []string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"}[rng.IntN(2)]
		return cat([]string{name, key(), bound(), bound()}, opts("WITHSCORES"), limit())
	case 15:
		name := []string{"ZRANGEBYLEX", "ZREVRANGEBYLEX"}[rng.IntN(2)]
		return cat([]string{name, lexKey(), lex(), lex()}, limit())
	case 16:
		return cat([]string{"ZREVRANGE", key(), index(), index()}, opts("WITHSCORES"))
	case 17:
		if rng.IntN(2) == 0 {
			return cat([]string{"ZRANGESTORE", key(), key(), bound(), bound(), "BYSCORE"}, opts("REV"), limit())
		}
		return cat([]string{"ZRANGESTORE", key(), key(), index(), index()}, opts("REV"))
	case 18:
		name := []string{"ZPOPMIN", "ZPOPMAX"}[rng.IntN(2)]
		if rng.IntN(2) == 0 {
			return []string{name, key()}
		}
		return []string{name, key(), strconv.Itoa(rng.IntN(5) - 1)}
	case 19:
		switch rng.IntN(3) {
		case 0:
			return []string{"ZREMRANGEBYRANK", key(), index(), index()}
		case 1:
			return []string{"ZREMRANGEBYSCORE", key(), bound(), bound()}
		}
		return []string{"ZREMRANGEBYLEX", lexKey(), lex(), lex()}
	case 20:
		// Deterministic forms only: a count covering the whole set.
		return cat([]string{"ZRANDMEMBER", key(), strconv.Itoa(200 + rng.IntN(3))}, opts("WITHSCORES"))
	case 21:
		// COUNT covers the whole set: where a partial walk stops is the
		// hash table's business.
		args := []string{"ZSCAN", key(), "0", "COUNT", "1000"}
		if rng.IntN(2) == 0 {
			args = append(args, "MATCH", []string{"*", "[a-e]", "long*", "?"}[rng.IntN(4)])
		}
		return args
	case 22:
		name := []string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD"}[rng.IntN(7)]
		args := []string{name}
		if strings.HasSuffix(name, "STORE") {
			args = append(args, key())
		}
		args = append(args, "2", key(), key())
		switch {
		case name == "ZINTERCARD":
			if rng.IntN(2) == 0 {
				args = append(args, "LIMIT", strconv.Itoa(rng.IntN(4)))
			}
		case strings.HasPrefix(name, "ZDIFF"):
		default:
			if rng.IntN(2) == 0 {
				args = append(args, "WEIGHTS", score(), score())
			}
			if rng.IntN(2) == 0 {
				args = append(args, "AGGREGATE", []string{"SUM", "MIN", "MAX"}[rng.IntN(3)])
			}
		}
		if !strings.HasSuffix(name, "STORE") && name != "ZINTERCARD" && rng.IntN(2) == 0 {
			args = append(args, "WITHSCORES")
		}
		return args
	}
	switch rng.IntN(3) {
	case 0:
		return cat([]string{"ZMPOP", "2", key(), key(), []string{"MIN", "MAX"}[rng.IntN(2)]}, opts("COUNT", strconv.Itoa(rng.IntN(4))))
	case 1:
		return cat([]string{"BZMPOP", "0.01", "2", key(), key(), []string{"MIN", "MAX"}[rng.IntN(2)]}, opts("COUNT", strconv.Itoa(rng.IntN(4))))
	}
	return []string{[]string{"BZPOPMIN", "BZPOPMAX"}[rng.IntN(2)], key(), key(), "0.01"}
}

// sortScanReply sorts the member-score pairs of a ZSCAN reply, whose
// order in a large set is the hash table's.
func sortScanReply(t *testing.T, reply string) string {
	v, _, err := resp.Parse([]byte(reply))
	if err != nil || v.Type != resp.Array || len(v.Elems) != 2 {
		return reply
	}
	var pairs []string
	items := v.Elems[1].Elems
	for i := 0; i+1 < len(items); i += 2 {
		pairs = append(pairs, string(items[i].Str)+"\x00"+string(items[i+1].Str))
	}
	slices.Sort(pairs)
	return fmt.Sprintf("cursor %s: %q", v.Elems[0].Str, pairs)
}

// TestCompatZsetEvents compares the keyspace events of the sorted-set
// commands with Redis's.
func TestCompatZsetEvents(t *testing.T) {
	script := [][]string{
		{"ZADD", "z", "1", "a", "2", "b", "3", "c"}, {"ZADD", "z", "1", "a"}, {"ZADD", "z", "INCR", "1", "a"}, {"ZINCRBY", "z", "1", "b"},
		{"ZREM", "z", "nope"}, {"ZREM", "z", "a"}, {"ZPOPMIN", "z"}, {"ZPOPMAX", "z", "5"},
		{"ZADD", "y", "1", "a", "2", "b", "3", "c", "4", "d"}, {"ZREMRANGEBYRANK", "y", "0", "0"}, {"ZREMRANGEBYSCORE", "y", "2", "2"},
		{"ZREMRANGEBYLEX", "y", "-", "+"}, {"ZADD", "y", "1", "a"}, {"ZRANGESTORE", "d", "y", "0", "-1"}, {"ZRANGESTORE", "d", "y", "5", "6"},
		{"ZUNIONSTORE", "u", "1", "y"}, {"ZINTERSTORE", "u", "2", "y", "nokey"}, {"ZADD", "q", "1", "a"}, {"BZPOPMAX", "q", "0"},
	}
	compareEvents(t, script)
}

func TestCompatZsetArity(t *testing.T) {
	var script [][]string
	for _, name := range []string{"ZADD", "ZINCRBY", "ZREM", "ZCARD", "ZSCORE", "ZMSCORE", "ZCOUNT", "ZLEXCOUNT", "ZRANK", "ZREVRANK",
		"ZRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZREVRANGE", "ZRANGESTORE", "ZPOPMIN", "ZPOPMAX",
		"BZPOPMIN", "BZPOPMAX", "ZREMRANGEBYRANK", "ZREMRANGEBYSCORE", "ZREMRANGEBYLEX", "ZRANDMEMBER", "ZSCAN", "ZUNIONSTORE", "ZINTERSTORE",
		"ZDIFFSTORE", "ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD", "ZMPOP", "BZMPOP"} {
		script = append(script, []string{name}, []string{strings.ToLower(name), "k"}, []string{name, "k", "1", "2", "3", "4", "5", "0.01"})
	}
	compareZset(t, script)
}

func TestZsetScanLarge(t *testing.T) {
	c, ctx := serverAndClient(t)
	want := map[string]bool{}
	for i := range 1000 {
		m := "m" + strconv.Itoa(i)
		want[m] = true
		c.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: m})
	}
	got := map[string]bool{}
	var cursor uint64
	for calls := 0; ; calls++ {
		items, next, err := c.ZScan(ctx, "z", cursor, "m1*", 50).Result()
		if err != nil || calls > 1000 {
			t.Fatalf("ZSCAN: %v after %d calls", err, calls)
		}
		for i := 0; i < len(items); i += 2 {
			got[items[i]] = true
			if f, _ := strconv.ParseFloat(items[i+1], 64); "m"+strconv.Itoa(int(f)) != items[i] {
				t.Errorf("ZSCAN pair %s %s", items[i], items[i+1])
			}
		}
		if calls == 3 {
			c.ZRem(ctx, "z", "m0", "m2", "m3") // deletions during the walk lose nothing else
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	for m := range want {
		if strings.HasPrefix(m, "m1") && !got[m] {
			t.Errorf("ZSCAN missed %s", m)
		}
	}
	for m := range got {
		if !strings.HasPrefix(m, "m1") {
			t.Errorf("ZSCAN MATCH m1* returned %s", m)
		}
	}
}

// TestCompatZsetKeyspaceStats: the commands that read a sorted set count
// keyspace hits and misses, those that write it count none, as Redis's
// lookupKeyRead and lookupKeyWrite, and the changes are counted per
// member added, updated, removed or popped, as Redis counts them.
func TestCompatZsetKeyspaceStats(t *testing.T) {
	compareStatDeltas(t, nil, [][]string{
		{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}, {"ZADD", "z", "1", "a", "5", "b", "6", "e"}, {"ZADD", "z", "XX", "1", "nope"},
		{"ZADD", "none", "XX", "1", "a"}, {"ZINCRBY", "z", "1", "a"}, {"ZINCRBY", "none2", "1", "a"}, {"ZADD", "z", "INCR", "0", "a"},
		{"ZREM", "z", "a", "b", "nope"}, {"ZREM", "none", "a"}, {"ZCARD", "z"}, {"ZCARD", "none"}, {"ZSCORE", "z", "c"}, {"ZSCORE", "none", "a"},
		{"ZMSCORE", "z", "c", "d"}, {"ZCOUNT", "z", "-inf", "inf"}, {"ZLEXCOUNT", "none", "-", "+"}, {"ZRANK", "z", "c"}, {"ZREVRANK", "none", "c"},
		{"ZRANGE", "z", "0", "-1"}, {"ZRANGEBYSCORE", "none", "0", "1"}, {"ZREVRANGE", "z", "0", "1"}, {"ZRANGEBYLEX", "z", "-", "+"},
		{"ZRANGESTORE", "dst", "z", "0", "-1"}, {"ZRANGESTORE", "dst", "none", "0", "-1"}, {"ZRANDMEMBER", "z"}, {"ZRANDMEMBER", "none", "2"},
		{"ZSCAN", "z", "0"}, {"ZSCAN", "none", "0"}, {"ZADD", "r", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"},
		{"ZREMRANGEBYRANK", "r", "0", "1"}, {"ZREMRANGEBYSCORE", "r", "3", "4"}, {"ZREMRANGEBYLEX", "r", "-", "+"}, {"ZREMRANGEBYRANK", "none", "0", "1"},
		{"ZADD", "p", "1", "a", "2", "b", "3", "c"}, {"ZPOPMIN", "p", "2"}, {"ZPOPMAX", "p"}, {"ZPOPMIN", "none"}, {"BZPOPMIN", "none", "z", "0"},
		{"ZUNIONSTORE", "u", "2", "z", "none"}, {"ZINTERSTORE", "u", "2", "z", "none"},
	})
}
