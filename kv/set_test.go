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

	"github.com/redis/go-redis/v9"

	"github.com/evloop/evloop/resp"
)

// unordered lists the set commands whose replies come in an order that
// depends on the hash table: their replies are compared as sorted lists.
var unordered = map[string]bool{"smembers": true, "sinter": true, "sunion": true, "sdiff": true, "sscan": true, "srandmember": true, "spop": true}

// normalizeSetReply sorts the members of an aggregate reply (SSCAN's
// second element), keeping its type and length.
func normalizeSetReply(reply string) string {
	v, _, err := resp.Parse([]byte(reply))
	if err != nil {
		return reply
	}
	if v.Type == resp.Array && len(v.Elems) == 2 && v.Elems[1].Type == resp.Array {
		v = v.Elems[1] // SSCAN: the cursor may differ too
	}
	var members []string
	for _, e := range v.Elems {
		members = append(members, string(e.Str))
	}
	slices.Sort(members)
	return fmt.Sprintf("%c%q", v.Type, members)
}

// compareSets is compareWithRedis with the replies of unordered commands
// compared as sorted lists.
func compareSets(t *testing.T, script [][]string) {
	t.Helper()
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	for _, args := range script {
		got, want := doBoth(ours, theirs, args...)
		name := strings.ToLower(args[0])
		switch {
		case name == "hello":
			got, want = got[:1], want[:1]
		case unordered[name] && got != want:
			got, want = normalizeSetReply(got), normalizeSetReply(want)
		}
		if got != want {
			t.Errorf("%q: evkv replied %q; Redis %q", args, got, want)
		}
	}
}

func setScript() [][]string {
	return [][]string{
		{"SADD", "s", "3", "1", "2", "1"}, {"SADD", "s"}, {"SCARD", "s"}, {"SCARD", "nokey"}, {"SMEMBERS", "s"},
		{"OBJECT", "ENCODING", "s"}, {"SISMEMBER", "s", "1"}, {"SISMEMBER", "s", "9"}, {"SISMEMBER", "nokey", "1"},
		{"SMISMEMBER", "s", "1", "9", "3"}, {"SMISMEMBER", "nokey", "1"}, {"SMISMEMBER", "s"},
		{"SADD", "n", "01", "+1", "-0", "1"}, {"OBJECT", "ENCODING", "n"}, {"SMEMBERS", "n"},
		{"SADD", "i", "-5", "10", "-9223372036854775808", "9223372036854775807"}, {"OBJECT", "ENCODING", "i"}, {"SMEMBERS", "i"},
		{"SADD", "i", "9223372036854775808"}, {"OBJECT", "ENCODING", "i"}, {"SREM", "i", "9223372036854775808"}, {"OBJECT", "ENCODING", "i"},
		{"SADD", "w", "a", "b", "c"}, {"OBJECT", "ENCODING", "w"}, {"SREM", "w", "a", "zz", "a"}, {"SREM", "w", "b", "c"}, {"EXISTS", "w"},
		{"SREM", "nokey", "a"}, {"SREM", "s"},
		{"SET", "str", "x"}, {"SADD", "str", "a"}, {"SREM", "str", "a"}, {"SCARD", "str"}, {"SMEMBERS", "str"}, {"SISMEMBER", "str", "a"},
		{"SMISMEMBER", "str", "a"}, {"SRANDMEMBER", "str"}, {"SRANDMEMBER", "str", "2"}, {"SPOP", "str"}, {"SPOP", "str", "2"},
		{"SMOVE", "str", "s", "a"}, {"SMOVE", "s", "str", "1"}, {"SMOVE", "nokey", "str", "1"}, {"SINTER", "s", "str"}, {"SINTER", "nokey", "str"},
		{"SUNION", "s", "str"}, {"SDIFF", "str"}, {"SINTERSTORE", "d", "str"}, {"SUNIONSTORE", "d", "s", "str"}, {"SDIFFSTORE", "d", "nokey", "str"},
		{"SINTERCARD", "2", "s", "str"}, {"SSCAN", "str", "0"},
		{"SRANDMEMBER", "s", "5"}, {"SRANDMEMBER", "s", "3"}, {"SRANDMEMBER", "s", "0"}, {"SRANDMEMBER", "nokey"}, {"SRANDMEMBER", "nokey", "3"},
		{"SRANDMEMBER", "s", "-9223372036854775808"}, {"SRANDMEMBER", "s", "x"}, {"SRANDMEMBER", "s", "1", "2"},
		{"SPOP", "nokey"}, {"SPOP", "nokey", "3"}, {"SPOP", "s", "0"}, {"SPOP", "s", "-1"}, {"SPOP", "s", "x"}, {"SPOP", "s", "1", "2"},
		{"SADD", "p", "a", "b"}, {"SPOP", "p", "2"}, {"EXISTS", "p"}, {"SADD", "p", "a"}, {"SPOP", "p"}, {"EXISTS", "p"},
		{"SADD", "a", "1", "2", "3", "x"}, {"SADD", "b", "2", "3", "4"}, {"SADD", "c", "3", "y"},
		{"SINTER", "a", "b"}, {"SINTER", "a", "b", "c"}, {"SINTER", "a", "nokey"}, {"SINTER", "a"},
		{"SUNION", "a", "b"}, {"SUNION", "b", "nokey"}, {"SUNION", "nokey"}, {"SDIFF", "a", "b"}, {"SDIFF", "b", "a", "c"}, {"SDIFF", "nokey", "a"},
		{"SDIFF", "b"}, {"SDIFF", "a", "a"},
		{"SINTERSTORE", "d", "a", "b"}, {"SMEMBERS", "d"}, {"OBJECT", "ENCODING", "d"}, {"SINTERSTORE", "d", "a", "nokey"}, {"EXISTS", "d"},
		{"SUNIONSTORE", "d", "a", "b"}, {"OBJECT", "ENCODING", "d"}, {"SCARD", "d"}, {"SUNIONSTORE", "d", "nokey"}, {"EXISTS", "d"},
		{"SDIFFSTORE", "d", "b", "a"}, {"SMEMBERS", "d"}, {"OBJECT", "ENCODING", "d"}, {"SDIFFSTORE", "d", "a", "a"}, {"EXISTS", "d"},
		{"SET", "d", "string"}, {"EXPIRE", "d", "100"}, {"SUNIONSTORE", "d", "b"}, {"TTL", "d"}, {"TYPE", "d"},
		{"SINTERSTORE", "b", "b", "a"}, {"SMEMBERS", "b"},
		{"SINTERCARD", "2", "a", "b"}, {"SINTERCARD", "1", "a", "LIMIT", "2"}, {"SINTERCARD", "1", "a", "LIMIT", "0"},
		{"SINTERCARD", "2", "a", "nokey"}, {"SINTERCARD", "0", "a"}, {"SINTERCARD", "3", "a"}, {"SINTERCARD", "x", "a"}, {"SINTERCARD", "-1", "a"},
		{"SINTERCARD", "1", "a", "LIMIT", "-1"}, {"SINTERCARD", "1", "a", "LIMIT", "x"}, {"SINTERCARD", "1", "a", "LIMIT"}, {"SINTERCARD", "1", "a", "FOO"},
		{"SINTERCARD", "1"}, {"SINTERCARD", "1", "a", "limit", "1", "LIMIT", "3"}, {"SINTERCARD", "9223372036854775807", "a"},
		{"SMOVE", "a", "e", "1"}, {"SMEMBERS", "e"}, {"OBJECT", "ENCODING", "e"}, {"SMOVE", "a", "e", "nope"}, {"SMOVE", "a", "a", "2"},
		{"SMOVE", "a", "a", "nope"}, {"SMOVE", "e", "a", "1"}, {"EXISTS", "e"}, {"SMOVE", "a", "e", "x"}, {"OBJECT", "ENCODING", "e"},
		{"SMOVE", "a", "b", "2"},
		{"SSCAN", "a", "0"}, {"SSCAN", "a", "0", "MATCH", "[12]"}, {"SSCAN", "a", "x"}, {"SSCAN", "a", "0", "COUNT", "0"},
		{"SSCAN", "a", "0", "FOO"}, {"SSCAN", "a", "0", "TYPE", "set"}, {"SSCAN", "nokey", "0"}, {"SSCAN", "b", "0", "MATCH", "*"},
		{"SADD"}, {"SCARD"}, {"SCARD", "a", "b"}, {"SISMEMBER", "a"}, {"SMOVE", "a", "b"}, {"SINTERSTORE", "d"}, {"SSCAN", "a"},
	}
}

func TestCompatSets(t *testing.T) {
	compareSets(t, setScript())
	compareSets(t, append([][]string{{"HELLO", "3"}}, setScript()...))
}

// TestCompatIntsetOrder compares intsets' replies byte for byte: Redis
// walks an intset in numeric order.
func TestCompatIntsetOrder(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"SADD", "s", "30", "-2", "100", "7", "0"}, {"SMEMBERS", "s"}, {"SSCAN", "s", "0"}, {"SRANDMEMBER", "s", "10"},
		{"SADD", "t", "7", "8", "-2"}, {"SINTER", "s", "t"}, {"SUNION", "s", "t"}, {"SDIFF", "s", "t"},
		{"SUNIONSTORE", "u", "s", "t"}, {"SMEMBERS", "u"}, {"SPOP", "t", "5"},
	})
}

// TestCompatSetEncoding follows OBJECT ENCODING across the intset limits.
func TestCompatSetEncoding(t *testing.T) {
	var script [][]string
	add, srem := []string{"SADD", "big"}, []string{"SREM", "big"}
	for i := range 512 {
		add = append(add, strconv.Itoa(i*3))
		if i%4 != 0 {
			srem = append(srem, strconv.Itoa(i*3))
		}
	}
	script = append(script, add, []string{"OBJECT", "ENCODING", "big"}, []string{"SADD", "big", "5000"},
		[]string{"OBJECT", "ENCODING", "big"}, []string{"SREM", "big", "5000", "0"}, []string{"OBJECT", "ENCODING", "big"},
		srem, []string{"OBJECT", "ENCODING", "big"}, []string{"SCARD", "big"},
		[]string{"SUNIONSTORE", "copy", "big"}, []string{"OBJECT", "ENCODING", "copy"},
		[]string{"COPY", "big", "big2"}, []string{"OBJECT", "ENCODING", "big2"})
	compareSets(t, script)
}

// TestCompatSpopMost pops most of a set, where Redis draws the members
// that stay into a new set: its encoding follows from them, and the
// popped members come in the old set's order (numeric for an intset).
// The members drawn are random, so the pops are compared by their order
// and the sets by encoding and size (each case's encoding is the same
// whichever members stay).
func TestCompatSpopMost(t *testing.T) {
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	var ints, strs []string
	for i := range 600 {
		ints = append(ints, strconv.Itoa(i))
	}
	for i := range 60 {
		strs = append(strs, "m"+strconv.Itoa(i))
	}
	for _, tc := range []struct {
		name  string
		setup [][]string
		pop   string
	}{
		{"table of integers", [][]string{append([]string{"SADD", "k"}, ints...)}, "500"},
		{"table, a string removed", [][]string{append([]string{"SADD", "k", "a"}, ints...), {"SREM", "k", "a"}}, "590"},
		{"table of strings", [][]string{append([]string{"SADD", "k"}, strs...)}, "55"},
		{"table, fewer popped", [][]string{append([]string{"SADD", "k"}, ints...)}, "499"},
		{"intset", [][]string{append([]string{"SADD", "k"}, ints[:10]...)}, "9"},
	} {
		for _, rc := range []*rawConn{ours, theirs} {
			rc.do("DEL", "k")
			for _, args := range tc.setup {
				rc.do(args...)
			}
		}
		got := ours.do("SPOP", "k", tc.pop)
		theirs.do("SPOP", "k", tc.pop)
		for _, q := range [][]string{{"OBJECT", "ENCODING", "k"}, {"SCARD", "k"}} {
			if g, w := ours.do(q...), theirs.do(q...); g != w {
				t.Errorf("%s: %q after SPOP k %s: evkv replied %q; Redis %q", tc.name, q, tc.pop, g, w)
			}
		}
		if tc.name == "intset" {
			lines := strings.Split(got, "\r\n")
			var popped []int
			for i := 2; i < len(lines); i += 2 {
				n, _ := strconv.Atoi(lines[i])
				popped = append(popped, n)
			}
			if len(popped) != 9 || !slices.IsSorted(popped) {
				t.Errorf("%s: SPOP k 9 = %v; want 9 members in numeric order, as Redis pops them", tc.name, popped)
			}
		}
	}
}

func TestCompatSetEvents(t *testing.T) {
	script := [][]string{
		{"SADD", "s", "a", "b", "c"}, {"SADD", "s", "a"}, {"SREM", "s", "zz"}, {"SREM", "s", "a"}, {"SPOP", "s"}, {"SPOP", "s", "5"},
		{"SADD", "x", "1", "2", "3"}, {"SADD", "y", "3", "4"}, {"SMOVE", "x", "y", "3"}, {"SMOVE", "x", "z", "1"}, {"SMOVE", "x", "z", "2"},
		{"SINTERSTORE", "d", "y", "z"}, {"SUNIONSTORE", "d", "y", "z"}, {"SDIFFSTORE", "d", "y", "y"}, {"SDIFFSTORE", "e", "y", "z"},
		{"SPOP", "e", "0"}, {"SADD", "f", "1", "2", "3"}, {"SPOP", "f", "1"},
	}
	compareEvents(t, script)
}

// TestSetDifferential sends the same random set commands to evkv and Redis
// and compares every reply; commands with random results are left out.
func TestSetDifferential(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(11, uint64(len(proto))))
			keys := []string{"a", "b", "c", "d", "str"}
			member := func() string {
				switch rng.IntN(3) {
				case 0:
					return strconv.Itoa(rng.IntN(40) - 10)
				case 1:
					return string(rune('a' + rng.IntN(20)))
				}
				return strconv.Itoa(rng.IntN(700))
			}
			members := func(n int) []string {
				var out []string
				for range 1 + rng.IntN(n) {
					out = append(out, member())
				}
				return out
			}
			key := func() string { return keys[rng.IntN(len(keys))] }
			script := [][]string{{"HELLO", proto}, {"SET", "str", "x"}}
			for range 3000 {
				var cmd []string
				switch rng.IntN(14) {
				case 0, 1, 2:
					cmd = append([]string{"SADD", key()}, members(40)...)
				case 3:
					cmd = append([]string{"SREM", key()}, members(10)...)
				case 4:
					cmd = []string{"SCARD", key()}
				case 5:
					cmd = append([]string{"SMISMEMBER", key()}, members(5)...)
				case 6:
					cmd = []string{"SMOVE", key(), key(), member()}
				case 7:
					cmd = []string{"SINTER", key(), key()}
				case 8:
					cmd = []string{"SUNION", key(), key(), key()}
				case 9:
					cmd = []string{"SDIFF", key(), key()}
				case 10:
					op := []string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[rng.IntN(3)]
					cmd = []string{op, key(), key(), key()}
				case 11:
					cmd = []string{"SINTERCARD", "2", key(), key(), "LIMIT", strconv.Itoa(rng.IntN(5))}
				case 12:
					cmd = []string{"SMEMBERS", key()}
				case 13:
					k := key()
					script = append(script, []string{"OBJECT", "ENCODING", k})
					cmd = []string{"SISMEMBER", k, member()}
				}
				script = append(script, cmd)
			}
			compareSets(t, script)
		})
	}
}

func TestSetsGoRedis(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("RESP", proto), func(t *testing.T) {
			_, addr := startServer(t, Config{})
			c := goRedis(t, addr, func(o *redis.Options) { o.Protocol = proto })
			ctx := context.Background()
			if n, err := c.SAdd(ctx, "s", "a", "b", "c", "a").Result(); n != 3 || err != nil {
				t.Fatalf("SADD = %d, %v", n, err)
			}
			if m, err := c.SMembers(ctx, "s").Result(); err != nil || len(m) != 3 {
				t.Fatalf("SMEMBERS = %v, %v", m, err)
			}
			if m, err := c.SMembersMap(ctx, "s").Result(); err != nil || len(m) != 3 {
				t.Fatalf("SMEMBERS as a map = %v, %v", m, err)
			}
			if ok, err := c.SIsMember(ctx, "s", "b").Result(); !ok || err != nil {
				t.Fatalf("SISMEMBER = %v, %v", ok, err)
			}
			if r, err := c.SMIsMember(ctx, "s", "a", "z").Result(); err != nil || !slices.Equal(r, []bool{true, false}) {
				t.Fatalf("SMISMEMBER = %v, %v", r, err)
			}
			c.SAdd(ctx, "t", "b", "c", "d")
			if r, _ := c.SInter(ctx, "s", "t").Result(); len(r) != 2 {
				t.Errorf("SINTER = %v", r)
			}
			if r, _ := c.SUnion(ctx, "s", "t").Result(); len(r) != 4 {
				t.Errorf("SUNION = %v", r)
			}
			if r, _ := c.SDiff(ctx, "s", "t").Result(); !slices.Equal(r, []string{"a"}) {
				t.Errorf("SDIFF = %v", r)
			}
			if n, _ := c.SInterCard(ctx, 1, "s", "t").Result(); n != 1 {
				t.Errorf("SINTERCARD LIMIT 1 = %d", n)
			}
			if n, _ := c.SUnionStore(ctx, "u", "s", "t").Result(); n != 4 {
				t.Errorf("SUNIONSTORE = %d", n)
			}
			if ok, _ := c.SMove(ctx, "u", "v", "a").Result(); !ok {
				t.Errorf("SMOVE = false")
			}
			if r, _ := c.SRandMemberN(ctx, "u", -10).Result(); len(r) != 10 {
				t.Errorf("SRANDMEMBER -10 gave %d members", len(r))
			}
			if r, _ := c.SRandMemberN(ctx, "u", 2).Result(); len(r) != 2 || r[0] == r[1] {
				t.Errorf("SRANDMEMBER 2 = %v", r)
			}
			popped, err := c.SPopN(ctx, "u", 2).Result()
			if err != nil || len(popped) != 2 {
				t.Fatalf("SPOP 2 = %v, %v", popped, err)
			}
			if n := c.SCard(ctx, "u").Val(); n != 1 {
				t.Errorf("SCARD after SPOP 2 = %d", n)
			}
			if _, err := c.SPop(ctx, "u").Result(); err != nil {
				t.Errorf("SPOP: %v", err)
			}
			if n := c.Exists(ctx, "u").Val(); n != 0 {
				t.Errorf("the emptied set still exists")
			}
			if _, err := c.SPop(ctx, "u").Result(); err != redis.Nil {
				t.Errorf("SPOP of a missing key: %v", err)
			}
			var seen []string
			for i := range 300 {
				c.SAdd(ctx, "big", "m"+strconv.Itoa(i))
			}
			var cursor uint64
			for {
				keys, next, err := c.SScan(ctx, "big", cursor, "m1*", 20).Result()
				if err != nil {
					t.Fatal(err)
				}
				seen = append(seen, keys...)
				if cursor = next; cursor == 0 {
					break
				}
			}
			slices.Sort(seen)
			if seen = slices.Compact(seen); len(seen) != 111 {
				t.Errorf("SSCAN MATCH m1* found %d members; want 111", len(seen))
			}
			c.Set(ctx, "str", "x", 0)
			if err := c.SAdd(ctx, "str", "a").Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
				t.Errorf("SADD on a string: %v", err)
			}
			// In a transaction.
			cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.SAdd(ctx, "tx", "1", "2")
				p.SRem(ctx, "tx", "1")
				p.SMembers(ctx, "tx")
				return nil
			})
			if err != nil || cmds[2].(*redis.StringSliceCmd).Val()[0] != "2" {
				t.Errorf("MULTI: %v, %v", cmds, err)
			}
		})
	}
}

// TestSetPopReplays checks that the log replays random pops to the same
// set: SPOP is logged as the SREM (or DEL) of what it popped.
func TestSetPopReplays(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{AppendOnly: true, Dir: dir}
	s1, addr := startServer(t, cfg)
	ctx := context.Background()
	c := goRedis(t, addr)
	for i := range 2000 {
		c.SAdd(ctx, "s", "m"+strconv.Itoa(i))
	}
	c.SAdd(ctx, "small", "1", "2", "3")
	c.SPop(ctx, "s")
	c.SPopN(ctx, "s", 700)
	c.SPopN(ctx, "small", 10)
	c.SAdd(ctx, "t", "a", "b")
	c.SMove(ctx, "t", "s", "a")
	want := c.SMembers(ctx, "s").Val()
	slices.Sort(want)
	c.Close()
	if err := s1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(dir, "appendonly.aof"))
	if err != nil || strings.Contains(string(log), "SPOP") {
		t.Errorf("the log holds SPOP (or cannot be read: %v)", err)
	}
	_, addr2 := startServer(t, cfg)
	c2 := goRedis(t, addr2)
	got := c2.SMembers(ctx, "s").Val()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("after replay: %d members; want %d", len(got), len(want))
	}
	if n := c2.Exists(ctx, "small").Val(); n != 0 {
		t.Errorf("the set popped whole exists after replay")
	}
}

// TestCompatSdiffAlgorithms: SDIFF and SDIFFSTORE choose between looking
// each member of the first set up in the others and taking the others'
// members out of a copy of it as Redis does, by the same count, so that a
// stored result's encoding is Redis's: an intset when its members are
// integers and it was built from them alone, a hash table when the copy
// of a first set of strings was taken from. Missing keys count for
// nothing, and the same key as the first empties the result.
func TestCompatSdiffAlgorithms(t *testing.T) {
	run := func(addr string) []string {
		rc := dialRaw(t, addr)
		ints := []string{"SADD", "ints"}
		for i := range 100 {
			ints = append(ints, strconv.Itoa(i))
		}
		rc.do(ints...)
		rc.do("SADD", "mixed", "a", "b", "c", "1", "2", "3")
		rc.do("SADD", "small", "5", "6", "a")
		rc.do("SADD", "big", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12")
		rc.do("SADD", "abc", "a", "b", "c")
		for _, m := range []string{"a", "b", "c", "zz"} {
			rc.do("SADD", "just-"+m, m)
		}
		var out []string
		for _, keys := range [][]string{
			{"ints", "small", "nokey1", "nokey2"},                   // a copy, the others taken out
			{"small", "big"},                                        // each looked up
			{"mixed", "small", "nokey1"},                            // each looked up
			{"mixed", "abc"},                                        // each looked up: 1 2 3, an intset
			{"mixed", "just-a", "just-b", "just-c", "just-zz"},      // a copy of strings: 1 2 3, a hash table
			{"mixed", "big", "small", "nokey1", "nokey2", "nokey3"}, // a copy
			{"mixed", "a", "b", "c", "d", "e", "f", "g", "h", "i"},  // missing ones only
			{"ints", "small", "ints"},                               // the same set
			{"nokey1", "ints"},
		} {
			sdiff := append([]string{"SDIFF"}, keys...)
			members := strings.Split(strings.TrimSpace(rc.do(sdiff...)), "\r\n")
			slices.Sort(members)
			out = append(out, strings.Join(members, " "), rc.do(append([]string{"SDIFFSTORE", "d"}, keys...)...),
				rc.do("OBJECT", "ENCODING", "d"), rc.do("SCARD", "d"))
		}
		return out
	}
	_, addr := startServer(t, Config{})
	compareTranscripts(t, "", run(addr), run(redisServer(t)))
}
