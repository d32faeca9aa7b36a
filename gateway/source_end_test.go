package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

// A subscription whose upstream ends by itself (the source's connection
// closed for good, its consumer gone) ends with an error message, as
// graphql-transport-ws ends an operation that cannot go on, rather than
// wait for events that will not come; a new subscription to the same
// subjects subscribes upstream again. Before, the client was told nothing.
func TestUpstreamEnds(t *testing.T) {
	_, src, addr := startGateway(t, nil)
	c := dialSubscribe(t, addr, "1", "subscription { employeeUpdated(id: 1) { id } }")
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.1") == 1 })
	src.End("employee.1", errors.New("connection closed"))
	if got, want := c.readRaw(), `{"id":"1","type":"error","payload":[{"message":"upstream subscription ended: connection closed"}]}`; got != want {
		t.Fatalf("after the upstream ended: %s; want %s", got, want)
	}
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { id } }"}}`)
	waitFor(t, "the upstream subscription again", func() bool { return src.Subscribers("employee.1") == 1 })
	publish(t, src, "employee.1", `{"id":"1"}`)
	if got, want := c.readRaw(), `{"id":"1","type":"next","payload":{"data":{"employeeUpdated":{"id":"1"}}}}`; got != want {
		t.Fatalf("the subscription again: %s; want %s", got, want)
	}
}

// A source that ends a subscription with no error (a nil why) has no
// more events for it: each subscriber gets complete, and its id is free.
// Before, the engine's loop panicked on the nil error, and the client
// was told nothing and kept waiting.
func TestUpstreamEndsWithoutError(t *testing.T) {
	g, src, addr := startGateway(t, nil)
	c := dialSubscribe(t, addr, "1", "subscription { employeeUpdated(id: 1) { id } }")
	waitFor(t, "the upstream subscription", func() bool { return src.Subscribers("employee.1") == 1 })
	src.End("employee.1", nil)
	if got, want := c.readRaw(), `{"id":"1","type":"complete"}`; got != want {
		t.Fatalf("after the upstream ended: %s; want %s", got, want)
	}
	waitFor(t, "the trigger to end", func() bool { return g.Stats().Triggers.Load() == 0 && g.Stats().Subscriptions.Load() == 0 })
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { employeeUpdated(id: 1) { id } }"}}`)
	waitFor(t, "the upstream subscription again", func() bool { return src.Subscribers("employee.1") == 1 })
}

// NATS: a core subscription ends when its connection closes for good; a
// JetStream one when its consumer is deleted. Each subscriber gets an
// error naming why.
func TestNATSUpstreamEnds(t *testing.T) {
	schema, err := ParseSchema(testSchema)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("core", func(t *testing.T) {
		ns := startNATS(t)
		nc := natsConn(t, ns)
		src, err := NewNATSSource(nc, "ends")
		if err != nil {
			t.Fatal(err)
		}
		g, addr := serve(t, Config{Schema: schema, NATS: map[string]Source{"default": src}})
		c := dialSubscribe(t, addr, "1", "subscription { employeeUpdated(id: 1) { id } }")
		waitFor(t, "the upstream subscription", func() bool { return triggersStarted(g) == 1 })
		nc.Close()
		got := c.readRaw()
		if !strings.HasPrefix(got, `{"id":"1","type":"error","payload":[{"message":"upstream subscription ended: NATS subscription closed`) {
			t.Fatalf("after the NATS connection closed: %s; want an error for 1", got)
		}
	})
	t.Run("JetStream", func(t *testing.T) {
		ns := startNATS(t)
		nc := natsConn(t, ns)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "employees", Subjects: []string{"employee.>"}}); err != nil {
			t.Fatal(err)
		}
		src, err := NewNATSSource(nc, "ends")
		if err != nil {
			t.Fatal(err)
		}
		ended := make(chan error, 1)
		cancel, err := src.Subscribe(ctx, []string{"employee.1"}, &StreamConfig{StreamName: "employees", ConsumerName: "gw"},
			func(string, []byte) {}, func(err error) { ended <- err })
		if err != nil {
			t.Fatal(err)
		}
		defer cancel()
		stream, err := js.Stream(ctx, "employees")
		if err != nil {
			t.Fatal(err)
		}
		var name string
		for info := range stream.ListConsumers(ctx).Info() {
			name = info.Name
		}
		// The server answers the pull requests it holds when their
		// consumer is deleted (409), and drops those still queued for the
		// consumer's goroutine, which the heartbeats' stop finds 30 s
		// later: delete it once it holds the first.
		waitFor(t, "the consumer's pull request", func() bool {
			info, err := stream.Consumer(ctx, name)
			return err == nil && info.CachedInfo().NumWaiting > 0
		})
		if err := stream.DeleteConsumer(ctx, name); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-ended:
			if !errors.Is(err, jetstream.ErrConsumerDeleted) {
				t.Fatalf("ended with %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the subscription did not end when its consumer was deleted")
		}
	})
}

// Redis: a subscription ends when its client is closed.
func TestRedisUpstreamEnds(t *testing.T) {
	for name, addr := range redisServers(t) {
		t.Run(name, func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			src := NewRedisSource(rdb)
			ended := make(chan error, 1)
			cancel, err := src.Subscribe(context.Background(), []string{"price.EVL"}, nil, func(string, []byte) {}, func(err error) { ended <- err })
			if err != nil {
				t.Fatal(err)
			}
			defer cancel()
			rdb.Close()
			select {
			case err := <-ended:
				if err == nil {
					t.Fatal("ended with no error")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the subscription did not end when its client closed")
			}
		})
	}
}
