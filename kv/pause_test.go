package kv

import (
	"strings"
	"testing"
	"time"
)

// TestCompatClientPause runs CLIENT PAUSE and UNPAUSE on evkv and on Redis
// 7.0 and compares every reply: under WRITE, reads are answered and a
// write waits, with the client's later requests behind it, and counts as
// blocked, until CLIENT UNPAUSE; an EXEC with a write queued waits, one
// without does not; a key whose time comes is read as absent but kept
// until the pause ends; under ALL everything waits, UNPAUSE too, until
// the time is up; a pause of 0 ends at once, but makes one in force
// stricter; and the refusals' texts. Only lower bounds of the waits are
// checked: a loaded machine can only make them longer.
func TestCompatClientPause(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	run := func(addr string) []string {
		a, b := dialRaw(t, addr), dialRaw(t, addr)
		var got []string
		note := func(s string) { got = append(got, s) }
		for _, args := range [][]string{
			{"CLIENT", "PAUSE"}, {"CLIENT", "PAUSE", "x"}, {"CLIENT", "PAUSE", "-1"},
			{"CLIENT", "PAUSE", "10", "SOME"}, {"CLIENT", "PAUSE", "10", "WRITE", "x"},
			{"CLIENT", "UNPAUSE", "x"},
		} {
			note(strings.Join(args, " ") + " -> " + b.do(args...))
		}

		a.do("SET", "k", "old")
		a.do("SET", "e", "v", "PX", "1")
		// The pause begins in the batch that set e: no expiry cycle
		// comes between.
		b.sendTogether([]string{"SET", "soon", "v", "PX", "1"}, []string{"CLIENT", "PAUSE", "100000", "WRITE"})
		note(b.read() + b.read())
		time.Sleep(20 * time.Millisecond)
		note(a.do("GET", "k"))
		note(a.do("GET", "soon")) // absent, but kept
		note(a.do("DBSIZE"))
		a.sendTogether([]string{"SET", "k", "new"}, []string{"GET", "k"})
		time.Sleep(100 * time.Millisecond)
		note(blockedClients(b.do("INFO", "clients")))
		b.send("PUBLISH", "ch", "m") // may_replicate: held back too
		note("unpause " + dialRaw(t, addr).do("CLIENT", "UNPAUSE"))
		note(a.read())
		note(a.read())
		note(b.read())
		note(a.do("GET", "soon"))
		note(a.do("DBSIZE"))

		// A transaction with a write queued waits; one without does not;
		// a PUBLISH is held back as it is queued.
		note(a.do("MULTI") + a.do("SET", "k", "x"))
		b.do("CLIENT", "PAUSE", "100000", "WRITE")
		a.send("EXEC")
		time.Sleep(100 * time.Millisecond)
		note(blockedClients(b.do("INFO", "clients")))
		note(b.do("CLIENT", "UNPAUSE"))
		note(a.read())
		b.do("CLIENT", "PAUSE", "100000", "WRITE")
		note(a.do("MULTI") + a.do("GET", "k") + a.do("EXEC"))
		note(a.do("MULTI"))
		a.send("PUBLISH", "ch", "m")
		time.Sleep(100 * time.Millisecond)
		note(blockedClients(b.do("INFO", "clients")))
		note(b.do("CLIENT", "UNPAUSE"))
		note(a.read() + a.do("EXEC"))

		start := time.Now()
		b.do("CLIENT", "PAUSE", "300", "ALL")
		a.send("PING")
		b.send("CLIENT", "UNPAUSE") // waits too
		note(a.read() + b.read())
		if took := time.Since(start); took < 250*time.Millisecond {
			t.Errorf("%s: PING under a 300 ms pause answered after %v", addr, took)
		}

		note(b.do("CLIENT", "PAUSE", "0", "ALL"))
		note(a.do("PING")) // a pause of 0 is over at once
		start = time.Now()
		b.do("CLIENT", "PAUSE", "300", "WRITE")
		note(b.do("CLIENT", "PAUSE", "0", "ALL")) // the WRITE pause made ALL
		note(a.do("PING"))
		if took := time.Since(start); took < 250*time.Millisecond {
			t.Errorf("%s: PING under a pause made ALL answered after %v", addr, took)
		}
		return got
	}
	compareTranscripts(t, "", run(addr), run(raddr))
}

// blockedClients returns INFO's blocked_clients line.
func blockedClients(info string) string {
	for _, l := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(l, "blocked_clients:") {
			return l
		}
	}
	return "no blocked_clients in " + info
}

// compareTranscripts reports each step where what evkv gave differs from
// what Redis gave, prefixing the reports with label.
func compareTranscripts(t *testing.T, label string, ours, theirs []string) {
	t.Helper()
	for i := range max(len(ours), len(theirs)) {
		var o, r string
		if i < len(ours) {
			o = ours[i]
		}
		if i < len(theirs) {
			r = theirs[i]
		}
		if o != r {
			t.Errorf("%sstep %d: evkv %q; Redis %q", label, i, o, r)
		}
	}
}

// A timeout whose end is past the largest time is refused, as Redis 7.2
// refuses it, where 7.0's end wraps round to the past and the pause is
// over at once.
func TestClientPauseTimeoutOutOfRange(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dialRaw(t, addr)
	if got := c.do("CLIENT", "PAUSE", "9223372036854775807"); got != "-ERR timeout is out of range\r\n" {
		t.Errorf("CLIENT PAUSE 9223372036854775807 = %q", got)
	}
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING after it = %q", got)
	}
}

// A client held back by CLIENT PAUSE that goes away is forgotten: the
// pause's end wakes no one, and the others go on.
func TestClientPauseClientGoes(t *testing.T) {
	_, addr := startServer(t, Config{})
	a, b, c := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
	b.do("CLIENT", "PAUSE", "100000", "WRITE")
	a.send("SET", "k", "a")
	c.send("SET", "k", "c")
	time.Sleep(50 * time.Millisecond)
	a.c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.do("INFO", "clients"), "\r\nconnected_clients:2\r\n") {
		if time.Now().After(deadline) {
			t.Fatal("the closed client is still counted")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if info := b.do("INFO", "clients"); !strings.Contains(info, "\r\nblocked_clients:1\r\n") {
		t.Errorf("INFO clients with one client held back: %q", info)
	}
	b.do("CLIENT", "UNPAUSE")
	if got := c.read(); got != "+OK\r\n" {
		t.Errorf("the held back SET = %q", got)
	}
	if got := b.do("GET", "k"); got != "$1\r\nc\r\n" {
		t.Errorf("GET k = %q; want the SET of the client that stayed", got)
	}
}
