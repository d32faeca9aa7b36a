package kv

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestKeyEvents compares the keyspace events of the commands on keys of
// any type with Redis's. COPY ... REPLACE onto an existing key publishes
// copy_to alone: Redis's copyCommand drops the old value with dbDelete,
// which publishes nothing.
func TestKeyEvents(t *testing.T) {
	compareEvents(t, [][]string{
		{"SET", "a", "1"}, {"SET", "b", "2"}, {"DEL", "a", "nokey"}, {"UNLINK", "b"},
		{"SET", "src", "v"}, {"COPY", "src", "dst"}, {"COPY", "src", "dst"}, {"COPY", "src", "dst", "REPLACE"},
		{"COPY", "src", "fresh", "REPLACE"}, {"COPY", "src", "dst", "DB", "1"}, {"COPY", "nokey", "dst", "REPLACE"},
		{"RPUSH", "l", "x"}, {"COPY", "l", "dst", "REPLACE"}, {"TYPE", "dst"},
		{"RENAME", "src", "r"}, {"RENAMENX", "r", "fresh"}, {"RENAMENX", "r", "r2"}, {"RENAME", "r2", "dst"},
		{"MOVE", "fresh", "1"}, {"EXPIRE", "dst", "100"}, {"PERSIST", "dst"}, {"PEXPIRE", "dst", "-1"},
	})
}

// TestCompatRandomKeyNeverExpired: RANDOMKEY never returns a key that has
// expired, in Redis 7.0: dbRandomKey deletes an expired key it draws and
// draws again, for as long as it takes on a master (its 100 tries are a
// replica's). 100,000 keys expire together beside one that does not, and
// RANDOMKEY comes before the expiry cycle can have deleted many: Redis
// 7.0.15 returns the live key.
func TestCompatRandomKeyNeverExpired(t *testing.T) {
	_, addr := startServer(t, Config{})
	for name, a := range map[string]string{"evkv": addr, "redis": redisServer(t)} {
		rc := dialRaw(t, a)
		rc.do("SET", "live", "1")
		at := time.Now().Add(3 * time.Second) // after the keys are set
		for i := 0; i < 100000; i += 1000 {
			for j := i; j < i+1000; j++ {
				rc.send("SET", fmt.Sprint("gone", j), "x", "PXAT", fmt.Sprint(at.UnixMilli()))
			}
			for j := i; j < i+1000; j++ {
				rc.read()
			}
		}
		time.Sleep(time.Until(at) + 2*time.Millisecond)
		if got := rc.do("RANDOMKEY"); got != "$4\r\nlive\r\n" {
			t.Errorf("%s: RANDOMKEY = %q (EXISTS: %q); want live, the one key left", name, got, rc.do("EXISTS", strings.Split(got, "\r\n")[1]))
		}
		if got := rc.do("RANDOMKEY"); got != "$4\r\nlive\r\n" {
			t.Errorf("%s: RANDOMKEY again = %q; want live", name, got)
		}
	}
}

// TestCompatCopyRenameOntoExpiredKey: COPY and RENAMENX onto a key that
// has expired, not yet deleted, store the source's value, as Redis's do
// (the destination is deleted as expired first). The source is the last
// key set, whose entry deleting the destination moves.
func TestCompatCopyRenameOntoExpiredKey(t *testing.T) {
	_, addr := startServer(t, Config{})
	for name, a := range map[string]string{"evkv": addr, "redis": redisServer(t)} {
		rc := dialRaw(t, a)
		for _, tc := range []struct {
			cmd       []string
			want, src string // the destination's value after, the source's
		}{
			{[]string{"COPY", "src", "dst"}, "$5\r\nvalue\r\n", "$5\r\nvalue\r\n"},
			{[]string{"COPY", "src", "dst", "REPLACE"}, "$5\r\nvalue\r\n", "$5\r\nvalue\r\n"},
			{[]string{"RENAMENX", "src", "dst"}, "$5\r\nvalue\r\n", "$-1\r\n"},
			{[]string{"RENAME", "src", "dst"}, "$5\r\nvalue\r\n", "$-1\r\n"},
		} {
			rc.do("FLUSHALL")
			rc.do("SET", "dst", "old", "PX", "1")
			rc.do("SET", "src", "value")
			time.Sleep(5 * time.Millisecond)
			rc.do(tc.cmd...)
			if got, src := rc.do("GET", "dst"), rc.do("GET", "src"); got != tc.want || src != tc.src {
				t.Errorf("%s: %q onto an expired key: GET dst, src = %q, %q; want %q, %q", name, tc.cmd, got, src, tc.want, tc.src)
			}
		}
	}
}
