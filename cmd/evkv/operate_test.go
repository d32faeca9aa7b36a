package main

import (
	"bufio"
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

// SIGHUP leaves evkv running, as Redis ignores it (a closed terminal, a
// supervisor's reload signal); it killed evkv, with no graceful shutdown
// and the pid file left behind.
func TestSIGHUPIgnored(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--pidfile", "evkv.pid", "--appendonly", "yes")
	p.cmd.Process.Signal(syscall.SIGHUP)
	time.Sleep(300 * time.Millisecond)
	c := redis.NewClient(&redis.Options{Addr: p.addr, DisableIdentity: true})
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("PING after SIGHUP: %v\n%s", err, p.stderr)
	}
}

// With the log on standard error going to a pipe whose reader has gone
// (evkv 2>&1 | logger, and logger died), SIGTERM shuts down gracefully,
// as Redis, which ignores SIGPIPE; the first log line of the shutdown
// killed evkv with SIGPIPE (Go's rule for fds 1 and 2), before the
// append-only file was synced and closed and the pid file removed.
func TestSIGTERMWithBrokenStderr(t *testing.T) {
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port := testpeer.FreePort(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--dir", dir, "--pidfile", "evkv.pid", "--appendonly", "yes")
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Wait for the ready line, then close the reading end.
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.Contains(line, "ready") {
		t.Fatalf("first log line %q, %v", line, err)
	}
	pr.Close()
	c := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), DisableIdentity: true})
	defer c.Close()
	if err := c.Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	_, statErr := os.Stat(filepath.Join(dir, "evkv.pid"))
	if err != nil || statErr == nil {
		t.Fatalf("SIGTERM with a closed log pipe: exit %v, pid file left %v; want a graceful exit 0 (Redis ignores SIGPIPE)", err, statErr == nil)
	}
}

// loglevel is honoured (warning: no INFO lines) and save is taken, with
// no warning: its save points save; CONFIG GET gives the file's values.
// Both were once dropped silently.
func TestLoglevelAndSave(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	os.WriteFile(conf, []byte("loglevel warning\nsave 900 1\n"), 0o644)
	p := start(t, "--config", conf)
	c := redis.NewClient(&redis.Options{Addr: p.addr, DisableIdentity: true})
	defer c.Close()
	got := c.ConfigGet(context.Background(), "*").Val()
	if got["loglevel"] != "warning" {
		t.Errorf("CONFIG GET loglevel = %q after \"loglevel warning\" in the file", got["loglevel"])
	}
	if got["save"] != "900 1" {
		t.Errorf("CONFIG GET save = %q after \"save 900 1\" in the file", got["save"])
	}
	log := p.stderr.String()
	if strings.Contains(log, "level=INFO") {
		t.Errorf("loglevel warning, yet INFO lines are logged:\n%s", log)
	}
	if strings.Contains(log, "level=WARN") {
		t.Errorf("save points are warned of:\n%s", log)
	}
}

// Every SET acknowledged before a SIGTERM is there after a restart: no
// command runs once the append-only file is closed, as Redis writes its
// file after the last command it runs. Commands read between the file's
// close and the connections' were run and acknowledged, not appended,
// and gone after the restart (10 to 16 of 2,000 here).
func TestAckedWritesKeptOnSIGTERM(t *testing.T) {
	for attempt := 0; attempt < 3; attempt++ {
		dir := t.TempDir()
		p := start(t, "--appendonly", "yes", "--appendfsync", "always", "--dir", dir)
		ctx := context.Background()
		var acked sync.Map
		var n atomic.Int64
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1, DisableIdentity: true, PoolSize: 1})
				defer c.Close()
				for i := 0; ; i++ {
					k := fmt.Sprintf("w%d:%d", w, i)
					if c.Set(ctx, k, i, 0).Err() != nil {
						return
					}
					acked.Store(k, strconv.Itoa(i))
					n.Add(1)
				}
			}()
		}
		for n.Load() < 2000 {
			time.Sleep(5 * time.Millisecond)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
		wg.Wait()
		p2 := start(t, "--appendonly", "yes", "--dir", dir)
		c := redis.NewClient(&redis.Options{Addr: p2.addr, DisableIdentity: true})
		lost, total := 0, 0
		var example string
		acked.Range(func(k, v any) bool {
			total++
			if got := c.Get(ctx, k.(string)).Val(); got != v.(string) {
				lost++
				example = k.(string)
			}
			return true
		})
		c.Close()
		p2.cmd.Process.Signal(syscall.SIGTERM)
		p2.cmd.Wait()
		if lost > 0 {
			t.Fatalf("attempt %d: %d of %d SETs acknowledged before a SIGTERM are missing after the restart (e.g. %s)", attempt, lost, total, example)
		}
	}
}

// A dir that does not exist stops the start, as Redis refuses to start
// ("Can't chdir to ..."); evkv started, and the problem showed only
// later (CONFIG SET appendonly yes, a relative pidfile or logfile).
func TestMissingDir(t *testing.T) {
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "no-such-dir")
	cmd := exec.Command(bin, "--port", strconv.Itoa(testpeer.FreePort(t)), "--dir", dir)
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("exit 0 with a missing dir; want a non-zero exit")
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Signal(syscall.SIGTERM)
		<-done
		t.Fatalf("evkv runs with dir %s, which does not exist; Redis refuses to start", dir)
	}
}

// Redis 7.0 parameters at their defaults, as a redis.conf of Redis 7.0
// gives them, start evkv (taken with no effect, and named in its log);
// they stopped the start as unknown settings, where the README says evkv
// starts from a Redis 7.0 redis.conf.
func TestRedis70DefaultsAccepted(t *testing.T) {
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	dir, port := t.TempDir(), testpeer.FreePort(t)
	conf := filepath.Join(dir, "redis.conf")
	lines := []string{"shutdown-timeout 10", "maxmemory-samples 5", "activedefrag no",
		"lfu-log-factor 10", "syslog-enabled no", "crash-log-enabled yes", "enable-debug-command no",
		"active-expire-effort 1", "io-threads-do-reads no", "tracking-table-max-keys 1000000", "maxmemory-clients 0",
		"port " + strconv.Itoa(port)}
	os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	cmd := exec.Command(bin, conf)
	out := new(testpeer.Output)
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	// Listening: the configuration was taken.
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("Redis 7.0's defaults stopped the start: %s", strings.TrimSpace(out.String()))
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("evkv did not start: %s", out)
		}
	}
}

// logfile is opened for each line, as Redis opens it (serverLogRaw), so
// that a log rotated by renaming it is made again at its path by the next
// line; evkv kept the file open, and after the rename every line went to
// the rotated file.
func TestLogfileRotation(t *testing.T) {
	dir := t.TempDir()
	p := start(t, "--dir", dir, "--logfile", "evkv.log")
	path := filepath.Join(dir, "evkv.log")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "evkv stopped") {
		rotated, _ := os.ReadFile(path + ".1")
		t.Errorf("logfile after rotation: %q, %v; the lines went to the rotated file:\n%s", data, err, rotated)
	}
}

// Any redis.conf directive may be given as a flag, as redis-server takes
// it: "--name value ...", the value running to the next "--"; it wins
// over the file's.
func TestDirectivesAsFlags(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	os.WriteFile(conf, []byte("loglevel notice\naof-load-truncated yes\n"), 0o644)
	p := start(t, "--config", conf, "--loglevel", "warning", "--save", "900", "1", "300", "10", "--aof-load-truncated=no")
	c := redis.NewClient(&redis.Options{Addr: p.addr, DisableIdentity: true})
	defer c.Close()
	got := c.ConfigGet(context.Background(), "*").Val()
	for name, want := range map[string]string{"loglevel": "warning", "save": "900 1 300 10", "aof-load-truncated": "no"} {
		if got[name] != want {
			t.Errorf("CONFIG GET %s = %q; want %q", name, got[name], want)
		}
	}
}
