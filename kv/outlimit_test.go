package kv

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// gone reports whether rc's connection was closed by the server, reading
// (and dropping) what was sent to it before.
func gone(rc *rawConn) bool {
	rc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 1<<20)
	for {
		if _, err := rc.c.Read(buf); err != nil {
			var ne net.Error
			return !(errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, io.EOF)
		}
	}
}

// outputLimitScenario runs the output-buffer-limit cases against the
// server at addr and reports the clients closed: a subscriber that stops
// reading while another keeps up, under a hard limit and under a soft one
// held for longer than its seconds, and a client that pipelines big
// replies without reading, under the normal class's hard limit.
func outputLimitScenario(t *testing.T, addr string) {
	ctx := context.Background()
	admin := goRedis(t, addr)
	msg := strings.Repeat("m", 64<<10)

	// publishUntil publishes msg until PUBLISH reaches want receivers, at
	// most n times, and returns how many it published.
	publishUntil := func(want int64, n int) int {
		t.Helper()
		for i := 1; i <= n; i++ {
			got, err := admin.Publish(ctx, "ch", msg).Result()
			if err != nil {
				t.Fatal(err)
			}
			if got == want {
				return i
			}
		}
		t.Fatalf("PUBLISH did not reach %d receivers in %d messages", want, n)
		return 0
	}
	subscribe := func() (*rawConn, *redis.PubSub, *atomic.Int64) {
		t.Helper()
		slow := dialRaw(t, addr)
		slow.do("SUBSCRIBE", "ch")
		fast := goRedis(t, addr).Subscribe(ctx, "ch")
		if _, err := fast.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		counted := new(atomic.Int64)
		go func() {
			for range fast.Channel(redis.WithChannelSize(1 << 12)) {
				counted.Add(1)
			}
		}()
		return slow, fast, counted
	}

	// The hard limit: the slow subscriber goes, the other gets every
	// message.
	if err := admin.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 1mb 0 0").Err(); err != nil {
		t.Fatal(err)
	}
	slow, fast, counted := subscribe()
	sent := publishUntil(1, 2000)
	sent += publishUntil(1, 1)
	if !gone(slow) {
		t.Error("hard limit: the subscriber that does not read is still connected")
	}
	for deadline := time.Now().Add(10 * time.Second); counted.Load() < int64(sent) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	fast.Close()
	if n := counted.Load(); n != int64(sent) {
		t.Errorf("hard limit: the subscriber that reads got %d of %d messages", n, sent)
	}

	// The soft limit: past it for longer than its seconds, the subscriber
	// is closed; before that it stays. The subscriber cannot be past the
	// limit before start, so that a close seen less than the seconds
	// after start came too early; on a loaded machine the publishing may
	// take longer than the seconds, and the close may come during it.
	if err := admin.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 0 512kb 5").Err(); err != nil {
		t.Fatal(err)
	}
	slow, fast, _ = subscribe()
	start := time.Now()
	for range 400 { // 25 MiB: past what the kernel's buffers take
		if got := admin.Publish(ctx, "ch", msg).Val(); got != 2 {
			if time.Since(start) < 5*time.Second {
				t.Fatalf("soft limit: PUBLISH reached %d receivers before the seconds passed; want 2", got)
			}
			break
		}
	}
	// Nothing more is sent to it: the cron closes it once the seconds
	// are up, as Redis's clientsCron does.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n := admin.PubSubNumSub(ctx, "ch").Val()["ch"]
		if n == 1 {
			if d := time.Since(start); d < 5*time.Second {
				t.Errorf("soft limit: the subscriber was closed %v after the publishing began; want 5 s or more", d)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("soft limit: %d subscribers 30 s after the publishing began; want 1", n)
		}
	}
	if got := admin.Publish(ctx, "ch", msg).Val(); got != 1 {
		t.Errorf("soft limit: PUBLISH after the seconds reached %d receivers; want 1", got)
	}
	if !gone(slow) {
		t.Error("soft limit: the subscriber that does not read is still connected")
	}
	fast.Close()

	// The normal class: a client that pipelines 20 MiB of replies
	// without reading goes; another is served.
	if err := admin.ConfigSet(ctx, "client-output-buffer-limit", "normal 1mb 0 0").Err(); err != nil {
		t.Fatal(err)
	}
	admin.Set(ctx, "big", strings.Repeat("v", 100<<10), 0)
	greedy := dialRaw(t, addr)
	// One write, whose end the server may refuse: it can close the
	// client before it has read all of it.
	greedy.c.Write([]byte(strings.Repeat("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 200)))
	if !gone(greedy) {
		t.Error("normal class: the client that does not read its replies is still connected")
	}
	if err := admin.ConfigSet(ctx, "client-output-buffer-limit", "normal 0 0 0").Err(); err != nil {
		t.Fatal(err)
	}
	if got := admin.Get(ctx, "big").Val(); len(got) != 100<<10 {
		t.Errorf("another client after: GET big has %d bytes", len(got))
	}
}

// TestOutputBufferLimits: client-output-buffer-limit closes the clients
// past their class's limits, as Redis closes them (the same scenario runs
// against Redis when it is installed), and no other. The two servers'
// scenarios, most of whose time is the soft limit's seconds, run at once.
func TestOutputBufferLimits(t *testing.T) {
	t.Run("evkv", func(t *testing.T) {
		t.Parallel()
		_, addr := startServer(t, Config{})
		outputLimitScenario(t, addr)
		info := goRedis(t, addr).Info(context.Background(), "stats").Val()
		if !strings.Contains(info, "client_output_buffer_limit_disconnections:3\r\n") {
			t.Errorf("INFO stats after three clients were closed:\n%s", info)
		}
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		outputLimitScenario(t, redisServer(t))
	})
}
