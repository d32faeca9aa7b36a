package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/redis/go-redis/v9"
)

// buildDir holds the binary build makes; TestMain removes it.
var buildDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// build compiles evkv once for the tests that run it as a process.
var build = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "evkv-test")
	if err != nil {
		return "", err
	}
	buildDir = dir
	bin := filepath.Join(dir, "evkv")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

type proc struct {
	cmd    *exec.Cmd
	stderr *testpeer.Output
	addr   string
}

// start runs evkv with args and waits until it answers PING.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	port := testpeer.FreePort(t)
	p := &proc{cmd: exec.Command(bin, append([]string{"--port", strconv.Itoa(port)}, args...)...), stderr: new(testpeer.Output)}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	p.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := c.Ping(context.Background()).Err(); err == nil || strings.HasPrefix(err.Error(), "NOAUTH") {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("evkv did not start: %s", p.stderr)
		}
	}
}

func TestPortTaken(t *testing.T) {
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	out, err := exec.Command(bin, "--port", port).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already in use") {
		t.Errorf("evkv on a taken port: %v, %q; want a non-zero exit saying the address is in use", err, out)
	}
}

func TestConfigFileAndSIGTERM(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	os.WriteFile(conf, []byte("# a comment\nappendonly yes\nappendfsync always\ndir "+dir+"\nrequirepass pw\nslowlog-max-len 7\nslowlog-log-slower-than 0\n"+
		"latency-monitor-threshold 250\nsave 900 1\nlatency-tracking-info-percentiles \"50 99.9\"\n"), 0o644)
	// A relative pid file and log file are taken from dir, as Redis
	// takes them (it changes to dir first).
	p := start(t, "--config", conf, "--pidfile", "evkv.pid", "--logfile", "evkv.log")
	if pid, err := os.ReadFile(filepath.Join(dir, "evkv.pid")); err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(p.cmd.Process.Pid) {
		t.Errorf("pid file in dir: %q, %v", pid, err)
	}
	c := redis.NewClient(&redis.Options{Addr: p.addr, Password: "pw", DisableIdentity: true})
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v := c.ConfigGet(ctx, "appendfsync").Val()["appendfsync"]; v != "always" {
		t.Errorf("appendfsync = %q", v)
	}
	if v := c.ConfigGet(ctx, "slowlog-*").Val(); v["slowlog-max-len"] != "7" || v["slowlog-log-slower-than"] != "0" {
		t.Errorf("slowlog settings from the file: %v", v)
	}
	if v := c.ConfigGet(ctx, "latency-*").Val(); v["latency-monitor-threshold"] != "250" || v["latency-tracking-info-percentiles"] != "50 99.9" {
		t.Errorf("latency settings from the file: %v", v)
	}
	if n := c.SlowLogLen(ctx).Val(); n == 0 {
		t.Error("slowlog-log-slower-than 0 from the file: nothing logged")
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "appendonly.aof"))
	if !bytes.Contains(bytes.ToUpper(data), []byte("SET\r\n$1\r\nK\r\n")) {
		t.Errorf("the log after SIGTERM: %q", data)
	}
	if log, err := os.ReadFile(filepath.Join(dir, "evkv.log")); err != nil || !bytes.Contains(log, []byte("evkv stopped")) {
		t.Errorf("log file in dir: %q, %v", log, err)
	}
	bad := filepath.Join(dir, "bad.conf")
	bin, _ := build()
	for line, want := range map[string]string{
		"no-such-setting 1":            bad + ":2: no-such-setting: unknown setting",
		"slowlog-max-len -3":           bad + ":2: slowlog-max-len: argument must be between 0 and 9223372036854775807 inclusive",
		"slowlog-log-slower-than x":    bad + ":2: slowlog-log-slower-than: argument couldn't be parsed into an integer",
		"latency-monitor-threshold -1": bad + ":2: latency-monitor-threshold: argument must be between 0",
		"daemonize yes":                bad + ":2: daemonize: evkv does not daemonize itself",
		"maxmemory lots":               bad + ":2: maxmemory: argument must be a memory value",
		"maxmemory-policy most":        bad + ":2: maxmemory-policy: argument(s) must be one of the following: volatile-lru,",
		"hz 100":                       bad + ":2: hz: cannot be set: evkv has it fixed at \"10\"",
		"rdbcompression maybe":         bad + ":2: rdbcompression: argument must be 'yes' or 'no'",
		"cluster-enabled yes":          bad + ":2: cluster-enabled: unknown setting",
	} {
		os.WriteFile(bad, []byte("# the line below\n"+line+"\n"), 0o644)
		if out, err := exec.Command(bin, "--config", bad).CombinedOutput(); err == nil || !strings.Contains(string(out), want) {
			t.Errorf("config %q: %v, %q; want an error with %q", line, err, out, want)
		}
	}
}

// TestRedisConfigFile starts evkv as Debian's systemd unit starts Redis
// (the file first, then --supervised systemd --daemonize no) on the
// settings of the redis.conf Debian ships: it tells systemd it is ready,
// serves, writes the pid file and the log file the file names, names the
// settings that have no effect, and tells systemd it is stopping and
// removes the pid file when it stops.
func TestRedisConfigFile(t *testing.T) {
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/redis7-debian.conf")
	if err != nil {
		t.Fatal(err)
	}
	port := testpeer.FreePort(t)
	data = bytes.ReplaceAll(data, []byte("DIR"), []byte(dir))
	data = bytes.ReplaceAll(data, []byte("port 6379"), []byte("port "+strconv.Itoa(port)))
	conf := filepath.Join(dir, "redis.conf")
	os.WriteFile(conf, data, 0o644)
	sock := filepath.Join(dir, "notify")
	systemd, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer systemd.Close()
	cmd := exec.Command(bin, conf, "--supervised", "systemd", "--daemonize", "no")
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	heard := func(want string) {
		t.Helper()
		systemd.SetReadDeadline(time.Now().Add(20 * time.Second))
		buf := make([]byte, 512)
		n, err := systemd.Read(buf)
		if err != nil || !strings.HasPrefix(string(buf[:n]), want) {
			t.Fatalf("notification %q, %v; want %q", buf[:n], err, want)
		}
	}
	heard("READY=1")
	c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), DisableIdentity: true})
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The file binds "127.0.0.1 -::1": both are listened on, where the
	// system has IPv6.
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		ln.Close()
		c6 := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("::1", strconv.Itoa(port)), DisableIdentity: true})
		defer c6.Close()
		if got, err := c6.Get(ctx, "k").Result(); err != nil || got != "v" {
			t.Errorf("GET at [::1] = %q, %v", got, err)
		}
	}
	got := c.ConfigGet(ctx, "*").Val()
	for name, want := range map[string]string{"tcp-keepalive": "300", "bind": "127.0.0.1 -::1", "auto-aof-rewrite-min-size": "67108864", "hash-max-listpack-entries": "512",
		"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", "supervised": "systemd", "daemonize": "no",
		"dbfilename": "dump.rdb", "pidfile": filepath.Join(dir, "redis-server.pid")} {
		if got[name] != want {
			t.Errorf("CONFIG GET %s = %q; want %q", name, got[name], want)
		}
	}
	pidfile := filepath.Join(dir, "redis-server.pid")
	if pid, err := os.ReadFile(pidfile); err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("pid file: %q, %v; want %d", pid, err, cmd.Process.Pid)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	heard("STOPPING=1")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if _, err := os.Stat(pidfile); !os.IsNotExist(err) {
		t.Errorf("pid file after the stop: %v", err)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "redis-server.log"))
	if bytes.Contains(log, []byte("stop-writes-on-bgsave-error")) {
		t.Errorf("the log names stop-writes-on-bgsave-error, which has an effect, among the settings without:\n%s", log)
	}
	for _, want := range []string{"evkv ready to accept connections", "with no effect here", "repl-diskless-sync", "evkv stopped"} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("the log file has no %q:\n%s", want, log)
		}
	}
	if out, err := exec.Command(bin, conf, "stray").CombinedOutput(); err == nil || !strings.Contains(string(out), `unexpected argument "stray"`) {
		t.Errorf("a stray argument: %v, %s", err, out)
	}
	if out, err := exec.Command(bin, "--bind", " ").CombinedOutput(); err == nil || !strings.Contains(string(out), "bind names no address") {
		t.Errorf("--bind of no address: %v, %s", err, out)
	}
}

// TestKillDurability kills the server with SIGKILL while clients write and
// restarts it on the same log: every write acknowledged before the kill is
// there. (A process crash loses nothing with either policy: what evkv
// wrote before replying is in the kernel. The policies differ when the
// machine itself fails, which a test here cannot cause.)
func TestKillDurability(t *testing.T) {
	for _, policy := range []string{"always", "everysec"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, "--appendonly", "yes", "--appendfsync", policy, "--dir", dir)
			ctx := context.Background()
			var acked sync.Map // key -> value
			var n atomic.Int64
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1, DisableIdentity: true})
					defer c.Close()
					for i := 0; ; i++ {
						k := fmt.Sprintf("w%d:%d", w, i)
						if c.Set(ctx, k, i, 0).Err() != nil {
							return
						}
						acked.Store(k, strconv.Itoa(i))
						if c.Incr(ctx, fmt.Sprintf("ctr%d", w)).Err() != nil {
							return
						}
						n.Add(1)
					}
				}()
			}
			for n.Load() < 3000 {
				time.Sleep(10 * time.Millisecond)
			}
			p.cmd.Process.Kill()
			p.cmd.Wait()
			wg.Wait()
			p2 := start(t, "--appendonly", "yes", "--appendfsync", policy, "--dir", dir)
			c := redis.NewClient(&redis.Options{Addr: p2.addr, DisableIdentity: true})
			defer c.Close()
			lost, total := 0, 0
			acked.Range(func(k, v any) bool {
				total++
				if got := c.Get(ctx, k.(string)).Val(); got != v.(string) {
					lost++
				}
				return true
			})
			t.Logf("%s: %d acknowledged SETs, %d lost after SIGKILL", policy, total, lost)
			if lost > 0 {
				t.Errorf("%d of %d acknowledged writes lost", lost, total)
			}
		})
	}
}

// tool returns the path of a Redis tool, skipping the test if it is not
// installed (.ci/run installs Debian's redis-tools).
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	return p
}

func TestRedisCLI(t *testing.T) {
	cli := tool(t, "redis-cli")
	p := start(t)
	_, port, _ := net.SplitHostPort(p.addr)
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, append([]string{"-p", port}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"SET", "greeting", "hello world"}, "OK\n"},
		{[]string{"GET", "greeting"}, "hello world\n"},
		{[]string{"--no-raw", "GET", "greeting"}, "\"hello world\"\n"},
		{[]string{"INCRBY", "n", "5"}, "5\n"},
		{[]string{"--no-raw", "INCRBY", "n", "5"}, "(integer) 10\n"},
		{[]string{"--no-raw", "GET", "missing"}, "(nil)\n"},
		{[]string{"--no-raw", "NOSUCH"}, "(error) ERR unknown command 'NOSUCH', with args beginning with: \n"},
		{[]string{"-3", "--no-raw", "HELLO", "3"}, ""},
	} {
		got := run("", tc.args...)
		if tc.want != "" && got != tc.want {
			t.Errorf("redis-cli %q = %q; want %q", tc.args, got, tc.want)
		}
	}
	// Commands piped in, one per line, as a user types them.
	if got := run("SET a 1\nINCR a\nGET a\n"); got != "OK\n2\n2\n" {
		t.Errorf("piped commands = %q", got)
	}
	// --pipe sends raw RESP and counts the replies.
	var mass strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&mass, "*3\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$1\r\nv\r\n", len(strconv.Itoa(i))+1, i)
	}
	if got := run(mass.String(), "--pipe"); !strings.Contains(got, "errors: 0, replies: 1000") {
		t.Errorf("--pipe: %q", got)
	}
	if got := run("", "DBSIZE"); got != "1003\n" {
		t.Errorf("DBSIZE after --pipe = %q", got)
	}
}

func TestRedisBenchmark(t *testing.T) {
	bench := tool(t, "redis-benchmark")
	// With the loop's nap (the default) and without.
	for _, args := range [][]string{nil, {"--nap", "0"}} {
		t.Run(strings.Join(append([]string{"evkv"}, args...), " "), func(t *testing.T) { redisBenchmark(t, bench, args) })
	}
}

func redisBenchmark(t *testing.T, bench string, args []string) {
	p := start(t, args...)
	_, port, _ := net.SplitHostPort(p.addr)
	// redis-benchmark's own tests, but for the longer LRANGEs.
	out, err := exec.Command(bench, "-p", port, "-n", "2000", "-c", "10", "-P", "4", "-q",
		"-t", "set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,mset").CombinedOutput()
	if err != nil {
		t.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	for _, test := range []string{"SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP", "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN", "LRANGE_100", "MSET"} {
		if !strings.Contains(string(out), test) {
			t.Errorf("redis-benchmark printed no %s result:\n%s", test, out)
		}
	}
	if strings.Contains(string(out), "ERR") {
		t.Errorf("redis-benchmark saw errors:\n%s", out)
	}
}

// A SIGTERM that comes as soon as evkv says it is ready (a supervisor
// stopping it at once) shuts it down gracefully too.
func TestSIGTERMAtReady(t *testing.T) {
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		dir := t.TempDir()
		sock := filepath.Join(dir, "notify")
		systemd, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--port", strconv.Itoa(testpeer.FreePort(t)), "--supervised", "systemd", "--dir", dir, "--pidfile", "evkv.pid")
		cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		systemd.SetReadDeadline(time.Now().Add(20 * time.Second))
		buf := make([]byte, 512)
		if n, err := systemd.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "READY=1") {
			cmd.Process.Kill()
			t.Fatalf("notification %q, %v; want READY=1", buf[:n], err)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("exit after a SIGTERM at once: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "evkv.pid")); !os.IsNotExist(err) {
			t.Errorf("the pid file is left after a SIGTERM at once: %v", err)
		}
		systemd.Close()
	}
}

func TestBadNap(t *testing.T) {
	if err := run([]string{"--port", "0", "--nap", "soon"}); err == nil || !strings.Contains(err.Error(), "nap") {
		t.Fatalf("--nap soon: %v; want an error naming the flag", err)
	}
}

// TestSnapshotAcrossRestart: with save points, SIGTERM saves dump.rdb in
// dir, which the next start loads; a corrupt one stops the start with an
// error naming it, as Redis exits.
func TestSnapshotAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--save", "3600 1")
	c := redis.NewClient(&redis.Options{Addr: p.addr, DisableIdentity: true})
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	c.Close()
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	file, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatalf("no dump.rdb after SIGTERM: %v\n%s", err, p.stderr)
	}
	p = start(t, "--dir", dir)
	c = redis.NewClient(&redis.Options{Addr: p.addr, DisableIdentity: true})
	defer c.Close()
	if got, err := c.Get(ctx, "k").Result(); got != "v" || err != nil {
		t.Errorf("GET k after the restart = %q, %v; want v", got, err)
	}
	os.WriteFile(filepath.Join(dir, "dump.rdb"), file[:len(file)-3], 0o644)
	bin, _ := build()
	out, err := exec.Command(bin, "--dir", dir, "--port", strconv.Itoa(testpeer.FreePort(t))).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "dump.rdb") {
		t.Errorf("a corrupt dump.rdb: %v, %q; want a non-zero exit naming the file", err, out)
	}
}

// TestSavePointSurvivesKill: a save point reached while serving saves
// dump.rdb in the background, so that the changes it saved outlive a
// kill -9, which saves nothing, as they outlive one of Redis.
func TestSavePointSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--save", "0 3")
	c := redis.NewClient(&redis.Options{Addr: p.addr, DisableIdentity: true})
	ctx := context.Background()
	if err := c.MSet(ctx, "a", "1", "b", "2", "c", "3").Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		info, err := c.Info(ctx, "persistence").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(info, "rdb_saves:1\r\n") && strings.Contains(info, "rdb_bgsave_in_progress:0\r\n") {
			if !strings.Contains(info, "rdb_last_bgsave_status:ok\r\n") {
				t.Fatalf("the save point's save failed: %q\n%s", info, p.stderr)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no save after the save point was reached: %q\n%s", info, p.stderr)
		}
	}
	c.Close()
	p.cmd.Process.Kill()
	p.cmd.Wait()
	p = start(t, "--dir", dir)
	c = redis.NewClient(&redis.Options{Addr: p.addr, DisableIdentity: true})
	defer c.Close()
	if got, err := c.MGet(ctx, "a", "b", "c").Result(); err != nil || fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("MGET a b c after kill -9 and a restart = %v, %v; want [1 2 3]", got, err)
	}
}
