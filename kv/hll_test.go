package kv

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evloop/evloop/resp"
)

// hllHeader is the header of a HyperLogLog of encoding enc whose cached
// cardinality is card (its top bit set: stale).
func hllHeader(enc byte, card uint64) string {
	b := []byte("HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	b[4] = enc
	binary.LittleEndian.PutUint64(b[8:], card)
	return string(b)
}

// hllDenseOf is a dense HyperLogLog whose registers are all v, its cache
// stale.
func hllDenseOf(v uint8) string {
	var regs [hllRegisters]uint8
	for i := range regs {
		regs[i] = v
	}
	b := make([]byte, hllDenseSize-hllHdrSize)
	packDense(b, &regs)
	return hllHeader(hllDense, 1<<63) + string(b)
}

// hllElement returns the first of "e0", "e1", ... that falls to a
// register in [lo, hi) with a run of at most maxCount.
func hllElement(lo, hi int, maxCount uint8) string {
	for n := 0; ; n++ {
		e := "e" + strconv.Itoa(n)
		if i, c := hllPatLen([]byte(e)); i >= lo && i < hi && c <= maxCount {
			return e
		}
	}
}

// hllScript exercises the HyperLogLog commands' replies and errors, on
// values they make and on strings that are not theirs, and what the
// string commands then say of the values.
func hllScript() [][]string {
	empty := hllHeader(hllSparse, 0)
	low := hllElement(0, 255, 32)
	high := hllElement(300, hllRegisters, 32)
	return [][]string{
		// PFADD, PFCOUNT and the cache.
		{"PFADD", "h"}, {"EXISTS", "h"}, {"GET", "h"}, {"OBJECT", "ENCODING", "h"}, {"STRLEN", "h"}, {"PFCOUNT", "h"}, {"GET", "h"},
		{"PFADD", "h", "a", "b", "c"}, {"PFADD", "h", "a", "b", "c"}, {"PFADD", "h", ""}, {"GET", "h"}, {"PFCOUNT", "h"}, {"PFCOUNT", "h"},
		{"GETRANGE", "h", "15", "15"}, {"PFADD", "h", "a", "b", "c"}, {"GETRANGE", "h", "15", "15"}, {"PFADD", "h", "1", "2", "3"},
		{"GETRANGE", "h", "8", "15"}, {"PFCOUNT", "h"}, {"GET", "h"}, {"TYPE", "h"}, {"OBJECT", "ENCODING", "h"},
		{"PFADD", "n", "1", "2", "3", "4", "5"}, {"PFCOUNT", "n"}, {"PFADD", "n", "6", "7", "8", "8", "9", "10"}, {"PFCOUNT", "n"},
		{"PFCOUNT", "nokey"}, {"PFCOUNT", "nokey", "nokey2"}, {"EXISTS", "nokey"},
		// PFDEBUG.
		{"PFDEBUG", "ENCODING", "h"}, {"PFDEBUG", "DECODE", "h"}, {"PFDEBUG", "decode", "n"}, {"PFDEBUG", "GETREG", "n"},
		{"PFDEBUG", "ENCODING", "n"}, {"PFDEBUG", "DECODE", "n"}, {"GET", "n"}, {"PFDEBUG", "TODENSE", "n"}, {"PFDEBUG", "TODENSE", "h"},
		{"GET", "h"}, {"PFCOUNT", "h"}, {"PFDEBUG", "GETREG", "h"}, {"PFDEBUG", "NOSUCH", "h"}, {"PFDEBUG", "NOSUCH", "nokey"},
		{"PFDEBUG", "GETREG", "nokey"}, {"PFDEBUG", "getreg\x00x", "h"}, {"PFDEBUG", "x\r\ny\x00z", "h"}, {"PFDEBUG", "", "h"},
		{"PFADD", "h", "x", "y", "z"}, {"GET", "h"}, {"PFCOUNT", "h"},
		// PFMERGE.
		{"PFADD", "m1", "a", "b", "c"}, {"PFADD", "m2", "b", "c", "d"}, {"PFADD", "m3", "c", "d", "e"}, {"PFMERGE", "m", "m1", "m2", "m3"},
		{"PFCOUNT", "m"}, {"GET", "m"}, {"PFMERGE", "m", "h"}, {"GET", "m"}, {"PFDEBUG", "ENCODING", "m"}, {"PFMERGE", "m4", "m1", "nokey"},
		{"GET", "m4"}, {"PFMERGE", "m5"}, {"GET", "m5"}, {"PFMERGE", "m5"}, {"GET", "m5"}, {"PFMERGE", "m1", "m2"}, {"GET", "m1"},
		{"PFCOUNT", "m1", "m2", "m3"}, {"PFCOUNT", "m1", "m1"}, {"PFCOUNT", "h", "m1", "nokey"}, {"GET", "m1"},
		{"PFCOUNT", "m1"}, {"PFMERGE", "m1", "m1"}, {"GET", "m1"}, {"OBJECT", "ENCODING", "m4"},
		// Wrong types and strings that are not HyperLogLogs.
		{"SET", "s", "bar"}, {"PFADD", "s", "1"}, {"PFADD", "s"}, {"PFCOUNT", "s"}, {"PFCOUNT", "h", "s"}, {"PFMERGE", "d", "s"},
		{"EXISTS", "d"}, {"PFMERGE", "s", "h"}, {"PFDEBUG", "ENCODING", "s"}, {"PFDEBUG", "NOSUCH", "s"}, {"OBJECT", "ENCODING", "s"},
		{"LPUSH", "l", "a"}, {"PFADD", "l", "x"}, {"PFCOUNT", "l"}, {"PFCOUNT", "h", "l"}, {"PFCOUNT", "s", "l"}, {"PFMERGE", "d", "h", "l"},
		{"PFMERGE", "l", "h"}, {"PFDEBUG", "TODENSE", "l"}, {"PFDEBUG", "NOSUCH", "l"},
		{"SET", "i", "12345678901234567"}, {"PFCOUNT", "i"}, {"SET", "i", "HYLL"}, {"PFCOUNT", "i"},
		{"SET", "e", empty[:15]}, {"PFCOUNT", "e"}, {"SET", "e", "HYLX" + empty[4:]}, {"PFCOUNT", "e"},
		{"SET", "e", hllHeader(2, 0) + "\x7f\xff"}, {"PFCOUNT", "e"}, {"SET", "e", hllHeader(hllDense, 0) + "\x7f\xff"}, {"PFCOUNT", "e"},
		{"SET", "e", hllDenseOf(1)[:hllDenseSize-1]}, {"PFCOUNT", "e"}, {"SET", "e", hllDenseOf(1) + "x"}, {"PFCOUNT", "e"},
		{"PFADD", "c", "a", "b", "c"}, {"SETRANGE", "c", "0", "0123"}, {"PFCOUNT", "c"}, {"PFADD", "c", "a"},
		{"PFADD", "c2", "a", "b", "c"}, {"SETRANGE", "c2", "4", "x"}, {"PFCOUNT", "c2"},
		{"PFADD", "c3", "a", "b", "c"}, {"SETRANGE", "c3", "4", "\x00"}, {"PFCOUNT", "c3"},
		// Corrupt registers: too many, too few (none at all).
		{"PFADD", "t", "a", "b", "c"}, {"APPEND", "t", "hello"}, {"PFCOUNT", "t"}, {"PFCOUNT", "t", "h"}, {"PFMERGE", "d2", "t"}, {"EXISTS", "d2"},
		{"PFMERGE", "t", "h"}, {"PFDEBUG", "TODENSE", "t"}, {"PFDEBUG", "GETREG", "t"}, {"PFDEBUG", "DECODE", "t"}, {"PFADD", "t", "x"},
		{"GET", "t"}, {"OBJECT", "ENCODING", "t"},
		{"SET", "z", empty}, {"PFCOUNT", "z"}, {"PFCOUNT", "z", "h"}, {"PFADD", "z", "a"}, {"PFADD", "z"}, {"PFDEBUG", "DECODE", "z"},
		{"PFDEBUG", "TODENSE", "z"}, {"PFMERGE", "z", "h"}, {"PFMERGE", "d3", "z"}, {"GET", "z"},
		// Sparse registers covering 16383: the registers before the one
		// missing are set, and stay set, unlogged.
		{"SET", "f", empty + "\x7f\xfe"}, {"PFADD", "f", low, high, "x"}, {"GET", "f"}, {"PFCOUNT", "f"}, {"PFADD", "f", high},
		// A VAL past the last register: an error to PFCOUNT of the key
		// alone, not to its merges, which stop before it.
		{"SET", "v", empty + "\x7f\xff\x80\x7f"}, {"PFCOUNT", "v"}, {"PFCOUNT", "v", "h"}, {"PFMERGE", "d4", "v"}, {"PFCOUNT", "d4"},
		{"PFDEBUG", "DECODE", "v"}, {"PFDEBUG", "TODENSE", "v"}, {"PFCOUNT", "v"},
		// An XZERO cut short at the end reads the byte after it as 0.
		{"SET", "x", empty + "\x40\xfe\x7f"}, {"PFCOUNT", "x"}, {"PFDEBUG", "DECODE", "x"}, {"PFCOUNT", "x", "h"}, {"PFADD", "x", low},
		{"GET", "x"}, {"PFCOUNT", "x"}, {"SET", "x2", empty + "\x40\xfe\x7f"}, {"PFDEBUG", "TODENSE", "x2"}, {"GET", "x2"},
		{"SET", "x3", empty + "\x7f"}, {"PFCOUNT", "x3"}, {"PFDEBUG", "DECODE", "x3"},
		// Cached cardinalities, valid or not, as found.
		{"SET", "k", hllHeader(hllSparse, 12345) + "\x7f\xff"}, {"PFCOUNT", "k"}, {"PFADD", "k", "a"}, {"GETRANGE", "k", "8", "15"}, {"PFCOUNT", "k"},
		{"SET", "k", hllHeader(hllSparse, 1<<63-1) + "\x7f\xff"}, {"PFCOUNT", "k"}, {"PFMERGE", "k2", "k"}, {"PFCOUNT", "k2"},
		{"SET", "k", hllHeader(hllSparse, 1<<63|77) + "\x7f\xff"}, {"PFDEBUG", "TODENSE", "k"}, {"GETRANGE", "k", "0", "15"}, {"PFCOUNT", "k"},
		// Dense registers past what a hash gives; nothing left to divide
		// by: Redis's llroundl answer.
		{"SET", "r50", hllDenseOf(50)}, {"PFCOUNT", "r50"}, {"PFCOUNT", "r50"}, {"GETRANGE", "r50", "8", "15"}, {"PFCOUNT", "r50", "h"},
		{"SET", "r51", hllDenseOf(51)}, {"PFCOUNT", "r51"}, {"SET", "r63", hllDenseOf(63)}, {"PFCOUNT", "r63"}, {"PFCOUNT", "r63", "nokey"},
		{"SET", "r1", hllDenseOf(1)}, {"PFCOUNT", "r1"}, {"SET", "r20", hllDenseOf(20)}, {"PFCOUNT", "r20"}, {"PFADD", "r20", "a"},
		{"PFMERGE", "r1", "h"}, {"PFCOUNT", "r1"}, {"PFDEBUG", "DECODE", "r1"}, {"PFMERGE", "sp", "h", "r1"}, {"PFDEBUG", "ENCODING", "sp"},
		// Values made by a server's own string commands.
		{"SET", "u", empty + "\x7f\xff"}, {"OBJECT", "ENCODING", "u"}, {"PFCOUNT", "u"}, {"OBJECT", "ENCODING", "u"},
		{"SET", "u", empty + "\x7f\xff"}, {"PFCOUNT", "u", "h"}, {"OBJECT", "ENCODING", "u"},
		{"PFDEBUG", "ENCODING", "u"}, {"OBJECT", "ENCODING", "u"}, {"SET", "u", empty + "\x7f\xff"}, {"PFADD", "u"}, {"OBJECT", "ENCODING", "u"},
		{"COPY", "h", "hc"}, {"PFADD", "hc", "new"}, {"GET", "h"}, {"GET", "hc"}, {"PFCOUNT", "hc", "h"},
		{"SET", "ttl", "x", "EX", "1000"}, {"DEL", "ttl"}, {"PFADD", "ttl", "a"}, {"EXPIRE", "ttl", "1000"}, {"PFADD", "ttl", "b"},
		{"PFMERGE", "ttl", "h"}, {"PFCOUNT", "ttl"}, {"TTL", "ttl"},
		// In transactions.
		{"MULTI"}, {"PFADD", "tx", "a"}, {"PFCOUNT", "tx"}, {"PFMERGE", "tx", "h"}, {"PFCOUNT", "tx"}, {"PFADD", "s", "a"}, {"GET", "tx"}, {"EXEC"},
		{"MULTI"}, {"PFADD"}, {"PFCOUNT", "tx"}, {"EXEC"},
	}
}

func TestCompatHllCommands(t *testing.T) {
	compareWithRedis(t, hllScript())
}

func TestCompatHllCommandsRESP3(t *testing.T) {
	compareWithRedis(t, append([][]string{{"HELLO", "3"}}, hllScript()...))
}

func TestCompatHllArity(t *testing.T) {
	var script [][]string
	for _, name := range []string{"PFADD", "PFCOUNT", "PFMERGE", "PFDEBUG", "PFSELFTEST"} {
		if name != "PFSELFTEST" { // which runs for seconds (TestHllGoRedis runs it)
			script = append(script, []string{name})
		}
		script = append(script, []string{strings.ToLower(name), "x"}, []string{name, "ENCODING", "k"}, []string{name, "k", "1", "0"})
	}
	compareWithRedis(t, script)
}

// TestCompatHllCommandInfo compares what COMMAND INFO and DOCS say of
// each HyperLogLog command with Redis's.
func TestCompatHllCommandInfo(t *testing.T) {
	compareCommandInfo(t, "pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest")
}

// hllEventScript writes HyperLogLogs in every way that sends an event or
// might: PFMERGE's event is pfadd; PFCOUNT writing the cache, and PFDEBUG
// converting, send none.
var hllEventScript = [][]string{
	{"PFADD", "h"}, {"PFADD", "h"}, {"PFADD", "h", "a", "b"}, {"PFADD", "h", "a"}, {"PFCOUNT", "h"}, {"PFCOUNT", "h", "nokey"},
	{"PFMERGE", "m", "h"}, {"PFMERGE", "m", "h"}, {"PFMERGE", "m2"}, {"PFDEBUG", "TODENSE", "m"}, {"PFDEBUG", "GETREG", "m2"},
	{"PFDEBUG", "ENCODING", "h"}, {"SET", "s", "x"}, {"PFADD", "s", "a"}, {"PFMERGE", "s", "h"}, {"PFMERGE", "d", "s"},
	{"APPEND", "m", "x"}, {"PFADD", "m", "a"}, {"PFCOUNT", "m"}, {"PFADD", "h", "c", "d"}, {"PFCOUNT", "h", "m2"},
	{"SET", "f", hllHeader(hllSparse, 0) + "\x7f\xfe"}, {"PFADD", "f", hllElement(0, 100, 32), hllElement(16383, 16384, 32)},
	{"SET", "t", "v", "EX", "100"}, {"DEL", "t"}, {"PFADD", "t", "a"}, {"PFCOUNT", "t"},
}

func TestCompatHllEvents(t *testing.T) {
	compareEvents(t, hllEventScript)
}

func TestCompatHllKeymissEvents(t *testing.T) {
	compareEventsOf(t, "KEm", append(slices.Clone(hllEventScript), []string{"PFCOUNT", "nokey", "h", "nokey2"},
		[]string{"PFMERGE", "new", "nokey", "h"}, []string{"PFDEBUG", "ENCODING", "nokey"}))
}

// TestCompatHllKeyspaceStats compares the keyspace hits and misses and
// the changes counted: a change per register PFADD raises (and one for
// the key it creates), one for a cache PFCOUNT writes, and one for a
// conversion PFDEBUG makes.
func TestCompatHllKeyspaceStats(t *testing.T) {
	compareStats(t, append(slices.Clone(hllEventScript),
		[]string{"PFADD", "h", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, []string{"PFCOUNT", "h", "nokey", "h"},
		[]string{"PFMERGE", "new", "nokey", "h"}, []string{"PFDEBUG", "ENCODING", "nokey"}, []string{"PFCOUNT", "nokey"},
		[]string{"LPUSH", "l", "a"}, []string{"PFCOUNT", "l"}, []string{"PFCOUNT", "h", "l"}, []string{"PFMERGE", "h", "l"}),
		"keyspace_", "rdb_changes_since_last_save")
}

// TestCompatHllLog compares the append-only file with Redis's: PFADD is
// logged when it changes a register, PFCOUNT when it writes the cache,
// PFDEBUG when it converts; PFADD that fails on a corrupt value is not,
// whatever it set.
func TestCompatHllLog(t *testing.T) {
	run := func(rc *rawConn) {
		for _, args := range [][]string{
			{"PFADD", "h", "a", "b", "c"}, {"PFADD", "h", "a"}, {"PFCOUNT", "h"}, {"PFCOUNT", "h"}, {"PFCOUNT", "h", "nokey"},
			{"PFADD", "h2"}, {"PFMERGE", "m", "h", "h2"}, {"PFDEBUG", "TODENSE", "m"}, {"PFDEBUG", "TODENSE", "m"}, {"PFDEBUG", "GETREG", "h2"},
			{"PFDEBUG", "GETREG", "m"}, {"PFDEBUG", "ENCODING", "h"}, {"PFDEBUG", "DECODE", "h"}, {"PFADD", "m", "x", "y"},
			{"SET", "f", hllHeader(hllSparse, 0) + "\x7f\xfe"}, {"PFADD", "f", hllElement(0, 100, 32), hllElement(16383, 16384, 32)},
			{"PFCOUNT", "f"}, {"MULTI"}, {"PFCOUNT", "m"}, {"PFADD", "h", "z"}, {"PFCOUNT", "h"}, {"EXEC"},
		} {
			rc.do(args...)
		}
	}
	compareLogs(t, func(addr string) { run(dialRaw(t, addr)) })
}

// TestHllGoRedis runs each HyperLogLog command through go-redis.
func TestHllGoRedis(t *testing.T) {
	_, addr := startServer(t, Config{})
	// PFSELFTEST's ten million elements took 25 s under the race
	// detector on a machine with a load of 14.
	c := goRedis(t, addr, func(o *redis.Options) { o.ReadTimeout = 5 * time.Minute })
	ctx := context.Background()
	if n, err := c.PFAdd(ctx, "h", "a", "b", "c").Result(); n != 1 || err != nil {
		t.Fatalf("PFADD = %d, %v; want 1", n, err)
	}
	if n, err := c.PFAdd(ctx, "h", "a").Result(); n != 0 || err != nil {
		t.Errorf("PFADD again = %d, %v; want 0", n, err)
	}
	if n, err := c.PFCount(ctx, "h").Result(); n != 3 || err != nil {
		t.Errorf("PFCOUNT = %d, %v; want 3", n, err)
	}
	c.PFAdd(ctx, "h2", "c", "d", "e")
	if n, err := c.PFCount(ctx, "h", "h2", "nokey").Result(); n != 5 || err != nil {
		t.Errorf("PFCOUNT of three keys = %d, %v; want 5", n, err)
	}
	if err := c.PFMerge(ctx, "m", "h", "h2").Err(); err != nil {
		t.Errorf("PFMERGE: %v", err)
	}
	if n, err := c.PFCount(ctx, "m").Result(); n != 5 || err != nil {
		t.Errorf("PFCOUNT of the merge = %d, %v; want 5", n, err)
	}
	if v, err := c.Do(ctx, "PFDEBUG", "ENCODING", "m").Text(); v != "sparse" || err != nil {
		t.Errorf("PFDEBUG ENCODING = %q, %v; want sparse", v, err)
	}
	if v, err := c.Do(ctx, "PFDEBUG", "DECODE", "h").Text(); !strings.HasPrefix(v, "Z:") || err != nil {
		t.Errorf("PFDEBUG DECODE = %q, %v; want the runs", v, err)
	}
	if n, err := c.Do(ctx, "PFDEBUG", "TODENSE", "m").Int(); n != 1 || err != nil {
		t.Errorf("PFDEBUG TODENSE = %d, %v; want 1", n, err)
	}
	regs, err := c.Do(ctx, "PFDEBUG", "GETREG", "m").Int64Slice()
	if err != nil || len(regs) != hllRegisters {
		t.Fatalf("PFDEBUG GETREG = %d registers, %v; want %d", len(regs), err, hllRegisters)
	}
	set := 0
	for _, r := range regs {
		if r != 0 {
			set++
		}
	}
	if set != 5 {
		t.Errorf("PFDEBUG GETREG: %d registers set; want 5", set)
	}
	if v := c.Get(ctx, "m").Val(); len(v) != hllDenseSize || v[:5] != "HYLL\x00" {
		t.Errorf("GET of a dense HyperLogLog: %d bytes, %q; want %d, HYLL and 0", len(v), v[:min(len(v), 5)], hllDenseSize)
	}
	c.Set(ctx, "s", "not one", 0)
	c.Set(ctx, "t", hllHeader(hllSparse, 1<<63)+"\x7f\xfe", 0) // a register short
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"PFADD of a string", c.PFAdd(ctx, "s", "a").Err(), errNotHLL},
		{"PFCOUNT of a string", c.PFCount(ctx, "h", "s").Err(), errNotHLL},
		{"PFMERGE of a string", c.PFMerge(ctx, "m", "s").Err(), errNotHLL},
		{"PFCOUNT of a corrupt value", c.PFCount(ctx, "t").Err(), errCorruptHLL},
		{"PFADD to a corrupt value", c.PFAdd(ctx, "t", hllElement(16383, 16384, 32)).Err(), errCorruptHLL},
		{"PFDEBUG of no key", c.Do(ctx, "PFDEBUG", "GETREG", "nokey").Err(), "ERR The specified key does not exist"},
		{"PFDEBUG DECODE of a dense value", c.Do(ctx, "PFDEBUG", "DECODE", "m").Err(), "ERR HLL encoding is not sparse"},
		{"PFDEBUG NOSUCH", c.Do(ctx, "PFDEBUG", "NOSUCH", "m").Err(), "ERR Unknown PFDEBUG subcommand 'NOSUCH'"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%s: %v; want %s", tc.name, tc.err, tc.want)
		}
	}
	if v, err := c.Do(ctx, "PFSELFTEST").Text(); v != "OK" || err != nil {
		t.Errorf("PFSELFTEST = %q, %v; want OK", v, err)
	}
}

// TestHllWatch checks which HyperLogLog commands fail the EXEC of a
// client WATCHing their key: those that change it, as Redis's signal it,
// PFCOUNT writing the cache included; PFDEBUG's conversions, which Redis
// does not signal, do not.
func TestHllWatch(t *testing.T) {
	_, addr := startServer(t, Config{})
	c, other := goRedis(t, addr), goRedis(t, addr)
	ctx := context.Background()
	c.PFAdd(ctx, "h", "a", "b")
	c.PFAdd(ctx, "src", "x", "y")
	do := func(args ...any) func() error { return func() error { return other.Do(ctx, args...).Err() } }
	checkWatch(t, c, "h", []watchCase{
		{"PFADD of elements already seen", do("PFADD", "h", "a", "b"), false},
		{"PFADD", do("PFADD", "h", "c"), true},
		{"PFCOUNT writing the cache", do("PFCOUNT", "h"), true},
		{"PFCOUNT from the cache", do("PFCOUNT", "h"), false},
		{"PFCOUNT of two keys", do("PFCOUNT", "h", "src"), false},
		{"PFMERGE of it", do("PFMERGE", "d", "h"), false},
		{"PFMERGE into it", do("PFMERGE", "h", "src"), true},
		{"PFMERGE into it, nothing new", do("PFMERGE", "h", "src"), true},
		{"PFDEBUG ENCODING", do("PFDEBUG", "ENCODING", "h"), false},
		{"PFDEBUG TODENSE", do("PFDEBUG", "TODENSE", "h"), false},
		{"PFDEBUG GETREG", do("PFDEBUG", "GETREG", "h"), false},
	})
}

// TestHllAppendOnly checks that the log replays the HyperLogLogs as
// written, sparse and dense, caches and merges, before and after a
// rewrite.
func TestHllAppendOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := Config{AppendOnly: true, AppendFsync: "always", Dir: dir}
	ctx := context.Background()
	keys := []string{"s", "d", "m", "c"}
	want := map[string]string{}
	func() {
		s, addr := startServer(t, cfg)
		c := goRedis(t, addr)
		c.PFAdd(ctx, "s", "a", "b", "c")
		c.PFCount(ctx, "s")
		for i := range 50 {
			var batch []any
			for j := range 100 {
				batch = append(batch, i*100+j)
			}
			c.PFAdd(ctx, "d", batch...)
		}
		c.PFMerge(ctx, "m", "s", "d")
		c.PFAdd(ctx, "c", "x")
		c.Do(ctx, "PFDEBUG", "TODENSE", "c")
		c.PFCount(ctx, "c")
		for _, k := range keys {
			want[k] = c.Get(ctx, k).Val()
		}
		if enc := c.Do(ctx, "PFDEBUG", "ENCODING", "d").Val(); enc != "dense" {
			t.Errorf("PFDEBUG ENCODING d = %v; want dense", enc)
		}
		if err := s.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	}()
	check := func(when string, c *redis.Client) {
		t.Helper()
		for _, k := range keys {
			if got, err := c.Get(ctx, k).Result(); got != want[k] || err != nil {
				t.Errorf("%s, GET %s = %d bytes, %v; want the %d written", when, k, len(got), err, len(want[k]))
			}
		}
	}
	replayAndRewrite(t, cfg, check)
}

// TestCompatHllSparseMaxBytes: hll-sparse-max-bytes is where a sparse
// value, its header included, becomes dense, as Redis's, set with CONFIG
// SET as a memory value.
func TestCompatHllSparseMaxBytes(t *testing.T) {
	script := [][]string{{"CONFIG", "GET", "hll-sparse-max-bytes"}, {"CONFIG", "SET", "hll-sparse-max-bytes", "40"},
		{"CONFIG", "GET", "hll-sparse-max-bytes"}}
	for i := range 30 {
		script = append(script, []string{"PFADD", "h", strconv.Itoa(i)}, []string{"PFDEBUG", "ENCODING", "h"}, []string{"STRLEN", "h"})
	}
	script = append(script, []string{"GET", "h"}, []string{"CONFIG", "SET", "hll-sparse-max-bytes", "0"}, []string{"PFADD", "z", "a"},
		[]string{"PFDEBUG", "ENCODING", "z"}, []string{"PFADD", "z2"}, []string{"PFDEBUG", "ENCODING", "z2"},
		[]string{"CONFIG", "SET", "hll-sparse-max-bytes", "1kb"}, []string{"CONFIG", "GET", "hll-sparse-max-bytes"},
		[]string{"CONFIG", "SET", "hll-sparse-max-bytes", "-1"}, []string{"CONFIG", "SET", "hll-sparse-max-bytes", "x"})
	for i := range 600 {
		script = append(script, []string{"PFADD", "k", strconv.Itoa(i), strconv.Itoa(-i)})
		if i%20 == 0 {
			script = append(script, []string{"PFDEBUG", "ENCODING", "k"}, []string{"STRLEN", "k"})
		}
	}
	script = append(script, []string{"GET", "k"}, []string{"PFCOUNT", "k"}, []string{"PFMERGE", "k2", "k"}, []string{"GET", "k2"})
	compareWithRedis(t, script)
}

// TestHllMemoryUsage checks MEMORY USAGE of HyperLogLogs: about their
// length, sparse or dense.
func TestHllMemoryUsage(t *testing.T) {
	c, ctx := serverAndClient(t)
	c.PFAdd(ctx, "s", "a", "b", "c")
	c.PFAdd(ctx, "d", "a")
	c.Do(ctx, "PFDEBUG", "TODENSE", "d")
	for _, tc := range []struct {
		key      string
		lo, high int64
	}{{"s", 30, 200}, {"d", hllDenseSize, 2 * hllDenseSize}} {
		if n, err := c.MemoryUsage(ctx, tc.key).Result(); n < tc.lo || n > tc.high || err != nil {
			t.Errorf("MEMORY USAGE %s = %d, %v; want %d to %d", tc.key, n, err, tc.lo, tc.high)
		}
	}
}

// TestHllDifferential sends random HyperLogLog commands to evkv and Redis
// and compares every reply, the values' bytes (GET) included: elements
// from a pool large enough that values cross from sparse to dense,
// merges of either, values copied from Redis's bytes, and
// hll-sparse-max-bytes changed on the way.
func TestHllDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	key := func() string { return string(rune('a' + rng.IntN(4))) }
	seen := map[string]int{} // replies by command and first bytes
	elements := func(n, pool int) []string {
		var out []string
		for range n {
			out = append(out, strconv.Itoa(rng.IntN(pool)))
		}
		return out
	}
	for i := range 2500 {
		var args []string
		switch rng.IntN(14) {
		case 0, 1, 2:
			args = append([]string{"PFADD", key()}, elements(rng.IntN(8), 100000)...)
		case 3:
			args = append([]string{"PFADD", key()}, elements(200+rng.IntN(400), 100000)...)
		case 4:
			args = []string{"PFCOUNT", key()}
		case 5:
			args = []string{"PFCOUNT", key(), key(), "nokey"}[:2+rng.IntN(2)]
		case 6:
			args = []string{"PFMERGE", key(), key(), key()}[:2+rng.IntN(2)]
		case 7, 8:
			args = []string{"GET", key()}
		case 9:
			args = []string{"PFDEBUG", []string{"ENCODING", "DECODE", "TODENSE", "GETREG"}[rng.IntN(4)], key()}
		case 10:
			if rng.IntN(10) == 0 {
				args = []string{"CONFIG", "SET", "hll-sparse-max-bytes", strconv.Itoa(50 + rng.IntN(4000))}
			} else {
				args = []string{"DEL", key()}
			}
		case 11:
			// A value as Redis wrote it, given to both.
			k := key()
			v, _, err := resp.Parse([]byte(theirs.do("GET", k)))
			if err != nil || v.Type != resp.BulkString {
				continue
			}
			args = []string{"SET", key(), string(v.Str)}
		case 12:
			args = []string{"OBJECT", "ENCODING", key()}
		default:
			args = []string{"PFADD", key(), strconv.Itoa(i)}
		}
		got, want := doBoth(ours, theirs, args...)
		if got != want {
			t.Fatalf("command %d %.80q: evkv replied %.200q; Redis %.200q", i, args, got, want)
		}
		seen[args[0]+" "+strings.TrimSpace(got[:min(len(got), 7)])]++
	}
	// The sequence must have made values of both encodings and merged
	// them.
	for _, s := range []string{"PFDEBUG +sparse", "PFDEBUG +dense", "PFMERGE +OK", "PFDEBUG :1", "PFADD :1", "PFADD :0"} {
		if seen[s] < 5 {
			t.Errorf("%q replied %d times; want 5 or more (%v)", s, seen[s], seen)
		}
	}
}

// TestHllDifferentialLarge adds 120 thousand elements, a hundred at a
// time, to evkv and Redis and compares the estimate after each and the
// value at every thousand, then merges the value with a sparse one both
// ways.
func TestHllDifferentialLarge(t *testing.T) {
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	both := func(args ...string) {
		t.Helper()
		if got, want := doBoth(ours, theirs, args...); got != want {
			t.Fatalf("%.60q: evkv replied %.200q; Redis %.200q", args, got, want)
		}
	}
	for n := 0; n < 120000; n += 100 {
		args := []string{"PFADD", "h"}
		for j := n; j < n+100; j++ {
			args = append(args, "element:"+strconv.Itoa(j))
		}
		both(args...)
		both("PFCOUNT", "h")
		if n%1000 == 0 {
			both("GET", "h")
			both("PFDEBUG", "ENCODING", "h")
		}
	}
	both("PFADD", "s", "a", "b", "c")
	both("PFMERGE", "s2", "s", "h")
	both("GET", "s2")
	both("PFMERGE", "s", "s")
	both("PFMERGE", "h2", "h", "s")
	both("GET", "h2")
	both("PFCOUNT", "h", "s", "s2", "h2")
	both("PFMERGE", "s", "h")
	both("GET", "s")
}

// TestCompatHllCorrupt corrupts values a few random bytes at a time, as
// Redis's own fuzzing test does, and compares what every command then
// replies. A value whose last opcode is an XZERO cut short is only read:
// Redis, splitting it, keeps a byte past its string's end that later
// reads would see.
func TestCompatHllCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	both := func(args ...string) string {
		t.Helper()
		got, want := doBoth(ours, theirs, args...)
		if got != want {
			t.Fatalf("%.80q: evkv replied %.200q; Redis %.200q", args, got, want)
		}
		return got
	}
	ours.do("PFADD", "other", "x", "y", "z")
	theirs.do("PFADD", "other", "x", "y", "z")
	for i := range 300 {
		both("DEL", "h")
		args := []string{"PFADD", "h"}
		for range rng.IntN(3000) {
			args = append(args, strconv.Itoa(rng.IntN(1<<30)))
		}
		both(args...)
		v, _, err := resp.Parse([]byte(both("GET", "h")))
		if err != nil {
			t.Fatal(err)
		}
		b := []byte(v.Str)
		for range 5 {
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				break
			}
		}
		if i%4 == 0 && b[4] == hllSparse {
			b = b[:hllHdrSize+rng.IntN(len(b)-hllHdrSize+1)] // cut short
		}
		both("SET", "h", string(b))
		both("PFCOUNT", "h")
		both("PFCOUNT", "h", "other")
		both("PFDEBUG", "DECODE", "h")
		both("PFMERGE", "m", "other", "h")
		both("GET", "m")
		if endsInShortXZero(b) {
			continue
		}
		both("PFADD", "h", strconv.Itoa(i), "a", "b", "c")
		both("GET", "h")
		both("PFMERGE", "h", "other")
		both("GET", "h")
		both("PFDEBUG", "TODENSE", "h")
		both("PFCOUNT", "h")
		both("GET", "h")
	}
}

// endsInShortXZero reports whether b, a HyperLogLog, is sparse and its
// last opcode an XZERO cut short.
func endsInShortXZero(b []byte) bool {
	if !isHLL(string(b)) || b[4] != hllSparse {
		return false
	}
	sp := b[hllHdrSize:]
	p := 0
	for p < len(sp) {
		_, _, size := sparseOp(sp, p)
		p += size
	}
	return p > len(sp)
}
