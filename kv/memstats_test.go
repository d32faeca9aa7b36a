package kv

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MEMORY STATS gives Redis's fields in Redis's order (compared with
// Redis's own when it is installed), with figures of the Go heap that add
// up; DOCTOR, PURGE and MALLOC-STATS answer.
func TestMemoryStats(t *testing.T) {
	ctx := context.Background()
	stats := func(c *redis.Client) ([]string, map[string]any) {
		t.Helper()
		c.Set(ctx, "k", "v", 0)
		c.Do(ctx, "SELECT", "0")
		v, err := c.Do(ctx, "MEMORY", "STATS").Result()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		m := map[string]any{}
		switch v := v.(type) {
		case []any: // RESP2
			for i := 0; i+1 < len(v); i += 2 {
				names = append(names, v[i].(string))
				m[v[i].(string)] = v[i+1]
			}
		default:
			t.Fatalf("MEMORY STATS = %T", v)
		}
		return names, m
	}
	_, addr := startServer(t, Config{})
	ours, m := stats(goRedis(t, addr, func(o *redis.Options) { o.Protocol = 2 }))
	total, startup, peak := m["total.allocated"].(int64), m["startup.allocated"].(int64), m["peak.allocated"].(int64)
	if m["keys.count"].(int64) != 1 || total < startup || peak < total || m["overhead.total"].(int64) < startup {
		t.Errorf("MEMORY STATS figures do not add up: %v", m)
	}
	c := goRedis(t, addr)
	for _, sub := range []string{"DOCTOR", "MALLOC-STATS", "PURGE"} {
		if v, err := c.Do(ctx, "MEMORY", sub).Text(); err != nil || v == "" {
			t.Errorf("MEMORY %s = %q, %v", sub, v, err)
		}
	}
	t.Run("redis", func(t *testing.T) {
		theirs, _ := stats(goRedis(t, redisServer(t), func(o *redis.Options) { o.Protocol = 2 }))
		if !slices.Equal(ours, theirs) {
			t.Errorf("MEMORY STATS fields:\n%q\nRedis's:\n%q", ours, theirs)
		}
	})
}

// INFO clients has Redis 7.0's fields; the biggest recent input buffer is
// a client's request half sent.
func TestInfoClientsBuffers(t *testing.T) {
	_, addr := startServer(t, Config{})
	half := dialRaw(t, addr)
	half.c.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000\r\n" + strings.Repeat("v", 500000)))
	rc := dialRaw(t, addr)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info := rc.do("INFO", "clients")
		for _, f := range []string{"connected_clients:2", "cluster_connections:0", "client_recent_max_output_buffer:", "tracking_clients:0", "clients_in_timeout_table:0"} {
			if !strings.Contains(info, f) {
				t.Fatalf("INFO clients has no %q:\n%s", f, info)
			}
		}
		m := regexp.MustCompile(`client_recent_max_input_buffer:(\d+)`).FindStringSubmatch(info)
		if n, _ := strconv.Atoi(m[1]); n >= 500000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("client_recent_max_input_buffer stays under the half-sent request's 500000 bytes:\n%s", info)
		}
	}
}
