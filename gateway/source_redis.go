package gateway

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// RedisSource is a Source on Redis pub/sub (Redis itself, or evkv). A
// subscription goes on across a restart of the server: go-redis
// subscribes again once it is back, and what was published before then
// is lost to it, as pub/sub keeps nothing. It ends by itself only when
// the client is closed. While the server is unreachable, Publish and
// Subscribe fail with the client's error (a mutation gets it in its
// result, a subscription in an error message).
type RedisSource struct {
	rdb redis.UniversalClient
}

// NewRedisSource returns a Source on rdb.
func NewRedisSource(rdb redis.UniversalClient) *RedisSource { return &RedisSource{rdb: rdb} }

// Subscribe implements Source: one pub/sub connection per subscription,
// read by one goroutine.
func (s *RedisSource) Subscribe(ctx context.Context, channels []string, stream *StreamConfig, deliver func(string, []byte), ended func(error)) (func(), error) {
	if stream != nil {
		return nil, ErrNoStreams
	}
	ps := s.rdb.Subscribe(ctx, channels...)
	// Subscribe returns before the server confirmed; wait for every
	// channel's confirmation so that no later event is missed.
	for range channels {
		if _, err := ps.Receive(ctx); err != nil {
			ps.Close()
			return nil, err
		}
	}
	done := make(chan struct{})
	var cancelled atomic.Bool
	go func() {
		defer close(done)
		for m := range ps.Channel() {
			deliver(m.Channel, []byte(m.Payload))
		}
		// The channel closes with the PubSub: by cancel, or with the
		// client (go-redis reconnects a PubSub otherwise).
		if !cancelled.Load() {
			ended(errors.New("redis: subscription closed"))
		}
	}()
	return func() { cancelled.Store(true); ps.Close(); <-done }, nil
}

// Publish implements Source.
func (s *RedisSource) Publish(ctx context.Context, channel string, data []byte) error {
	return s.rdb.Publish(ctx, channel, data).Err()
}
