package kv

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// statsLines returns INFO section's lines, with commandstats' times taken
// out.
func statsLines(rc *rawConn, section string) string {
	info := rc.do("INFO", section)
	info = info[strings.Index(info, "\r\n")+2:] // the bulk string's length
	info = strings.TrimPrefix(info, "txt:")
	times := regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+,`)
	return strings.TrimSpace(times.ReplaceAllString(info, ""))
}

// Error replies are counted as Redis counts them: in total_error_replies,
// by code in INFO errorstats, and against the command as rejected (refused
// before it ran) or failed (it ran and replied an error), in EXEC too.
func TestCompatErrorStats(t *testing.T) {
	script := [][]string{
		{"GET"}, {"CONFIG", "RESETSTAT"}, {"GET"}, {"NOSUCH", "a"}, {"SET", "k", "v"}, {"LPUSH", "k", "x"}, {"INCR", "k"},
		{"CONFIG", "GET"}, {"CONFIG", "NOSUCH"}, {"CONFIG", "SET", "maxmemory-policy", "x"},
		{"MULTI"}, {"GET", "k"}, {"SET", "k"}, {"EXEC"},
		{"MULTI"}, {"LPUSH", "k", "x"}, {"GET", "k"}, {"EXEC"},
		{"AUTH", "pw"}, {"SELECT", "99"}, {"EXEC"}, {"OBJECT", "ENCODING", "nokey"},
	}
	_, addr := startServer(t, Config{})
	var ours string
	for i, a := range []string{addr, redisServer(t)} {
		rc := dialRaw(t, a)
		for _, args := range script {
			rc.do(args...)
		}
		sub := dialRaw(t, a)
		sub.do("SUBSCRIBE", "ch")
		sub.do("GET", "k") // not in subscribed mode
		// Blocked commands: unblocked by CLIENT UNBLOCK (failed, with an
		// error or not, as Redis counts them), and served into a key of
		// the wrong type.
		for _, how := range []string{"ERROR", "TIMEOUT"} {
			b := dialRaw(t, a)
			id := strings.TrimSpace(strings.TrimPrefix(b.do("CLIENT", "ID"), ":"))
			b.send("BLPOP", "q", "0")
			for rc.do("CLIENT", "UNBLOCK", id, how) != ":1\r\n" {
			}
			b.read()
		}
		b := dialRaw(t, a)
		id := strings.TrimSpace(strings.TrimPrefix(b.do("CLIENT", "ID"), ":"))
		b.send("BLMOVE", "src", "k", "LEFT", "LEFT", "0") // k holds a string
		for !strings.Contains(rc.do("CLIENT", "LIST", "ID", id), "cmd=blmove") {
		}
		rc.do("LPUSH", "src", "a")
		b.read()
		stats := statsLines(rc, "stats")
		total := regexp.MustCompile(`total_error_replies:\d+`).FindString(stats)
		got := total + "\n" + statsLines(rc, "errorstats") + "\n" + statsLines(rc, "commandstats")
		// INFO itself and SUBSCRIBE were called on one server only
		// when the other's lines were read: the lines compared are
		// those of the script's commands.
		// Redis lists commands in no order: both are sorted.
		keep := []string{}
		for _, l := range strings.Split(got, "\n") {
			if !strings.HasPrefix(l, "cmdstat_info:") && !strings.HasPrefix(l, "cmdstat_subscribe:") &&
				!strings.HasPrefix(l, "cmdstat_client|") {
				keep = append(keep, strings.TrimSpace(l))
			}
		}
		slices.Sort(keep)
		got = strings.Join(keep, "\n")
		if i == 0 {
			ours = got
		} else if ours != got {
			t.Errorf("evkv's error stats:\n%s\nRedis's:\n%s", ours, got)
		}
		rc.do("CONFIG", "RESETSTAT")
		if got := statsLines(rc, "errorstats"); got != "# Errorstats" {
			t.Errorf("INFO errorstats after CONFIG RESETSTAT: %q", got)
		}
	}
}
