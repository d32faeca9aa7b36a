package kv

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// Keys evicted while a background save walks the keyspace are in the
// snapshot, as the fork's copy keeps them in Redis.
func TestMaxmemoryDuringBgsave(t *testing.T) {
	_, addr := startServer(t, Config{Dir: t.TempDir(), Settings: map[string]string{"enable-debug-command": "yes"}})
	rc := dialRaw(t, addr)
	const n = 60000
	fillKeysOf(rc, n, 200)
	rc.do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	rc.do("CONFIG", "SET", "maxmemory-eviction-tenacity", "100")
	rc.sendTogether([]string{"BGSAVE"}, []string{"CONFIG", "SET", "maxmemory", "1"}, []string{"DBSIZE"})
	t.Logf("BGSAVE %q, CONFIG SET %q, DBSIZE %q", rc.read(), rc.read(), rc.read())
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if infoField(rc.do("INFO", "persistence"), "rdb_bgsave_in_progress") == "0" {
			break
		}
	}
	t.Logf("after the save: DBSIZE %q, evicted_keys %s", rc.do("DBSIZE"), infoField(rc.do("INFO", "stats"), "evicted_keys"))
	rc.do("CONFIG", "SET", "maxmemory", "0")
	if r := rc.do("DEBUG", "RELOAD", "NOSAVE"); r != "+OK\r\n" {
		t.Fatalf("DEBUG RELOAD NOSAVE: %q", r)
	}
	if got := rc.do("DBSIZE"); got != ":"+strconv.Itoa(n)+"\r\n" {
		t.Errorf("the snapshot taken while keys were evicted holds %q keys; want %d", got, n)
	}
}

// Keys evicted while the append-only file is rewritten are gone from the
// rewritten file: the server started from it has only what was left.
func TestMaxmemoryDuringRewrite(t *testing.T) {
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir, AppendOnly: true})
	rc := dialRaw(t, addr)
	const n = 60000
	fillKeysOf(rc, n, 200)
	rc.do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	rc.sendTogether([]string{"BGREWRITEAOF"}, []string{"CONFIG", "SET", "maxmemory", "5000000"}, []string{"DBSIZE"})
	t.Logf("BGREWRITEAOF %q, CONFIG SET %q, DBSIZE %q", rc.read(), rc.read(), rc.read())
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rc.do("PING")
		if infoField(rc.do("INFO", "persistence"), "aof_rewrite_in_progress") == "0" {
			break
		}
	}
	rc.do("CONFIG", "SET", "maxmemory", "0")
	want := rc.do("DBSIZE")
	t.Logf("after the rewrite: DBSIZE %q, evicted_keys %s", want, infoField(rc.do("INFO", "stats"), "evicted_keys"))
	s.Shutdown(context.Background())
	_, addr2 := startServer(t, Config{Dir: dir, AppendOnly: true})
	if got := dialRaw(t, addr2).do("DBSIZE"); got != want {
		t.Errorf("restarted from the rewritten log: DBSIZE %q; want %q", got, want)
	}
}
