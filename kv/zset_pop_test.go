package kv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evloop/evloop/resp"
)

// zmpopScript exercises ZMPOP and BZMPOP where BZMPOP need not wait:
// numkeys of 0, negative, not a number and naming every argument after
// it, MIN|MAX in any case or neither, COUNT 0, negative, missing, twice,
// larger than the set, wrong types before and after the key popped, and
// in a transaction, where BZMPOP answers at once.
func zmpopScript() [][]string {
	return [][]string{
		{"ZADD", "a", "1", "x", "2", "y", "3", "z"}, {"SET", "str", "v"}, {"ZADD", "b", "5", "q", "-inf", "r", "inf", "s"},
		{"ZMPOP", "1", "a", "MIN"}, {"ZMPOP", "2", "nokey", "a", "max", "COUNT", "5"}, {"EXISTS", "a"}, {"ZMPOP", "2", "nokey", "a", "MAX"},
		{"ZMPOP", "1", "nokey", "MIN"}, {"ZMPOP", "0", "b", "MIN"}, {"ZMPOP", "-1", "b", "MIN"}, {"ZMPOP", "x", "b", "MIN"},
		{"ZMPOP", "2", "b", "MIN"}, {"ZMPOP", "3", "a", "b", "MIN"}, {"ZMPOP", "9223372036854775807", "b", "MIN"},
		{"ZMPOP", "9223372036854775808", "b", "MIN"}, {"ZMPOP", "1", "b", "middle"}, {"ZMPOP", "1", "b", "LEFT"},
		{"ZMPOP", "1", "b", "MIN", "COUNT", "0"}, {"ZMPOP", "1", "b", "MIN", "COUNT", "-1"}, {"ZMPOP", "1", "b", "MIN", "COUNT", "x"},
		{"ZMPOP", "1", "b", "MIN", "COUNT"}, {"ZMPOP", "1", "b", "MIN", "COUNT", "1", "COUNT", "1"}, {"ZMPOP", "1", "b", "MIN", "foo"},
		{"ZMPOP", "2", "str", "b", "MIN"}, {"ZMPOP", "2", "nokey", "str", "MIN"}, {"ZMPOP", "2", "b", "str", "mIn"},
		{"ZMPOP", "1", "b", "MAX", "count", "1"}, {"ZMPOP", "1", "b", "MIN", "COUNT", "9223372036854775807"}, {"EXISTS", "b"},
		{"ZADD", "c", "1.5", "x", "-0", "y"}, {"ZMPOP", "1", "c", "MIN", "COUNT", "1"}, {"ZMPOP", "1", "c", "MAX", "COUNT", "1"},
		{"BZMPOP", "0", "1", "nokey", "MIN", "COUNT", "0"}, {"BZMPOP", "x", "1", "nokey", "MIN"}, {"BZMPOP", "-1", "1", "nokey", "MIN"},
		{"BZMPOP", "x", "0", "nokey", "MIN"}, {"BZMPOP", "x", "1", "nokey", "up"}, {"BZMPOP", "0.01", "1", "nokey", "MIN"},
		{"BZMPOP", "0", "1", "str", "MIN"}, {"BZMPOP", "0", "2", "nokey", "str", "MIN"}, {"BZMPOP", "0", "2", "str", "nokey", "MAX"},
		{"BZMPOP", "0", "9223372036854775807", "a", "MIN"}, {"BZMPOP", "0", "2", "a", "MIN"},
		{"ZADD", "d", "1", "a", "2", "b", "3", "c"}, {"BZMPOP", "0", "2", "nokey", "d", "MAX", "COUNT", "2"}, {"BZMPOP", "0", "1", "d", "MIN"},
		{"EXISTS", "d"}, {"BZMPOP", "0.01", "2", "d", "nokey", "MIN", "COUNT", "3"},
		{"MULTI"}, {"BZMPOP", "0", "1", "nokey", "MIN"}, {"ZADD", "m", "1", "a", "2", "b"}, {"BZMPOP", "0", "1", "m", "MAX", "COUNT", "5"},
		{"ZMPOP", "1", "m", "MIN"}, {"BZMPOP", "0", "1", "m", "MIN"}, {"ZMPOP", "0", "m", "MIN"}, {"EXEC"},
		{"MULTI"}, {"ZMPOP", "1", "m"}, {"EXEC"},
	}
}

func TestCompatZmpop(t *testing.T) {
	compareZset(t, zmpopScript())
}

func TestCompatZmpopRESP3(t *testing.T) {
	compareZset(t, append([][]string{{"HELLO", "3"}}, zmpopScript()...))
}

// TestCompatZmpopEvents: a pop publishes zpopmin or zpopmax once, however
// many it took, and del when it emptied the set.
func TestCompatZmpopEvents(t *testing.T) {
	compareEvents(t, [][]string{
		{"ZADD", "a", "1", "x", "2", "y", "3", "z"}, {"ZMPOP", "1", "a", "MIN", "COUNT", "2"}, {"ZMPOP", "2", "nokey", "a", "MAX"},
		{"ZMPOP", "1", "a", "MAX"}, {"ZADD", "b", "1", "x", "2", "y"}, {"BZMPOP", "0", "1", "b", "MAX"}, {"BZMPOP", "0", "1", "b", "MIN", "COUNT", "9"},
		{"ZADD", "c", "1", "x"}, {"BZPOPMIN", "c", "0"},
	})
}

// TestCompatZmpopKeyspaceStats: the keys are looked up for writing, as
// Redis's lookupKeyWrite, counting no keyspace hit or miss; a pop counts a
// change per element.
func TestCompatZmpopKeyspaceStats(t *testing.T) {
	compareStatDeltas(t, [][]string{{"ZADD", "a", "1", "x", "2", "y", "3", "z", "4", "w"}, {"ZADD", "b", "1", "x"}, {"ZADD", "c", "1", "x"}, {"SET", "str", "v"}},
		[][]string{
			{"ZMPOP", "2", "nokey", "a", "MIN", "COUNT", "2"}, {"ZMPOP", "1", "a", "MAX", "COUNT", "5"}, {"ZMPOP", "1", "nokey", "MIN"},
			{"ZMPOP", "2", "str", "b", "MIN"}, {"BZMPOP", "0", "2", "nokey", "b", "MIN", "COUNT", "3"}, {"BZMPOP", "0.01", "1", "nokey", "MAX"},
			{"BZPOPMIN", "nokey", "c", "0"}, {"BZPOPMAX", "str", "0"},
		})
}

func TestZmpopGoRedis(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := goRedis(t, addr)
	ctx := context.Background()
	c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}, redis.Z{Score: 3, Member: "c"})
	if k, zs, err := c.ZMPop(ctx, "max", 2, "none", "z").Result(); k != "z" || err != nil || !slices.Equal(zs, []redis.Z{{Score: 3, Member: "c"}, {Score: 2, Member: "b"}}) {
		t.Errorf("ZMPOP MAX COUNT 2 = %q %v, %v; want z [{3 c} {2 b}]", k, zs, err)
	}
	if k, zs, err := c.ZMPop(ctx, "min", 5, "z").Result(); k != "z" || err != nil || !slices.Equal(zs, []redis.Z{{Score: 1, Member: "a"}}) {
		t.Errorf("ZMPOP MIN COUNT 5 = %q %v, %v; want z [{1 a}]", k, zs, err)
	}
	if err := c.ZMPop(ctx, "min", 1, "z").Err(); err != redis.Nil {
		t.Errorf("ZMPOP of no sorted set = %v; want nil", err)
	}
	if err := c.Do(ctx, "ZMPOP", "0", "z", "MIN").Err(); err == nil || err.Error() != "ERR numkeys should be greater than 0" {
		t.Errorf("ZMPOP 0 = %v", err)
	}
	// BZMPOP waits for the set, then takes what it finds up to COUNT.
	bc := goRedis(t, addr)
	type popped struct {
		key string
		zs  []redis.Z
		err error
	}
	got := make(chan popped, 1)
	go func() {
		k, zs, err := bc.BZMPop(ctx, 5*time.Second, "min", 10, "none", "later").Result()
		got <- popped{k, zs, err}
	}()
	listWaitBlocked(t, c, 1)
	c.ZAdd(ctx, "later", redis.Z{Score: 2, Member: "y"}, redis.Z{Score: 1, Member: "x"})
	if p := <-got; p.key != "later" || p.err != nil || !slices.Equal(p.zs, []redis.Z{{Score: 1, Member: "x"}, {Score: 2, Member: "y"}}) {
		t.Errorf("BZMPOP served late = %q %v, %v; want later [{1 x} {2 y}]", p.key, p.zs, p.err)
	}
	if n := c.Exists(ctx, "later").Val(); n != 0 {
		t.Errorf("EXISTS later = %d; want 0 once popped whole", n)
	}
	start := time.Now()
	if err := c.Do(ctx, "BZMPOP", "0.05", "1", "none", "MAX").Err(); err != redis.Nil || time.Since(start) < 40*time.Millisecond {
		t.Errorf("BZMPOP timeout = %v after %v; want nil after 50ms", err, time.Since(start))
	}
	// In a transaction BZMPOP does not wait.
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.BZMPop(ctx, 0, "min", 1, "none")
		p.ZAdd(ctx, "t", redis.Z{Score: 1, Member: "a"})
		p.BZMPop(ctx, 0, "max", 1, "t")
		return nil
	})
	if !errors.Is(err, redis.Nil) || len(cmds) != 3 {
		t.Fatalf("EXEC = %v, %v; want the first BZMPOP's nil", cmds, err)
	}
	if k, zs, err := cmds[2].(*redis.ZSliceWithKeyCmd).Result(); k != "t" || err != nil || len(zs) != 1 {
		t.Errorf("BZMPOP in MULTI = %q %v, %v; want t [{1 a}]", k, zs, err)
	}
}

// TestZmpopBlocking: clients blocked on a key are served in the order they
// blocked, each as much as its COUNT takes and the set has, the rest
// waiting on; a client blocked by BLPOP on the key does not stop those
// after it; RESP3 gets its own reply; CLIENT UNBLOCK and timeouts answer
// a null array.
func TestZmpopBlocking(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	a, b, l, d := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
	d.do("HELLO", "3")
	a.send("BZMPOP", "0", "2", "k", "other", "MIN", "COUNT", "2")
	waitBlocked(t, rc, 1)
	l.send("BLPOP", "k", "0")
	waitBlocked(t, rc, 2)
	b.send("BZPOPMAX", "k", "0")
	waitBlocked(t, rc, 3)
	d.send("BZMPOP", "0", "1", "k", "MAX", "COUNT", "5")
	waitBlocked(t, rc, 4)
	if got := rc.do("ZADD", "k", "1", "w", "2", "x", "3", "y"); got != ":3\r\n" {
		t.Fatalf("ZADD = %q", got)
	}
	if got, want := a.read(), "*2\r\n$1\r\nk\r\n*2\r\n*2\r\n$1\r\nw\r\n$1\r\n1\r\n*2\r\n$1\r\nx\r\n$1\r\n2\r\n"; got != want {
		t.Errorf("first BZMPOP = %q; want %q", got, want)
	}
	if got, want := b.read(), "*3\r\n$1\r\nk\r\n$1\r\ny\r\n$1\r\n3\r\n"; got != want {
		t.Errorf("BZPOPMAX after the BLPOP = %q; want %q", got, want)
	}
	waitBlocked(t, rc, 2) // the BLPOP and the RESP3 BZMPOP, the set emptied
	rc.do("ZADD", "k", "4", "z")
	if got, want := d.read(), "*2\r\n$1\r\nk\r\n*1\r\n*2\r\n$1\r\nz\r\n,4\r\n"; got != want {
		t.Errorf("RESP3 BZMPOP = %q; want %q", got, want)
	}
	id := strings.TrimSpace(strings.TrimPrefix(a.do("CLIENT", "ID"), ":"))
	a.send("BZMPOP", "0", "1", "k", "MIN")
	waitBlocked(t, rc, 2)
	if got := rc.do("CLIENT", "UNBLOCK", id); got != ":1\r\n" {
		t.Errorf("CLIENT UNBLOCK = %q", got)
	}
	if got := a.read(); got != "*-1\r\n" {
		t.Errorf("BZMPOP unblocked = %q; want a null array", got)
	}
	if got := d.do("BZMPOP", "0.02", "1", "k", "MIN"); got != "_\r\n" {
		t.Errorf("RESP3 BZMPOP timed out = %q; want _", got)
	}
	rc.do("RPUSH", "k", "v")
	if got := l.read(); got != "*2\r\n$1\r\nk\r\n$1\r\nv\r\n" {
		t.Errorf("BLPOP = %q", got)
	}
}

// TestCompatZmpopLog compares what evkv writes to the append-only file for
// the pops with what Redis writes: ZMPOP, BZMPOP, BZPOPMIN and BZPOPMAX
// are logged as ZPOPMIN or ZPOPMAX, with the number popped for ZMPOP and
// BZMPOP, whether at once, in a transaction, or served when a client's
// ZADD filled the set.
func TestCompatZmpopLog(t *testing.T) {
	run := func(rc, blocked *rawConn) {
		for _, args := range [][]string{
			{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}, {"ZMPOP", "1", "z", "MIN", "COUNT", "2"}, {"ZMPOP", "2", "nokey", "z", "MAX"},
			{"ZMPOP", "1", "nokey", "MIN"}, {"BZMPOP", "0", "1", "z", "MAX", "COUNT", "10"}, {"ZADD", "y", "1", "a"}, {"BZPOPMIN", "y", "0"},
			{"ZADD", "p", "1", "a"}, {"ZPOPMAX", "p", "3"}, {"ZDIFFSTORE", "d", "1", "z"},
			{"MULTI"}, {"ZADD", "m", "1", "a", "2", "b"}, {"ZMPOP", "1", "m", "MAX"}, {"BZMPOP", "0", "1", "m", "MIN", "COUNT", "5"},
			{"BZMPOP", "0", "1", "m", "MIN"}, {"EXEC"},
		} {
			rc.do(args...)
		}
		for _, tc := range [][2][]string{
			{{"BZMPOP", "0", "2", "w1", "w2", "MIN", "COUNT", "2"}, {"ZADD", "w2", "1", "a", "2", "b", "3", "c"}},
			{{"BZPOPMAX", "w3", "0"}, {"ZADD", "w3", "1", "a"}},
		} {
			blocked.send(tc[0]...)
			waitBlocked(t, rc, 1)
			rc.do(tc[1]...)
			blocked.read()
		}
		rc.do("ZDIFFSTORE", "d", "1", "w2")
	}
	compareLogs(t, func(addr string) { run(dialRaw(t, addr), dialRaw(t, addr)) })
}

// compareLogs runs run on evkv and on Redis, each by its address, both
// with the append-only file on and synced at every write, and fails
// unless their files hold the same commands.
func compareLogs(t *testing.T, run func(addr string)) {
	t.Helper()
	dir := t.TempDir()
	_, addr := startServer(t, Config{AppendOnly: true, AppendFsync: "always", Dir: dir})
	rdir := t.TempDir()
	raddr := redisServer(t, "--appendonly", "yes", "--appendfsync", "always", "--dir", rdir)
	var logs [2][]string
	for i, a := range []string{addr, raddr} {
		run(a)
		path := filepath.Join(dir, "appendonly.aof")
		if i == 1 {
			paths, _ := filepath.Glob(filepath.Join(rdir, "appendonlydir", "*.incr.aof"))
			if len(paths) != 1 {
				t.Fatalf("Redis's log: %v", paths)
			}
			path = paths[0]
		}
		logs[i] = logCommands(t, path)
	}
	if !slices.Equal(logs[0], logs[1]) {
		t.Errorf("logs differ:\nevkv  %q\nRedis %q", logs[0], logs[1])
	}
}

// logCommands returns the commands of the append-only file at path, each
// its arguments joined by spaces.
func logCommands(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for len(b) > 0 {
		v, n, err := resp.Parse(b)
		if err != nil {
			t.Fatalf("%s: %v at %q", path, err, b[:min(len(b), 40)])
		}
		var args []string
		for _, e := range v.Elems {
			args = append(args, string(e.Str))
		}
		out = append(out, strings.Join(args, " "))
		b = b[n:]
	}
	return out
}

// TestZmpopAppendOnly replays a log of ZMPOP and BZMPOP to the sets as
// they were.
func TestZmpopAppendOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	s, addr := startServer(t, Config{AppendOnly: true, Dir: dir})
	c := goRedis(t, addr)
	for i := range 200 {
		c.ZAdd(ctx, "big", redis.Z{Score: float64(i % 7), Member: fmt.Sprint("m", i)})
	}
	c.ZMPop(ctx, "max", 30, "big")
	c.BZMPop(ctx, 0, "min", 3, "none", "big")
	want := c.ZRangeWithScores(ctx, "big", 0, -1).Val()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_, addr = startServer(t, Config{AppendOnly: true, Dir: dir})
	if got := goRedis(t, addr).ZRangeWithScores(ctx, "big", 0, -1).Val(); !slices.Equal(got, want) {
		t.Errorf("after replay: %d members; want %d", len(got), len(want))
	}
}
