package kv

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evloop/evloop/resp"
)

// The differential test's commands over strings, bits, HyperLogLogs,
// geo sets, DUMP and RESTORE, and the key commands the other types'
// cases leave out.

var (
	drStrKeys = []string{"str", "str2", "hll", "nokey"}
	drValues  = []string{"", "a", "abc", "hello world", "1", "-1", "0", "10000", "123456789012", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "1.5", "-0", "+1", "007", " 1", "1e3", "inf", "nan", "\x00\xff\x80", "\xff\xf0\x00",
		strings.Repeat("x", 44), strings.Repeat("y", 45), strings.Repeat("ab", 40)}
	// drOffsets are string and bit offsets: small, past Redis's limits,
	// and not numbers. Past 100, SETBIT is given no valid bit and SETRANGE
	// nothing or too much to write, so that no server grows a value to
	// 512 MB.
	drOffsets  = []string{"0", "1", "3", "7", "8", "15", "20", "63", "64", "100", "-1", "x", "1.0", "536870912", "4294967296", "9223372036854775807"}
	drBitTypes = []string{"i1", "u1", "i5", "u7", "i8", "u8", "i16", "u16", "i32", "u32", "i63", "u63", "i64", "u64", "i65", "x8", "u0", "I8"}
	drGeoPts   = [][2]string{{"13.361389", "38.115556"}, {"15.087269", "37.502669"}, {"2.3488", "48.8534"}, {"-122.4194", "37.7749"},
		{"0", "0"}, {"-180", "-85.05112878"}, {"180", "85.05112878"}, {"181", "0"}, {"0", "85.06"}, {"x", "0"}, {"13.36", "38.11"}, {"13.4", "38.2"}}
	drUnits = []string{"m", "km", "ft", "mi", "M", "KM", "x"}
)

func (g *drGen) skey() string {
	if g.r.IntN(4) == 0 {
		return g.key()
	}
	return g.pick(drStrKeys)
}

func (g *drGen) val() string { return g.pick(drValues) }

// ttlOpt is an expiry option of SET or GETEX, far enough away that no key
// expires while a batch runs, or in the past, or malformed.
func (g *drGen) ttlOpt(getex bool) []string {
	switch g.r.IntN(10) {
	case 0:
		return []string{"EX", g.pick([]string{"100", "0", "-1", "x", "9223372036854775807", "1.5"})}
	case 1:
		return []string{"PX", g.pick([]string{"100000", "0", "-5", "9223372036854775807"})}
	case 2:
		return []string{"EXAT", g.pick([]string{"4000000000", "1", "0", "-1"})}
	case 3:
		return []string{"PXAT", g.pick([]string{"4000000000000", "1", "9223372036854775807"})}
	case 4:
		if getex {
			return []string{"PERSIST"}
		}
		return []string{"KEEPTTL"}
	case 5:
		return []string{"EX", "100", "PX", "100000"}
	}
	return nil
}

func (g *drGen) geoPoint() []string {
	p := g.pick2(drGeoPts)
	return []string{p[0], p[1]}
}

func (g *drGen) pick2(xs [][2]string) [2]string { return xs[g.r.IntN(len(xs))] }

func (g *drGen) geoKey() string {
	if g.r.IntN(5) == 0 {
		return g.key()
	}
	return "geo"
}

// geoShape is a search's origin, shape and options, GEOSEARCH's words or
// GEORADIUS's.
func (g *drGen) geoShape(search bool) []string {
	var args []string
	if search {
		if g.r.IntN(2) == 0 {
			args = append(args, "FROMMEMBER", g.mem())
		} else {
			args = cat(args, []string{"FROMLONLAT"}, g.geoPoint())
		}
		if g.r.IntN(2) == 0 {
			args = append(args, "BYRADIUS", g.pick([]string{"100", "200", "1000", "0", "-1", "x"}), g.pick(drUnits))
		} else {
			args = append(args, "BYBOX", g.pick([]string{"400", "1000", "0", "-1"}), g.pick([]string{"400", "100", "2000"}), g.pick(drUnits))
		}
		if g.r.IntN(10) == 0 {
			args = args[:len(args)-2]
		}
	}
	args = cat(args, g.opt(40, g.pick([]string{"ASC", "DESC"})), g.opt(30, "COUNT", g.pick([]string{"1", "2", "5", "0", "-1"})), g.opt(15, "ANY"),
		g.opt(30, "WITHDIST"), g.opt(30, "WITHCOORD"), g.opt(30, "WITHHASH"))
	return args
}

// valueCmd returns a command over strings, bits, HyperLogLogs, geo sets,
// DUMP payloads or keys, and how to compare its reply.
func (g *drGen) valueCmd() ([]string, drNorm) {
	r := g.r
	k := g.skey()
	switch r.IntN(44) {
	// strings
	case 0, 1:
		return cat([]string{"SET", k, g.val()}, g.opt(30, g.pick([]string{"NX", "XX", "nx"})), g.opt(20, "GET"), g.ttlOpt(false)), normExact
	case 2:
		return []string{g.pick([]string{"GET", "GETDEL", "STRLEN", "GET"}), k}, normExact
	case 3:
		return []string{"GETSET", k, g.val()}, normExact
	case 4:
		return cat([]string{"GETEX", k}, g.ttlOpt(true)), normExact
	case 5:
		switch r.IntN(3) {
		case 0:
			return []string{"SETNX", k, g.val()}, normExact
		case 1:
			return []string{"SETEX", k, g.pick([]string{"100", "0", "-1", "x", "9223372036854775807"}), g.val()}, normExact
		}
		return []string{"PSETEX", k, g.pick([]string{"100000", "0", "-1", "9223372036854775807"}), g.val()}, normExact
	case 6:
		return g.pairs([]string{g.pick([]string{"MSET", "MSETNX"})}, g.skey, g.val), normExact
	case 7:
		return cat([]string{"MGET", k}, []string{g.skey(), g.key()}[:r.IntN(3)]), normExact
	case 8:
		return []string{"APPEND", k, g.val()}, normExact
	case 9:
		off, v := g.pick(drOffsets), g.val()
		if n, err := strconv.Atoi(off); err == nil && n > 100 && r.IntN(2) == 0 {
			v = ""
		}
		return []string{"SETRANGE", k, off, v}, normExact
	case 10:
		return []string{g.pick([]string{"GETRANGE", "SUBSTR"}), k, g.int(), g.int()}, normExact
	case 11, 12:
		switch r.IntN(4) {
		case 0:
			return []string{g.pick([]string{"INCR", "DECR"}), k}, normExact
		case 1:
			return []string{g.pick([]string{"INCRBY", "DECRBY"}), k, g.int()}, normExact
		case 2:
			return []string{"INCRBYFLOAT", k, g.num()}, normExact
		}
		return []string{"SET", k, g.pick(drInts)}, normExact
	case 13:
		args := []string{"LCS", k, g.skey()}
		args = cat(args, g.opt(30, "LEN"), g.opt(40, "IDX"), g.opt(30, "MINMATCHLEN", g.pick([]string{"0", "1", "2", "-1", "x"})), g.opt(30, "WITHMATCHLEN"))
		return args, normExact
	// bits
	case 14:
		off, v := g.pick(drOffsets), g.pick([]string{"0", "1", "1", "2", "x"})
		if n, err := strconv.Atoi(off); err == nil && n > 100 {
			v = "x" // a valid offset this far would grow the value to 512 MB
		}
		return []string{"SETBIT", k, off, v}, normExact
	case 15:
		return []string{"GETBIT", k, g.pick(drOffsets)}, normExact
	case 16:
		return cat([]string{"BITCOUNT", k}, g.opt(60, g.int(), g.int()), g.opt(30, g.pick([]string{"BYTE", "BIT", "bit", "x"}))), normExact
	case 17:
		args := []string{"BITPOS", k, g.pick([]string{"0", "1", "1", "2"})}
		switch r.IntN(4) {
		case 1:
			args = append(args, g.int())
		case 2:
			args = append(args, g.int(), g.int())
		case 3:
			args = append(args, g.int(), g.int(), g.pick([]string{"BYTE", "BIT", "x"}))
		}
		return args, normExact
	case 18:
		op := g.pick([]string{"AND", "OR", "XOR", "NOT", "and", "NAND"})
		return cat([]string{"BITOP", op, g.skey(), k}, []string{g.skey(), g.key()}[:r.IntN(3)]), normExact
	case 19, 20:
		c := g.pick([]string{"BITFIELD", "BITFIELD", "BITFIELD_RO"})
		args := []string{c, k}
		for range r.IntN(3) + 1 {
			off := g.pick([]string{"0", "1", "5", "8", "31", "#0", "#1", "#3", "-1", "x", "#-1", "100"})
			switch r.IntN(5) {
			case 0:
				args = append(args, "SET", g.pick(drBitTypes), off, g.int())
			case 1:
				args = append(args, "INCRBY", g.pick(drBitTypes), off, g.int())
			case 2:
				args = append(args, "OVERFLOW", g.pick([]string{"WRAP", "SAT", "FAIL", "x"}))
			default:
				args = append(args, "GET", g.pick(drBitTypes), off)
			}
		}
		if r.IntN(10) == 0 {
			args = args[:len(args)-1]
		}
		return args, normExact
	// HyperLogLogs
	case 21:
		return cat([]string{"PFADD", g.pick([]string{"hll", "hll", k})}, g.mems(r.IntN(4)), g.opt(10, g.big("e", 300)...)), normExact
	case 22:
		return cat([]string{"PFCOUNT", g.pick([]string{"hll", "hll", k})}, g.opt(30, g.skey())), normExact
	case 23:
		return cat([]string{"PFMERGE", g.pick([]string{"hll", "str2", k}), g.skey()}, g.opt(40, g.skey())), normExact
	// geo sets
	case 24, 25:
		args := cat([]string{"GEOADD", g.geoKey()}, g.opt(20, g.pick([]string{"NX", "XX"})), g.opt(20, "CH"))
		for range r.IntN(3) + 1 {
			args = cat(args, g.geoPoint(), []string{g.mem()})
		}
		if r.IntN(10) == 0 {
			args = args[:len(args)-1]
		}
		return args, normExact
	case 26:
		return cat([]string{"GEODIST", g.geoKey(), g.mem(), g.mem()}, g.opt(60, g.pick(drUnits))), normExact
	case 27:
		return cat([]string{g.pick([]string{"GEOPOS", "GEOHASH"}), g.geoKey()}, g.mems(r.IntN(3))), normExact
	case 28, 29:
		return cat([]string{g.pick([]string{"GEOSEARCH", "GEOSEARCH", "GEOSEARCHSTORE"}), g.geoKey()}, g.geoShape(true)), normExact
	case 30:
		// distances are stored in geo2 alone (drScoresNorm)
		dst, dist := g.pick([]string{"geo2", "z1", "str"}), g.opt(40, "STOREDIST")
		if len(dist) > 0 {
			dst = "geo2"
		}
		return cat([]string{"GEOSEARCHSTORE", dst, g.geoKey()}, g.geoShape(true), dist), normExact
	case 31:
		c := g.pick([]string{"GEORADIUS", "GEORADIUS_RO", "GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"})
		args := []string{c, g.geoKey()}
		if strings.Contains(c, "MEMBER") {
			args = append(args, g.mem())
		} else {
			args = cat(args, g.geoPoint())
		}
		args = cat(args, []string{g.pick([]string{"200", "1000", "0", "-1"}), g.pick(drUnits)}, g.geoShape(false))
		if !strings.HasSuffix(c, "_RO") && r.IntN(4) == 0 {
			args = append(args, g.pick([]string{"STORE", "STOREDIST"}), "geo2")
		}
		return args, normExact
	// DUMP and RESTORE
	case 32:
		return []string{"DUMP", g.key()}, normLoose
	case 33, 34:
		var payload string
		switch {
		case len(g.payloads) == 0 || r.IntN(8) == 0:
			payload = g.pick([]string{"", "x", "\x00\x05hello\x0a\x00"})
		case r.IntN(6) == 0:
			// a byte flipped: the checksum is wrong
			p := []byte(g.pick(g.payloads))
			p[r.IntN(len(p))] ^= 0x20
			payload = string(p)
		default:
			payload = g.pick(g.payloads)
		}
		ttl := g.pick([]string{"0", "0", "100000", "-1", "x"})
		abs := g.opt(20, "ABSTTL")
		if len(abs) > 0 {
			ttl = g.pick([]string{"0", "1", "4000000000000"})
		}
		args := cat([]string{"RESTORE", g.key(), ttl, payload}, g.opt(40, "REPLACE"), abs)
		switch r.IntN(5) {
		case 0:
			args = append(args, "IDLETIME", g.pick([]string{"0", "1000", "100000", "-1", "x"}))
		case 1:
			args = append(args, "FREQ", g.pick([]string{"0", "100", "255", "256", "-1"}))
		case 2:
			args = append(args, "IDLETIME", "1000", "FREQ", "5")
		}
		return args, normExact
	case 35:
		sub := g.pick([]string{"ENCODING", "FREQ", "IDLETIME", "REFCOUNT", "FREQ", "IDLETIME", "x"})
		n := normExact
		if sub == "IDLETIME" {
			n = normIdle
		}
		return cat([]string{"OBJECT", sub, g.key()}, g.opt(10, "x")), n
	// keys
	case 36:
		return cat([]string{g.pick([]string{"EXISTS", "TOUCH", "UNLINK", "DEL"}), g.key()}, []string{g.key(), g.key(), k}[:r.IntN(4)]), normExact
	case 37:
		return []string{g.pick([]string{"DBSIZE", "RANDOMKEY"})}, normLoose
	case 38:
		return []string{"KEYS", g.pick([]string{"*", "s*", "*1", "?tr*", "[a-l]*", "\\s*", "[^z]*"})}, normSorted
	case 39:
		return []string{"SWAPDB", g.pick([]string{"0", "1", "x", "16"}), g.pick([]string{"1", "0", "-1"})}, normExact
	case 40:
		return []string{"TYPE", g.skey()}, normExact
	// sort by and get
	case 41:
		key := g.pick([]string{"l1", "s1", "z1", "l2"})
		by := g.opt(50, "BY", g.pick([]string{"w_*", "h1->*", "h2->f0", "*->a", "nosort", "w_*->"}))
		args := cat([]string{g.pick([]string{"SORT", "SORT_RO"}), key}, by)
		for range r.IntN(3) {
			args = append(args, "GET", g.pick([]string{"#", "w_*", "h1->*", "h2->a", "*", "str", "*->f0"}))
		}
		alpha, limit, store := g.opt(30, "ALPHA"), g.opt(20, "LIMIT", g.int(), g.int()), g.opt(20, "STORE", g.key())
		norm := normExact
		// ties among weights sorted ALPHA, and a set not sorted (any of
		// the keys may hold one), are in Redis's dict order
		if len(by) > 0 && (len(alpha) > 0 || !strings.Contains(by[1], "*")) {
			store, norm = nil, normSorted
			if len(limit) > 0 {
				norm = normRandomLen
			}
		}
		return cat(args, alpha, g.opt(30, "DESC"), limit, store), norm
	// arity errors
	case 42:
		c := g.pick([]string{"GET", "SET", "GETEX", "GETSET", "GETDEL", "SETNX", "SETEX", "PSETEX", "MSET", "MSETNX", "MGET", "APPEND", "SETRANGE",
			"GETRANGE", "INCR", "INCRBY", "INCRBYFLOAT", "DECRBY", "LCS", "SETBIT", "GETBIT", "BITCOUNT", "BITPOS", "BITOP", "BITFIELD", "BITFIELD_RO",
			"PFADD", "PFCOUNT", "PFMERGE", "GEOADD", "GEODIST", "GEOPOS", "GEOHASH", "GEOSEARCH", "GEOSEARCHSTORE", "GEORADIUS", "DUMP", "RESTORE",
			"TOUCH", "UNLINK", "KEYS", "DBSIZE", "SWAPDB", "STRLEN", "SUBSTR"})
		return cat([]string{c}, []string{k, g.val(), g.val()}[:r.IntN(4)]), normLoose
	}
	return []string{"PING"}, normExact
}

// drScoresNorm is how the scores of key are compared: geo2's are
// distances STOREDIST stored, which Redis computes with the C library's
// sin, cos and asin, and evkv with Go's, the two a unit in the last place
// apart at times.
func drScoresNorm(key string) drNorm {
	if key == "geo2" {
		return normGeoDist
	}
	return normExact
}

// drRoundScores is v with each number in it, a double or a bulk string's
// decimal text, to 12 significant digits.
func drRoundScores(v resp.Value) resp.Value {
	if v.Elems != nil {
		v.Elems = slices.Clone(v.Elems)
		for i, e := range v.Elems {
			v.Elems[i] = drRoundScores(e)
		}
		return v
	}
	if v.Type != resp.Double && (v.Type != resp.BulkString || !bytes.ContainsAny(v.Str, ".e")) {
		return v
	}
	if f, err := strconv.ParseFloat(string(v.Str), 64); err == nil {
		v.Str = strconv.AppendFloat(nil, f, 'g', 12, 64)
	}
	return v
}

// drPayloads returns DUMP payloads of values of every type and encoding,
// made by rc's server, for RESTORE to take.
func drPayloads(rc *rawConn) []string {
	var ints, fields, scored []string
	for i := range 600 {
		ints = append(ints, strconv.Itoa(i*7))
		fields = append(fields, "f"+strconv.Itoa(i), strconv.Itoa(i))
		scored = append(scored, strconv.Itoa(i%7), "m"+strconv.Itoa(i))
	}
	script := [][]string{
		{"SET", "p:s", "hello"}, {"SET", "p:i", "12345"}, {"SET", "p:big", "123456789012345"}, {"SET", "p:lzf", strings.Repeat("ab", 100)},
		{"SET", "p:e", ""}, {"RPUSH", "p:l", "a", "1", "-300", "70000", "b"}, cat([]string{"RPUSH", "p:ql"}, ints),
		{"RPUSH", "p:lbig", strings.Repeat("v", 9000), "x"}, {"SADD", "p:is", "3", "1", "-70000"}, cat([]string{"SADD", "p:bigs"}, ints),
		{"SADD", "p:hs", "a", "b", "1"}, {"HSET", "p:h", "f", "v", "n", "12"}, cat([]string{"HSET", "p:bigh"}, fields),
		{"ZADD", "p:z", "1.5", "a", "2", "b", "-inf", "c", "inf", "d", "0.1", "e"}, cat([]string{"ZADD", "p:bigz"}, scored[:300]),
		{"PFADD", "p:hll", "a", "b", "c"}, {"GEOADD", "p:geo", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
	}
	var payloads []string
	for _, args := range script {
		rc.do(args...)
		v := drParse(rc.do("DUMP", args[1]))
		if len(v.Str) == 0 {
			panic(fmt.Sprintf("DUMP after %q: %q", args, v.Str))
		}
		payloads = append(payloads, string(v.Str))
	}
	rc.do("FLUSHALL")
	return payloads
}

// drCrossRestore DUMPs every key of database 0 on each server and
// RESTOREs the payload on the other, in database 9, and returns where
// the values so made differ, Redis's payload in evkv against evkv's in
// Redis.
func drCrossRestore(p *drPair) []string {
	keys := append(slices.Clone(drKeys), "zlex", "geo2")
	var dumps [][]string
	for _, k := range keys {
		dumps = append(dumps, []string{"DUMP", k})
	}
	ours, theirs := p.batch(dumps)
	inspect := [][]string{{"TYPE", "rt"}, {"OBJECT", "ENCODING", "rt"}, {"GET", "rt"}, {"LRANGE", "rt", "0", "-1"},
		{"HGETALL", "rt"}, {"SMEMBERS", "rt"}, {"ZRANGE", "rt", "0", "-1", "WITHSCORES"}, {"FLUSHDB"}}
	var diffs []string
	var oc, tc, steps [][]string
	for i, k := range keys {
		vo, vt := drParse(ours[i]), drParse(theirs[i])
		if vo.IsNull != vt.IsNull || vo.Str == nil != (vt.Str == nil) {
			diffs = append(diffs, fmt.Sprintf("DUMP %s: evkv %q; redis %q", k, ours[i], theirs[i]))
			continue
		}
		if vo.Str == nil {
			continue
		}
		oc = append(oc, []string{"RESTORE", "rt", "0", string(vt.Str)})
		tc = append(tc, []string{"RESTORE", "rt", "0", string(vo.Str)})
		steps = append(steps, []string{"DUMP", k, "RESTORE"})
		for _, args := range inspect {
			oc, tc = append(oc, args), append(tc, args)
			steps = append(steps, slices.Concat([]string{"DUMP", k, "RESTORE"}, args))
		}
	}
	sel := func(db string, cmds [][]string) [][]string {
		return slices.Concat([][]string{{"SELECT", db}}, cmds, [][]string{{"SELECT", "0"}})
	}
	p.ours.sendTogether(sel("9", oc)...)
	p.theirs.sendTogether(sel("9", tc)...)
	var got, want []string
	for range len(oc) + 2 {
		got = append(got, p.ours.read())
	}
	for range len(tc) + 2 {
		want = append(want, p.theirs.read())
	}
	for i, step := range steps {
		g, w := got[i+1], want[i+1]
		switch up := step[len(step)-2]; {
		case up == "HGETALL" || up == "SMEMBERS":
			g, w = drNormalizeArgs(normSorted, g, false), drNormalizeArgs(normSorted, w, false)
		case up == "ZRANGE":
			n := drScoresNorm(step[1])
			g, w = drNormalizeArgs(n, g, false), drNormalizeArgs(n, w, false)
		}
		if g != w {
			diffs = append(diffs, fmt.Sprintf("%q: evkv %q; redis %q", step, g, w))
		}
	}
	return diffs
}

func TestDifferentialValueEdges(t *testing.T) {
	drCompare(t, [][]string{
		{"SET", "k", "v"}, {"OBJECT", "FREQ", "k"}, {"OBJECT", "FREQ", "nok"}, {"OBJECT", "REFCOUNT", "k"}, {"OBJECT", "IDLETIME", "nok"},
		{"SET", "i", "100"}, {"OBJECT", "REFCOUNT", "i"}, {"OBJECT", "ENCODING", "i"}, {"SET", "i", "10000"}, {"OBJECT", "REFCOUNT", "i"}, {"OBJECT", "ENCODING", "i"},
		{"OBJECT", "FREQ", "nok"}, {"OBJECT", "IDLETIME", "nok"},
		{"DUMP", "k"}, {"RESTORE", "r", "0", "\x00\x01v\n\x00\x1e\xbdi\x98\xc8\xd1\x1c\xa1", "FREQ", "100"}, {"OBJECT", "FREQ", "r"},
		{"RESTORE", "r", "0", "\x00\x01v\n\x00\x1e\xbdi\x98\xc8\xd1\x1c\xa1", "REPLACE", "IDLETIME", "10"}, {"OBJECT", "FREQ", "r"},
		{"RESTORE", "r", "0", "\x00\x01v\n\x00\x1e\xbdi\x98\xc8\xd1\x1c\xa1", "REPLACE", "IDLETIME", "1000"},
		{"RESTORE", "r", "0", "\x00\x01v\n\x00\x1e\xbdi\x98\xc8\xd1\x1c\xa1", "REPLACE", "FREQ", "1", "IDLETIME", "1"},
		{"RESTORE", "r", "0", "\x00\x01v\n\x00\x1e\xbdi\x98\xc8\xd1\x1c\xa1", "REPLACE", "ABSTTL"}, {"PTTL", "r"},
		{"RESTORE", "r", "1", "\x00\x01v\n\x00\x1e\xbdi\x98\xc8\xd1\x1c\xa1", "REPLACE", "ABSTTL"}, {"EXISTS", "r"},
		{"RESTORE", "r", "-1", "x", "REPLACE"}, {"RESTORE", "k", "x", "x"}, {"RESTORE", "r", "0", "x", "IDLETIME"}, {"RESTORE", "r", "0", "x", "FREQ", "x"},
		{"SET", "n", "9223372036854775807"}, {"INCR", "n"}, {"INCRBY", "n", "0"}, {"DECRBY", "n", "-9223372036854775808"}, {"DECRBY", "n", "9223372036854775807"},
		{"DECR", "n"}, {"DECR", "n"}, {"GET", "n"}, {"INCRBYFLOAT", "n", "1"}, {"GET", "n"}, {"INCRBYFLOAT", "n", "inf"}, {"INCRBYFLOAT", "n", "1e308"},
		{"INCRBYFLOAT", "n", "1e308"}, {"SET", "f", "1.5"}, {"INCR", "f"}, {"INCRBYFLOAT", "f", "0"}, {"INCRBYFLOAT", "f", "1.0e1"}, {"GET", "f"},
		{"INCRBY", "nok2", "-9223372036854775808"}, {"DECRBY", "nok3", "-9223372036854775808"}, {"DECR", "nok2"},
		{"SETRANGE", "nok", "536870912", ""}, {"SETRANGE", "k", "536870912", ""}, {"SETRANGE", "k", "536870912", "x"}, {"SETRANGE", "k", "536870911", "xy"},
		{"SETRANGE", "k", "-1", "x"}, {"SETRANGE", "k", "9223372036854775807", "x"}, {"SETRANGE", "i", "1", "x"}, {"OBJECT", "ENCODING", "i"}, {"GET", "i"},
		{"GETRANGE", "k", "-9223372036854775808", "9223372036854775807"}, {"GETRANGE", "k", "9223372036854775807", "-9223372036854775808"}, {"GETRANGE", "i", "-1", "-1"},
		{"GETRANGE", "nok", "0", "-1"}, {"GETRANGE", "k", "1", "0"}, {"GETRANGE", "k", "-100", "-50"},
		{"SETBIT", "b", "4294967296", "1"}, {"SETBIT", "b", "-1", "1"}, {"SETBIT", "b", "7", "2"}, {"SETBIT", "b", "0", "1"}, {"GETBIT", "b", "4294967295"},
		{"BITCOUNT", "b", "0", "-1", "BIT"}, {"BITCOUNT", "b", "0"}, {"BITPOS", "b", "0", "0", "-1", "BIT"}, {"BITPOS", "b", "1", "-9223372036854775808"},
		{"BITFIELD", "bf", "SET", "i64", "0", "-9223372036854775808", "INCRBY", "i64", "0", "-1", "OVERFLOW", "SAT", "INCRBY", "i64", "0", "-1"},
		{"BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u63", "0", "9223372036854775807", "INCRBY", "u63", "0", "1", "GET", "u63", "0"},
		{"BITFIELD", "bf", "SET", "u64", "0", "1"}, {"BITFIELD", "bf", "GET", "i65", "0"}, {"BITFIELD", "bf", "SET", "i8", "#4294967295", "1"},
		{"BITFIELD", "bf", "SET", "i8", "4294967288", "1", "GET", "x", "0"}, {"BITFIELD", "bf", "GET", "u8", "-1"}, {"BITFIELD_RO", "bf", "INCRBY", "u8", "0", "1"},
		{"SET", "a", "ohmytext"}, {"SET", "b", "mynewtext"}, {"LCS", "a", "b"}, {"LCS", "a", "b", "LEN"}, {"LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"},
		{"LCS", "a", "b", "IDX", "LEN"}, {"LCS", "a", "b", "MINMATCHLEN", "-1", "IDX"}, {"LCS", "a", "nok", "IDX"}, {"LCS", "a", "z"}, {"LCS", "a", "b", "x"},
		{"GETEX", "a", "EX", "0"}, {"GETEX", "a", "PX", "9223372036854775807"}, {"GETEX", "a", "EXAT", "9223372036854775807"}, {"GETEX", "a", "EX", "100", "PERSIST"},
		{"GETEX", "a", "PERSIST", "PERSIST"}, {"GETEX", "a", "EX", "100"}, {"TTL", "a"}, {"GETEX", "a", "PERSIST"}, {"TTL", "a"}, {"GETEX", "a", "PXAT", "1"}, {"EXISTS", "a"},
		{"SET", "a", "x", "EX", "9223372036854775807"}, {"SET", "a", "x", "PX", "9223372036854775807"}, {"SET", "a", "x", "EXAT", "9223372036854775807"},
		{"SET", "a", "x", "KEEPTTL", "EX", "1"}, {"SET", "a", "x", "GET", "NX"}, {"SET", "z", "x", "GET"}, {"SETEX", "a", "9223372036854775807", "x"},
		{"PSETEX", "a", "0", "x"}, {"SET", "a", "x", "EXAT", "1"}, {"EXISTS", "a"},
		{"MSET", "a"}, {"MSET", "a", "1", "b"}, {"MSETNX", "a", "1", "a", "2"}, {"GET", "a"},
		{"PFADD", "k", "a"}, {"PFCOUNT", "k"}, {"PFMERGE", "k", "nok"}, {"PFADD", "h", "a", "b"}, {"GET", "h"}, {"PFCOUNT", "h"}, {"GET", "h"},
		{"APPEND", "h", "x"}, {"PFCOUNT", "h"}, {"PFADD", "h", "c"},
	})
}
