package gateway

import (
	"context"
	"sync"
)

// Source is an event system: NATS, Redis pub/sub, or memory for tests.
// Its methods may be called from any goroutine.
type Source interface {
	// Subscribe starts delivering the events published on subjects to
	// deliver, until cancel is called. deliver is called for one
	// subscription's events one at a time, in order, on the source's
	// goroutines; data is the caller's to keep. stream, if not nil, asks
	// for a durable consumer where the source has them (NATS JetStream).
	Subscribe(ctx context.Context, subjects []string, stream *StreamConfig, deliver func(subject string, data []byte)) (cancel func(), err error)
	// Publish publishes data on subject.
	Publish(ctx context.Context, subject string, data []byte) error
}

// MemorySource is a Source in memory: what is published on a subject is
// delivered to that subject's subscriptions, synchronously.
type MemorySource struct {
	mu   sync.Mutex
	subs map[string]map[*memorySub]struct{}
}

type memorySub struct {
	mu      sync.Mutex // one delivery at a time, in order
	deliver func(string, []byte)
}

// Subscribe implements Source.
func (m *MemorySource) Subscribe(_ context.Context, subjects []string, stream *StreamConfig, deliver func(string, []byte)) (func(), error) {
	if stream != nil {
		return nil, ErrNoStreams
	}
	s := &memorySub{deliver: deliver}
	m.mu.Lock()
	if m.subs == nil {
		m.subs = make(map[string]map[*memorySub]struct{})
	}
	for _, subj := range subjects {
		if m.subs[subj] == nil {
			m.subs[subj] = make(map[*memorySub]struct{})
		}
		m.subs[subj][s] = struct{}{}
	}
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		for _, subj := range subjects {
			delete(m.subs[subj], s)
			if len(m.subs[subj]) == 0 {
				delete(m.subs, subj)
			}
		}
		m.mu.Unlock()
	}, nil
}

// Publish implements Source.
func (m *MemorySource) Publish(_ context.Context, subject string, data []byte) error {
	m.mu.Lock()
	subs := make([]*memorySub, 0, len(m.subs[subject]))
	for s := range m.subs[subject] {
		subs = append(subs, s)
	}
	m.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		s.deliver(subject, append([]byte(nil), data...))
		s.mu.Unlock()
	}
	return nil
}

// Subscribers returns how many subscriptions listen on subject: for tests
// that wait until the gateway subscribed upstream.
func (m *MemorySource) Subscribers(subject string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.subs[subject])
}
