package kv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
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

// compareHash is compareWithRedis for the hash commands: the replies of
// HELLO (which carry the connection id) are not compared, and after each
// command that lists a hash the key's encoding is compared too; where it
// is "hashtable" the listing is compared as a sorted multiset, since the
// order is then the hash table's.
func compareHash(t *testing.T, script [][]string) {
	t.Helper()
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	for _, args := range script {
		got, want := doBoth(ours, theirs, args...)
		name := strings.ToUpper(args[0])
		if listsHash(args) {
			encGot, encWant := doBoth(ours, theirs, "OBJECT", "ENCODING", args[1])
			if encGot != encWant {
				t.Errorf("OBJECT ENCODING after %q: evkv replied %q; Redis %q", args, encGot, encWant)
			}
			if strings.Contains(encWant, "hashtable") {
				got, want = sortedHashReply(got), sortedHashReply(want)
			}
		}
		if got != want && name != "HELLO" {
			t.Errorf("%q: evkv replied %q; Redis %q", args, got, want)
		}
	}
}

// listsHash reports whether args list a whole hash or part of one, in an
// order that is the hash table's for a large hash.
func listsHash(args []string) bool {
	switch strings.ToUpper(args[0]) {
	case "HGETALL", "HKEYS", "HVALS", "HSCAN":
		return len(args) >= 2
	case "HRANDFIELD":
		return len(args) >= 3
	}
	return false
}

// sortedHashReply returns a listing reply with its items sorted: fields
// with their values where it pairs them, the items of an HSCAN page.
func sortedHashReply(reply string) string {
	v, _, err := resp.Parse([]byte(reply))
	if err != nil {
		return reply
	}
	cursor := ""
	if v.Type == resp.Array && len(v.Elems) == 2 && v.Elems[0].Type == resp.BulkString && v.Elems[1].Type == resp.Array {
		cursor = "cursor " + string(v.Elems[0].Str) + ": " // HSCAN
		v = v.Elems[1]
	}
	var items []string
	flat := v.Elems
	if v.Type == resp.Map {
		for i := 0; i+1 < len(flat); i += 2 {
			items = append(items, string(flat[i].Str)+"="+string(flat[i+1].Str))
		}
	} else {
		for _, e := range flat {
			if e.Type == resp.Array { // RESP3 pair
				items = append(items, string(e.Elems[0].Str)+"="+string(e.Elems[1].Str))
				continue
			}
			items = append(items, string(e.Str))
		}
	}
	slices.Sort(items)
	return fmt.Sprintf("%s%c%d %q", cursor, v.Type, len(flat), items)
}

func hashScript() [][]string {
	long := strings.Repeat("x", 65)
	exact := strings.Repeat("y", 64)
	return [][]string{
		{"HSET", "h", "a", "1", "b", "2", "c", "3"}, {"HSET", "h", "a", "10", "d", "4"}, {"HGETALL", "h"}, {"OBJECT", "ENCODING", "h"},
		{"HSET", "h"}, {"HSET", "h", "a"}, {"HSET", "h", "a", "1", "b"}, {"HMSET", "h", "a"}, {"HMSET", "h", "a", "1", "b"},
		{"HMSET", "h", "e", "5", "a", "11"}, {"hmset", "h", "f", "6"}, {"HKEYS", "h"}, {"HVALS", "h"},
		{"HSETNX", "h", "a", "x"}, {"HSETNX", "h", "g", "7"}, {"HSETNX", "new", "f", "v"}, {"HGETALL", "new"},
		{"HGET", "h", "a"}, {"HGET", "h", "nope"}, {"HGET", "nokey", "a"}, {"HMGET", "h", "a", "nope", "b"}, {"HMGET", "nokey", "a", "b"},
		{"HDEL", "h", "b"}, {"HGETALL", "h"}, {"HSET", "h", "b", "2"}, {"HGETALL", "h"}, {"HDEL", "h", "nope"}, {"HDEL", "nokey", "a"},
		{"HDEL", "h", "a", "a", "c", "nope"}, {"HKEYS", "h"}, {"HLEN", "h"}, {"HLEN", "nokey"},
		{"HSTRLEN", "h", "d"}, {"HSTRLEN", "h", "nope"}, {"HSTRLEN", "nokey", "a"},
		{"HEXISTS", "h", "d"}, {"HEXISTS", "h", "nope"}, {"HEXISTS", "nokey", "d"},
		{"HDEL", "new", "f"}, {"EXISTS", "new"}, {"HDEL", "new", "f"},
		// Wrong types.
		{"SET", "str", "v"}, {"HSET", "str", "a", "1"}, {"HMSET", "str", "a", "1"}, {"HSETNX", "str", "a", "1"}, {"HGET", "str", "a"},
		{"HMGET", "str", "a"}, {"HDEL", "str", "a"}, {"HLEN", "str"}, {"HSTRLEN", "str", "a"}, {"HEXISTS", "str", "a"},
		{"HINCRBY", "str", "a", "1"}, {"HINCRBYFLOAT", "str", "a", "1"}, {"HKEYS", "str"}, {"HVALS", "str"}, {"HGETALL", "str"},
		{"HRANDFIELD", "str"}, {"HRANDFIELD", "str", "1"}, {"HSCAN", "str", "0"}, {"HINCRBY", "str", "a", "x"}, {"HINCRBYFLOAT", "str", "a", "x"},
		{"HSET", "str", "a"}, {"HSCAN", "str", "x"},
		{"LPUSH", "lst", "a"}, {"HGET", "lst", "a"},
		// Missing keys.
		{"HKEYS", "nokey"}, {"HVALS", "nokey"}, {"HGETALL", "nokey"}, {"HRANDFIELD", "nokey"}, {"HRANDFIELD", "nokey", "3"},
		{"HRANDFIELD", "nokey", "-3", "WITHVALUES"}, {"HSCAN", "nokey", "0"}, {"HSCAN", "nokey", "0", "COUNT", "0"},
		// HINCRBY.
		{"HINCRBY", "n", "i", "5"}, {"HINCRBY", "n", "i", "-12"}, {"HINCRBY", "n", "i", "x"}, {"HINCRBY", "n", "i", "1.5"},
		{"HINCRBY", "n", "i", ""}, {"HINCRBY", "n", "i", "9223372036854775808"}, {"HINCRBY", "n", "i", "-9223372036854775808"},
		{"HINCRBY", "n", "i", "9223372036854775807"}, {"HSET", "n", "max", "9223372036854775807", "min", "-9223372036854775808"},
		{"HINCRBY", "n", "max", "1"}, {"HINCRBY", "n", "max", "0"}, {"HINCRBY", "n", "max", "-1"}, {"HINCRBY", "n", "min", "-1"}, {"HINCRBY", "n", "min", "1"},
		{"HSET", "n", "s", "abc", "sp", " 1", "z", "007", "p", "+1", "e", ""}, {"HINCRBY", "n", "s", "1"}, {"HINCRBY", "n", "sp", "1"},
		{"HINCRBY", "n", "z", "1"}, {"HINCRBY", "n", "p", "1"}, {"HINCRBY", "n", "e", "1"}, {"HINCRBY", "nokey2", "f", "x"}, {"EXISTS", "nokey2"},
		{"HINCRBY", "n", long, "1"}, {"OBJECT", "ENCODING", "n"},
		// HINCRBYFLOAT: long double arithmetic and formatting.
		{"HINCRBYFLOAT", "f", "a", "10.5"}, {"HINCRBYFLOAT", "f", "a", "0.1"}, {"HINCRBYFLOAT", "f", "a", "-0.6"}, {"HINCRBYFLOAT", "f", "a", "-10"},
		{"HINCRBYFLOAT", "f", "b", "1e17"}, {"HINCRBYFLOAT", "f", "b", "1"}, {"HINCRBYFLOAT", "f", "c", "1e-20"}, {"HINCRBYFLOAT", "f", "c", "-2e-20"},
		{"HINCRBYFLOAT", "f", "d", "0.1"}, {"HINCRBYFLOAT", "f", "d", "0.2"}, {"HINCRBYFLOAT", "f", "e", "3.0"}, {"HINCRBYFLOAT", "f", "e", "-3"},
		{"HINCRBYFLOAT", "f", "g", "5.0e3"}, {"HINCRBYFLOAT", "f", "g", "0x10"}, {"HINCRBYFLOAT", "f", "g", "0x1.8p1"}, {"HINCRBYFLOAT", "f", "g", "0X.8"},
		{"HINCRBYFLOAT", "f", "g", ".5"}, {"HINCRBYFLOAT", "f", "g", "5."}, {"HINCRBYFLOAT", "f", "g", "+1E+2"}, {"HINCRBYFLOAT", "f", "g", "-1e-2"},
		{"HINCRBYFLOAT", "f", "h", "1e308"}, {"HINCRBYFLOAT", "f", "h", "1e308"}, {"HINCRBYFLOAT", "f", "i", "1e4000"}, {"HINCRBYFLOAT", "f", "j", "1.5e-4940"},
		{"HINCRBYFLOAT", "f", "k", "123456789012345678901234567890"}, {"HINCRBYFLOAT", "f", "k", "-0.000000000000000001"},
		{"HINCRBYFLOAT", "f", "a", "inf"}, {"HINCRBYFLOAT", "f", "a", "-Infinity"}, {"HINCRBYFLOAT", "f", "a", "nan"}, {"HINCRBYFLOAT", "f", "a", "1e5000"},
		{"HINCRBYFLOAT", "f", "a", "1e-5000"}, {"HINCRBYFLOAT", "f", "a", "0e-5000"}, {"HINCRBYFLOAT", "f", "a", " 1"}, {"HINCRBYFLOAT", "f", "a", "1 "},
		{"HINCRBYFLOAT", "f", "a", ""}, {"HINCRBYFLOAT", "f", "a", "x"}, {"HINCRBYFLOAT", "f", "a", "1e"}, {"HINCRBYFLOAT", "f", "a", "0x"},
		{"HINCRBYFLOAT", "f", "a", "0xp1"}, {"HINCRBYFLOAT", "f", "a", "1_0"}, {"HINCRBYFLOAT", "f", "a", "1/2"}, {"HINCRBYFLOAT", "f", "a", "0b1"},
		{"HINCRBYFLOAT", "f", "a", "."}, {"HINCRBYFLOAT", "f", "a", "1..2"}, {"HINCRBYFLOAT", "f", "a", "1\x00x"}, {"HINCRBYFLOAT", "f", "a", "-"},
		{"HSET", "f", "s", "abc", "inf", "inf", "big", "1e4932", "sp", "1 "}, {"HINCRBYFLOAT", "f", "s", "1"}, {"HINCRBYFLOAT", "f", "inf", "1"},
		{"HINCRBYFLOAT", "f", "big", "1e4932"}, {"HINCRBYFLOAT", "f", "sp", "1"}, {"HINCRBYFLOAT", "f", "i", "-1e4000"},
		{"HGETALL", "f"}, {"OBJECT", "ENCODING", "f"}, {"HINCRBYFLOAT", "f", "h", "1"}, {"OBJECT", "ENCODING", "f"},
		{"HINCRBYFLOAT", "f2", long, "1"}, {"OBJECT", "ENCODING", "f2"}, {"HINCRBYFLOAT", "f3", "a", "1e100"}, {"OBJECT", "ENCODING", "f3"},
		{"HINCRBYFLOAT", "nokey3", "a", "x"}, {"HINCRBYFLOAT", "nokey3", "a", "inf"}, {"EXISTS", "nokey3"},
		// Encodings: 64 bytes fit, 65 do not; conversion is one-way.
		{"HSET", "e1", "a", exact, exact, "b"}, {"OBJECT", "ENCODING", "e1"}, {"HSET", "e1", "c", long}, {"OBJECT", "ENCODING", "e1"},
		{"HDEL", "e1", "c"}, {"OBJECT", "ENCODING", "e1"}, {"HGETALL", "e1"},
		{"HSET", "e2", long, "v"}, {"OBJECT", "ENCODING", "e2"}, {"HSET", "e3", "a", "1", "a", long, "a", "2"}, {"OBJECT", "ENCODING", "e3"},
		{"HSET", "e4", "a", "1"}, {"HSETNX", "e4", "a", long}, {"OBJECT", "ENCODING", "e4"}, {"HGET", "e4", "a"},
		{"HSET", "e5", "a", "1"}, {"HMSET", "e5", "b", long}, {"OBJECT", "ENCODING", "e5"},
		{"HSET", "e6", "a", "1"}, {"HSETNX", "e6", long, "1"}, {"OBJECT", "ENCODING", "e6"},
		// HRANDFIELD.
		{"HSET", "r", "a", "1", "b", "2", "c", "3"}, {"HRANDFIELD", "r", "0"}, {"HRANDFIELD", "r", "3"}, {"HRANDFIELD", "r", "10", "WITHVALUES"},
		{"HRANDFIELD", "r", "3", "withvalues"}, {"HRANDFIELD", "r", "x"}, {"HRANDFIELD", "r", "1", "x"}, {"HRANDFIELD", "r", "1", "WITHVALUES", "x"},
		{"HRANDFIELD", "r", "-9223372036854775808"}, {"HRANDFIELD", "r", "9223372036854775808"}, {"HRANDFIELD", "r", "9223372036854775807"},
		{"HRANDFIELD", "r", "-4611686018427387905", "WITHVALUES"}, {"HRANDFIELD", "r", "4611686018427387904", "WITHVALUES"},
		{"HRANDFIELD", "r", "4611686018427387903", "WITHVALUES"}, {"HRANDFIELD", "r", "0", "WITHVALUES"}, {"HRANDFIELD", "nokey", "0", "x"},
		{"HSET", "one", "a", "1"}, {"HRANDFIELD", "one"}, {"HRANDFIELD", "one", "1"}, {"HRANDFIELD", "one", "-3"}, {"HRANDFIELD", "one", "-2", "WITHVALUES"},
		{"HRANDFIELD", "one", "1", "WITHVALUES"},
		// HSCAN.
		{"HSCAN", "r", "0"}, {"HSCAN", "r", "0", "MATCH", "[ab]"}, {"HSCAN", "r", "0", "COUNT", "1"}, {"HSCAN", "r", "0", "COUNT", "0"},
		{"HSCAN", "r", "0", "COUNT", "x"}, {"HSCAN", "r", "0", "MATCH"}, {"HSCAN", "r", "0", "NOSUCH", "x"}, {"HSCAN", "r", "0", "TYPE", "hash"},
		{"HSCAN", "r", "x"}, {"HSCAN", "r", "-1"}, {"HSCAN", "r", "18446744073709551616"}, {"HSCAN", "r", "12345"},
		{"HSCAN", "r", "0", "match", "*", "count", "5", "MATCH", "c"}, {"HSCAN", "e1", "0", "COUNT", "100"}, {"HSCAN", "e1", "0", "MATCH", "y*", "COUNT", "100"},
		{"HSCAN", "r", "0", "MATCH", "A", "NOVALUES"},
		// COPY keeps the encoding; a copy is independent.
		{"COPY", "e1", "e1copy"}, {"OBJECT", "ENCODING", "e1copy"}, {"HSET", "e1copy", "z", "z"}, {"HLEN", "e1"}, {"HLEN", "e1copy"},
		{"COPY", "r", "rcopy"}, {"HDEL", "rcopy", "a"}, {"HGETALL", "r"}, {"HGETALL", "rcopy"}, {"TYPE", "r"},
		// Transactions.
		{"MULTI"}, {"HSET", "m", "a", "1"}, {"HINCRBY", "m", "a", "x"}, {"HINCRBY", "m", "a", "2"}, {"HINCRBYFLOAT", "m", "a", "0.5"}, {"HGETALL", "m"}, {"EXEC"},
		{"MULTI"}, {"HSET", "m", "a"}, {"HGET", "m", "a"}, {"EXEC"},
	}
}

// hashBigScript fills hashes past 512 fields and works on them.
func hashBigScript() [][]string {
	var script [][]string
	for i := range 512 {
		script = append(script, []string{"HSET", "big", "f" + strconv.Itoa(i), strconv.Itoa(i)})
	}
	script = append(script, []string{"OBJECT", "ENCODING", "big"}, []string{"HKEYS", "big"})
	script = append(script, []string{"HSET", "big", "f0", "again"}, []string{"OBJECT", "ENCODING", "big"})
	script = append(script, []string{"HSET", "big", "f512", "512"}, []string{"OBJECT", "ENCODING", "big"})
	args := []string{"HSET", "multi"}
	for i := range 513 {
		args = append(args, "f"+strconv.Itoa(i%500), strconv.Itoa(i))
	}
	script = append(script, args, []string{"OBJECT", "ENCODING", "multi"}, []string{"HGETALL", "multi"})
	args = []string{"HSET", "multi2"}
	for i := range 513 {
		args = append(args, "f"+strconv.Itoa(i), strconv.Itoa(i))
	}
	script = append(script, args, []string{"OBJECT", "ENCODING", "multi2"}, []string{"HGETALL", "multi2"})
	for i := range 509 {
		script = append(script, []string{"HDEL", "big", "f" + strconv.Itoa(i)})
	}
	script = append(script, [][]string{
		{"OBJECT", "ENCODING", "big"}, {"HGETALL", "big"}, {"HKEYS", "big"}, {"HVALS", "big"}, {"HLEN", "big"},
		{"HRANDFIELD", "big", "100"}, {"HRANDFIELD", "big", "100", "WITHVALUES"}, {"HSCAN", "big", "0", "COUNT", "100"},
		{"HINCRBY", "big", "f511", "5"}, {"HINCRBYFLOAT", "big", "f510", "0.25"}, {"HSTRLEN", "big", "f510"}, {"HMGET", "big", "f510", "f511", "f0"},
		{"HSCAN", "big", "0", "MATCH", "f51?", "COUNT", "100"},
		{"COPY", "big", "bigcopy"}, {"OBJECT", "ENCODING", "bigcopy"}, {"HGETALL", "bigcopy"},
		{"HDEL", "big", "f509", "f510", "f511", "f512", "nope"}, {"EXISTS", "big"},
	}...)
	return script
}

func TestCompatHashCommands(t *testing.T) {
	compareHash(t, hashScript())
}

func TestCompatHashCommandsRESP3(t *testing.T) {
	compareHash(t, append([][]string{{"HELLO", "3"}}, hashScript()...))
}

func TestCompatHashBig(t *testing.T) {
	compareHash(t, hashBigScript())
	compareHash(t, append([][]string{{"HELLO", "3"}}, hashBigScript()...))
}

func TestCompatHashArity(t *testing.T) {
	var script [][]string
	for _, name := range []string{"HSET", "HSETNX", "HMSET", "HGET", "HMGET", "HDEL", "HLEN", "HSTRLEN", "HEXISTS", "HINCRBY",
		"HINCRBYFLOAT", "HKEYS", "HVALS", "HGETALL", "HRANDFIELD", "HSCAN"} {
		script = append(script, []string{name}, []string{strings.ToLower(name), "k"}, []string{name, "k", "f"},
			[]string{name, "k", "1", "2", "3"}, []string{name, "k", "1", "2", "3", "4"})
	}
	compareHash(t, script)
}

// TestCompatHashEvents compares the keyspace events of the hash commands
// with Redis's.
func TestCompatHashEvents(t *testing.T) {
	script := [][]string{
		{"HSET", "h", "a", "1", "b", "2"}, {"HSET", "h", "a", "1"}, {"HMSET", "h", "c", "3"}, {"HSETNX", "h", "a", "x"}, {"HSETNX", "h", "d", "4"},
		{"HINCRBY", "h", "n", "1"}, {"HINCRBY", "h", "a", "x"}, {"HINCRBY", "h", "c", "0"}, {"HINCRBYFLOAT", "h", "f", "1.5"}, {"HINCRBYFLOAT", "h", "f", "inf"},
		{"HDEL", "h", "nope"}, {"HDEL", "h", "a", "b"}, {"HDEL", "h", "c", "d", "n", "f"}, {"HDEL", "h", "a"},
		{"HINCRBYFLOAT", "g", "f", "1"}, {"HDEL", "g", "f"}, {"HGET", "g", "f"}, {"HGETALL", "h"},
	}
	compareEvents(t, script)
}

// TestHashDifferential sends random hash commands to evkv and Redis and
// compares every reply; listings of hashtable-encoded hashes compare as
// multisets.
func TestHashDifferential(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(11, uint64(len(proto))))
			script := [][]string{{"HELLO", proto}}
			for range 4000 {
				script = append(script, randomHashCommand(rng))
			}
			compareHash(t, script)
		})
	}
}

func randomHashCommand(rng *rand.Rand) []string {
	// h0..h2 stay small; h3 is filled past the listpack limits.
	key := func() string { return "h" + strconv.Itoa(rng.IntN(4)) }
	field := func() string {
		switch rng.IntN(20) {
		case 0:
			return strings.Repeat("long", 16) + strconv.Itoa(rng.IntN(3)) // 65 bytes
		case 1:
			return strings.Repeat("f", 64)
		}
		return string(rune('a' + rng.IntN(12)))
	}
	value := func() string {
		switch rng.IntN(12) {
		case 0:
			return strings.Repeat("v", 60+rng.IntN(8))
		case 1:
			return "x"
		case 2:
			return strconv.FormatFloat(rng.Float64()*100-50, 'f', rng.IntN(6), 64)
		case 3:
			return "9223372036854775807"
		case 4:
			return ""
		}
		return strconv.Itoa(rng.IntN(100) - 50)
	}
	incr := func() string {
		switch rng.IntN(10) {
		case 0:
			return "x"
		case 1:
			return "9223372036854775807"
		case 2:
			return "-9223372036854775808"
		}
		return strconv.Itoa(rng.IntN(20) - 10)
	}
	fincr := func() string {
		switch rng.IntN(10) {
		case 0:
			return []string{"x", "inf", "-inf", "nan", "1e400", " 1", "0x1p-3"}[rng.IntN(7)]
		case 1:
			return strconv.FormatFloat(rng.NormFloat64()*1e10, 'g', -1, 64)
		case 2:
			return strconv.Itoa(rng.IntN(20) - 10)
		}
		return strconv.FormatFloat(rng.Float64()*10-5, 'f', rng.IntN(4), 64)
	}
	switch rng.IntN(22) {
	case 0, 1, 2:
		args := []string{[]string{"HSET", "HMSET"}[rng.IntN(2)], key()}
		for range 1 + rng.IntN(4) {
			args = append(args, field(), value())
		}
		if rng.IntN(20) == 0 {
			args = args[:len(args)-1]
		}
		return args
	case 3:
		// Grow h3 past 512 fields in a few commands.
		args := []string{"HSET", "h3"}
		base := rng.IntN(1000)
		for i := range 100 {
			args = append(args, "n"+strconv.Itoa(base+i), value())
		}
		return args
	case 4:
		return []string{"HSETNX", key(), field(), value()}
	case 5:
		return []string{"HGET", key(), field()}
	case 6:
		return []string{"HMGET", key(), field(), field(), field()}
	case 7, 8:
		args := []string{"HDEL", key()}
		for range 1 + rng.IntN(3) {
			args = append(args, field())
		}
		return args
	case 9:
		return []string{"HLEN", key()}
	case 10:
		return []string{"HSTRLEN", key(), field()}
	case 11:
		return []string{"HEXISTS", key(), field()}
	case 12, 13:
		return []string{"HINCRBY", key(), field(), incr()}
	case 14, 15:
		return []string{"HINCRBYFLOAT", key(), field(), fincr()}
	case 16:
		return []string{[]string{"HKEYS", "HVALS", "HGETALL"}[rng.IntN(3)], key()}
	case 17:
		// Deterministic forms only: a count covering the whole hash, or 0.
		count := []string{"0", strconv.Itoa(2000 + rng.IntN(3))}[rng.IntN(2)]
		if rng.IntN(2) == 0 {
			return []string{"HRANDFIELD", key(), count, "WITHVALUES"}
		}
		return []string{"HRANDFIELD", key(), count}
	case 18:
		// COUNT covers the whole hash: where a partial walk stops is the
		// hash table's business.
		args := []string{"HSCAN", key(), "0", "COUNT", "5000"}
		if rng.IntN(2) == 0 {
			args = append(args, "MATCH", []string{"*", "[a-e]", "long*", "?", "n1*"}[rng.IntN(5)])
		}
		return args
	case 19:
		return []string{"OBJECT", "ENCODING", key()}
	case 20:
		if rng.IntN(4) == 0 {
			return []string{"DEL", key()}
		}
		return []string{"HRANDFIELD", "nokey"}
	}
	return []string{"TYPE", key()}
}

func TestHashGoRedis(t *testing.T) {
	c, ctx := serverAndClient(t)
	if n, err := c.HSet(ctx, "h", "a", "1", "b", "2").Result(); n != 2 || err != nil {
		t.Fatalf("HSET = %d, %v; want 2", n, err)
	}
	if n, err := c.HSet(ctx, "h", map[string]any{"a": "10", "c": "3"}).Result(); n != 1 || err != nil {
		t.Errorf("HSET map = %d, %v; want 1", n, err)
	}
	if ok, err := c.HMSet(ctx, "h", "d", "4").Result(); !ok || err != nil {
		t.Errorf("HMSET = %v, %v; want true", ok, err)
	}
	if ok, err := c.HSetNX(ctx, "h", "a", "x").Result(); ok || err != nil {
		t.Errorf("HSETNX existing = %v, %v; want false", ok, err)
	}
	if ok, err := c.HSetNX(ctx, "h", "e", "5").Result(); !ok || err != nil {
		t.Errorf("HSETNX new = %v, %v; want true", ok, err)
	}
	if v, err := c.HGet(ctx, "h", "a").Result(); v != "10" || err != nil {
		t.Errorf("HGET = %q, %v; want 10", v, err)
	}
	if _, err := c.HGet(ctx, "h", "nope").Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("HGET missing field: %v; want redis.Nil", err)
	}
	if vs, err := c.HMGet(ctx, "h", "a", "nope", "b").Result(); err != nil || fmt.Sprint(vs) != "[10 <nil> 2]" {
		t.Errorf("HMGET = %v, %v", vs, err)
	}
	if m, err := c.HGetAll(ctx, "h").Result(); err != nil || len(m) != 5 || m["e"] != "5" {
		t.Errorf("HGETALL = %v, %v", m, err)
	}
	if ks, err := c.HKeys(ctx, "h").Result(); err != nil || !slices.Equal(ks, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("HKEYS = %v, %v; want insertion order", ks, err)
	}
	if vs, err := c.HVals(ctx, "h").Result(); err != nil || !slices.Equal(vs, []string{"10", "2", "3", "4", "5"}) {
		t.Errorf("HVALS = %v, %v", vs, err)
	}
	if n, err := c.HLen(ctx, "h").Result(); n != 5 || err != nil {
		t.Errorf("HLEN = %d, %v; want 5", n, err)
	}
	if n, err := c.HStrLen(ctx, "h", "a").Result(); n != 2 || err != nil {
		t.Errorf("HSTRLEN = %d, %v; want 2", n, err)
	}
	if ok, err := c.HExists(ctx, "h", "b").Result(); !ok || err != nil {
		t.Errorf("HEXISTS = %v, %v; want true", ok, err)
	}
	if n, err := c.HIncrBy(ctx, "h", "a", -15).Result(); n != -5 || err != nil {
		t.Errorf("HINCRBY = %d, %v; want -5", n, err)
	}
	if f, err := c.HIncrByFloat(ctx, "h", "f", 10.5).Result(); f != 10.5 || err != nil {
		t.Errorf("HINCRBYFLOAT = %v, %v; want 10.5", f, err)
	}
	if f, err := c.HIncrByFloat(ctx, "h", "f", 0.1).Result(); f != 10.6 || err != nil {
		t.Errorf("HINCRBYFLOAT = %v, %v; want 10.6", f, err)
	}
	if v := c.HGet(ctx, "h", "f").Val(); v != "10.6" {
		t.Errorf("HGET after HINCRBYFLOAT = %q; want 10.6", v)
	}
	if ks, err := c.HRandField(ctx, "h", 100).Result(); err != nil || len(ks) != 6 {
		t.Errorf("HRANDFIELD 100 = %v, %v; want all 6 fields", ks, err)
	}
	if ks, err := c.HRandField(ctx, "h", -10).Result(); err != nil || len(ks) != 10 {
		t.Errorf("HRANDFIELD -10 = %v, %v; want 10 fields", ks, err)
	}
	if ks, err := c.HRandField(ctx, "h", 3).Result(); err != nil || len(ks) != 3 || !slices.IsSorted(ks) || len(slices.Compact(ks)) != 3 {
		t.Errorf("HRANDFIELD 3 = %v, %v; want 3 distinct fields in the hash's order", ks, err)
	}
	if kvs, err := c.HRandFieldWithValues(ctx, "h", 2).Result(); err != nil || len(kvs) != 2 || kvs[0].Value != c.HGet(ctx, "h", kvs[0].Key).Val() {
		t.Errorf("HRANDFIELD 2 WITHVALUES = %v, %v", kvs, err)
	}
	if kvs, err := c.HRandFieldWithValues(ctx, "h", -3).Result(); err != nil || len(kvs) != 3 {
		t.Errorf("HRANDFIELD -3 WITHVALUES = %v, %v", kvs, err)
	}
	if ks, cur, err := c.HScan(ctx, "h", 0, "[ab]", 10).Result(); err != nil || cur != 0 || !slices.Equal(ks, []string{"a", "-5", "b", "2"}) {
		t.Errorf("HSCAN MATCH [ab] = %v, %d, %v", ks, cur, err)
	}
	if n, err := c.HDel(ctx, "h", "a", "nope", "b").Result(); n != 2 || err != nil {
		t.Errorf("HDEL = %d, %v; want 2", n, err)
	}
	if ks := c.HKeys(ctx, "h").Val(); !slices.Equal(ks, []string{"c", "d", "e", "f"}) {
		t.Errorf("HKEYS after HDEL = %v; want the rest in order", ks)
	}
	c.HDel(ctx, "h", "c", "d", "e", "f")
	if n := c.Exists(ctx, "h").Val(); n != 0 {
		t.Errorf("EXISTS of an emptied hash = %d; want 0", n)
	}

	// Errors.
	c.Set(ctx, "str", "v", 0)
	for name, err := range map[string]error{
		"HSET wrong type":        c.HSet(ctx, "str", "a", "1").Err(),
		"HGET wrong type":        c.HGet(ctx, "str", "a").Err(),
		"HGETALL wrong type":     c.HGetAll(ctx, "str").Err(),
		"HSCAN wrong type":       c.HScan(ctx, "str", 0, "", 0).Err(),
		"HRANDFIELD wrong type":  c.HRandField(ctx, "str", 1).Err(),
		"HINCRBYFLOAT wrongtype": c.HIncrByFloat(ctx, "str", "a", 1).Err(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
			t.Errorf("%s: %v; want WRONGTYPE", name, err)
		}
	}
	c.HSet(ctx, "n", "s", "abc", "max", "9223372036854775807")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"HINCRBY on a string", c.HIncrBy(ctx, "n", "s", 1).Err(), "ERR hash value is not an integer"},
		{"HINCRBY overflow", c.HIncrBy(ctx, "n", "max", 1).Err(), "ERR increment or decrement would overflow"},
		{"HINCRBYFLOAT on a string", c.HIncrByFloat(ctx, "n", "s", 1).Err(), "ERR hash value is not a float"},
		{"HINCRBY bad increment", c.Do(ctx, "HINCRBY", "n", "i", "x").Err(), "ERR value is not an integer or out of range"},
		{"HINCRBYFLOAT bad increment", c.Do(ctx, "HINCRBYFLOAT", "n", "i", "x").Err(), "ERR value is not a valid float"},
		{"HINCRBYFLOAT inf", c.Do(ctx, "HINCRBYFLOAT", "n", "i", "inf").Err(), "ERR value is NaN or Infinity"},
		{"HSET odd", c.Do(ctx, "HSET", "n", "a", "1", "b").Err(), "ERR wrong number of arguments for 'hset' command"},
		{"HRANDFIELD bad option", c.Do(ctx, "HRANDFIELD", "n", "1", "x").Err(), "ERR syntax error"},
		{"HSCAN bad cursor", c.Do(ctx, "HSCAN", "n", "x").Err(), "ERR invalid cursor"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%s: %v; want %s", tc.name, tc.err, tc.want)
		}
	}
	c.HSet(ctx, "n", "big", "1e4932")
	if err := c.Do(ctx, "HINCRBYFLOAT", "n", "big", "1e308").Err(); err != nil {
		t.Errorf("HINCRBYFLOAT within the long double range: %v", err)
	}
	if err := c.Do(ctx, "HINCRBYFLOAT", "n", "big", "1e4932").Err(); err == nil || err.Error() != "ERR increment would produce NaN or Infinity" {
		t.Errorf("HINCRBYFLOAT past the long double range: %v", err)
	}
}

func TestHashRESP3(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := goRedis(t, addr, func(o *redis.Options) { o.Protocol = 3 })
	ctx := context.Background()
	c.HSet(ctx, "h", "a", "1", "b", "2")
	if m, err := c.HGetAll(ctx, "h").Result(); err != nil || len(m) != 2 || m["a"] != "1" {
		t.Errorf("HGETALL = %v, %v", m, err)
	}
	if kvs, err := c.HRandFieldWithValues(ctx, "h", 5).Result(); err != nil || len(kvs) != 2 || kvs[0] != (redis.KeyValue{Key: "a", Value: "1"}) {
		t.Errorf("HRANDFIELD WITHVALUES = %v, %v", kvs, err)
	}
	rc := dialRaw(t, addr)
	rc.do("HELLO", "3")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"HGETALL", "h"}, "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		{[]string{"HGETALL", "nokey"}, "%0\r\n"},
		{[]string{"HRANDFIELD", "h", "-1", "WITHVALUES"}, ""},
		{[]string{"HRANDFIELD", "h", "2", "WITHVALUES"}, "*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		{[]string{"HRANDFIELD", "nokey"}, "_\r\n"},
		{[]string{"HGET", "h", "nope"}, "_\r\n"},
		{[]string{"HMGET", "h", "nope"}, "*1\r\n_\r\n"},
	} {
		got := rc.do(tc.args...)
		if tc.want == "" {
			if !strings.HasPrefix(got, "*1\r\n*2\r\n") {
				t.Errorf("%q = %q; want one pair", tc.args, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%q = %q; want %q", tc.args, got, tc.want)
		}
	}
}

func TestHashMulti(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := goRedis(t, addr)
	ctx := context.Background()
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, "h", "a", "1")
		p.HIncrBy(ctx, "h", "a", 2)
		p.HIncrByFloat(ctx, "h", "a", 0.5)
		p.HIncrBy(ctx, "h", "a", 1) // fails: 3.5 is not an integer
		p.HGetAll(ctx, "h")
		return nil
	})
	if err == nil || err.Error() != "ERR hash value is not an integer" || len(cmds) != 5 {
		t.Fatalf("EXEC = %v, %v; want HINCRBY's error", cmds, err)
	}
	if m := cmds[4].(*redis.MapStringStringCmd).Val(); m["a"] != "3.5" {
		t.Errorf("HGETALL in MULTI = %v; want a=3.5", m)
	}

	// Every HSET touches a WATCHed hash, even one that changes no value;
	// an HSETNX or HDEL that changes nothing does not.
	other := goRedis(t, addr)
	for _, tc := range []struct {
		name    string
		change  func() error
		touches bool
	}{
		{"HSET of the same value", func() error { return other.HSet(ctx, "h", "a", "3.5").Err() }, true},
		{"HSETNX of an existing field", func() error { return other.HSetNX(ctx, "h", "a", "x").Err() }, false},
		{"HINCRBY of a float", func() error { return other.HIncrBy(ctx, "h", "a", 1).Err() }, false},
		{"HINCRBY 0", func() error { return other.HIncrBy(ctx, "h", "b", 0).Err() }, true},
		{"HDEL of a missing field", func() error { return other.HDel(ctx, "h", "nope").Err() }, false},
		{"HDEL", func() error { return other.HDel(ctx, "h", "a").Err() }, true},
	} {
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			tc.change()
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, "h", "b", "1")
				return nil
			})
			return err
		}, "h")
		if tc.touches != errors.Is(err, redis.TxFailedErr) {
			t.Errorf("EXEC after %s = %v; want failure %v", tc.name, err, tc.touches)
		}
	}
}

// TestHashAppendOnly checks that the log replays the hashes as written,
// HINCRBYFLOAT's results included (logged as HSET), and that a rewritten
// log does too.
func TestHashAppendOnly(t *testing.T) {
	t.Parallel()
	for _, rewrite := range []bool{false, true} {
		t.Run(fmt.Sprint("rewrite=", rewrite), func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			s, addr := startServer(t, Config{AppendOnly: true, Dir: dir, AppendFsync: "always"})
			c := goRedis(t, addr)
			for i := range 600 {
				c.HSet(ctx, "big", "f"+strconv.Itoa(i), i)
			}
			c.HDel(ctx, "big", "f7")
			c.HSet(ctx, "small", "a", "1", "b", "2", "c", "3")
			c.HDel(ctx, "small", "a")
			c.HIncrBy(ctx, "small", "n", 5)
			c.HIncrByFloat(ctx, "small", "f", 10.5)
			c.HIncrByFloat(ctx, "small", "f", 0.1)
			c.HIncrByFloat(ctx, "small", "g", 1e-20)
			c.Do(ctx, "HINCRBYFLOAT", "small", "h", "0x1p-3")
			c.HSetNX(ctx, "small", "b", "x")
			c.HSet(ctx, "gone", "a", "1")
			c.HDel(ctx, "gone", "a")
			if rewrite {
				if err := c.Do(ctx, "BGREWRITEAOF").Err(); err != nil {
					t.Fatal(err)
				}
				for deadline := time.Now().Add(10 * time.Second); !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_rewrite_in_progress:0"); time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the rewrite did not finish")
					}
				}
				c.HIncrByFloat(ctx, "small", "f", 1.25)
			}
			want := map[string]map[string]string{}
			for _, k := range []string{"big", "small"} {
				want[k] = c.HGetAll(ctx, k).Val()
			}
			wantKeys := c.HKeys(ctx, "small").Val()
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := s.Shutdown(sctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "appendonly.aof"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "HINCRBYFLOAT") {
				t.Errorf("the log holds HINCRBYFLOAT; want it logged as HSET")
			}
			_, addr2 := startServer(t, Config{AppendOnly: true, Dir: dir})
			c2 := goRedis(t, addr2)
			for k, m := range want {
				if got := c2.HGetAll(ctx, k).Val(); !maps.Equal(got, m) {
					t.Errorf("%s after replay = %v; want %v", k, got, m)
				}
			}
			if got := c2.HKeys(ctx, "small").Val(); !slices.Equal(got, wantKeys) {
				t.Errorf("HKEYS small after replay = %v; want %v", got, wantKeys)
			}
			if got := c2.ObjectEncoding(ctx, "big").Val(); got != "hashtable" {
				t.Errorf("OBJECT ENCODING big after replay = %q; want hashtable", got)
			}
			if n := c2.Exists(ctx, "gone").Val(); n != 0 {
				t.Errorf("EXISTS gone after replay = %d; want 0", n)
			}
		})
	}
}

func TestHashValue(t *testing.T) {
	h := newHash(nil)
	for i := range 600 {
		if !h.set([]byte("f"+strconv.Itoa(i)), []byte(strconv.Itoa(i))) {
			t.Fatalf("set f%d did not add it", i)
		}
		want := "listpack"
		if i >= defaultLimits.hashEntries {
			want = "hashtable"
		}
		if got := h.encoding(); got != want {
			t.Fatalf("encoding with %d fields = %q; want %q", i+1, got, want)
		}
	}
	c := h.clone()
	c.remove([]byte("f1"))
	if !h.exists([]byte("f1")) || c.len() != 599 || h.len() != 600 || c.encoding() != "hashtable" {
		t.Errorf("clone shares state or changes encoding: %d, %d, %s", h.len(), c.len(), c.encoding())
	}
	var w resp.Writer
	h.rewrite(&w, []byte("k"))
	rebuilt := newHash(nil)
	for b, cmds := w.Buf, 0; len(b) > 0; cmds++ {
		v, n, err := resp.Parse(b)
		if err != nil {
			t.Fatalf("rewrite output: %v", err)
		}
		b = b[n:]
		if len(v.Elems) < 4 || len(v.Elems) > 2+2*64 || len(v.Elems)%2 != 0 || string(v.Elems[0].Str) != "HSET" || string(v.Elems[1].Str) != "k" {
			t.Fatalf("rewrite command %d has %d arguments: %q", cmds, len(v.Elems), v.Elems[0].Str)
		}
		for i := 2; i < len(v.Elems); i += 2 {
			rebuilt.set(v.Elems[i].Str, v.Elems[i+1].Str)
		}
	}
	if rebuilt.len() != h.len() {
		t.Fatalf("rebuilt %d fields; want %d", rebuilt.len(), h.len())
	}
	for i := range h.len() {
		f, v := h.at(i)
		if got, _ := rebuilt.get(f); string(got) != string(v) {
			t.Errorf("rebuilt %s = %q; want %q", f, got, v)
		}
	}
	for i := range 599 {
		h.remove([]byte("f" + strconv.Itoa(i)))
	}
	if got := h.encoding(); got != "hashtable" || h.len() != 1 {
		t.Errorf("encoding after shrinking to %d = %q; want hashtable", h.len(), got)
	}

	// A small hash keeps its order through deletes, and a clone keeps it.
	s := newHash(nil)
	for _, f := range []string{"a", "b", "c", "d", "e"} {
		s.set([]byte(f), []byte(f+f))
	}
	s.remove([]byte("b"))
	s.set([]byte("b"), []byte("new"))
	s.set([]byte("a"), []byte("changed"))
	var order []string
	for i := range s.clone().len() {
		f, v := s.clone().at(i)
		order = append(order, string(f)+"="+string(v))
	}
	if want := []string{"a=changed", "c=cc", "d=dd", "e=ee", "b=new"}; !slices.Equal(order, want) {
		t.Errorf("order = %q; want %q", order, want)
	}
	for _, tc := range []struct {
		name   string
		field  string
		value  string
		encode string
	}{
		{"64-byte field", strings.Repeat("f", 64), "v", "listpack"},
		{"64-byte value", "f", strings.Repeat("v", 64), "listpack"},
		{"65-byte field", strings.Repeat("f", 65), "v", "hashtable"},
		{"65-byte value", "f", strings.Repeat("v", 65), "hashtable"},
	} {
		h := newHash(nil)
		h.set([]byte(tc.field), []byte(tc.value))
		if got := h.encoding(); got != tc.encode {
			t.Errorf("%s: encoding = %q; want %q", tc.name, got, tc.encode)
		}
	}
}

// TestLongDouble checks HINCRBYFLOAT's arithmetic against values that
// Redis 7.0 on x86-64 computes in 80-bit long double.
func TestLongDouble(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // formatted; "" if refused
	}{
		{"10.5", "10.5"}, {"0.1", "0.1"}, {"-0", "0"}, {"3.0", "3"}, {"1e17", "100000000000000000"},
		{"5.0e3", "5000"}, {"0x10", "16"}, {"0x1.8p1", "3"}, {"0X.8", "0.5"}, {".5", "0.5"}, {"5.", "5"},
		{"+1E+2", "100"}, {"1e-20", "0"}, {"123456789012345678901234567890", "123456789012345678899921813504"},
		{"1e-5000", ""}, {"1e5000", ""}, {"0e-5000", "0"}, {"nan", ""}, {" 1", ""}, {"1 ", ""}, {"", ""}, {"x", ""},
		{"1e", ""}, {"0x", ""}, {"0xp1", ""}, {"1_0", ""}, {"1/2", ""}, {"0b1", ""}, {".", ""}, {"-", ""}, {"1\x00", ""},
		{"0x1p16384", ""}, {"0x1p-16446", ""}, {"0x1p-16445", "0"},
	} {
		x, ok := parseLongDouble([]byte(tc.in))
		got := ""
		if ok {
			got = formatLongDouble(x)
			if x.IsInf() {
				got = "inf"
			}
		}
		if got != tc.want {
			t.Errorf("parseLongDouble(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, tc := range []struct{ in string }{{"inf"}, {"-Infinity"}, {"INF"}} {
		if x, ok := parseLongDouble([]byte(tc.in)); !ok || !x.IsInf() {
			t.Errorf("parseLongDouble(%q) = %v, %v; want infinity", tc.in, x, ok)
		}
	}
	if x, ok := parseLongDouble([]byte("0x1p16383")); !ok || x.IsInf() {
		t.Errorf("parseLongDouble(0x1p16383) = %v, %v; want 2^16383", x, ok)
	}
	// 0.1 + 0.2 in long double is 0.3 to 17 places; in double it is not.
	a, _ := parseLongDouble([]byte("0.1"))
	b, _ := parseLongDouble([]byte("0.2"))
	if got := formatLongDouble(longDouble(new(big.Float).SetPrec(64).Add(a, b))); got != "0.3" {
		t.Errorf("0.1 + 0.2 = %s; want 0.3", got)
	}
	// The smallest subnormal, and half of it rounding to even (0).
	tiny, ok := parseLongDouble([]byte("0x1p-16445"))
	if !ok || tiny.MantExp(nil) != -16444 {
		t.Errorf("parseLongDouble(0x1p-16445) = %v, %v; want the smallest subnormal", tiny, ok)
	}
	if _, ok := parseLongDouble([]byte("0x1p-16446")); ok {
		t.Errorf("parseLongDouble(0x1p-16446) accepted; want it refused as an underflow")
	}
}

// TestCompatHashKeyspaceStats checks that reads count keyspace hits and
// misses and writes do not, and that changes are counted per field, as in
// Redis.
func TestCompatHashKeyspaceStats(t *testing.T) {
	script := [][]string{
		{"HSET", "h", "a", "1"}, {"HSET", "none", "a", "1"}, {"HDEL", "none", "a"}, {"HSETNX", "h", "a", "2"}, {"HINCRBY", "h", "n", "1"},
		{"HINCRBYFLOAT", "x", "n", "1"}, {"HDEL", "h", "a"}, {"HDEL", "nokey", "a"}, {"HGET", "h", "n"}, {"HGET", "nokey", "n"},
		{"HMGET", "h", "a"}, {"HLEN", "nokey"}, {"HSTRLEN", "h", "n"}, {"HEXISTS", "nokey", "a"}, {"HKEYS", "h"}, {"HVALS", "nokey"},
		{"HGETALL", "h"}, {"HRANDFIELD", "h"}, {"HRANDFIELD", "nokey", "2"}, {"HSCAN", "h", "0"}, {"HSCAN", "nokey", "0"},
		{"HSET", "h", "a", "1", "b", "2", "a", "3"}, {"HMSET", "h", "c", "1", "d", "2"}, {"HDEL", "h", "a", "b", "c", "nope"}, {"HDEL", "h", "nope"},
		{"HINCRBYFLOAT", "h", "f", "0.5"}, {"HINCRBY", "h", "d", "x"}, {"HINCRBY", "h", "n", "0"}, {"HDEL", "h", "d", "n", "f", "x"},
	}
	compareStats(t, script, "keyspace_", "rdb_changes_since_last_save")
}

// TestHashScanLarge walks a hashtable-encoded hash with HSCAN, deleting
// fields on the way: every field present throughout is returned.
func TestHashScanLarge(t *testing.T) {
	c, ctx := serverAndClient(t)
	want := map[string]bool{}
	for i := range 1000 {
		f := "f" + strconv.Itoa(i)
		want[f] = true
		c.HSet(ctx, "h", f, i)
	}
	got := map[string]bool{}
	var cursor uint64
	for calls := 0; ; calls++ {
		items, next, err := c.HScan(ctx, "h", cursor, "f1*", 50).Result()
		if err != nil || calls > 1000 {
			t.Fatalf("HSCAN: %v after %d calls", err, calls)
		}
		for i := 0; i < len(items); i += 2 {
			got[items[i]] = true
			if "f"+items[i+1] != items[i] {
				t.Errorf("HSCAN pair %s %s", items[i], items[i+1])
			}
		}
		if calls == 3 {
			c.HDel(ctx, "h", "f0", "f2", "f3") // deletions during the walk lose nothing else
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	for f := range want {
		if strings.HasPrefix(f, "f1") && !got[f] {
			t.Errorf("HSCAN missed %s", f)
		}
	}
	for f := range got {
		if !strings.HasPrefix(f, "f1") {
			t.Errorf("HSCAN MATCH f1* returned %s", f)
		}
	}
}

// TestHashAllocs holds the hot hash commands to their allocation budgets:
// reads none, an HSET one for the value it keeps.
func TestHashAllocs(t *testing.T) {
	s, c := directServer(t)
	bs := argv
	for _, key := range []string{"small", "big"} {
		set := []string{"HSET", key}
		for i := range 100 {
			set = append(set, "field:"+strconv.Itoa(i), "value:"+strconv.Itoa(i))
		}
		if key == "big" {
			set = append(set, "long", strings.Repeat("x", 100))
		}
		hsetCommand(s, c, bs(set...))
		for _, tc := range []struct {
			name   string
			fn     func(*Server, *client, [][]byte)
			args   [][]byte
			budget float64
		}{
			{"HGET", hgetCommand, bs("HGET", key, "field:50"), 0},
			{"HMGET", hmgetCommand, bs("HMGET", key, "field:50", "nope", "field:99"), 0},
			{"HGETALL", hgetallCommand, bs("HGETALL", key), 0},
			{"HEXISTS", hexistsCommand, bs("HEXISTS", key, "field:99"), 0},
			{"HSET", hsetCommand, bs("HSET", key, "field:50", "v"), 1},
		} {
			t.Run(key+"/"+tc.name, func(t *testing.T) {
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
}

// BenchmarkHashGetSet is an HGET and an HSET of an existing field in a
// hash of each encoding and size, called directly.
func BenchmarkHashGetSet(b *testing.B) {
	for _, tc := range []struct {
		name   string
		fields int
		big    bool
	}{
		{"listpack/fields=8", 8, false}, {"listpack/fields=128", 128, false}, {"listpack/fields=512", 512, false},
		{"hashtable/fields=8", 8, true}, {"hashtable/fields=512", 512, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := newHash(nil)
			if tc.big {
				h.convert()
			}
			for i := range tc.fields {
				h.set([]byte("field:"+strconv.Itoa(i)), []byte("value:"+strconv.Itoa(i)))
			}
			f, v := []byte("field:"+strconv.Itoa(tc.fields*3/4)), []byte("v")
			b.ReportAllocs()
			for b.Loop() {
				h.get(f)
				h.set(f, v)
			}
		})
	}
}

// TestSmallHashModel runs random sets and removes on a small hash against
// an ordered model, with fields and values of every length a small hash
// takes (0 to 64 bytes, so that a replaced value grows, shrinks or keeps
// its length in the pack): the pairs, their order and every look-up must
// agree, until the hash converts, after which the pairs must still.
func TestSmallHashModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	word := func(max int) []byte {
		b := make([]byte, rng.IntN(max+1))
		for i := range b {
			b[i] = byte('a' + rng.IntN(3))
		}
		return b
	}
	for round := range 300 {
		h := newHash(nil)
		var fields, values []string
		index := func(f []byte) int { return slices.Index(fields, string(f)) }
		for range rng.IntN(700) {
			f := word(3 + rng.IntN(2)*60)
			if rng.IntN(4) == 0 {
				i := index(f)
				if got := h.remove(f); got != (i >= 0) {
					t.Fatalf("round %d: remove(%q) = %v", round, f, got)
				}
				if i >= 0 {
					fields, values = slices.Delete(fields, i, i+1), slices.Delete(values, i, i+1)
				}
				continue
			}
			v := word(64)
			if rng.IntN(2000) == 0 {
				v = word(65) // may be one byte too long: the hash converts
			}
			i := index(f)
			if got := h.set(f, v); got != (i < 0) {
				t.Fatalf("round %d: set(%q) = %v", round, f, got)
			}
			if i < 0 {
				fields, values = append(fields, string(f)), append(values, string(v))
			} else {
				values[i] = string(v)
			}
		}
		if h.len() != len(fields) {
			t.Fatalf("round %d: len %d, model %d", round, h.len(), len(fields))
		}
		wantEnc := "listpack"
		if len(fields) > defaultLimits.hashEntries {
			wantEnc = "hashtable"
		}
		if h.encoding() != wantEnc && !h.big() {
			t.Fatalf("round %d: encoding %s with %d fields", round, h.encoding(), len(fields))
		}
		j := 0
		for f, v := range h.all() {
			if !h.big() && (string(f) != fields[j] || string(v) != values[j]) {
				t.Fatalf("round %d: pair %d = %q %q; want %q %q", round, j, f, v, fields[j], values[j])
			}
			j++
		}
		for i, f := range fields {
			if v, ok := h.get([]byte(f)); !ok || string(v) != values[i] {
				t.Fatalf("round %d: get(%q) = %q %v; want %q", round, f, v, ok, values[i])
			}
			if !h.big() {
				if af, av := h.at(i); string(af) != f || string(av) != values[i] {
					t.Fatalf("round %d: at(%d) = %q %q", round, i, af, av)
				}
			}
		}
		if _, ok := h.get([]byte("not a field: too long for word")); ok {
			t.Fatalf("round %d: a field never set found", round)
		}
	}
}

// TestSmallHashSetFromItself sets fields to values read from the same
// hash, which alias its pack, with room in the pack and lengths that
// move the pairs after them.
func TestSmallHashSetFromItself(t *testing.T) {
	h := newHash(nil)
	h.fit([][]byte{[]byte("a"), []byte("x"), []byte("b"), []byte("hello"), []byte("c"), []byte("yy")})
	h.set([]byte("a"), []byte("x"))
	h.set([]byte("b"), []byte("hello"))
	h.set([]byte("c"), []byte("yy"))
	h.pack = slices.Grow(h.pack, 64)
	v, _ := h.get([]byte("b"))
	h.set([]byte("a"), v)
	v, _ = h.get([]byte("c"))
	h.set([]byte("b"), v)
	v, _ = h.get([]byte("a"))
	h.set([]byte("d"), v)
	want := []string{"a=hello", "b=yy", "c=yy", "d=hello"}
	var got []string
	for f, v := range h.all() {
		got = append(got, string(f)+"="+string(v))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pairs = %q; want %q", got, want)
	}
}

// BenchmarkHashBuild builds a 500-field hash an HSET at a time, as
// hsetCommand calls fit and set.
func BenchmarkHashBuild(b *testing.B) {
	v := []byte(strings.Repeat("v", 32))
	fields := make([][]byte, 500)
	for i := range fields {
		fields[i] = []byte(fmt.Sprintf("field:%04d", i))
	}
	b.ReportAllocs()
	for b.Loop() {
		h := newHash(nil)
		for _, f := range fields {
			h.fit([][]byte{f, v})
			h.set(f, v)
		}
	}
}
