package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/evloop/evloop/resp"
)

// zsetOpsScript exercises ZUNION, ZINTER, ZDIFF, their STORE forms and
// ZINTERCARD: sets as inputs, WEIGHTS and AGGREGATE, infinities whose sum
// or product with a weight of 0 is NaN (0 in Redis), wrong types, missing
// keys, numkeys of 0, negative, too large and not a number, options not
// taken by the command, and empty results deleting the destination.
func zsetOpsScript() [][]string {
	script := [][]string{
		{"ZADD", "a", "1", "x", "2", "y", "3", "z"}, {"ZADD", "b", "10", "y", "20", "z", "30", "w"}, {"SADD", "s", "y", "w", "q"},
		{"SET", "str", "v"}, {"ZADD", "i", "inf", "x", "-inf", "y"}, {"ZADD", "neg", "-0", "m"},
		{"ZUNION", "2", "a", "b", "WITHSCORES"}, {"ZUNION", "2", "a", "b"}, {"ZUNION", "2", "a", "b", "weights", "2", "3", "aggregate", "max", "WITHSCORES"},
		{"ZUNION", "2", "a", "b", "AGGREGATE", "MIN", "WITHSCORES"}, {"ZUNION", "2", "a", "b", "WEIGHTS", "2", "WITHSCORES"},
		{"ZUNION", "2", "a", "b", "WEIGHTS", "2", "3", "4"}, {"ZUNION", "0", "a"}, {"ZUNION", "-1", "a"}, {"ZUNION", "x", "a"},
		{"ZUNION", "3", "a", "b"}, {"ZUNION", "9223372036854775807", "a"}, {"ZUNION", "9223372036854775808", "a"},
		{"ZUNION", "2", "a", "str"}, {"ZUNION", "2", "str", "nokey"}, {"ZUNION", "2", "nokey", "str"}, {"ZUNION", "2", "a", "s", "WITHSCORES"},
		{"ZUNION", "1", "a", "WITHSCORES", "WITHSCORES"}, {"ZUNION", "1", "a", "AGGREGATE"}, {"ZUNION", "1", "a", "AGGREGATE", "foo"},
		{"ZUNION", "1", "a", "WEIGHTS", "nan"}, {"ZUNION", "1", "a", "WEIGHTS", "x"}, {"ZUNION", "1", "a", "WEIGHTS", "inf", "WITHSCORES"},
		{"ZUNION", "2", "i", "a", "WEIGHTS", "0", "1", "WITHSCORES"}, {"ZUNION", "2", "i", "i", "WITHSCORES"},
		{"ZUNION", "2", "i", "i", "WEIGHTS", "1", "-1", "WITHSCORES"}, {"ZUNION", "2", "i", "i", "WEIGHTS", "1", "-1", "AGGREGATE", "MIN", "WITHSCORES"},
		{"ZUNION", "2", "i", "i", "WEIGHTS", "0", "1", "AGGREGATE", "MAX", "WITHSCORES"}, {"ZUNION", "1", "neg", "WITHSCORES"},
		{"ZUNION", "1", "nokey"}, {"ZUNION", "1", "nokey", "WITHSCORES"}, {"ZUNION", "2", "a", "b", "LIMIT", "1"},
		{"ZINTER", "2", "a", "b", "WITHSCORES"}, {"ZINTER", "2", "a", "b", "AGGREGATE", "MAX", "WEIGHTS", "-1", "0.5", "WITHSCORES"},
		{"ZINTER", "2", "i", "i", "WITHSCORES", "AGGREGATE", "MIN"}, {"ZINTER", "2", "i", "a", "WEIGHTS", "0", "1", "WITHSCORES", "AGGREGATE", "MAX"},
		{"ZINTER", "2", "i", "i", "WEIGHTS", "1", "-1", "WITHSCORES"}, {"ZINTER", "2", "i", "i", "WEIGHTS", "0", "0", "WITHSCORES"},
		{"ZINTER", "1", "nokey"}, {"ZINTER", "2", "a", "nokey", "WITHSCORES"}, {"ZINTER", "2", "b", "s", "WITHSCORES"}, {"ZINTER", "2", "s", "s"},
		{"ZINTER", "2", "a", "str"}, {"ZINTER", "0", "a"}, {"ZINTER", "2", "a"},
		{"ZDIFF", "2", "a", "b", "WITHSCORES"}, {"ZDIFF", "2", "a", "b", "WEIGHTS", "1", "2"}, {"ZDIFF", "2", "a", "b", "AGGREGATE", "SUM"},
		{"ZDIFF", "1", "a", "WITHSCORES"}, {"ZDIFF", "2", "a", "a"}, {"ZDIFF", "2", "nokey", "a"}, {"ZDIFF", "2", "a", "nokey", "WITHSCORES"},
		{"ZDIFF", "2", "a", "s", "WITHSCORES"}, {"ZDIFF", "2", "s", "a", "WITHSCORES"}, {"ZDIFF", "3", "b", "a", "s"}, {"ZDIFF", "2", "a", "str"},
		{"ZDIFF", "2", "str", "a"}, {"ZDIFF", "0", "a"}, {"ZDIFF", "x", "a"}, {"ZDIFF", "1", "neg", "WITHSCORES"},
		{"ZDIFFSTORE", "d", "2", "a", "b"}, {"ZRANGE", "d", "0", "-1", "WITHSCORES"}, {"OBJECT", "ENCODING", "d"}, {"ZDIFFSTORE", "d", "2", "a", "a"},
		{"EXISTS", "d"}, {"ZDIFFSTORE", "d", "2", "a", "b", "WITHSCORES"}, {"ZDIFFSTORE", "str2", "1", "a"}, {"SET", "str2", "v"},
		{"ZDIFFSTORE", "str2", "1", "a"}, {"TYPE", "str2"}, {"ZDIFFSTORE", "d", "1", "str"}, {"ZDIFFSTORE", "d", "0", "a"},
		{"ZDIFFSTORE", "d", "2", "a"}, {"ZDIFFSTORE", "d", "1", "nokey"}, {"ZDIFFSTORE", "a2", "1", "a"}, {"ZDIFFSTORE", "a2", "2", "a2", "b"},
		{"ZRANGE", "a2", "0", "-1", "WITHSCORES"}, {"ZDIFFSTORE", "n2", "1", "neg"}, {"ZRANGE", "n2", "0", "-1", "WITHSCORES"},
		{"ZINTERCARD", "2", "a", "b"}, {"ZINTERCARD", "2", "a", "b", "LIMIT", "1"}, {"ZINTERCARD", "2", "a", "b", "LIMIT", "0"},
		{"ZINTERCARD", "2", "a", "b", "LIMIT", "5"}, {"ZINTERCARD", "2", "a", "b", "LIMIT", "-1"}, {"ZINTERCARD", "2", "a", "b", "LIMIT", "x"},
		{"ZINTERCARD", "2", "a", "b", "LIMIT"}, {"ZINTERCARD", "2", "a", "b", "LIMIT", "1", "LIMIT", "2"}, {"ZINTERCARD", "2", "a", "b", "WITHSCORES"},
		{"ZINTERCARD", "2", "a", "b", "WEIGHTS", "1", "1"}, {"ZINTERCARD", "2", "a", "b", "AGGREGATE", "MIN"}, {"ZINTERCARD", "0", "a"},
		{"ZINTERCARD", "1", "nokey"}, {"ZINTERCARD", "2", "a", "s"}, {"ZINTERCARD", "2", "s", "s"}, {"ZINTERCARD", "x", "a"},
		{"ZINTERCARD", "3", "a", "b"}, {"ZINTERCARD", "2", "a", "str"}, {"ZINTERCARD", "2", "nokey", "str"},
		{"ZUNIONSTORE", "o", "1", "a", "WITHSCORES"}, {"ZINTERSTORE", "o", "1", "a", "LIMIT", "1"},
		{"ZUNIONSTORE", "o", "2", "i", "i", "WEIGHTS", "1", "-1"}, {"ZRANGE", "o", "0", "-1", "WITHSCORES"},
		{"ZINTERSTORE", "o", "2", "a", "b", "WEIGHTS", "1", "inf"}, {"ZRANGE", "o", "0", "-1", "WITHSCORES"},
		{"MULTI"}, {"ZUNION", "2", "a", "b"}, {"ZDIFFSTORE", "m", "2", "b", "a"}, {"ZINTERCARD", "1", "m"}, {"ZINTER", "0", "a"}, {"EXEC"},
	}
	// Large inputs: the result stored as a skiplist past 128 members or a
	// member past 64 bytes, as a listpack otherwise.
	big := []string{"ZADD", "big"}
	for i := range 200 {
		big = append(big, strconv.Itoa(i%13), "m"+strconv.Itoa(i))
	}
	script = append(script, big, []string{"ZADD", "long", "1", strings.Repeat("l", 65), "2", "m1"})
	for _, dst := range []string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"} {
		script = append(script,
			[]string{dst, "o", "2", "big", "long"}, []string{"OBJECT", "ENCODING", "o"}, []string{"ZRANGE", "o", "0", "3", "WITHSCORES"},
			[]string{dst, "o", "2", "long", "a"}, []string{"OBJECT", "ENCODING", "o"}, []string{"ZCARD", "o"})
	}
	return append(script, []string{"ZUNION", "2", "big", "long", "WITHSCORES"}, []string{"ZINTER", "2", "big", "big", "WITHSCORES"},
		[]string{"ZDIFF", "2", "big", "a"}, []string{"ZINTERCARD", "2", "big", "big", "LIMIT", "150"})
}

func TestCompatZsetOps(t *testing.T) {
	compareZset(t, zsetOpsScript())
}

func TestCompatZsetOpsRESP3(t *testing.T) {
	compareZset(t, append([][]string{{"HELLO", "3"}}, zsetOpsScript()...))
}

// TestCompatZsetOpsEvents: the STORE forms publish their own event, or
// del when the result is empty and the destination existed; the others
// publish none.
func TestCompatZsetOpsEvents(t *testing.T) {
	compareEvents(t, [][]string{
		{"ZADD", "a", "1", "x", "2", "y"}, {"ZADD", "b", "3", "y"}, {"SADD", "s", "x"},
		{"ZUNION", "2", "a", "b"}, {"ZINTER", "2", "a", "b"}, {"ZDIFF", "2", "a", "b"}, {"ZINTERCARD", "2", "a", "s"},
		{"ZDIFFSTORE", "d", "2", "a", "b"}, {"ZDIFFSTORE", "d", "2", "a", "s"}, {"ZDIFFSTORE", "d", "2", "a", "a"},
		{"ZDIFFSTORE", "d", "2", "a", "a"}, {"ZDIFFSTORE", "s", "1", "b"}, {"ZUNIONSTORE", "u", "2", "a", "s"},
		{"ZINTERSTORE", "u", "2", "a", "nokey"}, {"ZDIFFSTORE", "d", "1", "nokey"},
	})
}

// compareStatDeltas runs setup, then script, on one connection to evkv and one
// to Redis, and fails unless the keyspace hits and misses and the changes
// (rdb_changes_since_last_save) that script makes are the same.
func compareStatDeltas(t *testing.T, setup, script [][]string) {
	t.Helper()
	counts := func(rc *rawConn) [3]int {
		var out [3]int
		for _, line := range strings.Split(rc.do("INFO", "stats")+rc.do("INFO", "persistence"), "\r\n") {
			k, v, _ := strings.Cut(line, ":")
			n, _ := strconv.Atoi(v)
			switch k {
			case "keyspace_hits":
				out[0] = n
			case "keyspace_misses":
				out[1] = n
			case "rdb_changes_since_last_save":
				out[2] = n
			}
		}
		return out
	}
	_, addr := startServer(t, Config{})
	var deltas [2][3]int
	for i, a := range []string{addr, redisServer(t)} {
		rc := dialRaw(t, a)
		for _, args := range setup {
			rc.do(args...)
		}
		before := counts(rc)
		for _, args := range script {
			rc.do(args...)
		}
		after := counts(rc)
		for j := range after {
			deltas[i][j] = after[j] - before[j]
		}
	}
	if deltas[0] != deltas[1] {
		t.Errorf("keyspace hits, misses, changes: evkv %v; Redis %v", deltas[0], deltas[1])
	}
}

// TestCompatZsetOpsKeyspaceStats: each input key counts as a keyspace hit
// or miss, as Redis looks them up for reading, up to the first of the
// wrong type, in the STORE forms too; a STORE counts one change.
func TestCompatZsetOpsKeyspaceStats(t *testing.T) {
	compareStatDeltas(t, [][]string{{"ZADD", "a", "1", "x"}, {"ZADD", "b", "2", "x"}, {"SADD", "s", "x"}, {"SET", "str", "v"}},
		[][]string{
			{"ZUNION", "3", "a", "nokey", "s"}, {"ZINTER", "2", "nokey", "b", "WITHSCORES"}, {"ZDIFF", "3", "a", "str", "nokey"},
			{"ZINTERCARD", "2", "a", "b", "LIMIT", "1"}, {"ZDIFFSTORE", "d", "2", "a", "nokey"}, {"ZDIFFSTORE", "d", "2", "a", "b"},
			{"ZDIFFSTORE", "d", "1", "nokey"}, {"ZUNIONSTORE", "u", "2", "a", "b"}, {"ZINTERSTORE", "u", "1", "str"}, {"ZUNION", "x", "a"},
		})
}

func TestZsetOpsGoRedis(t *testing.T) {
	c, ctx := serverAndClient(t)
	c.ZAdd(ctx, "a", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"}, redis.Z{Score: 3, Member: "z"})
	c.ZAdd(ctx, "b", redis.Z{Score: 10, Member: "y"}, redis.Z{Score: 20, Member: "z"}, redis.Z{Score: 30, Member: "w"})
	if ms, err := c.ZUnion(ctx, redis.ZStore{Keys: []string{"a", "b"}}).Result(); err != nil || !slices.Equal(ms, []string{"x", "y", "z", "w"}) {
		t.Errorf("ZUNION = %v, %v; want [x y z w]", ms, err)
	}
	zs, err := c.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"a", "b"}, Weights: []float64{2, 1}, Aggregate: "MIN"}).Result()
	if want := []redis.Z{{Score: 2, Member: "x"}, {Score: 4, Member: "y"}, {Score: 6, Member: "z"}, {Score: 30, Member: "w"}}; err != nil || !slices.Equal(zs, want) {
		t.Errorf("ZUNION WEIGHTS 2 1 AGGREGATE MIN WITHSCORES = %v, %v; want %v", zs, err, want)
	}
	if ms, err := c.ZInter(ctx, &redis.ZStore{Keys: []string{"a", "b"}}).Result(); err != nil || !slices.Equal(ms, []string{"y", "z"}) {
		t.Errorf("ZINTER = %v, %v; want [y z]", ms, err)
	}
	zs, err = c.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{"a", "b"}, Aggregate: "MAX"}).Result()
	if want := []redis.Z{{Score: 10, Member: "y"}, {Score: 20, Member: "z"}}; err != nil || !slices.Equal(zs, want) {
		t.Errorf("ZINTER AGGREGATE MAX WITHSCORES = %v, %v; want %v", zs, err, want)
	}
	if n, err := c.ZInterCard(ctx, 0, "a", "b").Result(); n != 2 || err != nil {
		t.Errorf("ZINTERCARD = %d, %v; want 2", n, err)
	}
	if n, err := c.ZInterCard(ctx, 1, "a", "b").Result(); n != 1 || err != nil {
		t.Errorf("ZINTERCARD LIMIT 1 = %d, %v; want 1", n, err)
	}
	if ms, err := c.ZDiff(ctx, "b", "a").Result(); err != nil || !slices.Equal(ms, []string{"w"}) {
		t.Errorf("ZDIFF = %v, %v; want [w]", ms, err)
	}
	if zs, err := c.ZDiffWithScores(ctx, "a", "b").Result(); err != nil || !slices.Equal(zs, []redis.Z{{Score: 1, Member: "x"}}) {
		t.Errorf("ZDIFF WITHSCORES = %v, %v; want [{1 x}]", zs, err)
	}
	if n, err := c.ZDiffStore(ctx, "d", "a", "b").Result(); n != 1 || err != nil {
		t.Errorf("ZDIFFSTORE = %d, %v; want 1", n, err)
	}
	if zs := c.ZRangeWithScores(ctx, "d", 0, -1).Val(); !slices.Equal(zs, []redis.Z{{Score: 1, Member: "x"}}) {
		t.Errorf("ZRANGE of ZDIFFSTORE's destination = %v; want [{1 x}]", zs)
	}
	if n, err := c.ZDiffStore(ctx, "d", "a", "a").Result(); n != 0 || err != nil || c.Exists(ctx, "d").Val() != 0 {
		t.Errorf("ZDIFFSTORE of an empty result = %d, %v; want 0 and the destination deleted", n, err)
	}
	c.Set(ctx, "str", "v", 0)
	if err := c.ZInterCard(ctx, 0, "a", "str").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Errorf("ZINTERCARD of a string = %v; want WRONGTYPE", err)
	}
	if err := c.Do(ctx, "ZINTERCARD", "1", "a", "LIMIT", "-1").Err(); err == nil || err.Error() != "ERR LIMIT can't be negative" {
		t.Errorf("ZINTERCARD LIMIT -1 = %v", err)
	}
}

// TestZsetOpsWatch: ZDIFFSTORE fails the transaction of a client WATCHing
// its destination, as the other STORE forms do, and ZMPOP and BZMPOP of a
// key they pop from; the forms that reply with their result change
// nothing, nor does a pop that finds nothing.
func TestZsetOpsWatch(t *testing.T) {
	_, addr := startServer(t, Config{})
	c, other := goRedis(t, addr), goRedis(t, addr)
	ctx := context.Background()
	c.ZAdd(ctx, "a", redis.Z{Score: 1, Member: "x"})
	for _, tc := range []struct {
		args []any
		fail bool
	}{
		{[]any{"ZUNION", "1", "a"}, false}, {[]any{"ZINTER", "1", "a"}, false}, {[]any{"ZDIFF", "1", "a"}, false},
		{[]any{"ZINTERCARD", "1", "a"}, false}, {[]any{"ZDIFFSTORE", "w", "1", "a"}, true},
		{[]any{"ZDIFFSTORE", "w", "1", "nokey"}, true}, {[]any{"ZDIFFSTORE", "w", "1", "nokey"}, false},
		{[]any{"ZMPOP", "1", "w", "MIN"}, false}, {[]any{"ZADD", "w", "1", "a", "2", "b"}, true}, {[]any{"ZMPOP", "1", "w", "MIN"}, true},
		{[]any{"BZMPOP", "0", "1", "w", "MAX"}, true}, {[]any{"BZMPOP", "0.01", "1", "w", "MIN"}, false},
	} {
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			if err := other.Do(ctx, tc.args...).Err(); err != nil && err != redis.Nil {
				return err
			}
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Ping(ctx)
				return nil
			})
			return err
		}, "w")
		if failed := errors.Is(err, redis.TxFailedErr); failed != tc.fail || (err != nil && !failed) {
			t.Errorf("EXEC after %v on a watched key = %v; want failed %v", tc.args, err, tc.fail)
		}
	}
}

// TestCompatZsetCommandInfo compares COMMAND INFO's name, arity, flags,
// first key, last key, step and ACL categories for the sorted-set
// commands with Redis's, and COMMAND DOCS's since and group. (Their key
// specs' searches are TestCompatCommandInfoAll's.)
func TestCompatZsetCommandInfo(t *testing.T) {
	names := []string{"zunion", "zinter", "zdiff", "zdiffstore", "zintercard", "zunionstore", "zinterstore", "zmpop", "bzmpop", "bzpopmin"}
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	for _, name := range names {
		var info, docs [2]string
		for i, rc := range []*rawConn{ours, theirs} {
			v, _, err := resp.Parse([]byte(rc.do("COMMAND", "INFO", name)))
			if err != nil || len(v.Elems) != 1 || len(v.Elems[0].Elems) < 7 {
				t.Fatalf("COMMAND INFO %s = %v, %v", name, v, err)
			}
			info[i] = fmt.Sprint(valueText(v.Elems[0].Elems[:7]))
			d, _, err := resp.Parse([]byte(rc.do("COMMAND", "DOCS", name)))
			if err != nil || len(d.Elems) != 2 {
				t.Fatalf("COMMAND DOCS %s = %v, %v", name, d, err)
			}
			fields := d.Elems[1].Elems
			for j := 0; j+1 < len(fields); j += 2 {
				if k := string(fields[j].Str); k == "since" || k == "group" {
					docs[i] += k + "=" + string(fields[j+1].Str) + " "
				}
			}
		}
		if info[0] != info[1] {
			t.Errorf("COMMAND INFO %s: evkv %s; Redis %s", name, info[0], info[1])
		}
		if docs[0] != docs[1] {
			t.Errorf("COMMAND DOCS %s: evkv %s; Redis %s", name, docs[0], docs[1])
		}
	}
}

// valueText returns the strings and integers of vs, those of nested
// aggregates sorted, as a set's are unordered.
func valueText(vs []resp.Value) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		switch {
		case v.Elems != nil:
			inner := valueText(v.Elems)
			slices.Sort(inner)
			out = append(out, fmt.Sprint(inner))
		case v.Str != nil:
			out = append(out, string(v.Str))
		default:
			out = append(out, strconv.FormatInt(v.Int, 10))
		}
	}
	return out
}
