package gateway

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/redis/go-redis/v9"
)

// runRedis runs redis-server on addr, storing nothing, until the returned
// function kills it or the test ends.
func runRedis(t *testing.T, path, addr string) (kill func()) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(path, "--port", port, "--bind", host, "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	kill = func() { cmd.Process.Kill(); <-done }
	t.Cleanup(kill)
	waitFor(t, "redis-server", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return kill
}

// A Redis subscription goes on across a restart of its server: go-redis
// subscribes again once the server is back, and the subscriber is told
// nothing. While the server is down, a mutation gets its publish's error
// and a new subscription the error of subscribing, each in well under
// the publish's timeout (5 s), and the gateway's subscriptions wait.
func TestRedisServerRestart(t *testing.T) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	addr := testpeer.FreeAddr(t)
	kill := runRedis(t, path, addr)
	schema, err := ParseSchema(redisSchema)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	_, gaddr := serve(t, Config{Schema: schema, Redis: map[string]Source{"prices": NewRedisSource(rdb)}})
	t.Cleanup(func() { rdb.Close() }) // after the gateway's Shutdown: cleanups run last first
	subscribed := func() bool {
		n, _ := rdb.PubSubNumSub(context.Background(), "price.EVL").Result()
		return n["price.EVL"] == 1
	}
	c := dialSubscribe(t, gaddr, "p", `subscription { price(symbol: "EVL") { price } }`)
	waitFor(t, "the Redis subscription", subscribed)
	rdb.Publish(context.Background(), "price.EVL", `{"price":1}`)
	if got, want := c.readRaw(), `{"id":"p","type":"next","payload":{"data":{"price":{"price":1}}}}`; got != want {
		t.Fatalf("before the restart: %s; want %s", got, want)
	}

	kill()
	m := dialSubscribe(t, gaddr, "m", `mutation { setPrice(symbol: "EVL", price: 2) { success } }`)
	start := time.Now()
	if got := m.readRaw(); !strings.HasPrefix(got, `{"id":"m","type":"next","payload":{"data":null,"errors":[{"message":"publish failed: `) {
		t.Fatalf("mutation while Redis is down: %s; want its error", got)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the mutation's error came after %v", d)
	}
	if got, want := m.readRaw(), `{"id":"m","type":"complete"}`; got != want {
		t.Fatalf("after the mutation's error: %s; want %s", got, want)
	}
	m.send(`{"id":"q","type":"subscribe","payload":{"query":"subscription { price(symbol: \"ABC\") { price } }"}}`)
	if got := m.readRaw(); !strings.HasPrefix(got, `{"id":"q","type":"error","payload":[{"message":"upstream subscription failed: `) {
		t.Fatalf("subscription while Redis is down: %s; want its error", got)
	}

	runRedis(t, path, addr)
	waitFor(t, "go-redis to subscribe again", subscribed)
	rdb.Publish(context.Background(), "price.EVL", `{"price":3}`)
	if got, want := c.readRaw(), `{"id":"p","type":"next","payload":{"data":{"price":{"price":3}}}}`; got != want {
		t.Fatalf("after the restart: %s; want %s", got, want)
	}
}
