package kv

import (
	"strings"
	"testing"
)

// TestCompatClientReply runs CLIENT REPLY's cases from Redis's test suite
// on evkv and on Redis, and fails unless a client reads the same bytes
// from each: replies dropped under OFF and for one command after SKIP (a
// BLPOP's, answered later, too), ON's OK, RESET ending OFF, the syntax
// error, and pub/sub's messages and subscription replies sent whatever
// CLIENT REPLY says, in RESP2 and RESP3.
func TestCompatClientReply(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	mark, end := []string{"ECHO", "mark"}, []string{"ECHO", "end"}
	cases := []struct {
		name string
		cmds [][]string
		// then runs on another client once the replies to cmds are read
		// up to mark (or cmds' BLPOP blocks), before the client sends
		// after.
		then  [][]string
		after [][]string
	}{
		{name: "off then on", cmds: [][]string{
			{"CLIENT", "REPLY", "OFF"}, {"PING", "pong"}, {"SET", "k", "v"}, {"GET", "nokey", "x"}, {"CLIENT", "REPLY", "OFF"},
			{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"PING", "pong3"}, end,
		}},
		{name: "skip", cmds: [][]string{
			{"CLIENT", "REPLY", "SKIP"}, {"PING", "pong"}, {"PING", "pong2"},
			{"CLIENT", "REPLY", "SKIP"}, {"NOSUCH"}, {"PING", "pong3"},
			{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "SKIP"}, {"PING", "pong4"}, end,
		}},
		{name: "on ends skip", cmds: [][]string{{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"PING"}, end}},
		{name: "syntax", cmds: [][]string{{"CLIENT", "REPLY", "MAYBE"}, {"CLIENT", "REPLY"}, end}},
		{name: "transaction", cmds: [][]string{
			{"CLIENT", "REPLY", "SKIP"}, {"MULTI"}, {"INCR", "n"}, {"EXEC"}, {"CLIENT", "REPLY", "SKIP"}, {"EXEC"}, end,
		}},
		{name: "reset ends off", cmds: [][]string{{"CLIENT", "REPLY", "OFF"}, {"PING"}, {"RESET"}, {"PING", "after"}, end}},
		{
			name: "skipped blpop", cmds: [][]string{{"CLIENT", "REPLY", "SKIP"}, {"BLPOP", "list", "0"}},
			then: [][]string{{"RPUSH", "list", "a"}}, after: [][]string{end},
		},
		{
			name: "subscribed resp2", cmds: [][]string{
				{"CLIENT", "REPLY", "OFF"}, {"SUBSCRIBE", "channel"}, {"PING"}, {"CLIENT", "REPLY", "ON"}, {"PSUBSCRIBE", "mark*"},
			},
			then:  [][]string{{"PUBLISH", "channel", "hello"}, {"PUBLISH", "marked", "hi"}},
			after: [][]string{{"UNSUBSCRIBE", "channel"}, {"PUNSUBSCRIBE"}, {"CLIENT", "REPLY", "ON"}, end},
		},
		{
			name: "subscribed resp3", cmds: [][]string{
				{"HELLO", "3"}, {"CLIENT", "REPLY", "OFF"}, {"SUBSCRIBE", "channel"}, {"PSUBSCRIBE", "ch*"},
				{"PUBLISH", "channel", "own"}, {"CLIENT", "REPLY", "ON"}, mark,
			},
			then:  [][]string{{"PUBLISH", "channel", "hello"}},
			after: [][]string{{"CLIENT", "REPLY", "SKIP"}, {"UNSUBSCRIBE", "channel"}, {"PUBLISH", "channel", "own2"}, {"PUNSUBSCRIBE"}, end},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]string
			for i, a := range []string{addr, raddr} {
				rc, other := dialRaw(t, a), dialRaw(t, a)
				other.do("FLUSHALL")
				var b strings.Builder
				readTo := func(last string) {
					t.Helper()
					for {
						r := rc.read()
						if strings.HasPrefix(r, "%7") {
							r = "HELLO" // its reply is the server's own
						}
						b.WriteString(r)
						if strings.Contains(r, last) {
							return
						}
					}
				}
				rc.sendTogether(tc.cmds...)
				if tc.then != nil {
					if strings.EqualFold(tc.cmds[len(tc.cmds)-1][0], "blpop") {
						waitBlocked(t, other, 1)
					} else {
						readTo("mark")
					}
					for _, args := range tc.then {
						other.do(args...)
					}
					rc.sendTogether(tc.after...)
				}
				readTo("end")
				got[i] = b.String()
			}
			if got[0] != got[1] {
				t.Errorf("evkv sent %q; Redis %q", got[0], got[1])
			}
		})
	}
}
