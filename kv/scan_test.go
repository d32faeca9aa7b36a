package kv

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/resp"
)

// TestScanThroughSpop: an SSCAN returns every member present from its
// start to its end, when an SPOP with a count takes most of the set
// between two calls (Redis's SPOP keeps the members that stay in a new
// set then), beside Redis 7.0.15. 600 members, 10 a call; at a cursor
// below 80 most of them are popped, leaving 90 to 99 (not integers: the
// set stays a table).
func TestScanThroughSpop(t *testing.T) {
	_, addr := startServer(t, Config{})
	for name, a := range map[string]string{"evkv": addr, "redis": redisServer(t)} {
		rc := dialRaw(t, a)
		for trial := range 20 {
			rc.do("DEL", "s")
			args := []string{"SADD", "s"}
			for i := range 600 {
				args = append(args, "m"+strconv.Itoa(i))
			}
			rc.do(args...)
			seen := map[string]bool{}
			popped := false
			for cursor := "0"; ; {
				v := scanPage(t, rc.do("SSCAN", "s", cursor, "COUNT", "10"))
				for _, m := range v.Elems[1].Elems {
					seen[string(m.Str)] = true
				}
				if cursor = string(v.Elems[0].Str); cursor == "0" {
					break
				}
				if n, _ := strconv.Atoi(cursor); !popped && n < 80 && n > 0 {
					popped = true
					rc.do("SPOP", "s", strconv.Itoa(600-90-trial%10))
				}
			}
			members, _, _ := resp.Parse([]byte(rc.do("SMEMBERS", "s")))
			for _, m := range members.Elems {
				if !seen[string(m.Str)] {
					t.Errorf("%s, trial %d: SSCAN missed %s, in the set throughout", name, trial, m.Str)
				}
			}
		}
	}
}

// scanPage parses a SCAN-family reply.
func scanPage(t *testing.T, reply string) resp.Value {
	t.Helper()
	v, _, err := resp.Parse([]byte(reply))
	if err != nil || len(v.Elems) != 2 {
		t.Fatalf("SCAN reply %q: %v", reply, err)
	}
	return v
}

// TestCompatScanExpiredKeys: SCAN filters keys as Redis 7.0's
// scanGenericCommand does. MATCH comes first, so an expired key that does
// not match is not deleted; TYPE reads the key (a keyspace hit, or a miss
// with keymiss for an expired one, which it deletes) and an expired key
// is "none" to it, so that TYPE none returns one the read deleted; the
// keys are not touched: a key's idle time goes on. The replies, the
// expired_keys and keyspace_* stats and the events are Redis's. 10,000 keys
// with an hour to live make the expiry cycle unlikely to delete x, y or z
// first.
func TestCompatScanExpiredKeys(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	var ours, theirs string
	for _, a := range []string{addr, raddr} {
		rc, sub := dialRaw(t, a), dialRaw(t, a)
		rc.do("CONFIG", "SET", "notify-keyspace-events", "KEAm")
		rc.doMany(10000, func(i int) []string { return []string{"SET", fmt.Sprint("pad", i), "x", "EX", "3600"} })
		rc.do("SET", "old", "v")
		time.Sleep(1100 * time.Millisecond) // old is idle a second
		rc.do("SET", "x", "v", "PX", "1")
		rc.do("SET", "y", "v", "PX", "1")
		rc.do("SET", "z", "v", "PX", "1")
		rc.do("CONFIG", "RESETSTAT")
		sub.do("PSUBSCRIBE", "__key*@0__:*")
		time.Sleep(5 * time.Millisecond) // x, y and z expire
		var b strings.Builder
		for _, args := range [][]string{
			{"SCAN", "0", "MATCH", "nomatch", "COUNT", "20000"},
			{"SCAN", "0", "MATCH", "y", "TYPE", "none", "COUNT", "20000"},
			{"SCAN", "0", "MATCH", "pad1", "TYPE", "string", "COUNT", "20000"},
			{"SCAN", "0", "MATCH", "[oz]*", "COUNT", "20000"},
			{"EXISTS", "x"},
		} {
			fmt.Fprintf(&b, "%q: %q\n", args, rc.do(args...))
		}
		// SCAN left old's idle time alone: a second or two, as the LRU
		// clock's second falls, not 0.
		idle := rc.do("OBJECT", "IDLETIME", "old")
		fmt.Fprintf(&b, "old idle a second or more: %v\n", idle == ":1\r\n" || idle == ":2\r\n")
		for _, line := range strings.Split(rc.do("INFO", "stats"), "\r\n") {
			if strings.HasPrefix(line, "keyspace_") || strings.HasPrefix(line, "expired_keys") {
				fmt.Fprintf(&b, "%s\n", line)
			}
		}
		fmt.Fprintf(&b, "events %q\n", eventsUntilPong(t, sub))
		ours, theirs = theirs, b.String()
	}
	if ours != theirs {
		t.Errorf("evkv:\n%s\nRedis:\n%s", ours, theirs)
	}
}
