package kv

import (
	"context"
	"errors"
	"fmt"
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
		got, want := ours.do(args...), theirs.do(args...)
		name := strings.ToUpper(args[0])
		if listsHash(args) {
			encGot, encWant := ours.do("OBJECT", "ENCODING", args[1]), theirs.do("OBJECT", "ENCODING", args[1])
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

var (
	_ = context.Background
	_ = errors.Is
	_ = big.NewFloat
	_ = rand.IntN
	_ = os.ReadFile
	_ = filepath.Join
	_ = time.Second
	_ = redis.Nil
)
