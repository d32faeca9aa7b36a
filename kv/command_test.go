package kv

import (
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/evloop/evloop/resp"
)

// TestCompatCommandFlagOrder: COMMAND lists each command's flags and ACL
// categories in Redis 7.0's order, flags as addReplyFlagsForCommand and
// categories as ACLCommandCategories list them, and hides may_replicate
// (PUBLISH's, PFCOUNT's), as Redis hides it. Of the flags and categories
// of each command, only those both servers give are compared.
func TestCompatCommandFlagOrder(t *testing.T) {
	// info returns each command's (and subcommand's) flags and categories.
	info := func(addr string) map[string][2][]string {
		v, _, err := resp.Parse([]byte(dialRaw(t, addr).do("COMMAND")))
		if err != nil {
			t.Fatalf("COMMAND: %v", err)
		}
		out := map[string][2][]string{}
		var walk func(cmds []resp.Value)
		walk = func(cmds []resp.Value) {
			for _, c := range cmds {
				if len(c.Elems) < 10 {
					t.Fatalf("COMMAND entry %v", c)
				}
				var lists [2][]string
				for i, e := range []resp.Value{c.Elems[2], c.Elems[6]} {
					for _, x := range e.Elems {
						lists[i] = append(lists[i], string(x.Str))
					}
				}
				out[string(c.Elems[0].Str)] = lists
				walk(c.Elems[9].Elems)
			}
		}
		walk(v.Elems)
		return out
	}
	_, addr := startServer(t, Config{})
	ours, theirs := info(addr), info(redisServer(t))
	if flags := ours["publish"][0]; slices.Contains(flags, "may_replicate") {
		t.Errorf("COMMAND INFO publish flags %q; want may_replicate hidden", flags)
	}
	both := func(a, b []string) []string {
		var out []string
		for _, x := range a {
			if slices.Contains(b, x) {
				out = append(out, x)
			}
		}
		return out
	}
	compared := 0
	for name, got := range ours {
		want, ok := theirs[name]
		if !ok {
			continue
		}
		compared++
		for i, what := range []string{"flags", "categories"} {
			if g, w := both(got[i], want[i]), both(want[i], got[i]); !slices.Equal(g, w) {
				t.Errorf("COMMAND INFO %s %s: evkv %q; Redis %q", name, what, got[i], want[i])
			}
		}
	}
	if compared < 200 {
		t.Errorf("compared %d commands; want all of evkv's", compared)
	}
}

// doAll sends cmds on rc, a few hundred at a time, and returns their raw
// replies in order.
func doAll(rc *rawConn, cmds [][]string) []string {
	rc.t.Helper()
	out := make([]string, 0, len(cmds))
	for len(cmds) > 0 {
		n := min(len(cmds), 256)
		rc.sendTogether(cmds[:n]...)
		for range n {
			out = append(out, rc.read())
		}
		cmds = cmds[n:]
	}
	return out
}

// compareAll runs cmds on evkv and on Redis, pipelined, and fails where
// the raw replies differ.
func compareAll(t *testing.T, ours, theirs *rawConn, cmds [][]string) {
	t.Helper()
	got, want := doAll(ours, cmds), doAll(theirs, cmds)
	for i, args := range cmds {
		if got[i] != want[i] {
			t.Errorf("%q: evkv replied %q; Redis %q", args, got[i], want[i])
		}
	}
}

// redisHas reports whether Redis, at rc, knows the command or subcommand
// name ("get", "client|list"): COMMAND INFO gives it an entry.
func redisHas(t *testing.T, rc *rawConn, name string) bool {
	t.Helper()
	v, _, err := resp.Parse([]byte(rc.do("COMMAND", "INFO", name)))
	if err != nil || len(v.Elems) != 1 {
		t.Fatalf("COMMAND INFO %s = %v, %v", name, v, err)
	}
	return !v.Elems[0].IsNull
}

// keyCountCommands are the commands whose keys follow their count, with
// the arguments before the count and after the keys.
var keyCountCommands = []struct {
	name          string
	before, after []string
}{
	{"LMPOP", nil, []string{"LEFT"}}, {"BLMPOP", []string{"0"}, []string{"RIGHT", "COUNT", "2"}},
	{"SINTERCARD", nil, nil}, {"SINTERCARD", nil, []string{"LIMIT", "1"}},
	{"ZUNION", nil, nil}, {"ZUNION", nil, []string{"WEIGHTS", "1", "2", "WITHSCORES"}}, {"ZINTER", nil, []string{"AGGREGATE", "MAX"}},
	{"ZDIFF", nil, []string{"WITHSCORES"}}, {"ZINTERCARD", nil, []string{"LIMIT", "3"}},
	{"ZMPOP", nil, []string{"MIN"}}, {"BZMPOP", []string{"1.5"}, []string{"MAX", "COUNT", "1"}},
	{"ZUNIONSTORE", []string{"d"}, nil}, {"ZINTERSTORE", []string{"d"}, []string{"WEIGHTS", "2"}}, {"ZDIFFSTORE", []string{"d"}, nil},
}

// keyCounts are counts for keyCountCommands: in range and past it, 0 and
// negative, and what Redis 7.0 reads one way in its key specs (string2ll,
// cut to a C int) and another in its getkeys procedures (atoi).
var keyCounts = []string{
	"1", "2", "3", "4", "0", "-1", "-0", "x", "", "2x", " 2", "\t\n\v\f\r2", "+2", "02", "2\x00x", "- 2",
	"4294967297", "4294967298", "-4294967294", "-4294967295", "2147483648", "2147483649", "-2147483648", "4294967296",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "99999999999999999999", "18446744073709551617",
}

// TestCompatCommandGetkeysKeyCount: COMMAND GETKEYS finds the keys of the
// commands whose keys follow a count as Redis 7.0.15 does: by the key
// specs (a destination first, then as many keys as the count says, all
// present), else by the command's getkeys procedure (the count read by
// atoi, the destination last), else "Invalid arguments specified for
// command".
func TestCompatCommandGetkeysKeyCount(t *testing.T) {
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	var cmds [][]string
	for _, kc := range keyCountCommands {
		for _, n := range keyCounts {
			for nkeys := 1; nkeys <= 3; nkeys++ {
				args := append([]string{"COMMAND", "GETKEYS", kc.name}, kc.before...)
				args = append(append(args, n), []string{"a", "b", "c"}[:nkeys]...)
				cmds = append(cmds, append(args, kc.after...))
			}
		}
		cmds = append(cmds, append(append([]string{"COMMAND", "GETKEYS", strings.ToLower(kc.name)}, kc.before...), "1"))
	}
	compareAll(t, ours, theirs, cmds)
}

// getkeysArgs returns argument lists for COMMAND GETKEYS of the command
// named by words ("get", or "client", "list"): up to six arguments, keys
// or a count in one of the first three places.
func getkeysArgs(words ...string) [][]string {
	var out [][]string
	fills := []string{"k1", "k2", "k3", "k4", "k5", "k6"}
	for n := 0; n <= len(fills); n++ {
		out = append(out, append(append([]string{"COMMAND", "GETKEYS"}, words...), fills[:n]...))
		for i := range min(n, 3) {
			for _, count := range []string{"2", "1", "0"} {
				args := slices.Clone(fills[:n])
				args[i] = count
				out = append(out, append(append([]string{"COMMAND", "GETKEYS"}, words...), args...))
			}
		}
	}
	return out
}

// TestCompatCommandGetkeysAll runs COMMAND GETKEYS for every command and
// subcommand evkv registers that Redis 7.0 has, with arguments of each
// count, and compares the keys or the error with Redis's: "The command
// has no key arguments" comes before the arity's "Invalid number of
// arguments specified for command", and an unknown subcommand is
// "Invalid command specified", as in Redis's getKeysSubcommandImpl.
func TestCompatCommandGetkeysAll(t *testing.T) {
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	cmds := [][]string{
		{"COMMAND", "GETKEYS", "NOSUCH", "a"}, {"COMMAND", "GETKEYS", "CLIENT", "NOSUCH"}, {"COMMAND", "GETKEYS", "OBJECT", "NOSUCH", "k"},
		{"COMMAND", "GETKEYS", "OBJECT", "ENCODING"}, {"COMMAND", "GETKEYS", "object", "encoding", "k"}, {"COMMAND", "GETKEYS", "MEMORY", "USAGE", "k", "SAMPLES", "1"},
		{"COMMAND", "GETKEYS", "SORT", "a", "BY", "b", "STORE", "c"}, {"COMMAND", "GETKEYS", "MSET", "a", "1", "b"}, {"COMMAND", "GETKEYS", "BLPOP", "a", "b", "0"},
		{"COMMAND", "GETKEYS", "BITOP", "AND", "d", "a", "b"}, {"COMMAND", "GETKEYS", "COMMAND", "GETKEYS", "GET", "a"},
	}
	for _, cm := range allCommands() {
		if !redisHas(t, theirs, cm.name) {
			continue // newer than Redis 7.0 (CLIENT SETINFO)
		}
		for _, args := range getkeysArgs(strings.Split(cm.name, "|")...) {
			// PFMERGE destkey alone: Redis 7.0 gives its keys two key
			// specs, the sources' finding none past the destination, and
			// replies "Invalid arguments specified for command"; evkv's
			// one range gives the destination. Left to PFMERGE's
			// registration (cmd_hll.go).
			if cm.name == "pfmerge" && len(args) == 4 {
				continue
			}
			cmds = append(cmds, args)
		}
	}
	compareAll(t, ours, theirs, cmds)
}

// TestCompatCommandListFilters compares COMMAND LIST's filters with
// Redis's: FILTERBY ACLCAT lists, of the commands evkv has, those Redis
// lists for each category, named in any case; a category Redis lacks
// (or named with its '@') and FILTERBY MODULE list none; a filter Redis
// lacks and a missing argument are syntax errors.
func TestCompatCommandListFilters(t *testing.T) {
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	names := func(reply string) []string {
		t.Helper()
		v, _, err := resp.Parse([]byte(reply))
		if err != nil || v.Type != '*' {
			t.Fatalf("COMMAND LIST = %q, %v", reply, err)
		}
		var out []string
		for _, e := range v.Elems {
			out = append(out, string(e.Str))
		}
		slices.Sort(out)
		return out
	}
	// Of the commands both have: not CLIENT SETINFO, newer than Redis 7.0.
	ourAll, theirAll := names(ours.do("COMMAND", "LIST")), names(theirs.do("COMMAND", "LIST"))
	both := func(list []string) []string {
		return slices.DeleteFunc(list, func(n string) bool {
			_, ours := slices.BinarySearch(ourAll, n)
			_, theirs := slices.BinarySearch(theirAll, n)
			return !ours || !theirs
		})
	}
	for _, cat := range aclCategories {
		for _, name := range []string{cat[1:], strings.ToUpper(cat[1:])} {
			got := both(names(ours.do("COMMAND", "LIST", "FILTERBY", "ACLCAT", name)))
			want := both(names(theirs.do("COMMAND", "LIST", "FILTERBY", "ACLCAT", name)))
			if len(want) == 0 && cat != "@stream" && cat != "@scripting" {
				t.Errorf("Redis lists no command of evkv's for %s", name)
			}
			if !slices.Equal(got, want) {
				t.Errorf("COMMAND LIST FILTERBY ACLCAT %s = %q; Redis %q", name, got, want)
			}
		}
	}
	compareAll(t, ours, theirs, [][]string{
		{"COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"}, {"COMMAND", "LIST", "FILTERBY", "ACLCAT", "@read"},
		{"COMMAND", "LIST", "FILTERBY", "MODULE", "nosuch"}, {"COMMAND", "LIST", "FILTERBY", "NOSUCH", "x"},
		{"COMMAND", "LIST", "FILTERBY", "ACLCAT"}, {"COMMAND", "LIST", "FILTERBY", "PATTERN", "nosuch*"},
	})
}

// TestCompatCommandInfoAll compares COMMAND INFO's name, arity, flags (in
// Redis's order, may_replicate hidden as Redis hides it), first key, last
// key, step and ACL categories (in Redis's order) for every command and
// subcommand evkv registers that Redis 7.0 has, in RESP2 and RESP3; and,
// for the commands whose keys follow a count, the key specs' searches
// (begin_search index, find_keys keynum).
func TestCompatCommandInfoAll(t *testing.T) {
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	// head re-encodes the first n elements of COMMAND INFO's one entry.
	head := func(reply string, n int) string {
		v, _, err := resp.Parse([]byte(reply))
		if err != nil || len(v.Elems) != 1 || len(v.Elems[0].Elems) < n {
			t.Fatalf("COMMAND INFO = %q, %v", reply, err)
		}
		var w resp.Writer
		for _, e := range v.Elems[0].Elems[:n] {
			w.Value(e)
		}
		return string(w.Buf)
	}
	for _, proto := range []string{"2", "3"} {
		ours.do("HELLO", proto)
		theirs.do("HELLO", proto)
		for _, cm := range allCommands() {
			if !redisHas(t, theirs, cm.name) {
				continue
			}
			if got, want := head(ours.do("COMMAND", "INFO", cm.name), 7), head(theirs.do("COMMAND", "INFO", cm.name), 7); got != want {
				t.Errorf("RESP%s COMMAND INFO %s: evkv %q; Redis %q", proto, cm.name, got, want)
			}
		}
	}
	// Redis's specs of the other commands with keys, which evkv does not
	// have, mostly part their sources from their destinations.
	names := []string{"get", "del", "mset", "zadd", "exists"}
	for _, kc := range keyCountCommands {
		names = append(names, kc.name)
	}
	for _, name := range names {
		if got, want := keySearches(t, ours.do("COMMAND", "INFO", name)), keySearches(t, theirs.do("COMMAND", "INFO", name)); got != want {
			t.Errorf("COMMAND INFO %s's key specs: evkv %s; Redis %s", name, got, want)
		}
	}
}

// keySearches returns the fields of each key spec of COMMAND INFO's one
// entry, with the begin_search and find_keys, as text.
func keySearches(t *testing.T, reply string) string {
	t.Helper()
	v, _, err := resp.Parse([]byte(reply))
	if err != nil || len(v.Elems) != 1 || len(v.Elems[0].Elems) < 9 {
		t.Fatalf("COMMAND INFO = %q, %v", reply, err)
	}
	var b strings.Builder
	for _, spec := range v.Elems[0].Elems[8].Elems {
		for i := 0; i+1 < len(spec.Elems); i += 2 {
			k := string(spec.Elems[i].Str)
			b.WriteString(k + " ")
			if k == "begin_search" || k == "find_keys" {
				b.WriteString(k + "=" + strings.Join(valueText(spec.Elems[i+1].Elems), ",") + " ")
			}
		}
		b.WriteString("; ")
	}
	return b.String()
}

var atoiCases = []struct {
	in   string
	want int
}{
	{"", 0}, {"x", 0}, {"12", 12}, {" \t\n\v\f\r12abc", 12}, {"+5", 5}, {"-5", -5}, {"- 2", 0}, {"0012", 12},
	{"2\x003", 2}, {"2147483647", 2147483647}, {"2147483648", -2147483648}, {"4294967297", 1}, {"-4294967295", 1},
	{"9223372036854775807", -1}, {"9223372036854775808", -1}, {"99999999999999999999", -1},
	{"-9223372036854775808", 0}, {"-99999999999999999999", 0}, {"-9223372036854775807", 1},
}

// TestAtoi: atoi reads as glibc's atoi, (int)strtol(s, NULL, 10).
func TestAtoi(t *testing.T) {
	for _, tc := range atoiCases {
		if got := atoi([]byte(tc.in)); got != tc.want {
			t.Errorf("atoi(%q) = %d; want %d", tc.in, got, tc.want)
		}
	}
}

// FuzzAtoi compares atoi with strtol's rules written another way: the
// digits after the white space and the sign read as a big integer,
// clamped to 64 bits, cut to 32.
func FuzzAtoi(f *testing.F) {
	for _, tc := range atoiCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := strings.TrimLeft(string(b), " \t\n\v\f\r")
		neg := strings.HasPrefix(s, "-")
		if neg || strings.HasPrefix(s, "+") {
			s = s[1:]
		}
		digits := s[:len(s)-len(strings.TrimLeft(s, "0123456789"))]
		v, _ := new(big.Int).SetString("0"+digits, 10)
		if neg {
			v.Neg(v)
		}
		if v.Cmp(big.NewInt(math.MaxInt64)) > 0 {
			v.SetInt64(math.MaxInt64)
		} else if v.Cmp(big.NewInt(math.MinInt64)) < 0 {
			v.SetInt64(math.MinInt64)
		}
		if got, want := atoi(b), int(int32(v.Int64())); got != want {
			t.Errorf("atoi(%q) = %d; want %d", b, got, want)
		}
	})
}

// TestCountedKeys: the key specs' keys, the destination first, where the
// count is string2ll's and within the arguments; the getkeys procedure's,
// the destination last, where atoi reads a count that fits; none else.
func TestCountedKeys(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		store int
		want  []string
	}{
		{[]string{"ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS"}, 1, []string{"d", "a", "b"}},
		{[]string{"ZUNIONSTORE", "d", "+2", "a", "b"}, 1, []string{"a", "b", "d"}},
		{[]string{"ZUNIONSTORE", "d", "3", "a", "b"}, 1, nil},
		{[]string{"ZUNIONSTORE", "d", "0", "a"}, 1, nil},
		{[]string{"LMPOP", "3", "a", "b", "LEFT"}, 0, []string{"a", "b", "LEFT"}},
		{[]string{"LMPOP", "4294967297", "a", "LEFT"}, 0, []string{"a"}},
		{[]string{"LMPOP", "-4294967295", "a", "LEFT"}, 0, []string{"a"}},
		{[]string{"LMPOP", "9223372036854775807", "a", "LEFT"}, 0, nil},
		{[]string{"LMPOP", "x", "a", "LEFT"}, 0, nil},
	} {
		at := 1 + tc.store
		var got []string
		for _, k := range countedKeys(argv(tc.args...), tc.store, at) {
			got = append(got, string(k))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("countedKeys(%q) = %q; want %q", tc.args, got, tc.want)
		}
	}
}
