package kv

import (
	"strconv"
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

// TestCompatRepeatedKeys: a key named more than once in a BLPOP or a
// WATCH counts once, with few keys or many (twenty, past which evkv finds
// the repeats with a set): the blocked client is served once, a second
// push stays in the list, and a watched key changed fails EXEC once and
// unwatches with the rest, as in Redis.
func TestCompatRepeatedKeys(t *testing.T) {
	run := func(addr string) []string {
		rc, ctl := dialRaw(t, addr), dialRaw(t, addr)
		var out []string
		for _, n := range []int{2, 20} {
			keys := []string{"BLPOP"}
			for i := range n {
				keys = append(keys, "k"+strconv.Itoa(i%(n/2+1)), "k0")
			}
			rc.send(append(keys, "0")...)
			waitBlocked(t, ctl, 1)
			out = append(out, ctl.do("RPUSH", "k0", "a", "b"), rc.read(), ctl.do("LRANGE", "k0", "0", "-1"), ctl.do("DEL", "k0"))
			watch := []string{"WATCH"}
			for i := range n {
				watch = append(watch, "w"+strconv.Itoa(i%(n/2+1)), "w0")
			}
			out = append(out, rc.do(watch...), ctl.do("SET", "w0", "x"), rc.do("MULTI"), rc.do("PING"), rc.do("EXEC"),
				rc.do("MULTI"), rc.do("PING"), rc.do("EXEC"))
		}
		return out
	}
	_, addr := startServer(t, Config{})
	compareTranscripts(t, "", run(addr), run(redisServer(t)))
}
