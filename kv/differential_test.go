package kv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/resp"
)

// This file is a randomized differential test against a real Redis 7.0
// (redisServer), over every data type (differential_values_test.go has
// strings, bitmaps, HyperLogLogs, geo sets, DUMP and RESTORE), keys,
// transactions and argument parsing: the same pipelined batches to both,
// every reply and the keyspace after each batch compared (where Redis's
// answer is random, what is defined of it), each key's DUMP RESTOREd on
// the other server, a difference cut down to the fewest commands that
// show it. DR_SEEDS sets how many seeds (3 by default).

// drPair is one raw connection to evkv and one to Redis.
type drPair struct {
	t            *testing.T
	ours, theirs *rawConn
	evAddr       string
	rAddr        string
}

func newDRPair(t *testing.T, proto int) *drPair {
	t.Helper()
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	p := &drPair{t: t, ours: dialRaw(t, addr), theirs: dialRaw(t, raddr), evAddr: addr, rAddr: raddr}
	if proto == 3 {
		p.ours.do("HELLO", "3")
		p.theirs.do("HELLO", "3")
	}
	return p
}

// batch sends cmds pipelined to both and returns both replies.
func (p *drPair) batch(cmds [][]string) (got, want []string) {
	p.t.Helper()
	if os.Getenv("DR_DEBUG") != "" {
		p.t.Logf("batch %q", cmds)
	}
	for _, rc := range []*rawConn{p.ours, p.theirs} {
		rc.c.SetDeadline(time.Now().Add(30 * time.Second))
		rc.sendTogether(cmds...)
	}
	for range cmds {
		got = append(got, p.ours.read())
	}
	if os.Getenv("DR_DEBUG") != "" {
		p.t.Logf("evkv done")
	}
	for range cmds {
		want = append(want, p.theirs.read())
	}
	return got, want
}

// drCanon is a canonical text of a reply value.
func drCanon(v resp.Value) string {
	var b strings.Builder
	var walk func(v resp.Value)
	walk = func(v resp.Value) {
		fmt.Fprintf(&b, "%c", byte(v.Type))
		if v.IsNull {
			b.WriteString("null")
			return
		}
		switch {
		case v.Elems != nil:
			fmt.Fprintf(&b, "%d[", len(v.Elems))
			for _, e := range v.Elems {
				walk(e)
				b.WriteByte(',')
			}
			b.WriteByte(']')
		case v.Str != nil:
			b.WriteString(strconv.Quote(string(v.Str)))
		default:
			fmt.Fprintf(&b, "%d", v.Int)
		}
	}
	walk(v)
	return b.String()
}

func drParse(s string) resp.Value {
	v, _, err := resp.Parse([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}

// normalizers for replies that are random in Redis.
type drNorm int

const (
	normExact     drNorm = iota
	normRandom           // random pick: compare the shape (type, length, how many distinct)
	normSorted           // same elements in any order
	normTTL              // a remaining time: compare its sign
	normScan             // a SCAN-family page: cursor zero or not; elements sorted when zero
	normRandomLen        // random picks that may repeat: compare the type and length
	normLoose            // errors exactly, else only the reply's type
	normIdle             // an idle time in seconds: compared to the nearest 100
	normGeoDist          // scores that are distances STOREDIST stored: to 12 digits
)

// drNormalizeArgs is what is compared of a reply raw by n, where
// flatPairs says a RESP2 reply is
// field, value, field, value...
func drNormalizeArgs(n drNorm, raw string, flatPairs bool) string {
	if n == normExact || strings.HasPrefix(raw, "-") {
		return raw
	}
	v := drParse(raw)
	switch n {
	case normLoose:
		return fmt.Sprintf("%c", byte(v.Type))
	case normRandomLen:
		return fmt.Sprintf("%c len=%d", byte(v.Type), len(v.Elems))
	case normRandom:
		if v.Elems == nil {
			if v.IsNull {
				return "null"
			}
			return fmt.Sprintf("%c", byte(v.Type))
		}
		seen := map[string]bool{}
		if v.Type == resp.Array && len(v.Elems) > 0 && v.Elems[0].Elems == nil && flatPairs {
			for i := 0; i < len(v.Elems); i += 2 {
				seen[drCanon(v.Elems[i])] = true
			}
			return fmt.Sprintf("%c len=%d distinct=%d", byte(v.Type), len(v.Elems), len(seen))
		}
		for _, e := range v.Elems {
			if len(e.Elems) > 0 { // RESP3 pairs: the field
				seen[drCanon(e.Elems[0])] = true
			} else {
				seen[drCanon(e)] = true
			}
		}
		// WITHSCORES/WITHVALUES in RESP2: fields are every other one
		return fmt.Sprintf("%c len=%d distinct=%d", byte(v.Type), len(v.Elems), len(seen))
	case normSorted:
		if v.Elems == nil {
			return drCanon(v)
		}
		var es []string
		for _, e := range v.Elems {
			es = append(es, drCanon(e))
		}
		slices.Sort(es)
		return fmt.Sprintf("%c%v", byte(v.Type), es)
	case normGeoDist:
		return drCanon(drRoundScores(v))
	case normIdle:
		if v.Type == resp.Integer {
			return fmt.Sprintf(":~%d", (v.Int+50)/100*100)
		}
		return raw
	case normTTL:
		if v.Type == resp.Integer && v.Int > 0 {
			return ":positive"
		}
		return raw
	case normScan:
		if len(v.Elems) != 2 {
			return drCanon(v)
		}
		cur := string(v.Elems[0].Str)
		if cur != "0" {
			return "scan page" // compared by drScanAll instead
		}
		var es []string
		for _, e := range v.Elems[1].Elems {
			es = append(es, drCanon(e))
		}
		slices.Sort(es)
		return fmt.Sprintf("scan 0 %v", es)
	}
	return raw
}

// drGen makes random commands.
type drGen struct {
	r        *rand.Rand
	payloads []string // DUMP payloads for RESTORE
}

var (
	drKeys    = []string{"l1", "l2", "h1", "h2", "s1", "s2", "z1", "z2", "str", "str2", "geo", "hll", "nokey"}
	drMembers = []string{"a", "b", "c", "d", "e", "1", "2", "3", "-1", "10", "1.5", "x y", "", "0", "-0", "+1", "007"}
	drNums    = []string{"0", "1", "-1", "2", "3", "5", "-5", "100", "1.5", "-2.5", "+1", "0x10", "1e3", " 1", "1 ", "-0",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "inf", "-inf", "+inf", "nan", "abc", "", "1e400", "0.1"}
	drInts = []string{"0", "1", "-1", "2", "3", "-2", "-3", "5", "10", "-10", "100", "+1", "0x10", "1e3", " 1", "1 ", "-0",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "abc", "", "1.0"}
)

func (g *drGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *drGen) key() string             { return g.pick(drKeys) }
func (g *drGen) mem() string             { return g.pick(drMembers) }
func (g *drGen) num() string {
	if g.r.IntN(3) == 0 {
		return g.pick(drNums)
	}
	return strconv.Itoa(g.r.IntN(11) - 5)
}
func (g *drGen) int() string {
	if g.r.IntN(4) == 0 {
		return g.pick(drInts)
	}
	return strconv.Itoa(g.r.IntN(13) - 6)
}
func (g *drGen) mems(n int) []string {
	var out []string
	for range n {
		out = append(out, g.mem())
	}
	return out
}

// lexBound is a ZRANGEBYLEX bound.
func (g *drGen) lex() string {
	switch g.r.IntN(6) {
	case 0:
		return "-"
	case 1:
		return "+"
	case 2:
		return "(" + g.mem()
	case 3:
		return "[" + g.mem()
	case 4:
		return g.mem()
	}
	return "[" + g.mem()
}

// scoreBound is a ZRANGEBYSCORE bound.
func (g *drGen) score() string {
	switch g.r.IntN(5) {
	case 0:
		return "(" + g.num()
	case 1:
		return g.pick([]string{"-inf", "+inf", "inf", "(-inf", "(+inf", "((1", "(", "nan"})
	}
	return g.num()
}

func (g *drGen) opt(p int, args ...string) []string {
	if g.r.IntN(100) < p {
		return args
	}
	return nil
}

func (g *drGen) big(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, prefix+strconv.Itoa(i))
	}
	return out
}

func cat(parts ...[]string) []string { return slices.Concat(parts...) }

// cmd returns a command and how to compare its reply.
func (g *drGen) cmd() ([]string, drNorm) {
	r := g.r
	if r.IntN(3) == 0 {
		return g.valueCmd()
	}
	k := g.key()
	switch r.IntN(80) {
	// lists
	case 0, 1:
		return cat([]string{g.pick([]string{"LPUSH", "RPUSH", "LPUSHX", "RPUSHX"}), k}, g.mems(r.IntN(4))), normExact
	case 2:
		return cat([]string{"LPOS", k, g.mem()}, g.opt(50, "RANK", g.int()), g.opt(50, "COUNT", g.int()), g.opt(30, "MAXLEN", g.int())), normExact
	case 3:
		return []string{"LINSERT", k, g.pick([]string{"BEFORE", "AFTER", "before", "MIDDLE"}), g.mem(), g.mem()}, normExact
	case 4:
		return []string{"LSET", k, g.int(), g.mem()}, normExact
	case 5:
		return []string{"LTRIM", k, g.int(), g.int()}, normExact
	case 6:
		return []string{"LREM", k, g.int(), g.mem()}, normExact
	case 7:
		n := g.pick([]string{"1", "2", "0", "-1", "x", "3"})
		ks := []string{}
		for range 2 {
			ks = append(ks, g.key())
		}
		if r.IntN(2) == 0 {
			return cat([]string{"LMPOP", n}, ks, []string{g.pick([]string{"LEFT", "RIGHT", "left", "UP"})}, g.opt(50, "COUNT", g.int())), normExact
		}
		return cat([]string{"BLMPOP", g.pick([]string{"0.01", "0.01", "-1", "x"}), n}, ks, []string{g.pick([]string{"LEFT", "RIGHT"})}, g.opt(50, "COUNT", g.int())), normExact
	case 8:
		return []string{"LMOVE", k, g.key(), g.pick([]string{"LEFT", "RIGHT"}), g.pick([]string{"LEFT", "RIGHT", "x"})}, normExact
	case 9:
		return []string{g.pick([]string{"LRANGE", "LINDEX", "LLEN", "LPOP", "RPOP"}), k, g.int(), g.int()}[:2+r.IntN(3)], normExact
	case 10:
		return []string{g.pick([]string{"BLPOP", "BRPOP"}), k, g.pick([]string{"0.01", "-0.01", "x", "inf"})}, normExact
	case 11:
		return []string{"BLMOVE", k, g.key(), g.pick([]string{"LEFT", "RIGHT"}), g.pick([]string{"LEFT", "RIGHT"}), "0.01"}, normExact
	// hashes
	case 12, 13:
		return g.pairs([]string{g.pick([]string{"HSET", "HMSET", "HSETNX"}), k}, g.mem, g.num), normExact
	case 14:
		return []string{g.pick([]string{"HINCRBYFLOAT", "HINCRBY"}), k, g.mem(), g.num()}, normExact
	case 15:
		return g.randomPick("HRANDFIELD", k, "WITHVALUES")
	case 16:
		return cat([]string{"HSCAN", k, "0"}, g.opt(40, "MATCH", g.pick([]string{"*", "a*", "[a-c]", "?"})), g.opt(40, "COUNT", g.pick([]string{"1", "100", "0", "-1", "x"}))), normScan
	case 17:
		return cat([]string{g.pick([]string{"HGET", "HDEL", "HEXISTS", "HSTRLEN", "HMGET"}), k}, g.mems(r.IntN(3))), normExact
	case 18:
		return []string{g.pick([]string{"HGETALL", "HKEYS", "HVALS", "HLEN"}), k}, normSorted
	// sets
	case 19, 20:
		return cat([]string{g.pick([]string{"SADD", "SREM"}), k}, g.mems(r.IntN(4))), normExact
	case 21:
		return cat([]string{"SINTERCARD", g.pick([]string{"1", "2", "0", "3", "-1"}), k, g.key()}, g.opt(50, "LIMIT", g.int())), normExact
	case 22:
		return cat([]string{"SMISMEMBER", k}, g.mems(r.IntN(3))), normExact
	case 23:
		args := []string{"SRANDMEMBER", k}
		if r.IntN(4) > 0 {
			args = append(args, g.int())
		}
		return args, drRandNorm(args)
	case 24:
		return cat([]string{"SSCAN", k, "0"}, g.opt(40, "MATCH", g.pick([]string{"*", "1*", "[a-c]"})), g.opt(40, "COUNT", g.pick([]string{"1", "100", "0", "x"}))), normScan
	case 25:
		return []string{g.pick([]string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}), g.key(), k, g.key()}, normExact
	case 26:
		return []string{g.pick([]string{"SINTER", "SUNION", "SDIFF"}), k, g.key()}, normSorted
	case 27:
		return []string{"SMOVE", k, g.key(), g.mem()}, normExact
	case 28:
		return []string{g.pick([]string{"SMEMBERS", "SCARD", "SISMEMBER"}), k, g.mem()}[:2+r.IntN(2)], normSorted
	// sorted sets
	case 29, 30, 31:
		args := []string{"ZADD", k}
		for _, f := range []string{"NX", "XX", "GT", "LT", "CH", "INCR"} {
			if r.IntN(5) == 0 {
				args = append(args, f)
			}
		}
		for range r.IntN(3) + 1 {
			args = append(args, g.num(), g.mem())
		}
		if r.IntN(10) == 0 {
			args = args[:len(args)-1]
		}
		return args, normExact
	case 32, 33:
		args := []string{"ZRANGE", k}
		norm := normExact
		switch r.IntN(3) {
		case 0:
			args = append(args, g.int(), g.int())
		case 1:
			args = append(args, g.score(), g.score(), "BYSCORE")
		case 2:
			// a lex range is defined only where all scores are equal:
			// elsewhere Redis's skiplist's answer depends on its levels
			args[1] = g.lexKey(k)
			if args[1] != "zlex" {
				norm = normLoose
			}
			args = append(args, g.lex(), g.lex(), "BYLEX")
		}
		args = cat(args, g.opt(30, "REV"), g.opt(30, "LIMIT", g.int(), g.int()), g.opt(40, "WITHSCORES"))
		return args, norm
	case 34:
		args := []string{"ZRANGESTORE", g.key(), k}
		switch r.IntN(3) {
		case 0:
			args = append(args, g.int(), g.int())
		case 1:
			args = append(args, g.score(), g.score(), "BYSCORE")
		case 2:
			args[2] = "zlex"
			args = append(args, g.lex(), g.lex(), "BYLEX")
		}
		return cat(args, g.opt(30, "REV"), g.opt(30, "LIMIT", g.int(), g.int())), normExact
	case 35, 36:
		cmd := g.pick([]string{"ZINTER", "ZUNION", "ZDIFF", "ZINTERSTORE", "ZUNIONSTORE", "ZDIFFSTORE"})
		n := r.IntN(3) + 1
		var args []string
		if strings.HasSuffix(cmd, "STORE") {
			args = []string{cmd, g.key(), strconv.Itoa(n)}
		} else {
			args = []string{cmd, strconv.Itoa(n)}
		}
		for range n {
			args = append(args, g.key())
		}
		if r.IntN(3) == 0 && cmd[1] != 'D' {
			args = append(args, "WEIGHTS")
			for range n {
				args = append(args, g.num())
			}
		}
		if r.IntN(3) == 0 && cmd[1] != 'D' {
			args = append(args, "AGGREGATE", g.pick([]string{"SUM", "MIN", "MAX", "avg"}))
		}
		if !strings.HasSuffix(cmd, "STORE") && r.IntN(2) == 0 {
			args = append(args, "WITHSCORES")
		}
		return args, normExact
	case 37:
		return g.randomPick("ZRANDMEMBER", k, "WITHSCORES")
	case 38:
		return cat([]string{"ZMPOP", g.pick([]string{"1", "2", "0"}), k, g.key()}[:3+r.IntN(2)], []string{g.pick([]string{"MIN", "MAX", "min"})}, g.opt(50, "COUNT", g.int())), normExact
	case 39:
		return []string{g.pick([]string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZCOUNT", "ZREMRANGEBYSCORE"}), k, g.score(), g.score()}, normExact
	case 40:
		c := g.pick([]string{"ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT", "ZREMRANGEBYLEX"})
		if c == "ZREMRANGEBYLEX" {
			return []string{c, "zlex", g.lex(), g.lex()}, normExact
		}
		k = g.lexKey(k)
		if k != "zlex" {
			return []string{c, k, g.lex(), g.lex()}, normLoose
		}
		return []string{c, k, g.lex(), g.lex()}, normExact
	case 41:
		return []string{g.pick([]string{"ZINCRBY"}), k, g.num(), g.mem()}, normExact
	case 42:
		return []string{g.pick([]string{"ZSCORE", "ZRANK", "ZREVRANK", "ZREM", "ZMSCORE"}), k, g.mem()}, normExact
	case 43:
		if r.IntN(5) == 0 {
			return []string{"BZPOPMIN", k, g.pick([]string{"0.01", "-1", "x", "0x1p-6"})}, normExact
		}
		return []string{g.pick([]string{"ZPOPMIN", "ZPOPMAX", "ZCARD", "ZREMRANGEBYRANK"}), k, g.int(), g.int()}[:2+r.IntN(3)], normExact
	case 44:
		return cat([]string{"ZSCAN", k, "0"}, g.opt(40, "MATCH", g.pick([]string{"*", "a*", "1*"}))), normScan
	// keys
	case 45, 46:
		c, v := g.pick([]string{"EXPIRE", "PEXPIRE"}), g.pick([]string{"100", "200", "50", "0", "-1", "1000000", "x"})
		if c == "PEXPIRE" && v != "0" && v != "-1" && v != "x" {
			v += "000" // no key may expire while a batch runs: timing differs
		}
		return cat([]string{c, k, v}, g.opt(60, g.pick([]string{"NX", "XX", "GT", "LT", "nx"}))), normExact
	case 47:
		return cat([]string{g.pick([]string{"EXPIREAT", "PEXPIREAT"}), k, g.pick([]string{"4000000000", "4000000001", "5000000000000", "1", "0"})}, g.opt(60, g.pick([]string{"NX", "XX", "GT", "LT"}))), normExact
	case 48:
		return []string{g.pick([]string{"EXPIRETIME", "PEXPIRETIME", "TTL", "PTTL"}), k}, normTTL
	case 49:
		return []string{g.pick([]string{"PERSIST", "TYPE", "EXISTS", "OBJECT"}), k}, normExact
	case 50:
		return []string{"OBJECT", "ENCODING", k}, normExact
	case 51:
		return []string{g.pick([]string{"RENAME", "RENAMENX"}), k, g.key()}, normExact
	case 52:
		return cat([]string{"COPY", k, g.key()}, g.opt(40, "DB", g.pick([]string{"0", "1", "16", "x"})), g.opt(40, "REPLACE")), normExact
	case 53:
		args := []string{"SORT", k}
		by := g.opt(30, "BY", g.pick([]string{"nosort", "w_*", "h1->*", "str"}))
		limit := g.opt(30, "LIMIT", g.int(), g.int())
		alpha := g.opt(40, "ALPHA")
		store := g.opt(20, "STORE", g.key())
		norm := normExact
		dontsort := len(by) > 0 && !strings.Contains(by[1], "*")
		if len(by) > 0 && !dontsort && len(alpha) > 0 {
			// ALPHA's ties among weights keep the load order, a set's or
			// a sorted set's dict order in Redis
			store, norm = nil, normSorted
		}
		if dontsort && len(store) == 0 {
			norm = normSorted
			if len(limit) > 0 {
				norm = normRandomLen
			}
		}
		args = cat(args, by, limit,
			g.opt(30, "GET", g.pick([]string{"#", "w_*", "h1->*", "h2->a"})), g.opt(30, "GET", "#"), g.opt(30, g.pick([]string{"ASC", "DESC"})),
			alpha, store)
		return args, norm
	case 54:
		return []string{"SET", "w_" + g.mem(), g.num()}, normExact
	case 55:
		return []string{"DEL", k}, normExact
	case 56:
		return cat([]string{"SCAN", "0"}, g.opt(40, "TYPE", g.pick([]string{"list", "hash", "set", "zset", "string", "stream", "nope"})), g.opt(30, "MATCH", g.pick([]string{"*1", "?1", "[hz]*"})), g.opt(30, "COUNT", "1000")), normScan
	// transactions
	case 57:
		return []string{g.pick([]string{"MULTI", "EXEC", "DISCARD", "MULTI", "EXEC"})}, normExact
	case 58:
		return []string{"WATCH", k}, normExact
	// growth past the compact encodings
	case 59:
		if r.IntN(3) == 0 {
			return cat([]string{"ZADD", k}, g.interleave(g.big("m", 125+r.IntN(8)))), normExact
		}
		return cat([]string{"ZADD", k, "1", strings.Repeat("v", 60+r.IntN(8))}), normExact
	case 60:
		if r.IntN(3) == 0 {
			return cat([]string{"SADD", k}, g.big("", 505+r.IntN(12))), normExact
		}
		return cat([]string{"SADD", k}, g.big("", 5)), normExact
	case 61:
		return cat([]string{"HSET", k}, g.interleave(g.big("f", 505+r.IntN(12)))), normExact
	case 62:
		return cat([]string{"HSET", k, "a", strings.Repeat("v", 60+r.IntN(8))}), normExact
	case 63:
		return cat([]string{"RPUSH", k, strings.Repeat("v", 4000+r.IntN(8000))}), normExact
	case 64:
		return []string{"ZREMRANGEBYRANK", k, "0", g.pick([]string{"-120", "-3", "5"})}, normExact
	case 65:
		return []string{g.pick([]string{"SPOP", "SPOP"}), k, g.pick([]string{"1000", "0", "-1", "x"})}, normSorted
	// arity errors
	case 66:
		cmds := []string{"LPUSH", "LPOS", "LINSERT", "LSET", "LTRIM", "LREM", "LMPOP", "BLMPOP", "LMOVE", "HSET", "HSETNX", "HINCRBYFLOAT", "HRANDFIELD", "HSCAN",
			"SINTERCARD", "SMISMEMBER", "SRANDMEMBER", "SPOP", "SINTERSTORE", "SMOVE", "SSCAN", "ZADD", "ZRANGE", "ZRANGESTORE", "ZINTER", "ZUNION",
			"ZDIFF", "ZRANDMEMBER", "ZMPOP", "EXPIRE", "EXPIRETIME", "PERSIST", "TYPE", "OBJECT", "RENAME", "RENAMENX", "COPY", "SCAN", "SORT", "MULTI",
			"EXEC", "DISCARD", "WATCH", "BZMPOP", "ZINTERCARD", "HMSET", "LINDEX", "SMEMBERS", "ZSCORE", "ZMSCORE", "HGETALL"}
		c := g.pick(cmds)
		if strings.Contains(c, "SCAN") || strings.Contains(c, "RAND") || c == "SPOP" || c == "SMEMBERS" || c == "SORT" {
			return cat([]string{c}, g.mems(r.IntN(3))), normLoose
		}
		return cat([]string{c}, g.mems(r.IntN(3))), normExact
	case 67:
		return cat([]string{"ZINTERCARD", g.pick([]string{"1", "2", "0"}), k, g.key()}, g.opt(50, "LIMIT", g.int())), normExact
	case 68:
		return cat([]string{"BZMPOP", "0.01", "1", k, g.pick([]string{"MIN", "MAX"})}, g.opt(50, "COUNT", g.int())), normExact
	case 69:
		return []string{"ZADD", k, g.num(), g.mem()}, normExact
	case 70:
		return []string{"HINCRBYFLOAT", k, g.mem(), g.pick(drNums)}, normExact
	case 71:
		return []string{"SELECT", g.pick([]string{"0", "1", "0"})}, normExact
	case 72:
		return []string{"SINTERCARD", g.pick(drInts), k}, normExact
	case 73:
		return []string{"MOVE", k, g.pick([]string{"0", "1", "x"})}, normExact
	case 74, 75:
		return cat([]string{"ZADD", "zlex"}, g.opt(20, g.pick([]string{"NX", "XX", "CH"})), []string{"0", g.mem(), "0", g.mem()}), normExact
	case 76:
		return []string{"ZREM", "zlex", g.mem()}, normExact
	}
	return []string{"PING"}, normExact
}

// pairs appends one to three pairs of first and second to args, one
// time in eight without the last second, an arity error.
func (g *drGen) pairs(args []string, first, second func() string) []string {
	for range g.r.IntN(3) + 1 {
		args = append(args, first(), second())
	}
	if g.r.IntN(8) == 0 {
		args = args[:len(args)-1]
	}
	return args
}

func (g *drGen) lexKey(k string) string {
	if g.r.IntN(5) < 3 {
		return "zlex"
	}
	return k
}

// randomPick is HRANDFIELD or ZRANDMEMBER of key: with a count or not,
// with its values or not.
func (g *drGen) randomPick(cmd, key, with string) ([]string, drNorm) {
	args := []string{cmd, key}
	if g.r.IntN(4) > 0 {
		args = append(args, g.int())
		if g.r.IntN(2) == 0 {
			args = append(args, with)
		}
	}
	return args, drRandNorm(args)
}

func drRandNorm(args []string) drNorm {
	if len(args) > 2 && strings.HasPrefix(strings.TrimSpace(args[2]), "-") {
		return normRandomLen
	}
	return normRandom
}

func (g *drGen) interleave(ms []string) []string {
	var out []string
	for i, m := range ms {
		out = append(out, strconv.Itoa(i%7), m)
	}
	return out
}

// snapshot is the keyspace, as commands to run and how to compare.
func drSnapshot() ([][]string, []drNorm) {
	var cmds [][]string
	var norms []drNorm
	add := func(n drNorm, args ...string) { cmds = append(cmds, args); norms = append(norms, n) }
	for _, db := range []string{"1", "0"} {
		add(normExact, "SELECT", db)
		for _, k := range append(slices.Clone(drKeys), "zlex", "geo2") {
			add(normExact, "TYPE", k)
			add(normExact, "GET", k)
			add(normExact, "OBJECT", "ENCODING", k)
			add(normExact, "LRANGE", k, "0", "-1")
			add(normSorted, "HGETALL", k)
			add(normSorted, "SMEMBERS", k)
			add(drScoresNorm(k), "ZRANGE", k, "0", "-1", "WITHSCORES")
			add(normTTL, "PTTL", k)
		}
	}
	return cmds, norms
}

func TestDifferentialRandom(t *testing.T) {
	seeds := 3
	if s := os.Getenv("DR_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	for seed := range seeds {
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("seed%d/resp%d", seed, proto), func(t *testing.T) {
				t.Parallel()
				drRun(t, uint64(seed), proto, 150)
			})
		}
	}
}

func drRun(t *testing.T, seed uint64, proto int, batches int) {
	p := newDRPair(t, proto)
	g := &drGen{r: rand.New(rand.NewPCG(seed, 7)), payloads: drPayloads(p.theirs)}
	var history []drStep
	fails := 0
	for b := 0; b < batches && fails < 10; b++ {
		var cmds [][]string
		var norms []drNorm
		for range g.r.IntN(8) + 1 {
			c, n := g.cmd()
			cmds = append(cmds, c)
			norms = append(norms, n)
		}
		// end any transaction left open, then take a snapshot
		cmds = append(cmds, []string{"DISCARD"}, []string{"UNWATCH"}, []string{"SELECT", "0"})
		norms = append(norms, normExact, normExact, normExact)
		sc, sn := drSnapshot()
		cmds = append(cmds, sc...)
		norms = append(norms, sn...)
		got, want := p.batch(cmds)
		inMulti := false
		failAt := -1
		for i := range cmds {
			n := norms[i]
			up := strings.ToUpper(cmds[i][0])
			if up == "MULTI" {
				inMulti = true
			}
			if up == "EXEC" || up == "DISCARD" {
				if inMulti && n == normExact {
					// an EXEC's array holds the replies of random commands too
					if anyRandom(cmds[:i]) {
						n = normRandom
					}
				}
				inMulti = false
			}
			if inMulti && up != "MULTI" && strings.HasPrefix(want[i], "+QUEUED") {
				n = normExact
			}
			fp := slices.ContainsFunc(cmds[i], func(a string) bool { return strings.HasPrefix(strings.ToUpper(a), "WITH") })
			gn, wn := drNormalizeArgs(n, got[i], fp), drNormalizeArgs(n, want[i], fp)
			if n == normScan && (gn == "scan page" || wn == "scan page") {
				gn, wn = "", ""
			}
			if gn != wn {
				t.Errorf("seed %d resp%d batch %d: %q\n  evkv:  %q\n  redis: %q\n  batch: %q", seed, proto, b, cmds[i], got[i], want[i], cmds[:i+1])
				fails++
				failAt = i
				break
			}
		}
		nsnap := len(sc)
		for i := range cmds[:len(cmds)-nsnap] {
			history = append(history, drStep{cmds[i], norms[i], b})
		}
		if fails > 0 {
			if failAt >= len(cmds)-nsnap {
				if failAt >= len(cmds)-nsnap+len(sc)/2 {
					history = append(history, drStep{[]string{"SELECT", "0"}, normExact, b})
				} else {
					history = append(history, drStep{[]string{"SELECT", "1"}, normExact, b})
				}
				history = append(history, drStep{cmds[failAt], norms[failAt], b})
			} else {
				history = history[:len(history)-(len(cmds)-nsnap)+failAt+1]
			}
			// find the first step that differs, and reduce the history to it
			min := p.minimize(history)
			var lines []string
			for _, s := range min {
				lines = append(lines, fmt.Sprintf("%d %q", s.batch, s.args))
			}
			t.Logf("minimal (%d steps):\n%s", len(min), strings.Join(lines, "\n"))
			break
		}
		for _, sc := range [][]string{{"SCAN"}, {"SCAN", "TYPE", "hash"}, {"SCAN", "MATCH", "*1"}} {
			a, b := drScanAll(p.ours, sc), drScanAll(p.theirs, sc)
			if a != b {
				t.Errorf("seed %d: full %q: evkv %s; redis %s", seed, sc, a, b)
			}
		}
		for _, d := range drCrossRestore(p) {
			t.Errorf("seed %d resp%d batch %d: %s", seed, proto, b, d)
			fails++
		}
	}
}

// anyRandom reports whether cmds hold a command whose reply is random in
// Redis (or depends on time or on a set's order), so that an EXEC's array
// after them is compared by its shape.
func anyRandom(cmds [][]string) bool {
	text := strings.ToUpper(fmt.Sprint(cmds))
	return slices.ContainsFunc([]string{"RAND", "SPOP", "SCAN", "TTL", "SMEMBERS", "SINTER", "SUNION", "SDIFF", "KEYS", "DUMP", "IDLETIME"},
		func(s string) bool { return strings.Contains(text, s) })
}

type drStep struct {
	args  []string
	norm  drNorm
	batch int
}

// drScanAll iterates SCAN to the end and returns the sorted keys.
func drScanAll(rc *rawConn, opts []string) string {
	cur := "0"
	var keys []string
	for {
		v := drParse(rc.do(slices.Concat([]string{"SCAN", cur}, opts[1:])...))
		cur = string(v.Elems[0].Str)
		for _, e := range v.Elems[1].Elems {
			keys = append(keys, string(e.Str))
		}
		if cur == "0" {
			break
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	return fmt.Sprint(keys)
}

// replay runs steps one at a time on fresh keyspaces and reports whether
// the last step's replies differ (after the first, earlier, difference
// if any: that counts too).
func (p *drPair) replay(steps []drStep) bool {
	for _, rc := range []*rawConn{p.ours, p.theirs} {
		rc.do("DISCARD")
		rc.do("UNWATCH")
		rc.do("SELECT", "0")
		rc.do("FLUSHALL")
	}
	var gots, wants []string
	for i := 0; i < len(steps); {
		j := i
		var cmds [][]string
		for ; j < len(steps) && steps[j].batch == steps[i].batch; j++ {
			cmds = append(cmds, steps[j].args)
		}
		g, w := p.batch(cmds)
		gots, wants = append(gots, g...), append(wants, w...)
		i = j
	}
	inMulti := false
	for i, s := range steps {
		got, want := gots[i], wants[i]
		up := strings.ToUpper(s.args[0])
		n := s.norm
		if up == "MULTI" {
			inMulti = true
		}
		if (up == "EXEC" || up == "DISCARD") && inMulti {
			n = normRandom
			inMulti = false
		}
		fp := slices.ContainsFunc(s.args, func(a string) bool { return strings.HasPrefix(strings.ToUpper(a), "WITH") })
		gn, wn := drNormalizeArgs(n, got, fp), drNormalizeArgs(n, want, fp)
		if n == normScan && (gn == "scan page" || wn == "scan page") {
			gn, wn = "", ""
		}
		if i == len(steps)-1 {
			return gn != wn
		}
	}
	return false
}

// minimize cuts history to the first differing step and removes what it
// can while the last step still differs.
func (p *drPair) minimize(history []drStep) []drStep {
	steps := slices.Clone(history)
	if !p.replay(steps) {
		p.t.Logf("not reproduced by a sequential replay")
		return steps
	}
	for chunk := len(steps) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk < len(steps); {
			try := slices.Concat(steps[:i], steps[i+chunk:])
			if p.replay(try) {
				steps = try
			} else {
				i += chunk
			}
		}
	}
	return steps
}

// drCompare runs script in RESP2 and RESP3 on both servers and reports
// every reply that differs.
func drCompare(t *testing.T, script [][]string) {
	t.Helper()
	for _, proto := range []int{2, 3} {
		p := newDRPair(t, proto)
		for _, args := range script {
			if os.Getenv("DR_DEBUG") != "" {
				t.Logf("%q", args)
			}
			p.ours.c.SetDeadline(time.Now().Add(30 * time.Second))
			p.theirs.c.SetDeadline(time.Now().Add(30 * time.Second))
			got, want := p.ours.do(args...), p.theirs.do(args...)
			if got != want {
				t.Errorf("resp%d %q: evkv %q; redis %q", proto, args, got, want)
			}
		}
	}
}

func TestDifferentialEdges(t *testing.T) {
	t.Parallel()
	drCompare(t, [][]string{
		{"RPUSH", "l", "a", "b", "c", "a"},
		{"LPOS", "l", "a", "RANK", "-9223372036854775808"}, {"LPOS", "l", "a", "RANK", "0"}, {"LPOS", "l", "a", "COUNT", "-1"},
		{"LPOS", "l", "a", "MAXLEN", "-1"}, {"LPOS", "l", "a", "RANK", "9223372036854775807"}, {"LPOS", "l", "a", "COUNT", "0", "RANK", "-1"},
		{"LRANGE", "l", "-9223372036854775808", "9223372036854775807"}, {"LINDEX", "l", "-9223372036854775808"},
		{"LSET", "l", "9223372036854775807", "x"}, {"LSET", "nol", "0", "x"}, {"LTRIM", "l", "9223372036854775807", "-9223372036854775808"},
		{"RPUSH", "l", "a", "b", "c"}, {"LREM", "l", "-9223372036854775808", "a"},
		{"LMPOP", "0", "l", "LEFT"}, {"LMPOP", "2", "l", "LEFT"}, {"LMPOP", "1", "l", "LEFT", "COUNT", "0"}, {"LMPOP", "1", "l", "LEFT", "COUNT", "1", "COUNT", "1"},
		{"LMPOP", "-1", "l", "LEFT"}, {"LMPOP", "9223372036854775807", "l", "LEFT"}, {"LMPOP", "1", "l", "LEFT", "COUNT", "9223372036854775807"},
		{"BLMPOP", "-0.01", "1", "l", "LEFT"}, {"BLMPOP", "inf", "1", "l", "LEFT"}, {"BLMPOP", "1e400", "1", "l", "LEFT"}, {"BLMPOP", "0x1p-6", "1", "l", "LEFT"},
		{"BLMPOP", "0.01", "1", "nol", "LEFT"}, {"BLPOP", "nol", "0.001"}, {"BLPOP", "nol", "9223372036854775807"}, {"BLPOP", "nol", "1e20"},
		{"LINSERT", "nol", "BEFORE", "a", "b"}, {"LINSERT", "l", "BEFORE", "zz", "b"},
		{"HSET", "h", "f", "1.5"}, {"HINCRBYFLOAT", "h", "f", "inf"}, {"HINCRBYFLOAT", "h", "f", "1e308"}, {"HINCRBYFLOAT", "h", "f", "1e308"},
		{"HINCRBYFLOAT", "h", "f", "-1.5"}, {"HGET", "h", "f"}, {"HINCRBYFLOAT", "h", "g", "5.0e3"}, {"HGET", "h", "g"}, {"HINCRBYFLOAT", "h", "g", " 1"},
		{"HINCRBYFLOAT", "h", "g", "1 "}, {"HINCRBYFLOAT", "h", "g", "0x10"}, {"HINCRBYFLOAT", "h", "g", "-0"}, {"HGET", "h", "g"},
		{"HSET", "h", "s", " 1"}, {"HINCRBYFLOAT", "h", "s", "1"}, {"HINCRBY", "h", "s", "1"}, {"HSET", "h", "n", "9223372036854775807"}, {"HINCRBY", "h", "n", "1"},
		{"HINCRBYFLOAT", "h", "n", "1"}, {"HGET", "h", "n"},
		{"HRANDFIELD", "h", "-9223372036854775808"}, {"HRANDFIELD", "h", "0"}, {"HRANDFIELD", "noh", "-5"},
		{"HRANDFIELD", "noh"}, {"HRANDFIELD", "h", "1", "WITHVALUES", "x"}, {"HRANDFIELD", "h", "x"},
		{"SADD", "s", "1", "2", "3"}, {"SRANDMEMBER", "s", "-9223372036854775808"}, {"SRANDMEMBER", "nos", "-3"},
		{"SPOP", "s", "-1"}, {"SPOP", "s", "0"}, {"SPOP", "nos", "0"}, {"SPOP", "nos", "3"}, {"SPOP", "s", "9223372036854775807"},
		{"SADD", "s", "1", "2", "3"}, {"SINTERCARD", "0", "s"}, {"SINTERCARD", "2", "s"}, {"SINTERCARD", "1", "s", "LIMIT", "-1"}, {"SINTERCARD", "1", "s", "LIMIT", "0"},
		{"SINTERCARD", "1", "s", "LIMIT", "1", "LIMIT", "2"}, {"SINTERCARD", "1", "s", "FOO"}, {"SINTERCARD", "-1", "s"}, {"SINTERCARD", "9223372036854775807", "s"},
		{"SMOVE", "s", "s", "1"}, {"SMOVE", "s", "s", "9"}, {"SMOVE", "nos", "h", "1"}, {"SMOVE", "s", "h", "9"}, {"SMOVE", "s", "h", "1"},
		{"SINTERSTORE", "dst", "nos"}, {"SINTERSTORE", "s", "s", "h"}, {"SMISMEMBER", "nos", "a"},
		{"ZADD", "z", "NX", "XX", "1", "a"}, {"ZADD", "z", "GT", "LT", "1", "a"}, {"ZADD", "z", "NX", "GT", "1", "a"}, {"ZADD", "z", "INCR", "1", "a", "2", "b"},
		{"ZADD", "z", "INCR", "inf", "a"}, {"ZADD", "z", "INCR", "-inf", "a"}, {"ZADD", "z", "nan", "a"}, {"ZADD", "z", "XX", "INCR", "1", "nomember"},
		{"ZADD", "z", "GT", "INCR", "-1", "a"}, {"ZADD", "z", "GT", "CH", "INCR", "-1", "a"}, {"ZADD", "z", "LT", "CH", "5", "a", "-inf", "b"},
		{"ZADD", "z", "1", "a", "2", "b", "-0", "c"}, {"ZSCORE", "z", "c"}, {"ZADD", "z", "-0.0", "d"}, {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
		{"ZADD", "z", "0x10", "e"}, {"ZADD", "z", " 1", "e"}, {"ZADD", "z", "1e3", "e"}, {"ZADD", "z", "+inf", "f"}, {"ZADD", "z", "-INF", "g"},
		{"ZADD", "z", "1e400", "h"}, {"ZADD", "z", "4.9e-324", "i"}, {"ZSCORE", "z", "i"}, {"ZINCRBY", "z", "-inf", "f"}, {"ZINCRBY", "z", "nan", "a"},
		{"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "WITHSCORES"}, {"ZRANGE", "z", "(-inf", "(+inf", "BYSCORE"}, {"ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "0", "-1"},
		{"ZRANGE", "z", "(1", "(1", "BYSCORE"}, {"ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"}, {"ZRANGE", "z", "0", "-1", "REV", "BYSCORE"},
		{"ZRANGE", "z", "0", "1", "BYLEX"}, {"ZRANGE", "z", "[a", "(z", "BYLEX", "BYSCORE"}, {"ZRANGE", "z", "nan", "1", "BYSCORE"},
		{"ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"}, {"ZRANGE", "z", "0", "-1", "LIMIT", "1"}, {"ZRANGE", "z", "0", "-1", "LIMIT", "x", "1", "BYSCORE"},
		{"ZRANGESTORE", "zd", "z", "0", "-1", "WITHSCORES"}, {"ZRANGESTORE", "zd", "z", "5", "1"}, {"EXISTS", "zd"}, {"ZRANGESTORE", "zd", "noz", "0", "-1"},
		{"ZADD", "za", "1", "a", "2", "b"}, {"ZADD", "zb", "inf", "a", "0", "b"},
		{"ZUNION", "2", "za", "zb", "WEIGHTS", "inf", "0", "WITHSCORES"}, {"ZUNION", "2", "za", "zb", "WEIGHTS", "-inf", "inf", "WITHSCORES"},
		{"ZINTER", "2", "za", "zb", "WEIGHTS", "1", "-inf", "AGGREGATE", "SUM", "WITHSCORES"}, {"ZINTER", "2", "za", "zb", "AGGREGATE", "MAX", "AGGREGATE", "MIN", "WITHSCORES"},
		{"ZUNION", "2", "za", "zb", "WEIGHTS", "1"}, {"ZUNION", "2", "za", "zb", "WEIGHTS", "1", "nan"}, {"ZUNION", "0", "za"}, {"ZUNION", "-1", "za"},
		{"ZDIFF", "2", "za", "zb", "WITHSCORES"}, {"ZDIFF", "2", "za", "zb", "WEIGHTS", "1", "1"}, {"ZDIFF", "1", "za", "AGGREGATE", "SUM"},
		{"ZUNIONSTORE", "zs", "2", "za", "s", "WEIGHTS", "2", "3"}, {"ZRANGE", "zs", "0", "-1", "WITHSCORES"}, {"ZINTERSTORE", "zs", "2", "za", "nos"}, {"EXISTS", "zs"},
		{"ZINTERCARD", "2", "za", "zb", "LIMIT", "1"}, {"ZINTERCARD", "0", "za"}, {"ZINTERCARD", "1", "za", "LIMIT", "-1"},
		{"ZRANDMEMBER", "za", "-9223372036854775808"}, {"ZRANDMEMBER", "noz", "-3", "WITHSCORES"},
		{"ZMPOP", "1", "za", "MIN", "COUNT", "0"}, {"ZMPOP", "0", "za", "MIN"}, {"ZMPOP", "1", "za", "MAX", "COUNT", "10"}, {"ZMPOP", "1", "za", "MAX"},
		{"BZMPOP", "0.01", "1", "za", "MIN"}, {"BZPOPMIN", "za", "0.01"},
		{"SET", "k", "v"}, {"EXPIRE", "k", "100", "XX"}, {"EXPIRE", "k", "100", "GT"}, {"EXPIRE", "k", "100", "LT"}, {"TTL", "k"}, {"EXPIRE", "k", "50", "GT"},
		{"EXPIRE", "k", "200", "NX"}, {"EXPIRE", "k", " 100"}, {"EXPIRE", "k", "+100"}, {"EXPIRE", "k", "1e3"}, {"EXPIRE", "k", "100", "NX", "NX"},
		{"EXPIREAT", "k", "4000000000"}, {"EXPIRETIME", "k"}, {"PEXPIRETIME", "k"}, {"PERSIST", "k"}, {"EXPIRETIME", "k"}, {"EXPIRETIME", "nok"}, {"PERSIST", "k"},
		{"COPY", "k", "k"}, {"COPY", "k", "k", "DB", "0"}, {"COPY", "k", "k", "DB", "1"}, {"COPY", "k", "k", "DB", "1"}, {"COPY", "k", "k", "DB", "1", "REPLACE"},
		{"COPY", "k", "k2", "DB", "-1"}, {"COPY", "k", "k2", "DB", "16"}, {"COPY", "k", "k2", "FOO"}, {"COPY", "nok", "k2"}, {"COPY", "k", "z", "REPLACE", "REPLACE"},
		{"RENAME", "k", "k"}, {"RENAMENX", "k", "k"}, {"RENAME", "nok", "nok"}, {"RENAMENX", "nok", "k"}, {"RENAMENX", "z", "k"},
		{"TYPE", "k"}, {"TYPE", "z"}, {"OBJECT", "ENCODING", "nok"}, {"OBJECT", "FOO", "k"}, {"OBJECT", "ENCODING"},
		{"SORT", "l", "LIMIT", "0"}, {"SORT", "l", "LIMIT", "-1", "-1"}, {"SORT", "l", "BY"}, {"SORT", "l", "GET"}, {"SORT", "l", "ALPHA", "DESC", "ASC"},
		{"SORT", "k"}, {"SORT", "h"}, {"SORT", "nok", "STORE", "l2"}, {"EXISTS", "l2"}, {"SORT_RO", "l", "STORE", "x"},
		{"SCAN", "0", "COUNT", "0"}, {"SCAN", "0", "COUNT", "-1"}, {"SCAN", "x"}, {"SCAN", "18446744073709551616"},
		{"SCAN", "0", "TYPE"}, {"SCAN", "0", "MATCH"}, {"SELECT", "5"}, {"SCAN", "1"}, {"SCAN", "7", "COUNT", "1"}, {"SELECT", "0"}, {"HSCAN", "h", "0", "NOVALUES"}, {"SSCAN", "s", "x"}, {"ZSCAN", "z", "0", "COUNT", "0"},
	})
}

// TestDifferentialWatch: a client WATCHes a key, another runs setup and a
// change, the first runs MULTI, PING, EXEC: the EXEC replies must be the
// same as Redis's (null when the change touched the key).
func TestDifferentialWatch(t *testing.T) {
	setup := [][]string{{"FLUSHALL"}, {"SET", "k", "v"}, {"RPUSH", "l", "a", "b"}, {"SADD", "s", "1", "2"}, {"ZADD", "z", "1", "a"}, {"HSET", "h", "f", "1"}}
	changes := []struct {
		key    string
		change []string
	}{
		{"nokey", []string{"DEL", "nokey"}}, {"l", []string{"LREM", "l", "0", "zz"}}, {"s", []string{"SADD", "s", "1"}},
		{"z", []string{"ZADD", "z", "XX", "5", "nomember"}}, {"z", []string{"ZADD", "z", "1", "a"}}, {"k", []string{"EXPIRE", "k", "100"}},
		{"k", []string{"PERSIST", "k"}}, {"h", []string{"HSET", "h", "f", "1"}}, {"l", []string{"LTRIM", "l", "0", "-1"}},
		{"s", []string{"SMOVE", "s", "s", "1"}}, {"k", []string{"RENAME", "k", "k"}}, {"x", []string{"COPY", "nok", "x"}},
		{"nos", []string{"SPOP", "nos"}}, {"dst", []string{"SINTERSTORE", "dst", "nos"}}, {"dst", []string{"ZRANGESTORE", "dst", "noz", "0", "-1"}},
		{"dst", []string{"SORT", "nok", "STORE", "dst"}}, {"l", []string{"LMOVE", "l", "l", "LEFT", "LEFT"}}, {"l", []string{"LSET", "l", "0", "a"}},
		{"z", []string{"ZINCRBY", "z", "0", "a"}}, {"h", []string{"HINCRBYFLOAT", "h", "f", "0"}}, {"h", []string{"HDEL", "h", "nof"}},
		{"s", []string{"SREM", "s", "9"}}, {"z", []string{"ZREM", "z", "nom"}}, {"z", []string{"ZREMRANGEBYSCORE", "z", "5", "6"}},
		{"k", []string{"EXPIRE", "k", "100", "XX"}}, {"k", []string{"FLUSHDB"}}, {"nokey", []string{"FLUSHALL"}}, {"k", []string{"SWAPDB", "0", "1"}},
		{"nokey", []string{"SWAPDB", "0", "1"}}, {"k", []string{"MOVE", "k", "1"}}, {"k", []string{"COPY", "k", "k", "DB", "1"}},
		{"l", []string{"LPOS", "l", "a"}}, {"dst", []string{"ZUNIONSTORE", "dst", "1", "noz"}}, {"s", []string{"SINTERCARD", "1", "s"}},
		{"z", []string{"ZMPOP", "1", "noz", "MIN"}}, {"l", []string{"LMPOP", "1", "nol", "LEFT"}}, {"k", []string{"EXPIRE", "k", "0"}},
		{"nokey", []string{"EXPIRE", "nokey", "0"}}, {"k", []string{"PEXPIREAT", "k", "1"}}, {"h", []string{"HSETNX", "h", "f", "2"}},
	}
	for _, proto := range []int{2, 3} {
		p := newDRPair(t, proto)
		o2, r2 := dialRaw(t, p.evAddr), dialRaw(t, p.rAddr)
		for _, c := range changes {
			for _, a := range setup {
				o2.do(a...)
				r2.do(a...)
			}
			script := [][]string{{"WATCH", c.key}}
			p.batch(script)
			g2, w2 := o2.do(c.change...), r2.do(c.change...)
			if g2 != w2 && c.change[0] != "SPOP" {
				t.Errorf("resp%d %q: evkv %q; redis %q", proto, c.change, g2, w2)
			}
			got, want := p.batch([][]string{{"MULTI"}, {"PING"}, {"EXEC"}})
			if got[2] != want[2] {
				t.Errorf("resp%d WATCH %s, other client %q, EXEC: evkv %q; redis %q", proto, c.key, c.change, got[2], want[2])
			}
		}
	}
}

func TestDifferentialEncodingsAndMulti(t *testing.T) {
	var ints, members []string
	for i := range 600 {
		ints = append(ints, strconv.Itoa(i))
		members = append(members, strconv.Itoa(i%5), "m"+strconv.Itoa(i))
	}
	long := strings.Repeat("x", 65)
	enc := func(k string) []string { return []string{"OBJECT", "ENCODING", k} }
	drCompare(t, [][]string{
		cat([]string{"SADD", "s"}, ints[:512]), enc("s"), {"SADD", "s", "512"}, enc("s"), cat([]string{"SREM", "s"}, ints[:510]), enc("s"), {"SCARD", "s"},
		{"SINTERSTORE", "s2", "s", "s"}, enc("s2"), {"SUNIONSTORE", "s3", "s"}, enc("s3"), {"COPY", "s", "s4"}, enc("s4"),
		{"SADD", "s5", "-0"}, enc("s5"), {"SADD", "s6", "9223372036854775808"}, enc("s6"), {"SADD", "s7", "-9223372036854775808"}, enc("s7"),
		{"SADD", "s8", "007"}, enc("s8"), {"SADD", "s9", " 1"}, enc("s9"), {"SMOVE", "s9", "s7", " 1"}, enc("s7"),
		cat([]string{"ZADD", "z"}, members[:256]), enc("z"), {"ZADD", "z", "1", "m128"}, enc("z"), {"ZREMRANGEBYRANK", "z", "0", "-3"}, enc("z"),
		{"ZRANGESTORE", "z2", "z", "0", "-1"}, enc("z2"), {"ZUNIONSTORE", "z3", "1", "z"}, enc("z3"), {"COPY", "z", "z4"}, enc("z4"),
		{"ZADD", "z5", "1", long}, enc("z5"), {"ZINTERSTORE", "z6", "1", "z5"}, enc("z6"), {"ZDIFFSTORE", "z7", "1", "z"}, enc("z7"),
		{"ZRANGESTORE", "z8", "z", "0", "-1", "BYSCORE", "LIMIT", "0", "1"}, enc("z8"), {"ZUNIONSTORE", "z9", "1", "s"}, enc("z9"),
		cat([]string{"HSET", "h"}, members[:1024]), enc("h"), {"HSET", "h", "x", "1"}, enc("h"), {"HSET", "h2", "a", long}, enc("h2"),
		{"HSET", "h3", long, "1"}, enc("h3"), {"COPY", "h2", "h4"}, enc("h4"), {"HDEL", "h2", "a"}, enc("h2"), {"EXISTS", "h2"},
		{"RPUSH", "l", long}, enc("l"), {"SORT", "s", "STORE", "l2"}, enc("l2"), {"LPUSH", "l3", "1"}, enc("l3"),
		{"MULTI"}, {"LPUSH", "l"}, {"SET", "a", "1"}, {"EXEC"}, {"EXISTS", "a"},
		{"MULTI"}, {"LPUSH", "s", "x"}, {"SET", "a", "1"}, {"INCR", "a"}, {"EXEC"},
		{"MULTI"}, {"SELECT", "99"}, {"SELECT", "1"}, {"DBSIZE"}, {"EXEC"}, {"DBSIZE"},
		{"MULTI"}, {"BLMPOP", "0", "1", "nol", "LEFT"}, {"BLPOP", "nol", "0"}, {"BZMPOP", "0", "1", "noz", "MIN"}, {"BLMOVE", "nol", "x", "LEFT", "LEFT", "0"}, {"EXEC"},
		{"MULTI"}, {"WATCH", "a"}, {"MULTI"}, {"DISCARD"}, {"DISCARD"}, {"EXEC"},
		{"MULTI"}, {"ZADD", "z", "nan", "a"}, {"ZADD", "z", "1"}, {"EXEC"},
		{"MULTI"}, {"SINTERCARD", "0", "s"}, {"EXEC"}, {"MULTI"}, {"EXPIRE", "a", "1", "NX", "XX"}, {"EXEC"},
		{"MULTI"}, {"SORT", "l", "STORE"}, {"EXEC"}, {"MULTI"}, {"HRANDFIELD", "h", "-1", "WITHVALUES", "x"}, {"EXEC"},
	})
}
