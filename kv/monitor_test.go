package kv

import (
	"regexp"
	"strings"
	"testing"
)

// MONITOR sees every command run, as Redis's monitors see them: in order,
// quoted, with the database after the command, passwords redacted, the
// administrative commands and the refused ones left out (but a refused
// EXEC, as Redis's execCommandAbort shows it), a transaction's commands
// before its EXEC. The same script runs against Redis when it is
// installed, and the lines must match but for the time and the address.
func TestCompatMonitor(t *testing.T) {
	script := [][]string{
		{"SET", "k", "a\nb\x01\"\\ é"}, {"GET", "k"}, {"AUTH", "secret"}, {"HELLO", "2", "AUTH", "default", "pw"},
		{"HELLO", "2", "AUTH", "default", "p1", "AUTH", "default", "p2"}, {"HELLO", "2", "SETNAME", "AUTH", "AUTH", "default", "p3"},
		{"CONFIG", "GET", "maxmemory"}, {"GET"}, {"SELECT", "1"}, {"INCR", "n"},
		{"MULTI"}, {"SET", "x", "1"}, {"LPUSH", "x", "y"}, {"EXEC"}, {"NOSUCH"}, {"ECHO", ""},
		{"MULTI"}, {"SET", "x", "2"}, {"EXEC", "x"}, // a refused EXEC is shown
	}
	norm := regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) [^\]]+\] `)
	var lines [2][]string
	_, addr := startServer(t, Config{})
	for i, a := range []string{addr, redisServer(t)} {
		mon := dialRaw(t, a)
		if got := mon.do("MONITOR"); got != "+OK\r\n" {
			t.Fatalf("MONITOR = %q", got)
		}
		rc := dialRaw(t, a)
		for _, args := range script {
			rc.do(args...)
		}
		rc.do("PING") // the last line
		for {
			l := mon.read()
			if !norm.MatchString(l) {
				t.Fatalf("a monitor's line %q", l)
			}
			lines[i] = append(lines[i], norm.ReplaceAllString(l, "[$1] "))
			if strings.HasSuffix(l, "\"PING\"\r\n") {
				break
			}
		}
		// The monitor's own command: its reply, then its line.
		if got := mon.do("PING") + mon.read(); !strings.HasPrefix(got, "+PONG\r\n+") || !strings.HasSuffix(got, "\"PING\"\r\n") {
			t.Errorf("the monitor's own PING: %q", got)
		}
		// A monitor is a replica to Redis: the keyspace is not its.
		for _, args := range [][]string{{"GET", "k"}, {"SET", "k", "v"}, {"PUBLISH", "ch", "m"}} {
			if got := mon.do(args...); got != "-ERR Replica can't interact with the keyspace\r\n" {
				t.Errorf("a monitor's %v = %q", args, got)
			}
		}
	}
	if strings.Join(lines[0], "") != strings.Join(lines[1], "") {
		t.Errorf("evkv's monitor saw:\n%s\nRedis's:\n%s", strings.Join(lines[0], ""), strings.Join(lines[1], ""))
	}
}

// CLIENT LIST's flags come in Redis's order: a RESP3 subscriber in a
// transaction is "Px", a client whose WATCHed key changed "d".
func TestCompatClientFlags(t *testing.T) {
	flagsRe := regexp.MustCompile(` flags=(\S+) `)
	_, addr := startServer(t, Config{})
	var got [2][]string
	for i, a := range []string{addr, redisServer(t)} {
		admin := dialRaw(t, a)
		id := func(rc *rawConn) string {
			return strings.TrimSpace(strings.TrimPrefix(rc.do("CLIENT", "ID"), ":"))
		}
		sub := dialRaw(t, a)
		sub.do("HELLO", "3")
		subID := id(sub)
		sub.do("SUBSCRIBE", "ch")
		sub.do("MULTI")
		w := dialRaw(t, a)
		wID := id(w)
		w.do("WATCH", "k")
		admin.do("SET", "k", "v")
		for _, cid := range []string{subID, wID} {
			line := admin.do("CLIENT", "LIST", "ID", cid)
			m := flagsRe.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("CLIENT LIST ID %s = %q", cid, line)
			}
			got[i] = append(got[i], m[1])
		}
	}
	if strings.Join(got[0], " ") != strings.Join(got[1], " ") {
		t.Errorf("flags: evkv %q, Redis %q", got[0], got[1])
	}
}
