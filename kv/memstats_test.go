package kv

import (
	"context"
	"slices"
	"testing"

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
