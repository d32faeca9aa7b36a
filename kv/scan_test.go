package kv

import (
	"strconv"
	"testing"

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
