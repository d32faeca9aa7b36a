package kv

import (
	"strings"
	"testing"
	"time"
)

// TestCompatBlockedOnOtherTypes: clients blocked on one key by commands
// for different types are each served when the key gets their type, in
// the order they blocked, as Redis serves them by type: a BLPOP that the
// key holds nothing for does not keep the BZPOPMIN after it waiting, nor
// a BZPOPMAX the BLMOVE after it.
func TestCompatBlockedOnOtherTypes(t *testing.T) {
	_, addr := startServer(t, Config{})
	var replies [2][]string
	for i, a := range []string{addr, redisServer(t)} {
		rc := dialRaw(t, a)
		var blocked []*rawConn
		for n, args := range [][]string{
			{"BLPOP", "k", "0"}, {"BZPOPMIN", "k", "0"}, {"BZPOPMAX", "k", "0"}, {"BLMOVE", "k", "dst", "LEFT", "RIGHT", "0"},
		} {
			b := dialRaw(t, a)
			b.send(args...)
			waitBlocked(t, rc, n+1)
			blocked = append(blocked, b)
		}
		rc.do("ZADD", "k", "1", "a", "2", "b")
		replies[i] = append(replies[i], blocked[1].read(), blocked[2].read())
		waitBlocked(t, rc, 2)
		rc.do("RPUSH", "k", "x", "y")
		replies[i] = append(replies[i], blocked[0].read(), blocked[3].read(), rc.do("LRANGE", "dst", "0", "-1"))
	}
	for j := range replies[1] {
		if replies[0][j] != replies[1][j] {
			t.Errorf("reply %d: evkv %q; Redis %q", j, replies[0][j], replies[1][j])
		}
	}
}

// A client blocked on a key is served as soon as a command gives it data,
// before the next command of the same pipeline, as Redis serves it, where
// it was served after the pipeline and a DEL of the key in it left the
// waiter without the element.
func TestCompatBlockedServedBeforeNextCommand(t *testing.T) {
	_, addr := startServer(t, Config{})
	for _, a := range []string{addr, redisServer(t)} {
		waiter, pusher := dialRaw(t, a), dialRaw(t, a)
		waiter.send("BLPOP", "k", "5")
		for deadline := time.Now().Add(5 * time.Second); !strings.Contains(pusher.do("CLIENT", "LIST"), "cmd=blpop"); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("BLPOP did not block")
			}
		}
		pusher.sendTogether([]string{"LPUSH", "k", "v"}, []string{"DEL", "k"})
		push, del := pusher.read(), pusher.read()
		if got := waiter.read(); got != "*2\r\n$1\r\nk\r\n$1\r\nv\r\n" || push != ":1\r\n" || del != ":0\r\n" {
			t.Errorf("%s: BLPOP got %q, LPUSH %q, DEL %q; want the element, 1, then 0", a, got, push, del)
		}
	}
}
