package gateway

import (
	"context"
	"sync"
)

// Source is an event system: NATS, Redis pub/sub, or memory for tests.
// Its methods may be called from any goroutine.
type Source interface {
	// Subscribe starts delivering the events published on subjects to
	// deliver, until cancel is called, or until the source ends the
	// subscription by itself (its connection closed for good, its
	// consumer gone): then ended is called once, with why (nil: the
	// subscription is complete, its subscribers get complete), after the
	// last deliver, and nothing follows; cancel may still be called. deliver
	// is called for one subscription's events one at a time, in order, on
	// the source's goroutines; data is the caller's to keep. stream, if
	// not nil, asks for a durable consumer where the source has them (NATS
	// JetStream).
	Subscribe(ctx context.Context, subjects []string, stream *StreamConfig, deliver func(subject string, data []byte), ended func(error)) (cancel func(), err error)
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
	mu       sync.Mutex // one delivery at a time, in order
	deliver  func(string, []byte)
	ended    func(error)
	subjects []string
	over     bool // ended: nothing more is delivered (under mu)
}

// Subscribe implements Source. Its subscriptions end by themselves only
// with End.
func (m *MemorySource) Subscribe(_ context.Context, subjects []string, stream *StreamConfig, deliver func(string, []byte), ended func(error)) (func(), error) {
	if stream != nil {
		return nil, ErrNoStreams
	}
	s := &memorySub{deliver: deliver, ended: ended, subjects: subjects}
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
		m.remove(s)
		m.mu.Unlock()
	}, nil
}

// remove takes s off its subjects. The caller holds m.mu.
func (m *MemorySource) remove(s *memorySub) {
	for _, subj := range s.subjects {
		delete(m.subs[subj], s)
		if len(m.subs[subj]) == 0 {
			delete(m.subs, subj)
		}
	}
}

// End ends the subscriptions on subject as a source whose connection
// closed for good does: each is taken off its subjects, and its ended is
// called with err, after any delivery under way.
func (m *MemorySource) End(subject string, err error) {
	m.mu.Lock()
	var subs []*memorySub
	for s := range m.subs[subject] {
		subs = append(subs, s)
		m.remove(s)
	}
	m.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		s.over = true
		s.ended(err)
		s.mu.Unlock()
	}
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
		if !s.over {
			s.deliver(subject, append([]byte(nil), data...))
		}
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
