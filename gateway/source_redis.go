package gateway

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// RedisSource is a Source on Redis pub/sub (Redis itself, or evkv).
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
