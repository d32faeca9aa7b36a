package kv

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// rueidisClient connects rueidis, whose client-side caching is on unless
// disabled: it turns tracking on as it connects (OPTIN by default, or
// with the options given, BCAST and prefixes), and refuses to start on a
// server without CLIENT TRACKING.
func rueidisClient(t *testing.T, addr string, tracking ...string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:           []string{addr},
		DisableRetry:          true,
		ClientTrackingOptions: tracking,
	})
	if err != nil {
		t.Fatalf("rueidis.NewClient: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// cachedGet is rueidis's GET through its cache: the value, or "" for a
// missing key, and whether the cache answered.
func cachedGet(t *testing.T, c rueidis.Client, key string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := c.DoCache(ctx, c.B().Get().Key(key).Cache(), time.Minute)
	v, err := r.ToString()
	if rueidis.IsRedisNil(err) {
		return "", r.IsCacheHit()
	}
	if err != nil {
		t.Fatalf("DoCache GET %s: %v", key, err)
	}
	return v, r.IsCacheHit()
}

// waitCached reads key through c's cache until it gives want, which an
// invalidation message must make it fetch again.
func waitCached(t *testing.T, c rueidis.Client, key, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, _ := cachedGet(t, c, key)
		if v == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s through the cache is still %q; want %q (no invalidation came)", key, v, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rueidis, a client that caches what it reads, keeps values evkv has not
// told it changed, and fetches again those it has: changed by another
// client, deleted, expired, flushed, in the default (OPTIN) mode and in
// BCAST mode with a prefix.
func TestRueidisClientSideCaching(t *testing.T) {
	_, addr := startServer(t, Config{})
	other := dialRaw(t, addr)
	for _, mode := range []struct {
		name     string
		tracking []string
		prefix   string
	}{
		{"optin", nil, ""},
		{"bcast", []string{"PREFIX", "p:", "BCAST"}, "p:"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			c := rueidisClient(t, addr, mode.tracking...)
			k := mode.prefix + "k"
			other.do("SET", k, "v1")
			if v, hit := cachedGet(t, c, k); v != "v1" || hit {
				t.Fatalf("first GET = %q, cache hit %v; want v1 from the server", v, hit)
			}
			if v, hit := cachedGet(t, c, k); v != "v1" || !hit {
				t.Fatalf("second GET = %q, cache hit %v; want v1 from the cache", v, hit)
			}
			other.do("SET", k, "v2")
			waitCached(t, c, k, "v2")
			if _, hit := cachedGet(t, c, k); !hit {
				t.Error("after it was fetched again, the value did not come from the cache")
			}
			other.do("DEL", k)
			waitCached(t, c, k, "")
			other.do("SET", k, "short", "PX", "100")
			waitCached(t, c, k, "short")
			waitCached(t, c, k, "") // expired, by the cycle or the cache's next fetch
			other.do("SET", k, "v3")
			waitCached(t, c, k, "v3")
			other.do("FLUSHALL")
			waitCached(t, c, k, "")
			if mode.prefix != "" {
				// Outside the prefix nothing is told: the cache keeps
				// the value it read, as BCAST with a prefix means.
				other.do("SET", "q", "1")
				if v, _ := cachedGet(t, c, "q"); v != "1" {
					t.Fatalf("GET q = %q", v)
				}
				other.do("SET", "q", "2")
				time.Sleep(50 * time.Millisecond)
				if v, hit := cachedGet(t, c, "q"); v != "1" || !hit {
					t.Errorf("a key outside the prefix, changed: %q, hit %v; want the cached 1", v, hit)
				}
			}
		})
	}
}
