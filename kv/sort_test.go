package kv

import (
	"bytes"
	"context"
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

// sortData fills lists, sets and sorted sets, and the keys their patterns
// name, for the SORT scripts.
func sortData() [][]string {
	return [][]string{
		{"RPUSH", "l", "3", "1", "2", "10", "-1.5", "1e2", "0x10", "+7", " 4", ""},
		{"RPUSH", "w", "b", "a", "c", "B", "aa", "", "a\x00z", "a\x00b", "é", "\xff"},
		{"RPUSH", "dup", "2", "1", "2", "1", "x"},
		{"SADD", "is", "30", "-2", "100", "7", "0"},
		{"SADD", "ss", "pear", "apple", "fig"},
		{"ZADD", "z", "3", "c", "1", "a", "2", "b", "2", "bb", "0", "z0"}, {"RPUSH", "zl", "c", "a", "b", "bb", "z0"},
		{"MSET", "w_3", "30", "w_1", "x", "w_2", "-5", "w_10", "1e1", "w_c", "1", "w_a", "3", "w_b", "2", "w_bb", "2"},
		{"MSET", "n_a", "alpha", "n_b", "beta", "n_c", "gamma", "n_z0", "zero", "o_1", "one"},
		{"HSET", "h_a", "f", "10", "g", "ga"}, {"HSET", "h_b", "f", "5"}, {"HSET", "h_c", "g", "gc"},
		{"HSET", "h_30", "f", "1"}, {"HSET", "h_7", "f", "2", "f\x00x", "nul"},
		{"SET", "str", "x"}, {"HSET", "hash", "a", "1"}, {"RPUSH", "bad", "1", "x", "2"},
	}
}

func sortScript() [][]string {
	return append(sortData(), [][]string{
		// Plain sorts of each type, numeric and ALPHA.
		{"SORT", "l"}, {"SORT", "l", "DESC"}, {"SORT", "w", "ALPHA"}, {"SORT", "w", "ALPHA", "DESC"},
		{"SORT", "dup"}, {"SORT", "dup", "ALPHA"}, {"SORT", "is"}, {"SORT", "is", "DESC"}, {"SORT", "ss", "ALPHA"},
		{"SORT", "z", "ALPHA"}, {"SORT", "z", "ALPHA", "DESC"}, {"OBJECT", "ENCODING", "z"}, {"SORT", "nokey"}, {"SORT_RO", "nokey"},
		{"SORT", "w"}, {"SORT", "bad"}, {"SORT", "bad", "LIMIT", "0", "1"}, {"SORT", "bad", "ALPHA"}, {"SORT", "z"},
		// Options: case, repetition, order, errors.
		{"sort", "l", "limit", "1", "3", "desc", "asc"}, {"SORT", "l", "LIMIT", "-5", "2"}, {"SORT", "l", "LIMIT", "2", "-1"},
		{"SORT", "l", "LIMIT", "20", "2"}, {"SORT", "l", "LIMIT", "0", "0"}, {"SORT", "l", "LIMIT", "9", "5"},
		{"SORT", "l", "LIMIT", "1", "2", "LIMIT", "3", "1"}, {"SORT", "l", "LIMIT", "9223372036854775807", "9223372036854775807"},
		{"SORT", "l", "LIMIT", "-9223372036854775808", "3"}, {"SORT", "l", "LIMIT", "x", "1"}, {"SORT", "l", "LIMIT", "1", "x"},
		{"SORT", "l", "LIMIT", "1"}, {"SORT", "l", "LIMIT", "1.5", "2"}, {"SORT", "l", "FOO"}, {"SORT", "l", "BY"}, {"SORT", "l", "GET"},
		{"SORT", "l", "STORE"}, {"SORT", "str"}, {"SORT", "hash"}, {"SORT", "str", "FOO"}, {"SORT", "str", "LIMIT", "x", "1"},
		{"SORT", "l", "ASC\x00junk"}, {"SORT", "l", "ſtore", "d"}, {"SORT", "l", "DESC", "ALPHA", "LIMIT", "0", "3"},
		{"SORT"}, {"SORT_RO"}, {"SORT_RO", "l", "STORE", "d"}, {"SORT_RO", "l", "LIMIT", "0", "2", "DESC"}, {"SORT_RO", "str"},
		// BY: weights, hash fields, nosort, constant patterns, NUL bytes.
		{"SORT", "l", "BY", "w_*"}, {"SORT", "l", "BY", "w_*", "DESC"}, {"SORT", "z", "BY", "w_*"}, {"SORT", "zl", "BY", "w_*", "ALPHA"},
		{"SORT", "z", "BY", "n_*", "ALPHA"}, {"SORT", "z", "BY", "n_*", "ALPHA", "DESC"}, {"SORT", "z", "BY", "n_*"},
		{"SORT", "z", "BY", "h_*->f"}, {"SORT", "zl", "BY", "h_*->g", "ALPHA"}, {"SORT", "is", "BY", "h_*->f"},
		{"SORT", "z", "BY", "h_*->"}, {"SORT", "z", "BY", "h_->*"}, {"SORT", "z", "BY", "nosort"}, {"SORT", "z", "BY", "nosort", "DESC"},
		{"SORT", "z", "BY", "nosort", "LIMIT", "1", "2"}, {"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "2"},
		{"SORT", "z", "BY", "nosort", "LIMIT", "5", "2"}, {"SORT", "z", "BY", "nosort", "DESC", "LIMIT", "4", "9"},
		{"SORT", "l", "BY", "nosort"}, {"SORT", "l", "BY", "nosort", "DESC"}, {"SORT", "l", "BY", "nosort", "LIMIT", "2", "3"},
		{"SORT", "l", "BY", "nosort", "DESC", "LIMIT", "2", "3"}, {"SORT", "l", "BY", "nosort", "LIMIT", "20", "1"},
		{"SORT", "l", "BY", "nosort", "DESC", "LIMIT", "-3", "-3"}, {"SORT", "is", "BY", "nosort"}, {"SORT", "is", "BY", "nosort", "DESC"},
		{"SORT", "is", "BY", "nosort", "LIMIT", "1", "2"}, {"SORT", "nokey", "BY", "nosort", "LIMIT", "1", "2"},
		{"SORT", "l", "BY", "w_*", "BY", "nosort"}, {"SORT", "l", "BY", "nosort", "BY", "w_*"}, {"SORT", "l", "BY", "x\x00*"},
		{"SORT", "zl", "BY", "n_*\x00", "ALPHA"}, {"SORT", "zl", "BY", "nokey_*", "ALPHA"}, {"SORT", "z", "BY", "nokey_*"},
		{"SORT", "l", "BY", "w_*", "LIMIT", "1", "3"}, {"SORT", "l", "BY", "w_*", "ALPHA", "LIMIT", "0", "4"},
		{"SORT", "bad", "BY", "w_*"}, {"SORT", "bad", "BY", "nosort"},
		// GET: #, strings, hash fields, several, missing, constant.
		{"SORT", "z", "ALPHA", "GET", "#", "GET", "n_*", "GET", "h_*->f", "GET", "h_*->g"}, {"SORT", "z", "ALPHA", "GET", "nokey"},
		{"SORT", "z", "ALPHA", "GET", "#\x00x"}, {"SORT", "is", "GET", "h_*->f\x00x"}, {"SORT", "is", "GET", "h_*->f", "LIMIT", "1", "1"},
		{"SORT", "z", "BY", "nosort", "GET", "n_*", "DESC"}, {"SORT", "z", "ALPHA", "GET", "n_*->x"}, {"SORT", "z", "ALPHA", "GET", "w_*"},
		{"SORT", "z", "ALPHA", "GET", "n_*", "LIMIT", "0", "0"}, {"SORT", "nokey", "GET", "#"},
		// STORE: lists, replacing other types, empty results, TTLs.
		{"SORT", "l", "STORE", "d"}, {"LRANGE", "d", "0", "-1"}, {"TYPE", "d"}, {"OBJECT", "ENCODING", "d"},
		{"SORT", "z", "ALPHA", "GET", "n_*", "GET", "#", "STORE", "d"}, {"LRANGE", "d", "0", "-1"},
		{"SET", "d2", "v"}, {"EXPIRE", "d2", "100"}, {"SORT", "is", "STORE", "d2", "DESC"}, {"TTL", "d2"}, {"LRANGE", "d2", "0", "-1"},
		{"SORT", "nokey", "STORE", "d2"}, {"EXISTS", "d2"}, {"SORT", "l", "LIMIT", "0", "0", "STORE", "d"}, {"EXISTS", "d"},
		{"SORT", "nokey", "STORE", "never"}, {"SORT", "l", "STORE", "a", "STORE", "b"}, {"EXISTS", "a", "b"},
		{"SORT", "ss", "BY", "nosort", "STORE", "d"}, {"LRANGE", "d", "0", "-1"}, {"SORT", "ss", "BY", "nosort", "DESC", "STORE", "d"},
		{"LRANGE", "d", "0", "-1"}, {"SORT", "w", "BY", "nosort", "DESC", "STORE", "d"}, {"LRANGE", "d", "0", "-1"},
		{"SORT", "w", "ALPHA", "STORE", "d"}, {"LRANGE", "d", "0", "-1"}, {"SORT", "z", "BY", "n_*", "ALPHA", "STORE", "d"},
		{"LRANGE", "d", "0", "-1"}, {"SORT", "bad", "STORE", "d"}, {"LRANGE", "d", "0", "-1"}, {"SORT", "l", "STORE", "l"},
		{"LRANGE", "l", "0", "-1"}, {"SORT", "str", "STORE", "d"}, {"SORT", "l", "GET", "nokey", "STORE", "d"}, {"LRANGE", "d", "0", "-1"},
		{"SORT", "dup", "STORE", "d", "GET", "#", "GET", "o_*"}, {"LRANGE", "d", "0", "-1"},
	}...)
}

// TestCompatSort compares SORT and SORT_RO with Redis 7.0, in RESP2 and
// RESP3: every type, every option and their errors, and ALPHA's order of
// bytes (Redis's strcoll, in the C locale as the tests run it). Redis
// sorts a sorted set from its hash table, in an order of its own: ALPHA
// with BY ties keeps it, so those cases sort the list zl instead.
func TestCompatSort(t *testing.T) {
	compareWithRedis(t, sortScript())
	compareWithRedis(t, append([][]string{{"HELLO", "3"}}, sortScript()...))
}

// TestCompatSortScores: a score is what strtod reads of the whole string up
// to a NUL byte: leading spaces, hexadecimal, infinities and the empty
// string are numbers; trailing spaces, NaN, overflow and an inexact
// subnormal are not. Redis does not clear errno before its strtod: after
// a value out of range, its SORT of any value not stored as an integer
// fails until a command that clears errno (ZADD's parse of its score), or
// a failed system call, comes between; each case starts with a ZADD.
func TestCompatSortScores(t *testing.T) {
	var script [][]string
	clear := []string{"ZADD", "errno", "1", "x"}
	for _, v := range []string{
		"", " ", " 1", "1 ", "\t-2", "1\x00x", "\x00", "x", "0x", "0x1p3", "0x1.8", "0X1P-2", "inf", "-Infinity", "nan", "-nan",
		"1e308", "1e309", "-1e309", "1e-307", "2.2250738585072014e-308", "2.2250738585072011e-308", "1e-310", "4.9e-324",
		"0x1p-1074", "0x1p-1075", "0x1.8p-1074", "1e-400", "0e-400", "0.000", "-0", "+0", "1_000", "0x_1p0", "1e", "1e+", ".", ".5",
		"5.", "00012", "1,5", "0b101", "0o17", "1/2", "Infinityx", "infin", "9223372036854775808", "-9223372036854775809",
	} {
		script = append(script, clear, []string{"DEL", "k"}, []string{"RPUSH", "k", v, "0", "3"}, []string{"SORT", "k"},
			clear, []string{"MSET", "wk_0", v, "wk_3", "1"}, []string{"SORT", "k", "BY", "wk_*"})
	}
	compareWithRedis(t, script)
}

// TestCompatSortTies compares random sorts with Redis: many equal
// weights, with and without ALPHA, LIMIT and DESC. Numeric ties are
// ordered by the elements; ALPHA's BY ties keep the list's order when
// the whole is sorted (glibc's qsort is a merge sort) and Redis's
// partial quicksort's with a LIMIT.
func TestCompatSortTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	script := [][]string{{"SET", "nil_x", "0"}}
	for round := range 60 {
		key := "t" + strconv.Itoa(round)
		n := []int{3, 6, 7, 8, 20, 41, 60, 150}[rng.IntN(8)]
		push := []string{"RPUSH", key}
		for range n {
			e := strconv.Itoa(rng.IntN(n))
			push = append(push, e)
			if rng.IntN(4) > 0 {
				script = append(script, []string{"SET", "tw_" + e, string(rune('a' + rng.IntN(3)))})
				script = append(script, []string{"SET", "nw_" + e, strconv.Itoa(rng.IntN(3))})
			}
		}
		script = append(script, push)
		for range 6 {
			args := []string{"SORT", key}
			switch rng.IntN(4) {
			case 0:
				args = append(args, "BY", "tw_*", "ALPHA")
			case 1:
				args = append(args, "BY", "nw_*")
			case 2:
				args = append(args, "BY", "nil_*", "ALPHA")
			default:
				args = append(args, "BY", "tw_*", "ALPHA", "GET", "#", "GET", "tw_*")
			}
			if rng.IntN(2) == 0 {
				args = append(args, "DESC")
			}
			if rng.IntN(4) > 0 {
				args = append(args, "LIMIT", strconv.Itoa(rng.IntN(n+2)-1), strconv.Itoa(rng.IntN(n+2)-1))
			}
			script = append(script, args)
		}
		script = append(script, []string{"DEL", key})
	}
	compareWithRedis(t, script)
}

// TestCompatSortEvents: STORE publishes sortstore, or del when the result
// is empty and the destination existed; SORT without STORE publishes
// nothing. (TestCompatWriteOntoExpiredKeyEvents has STORE onto a key that
// has expired.)
func TestCompatSortEvents(t *testing.T) {
	compareEvents(t, [][]string{
		{"RPUSH", "l", "2", "1"}, {"SORT", "l"}, {"SORT", "l", "STORE", "d"}, {"SORT", "l", "STORE", "d"},
		{"SORT", "nokey", "STORE", "d"}, {"SORT", "nokey", "STORE", "d"}, {"SORT", "l", "LIMIT", "0", "0", "STORE", "l"},
		{"SET", "s", "x"}, {"SORT", "nokey", "BY", "nosort", "STORE", "s"}, {"SORT_RO", "nokey"}, {"SORT", "s"},
	})
}

// TestCompatSortKeyspaceStats: SORT counts a hit or a miss for the key it
// sorts, whatever its type, and for each key BY and GET look up; STORE
// counts an element a change. LCS counts both of its keys.
func TestCompatSortKeyspaceStats(t *testing.T) {
	script := [][]string{
		{"RPUSH", "l", "1"}, {"RPUSH", "l", "2"}, {"RPUSH", "l", "3"}, {"SET", "w_1", "1"}, {"HSET", "h_2", "f", "2"}, {"SET", "str", "x"},
		{"SORT", "l"},
		{"SORT", "nokey"}, {"SORT", "str"}, {"SORT", "l", "BY", "w_*"}, {"SORT", "l", "BY", "h_*->f", "GET", "w_*", "GET", "#"},
		{"SORT", "l", "BY", "nosort", "GET", "nope"}, {"SORT", "l", "STORE", "d"}, {"SORT", "l", "GET", "#", "GET", "w_*", "STORE", "d"},
		{"SORT", "nokey", "STORE", "d"}, {"SORT", "nokey", "STORE", "d"}, {"SORT", "l", "FOO"},
		{"LCS", "str", "nokey"}, {"LCS", "l", "str"}, {"LCS", "str", "str", "LEN"},
	}
	compareStats(t, script, "keyspace_", "rdb_changes_since_last_save")
}

// TestCompatSortWatch: SORT ... STORE fails the EXEC of a client WATCHing
// its destination when it stores or deletes it, not when the result is
// empty and the destination absent; SORT without STORE touches nothing.
func TestCompatSortWatch(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"RPUSH", "l", "2", "1"},
		{"WATCH", "d"}, {"SORT", "l", "STORE", "d"}, {"MULTI"}, {"PING"}, {"EXEC"},
		{"WATCH", "d"}, {"SORT", "nokey", "STORE", "d"}, {"MULTI"}, {"PING"}, {"EXEC"},
		{"WATCH", "d"}, {"SORT", "nokey", "STORE", "d"}, {"MULTI"}, {"PING"}, {"EXEC"},
		{"WATCH", "l"}, {"SORT", "l"}, {"SORT_RO", "l"}, {"SORT", "l", "STORE", "other"}, {"MULTI"}, {"PING"}, {"EXEC"},
		{"MULTI"}, {"SORT", "l", "STORE", "d"}, {"SORT_RO", "l", "STORE", "d"}, {"EXEC"},
		{"MULTI"}, {"SORT", "l", "DESC", "STORE", "d"}, {"LRANGE", "d", "0", "-1"}, {"EXEC"},
	})
}

// TestCompatSortCommandInfo compares what COMMAND INFO, COMMAND DOCS and
// COMMAND GETKEYS say of SORT, SORT_RO and LCS: name, arity, flags, key
// positions and ACL categories; summary, version and group; the keys,
// STORE's destination included. COMMAND GETKEYS takes a command and at
// least one argument of it (arity -4, as Redis 7.0's).
func TestCompatSortCommandInfo(t *testing.T) {
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	// first returns the first n elements of the first element of a reply
	// (COMMAND INFO's one entry, COMMAND DOCS's one map), encoded again.
	first := func(reply string, n int) string {
		v, _, err := resp.Parse([]byte(reply))
		if err != nil || len(v.Elems) == 0 || len(v.Elems[len(v.Elems)-1].Elems) < n {
			t.Fatalf("reply %q: %v", reply, err)
		}
		var w resp.Writer
		for _, e := range v.Elems[len(v.Elems)-1].Elems[:n] {
			w.Value(e)
		}
		return string(w.Buf)
	}
	for _, name := range []string{"sort", "sort_ro", "lcs"} {
		for _, q := range []struct {
			sub string
			n   int
		}{{"INFO", 7}, {"DOCS", 6}} {
			if got, want := first(ours.do("COMMAND", q.sub, name), q.n), first(theirs.do("COMMAND", q.sub, name), q.n); got != want {
				t.Errorf("COMMAND %s %s: evkv %q; Redis %q", q.sub, name, got, want)
			}
		}
	}
	for _, args := range [][]string{
		{"COMMAND", "GETKEYS", "SORT", "a"}, {"COMMAND", "GETKEYS", "SORT", "a", "STORE", "b", "STORE", "c"},
		{"COMMAND", "GETKEYS", "SORT", "a", "LIMIT", "store", "x", "STORE", "b"}, {"COMMAND", "GETKEYS", "SORT", "a", "STORE"},
		{"COMMAND", "GETKEYS", "SORT", "a", "BY", "store", "GET", "store", "x"}, {"COMMAND", "GETKEYS", "SORT_RO", "a", "BY", "x"},
		{"COMMAND", "GETKEYS", "LCS", "a", "b", "IDX"}, {"COMMAND", "GETKEYS", "SORT"}, {"COMMAND", "GETKEYS"},
	} {
		if got, want := ours.do(args...), theirs.do(args...); got != want {
			t.Errorf("%q: evkv replied %q; Redis %q", args, got, want)
		}
	}
}

// TestCompatSortStoreEventOrder: a RESP3 client subscribed to its own
// keyspace events gets STORE's sortstore or del event before the reply,
// as Redis publishes it before replying.
func TestCompatSortStoreEventOrder(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"HELLO", "3"}, {"CONFIG", "SET", "notify-keyspace-events", "Elg"}, {"RPUSH", "l", "b", "a"},
		{"SUBSCRIBE", "__keyevent@0__:sortstore", "__keyevent@0__:del"},
		{"SORT", "l", "ALPHA", "STORE", "d"}, {"SORT", "nokey", "STORE", "d"}, {"PING"}, {"PING"}, {"PING"},
		{"CONFIG", "SET", "notify-keyspace-events", ""},
	})
}

var sortOptionCases = []struct {
	name     string
	args     []string // after SORT key
	readonly bool
	want     sortOptions
	err      string
}{
	{name: "none", want: sortOptions{count: -1}},
	{name: "flags", args: []string{"desc", "ALPHA", "Asc", "DESC"}, want: sortOptions{desc: true, alpha: true, count: -1}},
	{name: "limit", args: []string{"LIMIT", "-1", "5", "limit", "2", "3"}, want: sortOptions{start: 2, count: 3}},
	{name: "limit short", args: []string{"LIMIT", "1"}, err: errSyntax},
	{name: "limit offset", args: []string{"LIMIT", "x", "1", "FOO"}, err: errNotInt},
	{name: "limit count", args: []string{"LIMIT", "1", " 1"}, err: errNotInt},
	{name: "by", args: []string{"BY", "w_*"}, want: sortOptions{by: []byte("w_*"), hasBy: true, count: -1}},
	{name: "by nosort", args: []string{"BY", "nosort"}, want: sortOptions{by: []byte("nosort"), hasBy: true, dontsort: true, count: -1}},
	{name: "nosort stays", args: []string{"BY", "x", "BY", "w_*"}, want: sortOptions{by: []byte("w_*"), hasBy: true, dontsort: true, count: -1}},
	{name: "star after NUL", args: []string{"BY", "w_\x00*"}, want: sortOptions{by: []byte("w_\x00*"), hasBy: true, dontsort: true, count: -1}},
	{name: "gets", args: []string{"GET", "#", "get", "a_*"}, want: sortOptions{gets: [][]byte{[]byte("#"), []byte("a_*")}, count: -1}},
	{name: "store", args: []string{"STORE", "a", "STORE", ""}, want: sortOptions{store: []byte(""), hasStore: true, count: -1}},
	{name: "store read-only", args: []string{"STORE", "a"}, readonly: true, err: errSyntax},
	{name: "by last", args: []string{"BY"}, err: errSyntax},
	{name: "get last", args: []string{"ALPHA", "GET"}, err: errSyntax},
	{name: "unknown", args: []string{"ALPHA", "FOO", "LIMIT", "x", "y"}, err: errSyntax},
	{name: "NUL ends a name", args: []string{"ALPHA\x00FOO"}, want: sortOptions{alpha: true, count: -1}},
	{name: "ASCII case only", args: []string{"ſtore", "x"}, err: errSyntax},
}

func TestParseSortOptions(t *testing.T) {
	for _, tc := range sortOptionCases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"SORT", "k"}, tc.args...)
			got, err := parseSortOptions(argv(args...), tc.readonly)
			if err != tc.err {
				t.Fatalf("parseSortOptions(%q) error %q; want %q", args, err, tc.err)
			}
			if err == "" && !sameSortOptions(got, tc.want) {
				t.Errorf("parseSortOptions(%q) = %+v; want %+v", args, got, tc.want)
			}
		})
	}
}

func sameSortOptions(a, b sortOptions) bool {
	return a.desc == b.desc && a.alpha == b.alpha && a.dontsort == b.dontsort && a.start == b.start && a.count == b.count &&
		a.hasBy == b.hasBy && bytes.Equal(a.by, b.by) && a.hasStore == b.hasStore && bytes.Equal(a.store, b.store) &&
		slices.EqualFunc(a.gets, b.gets, bytes.Equal)
}

// sortArgs writes o back as SORT's arguments, for FuzzSortOptions.
func sortArgs(o sortOptions) [][]byte {
	args := argv("SORT", "k")
	if o.desc {
		args = append(args, []byte("DESC"))
	}
	if o.alpha {
		args = append(args, []byte("ALPHA"))
	}
	if o.start != 0 || o.count != -1 {
		args = append(args, []byte("LIMIT"), strconv.AppendInt(nil, o.start, 10), strconv.AppendInt(nil, o.count, 10))
	}
	if o.dontsort {
		args = append(args, []byte("BY"), []byte("nosort"))
	}
	if o.hasBy {
		args = append(args, []byte("BY"), o.by)
	}
	for _, g := range o.gets {
		args = append(args, []byte("GET"), g)
	}
	if o.hasStore {
		args = append(args, []byte("STORE"), o.store)
	}
	return args
}

// FuzzSortOptions checks SORT's option parser on arguments split from the
// input at '\n': it never panics; what it accepts is written back and
// parsed again to the same options; COMMAND GETKEYS finds the STORE it
// found; SORT_RO reads the same unless STORE is there. Each BY and GET
// pattern is parsed too, and the key it names for an element checked.
func FuzzSortOptions(f *testing.F) {
	for _, tc := range sortOptionCases {
		f.Add(strings.Join(tc.args, "\n"), "elem")
	}
	f.Add("BY\nh_*->f\nGET\n#\nGET\nx*y->\nGET\n*->a->b", "")
	f.Add("GET\n#\x00\nBY\n\x00*->f\nGET\na->b*c->\x00d", "e->f")
	f.Fuzz(func(t *testing.T, in, elem string) {
		args := append(argv("SORT", "k"), bytes.Split([]byte(in), []byte("\n"))...)
		o, msg := parseSortOptions(args, false)
		ro, roMsg := parseSortOptions(args, true)
		if !o.hasStore && (roMsg != msg || !sameSortOptions(o, ro)) {
			t.Fatalf("%q: SORT reads %+v %q, SORT_RO %+v %q", in, o, msg, ro, roMsg)
		}
		if msg != "" {
			return
		}
		again, msg := parseSortOptions(sortArgs(o), false)
		if msg != "" || !sameSortOptions(o, again) {
			t.Fatalf("%q: parsed %+v; written back and parsed again %+v %q", in, o, again, msg)
		}
		keys := sortKeys(args)
		if len(keys) != 1+b2i(o.hasStore) || (o.hasStore && !bytes.Equal(keys[1], o.store)) {
			t.Fatalf("%q: keys %q; the parser's STORE %q", in, keys, o.store)
		}
		for _, pat := range append(slices.Clone(o.gets), o.by) {
			p := parseSortPattern(pat)
			if p.self || p.none {
				continue
			}
			key := string(p.prefix) + elem + string(p.suffix)
			n := len(pat) - 1 + len(elem)
			if p.hasField {
				n -= 2 + len(p.field)
				if !strings.HasSuffix(string(pat), "->"+string(p.field)) || len(p.field) == 0 {
					t.Fatalf("pattern %q: field %q", pat, p.field)
				}
			}
			if len(key) != n || !strings.HasPrefix(string(pat), string(p.prefix)+"*") {
				t.Fatalf("pattern %q, element %q: key %q", pat, elem, key)
			}
		}
	})
}

// TestPartialSort checks Redis's partial quicksort on random data with
// many ties: the range asked for holds the elements a whole sort puts
// there, every element before it is no greater and every one after it
// no less.
func TestPartialSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cmp := func(a, b *sortItem) int { return strings.Compare(a.elem, b.elem) }
	for range 2000 {
		n := rng.IntN(120)
		v := make([]sortItem, n)
		for i := range v {
			v[i].elem = strconv.Itoa(rng.IntN(1 + n/3))
		}
		start, end := rng.IntN(n+1), rng.IntN(n+1)-1
		if start > end && rng.IntN(2) == 0 {
			start, end = end+1, start-1
		}
		want := slices.Clone(v)
		slices.SortFunc(want, func(a, b sortItem) int { return cmp(&a, &b) })
		partialSort(v, cmp, start, end)
		for i := range v {
			switch {
			case i >= start && i <= end && v[i].elem != want[i].elem:
				t.Fatalf("n %d, range %d..%d: element %d is %q; a whole sort has %q", n, start, end, i, v[i].elem, want[i].elem)
			case i < start && start < n && cmp(&v[i], &want[start]) > 0, i > end && end >= 0 && cmp(&v[i], &want[end]) < 0:
				t.Fatalf("n %d, range %d..%d: element %d, %q, on the wrong side", n, start, end, i, v[i].elem)
			}
		}
		slices.SortFunc(v, func(a, b sortItem) int { return cmp(&a, &b) })
		if !slices.Equal(v, want) {
			t.Fatalf("n %d: partialSort lost or duplicated elements", n)
		}
	}
}

// TestSortClient runs SORT, SORT_RO and SORT ... STORE through go-redis.
func TestSortClient(t *testing.T) {
	c, ctx := serverAndClient(t)
	c.RPush(ctx, "l", "3", "1", "2")
	c.MSet(ctx, "w_1", "c", "w_2", "b", "w_3", "a", "o_1", "one", "o_2", "two")
	c.HSet(ctx, "h_3", "f", "three")
	for _, tc := range []struct {
		name string
		sort redis.Sort
		want []string
	}{
		{"numeric", redis.Sort{}, []string{"1", "2", "3"}},
		{"desc limit", redis.Sort{Order: "DESC", Offset: 1, Count: 5}, []string{"2", "1"}},
		{"by alpha", redis.Sort{By: "w_*", Alpha: true}, []string{"3", "2", "1"}},
		{"gets", redis.Sort{By: "nosort", Get: []string{"#", "o_*", "h_*->f"}}, []string{"3", "", "three", "1", "one", "", "2", "two", ""}},
	} {
		got, err := c.Sort(ctx, "l", &tc.sort).Result()
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: SORT = %q, %v; want %q", tc.name, got, err, tc.want)
		}
		got, err = c.SortRO(ctx, "l", &tc.sort).Result()
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: SORT_RO = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	vals, err := c.SortInterfaces(ctx, "l", &redis.Sort{Get: []string{"o_*"}}).Result()
	if err != nil || !slices.Equal(vals, []any{"one", "two", nil}) {
		t.Errorf("SORT l GET o_* = %q, %v; want [one two nil]", vals, err)
	}
	if n, err := c.SortStore(ctx, "l", "d", &redis.Sort{Order: "DESC"}).Result(); n != 3 || err != nil {
		t.Errorf("SORT l DESC STORE d = %d, %v; want 3", n, err)
	}
	if got := c.LRange(ctx, "d", 0, -1).Val(); !slices.Equal(got, []string{"3", "2", "1"}) {
		t.Errorf("LRANGE d = %q; want [3 2 1]", got)
	}
	if err := c.Sort(ctx, "w_1", &redis.Sort{}).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE") {
		t.Errorf("SORT of a string: %v; want WRONGTYPE", err)
	}
	c.RPush(ctx, "bad", "1", "x")
	if err := c.Sort(ctx, "bad", &redis.Sort{}).Err(); err == nil || err.Error() != "ERR One or more scores can't be converted into double" {
		t.Errorf("SORT of a word: %v; want the scores error", err)
	}
}

// TestSortStoreWakesBlocked: STORE creating a list serves a client
// blocked on it, as Redis's dbAdd signals the key ready.
func TestSortStoreWakesBlocked(t *testing.T) {
	_, addr := startServer(t, Config{})
	c, blocked := goRedis(t, addr), goRedis(t, addr)
	ctx := context.Background()
	c.RPush(ctx, "l", "b", "c", "a")
	got := make(chan []string, 1)
	go func() { got <- blocked.BLPop(ctx, 10*time.Second, "d").Val() }()
	listWaitBlocked(t, c, 1)
	if n, err := c.SortStore(ctx, "l", "d", &redis.Sort{Alpha: true}).Result(); n != 3 || err != nil {
		t.Fatalf("SORT l ALPHA STORE d = %d, %v; want 3", n, err)
	}
	if v := <-got; !slices.Equal(v, []string{"d", "a"}) {
		t.Errorf("BLPOP d = %q; want [d a]", v)
	}
	if v := c.LRange(ctx, "d", 0, -1).Val(); !slices.Equal(v, []string{"b", "c"}) {
		t.Errorf("LRANGE d = %q; want [b c]", v)
	}
}

// TestSortAppendOnly: SORT ... STORE goes to the log as it was sent, when
// it changed the destination, and replaying it stores the same lists; SORT
// without STORE, SORT_RO and LCS are not logged.
func TestSortAppendOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := Config{AppendOnly: true, AppendFsync: "always", Dir: dir}
	stores := [][]string{
		{"SORT", "l", "ALPHA", "STORE", "d1"},
		{"SORT", "s", "BY", "nosort", "STORE", "d2"}, // a set stored sorted, so that the replay stores the same
		{"SORT", "l", "BY", "w_*", "ALPHA", "GET", "#", "GET", "w_*", "STORE", "d3"},
		{"SORT", "l", "ALPHA", "LIMIT", "0", "0", "STORE", "d1"}, // deletes d1
	}
	want := map[string][]string{}
	func() {
		s, addr := startServer(t, cfg)
		rc := dialRaw(t, addr)
		members := []string{"SADD", "s"}
		for i := range 40 {
			members = append(members, "m"+strconv.Itoa(i))
		}
		for _, args := range [][]string{{"RPUSH", "l", "b", "c", "a"}, {"MSET", "w_a", "3", "w_b", "1"}, members} {
			rc.do(args...)
		}
		for _, args := range stores {
			rc.do(args...)
		}
		for _, args := range [][]string{{"SORT", "l", "ALPHA"}, {"SORT_RO", "l", "ALPHA"}, {"SORT", "nokey", "STORE", "d4"}, {"LCS", "w_a", "w_b"}} {
			if got := rc.do(args...); strings.HasPrefix(got, "-") {
				t.Fatalf("%q: %q", args, got)
			}
		}
		for _, k := range []string{"d1", "d2", "d3"} {
			want[k] = listReply(t, rc.do("LRANGE", k, "0", "-1"))
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	}()
	log, err := os.ReadFile(filepath.Join(dir, "appendonly.aof"))
	if err != nil {
		t.Fatal(err)
	}
	var logged [][]string
	for rest := log; len(rest) > 0; {
		v, n, err := resp.Parse(rest)
		if err != nil {
			t.Fatalf("the log: %v", err)
		}
		rest = rest[n:]
		if len(v.Elems) > 0 && slices.Contains([]string{"SORT", "SORT_RO", "LCS"}, strings.ToUpper(string(v.Elems[0].Str))) {
			var args []string
			for _, e := range v.Elems {
				args = append(args, string(e.Str))
			}
			logged = append(logged, args)
		}
	}
	if !slices.EqualFunc(logged, stores, slices.Equal) {
		t.Errorf("the log has %q; want %q", logged, stores)
	}
	_, addr := startServer(t, cfg)
	rc := dialRaw(t, addr)
	for k, v := range want {
		if got := listReply(t, rc.do("LRANGE", k, "0", "-1")); !slices.Equal(got, v) {
			t.Errorf("after replay, LRANGE %s = %q; want %q", k, got, v)
		}
	}
}

// listReply returns the strings of an array reply.
func listReply(t *testing.T, reply string) []string {
	t.Helper()
	v, _, err := resp.Parse([]byte(reply))
	if err != nil || v.Type != resp.Array {
		t.Fatalf("reply %q: %v; want an array", reply, err)
	}
	out := []string{}
	for _, e := range v.Elems {
		out = append(out, string(e.Str))
	}
	return out
}
