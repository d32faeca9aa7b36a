package kv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/evloop/evloop/resp"
)

// Tests that spend most of their time waiting on the clock (the log's
// fsync every second, expiry, DEBUG SLEEP, a paused server) call
// t.Parallel. Those that set maxmemory, which is measured against the
// process's heap, or measure the heap themselves, or that change the
// package's variables (the
// background save's and rewrite's pace: walkBy, stallRewrite; the
// command table: registerPanicking) do not.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startServer serves a fresh Server with cfg on a free loopback port and
// returns its address; it is shut down when the test ends.
func startServer(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	a, err := s.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return s, a.String()
}

// restartRaw shuts s down and starts a server of cfg in its place, which
// loads what s left in cfg.Dir, and returns a raw connection to it.
func restartRaw(t *testing.T, s *Server, cfg Config) *rawConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, cfg)
	return dialRaw(t, addr)
}

// goRedis returns a go-redis client of addr, closed when the test ends.
func goRedis(t testing.TB, addr string, opts ...func(*redis.Options)) *redis.Client {
	t.Helper()
	// 30 s to read a reply and to write a command, as a rawConn has, where
	// go-redis's default, 3 s, cut off a long reply on a loaded machine
	// (TestLatencyCommands's LRANGE of 500,000 items).
	o := &redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 4, DisableIdentity: true, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// serverAndClient is startServer with a default Config and one client.
func serverAndClient(t testing.TB) (*redis.Client, context.Context) {
	t.Helper()
	_, addr := startServer(t, Config{})
	return goRedis(t, addr), context.Background()
}

// rawConn is a connection that speaks RESP by hand, for exact replies.
// Each write, and each wait for more of a reply, has 30 seconds from its
// start, so that a test that keeps a connection long on a loaded machine
// is not cut off; a test that reads through c or r itself sets its own
// deadline, or has the one the last write or read left.
type rawConn struct {
	t  testing.TB
	c  net.Conn
	r  *bufio.Reader
	w  resp.Writer
	rb []byte // read and not yet taken: a part of buf
	// buf is the buffer replies are read into, kept from one reply to
	// the next up to 1 MiB.
	buf []byte
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, r: bufio.NewReader(c)}
}

// send writes a command.
func (rc *rawConn) send(args ...string) {
	rc.t.Helper()
	rc.sendTogether(args)
}

// sendTogether writes commands in one write, so that the server reads
// them at once and runs them one after the other, nothing of its own
// (a rewrite's end, a timer) between them.
func (rc *rawConn) sendTogether(cmds ...[]string) {
	rc.t.Helper()
	rc.w.Reset()
	for _, args := range cmds {
		bs := make([][]byte, len(args))
		for i, a := range args {
			bs[i] = []byte(a)
		}
		rc.w.Command(bs...)
	}
	rc.c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := rc.c.Write(rc.w.Buf); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// read reads one reply, as its raw RESP bytes.
func (rc *rawConn) read() string {
	rc.t.Helper()
	for {
		if len(rc.rb) > 0 {
			_, n, err := resp.Parse(rc.rb)
			if err == nil {
				out := string(rc.rb[:n])
				rc.rb = rc.rb[n:]
				if len(rc.rb) == 0 && cap(rc.buf) > 1<<20 {
					rc.rb, rc.buf = nil, nil // not held for the test's remainder
				}
				return out
			}
			if err != resp.ErrIncomplete {
				rc.t.Fatalf("bad reply %q: %v", rc.rb, err)
			}
		}
		if len(rc.rb) == 0 {
			rc.rb = rc.buf[:0]
		}
		// Room for as much again as is held, so that a long reply is
		// parsed a few times as it comes, not once every 64 KiB.
		if room := max(64<<10, len(rc.rb)); cap(rc.rb)-len(rc.rb) < room {
			rc.buf = slices.Grow(rc.rb, room)
			rc.rb = rc.buf
		}
		rc.c.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, err := rc.r.Read(rc.rb[len(rc.rb):cap(rc.rb)])
		if err != nil {
			rc.t.Fatalf("read (have %q): %v", rc.rb, err)
		}
		rc.rb = rc.rb[:len(rc.rb)+n]
	}
}

// doMany sends the n commands cmd(0) to cmd(n-1), 1000 to a write, and
// reads each write's replies, which it drops, before the next write.
func (rc *rawConn) doMany(n int, cmd func(i int) []string) {
	rc.t.Helper()
	for i := 0; i < n; i += 1000 {
		batch := make([][]string, 0, 1000)
		for j := i; j < min(i+1000, n); j++ {
			batch = append(batch, cmd(j))
		}
		rc.sendTogether(batch...)
		for range batch {
			rc.read()
		}
	}
}

// do sends a command and returns its raw reply.
func (rc *rawConn) do(args ...string) string {
	rc.t.Helper()
	rc.send(args...)
	return rc.read()
}

// redisServer starts Redis itself, when it is installed, for comparing
// replies, with extra arguments after its own ("--dir", d wins over its
// temporary directory); the test is skipped otherwise.
func redisServer(t testing.TB, extra ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	port := testpeer.FreePort(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, extra...)...)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
	}
	t.Fatalf("redis-server did not start on %s", addr)
	return ""
}

// doBoth sends a command to ours and to theirs, then reads each one's
// reply: the two servers serve it at once, each its commands in order.
func doBoth(ours, theirs *rawConn, args ...string) (got, want string) {
	ours.t.Helper()
	ours.send(args...)
	theirs.send(args...)
	return ours.read(), theirs.read()
}

// compareWithRedis runs each command against evkv and Redis on fresh
// connections and fails where the raw replies differ. Commands run in
// order on one connection per server. HELLO's replies carry the server's
// version and the connection's id: only their types are compared.
func compareWithRedis(t *testing.T, script [][]string) {
	t.Helper()
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	for _, args := range script {
		got, want := doBoth(ours, theirs, args...)
		if strings.EqualFold(args[0], "hello") && len(got) > 0 && len(want) > 0 {
			got, want = got[:1], want[:1]
		}
		if got != want {
			t.Errorf("%q: evkv replied %q; Redis %q", args, got, want)
		}
	}
}

func TestPingSetGet(t *testing.T) {
	c, ctx := serverAndClient(t)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if v, err := c.Get(ctx, "k").Result(); v != "v" || err != nil {
		t.Fatalf("GET = %q, %v; want v", v, err)
	}
}

func TestCompatBasics(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"PING"}, {"PING", "hi"}, {"ECHO", "x"}, {"SET", "a", "1"}, {"GET", "a"}, {"INCR", "a"}, {"INCRBY", "a", "x"},
		{"SET", "a", "1", "NX", "XX"}, {"SET", "a", "1", "EX", "0"}, {"SET", "a", "1", "EX", "-5"}, {"GET"},
		{"NOSUCHCMD", "a", "b"}, {"SELECT", "99"}, {"SELECT", "x"}, {"AUTH", "x"}, {"APPEND", "a", "23"},
		{"GETRANGE", "a", "0", "-2"}, {"SETRANGE", "a", "1", "xx"}, {"GET", "a"}, {"STRLEN", "a"},
		{"MSET", "a", "1", "b"}, {"MGET", "a", "nokey"}, {"INCRBYFLOAT", "f", "10.5"}, {"INCRBYFLOAT", "f", "0.1"},
		{"TYPE", "a"}, {"TYPE", "nokey"}, {"EXISTS", "a", "a", "nokey"}, {"DEL", "a", "nokey"},
		{"CLIENT", "NOSUCH"}, {"CLIENT"}, {"OBJECT", "ENCODING", "f"}, {"RENAME", "nokey", "x"},
		{"EXPIRE", "f", "100", "NX", "XX"}, {"EXPIRE", "f", "100", "GT", "LT"}, {"EXPIRE", "f", "100", "FOO"},
		{"TTL", "f"}, {"PERSIST", "f"}, {"DECRBY", "n", "-9223372036854775808"}, {"SET", "n", "9223372036854775807"}, {"INCR", "n"},
		{"MULTI"}, {"MULTI"}, {"SET", "x", "1"}, {"EXEC"}, {"EXEC"}, {"DISCARD"},
		{"MULTI"}, {"NOSUCH"}, {"SET", "x", "1"}, {"EXEC"},
		{"WATCH", "x"}, {"MULTI"}, {"WATCH", "y"}, {"EXEC"},
		{"CONFIG", "SET", "appendonly", "maybe"}, {"CONFIG", "SET", "appendfsync", "maybe"},
	})
}

// TestCompatExpireBounds: EXPIRE's seconds past what milliseconds hold,
// and a relative time that overflows once now is added, are "invalid
// expire time", as Redis's expireGenericCommand finds them; Redis checks
// no overflow downwards, so a time however far in the past deletes the
// key and replies 1.
func TestCompatExpireBounds(t *testing.T) {
	var script [][]string
	for _, args := range [][]string{
		{"PEXPIRE", "k", "-9223372036854775000"}, {"PEXPIRE", "k", "-9223372036854775808"},
		{"EXPIRE", "k", "-9223372036854775"}, {"EXPIRE", "k", "-9223372036854776"},
		{"EXPIRE", "k", "9223372036854775"}, {"EXPIRE", "k", "9223372036854776"},
		{"PEXPIRE", "k", "9223372036854775807"},
		{"PEXPIREAT", "k", "-9223372036854775808"}, {"EXPIREAT", "k", "-9223372036854775"},
		{"EXPIREAT", "k", "-9223372036854776"}, {"PEXPIREAT", "k", "9223372036854775807"},
		{"EXPIREAT", "k", "9223372036854775"}, {"EXPIREAT", "k", "9223372036854776"},
		{"PEXPIRE", "k", "-9223372036854775808", "GT"}, {"PEXPIRE", "k", "-9223372036854775808", "LT"},
	} {
		script = append(script, []string{"SET", "k", "v"}, args, []string{"EXISTS", "k"})
	}
	compareWithRedis(t, script)
}

// TestCompatRejectedExec: an EXEC refused before it runs (wrong arity,
// RESP2's subscribed mode) replies "EXECABORT Transaction discarded
// because of: <reason>" and discards the transaction and the watched
// keys, in MULTI or not, as Redis's rejectCommand does through
// execCommandAbort; the next EXEC is "EXEC without MULTI".
func TestCompatRejectedExec(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"MULTI"}, {"SET", "a", "1"}, {"EXEC", "x"}, {"EXEC"}, {"GET", "a"}, {"EXEC", "x"},
		{"WATCH", "w"}, {"SET", "w", "1"}, {"EXEC", "x"}, {"MULTI"}, {"EXEC"},
		{"MULTI"}, {"SUBSCRIBE", "ch"}, {"EXEC"}, {"EXEC"}, {"PING"},
	})
}

// TestCompatClientListKillArguments: CLIENT LIST and CLIENT KILL read
// their arguments as Redis 7.0's do. CLIENT LIST takes TYPE and a type, or
// ID and any integers (0 and negative ones name no client; a client named
// twice is listed twice, in the order given); KILL's USER must name a user
// (clientKillCommand looks it up: "No such user", in the order of the
// arguments), and only default exists, as without ACL.
func TestCompatClientListKillArguments(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"CLIENT", "LIST", "ID", "0"}, {"CLIENT", "LIST", "ID", "-1", "0", "99999"}, {"CLIENT", "LIST", "ID", "1", "x"},
		{"CLIENT", "LIST", "ID"}, {"CLIENT", "LIST", "TYPE", "normal", "ID", "1"}, {"CLIENT", "LIST", "ID", "1", "TYPE", "normal"},
		{"CLIENT", "LIST", "TYPE", "normal", "TYPE", "pubsub"}, {"CLIENT", "LIST", "TYPE", "bogus"}, {"CLIENT", "LIST", "TYPE", "master"},
		{"CLIENT", "KILL", "USER", "nosuch"}, {"CLIENT", "KILL", "USER", "Default"}, {"CLIENT", "KILL", "USER", "default"},
		{"CLIENT", "KILL", "ID", "0", "USER", "nosuch"}, {"CLIENT", "KILL", "USER", "nosuch", "ID", "0"},
		{"CLIENT", "KILL", "USER", "default", "SKIPME", "no", "TYPE", "pubsub"},
	})
	_, addr := startServer(t, Config{})
	for name, a := range map[string]string{"evkv": addr, "redis": redisServer(t)} {
		rc := dialRaw(t, a)
		id := strings.TrimSuffix(strings.TrimPrefix(rc.do("CLIENT", "ID"), ":"), "\r\n")
		if got := strings.Count(rc.do("CLIENT", "LIST", "ID", id, "0", id), "id="+id+" "); got != 2 {
			t.Errorf("%s: CLIENT LIST ID %s 0 %s listed it %d times; want 2", name, id, id, got)
		}
	}
}

// compareStats runs script on evkv and on Redis and fails unless the
// lines of INFO stats and INFO persistence that start with one of
// prefixes are the same.
func compareStats(t *testing.T, script [][]string, prefixes ...string) {
	t.Helper()
	stats := func(addr string) string {
		rc := dialRaw(t, addr)
		for _, args := range script {
			rc.do(args...)
		}
		var out []string
		for _, line := range strings.Split(rc.do("INFO", "stats")+rc.do("INFO", "persistence"), "\r\n") {
			if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(line, p) }) {
				out = append(out, line)
			}
		}
		return strings.Join(out, " ")
	}
	_, addr := startServer(t, Config{})
	if got, want := stats(addr), stats(redisServer(t)); got != want {
		t.Errorf("INFO stats: evkv %q; Redis %q", got, want)
	}
}

// compareEvents runs script on evkv and on Redis, both with every keyspace
// notification on, and fails unless they publish the same keyspace and
// keyevent messages in the same order.
func compareEvents(t *testing.T, script [][]string) {
	t.Helper()
	compareEventsOf(t, "KEA", script)
}

// compareEventsOf is compareEvents with the classes of events in flags
// (notify-keyspace-events).
func compareEventsOf(t *testing.T, flags string, script [][]string) {
	t.Helper()
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	var events [2][]string
	for i, a := range []string{addr, raddr} {
		sub, rc := dialRaw(t, a), dialRaw(t, a)
		rc.do("CONFIG", "SET", "notify-keyspace-events", flags)
		sub.do("PSUBSCRIBE", "__key*@0__:*")
		for _, args := range script {
			rc.do(args...)
		}
		events[i] = eventsUntilPong(t, sub)
	}
	if len(events[1]) == 0 {
		t.Error("Redis published no events")
	}
	if !slices.Equal(events[0], events[1]) {
		t.Errorf("events differ:\nevkv  %q\nRedis %q", events[0], events[1])
	}
}

// eventsUntilPong sends PING on sub, a RESP2 client subscribed to
// patterns of keyspace events, and returns the channel and the message of
// each event it reads before the PING's reply.
func eventsUntilPong(t *testing.T, sub *rawConn) []string {
	t.Helper()
	sub.send("PING")
	var events []string
	for {
		v, _, err := resp.Parse([]byte(sub.read()))
		if err != nil || len(v.Elems) < 2 {
			t.Fatalf("bad message %v, %v", v, err)
		}
		if string(v.Elems[0].Str) == "pong" {
			return events
		}
		events = append(events, string(v.Elems[2].Str)+" "+string(v.Elems[3].Str))
	}
}

// compareCommandInfo compares what COMMAND INFO says of each command
// named, up to its key specs, and COMMAND DOCS's summary, version and
// group, with Redis's.
func compareCommandInfo(t *testing.T, names ...string) {
	t.Helper()
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	for _, name := range names {
		var got, want [2]string
		for i, rc := range []*rawConn{ours, theirs} {
			info, _, err := resp.Parse([]byte(rc.do("COMMAND", "INFO", name)))
			if err != nil || len(info.Elems) != 1 || len(info.Elems[0].Elems) < 7 {
				t.Fatalf("COMMAND INFO %s: %v, %v", name, info, err)
			}
			docs, _, err := resp.Parse([]byte(rc.do("COMMAND", "DOCS", name)))
			if err != nil || len(docs.Elems) != 2 {
				t.Fatalf("COMMAND DOCS %s: %v, %v", name, docs, err)
			}
			fields := docs.Elems[1].Elems
			var doc []string
			for j := 0; j+1 < len(fields); j += 2 {
				if k := string(fields[j].Str); k == "summary" || k == "since" || k == "group" {
					doc = append(doc, k+"="+string(fields[j+1].Str))
				}
			}
			v := [2]string{fmt.Sprint(info.Elems[0].Elems[:7]), strings.Join(doc, " ")}
			if i == 0 {
				got = v
			} else {
				want = v
			}
		}
		if got != want {
			t.Errorf("COMMAND INFO and DOCS %s: evkv %q; Redis %q", name, got, want)
		}
	}
}

// watchCase is a change another client makes while one WATCHes a key,
// and whether it touches the key.
type watchCase struct {
	name    string
	change  func() error
	touches bool
}

// checkWatch runs each case's change between c's WATCH of key and its
// EXEC of a transaction, and fails unless the EXEC fails after the
// changes that touch key, and only those.
func checkWatch(t *testing.T, c *redis.Client, key string, cases []watchCase) {
	t.Helper()
	ctx := context.Background()
	for _, tc := range cases {
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			if err := tc.change(); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "w", "1", 0)
				return nil
			})
			return err
		}, key)
		if tc.touches != errors.Is(err, redis.TxFailedErr) {
			t.Errorf("EXEC after %s = %v; want failure %v", tc.name, err, tc.touches)
		}
	}
}

// replayAndRewrite starts a server with cfg, whose log an earlier one
// wrote, and calls check with a client of it; then rewrites the log and
// calls check again with a client of a server started from the
// rewritten log.
func replayAndRewrite(t *testing.T, cfg Config, check func(when string, c *redis.Client)) {
	t.Helper()
	ctx := context.Background()
	s, addr := startServer(t, cfg)
	c := goRedis(t, addr)
	check("after replay", c)
	if err := c.BgRewriteAOF(ctx).Err(); err != nil {
		t.Fatalf("BGREWRITEAOF: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_rewrite_in_progress:0"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the rewrite did not finish")
		}
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	_, addr = startServer(t, cfg)
	check("after the rewrite", goRedis(t, addr))
}

// CLIENT LIST and CLIENT INFO give Redis 7.0's fields in its order (evkv
// adds 7.2's lib-name and lib-ver at the end), with the figures a
// client's line is read for: the fd, the command's arguments, a
// transaction's queued ones, the query buffer's room and the events.
func TestCompatClientListFields(t *testing.T) {
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	fields := func(line string) (names []string, vals map[string]string) {
		vals = map[string]string{}
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			names = append(names, k)
			vals[k] = v
		}
		return names, vals
	}
	for _, cmd := range [][]string{{"CLIENT", "LIST"}, {"CLIENT", "INFO"}} {
		var got, want []string
		for i, rc := range []*rawConn{ours, theirs} {
			rc.do("MULTI")
			rc.do("SET", "k", "value")
			rc.do("EXEC")
			reply := rc.do(cmd...)
			_, line, _ := strings.Cut(reply, "\r\n")
			names, vals := fields(line)
			if i == 0 {
				got = names
				if vals["argv-mem"] != strconv.Itoa(len(cmd[0])+len(cmd[1])) || vals["multi-mem"] != "0" || vals["events"] != "r" || vals["fd"] == "-1" || vals["qbuf"] == "0" {
					t.Errorf("%s: evkv's line %q", cmd, line)
				}
			} else {
				want = names
			}
		}
		if i := slices.Index(got, "lib-name"); i >= 0 {
			got = got[:i]
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s fields: evkv %v; Redis %v", cmd, got, want)
		}
	}
	id := strings.Trim(ours.do("CLIENT", "ID"), ":\r\n")
	ours.do("MULTI")
	ours.do("SET", "k", "value")
	_, line, _ := strings.Cut(dialRaw(t, addr).do("CLIENT", "LIST", "ID", id), "\r\n")
	if _, vals := fields(line); vals["multi-mem"] == "0" || vals["multi"] != "1" || vals["argv-mem"] != "0" {
		t.Errorf("a client in MULTI with a command queued, seen by another: %q; want multi-mem counted, no argv-mem", line)
	}
}

// TestCompatShutdownArguments: SHUTDOWN's illegal combinations are
// syntax errors, as in Redis, also with ABORT, whose reply comes once
// every argument is read; none of these shuts down.
func TestCompatShutdownArguments(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"SHUTDOWN", "NOSAVE", "SAVE"}, {"SHUTDOWN", "SAVE", "NOSAVE"}, {"SHUTDOWN", "ABORT", "NOW"},
		{"SHUTDOWN", "FORCE", "ABORT"}, {"SHUTDOWN", "ABORT", "FOO"}, {"SHUTDOWN", "ABORT", "ABORT"},
		{"SHUTDOWN", "ABORT"}, {"SHUTDOWN", "FOO"}, {"PING"},
	})
}
