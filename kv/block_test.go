package kv

import (
	"testing"
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
