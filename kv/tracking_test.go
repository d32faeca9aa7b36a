package kv

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// trackStep is a step of a tracking script run on evkv and on Redis: who
// sends args (nil: nothing, what came is read) and reads n replies and
// messages; a step with neither is a pause of 100 ms, to let the server
// block the command sent before it. In args, "$R" stands for the ID of
// connection 2 and "$T" for connection 0's. With pick, only the lines or
// fields of the reply that the expression finds are compared (INFO,
// CLIENT INFO).
type trackStep struct {
	who  int
	args []string
	n    int
	pick *regexp.Regexp
}

// runTrackScript runs steps on a fresh set of three connections to addr,
// each first switched to proto (HELLO), and returns what each step read,
// with the connections' IDs in it written as <T> and <R>.
func runTrackScript(t *testing.T, addr string, proto string, steps []trackStep) []string {
	t.Helper()
	conns := [3]*rawConn{dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)}
	var ids [3]string
	for i, c := range conns {
		c.do("HELLO", proto)
		id := c.do("CLIENT", "ID")
		ids[i] = strings.TrimSuffix(strings.TrimPrefix(id, ":"), "\r\n")
	}
	norm := strings.NewReplacer(
		":"+ids[0]+"\r\n", ":<T>\r\n", ":"+ids[2]+"\r\n", ":<R>\r\n",
		"redir="+ids[2]+" ", "redir=<R> ", "$"+strconv.Itoa(len(ids[2]))+"\r\n"+ids[2]+"\r\n", "$<R>\r\n")
	var got []string
	for _, st := range steps {
		c := conns[st.who]
		args := make([]string, len(st.args))
		for i, a := range st.args {
			switch a {
			case "$R":
				a = ids[2]
			case "$T":
				a = ids[0]
			}
			args[i] = a
		}
		if st.args != nil {
			c.send(args...)
		}
		if st.args == nil && st.n == 0 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for range st.n {
			r := c.read()
			if st.args != nil && strings.EqualFold(st.args[0], "CLIENT") || strings.Contains(r, "tracking-redir-broken") {
				r = norm.Replace(r) // not ":1" of another reply
			}
			if st.pick != nil {
				r = strings.Join(st.pick.FindAllString(r, -1), " ")
			}
			got = append(got, strconv.Itoa(st.who)+" "+strings.Join(st.args, " ")+" -> "+r)
		}
		if st.args != nil && strings.EqualFold(st.args[0], "RESET") {
			c.do("HELLO", proto)
		}
	}
	return got
}

// compareScripts runs steps on evkv and on Redis and reports each
// difference.
func compareScripts(t *testing.T, addr, raddr, proto string, steps []trackStep) {
	t.Helper()
	compareTranscripts(t, "RESP"+proto+" ", runTrackScript(t, addr, proto, steps), runTrackScript(t, raddr, proto, steps))
}

var (
	pickTrackingInfo = regexp.MustCompile(`(?m)^tracking_\w+:\d+`)
	pickClientFlags  = regexp.MustCompile(`\b(flags|redir)=\S+`)
)

// TestCompatTracking runs client-side caching (CLIENT TRACKING, CACHING,
// GETREDIR, TRACKINGINFO) on evkv and on Redis 7.0 and compares every
// reply and message, in RESP3: a key read is invalidated once when
// another client changes it and not again until read again; a client's own
// change is told after its reply (after EXEC's in a transaction), not at
// all with NOLOOP; flushes send a null; OPTIN and OPTOUT with CLIENT
// CACHING's word lasting one command, or more CLIENT commands; BCAST by
// prefix, a message a prefix, and with NOLOOP; a redirection to a RESP3
// client and one that breaks; messages pushed past CLIENT REPLY OFF; every
// refusal's text; CLIENT INFO's flags and redir and INFO's counts.
func TestCompatTracking(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	steps := []trackStep{
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"CLIENT", "GETREDIR"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"CLIENT", "INFO"}, 1, pickClientFlags},
		{1, []string{"INFO", "all"}, 1, pickTrackingInfo},
		{0, []string{"GET", "a"}, 1, nil},
		{0, []string{"MGET", "a", "b", "c"}, 1, nil},
		{1, []string{"INFO", "all"}, 1, pickTrackingInfo},
		{1, []string{"SET", "a", "1"}, 1, nil},
		{0, nil, 1, nil},
		{1, []string{"SET", "a", "2"}, 1, nil}, // not read since: no message
		{1, []string{"MSET", "b", "1", "c", "2"}, 1, nil},
		{0, nil, 2, nil},
		{0, []string{"PING"}, 1, nil},
		// Its own change, after its reply; in a transaction, after EXEC's.
		{0, []string{"GET", "own"}, 1, nil},
		{0, []string{"SET", "own", "x"}, 2, nil},
		{0, []string{"MULTI"}, 1, nil},
		{0, []string{"GET", "m"}, 1, nil},
		{0, []string{"SET", "m", "1"}, 1, nil},
		{0, []string{"EXEC"}, 2, nil},
		{0, []string{"HGETALL", "h"}, 1, nil},
		{1, []string{"HSET", "h", "f", "v"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"ZRANGE", "z", "0", "-1"}, 1, nil},
		{0, []string{"SINTER", "s1", "s2"}, 1, nil},
		{1, []string{"SADD", "s2", "m"}, 1, nil},
		{0, nil, 1, nil},
		{1, []string{"ZADD", "z", "1", "a"}, 1, nil},
		{0, nil, 1, nil},
		{1, []string{"DEL", "s1"}, 1, nil}, // never existed: no change
		{0, []string{"PING"}, 1, nil},
		{0, []string{"GET", "del"}, 1, nil},
		{1, []string{"SET", "del", "1"}, 1, nil},
		{0, nil, 1, nil},
		// Served while blocked: its own change to the list it moves to.
		{0, []string{"LRANGE", "dst", "0", "-1"}, 1, nil},
		{0, []string{"BLMOVE", "src", "dst", "LEFT", "RIGHT", "5"}, 0, nil},
		{0, nil, 0, nil}, // blocked, most likely: either way the same replies
		{1, []string{"RPUSH", "src", "x"}, 1, nil},
		{0, nil, 2, nil},
		// Pushed past CLIENT REPLY OFF.
		{0, []string{"GET", "quiet"}, 1, nil},
		{0, []string{"CLIENT", "REPLY", "OFF"}, 0, nil},
		{1, []string{"SET", "quiet", "1"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"CLIENT", "REPLY", "ON"}, 1, nil},
		// Flushes: a null, to a client of its own after its reply.
		{0, []string{"GET", "a"}, 1, nil},
		{1, []string{"FLUSHALL"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"FLUSHDB"}, 2, nil},
		{1, []string{"INFO", "all"}, 1, pickTrackingInfo},
		// NOLOOP: its own changes are not told, and forget its read.
		{0, []string{"CLIENT", "TRACKING", "on", "NOLOOP"}, 1, nil},
		{0, []string{"GET", "n"}, 1, nil},
		{0, []string{"SET", "n", "1"}, 1, nil},
		{1, []string{"SET", "n", "2"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"PING"}, 1, nil},
		// Refusals.
		{0, []string{"CLIENT", "TRACKING", "on", "PREFIX", "a"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "OPTIN"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "REDIRECT", "999999"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "REDIRECT", "x"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "REDIRECT", "$R", "REDIRECT", "$R"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "REDIRECT"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "SOMETIMES"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "maybe"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "no"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "maybe"}, 1, nil},
		{0, []string{"CLIENT", "GETREDIR", "x"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO", "x"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "off"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST", "OPTOUT"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "off"}, 1, nil},
		// OPTIN: only after CLIENT CACHING yes, for one command, or more
		// CLIENT commands, or a transaction.
		{0, []string{"CLIENT", "TRACKING", "on", "OPTIN"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "OPTOUT"}, 1, nil},
		{0, []string{"GET", "i1"}, 1, nil},
		{1, []string{"SET", "i1", "1"}, 1, nil},
		{0, []string{"PING"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"GET", "i2"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"GET", "i3"}, 1, nil},
		{1, []string{"MSET", "i2", "1", "i3", "1"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"PING"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"CLIENT", "ID"}, 1, nil},
		{0, []string{"GET", "i4"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"MULTI"}, 1, nil},
		{0, []string{"GET", "i5"}, 1, nil},
		{0, []string{"GET", "i6"}, 1, nil},
		{0, []string{"EXEC"}, 1, nil},
		{0, []string{"GET", "i7"}, 1, nil},
		{1, []string{"MSET", "i4", "1", "i5", "1", "i6", "1", "i7", "1"}, 1, nil},
		{0, nil, 3, nil},
		{0, []string{"PING"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "no"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "off"}, 1, nil},
		// OPTOUT: all but after CLIENT CACHING no.
		{0, []string{"CLIENT", "TRACKING", "on", "OPTOUT"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "no"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"GET", "o1"}, 1, nil},
		{0, []string{"GET", "o2"}, 1, nil},
		{1, []string{"MSET", "o1", "1", "o2", "1"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"PING"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "off"}, 1, nil},
		// BCAST: by prefix, a message a prefix, in order.
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "obj:"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "u"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "x:"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"CLIENT", "INFO"}, 1, pickClientFlags},
		{1, []string{"INFO", "all"}, 1, pickTrackingInfo},
		{1, []string{"MSET", "user:2", "a", "obj:1", "b", "other", "c", "user:1", "d"}, 1, nil},
		{0, nil, 2, nil},
		{0, []string{"GET", "other"}, 1, nil},
		{1, []string{"SET", "other", "x"}, 1, nil},
		{0, []string{"SET", "user:3", "own"}, 2, nil},
		{0, []string{"CLIENT", "TRACKING", "off"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"}, 1, nil},
		{0, []string{"MSET", "k1", "1", "k2", "2"}, 1, nil},
		{0, []string{"PING"}, 1, nil},
		{1, []string{"SET", "k3", "3"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "off"}, 1, nil},
		{1, []string{"INFO", "all"}, 1, pickTrackingInfo},
		// Redirected to a RESP3 client, and broken when it goes.
		{0, []string{"CLIENT", "TRACKING", "on", "REDIRECT", "$R"}, 1, nil},
		{0, []string{"CLIENT", "GETREDIR"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"CLIENT", "INFO"}, 1, pickClientFlags},
		{0, []string{"GET", "r1"}, 1, nil},
		{0, []string{"GET", "r2"}, 1, nil},
		{1, []string{"SET", "r1", "1"}, 1, nil},
		{2, nil, 1, nil},
		{0, []string{"SET", "r2", "own"}, 1, nil},
		{2, nil, 1, nil},
		{0, []string{"GET", "r3"}, 1, nil},
		{2, []string{"QUIT"}, 1, nil},
		{1, []string{"SET", "r3", "1"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"CLIENT", "INFO"}, 1, pickClientFlags},
		{0, []string{"CLIENT", "TRACKING", "on"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"RESET"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{1, []string{"INFO", "all"}, 1, pickTrackingInfo},
		// A BCAST NOLOOP client served a blocked pop is told of the push
		// that served it: the pop does not make it the key's last changer.
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"}, 1, nil},
		{0, []string{"BLPOP", "bsrc", "5"}, 0, nil},
		{0, nil, 0, nil},
		{1, []string{"RPUSH", "bsrc", "x", "y"}, 1, nil},
		{0, nil, 2, nil},
		{0, []string{"LPOP", "bsrc"}, 1, nil}, // its own: not told
		{0, []string{"PING"}, 1, nil},
	}
	compareScripts(t, addr, raddr, "3", steps)
}

// TestCompatTrackingRESP2 compares, with Redis 7.0, what a RESP2 client
// tracking keys gets: nothing on its own connection, and, redirected to a
// client subscribed to __redis__:invalidate, messages of that channel,
// a key's, a BCAST prefix's and a flush's; nothing to a redirection
// target that is not subscribed.
func TestCompatTrackingRESP2(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	steps := []trackStep{
		{0, []string{"CLIENT", "TRACKING", "on"}, 1, nil},
		{0, []string{"GET", "a"}, 1, nil},
		{1, []string{"SET", "a", "1"}, 1, nil},
		{0, []string{"PING"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "REDIRECT", "$R"}, 1, nil},
		{0, []string{"GET", "b"}, 1, nil},
		{1, []string{"SET", "b", "1"}, 1, nil}, // R is not subscribed: lost
		{2, []string{"PING"}, 1, nil},
		{2, []string{"SUBSCRIBE", "__redis__:invalidate"}, 1, nil},
		{0, []string{"GET", "b"}, 1, nil},
		{0, []string{"MGET", "c", "d"}, 1, nil},
		{1, []string{"SET", "b", "2"}, 1, nil},
		{2, nil, 1, nil},
		{0, []string{"SET", "c", "own"}, 1, nil},
		{2, nil, 1, nil},
		{1, []string{"FLUSHALL"}, 1, nil},
		{2, nil, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "off"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p", "REDIRECT", "$R"}, 1, nil},
		{1, []string{"MSET", "p2", "1", "p1", "2", "q", "3"}, 1, nil},
		{2, nil, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
	}
	compareScripts(t, addr, raddr, "2", steps)
}

// A key that expires, or that eviction takes, is invalidated for the
// clients that read it, as a change: by the expiry cycle, or after the
// reply of the command that found it expired.
func TestTrackingExpiryAndEviction(t *testing.T) {
	_, addr := startServer(t, Config{})
	tracker, writer := dialRaw(t, addr), dialRaw(t, addr)
	tracker.do("HELLO", "3")
	tracker.do("CLIENT", "TRACKING", "on")
	writer.do("SET", "soon", "v", "PX", "50")
	writer.do("SET", "later", "v", "PX", "50")
	tracker.do("GET", "soon")
	tracker.do("GET", "later")
	time.Sleep(100 * time.Millisecond)
	// Each is found expired by the read, or by the expiry cycle before
	// or after it: the read's null and the two messages come in an order
	// that depends on the cycle.
	tracker.send("GET", "later")
	got := []string{tracker.read(), tracker.read(), tracker.read()}
	slices.Sort(got)
	want := []string{
		">2\r\n$10\r\ninvalidate\r\n*1\r\n$4\r\nsoon\r\n",
		">2\r\n$10\r\ninvalidate\r\n*1\r\n$5\r\nlater\r\n",
		"_\r\n",
	}
	if !slices.Equal(got, want) {
		t.Errorf("GET of an expired key, and the cycle, gave %q; want %q", got, want)
	}

	writer.do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	writer.do("SET", "evicted", "v")
	tracker.do("GET", "evicted")
	writer.do("CONFIG", "SET", "maxmemory", "1")
	writer.do("SET", "more", "v") // refused or not, eviction runs first
	if msg := tracker.read(); msg != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$7\r\nevicted\r\n" {
		t.Errorf("evicted key's message = %q", msg)
	}
}

// tracking-table-max-keys bounds the keys the server remembers: past it,
// keys are dropped with their invalidation messages, as if they changed,
// before the next command, and the clients may read them again.
func TestTrackingTableMaxKeys(t *testing.T) {
	_, addr := startServer(t, Config{})
	tracker := dialRaw(t, addr)
	tracker.do("HELLO", "3")
	if got := tracker.do("CONFIG", "GET", "tracking-table-max-keys"); got != "%1\r\n$23\r\ntracking-table-max-keys\r\n$7\r\n1000000\r\n" {
		t.Errorf("CONFIG GET tracking-table-max-keys = %q", got)
	}
	tracker.do("CONFIG", "SET", "tracking-table-max-keys", "3")
	tracker.do("CLIENT", "TRACKING", "on")
	// Each command from the fifth on finds 4 keys where 3 may be, and
	// drops one, its message sent before the command's reply; the PING
	// after them drops the seventh.
	var cmds [][]string
	for i := range 10 {
		cmds = append(cmds, []string{"GET", "k" + strconv.Itoa(i)})
	}
	tracker.sendTogether(append(cmds, []string{"PING"})...)
	var nulls, dropped int
	for {
		msg := tracker.read()
		if msg == "+PONG\r\n" {
			break
		}
		switch {
		case msg == "_\r\n":
			nulls++
		case strings.HasPrefix(msg, ">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nk"):
			dropped++
		default:
			t.Fatalf("read %q; want a GET's null or a key's invalidation", msg)
		}
	}
	if nulls != 10 || dropped != 7 {
		t.Errorf("read %d nulls and %d invalidations; want 10 and 7", nulls, dropped)
	}
	if info := tracker.do("INFO", "stats"); !strings.Contains(info, "\r\ntracking_total_keys:3\r\n") || !strings.Contains(info, "\r\ntracking_total_items:3\r\n") {
		t.Errorf("INFO stats after the bound: %q", info)
	}
	if got := tracker.do("CONFIG", "SET", "tracking-table-max-keys", "-1"); !strings.HasPrefix(got, "-ERR") {
		t.Errorf("CONFIG SET tracking-table-max-keys -1 = %q; want an error", got)
	}
}

// A client that closes leaves the tracking: its count, its prefixes and,
// when its keys change, no message for it; a client redirecting to it
// notes the redirection broken.
func TestTrackingClientCloses(t *testing.T) {
	_, addr := startServer(t, Config{})
	a, b, watcher := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
	a.do("HELLO", "3")
	a.do("CLIENT", "TRACKING", "on")
	a.do("GET", "k")
	b.do("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p", "PREFIX", "q")
	if info := watcher.do("INFO", "all"); !strings.Contains(info, "\r\ntracking_clients:2\r\n") || !strings.Contains(info, "\r\ntracking_total_prefixes:2\r\n") {
		t.Fatalf("INFO with two tracking clients: %q", info)
	}
	a.c.Close()
	b.c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info := watcher.do("INFO", "all")
		if strings.Contains(info, "\r\ntracking_clients:0\r\n") && strings.Contains(info, "\r\ntracking_total_prefixes:0\r\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("INFO after the tracking clients closed: %q", info)
		}
		time.Sleep(10 * time.Millisecond)
	}
	watcher.do("SET", "k", "1")
	watcher.do("SET", "p1", "1")
	if got := watcher.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING = %q", got)
	}
}

// TestCompatTrackingCachingEnds compares with Redis 7.0 when CLIENT
// CACHING's word ends: after any command but a CLIENT one, an unknown
// CLIENT subcommand and a bare CLIENT among those that end it, and after
// a command that blocked, however it is released.
func TestCompatTrackingCachingEnds(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	dialRaw(t, addr).do("PING") // connection 0's ID is not 1, CLIENT UNBLOCK's reply
	steps := []trackStep{
		{0, []string{"CLIENT", "TRACKING", "on", "OPTIN"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"CLIENT", "CACHING"}, 1, nil}, // a CLIENT command still
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"CLIENT", "NOSUCH"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"CLIENT"}, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"BLPOP", "nolist", "0"}, 0, nil},
		{0, nil, 0, nil},
		{1, []string{"CLIENT", "UNBLOCK", "$T", "ERROR"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
		{0, []string{"CLIENT", "CACHING", "yes"}, 1, nil},
		{0, []string{"BLPOP", "nolist", "0"}, 0, nil},
		{0, nil, 0, nil},
		{1, []string{"CLIENT", "UNBLOCK", "$T"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"CLIENT", "TRACKINGINFO"}, 1, nil},
	}
	compareScripts(t, addr, raddr, "3", steps)
}

// TestCompatTrackingBlocked compares with Redis 7.0 the messages of a
// client whose blocking command finds a key it reads expired: the
// message comes as the command blocks, not once it is answered; under
// CLIENT REPLY OFF it comes, and the reply when the client is answered
// does not, nor anything else.
func TestCompatTrackingBlocked(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{Settings: map[string]string{"enable-debug-command": "yes"}})
	raddr := redisServer(t, "--enable-debug-command", "yes")
	steps := []trackStep{
		{1, []string{"DEBUG", "SET-ACTIVE-EXPIRE", "0"}, 1, nil},
		{0, []string{"CLIENT", "TRACKING", "on"}, 1, nil},
		{1, []string{"RPUSH", "l", "a"}, 1, nil},
		{1, []string{"PEXPIRE", "l", "20"}, 1, nil},
		{0, []string{"LRANGE", "l", "0", "-1"}, 1, nil},
		{0, nil, 0, nil},
		{0, []string{"BLPOP", "l", "0.3"}, 2, nil},
		{0, []string{"LRANGE", "l2", "0", "-1"}, 1, nil},
		{1, []string{"RPUSH", "l2", "a"}, 1, nil},
		{0, nil, 1, nil},
		{1, []string{"PEXPIRE", "l2", "20"}, 1, nil},
		{0, []string{"LRANGE", "l2", "0", "-1"}, 1, nil},
		{0, nil, 0, nil},
		{0, []string{"BLPOP", "l2", "0"}, 1, nil},
		{1, []string{"RPUSH", "l2", "b"}, 1, nil},
		{0, nil, 1, nil},
		{0, []string{"PING"}, 1, nil},
		// Under CLIENT REPLY OFF: the message, and no reply when it is
		// answered.
		{1, []string{"RPUSH", "q", "a"}, 1, nil},
		{1, []string{"PEXPIRE", "q", "20"}, 1, nil},
		{0, []string{"LRANGE", "q", "0", "-1"}, 1, nil},
		{0, nil, 0, nil},
		{0, []string{"CLIENT", "REPLY", "OFF"}, 0, nil},
		{0, []string{"BLPOP", "q", "0.1"}, 1, nil},
		{0, nil, 0, nil},
		{0, nil, 0, nil},
		{0, []string{"CLIENT", "REPLY", "ON"}, 1, nil},
		// And a message for a client redirecting to it.
		{2, []string{"CLIENT", "TRACKING", "on", "REDIRECT", "$T"}, 1, nil},
		{1, []string{"RPUSH", "r", "a"}, 1, nil},
		{1, []string{"PEXPIRE", "r", "20"}, 1, nil},
		{2, []string{"LRANGE", "r", "0", "-1"}, 1, nil},
		{0, nil, 0, nil},
		{0, []string{"CLIENT", "REPLY", "OFF"}, 0, nil},
		{0, []string{"BLPOP", "r", "0.1"}, 1, nil},
		{0, nil, 0, nil},
		{0, nil, 0, nil},
		{0, []string{"CLIENT", "REPLY", "ON"}, 1, nil},
	}
	compareScripts(t, addr, raddr, "3", steps)
}

// A message for a client redirecting to the client being served comes
// after that one's reply, where Redis 7.0 writes it into the reply: into
// EXEC's array when a command of the transaction changes the key or
// flushes, into MGET's when MGET finds the key expired.
func TestTrackingRedirectToClientServed(t *testing.T) {
	_, addr := startServer(t, Config{Settings: map[string]string{"enable-debug-command": "yes"}})
	target, tracker := dialRaw(t, addr), dialRaw(t, addr)
	target.do("HELLO", "3")
	target.do("DEBUG", "SET-ACTIVE-EXPIRE", "0")
	id := strings.TrimSuffix(strings.TrimPrefix(target.do("CLIENT", "ID"), ":"), "\r\n")
	tracker.do("CLIENT", "TRACKING", "on", "REDIRECT", id)
	target.do("SET", "e", "v", "PX", "20")
	tracker.do("GET", "k")
	tracker.do("GET", "e")
	time.Sleep(50 * time.Millisecond)
	target.sendTogether([]string{"MULTI"}, []string{"SET", "k", "1"}, []string{"GET", "x"}, []string{"EXEC"},
		[]string{"MGET", "a", "e", "b"}, []string{"MULTI"}, []string{"FLUSHDB"}, []string{"EXEC"})
	want := []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n+OK\r\n_\r\n",
		">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n", "*3\r\n_\r\n_\r\n_\r\n",
		">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ne\r\n", "+OK\r\n", "+QUEUED\r\n", "*1\r\n+OK\r\n",
		">2\r\n$10\r\ninvalidate\r\n_\r\n"}
	for i, w := range want {
		if got := target.read(); got != w {
			t.Fatalf("read %d: %q; want %q", i, got, w)
		}
	}
}

// TestTrackingTableMemory: the tracking table gives its memory back as
// its keys leave it, as Redis's rax frees its nodes: after 100,000 keys
// read and then changed (each invalidated), the heap is back to what it
// was before the reads, within a twentieth of what they took (25 MB),
// where Go's map kept the slots of all 100,000 (18% of it); a flush
// makes it again, empty.
// Serial: it measures the process's heap.
func TestTrackingTableMemory(t *testing.T) {
	s, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	rc.do("CLIENT", "TRACKING", "on") // RESP2 with no redirection: no messages
	const n = 100000
	key := func(i int) string { return "key:" + strconv.Itoa(i) }
	set := func(i int) []string { return []string{"SET", key(i), "v"} }
	rc.doMany(n, set)
	before := heapInUse()
	rc.doMany(n, func(i int) []string { return []string{"GET", key(i)} })
	read := heapInUse()
	rc.doMany(n, set)
	changed := heapInUse()
	if info := rc.do("INFO", "stats"); !strings.Contains(info, "\r\ntracking_total_keys:0\r\n") {
		t.Fatalf("INFO stats after the keys changed: %q; want no key tracked", info)
	}
	if grown, kept := read-before, changed-before; grown < 8<<20 || kept > grown/20 {
		t.Errorf("the tracking table of %d keys took %d bytes, and kept %d once they all changed; want at most a twentieth kept", n, grown, kept)
	}
	rc.doMany(n, func(i int) []string { return []string{"GET", key(i)} })
	rc.do("FLUSHALL")
	var peak, left int
	onLoop(s, func() { peak, left = s.track.peak, len(s.track.table) })
	if peak != 0 || left != 0 {
		t.Errorf("after FLUSHALL the table holds %d keys, %d at its peak; want a new, empty table", left, peak)
	}
}

// TestTrackingTableMaxKeysShrinks: tracking-table-max-keys drops keys
// from a table that is made again smaller while it walks it (100 of 5,000
// kept): the walk goes on over the old table, and the counts of keys and
// IDs stay those of the table.
func TestTrackingTableMaxKeysShrinks(t *testing.T) {
	t.Parallel()
	s, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	rc.do("CONFIG", "SET", "tracking-table-max-keys", "100")
	rc.do("CLIENT", "TRACKING", "on") // RESP2 with no redirection: no messages
	mget := []string{"MGET"}
	for i := range 5000 {
		mget = append(mget, "key:"+strconv.Itoa(i))
	}
	rc.do(mget...)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var keys, items, peak int
		onLoop(s, func() {
			keys, peak = len(s.track.table), s.track.peak
			for _, ids := range s.track.table {
				items += len(ids)
			}
		})
		info := rc.do("INFO", "stats")
		if keys <= 100 {
			if infoField(info, "tracking_total_keys") != strconv.Itoa(keys) || infoField(info, "tracking_total_items") != strconv.Itoa(items) || peak > 400 {
				t.Errorf("a table of %d keys, %d IDs, %d at its peak: INFO says %s keys, %s items",
					keys, items, peak, infoField(info, "tracking_total_keys"), infoField(info, "tracking_total_items"))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the table still holds %d keys", keys)
		}
	}
}

// TestCompatTrackingPrefixOverlap: BCAST prefixes that overlap, among
// those given or with the client's own, are refused with the error Redis
// gives, naming the same two prefixes, over random lists of them; and a
// long list is checked without comparing each prefix with every other.
// Redis 7.0 follows the error with OK, and turns tracking on, when the
// two are both given and the first of them is not the first given (a
// bug Redis 7.2 fixed): only the error is compared, and evkv's single
// reply is checked.
func TestCompatTrackingPrefixOverlap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, rng.IntN(4))
		for i := range b {
			b[i] = "ab/"[rng.IntN(3)]
		}
		return string(b)
	}
	prefixArgs := func(n int) []string {
		args := []string{"CLIENT", "TRACKING", "on", "BCAST"}
		for range n {
			args = append(args, "PREFIX", word())
		}
		return args
	}
	raddr := redisServer(t)
	_, addr := startServer(t, Config{})
	for trial := range 300 {
		own, given := prefixArgs(rng.IntN(3)), prefixArgs(1+rng.IntN(5))
		if len(own) == 4 {
			own = nil
		}
		var replies [2][]string
		for i, a := range []string{addr, raddr} {
			rc := dialRaw(t, a)
			if own != nil {
				replies[i] = append(replies[i], rc.do(own...))
			}
			if trial%4 == 3 {
				// A bare BCAST adds the empty prefix beside the others.
				replies[i] = append(replies[i], rc.do("CLIENT", "TRACKING", "on", "BCAST"))
			}
			replies[i] = append(replies[i], rc.do(given...))
			if i == 0 {
				replies[i] = append(replies[i], rc.do("PING"))
			}
			rc.c.Close()
		}
		if ours, theirs := replies[0][:len(replies[0])-1], replies[1]; !slices.Equal(ours, theirs) {
			t.Errorf("trial %d: %q then %q: evkv %q; Redis %q", trial, own, given, ours, theirs)
		}
		if pong := replies[0][len(replies[0])-1]; pong != "+PONG\r\n" {
			t.Errorf("trial %d: PING after the replies = %q; want one reply each", trial, pong)
		}
	}
	// 100,000 prefixes, the last two overlapping.
	rc := dialRaw(t, addr)
	args := []string{"CLIENT", "TRACKING", "on", "BCAST"}
	for i := range 100000 {
		args = append(args, "PREFIX", "p"+strconv.Itoa(i)+":")
	}
	args = append(args, "PREFIX", "p99999:x")
	if got, want := rc.do(args...), "-ERR Prefix 'p99999:' overlaps with another provided prefix 'p99999:x'. Prefixes for a single client must not overlap.\r\n"; got != want {
		t.Errorf("100,001 prefixes: %q; want %q", got, want)
	}
}

// TestCompatTrackingBcastLengths: BCAST prefixes of several lengths, one
// beginning another and the empty one among them, each get the keys that
// begin with them, in one message a prefix after the iteration; a prefix
// dropped (its only client turned tracking off) gets nothing, and one
// taken again gets the keys changed from then on, as in Redis.
func TestCompatTrackingBcastLengths(t *testing.T) {
	_, addr := startServer(t, Config{})
	steps := []trackStep{
		{0, []string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "order:1", "PREFIX", "x"}, 1, nil},
		{2, []string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:4"}, 1, nil},
		{1, []string{"MSET", "user:42", "a", "order:17", "b", "order:2", "c", "x", "d", "y", "e"}, 1, nil},
		{0, nil, 3, nil},
		{2, nil, 1, nil},
		{1, []string{"SET", "user:5", "f"}, 1, nil},
		{0, nil, 1, nil},
		{2, []string{"CLIENT", "TRACKING", "off"}, 1, nil},
		{1, []string{"SET", "user:43", "g"}, 1, nil},
		{0, nil, 1, nil},
		{2, []string{"PING"}, 1, nil}, // nothing for the dropped prefix came before it
		{2, []string{"CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:4", "PREFIX", ""}, 1, nil},
		{2, []string{"CLIENT", "TRACKING", "on", "BCAST"}, 1, nil}, // the empty prefix: every key
		{1, []string{"MSET", "user:44", "h", "zzz", "i"}, 1, nil},
		{0, nil, 1, nil},
		{2, nil, 1, nil},
	}
	compareScripts(t, addr, redisServer(t), "3", steps)
}
