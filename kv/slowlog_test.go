package kv

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/resp"
	"github.com/redis/go-redis/v9"
)

// TestSlowlog logs every command (slowlog-log-slower-than 0) and reads the
// log back with go-redis: newest first, ids rising, the client's address
// and name, arguments cut as Redis cuts them, secrets redacted, EXEC left
// out but the commands it ran kept, and the log bounded by slowlog-max-len.
func TestSlowlog(t *testing.T) {
	_, addr := startServer(t, Config{})
	ctx := context.Background()
	c := goRedis(t, addr, func(o *redis.Options) { o.PoolSize = 1; o.ClientName = "watcher" })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := c.ConfigGet(ctx, "slowlog-*").Val(); got["slowlog-log-slower-than"] != "10000" || got["slowlog-max-len"] != "128" {
		t.Fatalf("CONFIG GET slowlog-* = %v; want Redis's defaults 10000 and 128", got)
	}
	must(c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
	must(c.SlowLogReset(ctx).Err())
	must(c.Set(ctx, "k", "v", 0).Err())
	must(c.Get(ctx, "k").Err())
	logs, err := c.SlowLogGet(ctx, -1).Result()
	must(err)
	if len(logs) != 3 {
		t.Fatalf("SLOWLOG GET -1 = %d entries; want 3 (SLOWLOG RESET, SET, GET): %+v", len(logs), logs)
	}
	for i, want := range []string{"get k", "set k v", "slowlog reset"} {
		if got := strings.ToLower(strings.Join(logs[i].Args, " ")); got != want {
			t.Errorf("entry %d = %q; want %q (newest first)", i, got, want)
		}
		if i > 0 && logs[i].ID >= logs[i-1].ID {
			t.Errorf("entry %d id %d not below the newer one's %d", i, logs[i].ID, logs[i-1].ID)
		}
		if logs[i].ClientName != "watcher" || !strings.HasPrefix(logs[i].ClientAddr, "127.0.0.1:") || logs[i].Time.IsZero() {
			t.Errorf("entry %d: client %q at %q, time %v", i, logs[i].ClientName, logs[i].ClientAddr, logs[i].Time)
		}
	}

	// Arguments past 32 and bytes past 128 are cut, with a count of the rest.
	long := strings.Repeat("x", 200)
	many := []any{"mset"}
	for i := range 20 {
		many = append(many, fmt.Sprint("k", i), long)
	}
	must(c.Do(ctx, many...).Err())
	e := c.SlowLogGet(ctx, 1).Val()[0]
	if len(e.Args) != 32 || e.Args[31] != "... (10 more arguments)" {
		t.Fatalf("MSET of 41 arguments logged as %d, last %q; want 32, %q", len(e.Args), e.Args[len(e.Args)-1], "... (10 more arguments)")
	}
	if e.Args[2] != strings.Repeat("x", 128)+"... (72 more bytes)" {
		t.Errorf("a 200-byte argument logged as %q", e.Args[2])
	}

	// Secrets are not logged.
	rc := dialRaw(t, addr)
	for _, args := range [][]string{
		{"CONFIG", "SET", "requirepass", "s3cret"},
		{"AUTH", "s3cret"},
		{"HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "raw"},
		{"CONFIG", "SET", "requirepass", ""},
	} {
		if got := rc.do(args...); strings.HasPrefix(got, "-") {
			t.Fatalf("%q = %q", args, got)
		}
	}
	var lines []string
	for _, e := range c.SlowLogGet(ctx, 4).Val() {
		lines = append(lines, strings.Join(e.Args, " "))
	}
	want := []string{
		"CONFIG SET requirepass (redacted)",
		"HELLO 2 AUTH (redacted) (redacted) SETNAME raw",
		"AUTH (redacted)",
		"CONFIG SET requirepass (redacted)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("the slow log's secrets: %q; want %q", lines, want)
	}

	// EXEC is not logged; the commands it ran are.
	must(c.SlowLogReset(ctx).Err())
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "n")
		p.Incr(ctx, "n")
		return nil
	})
	must(err)
	var names []string
	for _, e := range c.SlowLogGet(ctx, -1).Val() {
		switch name := strings.ToLower(e.Args[0]); name {
		case "hello", "client": // go-redis may set up another connection
		default:
			names = append(names, name)
		}
	}
	if got := strings.Join(names, " "); got != "incr incr multi slowlog" {
		t.Errorf("after a transaction the log holds %q; want %q", got, "incr incr multi slowlog")
	}

	// Bounded by slowlog-max-len, the newest kept.
	must(c.ConfigSet(ctx, "slowlog-max-len", "3").Err())
	for i := range 10 {
		must(c.Set(ctx, "k", i, 0).Err())
	}
	if got := c.SlowLogGet(ctx, 10).Val(); len(got) != 3 || got[0].Args[2] != "9" || got[2].Args[2] != "7" {
		t.Errorf("SLOWLOG GET 10 with slowlog-max-len 3 = %+v; want the SETs of 9, 8, 7", got)
	}
	if n := c.SlowLogLen(ctx).Val(); n != 3 {
		t.Errorf("SLOWLOG LEN with slowlog-max-len 3 = %d", n)
	}

	// A negative threshold logs nothing; RESET empties the log.
	must(c.ConfigSet(ctx, "slowlog-log-slower-than", "-1").Err())
	must(c.SlowLogReset(ctx).Err())
	must(c.Set(ctx, "k", "v", 0).Err())
	if n := c.SlowLogLen(ctx).Val(); n != 0 {
		t.Errorf("SLOWLOG LEN with the log off = %d", n)
	}
}

// TestCompatSlowlogErrors compares the replies to bad SLOWLOG, MEMORY
// USAGE and CONFIG SET requests, and the slow log's settings, with
// Redis's.
func TestCompatSlowlogErrors(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"SLOWLOG", "GET", "-2"}, {"SLOWLOG", "GET", "many"}, {"SLOWLOG", "GET", "+1"}, {"SLOWLOG", "GET", "01"},
		{"SLOWLOG", "GET", "1", "2"}, {"slowlog", "get", "1", "2"}, {"SLOWLOG", "LEN", "1"}, {"SLOWLOG", "FOO"},
		{"SLOWLOG", "GET", "0"},
		{"CONFIG", "SET", "slowlog-log-slower-than", "-2"}, {"CONFIG", "SET", "slowlog-max-len", "x"},
		{"CONFIG", "SET", "slowlog-max-len", "9999999999"}, {"CONFIG", "GET", "slowlog-max-len"},
		{"CONFIG", "SET", "slowlog-max-len", "5", "slowlog-log-slower-than", "x"}, {"CONFIG", "GET", "slowlog-max-len"},
		{"CONFIG", "SET", "slowlog-max-len", "6", "SLOWLOG-MAX-LEN", "7"}, {"CONFIG", "GET", "slowlog-max-len"},
		{"CONFIG", "SET", "maxclients", "0"}, {"CONFIG", "SET", "maxclients", "x"},
		{"SET", "k", "v"}, {"MEMORY", "USAGE", "k", "SAMPLES", "+1"}, {"MEMORY", "USAGE", "k", "SAMPLES", "01"},
		// A lower slowlog-max-len shortens the log at once while it is on.
		{"CONFIG", "SET", "slowlog-log-slower-than", "0"}, {"SET", "a", "1"}, {"SET", "a", "2"},
		{"CONFIG", "SET", "slowlog-log-slower-than", "10000"}, {"CONFIG", "SET", "slowlog-max-len", "1"}, {"SLOWLOG", "LEN"},
	})
}

// TestSlowlogNotChargedForRejected checks that the time spent on requests
// that do not run (an unknown command, a wrong arity, a command queued in
// MULTI) is not counted to the command after them. The requests' cost is
// stood for by moving the start of the next command's time back by 50 ms
// before each of them; with a 20 ms threshold, the command after must not
// be logged.
func TestSlowlogNotChargedForRejected(t *testing.T) {
	s, c := directServer(t)
	run := func(args ...string) string {
		s.w.Reset()
		s.call(c, argv(args...))
		return string(s.w.Buf)
	}
	run("CONFIG", "SET", "slowlog-log-slower-than", "20000")
	for _, tc := range []struct {
		name             string
		before, rejected []string
		next             []string
	}{
		{"unknown", nil, []string{"NOSUCH"}, []string{"PING"}},
		{"arity", nil, []string{"GET"}, []string{"PING"}},
		{"queued", []string{"MULTI"}, []string{"SET", "k", "v"}, []string{"EXEC"}},
	} {
		run("SLOWLOG", "RESET")
		if tc.before != nil {
			run(tc.before...)
		}
		s.mono = s.tick() - 50*time.Millisecond // as if the request took that long
		run(tc.rejected...)
		run(tc.next...)
		if n := s.slowlog.len(); n != 0 {
			t.Errorf("%s: %q after %q was logged: %+v", tc.name, tc.next, tc.rejected, s.slowlog.entries[s.slowlog.start:])
		}
	}
}

// TestCompatSlowlog runs the same commands against evkv and Redis with
// every command logged and compares what each slow log kept of them: the
// arguments, cut and redacted, and the order; ids, times and addresses
// differ by nature.
func TestCompatSlowlog(t *testing.T) {
	_, addr := startServer(t, Config{})
	servers := map[string]*rawConn{"evkv": dialRaw(t, addr), "Redis": dialRaw(t, redisServer(t))}
	long := strings.Repeat("y", 300)
	mset := []string{"MSET"}
	for i := range 25 {
		mset = append(mset, fmt.Sprint("k", i), long)
	}
	script := [][]string{
		{"CONFIG", "SET", "slowlog-log-slower-than", "0"},
		{"SLOWLOG", "RESET"},
		mset,
		{"SET", long, "v"},
		{"CONFIG", "SET", "requirepass", "pw"},
		{"AUTH", "pw"},
		{"AUTH", "default", "pw"},
		{"HELLO", "2", "AUTH", "default", "pw", "SETNAME", "x"},
		{"HELLO", "2", "SETNAME", "auth", "AUTH", "default", "pw"},
		{"HELLO", "2", "SETNAME", "x", "AUTH", "default"},
		{"BLPOP", "nolist", "0.01"},
		{"CONFIG", "SET", "requirepass", ""},
		{"CONFIG", "SET", "masterauth", "pw"},
		{"MULTI"}, {"INCR", "n"}, {"EXEC"},
		{"SLOWLOG", "GET", "nope"},
		{"CONFIG", "SET", "slowlog-max-len", "5"},
		{"GET", "n"},
	}
	logged := map[string][]string{}
	for name, rc := range servers {
		for _, args := range script {
			rc.do(args...)
		}
		logged[name] = loggedCommands(t, rc.do("SLOWLOG", "GET", "-1"))
	}
	if got, want := logged["evkv"], logged["Redis"]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("slow log entries:\nevkv  %q\nRedis %q", got, want)
	}
}

// TestCompatSlowlogBlocked: a blocking command is logged when data
// serves it, after the push that served it, and not when it times out,
// nor a WAIT; the same entries as Redis's.
func TestCompatSlowlogBlocked(t *testing.T) {
	_, addr := startServer(t, Config{})
	logged := map[string][]string{}
	for name, addr := range map[string]string{"evkv": addr, "Redis": redisServer(t)} {
		waiter, pusher := dialRaw(t, addr), dialRaw(t, addr)
		pusher.do("CONFIG", "SET", "slowlog-log-slower-than", "0")
		pusher.do("SLOWLOG", "RESET")
		waiter.do("BLPOP", "nolist", "0.01")
		waiter.do("WAIT", "1", "10")
		blocked := func(cmd string) { // until the waiter blocks in cmd
			for !strings.Contains(pusher.do("CLIENT", "LIST"), "cmd="+cmd) {
				time.Sleep(time.Millisecond)
			}
		}
		waiter.send("BLPOP", "l", "0")
		blocked("blpop")
		pusher.do("RPUSH", "l", "x")
		if got := waiter.read(); got != "*2\r\n$1\r\nl\r\n$1\r\nx\r\n" {
			t.Fatalf("%s: BLPOP = %q", name, got)
		}
		waiter.send("BLMOVE", "m", "n", "LEFT", "RIGHT", "0")
		blocked("blmove")
		pusher.do("LPUSH", "m", "y")
		waiter.read()
		for _, cmd := range loggedCommands(t, pusher.do("SLOWLOG", "GET", "-1")) {
			if !strings.HasPrefix(cmd, "CLIENT") {
				logged[name] = append(logged[name], cmd)
			}
		}
	}
	if got, want := logged["evkv"], logged["Redis"]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("slow log entries:\nevkv  %q\nRedis %q", got, want)
	}
}

// loggedCommands returns the commands of a SLOWLOG GET reply, each as its
// arguments joined by spaces, newest first.
func loggedCommands(t *testing.T, reply string) []string {
	t.Helper()
	v, _, err := resp.Parse([]byte(reply))
	if err != nil {
		t.Fatalf("SLOWLOG GET: %v", err)
	}
	var out []string
	for _, e := range v.Elems {
		var args []string
		for _, a := range e.Elems[3].Elems {
			args = append(args, string(a.Str))
		}
		out = append(out, strings.Join(args, " "))
	}
	return out
}

// TestConfigSettings checks Config.Settings: applied as CONFIG SET applies
// them, and refused when unknown, immutable (unless given the value evkv
// has), bad, or a Config field's.
func TestConfigSettings(t *testing.T) {
	s, err := New(Config{Logger: quietLogger(), Settings: map[string]string{"SLOWLOG-max-len": "9", "slowlog-log-slower-than": "-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.slowlog.maxLen != 9 || s.slowlog.slowerThan != -1 {
		t.Errorf("after Settings, slowlog-max-len %d and slowlog-log-slower-than %d; want 9 and -1", s.slowlog.maxLen, s.slowlog.slowerThan)
	}
	for name, want := range map[string]string{
		"nosuch":          `kv: setting nosuch: unknown setting`,
		"maxmemory":       `kv: setting maxmemory: argument must be a memory value`,
		"hz":              `kv: setting hz: cannot be set: evkv has it fixed at "10"`,
		"requirepass":     `kv: setting requirepass: has a field of its own in Config`,
		"slowlog-max-len": "kv: setting slowlog-max-len: argument must be between 0 and 9223372036854775807 inclusive",
	} {
		if _, err := New(Config{Logger: quietLogger(), Settings: map[string]string{name: "-5"}}); err == nil || err.Error() != want {
			t.Errorf("Settings %s: New error %v; want %q", name, err, want)
		}
	}
	// A fixed parameter given its fixed value is taken (a Redis file's
	// "timeout 0", "hz 10").
	if _, err := New(Config{Logger: quietLogger(), Settings: map[string]string{"timeout": "0", "hz": "10"}}); err != nil {
		t.Errorf("Settings of fixed parameters at their values: %v", err)
	}
}

// Old names (slave-*, *-ziplist-*, lua-time-limit) reach their parameters
// from a file, and CONFIG GET's patterns list them beside the new ones, as
// Redis 7.0's do.
func TestConfigOldNames(t *testing.T) {
	_, addr := startServer(t, Config{Settings: map[string]string{"hash-max-ziplist-entries": "100", "slave-read-only": "no"}})
	rc := dialRaw(t, addr)
	if got := rc.do("CONFIG", "GET", "hash-max-listpack-entries"); !strings.Contains(got, "\r\n100\r\n") {
		t.Errorf("hash-max-listpack-entries after hash-max-ziplist-entries 100: %q", got)
	}
	got := rc.do("CONFIG", "GET", "*read-only")
	for _, want := range []string{"replica-read-only\r\n$2\r\nno", "slave-read-only\r\n$2\r\nno"} {
		if !strings.Contains(got, want) {
			t.Errorf("CONFIG GET *read-only = %q; want %q in it", got, want)
		}
	}
	if got := rc.do("CONFIG", "GET", "*"); !strings.HasPrefix(got, fmt.Sprintf("*%d\r\n", 2*(len(configParams)+len(configAliases)))) {
		t.Errorf("CONFIG GET * does not list every name and old name: %.40q", got)
	}
}
