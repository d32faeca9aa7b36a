package kv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
		{"CONFIG", "SET", "auto-aof-rewrite-min-size", "99999999999gb"}, {"CONFIG", "GET", "auto-aof-rewrite-percentage"}, {"CONFIG", "GET", "auto-aof-rewrite-min-size"},
	})
}

// TestCompatRedisParameters: the parameters evkv takes so that a Redis
// configuration file starts it (most with no effect) have Redis 7.0's
// defaults, checks and immutability.
func TestCompatRedisParameters(t *testing.T) {
	var script [][]string
	names := []string{"tcp-keepalive", "protected-mode", "aof-load-truncated"}
	for _, p := range inertParams {
		names = append(names, p.name)
	}
	for _, name := range names {
		script = append(script, []string{"CONFIG", "GET", name})
	}
	script = append(script, [][]string{
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
	}...)
	compareWithRedis(t, script)
}
