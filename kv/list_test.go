package kv

import (
	"context"
	"fmt"
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

// compareListScript runs script against evkv and Redis as compareWithRedis
// does, after HELLO proto (whose replies, naming each server, are not
// compared) when proto is 3. A run of up to 100 commands that do not
// block goes to each server in one write, which it serves in order as it
// would one at a time; a blocking command goes alone.
func compareListScript(t *testing.T, proto int, script [][]string) {
	t.Helper()
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	if proto == 3 {
		ours.do("HELLO", "3")
		theirs.do("HELLO", "3")
	}
	for len(script) > 0 {
		n := 0
		for n < min(len(script), 100) && !listBlocking[strings.ToUpper(script[n][0])] {
			n++
		}
		n = max(n, 1)
		batch := script[:n]
		script = script[n:]
		ours.sendTogether(batch...)
		theirs.sendTogether(batch...)
		for _, args := range batch {
			if testing.Verbose() {
				t.Logf("%q", args)
			}
			got, want := ours.read(), theirs.read()
			if got != want {
				t.Errorf("RESP%d %q: evkv replied %q; Redis %q", proto, args, got, want)
			}
		}
	}
}

// listBlocking are the list commands that may block their client.
var listBlocking = map[string]bool{"BLPOP": true, "BRPOP": true, "BRPOPLPUSH": true, "BLMOVE": true, "BLMPOP": true}

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
	{"LREM", "r", "0", "zz"}, {"RPUSH", "r", "c", "c"}, {"LREM", "r", "-9223372036854775808", "c"}, {"LREM", "r", "x", "a"}, {"LREM", "nokey", "0", "a"}, {"LREM", "nokey", "x", "a"},
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
	// A numkeys that names every argument after it leaves no LEFT|RIGHT:
	// a syntax error (Redis's where_idx >= argc), the connection kept.
	{"LMPOP", "2", "mp1", "LEFT"}, {"LMPOP", "9223372036854775807", "mp1", "LEFT"},
	{"BLMPOP", "0.1", "2", "mp1", "LEFT"}, {"BLMPOP", "0", "9223372036854775807", "mp1", "LEFT"},
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

func TestListGoRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			_, addr := startServer(t, Config{})
			c := goRedis(t, addr, func(o *redis.Options) { o.Protocol = proto })
			ctx := context.Background()
			check := func(name string, got, want any, err error) {
				t.Helper()
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s = %v, %v; want %v", name, got, err, want)
				}
			}
			n, err := c.RPush(ctx, "l", "a", "b", "c").Result()
			check("RPUSH", n, 3, err)
			n, err = c.LPush(ctx, "l", "z").Result()
			check("LPUSH", n, 4, err)
			n, err = c.LPushX(ctx, "none", "x").Result()
			check("LPUSHX none", n, 0, err)
			n, err = c.RPushX(ctx, "l", "d").Result()
			check("RPUSHX", n, 5, err)
			r, err := c.LRange(ctx, "l", 0, -1).Result()
			check("LRANGE", r, []string{"z", "a", "b", "c", "d"}, err)
			n, err = c.LLen(ctx, "l").Result()
			check("LLEN", n, 5, err)
			v, err := c.LIndex(ctx, "l", -2).Result()
			check("LINDEX", v, "c", err)
			if _, err := c.LIndex(ctx, "l", 99).Result(); err != redis.Nil {
				t.Errorf("LINDEX out of range: err %v; want redis.Nil", err)
			}
			check("LSET", c.LSet(ctx, "l", 1, "A").Val(), "OK", nil)
			if err := c.LSet(ctx, "l", 99, "x").Err(); err == nil || err.Error() != "ERR index out of range" {
				t.Errorf("LSET out of range: %v", err)
			}
			n, err = c.LInsertBefore(ctx, "l", "b", "b0").Result()
			check("LINSERT", n, 6, err)
			n, err = c.LInsertAfter(ctx, "l", "nope", "x").Result()
			check("LINSERT missing pivot", n, -1, err)
			n, err = c.LPos(ctx, "l", "c", redis.LPosArgs{}).Result()
			check("LPOS", n, 4, err)
			ns, err := c.LPosCount(ctx, "l", "A", 0, redis.LPosArgs{Rank: -1}).Result()
			check("LPOS COUNT", ns, []int64{1}, err)
			n, err = c.LRem(ctx, "l", 0, "b0").Result()
			check("LREM", n, 1, err)
			check("LTRIM", c.LTrim(ctx, "l", 1, -1).Val(), "OK", nil)
			v, err = c.LPop(ctx, "l").Result()
			check("LPOP", v, "A", err)
			v, err = c.RPop(ctx, "l").Result()
			check("RPOP", v, "d", err)
			r, err = c.LPopCount(ctx, "l", 5).Result()
			check("LPOP count", r, []string{"b", "c"}, err)
			if _, err := c.LPop(ctx, "l").Result(); err != redis.Nil {
				t.Errorf("LPOP empty: err %v; want redis.Nil", err)
			}
			if _, err := c.RPopCount(ctx, "l", 2).Result(); err != redis.Nil {
				t.Errorf("RPOP count empty: err %v; want redis.Nil", err)
			}
			c.RPush(ctx, "src", "1", "2", "3")
			v, err = c.LMove(ctx, "src", "dst", "LEFT", "RIGHT").Result()
			check("LMOVE", v, "1", err)
			v, err = c.Do(ctx, "RPOPLPUSH", "src", "dst").Text()
			check("RPOPLPUSH", v, "3", err)
			r, err = c.LRange(ctx, "dst", 0, -1).Result()
			check("LRANGE dst", r, []string{"3", "1"}, err)
			key, vals, err := c.LMPop(ctx, "right", 10, "none", "dst").Result()
			check("LMPOP", fmt.Sprint(key, " ", vals), "dst [1 3]", err)
			kv, err := c.BLPop(ctx, 0, "none", "src").Result()
			check("BLPOP", kv, []string{"src", "2"}, err)
			c.RPush(ctx, "src", "x", "y")
			kv, err = c.BRPop(ctx, time.Second, "src").Result()
			check("BRPOP", kv, []string{"src", "y"}, err)
			v, err = c.BLMove(ctx, "src", "dst", "LEFT", "LEFT", 0).Result()
			check("BLMOVE", v, "x", err)
			v, err = c.Do(ctx, "BRPOPLPUSH", "dst", "src", "0").Text()
			check("BRPOPLPUSH", v, "x", err)
			key, vals, err = c.BLMPop(ctx, 0, "left", 3, "src").Result()
			check("BLMPOP", fmt.Sprint(key, " ", vals), "src [x]", err)
			// go-redis rounds timeouts up to a second: give them as text.
			for _, args := range [][]any{
				{"BLPOP", "none", "0.05"}, {"BRPOPLPUSH", "none", "dst", "0.05"}, {"BLMPOP", "0.05", "1", "none", "LEFT"},
			} {
				if v, err := c.Do(ctx, args...).Result(); err != redis.Nil {
					t.Errorf("%v = %v, %v; want redis.Nil", args, v, err)
				}
			}
			c.Set(ctx, "str", "v", 0)
			for name, err := range map[string]error{
				"LPUSH": c.LPush(ctx, "str", "a").Err(), "LRANGE": c.LRange(ctx, "str", 0, 1).Err(),
				"LPOP": c.LPop(ctx, "str").Err(), "BLPOP": c.BLPop(ctx, 0, "str").Err(),
				"LMOVE": c.LMove(ctx, "str", "l", "LEFT", "LEFT").Err(),
			} {
				if err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
					t.Errorf("%s on a string: err %v; want WRONGTYPE", name, err)
				}
			}
		})
	}
}

func TestListTransaction(t *testing.T) {
	c, ctx := serverAndClient(t)
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, "l", "a", "b")
		p.BLPop(ctx, 0, "none")
		p.BLMove(ctx, "none", "l", "LEFT", "LEFT", 0)
		p.BLPop(ctx, 0, "l")
		p.LRange(ctx, "l", 0, -1)
		return nil
	})
	if err != redis.Nil {
		t.Fatalf("EXEC: %v; want redis.Nil from the BLPOP that would wait", err)
	}
	if got := cmds[1].(*redis.StringSliceCmd).Err(); got != redis.Nil {
		t.Errorf("BLPOP in MULTI = %v; want nil reply", got)
	}
	if got := cmds[2].(*redis.StringCmd).Err(); got != redis.Nil {
		t.Errorf("BLMOVE in MULTI = %v; want nil reply", got)
	}
	if got := cmds[3].(*redis.StringSliceCmd).Val(); !slices.Equal(got, []string{"l", "a"}) {
		t.Errorf("BLPOP in MULTI = %v; want [l a]", got)
	}
	if got := cmds[4].(*redis.StringSliceCmd).Val(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("LRANGE in MULTI = %v; want [b]", got)
	}

	// A list WATCHed fails the transaction when a pop changes it.
	other := goRedis(t, c.Options().Addr)
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		other.LPop(ctx, "l")
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.RPush(ctx, "l", "x")
			return nil
		})
		return err
	}, "l")
	if err != redis.TxFailedErr {
		t.Errorf("WATCH then LPOP: EXEC err %v; want %v", err, redis.TxFailedErr)
	}
}

// listWaitBlocked waits until n clients are blocked.
func listWaitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	want := "blocked_clients:" + strconv.Itoa(n) + "\r"
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := c.Info(context.Background(), "clients").Result()
		if err == nil && strings.Contains(info, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("INFO clients = %q, %v; want %s", info, err, want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBlockingPops(t *testing.T) {
	_, addr := startServer(t, Config{})
	ctx := context.Background()
	c := goRedis(t, addr)

	t.Run("push wakes BLPOP", func(t *testing.T) {
		blocked := goRedis(t, addr)
		got := make(chan []string, 1)
		go func() { got <- blocked.BLPop(ctx, 0, "none", "k").Val() }()
		listWaitBlocked(t, c, 1)
		c.RPush(ctx, "k", "v1", "v2")
		if r := <-got; !slices.Equal(r, []string{"k", "v1"}) {
			t.Errorf("BLPOP = %v; want [k v1]", r)
		}
		if r := c.LRange(ctx, "k", 0, -1).Val(); !slices.Equal(r, []string{"v2"}) {
			t.Errorf("LRANGE = %v; want [v2]", r)
		}
		c.Del(ctx, "k")
	})

	t.Run("first come first served", func(t *testing.T) {
		var chans []chan []string
		for i := range 3 {
			cl := goRedis(t, addr)
			ch := make(chan []string, 1)
			chans = append(chans, ch)
			go func() { ch <- cl.BRPop(ctx, 0, "fifo").Val() }()
			listWaitBlocked(t, c, i+1)
		}
		c.LPush(ctx, "fifo", "1", "2", "3")
		for i, ch := range chans {
			if r := <-ch; !slices.Equal(r, []string{"fifo", strconv.Itoa(i + 1)}) {
				t.Errorf("client %d: BRPOP = %v; want [fifo %d]", i, r, i+1)
			}
		}
		if n := c.Exists(ctx, "fifo").Val(); n != 0 {
			t.Errorf("EXISTS fifo = %d; want 0", n)
		}
	})

	t.Run("only as many as there are items", func(t *testing.T) {
		a, b := goRedis(t, addr), goRedis(t, addr)
		ga, gb := make(chan []string, 1), make(chan []string, 1)
		go func() { ga <- a.BLPop(ctx, 0, "few").Val() }()
		listWaitBlocked(t, c, 1)
		go func() { gb <- b.BLPop(ctx, 0, "few").Val() }()
		listWaitBlocked(t, c, 2)
		c.RPush(ctx, "few", "only")
		if r := <-ga; !slices.Equal(r, []string{"few", "only"}) {
			t.Errorf("first BLPOP = %v; want [few only]", r)
		}
		listWaitBlocked(t, c, 1)
		c.RPush(ctx, "few", "next")
		if r := <-gb; !slices.Equal(r, []string{"few", "next"}) {
			t.Errorf("second BLPOP = %v; want [few next]", r)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		r, err := c.Do(ctx, "BLPOP", "none", "0.1").Result()
		if err != redis.Nil || time.Since(start) < 100*time.Millisecond {
			t.Errorf("BLPOP 0.1 = %v, %v after %v; want nil after 100ms", r, err, time.Since(start))
		}
		// Redis 7.0 answers every blocked list command with a null array
		// when its time runs out, BLMOVE too.
		rc := dialRaw(t, addr)
		if got := rc.do("BLMOVE", "none", "x", "LEFT", "LEFT", "0.05"); got != "*-1\r\n" {
			t.Errorf("BLMOVE timeout = %q; want a null array", got)
		}
		if got := rc.do("BLMPOP", "0.05", "1", "none", "LEFT"); got != "*-1\r\n" {
			t.Errorf("BLMPOP timeout = %q; want a null array", got)
		}
		rc.do("HELLO", "3")
		if got := rc.do("BRPOP", "none", "0.05"); got != "_\r\n" {
			t.Errorf("BRPOP timeout, RESP3 = %q; want _", got)
		}
	})

	t.Run("closed connection", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("BLPOP", "gone", "0")
		listWaitBlocked(t, c, 1)
		rc.c.Close()
		listWaitBlocked(t, c, 0)
		c.RPush(ctx, "gone", "v")
		if n := c.LLen(ctx, "gone").Val(); n != 1 {
			t.Errorf("LLEN after the blocked client left = %d; want 1", n)
		}
		c.Del(ctx, "gone")
	})

	t.Run("CLIENT UNBLOCK", func(t *testing.T) {
		rc := dialRaw(t, addr)
		id := strings.TrimSuffix(strings.TrimPrefix(rc.do("CLIENT", "ID"), ":"), "\r\n")
		rc.send("BLPOP", "nokey", "0")
		listWaitBlocked(t, c, 1)
		if n := c.ClientUnblock(ctx, listMustInt(t, id)).Val(); n != 1 {
			t.Errorf("CLIENT UNBLOCK = %d; want 1", n)
		}
		if got := rc.read(); got != "*-1\r\n" {
			t.Errorf("BLPOP after CLIENT UNBLOCK = %q; want *-1", got)
		}
		rc.send("BLMOVE", "nokey", "d", "LEFT", "LEFT", "0")
		listWaitBlocked(t, c, 1)
		if n := c.ClientUnblockWithError(ctx, listMustInt(t, id)).Val(); n != 1 {
			t.Errorf("CLIENT UNBLOCK ERROR = %d; want 1", n)
		}
		if got := rc.read(); got != "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n" {
			t.Errorf("BLMOVE after CLIENT UNBLOCK ERROR = %q", got)
		}
		if got := rc.do("PING"); got != "+PONG\r\n" {
			t.Errorf("PING after unblocking = %q", got)
		}
	})

	t.Run("pipelined after a blocked command", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("BLPOP", "pipe", "0")
		rc.send("LLEN", "pipe")
		listWaitBlocked(t, c, 1)
		c.RPush(ctx, "pipe", "a", "b")
		if got := rc.read(); got != "*2\r\n$4\r\npipe\r\n$1\r\na\r\n" {
			t.Errorf("BLPOP = %q", got)
		}
		if got := rc.read(); got != ":1\r\n" {
			t.Errorf("LLEN after BLPOP = %q; want :1", got)
		}
		c.Del(ctx, "pipe")
	})

	t.Run("BLMOVE and BLMPOP wake", func(t *testing.T) {
		a, b := goRedis(t, addr), goRedis(t, addr)
		ga := make(chan string, 1)
		go func() { ga <- a.BLMove(ctx, "msrc", "mdst", "RIGHT", "LEFT", 0).Val() }()
		listWaitBlocked(t, c, 1)
		gb := make(chan string, 1)
		go func() {
			k, v, err := b.BLMPop(ctx, 0, "right", 2, "none", "mdst").Result()
			gb <- fmt.Sprint(k, " ", v, " ", err)
		}()
		listWaitBlocked(t, c, 2)
		c.RPush(ctx, "msrc", "x", "y")
		if r := <-ga; r != "y" {
			t.Errorf("BLMOVE = %q; want y", r)
		}
		// The move created mdst, which wakes the BLMPOP.
		if r := <-gb; r != "mdst [y] <nil>" {
			t.Errorf("BLMPOP = %q; want mdst [y]", r)
		}
		if r := c.LRange(ctx, "msrc", 0, -1).Val(); !slices.Equal(r, []string{"x"}) {
			t.Errorf("LRANGE msrc = %v; want [x]", r)
		}
		c.Del(ctx, "msrc")
	})

	t.Run("BLMOVE to a key of another type", func(t *testing.T) {
		a := goRedis(t, addr)
		ga := make(chan error, 1)
		go func() { ga <- a.Do(ctx, "BRPOPLPUSH", "wsrc", "wstr", "0").Err() }()
		listWaitBlocked(t, c, 1)
		c.Set(ctx, "wstr", "v", 0)
		c.RPush(ctx, "wsrc", "x")
		if err := <-ga; err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Errorf("BRPOPLPUSH = %v; want WRONGTYPE", err)
		}
		if n := c.LLen(ctx, "wsrc").Val(); n != 1 {
			t.Errorf("LLEN wsrc = %d; want 1", n)
		}
		c.Del(ctx, "wsrc", "wstr")
	})

	t.Run("transaction that pushes and pops", func(t *testing.T) {
		a := goRedis(t, addr)
		ga := make(chan []string, 1)
		go func() { ga <- a.BLPop(ctx, 0, "txk").Val() }()
		listWaitBlocked(t, c, 1)
		c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.RPush(ctx, "txk", "a")
			p.LPop(ctx, "txk")
			return nil
		})
		// The list was empty again when the transaction ended.
		listWaitBlocked(t, c, 1)
		c.Set(ctx, "txk", "str", 0)
		c.Del(ctx, "txk")
		c.RPush(ctx, "txk", "b")
		if r := <-ga; !slices.Equal(r, []string{"txk", "b"}) {
			t.Errorf("BLPOP = %v; want [txk b]", r)
		}
	})

	t.Run("keys served in the order they received data", func(t *testing.T) {
		a := goRedis(t, addr)
		ga := make(chan []string, 1)
		go func() { ga <- a.BLPop(ctx, 0, "ord2", "ord1").Val() }()
		listWaitBlocked(t, c, 1)
		c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.RPush(ctx, "ord1", "first")
			p.RPush(ctx, "ord2", "second")
			return nil
		})
		if r := <-ga; !slices.Equal(r, []string{"ord1", "first"}) {
			t.Errorf("BLPOP = %v; want [ord1 first]", r)
		}
		c.Del(ctx, "ord2")
	})

	t.Run("RENAME wakes", func(t *testing.T) {
		a := goRedis(t, addr)
		ga := make(chan []string, 1)
		go func() { ga <- a.BLPop(ctx, 0, "renamed").Val() }()
		listWaitBlocked(t, c, 1)
		c.RPush(ctx, "orig", "v")
		c.Rename(ctx, "orig", "renamed")
		if r := <-ga; !slices.Equal(r, []string{"renamed", "v"}) {
			t.Errorf("BLPOP = %v; want [renamed v]", r)
		}
	})
}

func listMustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("ParseInt(%q): %v", s, err)
	}
	return n
}

// randomListCommand returns a random list command on a few keys, with
// arguments good and bad.
func randomListCommand(r *rand.Rand) []string {
	keys := []string{"l1", "l2", "l3", "str", "none"}
	elems := []string{"a", "b", "c", "a", "b", "1", "-1", ""}
	key := func() string { return keys[r.IntN(len(keys))] }
	elem := func() string { return elems[r.IntN(len(elems))] }
	index := func() string {
		switch r.IntN(12) {
		case 0:
			return "x"
		case 1:
			return "9223372036854775807"
		case 2:
			return "-9223372036854775808"
		}
		return strconv.Itoa(r.IntN(14) - 7)
	}
	side := func() string { return []string{"LEFT", "RIGHT", "left", "right", "up"}[r.IntN(5)] }
	elemsN := func(args []string) []string {
		for range r.IntN(4) + 1 {
			args = append(args, elem())
		}
		return args
	}
	timeout := func() string { return []string{"0.01", "0.01", "0.01", "-1", "x"}[r.IntN(5)] }
	count := func() string { return []string{"0", "1", "2", "5", "-1", "x"}[r.IntN(6)] }
	switch r.IntN(26) {
	case 0, 1:
		return elemsN([]string{"LPUSH", key()})
	case 2, 3:
		return elemsN([]string{"RPUSH", key()})
	case 4:
		return elemsN([]string{[]string{"LPUSHX", "RPUSHX"}[r.IntN(2)], key()})
	case 5, 6:
		args := []string{[]string{"LPOP", "RPOP"}[r.IntN(2)], key()}
		if r.IntN(2) == 0 {
			args = append(args, count())
		}
		return args
	case 7:
		return []string{"LLEN", key()}
	case 8:
		return []string{"LINDEX", key(), index()}
	case 9, 10:
		return []string{"LRANGE", key(), index(), index()}
	case 11:
		return []string{"LSET", key(), index(), elem()}
	case 12:
		return []string{"LINSERT", key(), []string{"BEFORE", "AFTER", "after", "x"}[r.IntN(4)], elem(), elem()}
	case 13:
		return []string{"LREM", key(), index(), elem()}
	case 14:
		return []string{"LTRIM", key(), index(), index()}
	case 15, 16:
		args := []string{"LPOS", key(), elem()}
		for range r.IntN(4) {
			switch r.IntN(3) {
			case 0:
				args = append(args, "RANK", []string{"1", "2", "-1", "-2", "0", "3"}[r.IntN(6)])
			case 1:
				args = append(args, "COUNT", count())
			case 2:
				args = append(args, "MAXLEN", count())
			}
		}
		return args
	case 17:
		return []string{"LMOVE", key(), key(), side(), side()}
	case 18:
		return []string{"RPOPLPUSH", key(), key()}
	case 19, 20:
		n := r.IntN(3) + 1
		args := []string{"LMPOP", strconv.Itoa(n)}
		for range n {
			args = append(args, key())
		}
		args = append(args, side())
		if r.IntN(2) == 0 {
			args = append(args, "COUNT", count())
		}
		return args
	case 21:
		return append([]string{[]string{"BLPOP", "BRPOP"}[r.IntN(2)], key(), key()}, timeout())
	case 22:
		if r.IntN(2) == 0 {
			return []string{"BRPOPLPUSH", key(), key(), timeout()}
		}
		return []string{"BLMOVE", key(), key(), side(), side(), timeout()}
	case 23:
		return []string{"BLMPOP", timeout(), "2", key(), key(), side(), "COUNT", count()}
	case 24:
		if r.IntN(2) == 0 {
			return []string{"SET", "str", elem()}
		}
		return []string{"DEL", key()}
	default:
		return []string{"LRANGE", key(), "0", "-1"}
	}
}

func TestListDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	script := make([][]string, 3000)
	for i := range script {
		script[i] = randomListCommand(r)
	}
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			t.Parallel()
			compareListScript(t, proto, script)
		})
	}
}

// TestListDeque checks the packed list against a slice through random
// operations that grow and drain it at both ends and change its middle,
// with items of every size class: empty, short, and longer than a node.
func TestListDeque(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	l := newList()
	var model []string
	item := func(step int) string {
		switch r.IntN(40) {
		case 0:
			return ""
		case 1:
			return strings.Repeat(strconv.Itoa(step%10), listNodeBytes+r.IntN(3)-1)
		case 2:
			return strings.Repeat("m", r.IntN(3000))
		}
		return strconv.Itoa(step)
	}
	for step := range 20000 {
		v := item(step)
		switch op := r.IntN(11); {
		case op < 3 || (op < 5 && len(model) < 50):
			l.pushFront([]byte(v))
			model = slices.Insert(model, 0, v)
		case op < 6:
			l.pushBack([]byte(v))
			model = append(model, v)
		case op < 7 && len(model) > 0:
			if got := l.popFront(); string(got) != model[0] {
				t.Fatalf("step %d: popFront = %.20q; want %.20q", step, got, model[0])
			}
			model = model[1:]
		case op < 8 && len(model) > 0:
			if got := l.popBack(); string(got) != model[len(model)-1] {
				t.Fatalf("step %d: popBack = %.20q; want %.20q", step, got, model[len(model)-1])
			}
			model = model[:len(model)-1]
		case op < 9:
			i := r.IntN(len(model) + 1)
			l.insert(i, []byte(v))
			model = slices.Insert(model, i, v)
		case op < 10 && len(model) > 0:
			i := r.IntN(len(model))
			if r.IntN(2) == 0 {
				v = strings.Repeat("s", len(model[i])) // the same length: written in place
			}
			l.set(i, []byte(v))
			model[i] = v
		case len(model) > 0:
			switch r.IntN(3) {
			case 0:
				left := r.IntN(len(model) + 1)
				right := r.IntN(len(model) - left + 1)
				l.trim(left, right)
				model = model[left : len(model)-right]
			case 1:
				v := model[r.IntN(len(model))]
				count := int64(r.IntN(5) - 2)
				want := listRemoveModel(model, v, count)
				if got := l.remove([]byte(v), count); got != len(model)-len(want) {
					t.Fatalf("step %d: remove(%.20q, %d) = %d; want %d", step, v, count, got, len(model)-len(want))
				}
				model = want
			default:
				for range len(model) {
					l.popBack()
				}
				model = model[:0]
			}
		}
		checkListShape(t, step, l, len(model))
		if step%97 == 0 {
			checkListItems(t, step, l, model)
			if c := l.clone(); c.len() != l.len() || (c.len() > 0 && string(c.at(c.len()-1)) != model[len(model)-1]) {
				t.Fatalf("step %d: clone differs", step)
			}
		}
	}
}

// checkListItems compares the list's items, read forwards and backwards,
// with model.
func checkListItems(t *testing.T, step int, l *list, model []string) {
	t.Helper()
	for i, v := range model {
		if got := l.at(i); string(got) != v {
			t.Fatalf("step %d: item %d = %.20q; want %.20q", step, i, got, v)
		}
	}
	for i := len(model) - 1; i >= 0; i-- {
		if got := l.at(i); string(got) != model[i] {
			t.Fatalf("step %d: item %d read backwards = %.20q; want %.20q", step, i, got, model[i])
		}
	}
}

// checkListShape checks a list's length and representation: a ring of
// nodes whose size is a power of two, more than a quarter full above 4
// places, nil outside the nodes in use; each node holding at least one
// item, a packed one within the node limits, its offsets in order and in
// its buffer, a long item alone.
func checkListShape(t *testing.T, step int, l *list, want int) {
	t.Helper()
	if l.len() != want {
		t.Fatalf("step %d: len %d; want %d", step, l.len(), want)
	}
	if c := len(l.nodes); c&(c-1) != 0 || l.count > c || (c > 4 && 4*l.count < c) {
		t.Fatalf("step %d: %d nodes in a ring of %d", step, l.count, c)
	}
	n := 0
	for i := range l.nodes {
		nd := l.nodes[(l.head+i)&(len(l.nodes)-1)]
		if (nd != nil) != (i < l.count) {
			t.Fatalf("step %d: ring place %d of %d (count %d) holds %v", step, i, len(l.nodes), l.count, nd)
		}
		if nd == nil {
			continue
		}
		if nd.size() < 1 {
			t.Fatalf("step %d: node %d is empty", step, i)
		}
		n += nd.size()
		if !nd.packed() {
			if len(nd.data) <= listNodeBytes {
				t.Fatalf("step %d: node %d holds an item of %d bytes alone", step, i, len(nd.data))
			}
			continue
		}
		if nd.size() > listNodeItems || nd.used() > listNodeBytes || len(nd.data) > 2*listNodeBytes ||
			nd.lo < 0 || nd.hi >= len(nd.offs) || int(nd.offs[nd.hi]) > len(nd.data) ||
			!offsSorted(nd.offs[nd.lo:nd.hi+1]) {
			t.Fatalf("step %d: node %d: items %d..%d of %d offsets, %d bytes in %d, offsets %v", step, i,
				nd.lo, nd.hi, len(nd.offs), nd.used(), len(nd.data), nd.offs[nd.lo:nd.hi+1])
		}
	}
	if n != l.len() {
		t.Fatalf("step %d: nodes hold %d items; len is %d", step, n, l.len())
	}
}

// offsSorted reports whether offs is in order. It reads a copy on its
// stack, whose reads the race detector does not instrument.
func offsSorted(offs []uint16) bool {
	var a [listNodeItems + 1]uint16
	n := copy(a[:], offs)
	for i := 1; i < n; i++ {
		if a[i] < a[i-1] {
			return false
		}
	}
	return n == len(offs)
}

// TestListNodes grows lists past many nodes and back, at either end and in
// the middle, against a slice.
func TestListNodes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	l := newList()
	var model []string
	step, maxNodes := 0, 0
	check := func() {
		checkListShape(t, step, l, len(model))
		maxNodes = max(maxNodes, l.count)
		if step%211 == 0 || len(model) < 3 {
			checkListItems(t, step, l, model)
		}
		step++
	}
	for round := range 3 {
		for len(model) < 5*listNodeItems+round*300 {
			v := strconv.Itoa(step)
			switch r.IntN(8) {
			case 0, 1, 2:
				l.pushFront([]byte(v))
				model = slices.Insert(model, 0, v)
			case 3, 4, 5:
				l.pushBack([]byte(v))
				model = append(model, v)
			case 6:
				i := r.IntN(len(model) + 1)
				l.insert(i, []byte(v))
				model = slices.Insert(model, i, v)
			default:
				if len(model) > 0 {
					i := r.IntN(len(model))
					l.set(i, []byte(v))
					model[i] = v
				}
			}
			check()
		}
		if c := l.clone(); c.len() != len(model) || string(c.at(len(model)/2)) != model[len(model)/2] {
			t.Fatalf("step %d: clone differs", step)
		}
		for len(model) > 0 {
			switch r.IntN(8) {
			case 0, 1, 2:
				if got := l.popFront(); string(got) != model[0] {
					t.Fatalf("step %d: popFront = %q; want %q", step, got, model[0])
				}
				model = model[1:]
			case 3, 4, 5:
				if got := l.popBack(); string(got) != model[len(model)-1] {
					t.Fatalf("step %d: popBack = %q; want %q", step, got, model[len(model)-1])
				}
				model = model[:len(model)-1]
			case 6:
				left := r.IntN(min(len(model), 2500) + 1)
				right := r.IntN(min(len(model)-left, 2500) + 1)
				l.trim(left, right)
				model = model[left : len(model)-right]
			default:
				v := model[r.IntN(len(model))]
				want := listRemoveModel(model, v, 1)
				if got := l.remove([]byte(v), 1); got != len(model)-len(want) {
					t.Fatalf("step %d: remove(%q, 1) = %d; want %d", step, v, got, len(model)-len(want))
				}
				model = want
			}
			check()
		}
	}
	if maxNodes < 5 {
		t.Fatalf("the lists reached %d nodes; want at least 5", maxNodes)
	}
}

func listRemoveModel(items []string, v string, count int64) []string {
	out := slices.Clone(items)
	removed := int64(0)
	if count >= 0 {
		for i := 0; i < len(out); {
			if out[i] == v && (count == 0 || removed < count) {
				out = slices.Delete(out, i, i+1)
				removed++
			} else {
				i++
			}
		}
		return out
	}
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] == v && removed < -count {
			out = slices.Delete(out, i, i+1)
			removed++
		}
	}
	return out
}

func TestListRewrite(t *testing.T) {
	l := newList()
	for i := range 130 {
		l.pushBack([]byte(strconv.Itoa(i)))
	}
	var w resp.Writer
	l.rewrite(&w, []byte("k"))
	var got []string
	for b := w.Buf; len(b) > 0; {
		v, n, err := resp.Parse(b)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		b = b[n:]
		if len(v.Elems) < 3 || string(v.Elems[0].Str) != "RPUSH" || string(v.Elems[1].Str) != "k" || len(v.Elems) > 66 {
			t.Fatalf("rewrite wrote %v; want RPUSH k and at most 64 items", v)
		}
		for _, a := range v.Elems[2:] {
			got = append(got, string(a.Str))
		}
	}
	if len(got) != 130 || got[0] != "0" || got[129] != "129" {
		t.Errorf("rewrite items %d, %q..%q; want 130, 0..129", len(got), got[0], got[len(got)-1])
	}
}

func TestListCopyIsDeep(t *testing.T) {
	c, ctx := serverAndClient(t)
	c.RPush(ctx, "a", "1", "2")
	if n := c.Copy(ctx, "a", "b", 0, false).Val(); n != 1 {
		t.Fatalf("COPY = %d; want 1", n)
	}
	c.RPush(ctx, "a", "3")
	c.LSet(ctx, "b", 0, "x")
	if got := c.LRange(ctx, "a", 0, -1).Val(); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Errorf("LRANGE a = %v; want [1 2 3]", got)
	}
	if got := c.LRange(ctx, "b", 0, -1).Val(); !slices.Equal(got, []string{"x", "2"}) {
		t.Errorf("LRANGE b = %v; want [x 2]", got)
	}
}

// TestListAppendOnly checks what the log records for the list commands
// (blocking pops as plain pops) by replaying it, before and after a
// rewrite.
func TestListAppendOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := Config{AppendOnly: true, AppendFsync: "always", Dir: dir}
	ctx := context.Background()
	// Database 1: the core's rewrite (aof.go, startRewrite's pos: -1)
	// skips database 0.
	goRedis := func(t *testing.T, addr string) *redis.Client {
		return goRedis(t, addr, func(o *redis.Options) { o.DB = 1 })
	}
	want := map[string][]string{}
	func() {
		s, addr := startServer(t, cfg)
		c := goRedis(t, addr)
		c.RPush(ctx, "a", "1", "2", "3", "4", "5")
		c.LPop(ctx, "a")
		c.LMPop(ctx, "right", 2, "none", "a")
		c.BLPop(ctx, 0, "a")
		blocked := goRedis(t, addr)
		done := make(chan struct{})
		go func() { blocked.BLMove(ctx, "src", "dst", "LEFT", "RIGHT", 0); close(done) }()
		listWaitBlocked(t, c, 1)
		c.RPush(ctx, "src", "x", "y")
		<-done
		for i := range 200 {
			c.LPush(ctx, "big", strconv.Itoa(i))
		}
		c.LTrim(ctx, "big", 10, -10)
		c.LRem(ctx, "big", 1, "100")
		c.LInsert(ctx, "big", "before", "50", "ins")
		for _, k := range []string{"a", "src", "dst", "big"} {
			want[k] = c.LRange(ctx, k, 0, -1).Val()
		}
		if err := s.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	}()
	log, err := os.ReadFile(filepath.Join(dir, "appendonly.aof"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"BLPOP", "BLMOVE", "LMPOP"} {
		if strings.Contains(strings.ToUpper(string(log)), bad) {
			t.Errorf("the log records %s; want it as a plain pop", bad)
		}
	}
	check := func(when string, c *redis.Client) {
		t.Helper()
		for k, v := range want {
			if got := c.LRange(ctx, k, 0, -1).Val(); !slices.Equal(got, v) {
				t.Errorf("%s, LRANGE %s = %v; want %v", when, k, got, v)
			}
		}
	}
	s, addr := startServer(t, cfg)
	c := goRedis(t, addr)
	check("after replay", c)
	if err := c.BgRewriteAOF(ctx).Err(); err != nil {
		t.Fatalf("BGREWRITEAOF: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_rewrite_in_progress:0") {
		if time.Now().After(deadline) {
			t.Fatal("the rewrite did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	_, addr = startServer(t, cfg)
	check("after the rewrite", goRedis(t, addr))
}

// TestListEventsCompat compares the keyspace events the list commands
// publish, in order, with Redis's.
func TestListEventsCompat(t *testing.T) {
	script := [][]string{
		{"RPUSH", "l", "a", "b", "c", "d", "e"}, {"LPUSH", "l", "z"}, {"LPUSHX", "none", "x"}, {"RPUSHX", "l", "f"},
		{"LPOP", "l"}, {"RPOP", "l", "2"}, {"LPOP", "l", "0"}, {"LSET", "l", "0", "A"}, {"LINSERT", "l", "BEFORE", "b", "x"},
		{"LINSERT", "l", "BEFORE", "nope", "x"}, {"LREM", "l", "0", "x"}, {"LREM", "l", "0", "nope"}, {"LTRIM", "l", "0", "-1"},
		{"LMOVE", "l", "m", "LEFT", "RIGHT"}, {"RPOPLPUSH", "l", "l"}, {"LMPOP", "2", "none", "l", "RIGHT", "COUNT", "1"},
		{"BLPOP", "l", "0"}, {"BRPOPLPUSH", "m", "n", "0"}, {"BLMOVE", "l", "n", "RIGHT", "LEFT", "0"},
		{"BLMPOP", "0", "1", "n", "LEFT", "COUNT", "9"}, {"RPUSH", "t", "1", "2"}, {"LTRIM", "t", "5", "9"},
		{"RPUSH", "r", "1"}, {"LREM", "r", "0", "1"}, {"RPUSH", "p", "1"}, {"LPOP", "p", "5"},
	}
	compareEvents(t, script)
}

func BenchmarkListDeque(b *testing.B) {
	b.ReportAllocs()
	l := newList()
	v := []byte("v")
	for b.Loop() {
		for range 64 {
			l.pushBack(v)
		}
		for range 64 {
			l.popFront()
		}
	}
}

// BenchmarkListLRange100 is redis-benchmark's lrange_100 over loopback.
func BenchmarkListLRange100(b *testing.B) {
	_, addr := startServer(b, Config{})
	rc := dialRaw(b, addr)
	args := []string{"RPUSH", "k"}
	for i := range 100 {
		args = append(args, "element:"+strconv.Itoa(i))
	}
	rc.do(args...)
	b.ReportAllocs()
	for b.Loop() {
		rc.do("LRANGE", "k", "0", "99")
	}
}

// BenchmarkListPushPop is LPUSH then RPOP over loopback.
func BenchmarkListPushPop(b *testing.B) {
	_, addr := startServer(b, Config{})
	rc := dialRaw(b, addr)
	b.ReportAllocs()
	for b.Loop() {
		rc.do("LPUSH", "k", "v")
		rc.do("RPOP", "k")
	}
}

// TestListKeyspaceStatsCompat checks that reads count keyspace hits and
// misses and writes do not, as in Redis.
func TestListKeyspaceStatsCompat(t *testing.T) {
	script := [][]string{
		{"RPUSH", "l", "a", "b"}, {"LPUSHX", "none", "a"}, {"LRANGE", "l", "0", "-1"}, {"LRANGE", "none", "0", "-1"},
		{"LLEN", "l"}, {"LINDEX", "none", "0"}, {"LPOS", "l", "a"}, {"LPOP", "none"}, {"LSET", "l", "0", "x"},
		{"LMOVE", "l", "m", "LEFT", "LEFT"}, {"LMPOP", "2", "none", "l", "LEFT"}, {"BLPOP", "m", "0"}, {"LREM", "none", "0", "a"},
	}
	compareStats(t, script, "keyspace_")
}

// TestListAllocs holds the hot list commands to their allocation budgets:
// LRANGE none, a push one per item (its copy), a pop none.
func TestListAllocs(t *testing.T) {
	s, c := directServer(t)
	bs := argv
	push := []string{"RPUSH", "k"}
	for i := range 100 {
		push = append(push, "element:"+strconv.Itoa(i))
	}
	rpushCommand(s, c, bs(push...))
	for _, tc := range []struct {
		name   string
		fn     func(*Server, *client, [][]byte)
		args   [][]byte
		budget float64
	}{
		{"LRANGE 0 99", lrangeCommand, bs("LRANGE", "k", "0", "99"), 0},
		{"LINDEX 50", lindexCommand, bs("LINDEX", "k", "50"), 0},
		{"LPUSH then RPOP", func(s *Server, c *client, args [][]byte) {
			lpushCommand(s, c, args)
			rpopCommand(s, c, args[:2])
		}, bs("LPUSH", "k", "v"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.w.Reset()
			tc.fn(s, c, tc.args)
			got := testing.AllocsPerRun(200, func() {
				s.w.Reset()
				tc.fn(s, c, tc.args)
			})
			if got > tc.budget {
				t.Errorf("%s: %v allocations; want at most %v", tc.name, got, tc.budget)
			}
		})
	}
}

// directServer returns a server without a listener and a client of it,
// for calling command functions directly.
func directServer(t testing.TB) (*Server, *client) {
	t.Helper()
	s, err := New(Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return s, newClient(s, nil, 1)
}

// argv returns args as a command's arguments.
func argv(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}
