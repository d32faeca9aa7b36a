package kv

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMemoryUsage checks MEMORY USAGE's estimates against the heap each
// kind of value takes, measured: every element counted (SAMPLES 0) within
// a fifth of the truth, the default sample of 5 within a half for values
// of like elements; and its replies for missing and expired keys.
func TestMemoryUsage(t *testing.T) {
	s, c := directServer(t)
	run := func(args ...string) string {
		t.Helper()
		s.w.Reset()
		s.call(c, argv(args...))
		return string(s.w.Buf)
	}
	usage := func(args ...string) int {
		t.Helper()
		reply := run(append([]string{"MEMORY", "USAGE"}, args...)...)
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(reply, ":"), "\r\n"))
		if err != nil {
			t.Fatalf("MEMORY USAGE %q = %q", args, reply)
		}
		return n
	}
	fill := func(cmd, key string, n int, item func(i int) []string) {
		for i := 0; i < n; i += 1000 {
			args := []string{cmd, key}
			for j := i; j < min(i+1000, n); j++ {
				args = append(args, item(j)...)
			}
			if reply := run(args...); strings.HasPrefix(reply, "-") {
				t.Fatalf("%s: %q", cmd, reply)
			}
		}
	}
	const n = 100000
	for _, tc := range []struct {
		name, cmd string
		item      func(i int) []string
	}{
		{"list", "RPUSH", func(i int) []string { return []string{fmt.Sprintf("item:%08d", i)} }},
		{"hash", "HSET", func(i int) []string { return []string{fmt.Sprintf("field:%08d", i), "value"} }},
		{"set", "SADD", func(i int) []string { return []string{fmt.Sprintf("member:%08d", i)} }},
		{"zset", "ZADD", func(i int) []string { return []string{strconv.Itoa(i), fmt.Sprintf("member:%08d", i)} }},
		{"string", "SET", func(i int) []string { return []string{strings.Repeat("v", 1<<20)} }},
	} {
		count := n
		if tc.name == "string" {
			count = 1
		}
		before := liveHeap()
		fill(tc.cmd, tc.name, count, tc.item)
		grown := int(liveHeap() - before)
		all, sampled := usage(tc.name, "SAMPLES", "0"), usage(tc.name)
		t.Logf("%s: heap grew %d, MEMORY USAGE SAMPLES 0 %d, default %d", tc.name, grown, all, sampled)
		if r := float64(all) / float64(grown); r < 0.8 || r > 1.25 {
			t.Errorf("%s: MEMORY USAGE SAMPLES 0 = %d; the heap grew by %d (%.2f×)", tc.name, all, grown, r)
		}
		if r := float64(sampled) / float64(all); r < 0.5 || r > 2 {
			t.Errorf("%s: MEMORY USAGE with 5 samples = %d, with all %d (%.2f×)", tc.name, sampled, all, r)
		}
	}

	// Small sets of integers and small hashes, in their compact
	// encodings: a key's estimate, against the heap 20,000 such keys took.
	const small = 20000
	for _, tc := range []struct {
		kind, cmd, enc string
		item           func(k, i int) []string
	}{
		{"set", "SADD", "intset", func(k, i int) []string { return []string{strconv.Itoa(k*10 + i)} }},
		{"hash", "HSET", "listpack", func(k, i int) []string { return []string{fmt.Sprintf("field:%02d", i), strconv.Itoa(k)} }},
	} {
		before := liveHeap()
		for k := range small {
			args := []string{tc.cmd, tc.enc + ":" + strconv.Itoa(k)}
			for i := range 10 {
				args = append(args, tc.item(k, i)...)
			}
			run(args...)
		}
		grown := float64(liveHeap()-before) / small
		key := tc.enc + ":7"
		if enc := run("OBJECT", "ENCODING", key); enc != fmt.Sprintf("$%d\r\n%s\r\n", len(tc.enc), tc.enc) {
			t.Fatalf("OBJECT ENCODING of a small %s = %q; want %s", tc.kind, enc, tc.enc)
		}
		one := usage(key)
		t.Logf("%s of 10: heap grew %.0f a key, MEMORY USAGE %d", tc.enc, grown, one)
		if r := float64(one) / grown; r < 0.8 || r > 1.25 {
			t.Errorf("%s of 10: MEMORY USAGE = %d; the heap grew by %.0f a key (%.2f×)", tc.enc, one, grown, r)
		}
	}

	if got := run("MEMORY", "USAGE", "nokey"); got != "$-1\r\n" {
		t.Errorf("MEMORY USAGE of a missing key = %q; want a null", got)
	}
	run("SET", "brief", "v", "PX", "1")
	time.Sleep(5 * time.Millisecond)
	s.mono = s.tick() // as serving a connection's requests does
	if got := run("MEMORY", "USAGE", "brief"); got != "$-1\r\n" {
		t.Errorf("MEMORY USAGE of an expired key = %q; want a null", got)
	}
	// It does not count as an access.
	run("SET", "k", "v")
	e := c.db.keys.get([]byte("k"))
	e.lru = 1
	usage("k")
	if e.lru != 1 {
		t.Error("MEMORY USAGE touched the key's access time")
	}
}

func TestCompatMemoryErrors(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"SET", "k", "v"},
		{"MEMORY", "USAGE"}, {"MEMORY", "USAGE", "nokey"}, {"MEMORY", "USAGE", "nokey", "SAMPLES", "3"},
		{"MEMORY", "USAGE", "k", "SAMPLES"}, {"MEMORY", "USAGE", "k", "SAMPLES", "-1"},
		{"MEMORY", "USAGE", "k", "SAMPLES", "x"}, {"MEMORY", "USAGE", "k", "FOO", "1"},
		{"MEMORY", "NOSUCH"},
	})
}

// TestLargeReplyReleased: the buffer a 32 MiB reply was written in is let
// go once it is sent, as Redis frees a client's reply list, where the
// writer kept its capacity and the server held the largest reply it had
// ever sent, the key deleted and the client gone.
func TestLargeReplyReleased(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	rc.do("SETRANGE", "k", strconv.Itoa(32<<20-1), "x")
	g := dialRaw(t, addr) // this test's process holds the server too
	if got := g.do("GET", "k"); len(got) < 32<<20 {
		t.Fatalf("GET replied %d bytes", len(got))
	}
	g.rb = nil
	rc.do("DEL", "k")
	rc.do("MEMORY", "PURGE")
	if used := usedMemory(t, rc); used > 16<<20 {
		t.Errorf("used_memory after the key went: %d bytes; want under 16 MiB", used)
	}
}

// TestLargeMessageReleased: the buffer a 32 MiB message to a subscriber
// was written in is let go once it is sent, where the writer for other
// clients kept its capacity and the server held the largest message it
// had ever sent, as it held a reply (TestLargeReplyReleased).
func TestLargeMessageReleased(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	sub := dialRaw(t, addr)
	sub.do("SUBSCRIBE", "ch")
	rc.do("PUBLISH", "ch", strings.Repeat("x", 32<<20))
	if got := sub.read(); len(got) < 32<<20 {
		t.Fatalf("the message came in %d bytes", len(got))
	}
	sub.rb = nil
	rc.rb, rc.w.Buf = nil, nil
	rc.do("MEMORY", "PURGE")
	if used := usedMemory(t, rc); used > 16<<20 {
		t.Errorf("used_memory after the message went: %d bytes; want under 16 MiB", used)
	}
}

// usedMemory reads INFO's used_memory.
func usedMemory(t *testing.T, rc *rawConn) int64 {
	t.Helper()
	info := rc.do("INFO", "memory")
	i := strings.Index(info, "used_memory:")
	if i < 0 {
		t.Fatalf("INFO memory has no used_memory: %q", info)
	}
	line := info[i+len("used_memory:"):]
	used, err := strconv.ParseInt(line[:strings.Index(line, "\r\n")], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return used
}
