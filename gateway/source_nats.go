package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSSource is a Source on a NATS connection: core subjects, and
// JetStream durable consumers for subscriptions with a
// streamConfiguration.
type NATSSource struct {
	nc *nats.Conn
	js jetstream.JetStream
	// instance tells this gateway's durable consumers apart from another
	// instance's (as Cosmo names them: the consumer name, a hash of the
	// subjects, and the host and listen address).
	instance string
}

// NewNATSSource returns a Source on nc. instance names this gateway among
// others on the same NATS (host name and listen address, say): each
// instance has its own durable consumers, so each gets every event.
func NewNATSSource(nc *nats.Conn, instance string) (*NATSSource, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return &NATSSource{nc: nc, js: js, instance: instance}, nil
}

// Subscribe implements Source. A core subscription delivers on the
// connection's goroutine for that subscription (nats.go keeps one per
// subscription, in order); a subscription to several subjects is several
// NATS subscriptions whose events may interleave.
func (s *NATSSource) Subscribe(ctx context.Context, subjects []string, stream *StreamConfig, deliver func(string, []byte)) (func(), error) {
	for _, subj := range subjects {
		if err := checkSubject(subj); err != nil {
			return nil, err
		}
	}
	if stream != nil {
		return s.consume(ctx, subjects, stream, deliver)
	}
	subs := make([]*nats.Subscription, 0, len(subjects))
	cancel := func() {
		for _, sub := range subs {
			sub.Unsubscribe()
		}
	}
	for _, subj := range subjects {
		sub, err := s.nc.Subscribe(subj, func(m *nats.Msg) { deliver(m.Subject, m.Data) })
		if err != nil {
			cancel()
			return nil, err
		}
		// A slow gateway is told by the connection's error handler rather
		// than losing events silently at the library's default limits.
		sub.SetPendingLimits(1<<20, 256<<20)
		subs = append(subs, sub)
	}
	// The subscription is in place on the server once the flush returns,
	// so an event published after Subscribe returns is not missed.
	if err := s.nc.FlushWithContext(ctx); err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}

func (s *NATSSource) consume(ctx context.Context, subjects []string, sc *StreamConfig, deliver func(string, []byte)) (func(), error) {
	sorted := slices.Sorted(slices.Values(subjects))
	h := sha256.Sum256([]byte(strings.Join(sorted, "\x00") + "\x00" + s.instance))
	cfg := jetstream.ConsumerConfig{
		Durable:        sc.ConsumerName + "-" + hex.EncodeToString(h[:8]),
		FilterSubjects: sorted,
		AckPolicy:      jetstream.AckExplicitPolicy,
	}
	if sc.InactiveThreshold > 0 {
		cfg.InactiveThreshold = time.Duration(sc.InactiveThreshold) * time.Second
	}
	cons, err := s.js.CreateOrUpdateConsumer(ctx, sc.StreamName, cfg)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %w", sc.StreamName, err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		deliver(m.Subject(), m.Data())
		m.Ack()
	})
	if err != nil {
		return nil, err
	}
	return cc.Stop, nil
}

// Publish implements Source.
func (s *NATSSource) Publish(ctx context.Context, subject string, data []byte) error {
	if err := checkSubject(subject); err != nil {
		return err
	}
	if err := s.nc.Publish(subject, data); err != nil {
		return err
	}
	return s.nc.FlushWithContext(ctx)
}

// checkSubject refuses a subject that is empty, has empty tokens or white
// space, or wildcards: a subject rendered from a client's arguments must
// not widen a subscription to other subjects.
func checkSubject(subj string) error {
	if subj == "" {
		return errors.New("empty subject")
	}
	for _, tok := range strings.Split(subj, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n") {
			return fmt.Errorf("subject %q is not a valid NATS subject", subj)
		}
	}
	return nil
}
