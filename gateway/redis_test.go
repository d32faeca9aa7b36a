package gateway

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/evloop/evloop/kv"
	"github.com/redis/go-redis/v9"
)

const redisSchema = `
type Subscription {
  price(symbol: String!): Quote! @edfs__redisSubscribe(channels: ["price.{{ args.symbol }}"], providerId: "prices")
}
type Mutation {
  setPrice(symbol: String!, price: Float!): edfs__PublishResult! @edfs__redisPublish(channel: "price.{{ args.symbol }}", providerId: "prices")
}
type Quote { symbol: String! price: Float! }
`

// redisServers returns the addresses to test the Redis source against:
// evkv in this process, and redis-server when it is installed.
func redisServers(t *testing.T) map[string]string {
	t.Helper()
	s, err := kv.New(kv.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	addrs := map[string]string{"evkv": a.String()}
	if path, err := exec.LookPath("redis-server"); err == nil {
		port := testpeer.FreePort(t)
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		addr := "127.0.0.1:" + strconv.Itoa(port)
		waitFor(t, "redis-server", func() bool {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				c.Close()
			}
			return err == nil
		})
		addrs["redis-server"] = addr
	}
	return addrs
}

// Subscriptions fed by Redis pub/sub, and mutations publishing to it, on
// evkv and on Redis itself.
func TestRedisSource(t *testing.T) {
	schema, err := ParseSchema(redisSchema)
	if err != nil {
		t.Fatal(err)
	}
	for name, addr := range redisServers(t) {
		t.Run(name, func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			defer rdb.Close()
			_, addr := serve(t, Config{Schema: schema, Redis: map[string]Source{"prices": NewRedisSource(rdb)}})
			c := dial(t, addr, ProtocolTransportWS)
			c.init()
			c.send(`{"id":"p","type":"subscribe","payload":{"query":"subscription { price(symbol: \"EVL\") { symbol price } }"}}`)
			waitFor(t, "the Redis subscription", func() bool {
				n, _ := rdb.PubSubNumSub(context.Background(), "price.EVL").Result()
				return n["price.EVL"] == 1
			})
			if err := rdb.Publish(context.Background(), "price.EVL", `{"symbol":"EVL","price":1.5}`).Err(); err != nil {
				t.Fatal(err)
			}
			if got, want := c.readRaw(), `{"id":"p","type":"next","payload":{"data":{"price":{"symbol":"EVL","price":1.5}}}}`; got != want {
				t.Fatalf("next = %s; want %s", got, want)
			}
			c.send(`{"id":"m","type":"subscribe","payload":{"query":"mutation { setPrice(symbol: \"EVL\", price: 2.25) { success } }"}}`)
			got := map[string]bool{}
			for range 3 { // next and complete of the mutation, next of the subscription
				got[c.readRaw()] = true
			}
			for _, want := range []string{
				`{"id":"m","type":"next","payload":{"data":{"setPrice":{"success":true}}}}`,
				`{"id":"m","type":"complete"}`,
				`{"id":"p","type":"next","payload":{"data":{"price":{"symbol":"EVL","price":2.25}}}}`,
			} {
				if !got[want] {
					t.Fatalf("messages %v lack %s", got, want)
				}
			}
		})
	}
}
