package kv

import (
	"context"
	"errors"
	"fmt"
	"github.com/redis/go-redis/v9"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// infoInt reads an integer field of INFO's section.
func infoInt(t *testing.T, info, field string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s:\n%s", field, info)
	return 0
}

// TestAutoRewrite overwrites a few keys until the log has grown past
// auto-aof-rewrite-min-size and by auto-aof-rewrite-percentage of its size
// at start: the cron rewrites it, smaller, and a restart from it has the
// keyspace. With the percentage 0 the log only grows.
func TestAutoRewrite(t *testing.T) {
	ctx := context.Background()
	for _, perc := range []string{"100", "0"} {
		t.Run("percentage "+perc, func(t *testing.T) {
			cfg := Config{AppendOnly: true, Dir: t.TempDir(), Settings: map[string]string{
				"auto-aof-rewrite-min-size":   "64kb",
				"auto-aof-rewrite-percentage": perc,
			}}
			s1, addr := startServer(t, cfg)
			c := goRedis(t, addr)
			value := strings.Repeat("v", 100)
			var peak int64
			deadline := time.Now().Add(10 * time.Second)
			for i := 0; time.Now().Before(deadline); i++ {
				if err := c.Set(ctx, fmt.Sprint("k", i%50), fmt.Sprint(i, value), 0).Err(); err != nil {
					t.Fatal(err)
				}
				if i%100 != 0 {
					continue
				}
				info := c.Info(ctx, "persistence").Val()
				size := infoInt(t, info, "aof_current_size")
				peak = max(peak, size)
				if perc == "0" && size > 512<<10 {
					if n := infoInt(t, info, "aof_rewrites"); n != 0 {
						t.Fatalf("%d rewrites with auto-aof-rewrite-percentage 0", n)
					}
					return
				}
				if infoInt(t, info, "aof_rewrites") > 0 {
					break
				}
			}
			info := c.Info(ctx, "persistence").Val()
			if n := infoInt(t, info, "aof_rewrites"); n < 1 {
				t.Fatalf("no rewrite after the log grew to %d bytes:\n%s", peak, info)
			}
			if peak < 64<<10 {
				t.Errorf("rewritten at %d bytes, under auto-aof-rewrite-min-size", peak)
			}
			if base := infoInt(t, info, "aof_base_size"); base <= 0 || base > 16<<10 {
				t.Errorf("aof_base_size %d after rewriting 50 keys of about 100 bytes", base)
			}
			want := snapshot(t, c)
			c.Close()
			s1.Shutdown(ctx)
			st, err := os.Stat(filepath.Join(cfg.Dir, "appendonly.aof"))
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() >= peak {
				t.Errorf("log after the rewrite: %d bytes; want under %d", st.Size(), peak)
			}
			replayedAs(t, cfg, want)
		})
	}
}

// TestAutoRewriteLimited: after three failed rewrites in a row the
// automatic ones wait a minute, then twice as long each time, up to an
// hour, as Redis's do; a success lifts the limit.
func TestAutoRewriteLimited(t *testing.T) {
	s, _ := startServer(t, Config{})
	a := &aof{s: s}
	now := time.Now()
	for range 2 {
		a.failed(os.ErrPermission)
		if a.limited(now) {
			t.Fatalf("limited after %d failures", a.failures)
		}
	}
	delay := time.Minute
	for range 8 {
		a.failed(os.ErrPermission)
		if !a.limited(now) {
			t.Fatalf("not limited after %d failures", a.failures)
		}
		if !a.limited(now.Add(delay - time.Second)) {
			t.Fatalf("limit of %v lifted early after %d failures", delay, a.failures)
		}
		now = now.Add(delay)
		if a.limited(now) {
			t.Fatalf("limit of %v not lifted after it, after %d failures", delay, a.failures)
		}
		delay = min(2*delay, time.Hour)
	}
	a.failures = 0 // a rewrite succeeded
	a.failed(os.ErrPermission)
	if a.limited(now) {
		t.Fatal("limited after one failure that followed a success")
	}
}

// TestCompatAutoRewriteConfig: one parameter a CONFIG GET, since the order
// of Redis's matches for a pattern changes from one run to the next.
func TestCompatAutoRewriteConfig(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"CONFIG", "GET", "auto-aof-rewrite-percentage"}, {"CONFIG", "GET", "auto-aof-rewrite-min-size"},
		{"CONFIG", "SET", "auto-aof-rewrite-percentage", "-1"}, {"CONFIG", "SET", "auto-aof-rewrite-percentage", "x"},
		{"CONFIG", "SET", "auto-aof-rewrite-percentage", "2147483648"}, {"CONFIG", "SET", "auto-aof-rewrite-percentage", "0"},
		{"CONFIG", "SET", "auto-aof-rewrite-min-size", "1mb"}, {"CONFIG", "GET", "auto-aof-rewrite-min-size"},
		{"CONFIG", "SET", "auto-aof-rewrite-min-size", "2k"}, {"CONFIG", "GET", "auto-aof-rewrite-min-size"},
		{"CONFIG", "SET", "auto-aof-rewrite-min-size", "-1"}, {"CONFIG", "SET", "auto-aof-rewrite-min-size", "1xb"},
		{"CONFIG", "SET", "auto-aof-rewrite-min-size", "99999999999gb"}, {"CONFIG", "SET", "auto-aof-rewrite-min-size", "9223372036854775808"},
		{"CONFIG", "SET", "auto-aof-rewrite-min-size", "99999999999999999999"}, {"CONFIG", "SET", "auto-aof-rewrite-min-size", "+1"},
		{"CONFIG", "SET", "auto-aof-rewrite-min-size", "-0"}, {"CONFIG", "SET", "auto-aof-rewrite-min-size", "kb"},
		{"CONFIG", "GET", "auto-aof-rewrite-min-size"}, {"CONFIG", "SET", "auto-aof-rewrite-min-size", ""},
		{"CONFIG", "GET", "auto-aof-rewrite-min-size"}, {"CONFIG", "GET", "auto-aof-rewrite-percentage"}, {"CONFIG", "GET", "auto-aof-rewrite-min-size"},
	})
}

// TestCompatRedisParameters: the parameters evkv takes so that a Redis
// configuration file starts it (most with no effect) have Redis 7.0's
// defaults, checks and immutability.
func TestCompatRedisParameters(t *testing.T) {
	var script [][]string
	names := []string{"tcp-keepalive", "protected-mode", "aof-load-truncated", "client-output-buffer-limit", "active-expire-effort"}
	for _, p := range inertParams {
		names = append(names, p.name)
	}
	for _, name := range names {
		script = append(script, []string{"CONFIG", "GET", name})
	}
	script = append(script, [][]string{
		{"CONFIG", "SET", "active-expire-effort", "0"}, {"CONFIG", "SET", "active-expire-effort", "11"},
		{"CONFIG", "SET", "active-expire-effort", "7"}, {"CONFIG", "GET", "active-expire-effort"}, {"CONFIG", "SET", "active-expire-effort", "x"},
		{"CONFIG", "SET", "tcp-keepalive", "-1"}, {"CONFIG", "SET", "tcp-keepalive", "60"}, {"CONFIG", "GET", "tcp-keepalive"},
		{"CONFIG", "SET", "aof-load-truncated", "2"}, {"CONFIG", "SET", "aof-load-truncated", "no"}, {"CONFIG", "GET", "aof-load-truncated"},
		{"CONFIG", "SET", "rdbcompression", "maybe"}, {"CONFIG", "SET", "rdbcompression", "no"}, {"CONFIG", "GET", "rdbcompression"},
		{"CONFIG", "SET", "repl-diskless-load", "sometimes"}, {"CONFIG", "SET", "repl-diskless-load", "SWAPDB"},
		{"CONFIG", "SET", "replica-priority", "-1"}, {"CONFIG", "SET", "replica-priority", "x"},
		{"CONFIG", "SET", "oom-score-adj-values", "1 2"}, {"CONFIG", "SET", "oom-score-adj-values", "0 200 3000"},
		{"CONFIG", "SET", "oom-score-adj-values", "0 100 800"}, {"CONFIG", "GET", "oom-score-adj-values"},
		{"CONFIG", "SET", "hll-sparse-max-bytes", "1kb"}, {"CONFIG", "GET", "hll-sparse-max-bytes"},
		{"CONFIG", "SET", "daemonize", "no"}, {"CONFIG", "SET", "pidfile", "/tmp/x.pid"}, {"CONFIG", "SET", "appenddirname", "d"},
		{"CONFIG", "SET", "tcp-backlog", "10"}, {"CONFIG", "SET", "supervised", "no"},
		{"CONFIG", "SET", "dbfilename", "other.rdb"}, {"CONFIG", "GET", "dbfilename"},
		{"CONFIG", "SET", "DIR", "/tmp"}, {"CONFIG", "SET", "Daemonize", "no"},
		{"CONFIG", "SET", "hash-max-listpack-value", "1kb"}, {"CONFIG", "GET", "hash-max-listpack-value"},
		{"CONFIG", "SET", "oom-score-adj", "relative"}, {"CONFIG", "GET", "oom-score-adj"},
		{"CONFIG", "SET", "hll-sparse-max-bytes", "9223372036854775807"}, {"CONFIG", "SET", "hll-sparse-max-bytes", "9223372036854775808"},
		{"CONFIG", "SET", "client-output-buffer-limit", "yes"}, {"CONFIG", "SET", "client-output-buffer-limit", "bogus 1 2 3"},
		{"CONFIG", "SET", "client-output-buffer-limit", "normal 0 0"}, {"CONFIG", "SET", "client-output-buffer-limit", "normal 1x 0 0"},
		{"CONFIG", "SET", "client-output-buffer-limit", "normal 1 2 x"}, {"CONFIG", "SET", "client-output-buffer-limit", "normal -1 0 0"},
		{"CONFIG", "SET", "client-output-buffer-limit", "master 1 2 3"}, {"CONFIG", "GET", "client-output-buffer-limit"},
		{"CONFIG", "SET", "client-output-buffer-limit", "replica 1mb 2 3 normal 5 6 7"}, {"CONFIG", "GET", "client-output-buffer-limit"},
		// Old names, and names as typed.
		{"CONFIG", "GET", "MAXMEMORY"}, {"CONFIG", "GET", "Slave-Read-Only"},
		{"CONFIG", "SET", "slave-read-only", "no"}, {"CONFIG", "GET", "replica-read-only"},
		{"CONFIG", "SET", "Slave-Read-Only", "x"}, {"CONFIG", "SET", "hash-max-ziplist-value", "2kb"},
		{"CONFIG", "GET", "hash-max-listpack-value"}, {"CONFIG", "GET", "hash-max-ziplist-value"},
		{"CONFIG", "SET", "lua-time-limit", "100", "busy-reply-threshold", "200"}, {"CONFIG", "GET", "lua-time-limit"},
		{"CONFIG", "SET", "repl-backlog-size", "0"}, {"CONFIG", "SET", "repl-ping-slave-period", "0"},
		{"CONFIG", "SET", "repl-backlog-size", "1k"}, {"CONFIG", "GET", "repl-backlog-size"},
		{"CONFIG", "GET", "MAXMEMORY", "maxmemory"},
		{"CONFIG", "SET", "min-slaves-to-write", "3"}, {"CONFIG", "GET", "min-replicas-to-write"},
		// A master's replicaof, immutable in Redis too.
		{"CONFIG", "GET", "replicaof"}, {"CONFIG", "GET", "SLAVEOF"},
		{"CONFIG", "SET", "replicaof", "no one"}, {"CONFIG", "SET", "slaveof", ""},
	}...)
	compareWithRedis(t, script)
}

// waitLogOn waits for INFO's aof_enabled:1: the log's first rewrite done.
func waitLogOn(t *testing.T, rc *rawConn) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(rc.do("INFO", "persistence"), "aof_enabled:1\r\n"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the log was not turned on")
		}
	}
}

// waitRewritten waits for INFO's aof_rewrites to reach n, with the last
// rewrite's status ok.
func waitRewritten(t *testing.T, rc *rawConn, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info := rc.do("INFO", "persistence")
		if strings.Contains(info, fmt.Sprintf("aof_rewrites:%d\r\n", n)) && strings.Contains(info, "aof_rewrite_in_progress:0") {
			if !strings.Contains(info, "aof_last_bgrewrite_status:ok") {
				t.Fatalf("rewrite failed:\n%s", info)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no rewrite:\n%s", info)
		}
	}
}

// TestRewriteAfterFailedWrite: a write that failed leaves in the buffer
// what the file did not take, which may begin inside a command; the
// rewrite's new file holds all of it, so the failure and the leftover end
// with the old file, and the new file replays.
func TestRewriteAfterFailedWrite(t *testing.T) {
	t.Parallel()
	cfg := Config{AppendOnly: true, Dir: t.TempDir()}
	s, addr := startServer(t, cfg)
	rc := dialRaw(t, addr)
	rc.do("SET", "a", "1")
	onLoop(s, func() {
		// The file turns unwritable, as a full disk would make it, after
		// taking the first byte of a command.
		a := s.aof
		ro, err := os.Open(a.path)
		if err != nil {
			t.Error(err)
			return
		}
		replaceLogFile(s, ro)
		a.buf = append(a.buf, "*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n"...)
		a.flush()
		if a.err == nil {
			t.Error("a write to a read-only file did not fail")
		}
	})
	rc.do("BGREWRITEAOF")
	waitRewritten(t, rc, 1)
	if info := rc.do("INFO", "persistence"); !strings.Contains(info, "aof_last_write_status:ok") {
		t.Errorf("after the rewrite:\n%s", info)
	}
	rc.do("SET", "c", "3")
	s.Shutdown(context.Background())
	replayedAs(t, cfg, map[string]string{"a": "1", "c": "3"})
}

// TestRewriteWithLogOff: BGREWRITEAOF with appendonly no writes the
// keyspace to the log's file all the same, as Redis 7.0's does ("+Background
// append only file rewriting started", then aof_rewrites:1, aof_enabled:0,
// CONFIG GET appendonly no): the log stays off, and the file replays to
// the keyspace of the rewrite's end. CONFIG SET appendonly yes while such
// a rewrite runs makes it the log's first. CONFIG RESETSTAT zeroes
// aof_rewrites, as in Redis. A rewrite that cannot start (a missing
// directory) replies Redis's words, the reason going to the log.
func TestRewriteWithLogOff(t *testing.T) {
	t.Parallel()
	cfg := Config{Dir: t.TempDir()}
	s, addr := startServer(t, cfg)
	rc := dialRaw(t, addr)
	for name, c := range map[string]*rawConn{"evkv": rc, "redis": dialRaw(t, redisServer(t))} {
		c.do("SET", "a", "1")
		if got := c.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
			t.Fatalf("%s: BGREWRITEAOF with the log off = %q", name, got)
		}
		waitRewritten(t, c, 1)
		info := c.do("INFO", "persistence")
		if !strings.Contains(info, "aof_enabled:0\r\n") || strings.Contains(info, "aof_current_size") {
			t.Errorf("%s: INFO after a rewrite with the log off:\n%s", name, info)
		}
		if got := c.do("CONFIG", "GET", "appendonly"); !strings.HasSuffix(got, "$2\r\nno\r\n") {
			t.Errorf("%s: CONFIG GET appendonly = %q; want no", name, got)
		}
	}
	rc.do("SET", "b", "2") // not logged
	replayedAs(t, Config{Dir: cfg.Dir, AppendOnly: true}, map[string]string{"a": "1"})

	rc.doMany(20000, func(i int) []string { return []string{"SET", fmt.Sprint("k", i), "v"} })
	// The log turned on while the rewrite runs.
	rc.sendTogether([]string{"BGREWRITEAOF"}, []string{"CONFIG", "SET", "appendonly", "yes"}, []string{"SET", "c", "3"})
	for _, want := range []string{"+Background append only file rewriting started\r\n", "+OK\r\n", "+OK\r\n"} {
		if got := rc.read(); got != want {
			t.Fatalf("reply %q; want %q", got, want)
		}
	}
	waitLogOn(t, rc)
	rc.do("SET", "d", "4")
	rc.do("CONFIG", "RESETSTAT")
	if info := rc.do("INFO", "persistence"); !strings.Contains(info, "aof_rewrites:0\r\n") {
		t.Errorf("INFO after CONFIG RESETSTAT:\n%s", info)
	}
	s.Shutdown(context.Background())
	_, addr2 := startServer(t, Config{Dir: cfg.Dir, AppendOnly: true})
	rc2 := dialRaw(t, addr2)
	for _, tc := range [][2]string{{"DBSIZE", ":20004\r\n"}, {"GET a", "$1\r\n1\r\n"}, {"GET b", "$1\r\n2\r\n"}, {"GET c", "$1\r\n3\r\n"}, {"GET d", "$1\r\n4\r\n"}} {
		if got := rc2.do(strings.Fields(tc[0])...); got != tc[1] {
			t.Errorf("%s after replay = %q; want %q", tc[0], got, tc[1])
		}
	}

	_, addr3 := startServer(t, Config{Dir: filepath.Join(cfg.Dir, "missing")})
	want := "-ERR Can't execute an AOF background rewriting. Please check the server logs for more information.\r\n"
	if got := dialRaw(t, addr3).do("BGREWRITEAOF"); got != want {
		t.Errorf("BGREWRITEAOF into a missing directory = %q; want %q", got, want)
	}
}

// TestShutdownDuringRewrite: SHUTDOWN while the log's first rewrite is
// under way (CONFIG SET appendonly yes) is refused, as Redis 7.0 refuses
// it ("Writing initial AOF, can't exit."), unless FORCE; while a rewrite
// BGREWRITEAOF started with the log off runs, it shuts down, as Redis's
// kills the rewrite and exits.
func TestShutdownDuringRewrite(t *testing.T) {
	for _, tc := range []struct {
		start    []string
		shutdown []string
		want     string // the SHUTDOWN's reply; "" for none, the server shutting down
	}{
		{[]string{"CONFIG", "SET", "appendonly", "yes"}, []string{"SHUTDOWN"}, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n"},
		{[]string{"CONFIG", "SET", "appendonly", "yes"}, []string{"SHUTDOWN", "FORCE"}, ""},
		{[]string{"BGREWRITEAOF"}, []string{"SHUTDOWN"}, ""},
	} {
		s, addr := startServer(t, Config{Dir: t.TempDir()})
		rc := dialRaw(t, addr)
		rc.do("SET", "a", "1")
		rc.sendTogether(tc.start, tc.shutdown) // the rewrite has not ended at the SHUTDOWN
		rc.read()
		if tc.want != "" {
			if got := rc.read(); got != tc.want {
				t.Errorf("%q after %q = %q; want %q", tc.shutdown, tc.start, got, tc.want)
			}
			continue
		}
		if b, err := io.ReadAll(rc.c); len(b) > 0 || err != nil {
			t.Errorf("%q after %q: read %q, %v; want the connection closed", tc.shutdown, tc.start, b, err)
		}
		select {
		case <-s.Done():
		case <-time.After(5 * time.Second):
			t.Errorf("%q after %q: Done not closed", tc.shutdown, tc.start)
		}
	}
}

// TestSwapDBDuringRewrite: SWAPDB gives a running rewrite up for one that
// starts over after it, not counted as a failure; the file it makes
// replays to the swapped databases.
func TestSwapDBDuringRewrite(t *testing.T) {
	cfg := Config{AppendOnly: true, Dir: t.TempDir()}
	s, addr := startServer(t, cfg)
	c := goRedis(t, addr)
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := range 50000 {
		pipe.Set(ctx, fmt.Sprint("k", i), i, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, addr)
	rc.do("SELECT", "1")
	rc.do("SET", "only1", "x")
	rc.sendTogether([]string{"BGREWRITEAOF"}, []string{"SWAPDB", "0", "1"}) // while it runs
	for _, want := range []string{"+Background append only file rewriting started\r\n", "+OK\r\n"} {
		if got := rc.read(); got != want {
			t.Fatalf("reply %q; want %q", got, want)
		}
	}
	waitRewritten(t, rc, 1)
	if info := rc.do("INFO", "persistence"); !strings.Contains(info, "aof_rewrites:1\r\n") {
		t.Errorf("after SWAPDB during a rewrite:\n%s", info)
	}
	s.Shutdown(ctx)
	replayedAs(t, cfg, map[string]string{"only1": "x"})
	_, addr2 := startServer(t, cfg)
	if n := goRedis(t, addr2, func(o *redis.Options) { o.DB = 1 }).DBSize(ctx).Val(); n != 50000 {
		t.Errorf("db 1 after replay: %d keys; want 50000", n)
	}
}

// onLoop runs f on s's loop and waits for it.
func onLoop(s *Server, f func()) {
	done := make(chan struct{})
	s.ev.Submit(0, func() { defer close(done); f() })
	<-done
}

// replaceLogFile makes f the log's file, closing the one it had. It must
// run on the loop.
func replaceLogFile(s *Server, f *os.File) {
	a := s.aof
	a.mu.Lock()
	a.f.Close()
	a.f = f
	a.mu.Unlock()
}

// failLogWrites makes every write to the log fail with ENOSPC, as a full
// disk does (/dev/full), until the test ends, when the log gets its file
// back for Shutdown to write what is pending.
func failLogWrites(t *testing.T, s *Server) {
	t.Helper()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	onLoop(s, func() { replaceLogFile(s, full) })
	t.Cleanup(func() { // before startServer's Shutdown
		onLoop(s, func() {
			if s.aof == nil || s.aof.f == nil {
				return
			}
			f, err := os.OpenFile(s.aof.path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Error(err)
				return
			}
			replaceLogFile(s, f)
		})
	})
}

// TestMisconfAfterFailedWrite: once a write to the log failed (a full
// disk), Redis 7.0's processCommand refuses the write commands, PING, and
// an EXEC with a write queued, with writeCommandsGetDiskErrorMessage's
// "MISCONF Errors writing to the AOF file: " and strerror's text of the
// error, no path: on a full tmpfs, SET and PING both replied
// "-MISCONF Errors writing to the AOF file: No space left on device".
// The write that failed was acknowledged, as with appendfsync everysec in
// Redis; reads and a transaction of reads are served.
func TestMisconfAfterFailedWrite(t *testing.T) {
	s, addr := startServer(t, Config{AppendOnly: true, Dir: t.TempDir()})
	rc, queued := dialRaw(t, addr), dialRaw(t, addr)
	rc.do("SET", "a", "1")
	queued.do("MULTI")
	queued.do("SET", "q", "1")
	failLogWrites(t, s)
	if got := rc.do("SET", "b", "2"); got != "+OK\r\n" {
		t.Errorf("SET whose log write fails = %q; want +OK", got)
	}
	const misconf = "MISCONF Errors writing to the AOF file: No space left on device"
	for _, tc := range []struct {
		rc   *rawConn
		args []string
		want string
	}{
		{rc, []string{"SET", "c", "3"}, "-" + misconf + "\r\n"},
		{rc, []string{"PING"}, "-" + misconf + "\r\n"},
		{rc, []string{"GET", "b"}, "$1\r\n2\r\n"},
		{queued, []string{"EXEC"}, "-EXECABORT Transaction discarded because of: " + misconf + "\r\n"},
		{rc, []string{"MULTI"}, "+OK\r\n"},
		{rc, []string{"GET", "a"}, "+QUEUED\r\n"},
		{rc, []string{"EXEC"}, "*1\r\n$1\r\n1\r\n"},
	} {
		if got := tc.rc.do(tc.args...); got != tc.want {
			t.Errorf("%q after a failed log write = %q; want %q", tc.args, got, tc.want)
		}
	}
}

// TestFailedWriteAlwaysStops: with appendfsync always, a change whose
// write to the log fails is never acknowledged. Redis 7.0's
// flushAppendOnlyFile logs "Can't recover from AOF write error when the
// AOF fsync policy is 'always'. Exiting..." and exits before the reply
// leaves: on a full tmpfs, the redis-cli whose SET hit the full disk read
// "Error: Server closed the connection". The server stops likewise: every
// client is closed without the iteration's replies, no more are accepted,
// and Done and Err tell the program, which exits (cmd/evkv).
func TestFailedWriteAlwaysStops(t *testing.T) {
	s, addr := startServer(t, Config{AppendOnly: true, AppendFsync: "always", Dir: t.TempDir()})
	rc, other := dialRaw(t, addr), dialRaw(t, addr)
	rc.do("SET", "a", "1")
	other.do("SUBSCRIBE", "ch")
	failLogWrites(t, s)
	// One write: the server closes the connection after the SET, and a
	// write after that could fail.
	rc.sendTogether([]string{"SET", "b", "2"}, []string{"PUBLISH", "ch", "m"})
	for name, c := range map[string]*rawConn{"the writer": rc, "a subscriber": other} {
		c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.r.Read(make([]byte, 64)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s read %d bytes, %v after a failed log write with appendfsync always; want the connection closed", name, n, err)
		}
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed")
	}
	if err := s.Err(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Err = %v; want ENOSPC", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("a client was accepted after the server stopped")
	}
}

func TestStrerror(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "write", Path: "/data/appendonly.aof", Err: syscall.ENOSPC}, "No space left on device"},
		{&fs.PathError{Op: "write", Path: "/data/appendonly.aof", Err: syscall.EIO}, "Input/output error"},
		{syscall.EDQUOT, "Disk quota exceeded"},
		{io.ErrShortWrite, "No space left on device"},
		{&fs.PathError{Op: "write", Path: "/data/appendonly.aof", Err: fs.ErrClosed}, "File already closed"},
	} {
		if got := strerror(tc.err); got != tc.want {
			t.Errorf("strerror(%v) = %q; want %q", tc.err, got, tc.want)
		}
	}
}
