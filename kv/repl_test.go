package kv

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCompatRoleWait: ROLE and WAIT as a Redis primary without replicas
// answers them, errors included; a WAIT for replicas blocks until its
// timeout, and a transaction's does not block.
func TestCompatRoleWait(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"ROLE"}, {"ROLE", "x"},
		{"WAIT", "0", "0"}, {"WAIT", "-1", "10"}, {"WAIT", "1", "30"}, {"WAIT", "0"},
		{"WAIT", "a", "1"}, {"WAIT", "1", "-1"}, {"WAIT", "1", "a"}, {"WAIT", "1", "1.5"},
		{"MULTI"}, {"WAIT", "1", "0"}, {"EXEC"},
		{"HELLO", "3"}, {"ROLE"}, {"WAIT", "0", "0"},
	})
}

// TestWaitBlocks: WAIT for a replica with no timeout blocks the client
// and nothing else, and CLIENT UNBLOCK answers it as a timeout does, or
// with an error.
func TestWaitBlocks(t *testing.T) {
	_, addr := startServer(t, Config{})
	waiter, other := dialRaw(t, addr), dialRaw(t, addr)
	id := strings.TrimSuffix(strings.TrimPrefix(waiter.do("CLIENT", "ID"), ":"), "\r\n")
	start := time.Now()
	waiter.send("WAIT", "1", "50")
	if got := waiter.read(); got != ":0\r\n" || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("WAIT 1 50 = %q after %v; want :0 after 50 ms", got, time.Since(start))
	}
	for _, reason := range []string{"TIMEOUT", "ERROR"} {
		waiter.send("WAIT", "1", "0")
		if got := other.do("SET", "k", "v"); got != "+OK\r\n" {
			t.Fatalf("SET while another client waits = %q", got)
		}
		var got string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if got = other.do("CLIENT", "UNBLOCK", id, reason); got == ":1\r\n" {
				break
			}
		}
		if got != ":1\r\n" {
			t.Fatalf("CLIENT UNBLOCK %s of a WAIT = %q", reason, got)
		}
		want := ":0\r\n"
		if reason == "ERROR" {
			want = "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
		}
		if got := waiter.read(); got != want {
			t.Errorf("WAIT after CLIENT UNBLOCK %s = %q; want %q", reason, got, want)
		}
	}
	info := other.do("INFO", "replication")
	for _, f := range []string{"role:master", "connected_slaves:0", "master_repl_offset:0", "master_replid:"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO replication lacks %q:\n%s", f, info)
		}
	}
	if _, err := strconv.Atoi(id); err != nil {
		t.Fatalf("CLIENT ID = %q", id)
	}
}
