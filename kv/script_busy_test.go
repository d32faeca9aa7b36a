package kv

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testcert"
	"github.com/evloop/evloop/internal/testpeer"
)

// waitBusy sends PING on c until the script started on another
// connection is busy: PING is answered before the script runs, and waits
// till it is busy after.
func waitBusy(t *testing.T, c *rawConn) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if got := c.do("PING"); got != "+PONG\r\n" {
			return got
		}
	}
	t.Fatal("the script did not start")
	return ""
}

// startBusyServer is startServer, for a test that leaves scripts running
// if it fails: they are killed, or the server stopped, before the server
// is shut down, which waits for them.
func startBusyServer(t *testing.T, cfg Config) (*Server, string) {
	s, addr := startServer(t, cfg)
	t.Cleanup(func() {
		select {
		case <-s.Done():
			return // stopped by the test
		default:
		}
		c := dialRaw(t, addr)
		if strings.HasPrefix(c.do("SCRIPT", "KILL"), "-UNKILLABLE") {
			c.send("SHUTDOWN", "NOSAVE")
			<-s.Done()
		}
	})
	return s, addr
}

// busyControl dials addr and sets busy-reply-threshold to ms there.
func busyControl(t *testing.T, addr, ms string) *rawConn {
	c := dialRaw(t, addr)
	c.do("CONFIG", "SET", "busy-reply-threshold", ms)
	return c
}

// timedLoop is Lua that runs for us microseconds by the server's clock.
func timedLoop(us int) string {
	return "local function now() local t = redis.call('time'); return t[1] * 1000000 + t[2] end\n" +
		"local start = now()\nwhile now() - start < " + strconv.Itoa(us) + " do end\n"
}

// compareBusyWithRedis runs run against evkv and against Redis and
// compares what each returned.
func compareBusyWithRedis(t *testing.T, run func(addr string) []string) {
	_, addr := startBusyServer(t, Config{})
	compareTranscripts(t, "", run(addr), run(redisServer(t)))
}

// shutdownNosave sends SHUTDOWN NOSAVE on c and waits for s to stop.
func shutdownNosave(t *testing.T, s *Server, c *rawConn) {
	c.send("SHUTDOWN", "NOSAVE")
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SHUTDOWN NOSAVE did not stop the server")
	}
}

// nosaveServer starts a busy-script server that logs every write, with
// "before" set, and returns it, its Config, a control connection (a 50
// ms threshold) and a connection for the script's caller.
func nosaveServer(t *testing.T) (*Server, Config, *rawConn, *rawConn) {
	cfg := Config{AppendOnly: true, Dir: t.TempDir()}
	s, addr := startBusyServer(t, cfg)
	ctl := busyControl(t, addr, "50")
	ctl.do("SET", "before", "1")
	return s, cfg, ctl, dialRaw(t, addr)
}

// checkRestarted starts a server of cfg in stopped s's place and checks
// the replies to GET of each key in want.
func checkRestarted(t *testing.T, s *Server, cfg Config, want map[string]string) {
	t.Helper()
	c := restartRaw(t, s, cfg)
	for key, w := range want {
		if got := c.do("GET", key); got != w {
			t.Errorf("after the restart, GET %s = %q; want %q", key, got, w)
		}
	}
}

// busyTranscript starts a script that loops for ever on one connection
// of addr's, with a PING sent after it in the same write, and runs what
// the others may do while it is busy, then SCRIPT KILL, and returns the
// replies: the others', the script's, the PING's, and the server's after.
func busyTranscript(t *testing.T, addr string) []string {
	ctl := busyControl(t, addr, "100")
	caller := dialRaw(t, addr)
	caller.sendTogether([]string{"EVAL", "local n = 0\nwhile true do\n  n = n + 1\nend", "0"}, []string{"PING"})
	out := []string{waitBusy(t, ctl)}
	for _, cmd := range [][]string{
		{"GET", "x"}, {"SET", "x", "1"}, {"SHUTDOWN"}, {"SHUTDOWN", "SAVE"}, {"SCRIPT", "FLUSH"},
		{"EVAL", "return 1", "0"}, {"CLIENT", "ID"}, {"NOSUCH"}, {"GET"},
		{"MULTI"}, {"SET", "x", "1"}, {"EXEC"}, {"WATCH", "x"}, {"UNWATCH"}, {"MULTI"}, {"DISCARD"},
		{"AUTH", "nopass"},
	} {
		out = append(out, ctl.do(cmd...))
	}
	late := dialRaw(t, addr) // accepted while the script runs
	out = append(out, late.do("PING"), late.do("HELLO", "2")[:1], ctl.do("SCRIPT", "KILL"))
	out = append(out, caller.read(), caller.read())
	out = append(out, ctl.do("SCRIPT", "KILL"), ctl.do("GET", "x"), late.do("PING"), ctl.do("INFO", "errorstats"))
	return out
}

// TestCompatScriptBusy: a script past busy-reply-threshold leaves the
// server serving the others, with BUSY but for the commands Redis allows
// then, and SCRIPT KILL stops it, its caller's next command served after.
func TestCompatScriptBusy(t *testing.T) {
	compareBusyWithRedis(t, func(addr string) []string { return busyTranscript(t, addr) })
}

// killBusy runs src on a connection of addr's until it is busy, kills it
// with SCRIPT KILL, and returns SCRIPT KILL's reply and the script's.
func killBusy(t *testing.T, addr, src string) (kill, reply string) {
	ctl := busyControl(t, addr, "50")
	caller := dialRaw(t, addr)
	caller.send("EVAL", src, "0")
	if got := waitBusy(t, ctl); !strings.HasPrefix(got, "-BUSY") {
		t.Fatalf("%q: PING while it runs = %q", src, got)
	}
	kill = ctl.do("SCRIPT", "KILL")
	return kill, caller.read()
}

// TestCompatScriptKillEscapes: a script cannot keep running once killed,
// whether it catches the error with pcall or loops in a coroutine. Where
// a pcall caught it, the line the error names is the next instruction's
// here, and the next line's in Redis, whose hook then runs at every line:
// gopher-lua tells its context nothing of lines.
func TestCompatScriptKillEscapes(t *testing.T) {
	_, addr := startBusyServer(t, Config{})
	redis := redisServer(t)
	for _, src := range []string{
		"while true do end",
		"while true do\n  pcall(function() while true do end end)\nend",
		"local ok, err\nrepeat\n  ok, err = pcall(function() while true do end end)\nuntil false",
		"local co = coroutine.wrap(function()\n  while true do end\nend)\nco()",
		"local co = coroutine.create(function()\n  while true do end\nend)\nlocal ok, err = coroutine.resume(co)\nwhile true do end",
		"#!lua flags=no-writes\nwhile true do end",
	} {
		kill, reply := killBusy(t, addr, src)
		wantKill, wantReply := killBusy(t, redis, src)
		if strings.Contains(src, "pcall") {
			reply, _, _ = strings.Cut(reply, "on @user_script:")
			wantReply, _, _ = strings.Cut(wantReply, "on @user_script:")
		}
		if kill != wantKill || reply != wantReply {
			t.Errorf("%q: evkv %q, %q; Redis %q, %q", src, kill, reply, wantKill, wantReply)
		}
	}
}

// TestCompatScriptBusyBlocked: the clients a busy script's writes wake
// are served when it ends, not while the others are served from inside
// it: the script sees its own push still there.
func TestCompatScriptBusyBlocked(t *testing.T) {
	src := "redis.call('rpush', KEYS[1], 'a')\n" + timedLoop(1000000) + "return redis.call('llen', KEYS[1])"
	run := func(addr string) []string {
		ctl := busyControl(t, addr, "50")
		blocked := dialRaw(t, addr)
		blocked.send("BLPOP", "q", "0")
		for !strings.Contains(ctl.do("INFO", "clients"), "blocked_clients:1") {
			time.Sleep(5 * time.Millisecond)
		}
		caller := dialRaw(t, addr)
		caller.send("EVAL", src, "1", "q")
		out := []string{waitBusy(t, ctl)}
		return append(out, caller.read(), blocked.read(), ctl.do("LLEN", "q"))
	}
	compareBusyWithRedis(t, run)
}

// TestScriptBusyShutdownNosave: a busy script that wrote cannot be
// killed; SHUTDOWN NOSAVE stops the server, and the log has nothing of the
// script, as Redis's, which exits in the middle of it.
func TestScriptBusyShutdownNosave(t *testing.T) {
	t.Parallel()
	s, cfg, ctl, caller := nosaveServer(t)
	caller.send("EVAL", "redis.call('set', 'x', '1')\nredis.call('set', 'y', '1')\nwhile true do end", "0")
	got := []string{waitBusy(t, ctl), ctl.do("SCRIPT", "KILL"), ctl.do("SHUTDOWN")}
	want := []string{
		"-" + errBusyScript + "\r\n",
		"-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n",
		"-" + errBusyScript + "\r\n",
	}
	compareTranscripts(t, "", got, want)
	shutdownNosave(t, s, ctl)
	checkRestarted(t, s, cfg, map[string]string{"before": "$1\r\n1\r\n", "x": "$-1\r\n", "y": "$-1\r\n"})
}

// TestScriptBusyShutdownNosaveExec: SHUTDOWN NOSAVE stops a busy script
// run by EXEC, and the log has nothing of the transaction, neither the
// commands before the script nor those EXEC or the caller's pipeline run
// after it, as Redis's, which exits there.
func TestScriptBusyShutdownNosaveExec(t *testing.T) {
	t.Parallel()
	s, cfg, ctl, caller := nosaveServer(t)
	caller.sendTogether([]string{"MULTI"}, []string{"SET", "a", "1"},
		[]string{"EVAL", "redis.call('set', 'x', '1')\nwhile true do end", "0"},
		[]string{"SET", "b", "1"}, []string{"EXEC"}, []string{"SET", "c", "1"})
	if got := waitBusy(t, ctl); got != "-"+errBusyScript+"\r\n" {
		t.Fatalf("PING while the script runs = %q", got)
	}
	shutdownNosave(t, s, ctl)
	checkRestarted(t, s, cfg, map[string]string{"before": "$1\r\n1\r\n", "a": "$-1\r\n", "x": "$-1\r\n", "b": "$-1\r\n", "c": "$-1\r\n"})
}

// TestScriptBusyShutdownNosaveCaller: the caller of a busy script that
// SHUTDOWN NOSAVE stops gets no reply, neither the script's nor those of
// its pipeline's commands before and after it, as Redis exits before it
// writes them.
func TestScriptBusyShutdownNosaveCaller(t *testing.T) {
	s, addr := startBusyServer(t, Config{})
	ctl := busyControl(t, addr, "50")
	caller := dialRaw(t, addr)
	caller.sendTogether([]string{"SET", "a", "1"},
		[]string{"EVAL", "redis.call('set', 'x', '1')\nwhile true do end", "0"}, []string{"SET", "c", "1"})
	if got := waitBusy(t, ctl); got != "-"+errBusyScript+"\r\n" {
		t.Fatalf("PING while the script runs = %q", got)
	}
	shutdownNosave(t, s, ctl)
	caller.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, _ := io.ReadAll(caller.c); len(got) > 0 {
		t.Errorf("the script's caller got %q", got)
	}
}

// TestScriptBusyLogFails: with appendfsync always, a write to the log
// that fails while a script is busy (what was logged before the script)
// stops the server there, as Redis exits: the script is stopped, its
// caller closed without a reply, and nothing of the caller's pipeline after
// the script runs.
func TestScriptBusyLogFails(t *testing.T) {
	s, addr := startBusyServer(t, Config{AppendOnly: true, AppendFsync: "always", Dir: t.TempDir()})
	busyControl(t, addr, "50")
	failLogWrites(t, s)
	caller := dialRaw(t, addr)
	caller.sendTogether([]string{"SET", "a", "1"}, []string{"EVAL", "while true do end", "0"},
		[]string{"SCRIPT", "LOAD", "return 'after'"})
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
	caller.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := io.ReadAll(caller.c); len(got) > 0 || err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the script's caller read %q, %v; want the connection closed", got, err)
	}
	var loaded bool
	onLoop(s, func() { _, loaded = s.scripts.cache[scriptSHA("return 'after'")] })
	if loaded {
		t.Error("the command after the script ran on the stopped server")
	}
}

// TestCompatScriptBusyNoEviction: the clients served from inside a busy
// script evict nothing, as Redis, which keeps evictions from mixing with
// the script's changes: the key the script wrote past maxmemory is still
// there when it ends, and a write is answered BUSY, not OOM.
func TestCompatScriptBusyNoEviction(t *testing.T) {
	loop := timedLoop(1000000) + "return redis.call('exists', KEYS[1])"
	run := func(addr, policy, src string, over int) []string {
		ctl := busyControl(t, addr, "50")
		ctl.do("CONFIG", "SET", "maxmemory-policy", policy)
		maxmemory := "1"
		if over > 0 {
			info := ctl.do("INFO", "memory")
			_, used, _ := strings.Cut(info, "used_memory:")
			used, _, _ = strings.Cut(used, "\r\n")
			n, err := strconv.Atoi(used)
			if err != nil {
				t.Fatalf("INFO memory: %q", info)
			}
			maxmemory = strconv.Itoa(n + over)
		}
		ctl.do("CONFIG", "SET", "maxmemory", maxmemory)
		caller := dialRaw(t, addr)
		caller.send("EVAL", src+loop, "1", "k")
		out := []string{waitBusy(t, ctl), ctl.do("SET", "y", "1"), ctl.do("MULTI"), ctl.do("DISCARD"), caller.read()}
		ctl.do("CONFIG", "SET", "maxmemory", "0")
		ctl.do("DEL", "k")
		return out
	}
	_, addr := startBusyServer(t, Config{})
	redis := redisServer(t)
	for _, c := range []struct {
		policy, src string
		over        int
	}{
		{"allkeys-random", "redis.call('set', KEYS[1], string.rep('x', 8 * 1024 * 1024))\n", 4 << 20},
		{"noeviction", "#!lua flags=no-writes\n", 0},
	} {
		compareTranscripts(t, c.policy+": ", run(addr, c.policy, c.src, c.over), run(redis, c.policy, c.src, c.over))
	}
}

// TestCompatScriptBusyThresholdZero: with busy-reply-threshold 0 a script
// never makes the server busy, as Redis, which then sets no hook on its
// interpreter: the others wait till it ends.
func TestCompatScriptBusyThresholdZero(t *testing.T) {
	src := timedLoop(300000) + "return 1"
	run := func(addr string) []string {
		ctl := dialRaw(t, addr)
		out := []string{ctl.do("CONFIG", "SET", "busy-reply-threshold", "0")}
		caller := dialRaw(t, addr)
		caller.send("EVAL", src, "0")
		time.Sleep(100 * time.Millisecond) // the script runs
		return append(out, ctl.do("PING"), caller.read(), ctl.do("PING"))
	}
	compareBusyWithRedis(t, run)
}

// TestScriptBusyLogBeforeReplies: the replies a busy script lets out,
// those of the commands run before it in the same iteration, go after
// what those commands logged is written, as every reply does (and Redis's
// while a script is busy).
func TestScriptBusyLogBeforeReplies(t *testing.T) {
	cfg := Config{AppendOnly: true, Dir: t.TempDir()}
	_, addr := startBusyServer(t, cfg)
	ctl := busyControl(t, addr, "200")
	writer, caller, blocker := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
	logged := func() bool {
		b, err := os.ReadFile(filepath.Join(cfg.Dir, "appendonly.aof"))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(b, []byte("written"))
	}
	for i := 0; i < 20; i++ {
		// blocker holds the loop, short of busy, while writer's SET and
		// caller's EVAL arrive: the next iteration serves them in turn.
		blocker.send("EVAL", "local t = redis.call('time'); local s = t[1] * 1000000 + t[2]\n"+
			"repeat t = redis.call('time') until t[1] * 1000000 + t[2] - s > 50000", "0")
		time.Sleep(10 * time.Millisecond)
		key := "k" + strconv.Itoa(i)
		writer.send("SET", key, "written")
		caller.send("EVAL", "while true do end", "0")
		blocker.read()
		reply := writer.read()
		if !strings.HasPrefix(reply, "+OK") {
			// Served after the caller's script went busy: try again.
			ctl.do("SCRIPT", "KILL")
			caller.read()
			continue
		}
		if !logged() {
			t.Fatal("a reply went out, while a script was busy, before the change it acknowledges was written to the log")
		}
		ctl.do("SCRIPT", "KILL")
		caller.read()
		return
	}
	t.Skip("the write never came in the busy script's iteration")
}

// TestCompatScriptBusyMonitor: a monitor's commands are answered BUSY
// while a script is busy, as Redis checks that before it refuses a
// monitor's (a replica's) access to the keyspace.
func TestCompatScriptBusyMonitor(t *testing.T) {
	run := func(addr string) []string {
		ctl := busyControl(t, addr, "50")
		mon := dialRaw(t, addr)
		out := []string{mon.do("MONITOR")}
		caller := dialRaw(t, addr)
		caller.send("EVAL", "while true do end", "0")
		_, fed, _ := strings.Cut(mon.read(), "] ") // the EVAL, as it starts
		time.Sleep(200 * time.Millisecond)         // past busy-reply-threshold
		out = append(out, fed, mon.do("GET", "x"), mon.do("SET", "x", "1"), ctl.do("SCRIPT", "KILL"))
		return append(out, caller.read())
	}
	compareBusyWithRedis(t, run)
}

// TestScriptBusyTLS: a busy script's caller and the clients served from
// inside it may be TLS clients, whose records are decrypted from the
// buffer the others are read into; the caller's pipelined PING, which
// came with its EVAL, waits for the script, which a plain client kills.
func TestScriptBusyTLS(t *testing.T) {
	_, plain, secure, _ := tlsServer(t, "no")
	t.Cleanup(func() { dialRaw(t, plain).do("SCRIPT", "KILL") }) // if the test stops before it kills
	config := &tls.Config{RootCAs: testcert.Pool(), ServerName: "localhost"}
	dialTLS := func() *rawConn {
		c, err := tls.Dial("tcp", secure, config)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		t.Cleanup(func() { c.Close() })
		return &rawConn{t: t, c: c, r: bufio.NewReader(c)}
	}
	ctl := dialTLS()
	ctl.do("CONFIG", "SET", "busy-reply-threshold", "50")
	other := dialRaw(t, plain)
	caller := dialTLS()
	caller.sendTogether([]string{"EVAL", "while true do end", "0"}, []string{"PING"})
	busy := "-" + errBusyScript + "\r\n"
	got := []string{waitBusy(t, ctl), other.do("GET", "k"), ctl.do("GET", "k"), other.do("SCRIPT", "KILL")}
	killed, _, _ := strings.Cut(caller.read(), " script:")
	got = append(got, killed, caller.read(), ctl.do("PING"))
	compareTranscripts(t, "", got, []string{busy, busy, busy, "+OK\r\n", "-" + errScriptKilled, "+PONG\r\n", "+PONG\r\n"})
}

// TestScriptBusyStress: clients that pipeline reads, writes,
// transactions, HELLO and QUIT, and reconnect, while scripts are made
// busy and killed over and over, get a reply to every command, BUSY or
// the command's, and the server goes on; no panic is logged.
func TestScriptBusyStress(t *testing.T) {
	var log testpeer.Output
	_, addr := startBusyServer(t, Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	ctl := busyControl(t, addr, "20")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := "k" + strconv.Itoa(i)
			batch := [][]string{{"PING"}, {"SET", key, "v"}, {"GET", key}, {"MULTI"}, {"INCR", "n"}, {"EXEC"},
				{"HELLO", "2"}, {"WATCH", key}, {"UNWATCH"}, {"LPUSH", "l", "x"}, {"QUIT"}}
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				c.SetDeadline(time.Now().Add(30 * time.Second))
				rc := &rawConn{t: t, c: c, r: bufio.NewReader(c)}
				rc.sendTogether(batch...)
				for range batch {
					if got := rc.read(); got == "" {
						t.Error("an empty reply")
					}
				}
				c.Close()
			}
		}()
	}
	caller := dialRaw(t, addr)
	killed := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); killed++ {
		caller.send("EVAL", "while true do end", "0")
		waitBusy(t, ctl)
		if got := ctl.do("SCRIPT", "KILL"); got != "+OK\r\n" {
			t.Fatalf("SCRIPT KILL = %q", got)
		}
		if got := caller.read(); !strings.HasPrefix(got, "-ERR Script killed") {
			t.Fatalf("the killed script replied %q", got)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d scripts killed", killed)
	if got := ctl.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after = %q", got)
	}
	if strings.Contains(log.String(), "panic") {
		t.Fatalf("a panic was logged:\n%s", log.String())
	}
}
