package kv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/resp"
)

// rdbDBs are the databases the snapshot tests fill.
var rdbDBs = []int{0, 1, 3}

// populateAll fills databases with values of every type, in their small
// and large encodings, some with a TTL.
func populateAll(t *testing.T, rc *rawConn) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var cmds [][]string
	add := func(args ...string) { cmds = append(cmds, args) }
	long := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	}
	for _, db := range rdbDBs {
		p := fmt.Sprintf("db%d:", db)
		add("SELECT", strconv.Itoa(db))
		add("SET", p+"str", "hello")
		add("SET", p+"empty", "")
		add("SET", p+"int", "12345")
		add("SET", p+"neg", "-7")
		add("SET", p+"bigint", "123456789012345")
		add("SET", p+"compressible", strings.Repeat("abcabcabc", 40))
		add("SET", p+"random", long(300))
		add("SET", p+"binary", "\x00\x01\xff\r\n")
		add("APPEND", p+"raw", "appended")
		add("SET", p+"ttl", "v", "EX", "3600")
		add("PFADD", p+"hll", "a", "b", "c")
		add("RPUSH", p+"list", "a", "1", "-200", "70000", "5000000000", strings.Repeat("x", 100))
		args := []string{"RPUSH", p + "biglist"}
		for i := range 3000 {
			args = append(args, strconv.Itoa(i*i-5000), "item"+strconv.Itoa(i))
		}
		add(args...)
		add("RPUSH", p+"biglist", strings.Repeat("L", 20000), "tail")
		add("LPUSH", p+"biglist", long(9000))
		add("SADD", p+"intset", "1", "-2", "300", "70000", "-5000000000")
		args = []string{"SADD", p + "bigintset"}
		for i := range 700 {
			args = append(args, strconv.Itoa(i*3))
		}
		add(args...)
		add("SADD", p+"set", "a", "b", "1", long(80))
		add("HSET", p+"hash", "f1", "v1", "f2", "2", "n", "-3")
		args = []string{"HSET", p + "bighash"}
		for i := range 600 {
			args = append(args, "f"+strconv.Itoa(i), strconv.Itoa(i))
		}
		add(args...)
		add("HSET", p+"longhash", "f", strings.Repeat("v", 100))
		add("ZADD", p+"zset", "1.5", "a", "-inf", "b", "inf", "c", "0", "d", "3", "e", "1e20", "f", "-2.5e-300", "g", "0.1", "h")
		args = []string{"ZADD", p + "bigzset"}
		for i := range 300 {
			args = append(args, strconv.FormatFloat(rng.NormFloat64()*1e6, 'g', -1, 64), "m"+strconv.Itoa(i))
		}
		add(args...)
		add("ZADD", p+"bigzset", "inf", "top", "-inf", "bottom", "-0", "negzero")
		add("ZADD", p+"longzset", "1", strings.Repeat("m", 100))
		for _, k := range []string{"list", "bigintset", "hash", "bigzset", "longhash"} {
			add("EXPIRE", p+k, strconv.Itoa(1000+db))
		}
	}
	add("SELECT", "0")
	for _, c := range cmds {
		if r := rc.do(c...); strings.HasPrefix(r, "-") {
			t.Fatalf("%.60q: %q", c, r)
		}
	}
}

// parseReply parses a raw reply.
func parseReply(t *testing.T, raw string) resp.Value {
	t.Helper()
	v, _, err := resp.Parse([]byte(raw))
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return v
}

// keyDigest describes key's value in the connection's database: its
// type, encoding (but a string's), contents (sets and hashes in order) and whether it has
// a TTL and of about how long, in seconds.
func keyDigest(t *testing.T, rc *rawConn, key string) string {
	t.Helper()
	typ := strings.TrimSpace(strings.TrimPrefix(rc.do("TYPE", key), "+"))
	enc := strings.TrimSpace(rc.do("OBJECT", "ENCODING", key))
	var items []string
	list := func(args ...string) {
		for _, e := range parseReply(t, rc.do(args...)).Elems {
			items = append(items, string(e.Str))
		}
	}
	switch typ {
	case "string":
		// A string's encoding is not kept: RESTORE and loading make
		// it what its bytes give, as Redis's tryObjectEncoding does.
		enc = ""
		list("MGET", key)
	case "list":
		list("LRANGE", key, "0", "-1")
	case "set":
		list("SMEMBERS", key)
		slices.Sort(items)
	case "hash":
		list("HGETALL", key)
		pairs := make([]string, 0, len(items)/2)
		for i := 0; i+1 < len(items); i += 2 {
			pairs = append(pairs, items[i]+"="+items[i+1])
		}
		slices.Sort(pairs)
		items = pairs
	case "zset":
		list("ZRANGE", key, "0", "-1", "WITHSCORES")
	}
	ttl := strings.TrimSpace(rc.do("TTL", key))
	if n, err := strconv.Atoi(strings.TrimPrefix(ttl, ":")); err == nil && n > 0 {
		ttl = fmt.Sprintf("ttl~%d", (n+30)/60) // minutes, so that seconds passing do not matter
	}
	return fmt.Sprintf("%s %s %s %q", typ, enc, ttl, items)
}

// keyspaceDigest returns keyDigest of every key in the databases rdbDBs,
// by database and name.
func keyspaceDigest(t *testing.T, rc *rawConn) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, db := range rdbDBs {
		rc.do("SELECT", strconv.Itoa(db))
		for _, k := range parseReply(t, rc.do("KEYS", "*")).Elems {
			out[fmt.Sprintf("%d/%s", db, k.Str)] = keyDigest(t, rc, string(k.Str))
		}
	}
	rc.do("SELECT", "0")
	return out
}

func compareDigests(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: nothing to compare", what)
	}
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: key %s missing; want %.200s", what, k, w)
		} else if g != w {
			t.Errorf("%s: key %s:\n got %.300s\nwant %.300s", what, k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: key %s is extra", what, k)
		}
	}
}

// copyByDump DUMPs every key of the databases rdbDBs on from and
// RESTOREs it on to, with its TTL.
func copyByDump(t *testing.T, from, to *rawConn) {
	t.Helper()
	for _, db := range rdbDBs {
		from.do("SELECT", strconv.Itoa(db))
		to.do("SELECT", strconv.Itoa(db))
		for _, k := range parseReply(t, from.do("KEYS", "*")).Elems {
			payload := parseReply(t, from.do("DUMP", string(k.Str))).Str
			ttl := parseReply(t, from.do("PTTL", string(k.Str))).Int
			if got := to.do("RESTORE", string(k.Str), strconv.FormatInt(max(ttl, 0), 10), string(payload), "REPLACE"); got != "+OK\r\n" {
				t.Fatalf("RESTORE %s = %q", k.Str, got)
			}
		}
	}
	from.do("SELECT", "0")
	to.do("SELECT", "0")
}

// TestDumpRestoreRoundTrip: every type, in each of its encodings,
// DUMPed and RESTOREd comes back the same, encoding and TTL included.
func TestDumpRestoreRoundTrip(t *testing.T) {
	_, addr := startServer(t, Config{})
	src, dst := dialRaw(t, addr), dialRaw(t, addr)
	populateAll(t, src)
	want := keyspaceDigest(t, src)
	copyByDump(t, src, dst) // in place, with REPLACE
	compareDigests(t, "after RESTORE", keyspaceDigest(t, src), want)
}

// TestDumpRestoreWithRedis: values DUMPed by Redis RESTORE into evkv as
// Redis had them, and evkv's DUMPs RESTORE into Redis as evkv had them.
func TestDumpRestoreWithRedis(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	ours, theirs := dialRaw(t, addr), dialRaw(t, raddr)
	populateAll(t, theirs)
	copyByDump(t, theirs, ours)
	compareDigests(t, "Redis to evkv", keyspaceDigest(t, ours), keyspaceDigest(t, theirs))

	_, addr2 := startServer(t, Config{})
	ours2, theirs2 := dialRaw(t, addr2), dialRaw(t, redisServer(t))
	populateAll(t, ours2)
	copyByDump(t, ours2, theirs2)
	compareDigests(t, "evkv to Redis", keyspaceDigest(t, theirs2), keyspaceDigest(t, ours2))
}

// testPayload returns a DUMP payload of body (a type and a value) with a
// correct footer.
func testPayload(body string) string {
	p := append([]byte(body), rdbVersion, 0)
	return string(binaryAppendCRC(p))
}

func binaryAppendCRC(p []byte) []byte {
	crc := rdbCRC(0, p)
	for i := range 8 {
		p = append(p, byte(crc>>(8*i)))
	}
	return p
}

// TestCompatDumpRestore: DUMP's payloads of small values are Redis's byte
// for byte, and RESTORE's replies, errors and their order are Redis's.
func TestCompatDumpRestore(t *testing.T) {
	good := testPayload("\x00\x05hello")
	badCRC := good[:len(good)-1] + "x"
	newer := string(binaryAppendCRC(append([]byte("\x00\x05hello"), 11, 0)))
	script := [][]string{
		{"SET", "s", "hello"}, {"SET", "i", "123"}, {"SET", "big", "12345678901234"}, {"SET", "e", ""},
		{"RPUSH", "l", "a", "1", "-300", "70000", "b"}, {"SADD", "is", "3", "1", "-70000"},
		{"HSET", "h", "f", "v", "n", "12"}, {"ZADD", "z", "1.5", "a", "2", "b", "-inf", "c", "inf", "d", "0.1", "e"},
		{"DUMP", "s"}, {"DUMP", "i"}, {"DUMP", "big"}, {"DUMP", "e"}, {"DUMP", "l"}, {"DUMP", "is"}, {"DUMP", "h"},
		{"DUMP", "nokey"},
		{"RESTORE", "s", "0", good}, {"RESTORE", "s", "x", good, "REPLACE"}, {"RESTORE", "new", "-1", good},
		{"RESTORE", "new", "x", good}, {"RESTORE", "new", "0", badCRC}, {"RESTORE", "new", "0", "short"},
		{"RESTORE", "new", "0", newer}, {"RESTORE", "new", "0", testPayload("\x00\x09hel")},
		{"RESTORE", "new", "0", testPayload("\x08\x01a")}, {"RESTORE", "new", "0", testPayload("\x02\x00")},
		{"RESTORE", "new", "0", testPayload("\x0f\x00")}, {"RESTORE", "new", "0", testPayload("\x02\x02\x01a\x01a")},
		{"RESTORE", "new", "0", good, "BOGUS"}, {"RESTORE", "new", "0", good, "IDLETIME"}, {"RESTORE", "new", "0", good, "IDLETIME", "-1"},
		{"RESTORE", "new", "0", good, "IDLETIME", "x"}, {"RESTORE", "new", "0", good, "FREQ", "256"}, {"RESTORE", "new", "0", good, "FREQ", "-1"},
		{"RESTORE", "new", "0", good, "IDLETIME", "5", "FREQ", "5"}, {"RESTORE", "new", "0", good, "FREQ", "5", "IDLETIME", "5"},
		{"RESTORE", "new", "0", good, "FREQ", "5"}, {"GET", "new"}, {"OBJECT", "FREQ", "new"},
		{"RESTORE", "new2", "0", good, "IDLETIME", "1000"}, {"OBJECT", "IDLETIME", "new2"},
		{"RESTORE", "new3", "100000", good}, {"TTL", "new3"}, {"RESTORE", "new3", "1", good, "ABSTTL", "REPLACE"}, {"EXISTS", "new3"},
		{"RESTORE", "new4", "1", good, "ABSTTL"}, {"EXISTS", "new4"},
		{"RESTORE", "new5", "4102444800000", good, "ABSTTL"}, {"PEXPIRETIME", "new5"},
		{"RESTORE", "l", "0", good, "REPLACE"}, {"TYPE", "l"}, {"GET", "l"},
	}
	compareWithRedis(t, script)
}

// TestRestoreEventsAndLog: RESTORE sends "restore" (and "new" for a key
// it creates), a RESTORE whose absolute TTL has passed deletes what
// REPLACE replaced with "del", as Redis does, and the log keeps RESTORE
// with an absolute TTL.
func TestRestoreEventsAndLog(t *testing.T) {
	good := testPayload("\x00\x05hello")
	compareEvents(t, [][]string{
		{"RESTORE", "a", "0", good}, {"RESTORE", "a", "0", good, "REPLACE"}, {"RESTORE", "b", "5000", good},
		{"RESTORE", "a", "1", good, "REPLACE", "ABSTTL"}, {"RESTORE", "c", "1", good, "ABSTTL"}, {"RESTORE", "a", "0", good},
	})
	dir := t.TempDir()
	_, addr := startServer(t, Config{AppendOnly: true, Dir: dir})
	rc := dialRaw(t, addr)
	before := time.Now().UnixMilli()
	rc.do("RESTORE", "k", "100000", good)
	rc.do("RESTORE", "k2", "0", good)
	rc.do("RESTORE", "k3", "7", good, "ABSTTL")
	rc.do("SET", "x", "1")
	log, err := os.ReadFile(filepath.Join(dir, "appendonly.aof"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := parseCommands(t, log)
	if len(cmds) != 4 || cmds[1][0] != "RESTORE" || len(cmds[1]) != 5 || cmds[1][4] != "ABSTTL" || cmds[2][2] != "0" || len(cmds[2]) != 4 || cmds[3][0] != "SET" {
		t.Fatalf("log %q; want SELECT, RESTORE k <at> payload ABSTTL, RESTORE k2 0 payload, SET", cmds)
	}
	if at, _ := strconv.ParseInt(cmds[1][2], 10, 64); at < before+100000 || at > time.Now().UnixMilli()+100000 {
		t.Errorf("RESTORE logged with TTL %s; want now+100000 ms", cmds[1][2])
	}
}

// parseCommands returns the commands in a log.
func parseCommands(t *testing.T, log []byte) [][]string {
	t.Helper()
	var p resp.Parser
	var out [][]string
	for len(log) > 0 {
		args, n, err := p.Command(log)
		if err != nil {
			t.Fatalf("log: %v", err)
		}
		var cmd []string
		for _, a := range args {
			cmd = append(cmd, string(a))
		}
		out = append(out, cmd)
		log = log[n:]
	}
	return out
}

func TestLZFRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, in := range [][]byte{
		[]byte(strings.Repeat("a", 1000)), []byte(strings.Repeat("abcdefgh", 5000)), bytes.Repeat([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 3000),
		[]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"),
	} {
		out, ok := lzfCompress(nil, in, len(in)-4)
		if !ok {
			t.Fatalf("lzfCompress(%.20q...) did not compress", in)
		}
		got, err := lzfDecompress(out, len(in))
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("lzfDecompress(lzfCompress(%.20q...)) = %.20q, %v", in, got, err)
		}
	}
	random := make([]byte, 5000)
	for i := range random {
		random[i] = byte(rng.IntN(256))
	}
	if _, ok := lzfCompress(nil, random, len(random)-4); ok {
		t.Error("lzfCompress compressed random bytes")
	}
}

func TestCRC64(t *testing.T) {
	if got := rdbCRC(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Errorf("rdbCRC(123456789) = %#x; want 0xe9c6d914c4b8d9ca", got)
	}
}

// FuzzRestore: no value makes RESTORE's decoding panic; a value it
// decodes DUMPs to a payload that decodes to the same; and the key it
// makes takes the commands of every type, after which its DUMP is
// RESTOREd again. The fuzzer writes the value, and the payload's footer
// is computed around it, so that the checksum does not stop it short of
// the decoder.
func FuzzRestore(f *testing.F) {
	for _, body := range []string{
		"\x00\x05hello", "\x00\xc0\x05", "\x00\xc3\x05\x0a\x01aa\xe0\x04\x00", "\x12\x01\x02\x0b\x0b\x00\x00\x00\x01\x00\x81a\x02\xff",
		"\x0b\x0a\x02\x00\x00\x00\x01\x00\x00\x00\x05\x00", "\x02\x02\x01a\x01b", "\x05\x01\x01a\x00\x00\x00\x00\x00\x00\xf0\x3f",
		"\x04\x01\x01f\x01v", "\x03\x01\x01a\x031.5", "\x01\x02\x01a\x01b",
		"\x10\x0d\x0d\x00\x00\x00\x02\x00\x81f\x02\x81v\x02\xff", "\x11\x0c\x0c\x00\x00\x00\x02\x00\x81a\x02\x01\x01\xff",
		"\x0d\x0f\x0f\x00\x00\x00\x0c\x00\x00\x00\x02\x00\x00\xf1\x02\xf2\xff", "\x09\x0c\x02\x01a\x01\x00b\x01c\x01\x00d\xff",
	} {
		f.Add([]byte(body))
	}
	_, addr := startServer(f, Config{})
	f.Fuzz(func(t *testing.T, body []byte) {
		p := testPayload(string(body))
		e, ok, err := parsePayload([]byte(p), nil)
		if !ok || err != nil {
			return
		}
		again, ok, err := parsePayload(dumpPayload(&e, true), nil)
		if !ok || err != nil {
			t.Fatalf("a decoded value's DUMP does not decode: %v", err)
		}
		if a, b := dumpPayload(&e, false), dumpPayload(&again, false); !bytes.Equal(a, b) {
			t.Fatalf("DUMP, RESTORE, DUMP: %q, then %q", a, b)
		}
		rc := dialRaw(t, addr)
		rc.do("FLUSHALL")
		if got := rc.do("RESTORE", "k", "0", p); got != "+OK\r\n" {
			t.Fatalf("RESTORE = %q; want OK", got)
		}
		for _, args := range [][]string{
			{"OBJECT", "ENCODING", "k"}, {"MEMORY", "USAGE", "k", "SAMPLES", "0"}, {"DUMP", "k"}, {"COPY", "k", "k2"},
			{"GET", "k"}, {"APPEND", "k", "x"}, {"STRLEN", "k"},
			{"LRANGE", "k", "0", "-1"}, {"LPUSH", "k", "x"}, {"LINSERT", "k", "BEFORE", "1", "y"}, {"LINDEX", "k", "2"}, {"RPOP", "k"},
			{"SMEMBERS", "k"}, {"SADD", "k", "x", "1", "2"}, {"SREM", "k", "1"}, {"SRANDMEMBER", "k", "-3"}, {"SPOP", "k"},
			{"HGETALL", "k"}, {"HSET", "k", "f", "v", "1", "2"}, {"HDEL", "k", "1"}, {"HRANDFIELD", "k", "-3"},
			{"ZRANGE", "k", "0", "-1", "WITHSCORES"}, {"ZADD", "k", "1", "x", "2", "1"}, {"ZREM", "k", "1"},
			{"ZRANGEBYSCORE", "k", "-inf", "+inf"}, {"ZRANGEBYLEX", "k", "-", "+"}, {"ZRANK", "k", "x"},
			{"OBJECT", "ENCODING", "k"}, {"MEMORY", "USAGE", "k", "SAMPLES", "0"},
		} {
			rc.do(args...)
		}
		if d := parseReply(t, rc.do("DUMP", "k")); d.Str != nil {
			if got := rc.do("RESTORE", "k3", "0", string(d.Str)); got != "+OK\r\n" {
				t.Fatalf("RESTORE of the DUMP after the commands = %q; want OK", got)
			}
		}
	})
}
