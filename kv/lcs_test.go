package kv

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestCompatLCS compares LCS with Redis 7.0 in RESP2 and RESP3: each
// option and their combinations, missing keys, other types, errors.
func TestCompatLCS(t *testing.T) {
	script := [][]string{
		{"MSET", "a", "ohmytext", "b", "mynewtext", "e", "", "x", "abcdefgh", "y", "xxabyycdzz", "n", "12345", "m", "1\x002\x003"},
		{"RPUSH", "list", "a"},
	}
	for _, pair := range [][2]string{{"a", "b"}, {"b", "a"}, {"a", "nokey"}, {"nokey", "b"}, {"nokey", "nokey"}, {"e", "a"}, {"x", "y"},
		{"y", "x"}, {"a", "a"}, {"n", "m"}, {"m", "n"}} {
		for _, opts := range [][]string{
			nil, {"LEN"}, {"IDX"}, {"IDX", "WITHMATCHLEN"}, {"IDX", "MINMATCHLEN", "4"}, {"IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"},
			{"WITHMATCHLEN"}, {"MINMATCHLEN", "3"}, {"LEN", "MINMATCHLEN", "3"}, {"idx", "minmatchlen", "-5"},
		} {
			script = append(script, append([]string{"LCS", pair[0], pair[1]}, opts...))
		}
	}
	script = append(script, [][]string{
		{"LCS", "a", "list"}, {"LCS", "list", "a"}, {"LCS", "list", "a", "FOO"}, {"LCS", "a", "b", "FOO"}, {"LCS", "a", "b", "LEN", "IDX"},
		{"LCS", "a", "b", "IDX", "LEN", "FOO"}, {"LCS", "a", "b", "MINMATCHLEN"}, {"LCS", "a", "b", "MINMATCHLEN", "x"},
		{"LCS", "a", "b", "MINMATCHLEN", "x", "LEN", "IDX"}, {"LCS", "a", "b", "LEN\x00x"}, {"LCS", "a", "b", "IDX", "IDX", "LEN", "LEN"},
		{"LCS", "a", "b", "MINMATCHLEN", "1.5"}, {"LCS", "a", "b", "MINMATCHLEN", "99999999999999999999"}, {"LCS", "a"}, {"LCS"},
	}...)
	compareWithRedis(t, script)
	compareWithRedis(t, append([][]string{{"HELLO", "3"}}, script...))
}

// TestCompatLCSRandom compares LCS IDX WITHMATCHLEN with Redis on random
// strings over small alphabets, where the walk back through the table
// has many equal ways to go.
func TestCompatLCSRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	word := func() string {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = "abc"[rng.IntN(1+rng.IntN(3))]
		}
		return string(b)
	}
	var script [][]string
	for range 150 {
		script = append(script, []string{"MSET", "p", word(), "q", word()}, []string{"LCS", "p", "q", "IDX", "WITHMATCHLEN"},
			[]string{"LCS", "p", "q"}, []string{"LCS", "q", "p", "LEN"}, []string{"LCS", "p", "q", "IDX", "MINMATCHLEN", "2"})
	}
	compareWithRedis(t, script)
}

// TestCompatLCSBound: LCS refuses strings whose table of 4-byte cells
// would pass proto-max-bulk-len, as Redis does, before reading them.
func TestCompatLCSBound(t *testing.T) {
	big1, big2 := strings.Repeat("ab", 300), strings.Repeat("ba", 300)
	small1, small2 := strings.Repeat("ab", 250), strings.Repeat("ba", 250)
	compareWithRedis(t, [][]string{
		{"CONFIG", "SET", "proto-max-bulk-len", "1mb"}, {"MSET", "a", big1, "b", big2, "c", small1, "d", small2},
		{"LCS", "a", "b"}, {"LCS", "a", "b", "LEN"}, {"LCS", "a", "b", "IDX"}, {"LCS", "a", "nokey"}, {"LCS", "c", "d", "LEN"},
		{"LCS", "a", "b", "LEN", "IDX"}, {"LCS", "a", "b", "FOO"},
	})
}

// lcsModel is LCS as Redis computes it, with the whole table of lengths:
// the common subsequence and IDX's ranges, last first, of at least
// minLen.
func lcsModel(a, b string, minLen int) (string, []lcsMatch, int) {
	L := make([][]int, len(a)+1)
	for i := range L {
		L[i] = make([]int, len(b)+1)
		for j := 1; i > 0 && j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				L[i][j] = L[i-1][j-1] + 1
			} else {
				L[i][j] = max(L[i-1][j], L[i][j-1])
			}
		}
	}
	var common []byte
	var out []lcsMatch
	var m *lcsMatch
	flush := func() {
		if m != nil && m.a1-m.a0+1 >= minLen {
			out = append(out, *m)
		}
		m = nil
	}
	for i, j := len(a), len(b); i > 0 && j > 0; {
		if a[i-1] == b[j-1] {
			common = append([]byte{a[i-1]}, common...)
			if m == nil {
				m = &lcsMatch{i - 1, i - 1, j - 1, j - 1}
			} else {
				m.a0, m.b0 = i-1, j-1
			}
			i, j = i-1, j-1
			if i == 0 || j == 0 {
				flush()
			}
			continue
		}
		if L[i-1][j] > L[i][j-1] {
			i--
		} else {
			j--
		}
		flush()
	}
	return string(common), out, L[len(a)][len(b)]
}

// TestLCSModel compares the table of one bit a cell with lcsModel on
// random strings.
func TestLCSModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 13))
	for range 3000 {
		word := func() string {
			b := make([]byte, rng.IntN(70))
			for i := range b {
				b[i] = byte('a' + rng.IntN(1+rng.IntN(4)))
			}
			return string(b)
		}
		a, b, minLen := word(), word(), rng.IntN(4)
		wantCommon, wantMatches, wantLen := lcsModel(a, b, minLen)
		tab := lcsTable(a, b, true)
		common, matches := tab.walk(a, b, int64(minLen))
		if tab.length != wantLen || string(common) != wantCommon || !slices.Equal(matches, wantMatches) {
			t.Fatalf("LCS %q %q MINMATCHLEN %d = %d %q %v; want %d %q %v", a, b, minLen, tab.length, common, matches, wantLen, wantCommon, wantMatches)
		}
		if n := lcsTable(a, b, false).length; n != wantLen {
			t.Fatalf("LCS %q %q LEN = %d; want %d", a, b, n, wantLen)
		}
	}
}

// TestLCSBound: strings whose table would pass proto-max-bulk-len are
// refused at once, whatever LCS was asked; with proto-max-bulk-len raised
// past what the table can take (2^32 cells), the allocation is refused as
// Redis refuses one that fails.
func TestLCSBound(t *testing.T) {
	huge := int64(1) << 40 // a variable: past int on 32-bit platforms, where its case is skipped
	for _, tc := range []struct {
		name    string
		maxBulk int
		wide    bool // maxBulk is huge
		size    int
		opts    []string
		want    string
	}{
		{name: "default limit", size: 11585, want: "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n"},
		{name: "default limit LEN", size: 11585, opts: []string{"LEN"}, want: "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n"},
		{name: "1 MiB limit", maxBulk: 1 << 20, size: 512, opts: []string{"IDX"}, want: "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n"},
		{name: "within 1 MiB", maxBulk: 1 << 20, size: 511, opts: []string{"LEN"}, want: ":511\r\n"},
		{name: "past the cells", maxBulk: int(huge), wide: true, size: 1 << 16, opts: []string{"IDX"}, want: "-ERR Insufficient memory, failed allocating transient memory for LCS\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wide && int64(tc.maxBulk) != huge {
				t.Skip("proto-max-bulk-len past 2^32 needs a 64-bit int")
			}
			_, addr := startServer(t, Config{ProtoMaxBulkLen: tc.maxBulk})
			rc := dialRaw(t, addr)
			v := strings.Repeat("x", tc.size)
			rc.do("MSET", "a", v, "b", v)
			if got := rc.do(append([]string{"LCS", "a", "b"}, tc.opts...)...); got != tc.want {
				t.Errorf("LCS a b %q of %d bytes each = %.80q; want %q", tc.opts, tc.size, got, tc.want)
			}
		})
	}
}

// TestLCSClient runs LCS through go-redis, each kind of reply.
func TestLCSClient(t *testing.T) {
	c, ctx := serverAndClient(t)
	c.MSet(ctx, "a", "ohmytext", "b", "mynewtext")
	if got, err := c.LCS(ctx, &redis.LCSQuery{Key1: "a", Key2: "b"}).Result(); err != nil || got.MatchString != "mytext" {
		t.Errorf("LCS a b = %+v, %v; want mytext", got, err)
	}
	if got, err := c.LCS(ctx, &redis.LCSQuery{Key1: "a", Key2: "b", Len: true}).Result(); err != nil || got.Len != 6 {
		t.Errorf("LCS a b LEN = %+v, %v; want 6", got, err)
	}
	got, err := c.LCS(ctx, &redis.LCSQuery{Key1: "a", Key2: "b", Idx: true, MinMatchLen: 2, WithMatchLen: true}).Result()
	want := []redis.LCSMatchedPosition{
		{Key1: redis.LCSPosition{Start: 4, End: 7}, Key2: redis.LCSPosition{Start: 5, End: 8}, MatchLen: 4},
		{Key1: redis.LCSPosition{Start: 2, End: 3}, Key2: redis.LCSPosition{Start: 0, End: 1}, MatchLen: 2},
	}
	if err != nil || got.Len != 6 || !slices.Equal(got.Matches, want) {
		t.Errorf("LCS a b IDX MINMATCHLEN 2 WITHMATCHLEN = %+v, %v; want len 6, %+v", got, err, want)
	}
	c.RPush(ctx, "l", "x")
	if err := c.LCS(ctx, &redis.LCSQuery{Key1: "a", Key2: "l"}).Err(); err == nil || err.Error() != "ERR The specified keys must contain string values" {
		t.Errorf("LCS of a list: %v; want the string values error", err)
	}
}
