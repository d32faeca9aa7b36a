package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSSource is a Source on a NATS connection: core subjects, and
// JetStream durable consumers for subscriptions with a
// streamConfiguration. Subscriptions on the same stream, consumer name and
// subjects share one durable consumer, read once and delivered to each of
// them, so that each gets every event. A durable consumer keeps its place
// across a reconnect, or a restart of a server storing the stream on
// file: what was published meanwhile is delivered when the connection is
// back, and what the server delivers again (acknowledgements it lost in a
// crash) is not delivered twice.
type NATSSource struct {
	nc *nats.Conn
	js jetstream.JetStream
	// instance tells this gateway's durable consumers apart from another
	// instance's (as Cosmo names them: the consumer name, a hash of the
	// subjects, and the host and listen address).
	instance string

	mu        sync.Mutex
	consumers map[string]*jsConsumer // by stream and durable name
}

// jsConsumer is a durable consumer read by one Consume, whose messages go
// to every subscription on it.
type jsConsumer struct {
	ready chan struct{} // closed once started or failed
	err   error         // why it failed; written before ready is closed
	stop  func()        // ends the Consume; written before ready is closed
	// readers are the subscriptions, replaced (under NATSSource.mu) on
	// each change, read by the Consume's goroutine.
	readers atomic.Pointer[[]*jsReader]
	// last is the stream sequence of the last message delivered to the
	// readers: one at or below it is a redelivery (see deliver).
	last atomic.Uint64
}

type jsReader struct {
	deliver func(string, []byte)
	ended   func(error)
}

// NewNATSSource returns a Source on nc. instance names this gateway among
// others on the same NATS (host name and listen address, say): each
// instance has its own durable consumers, so each gets every event.
func NewNATSSource(nc *nats.Conn, instance string) (*NATSSource, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return &NATSSource{nc: nc, js: js, instance: instance, consumers: make(map[string]*jsConsumer)}, nil
}

// Subscribe implements Source. A core subscription delivers on the
// connection's goroutine for that subscription (nats.go keeps one per
// subscription, in order); a subscription to several subjects is several
// NATS subscriptions whose events may interleave.
func (s *NATSSource) Subscribe(ctx context.Context, subjects []string, stream *StreamConfig, deliver func(string, []byte), ended func(error)) (func(), error) {
	for _, subj := range subjects {
		if err := checkSubject(subj); err != nil {
			return nil, err
		}
	}
	if stream != nil {
		return s.consume(ctx, subjects, stream, deliver, ended)
	}
	subs := make([]*nats.Subscription, 0, len(subjects))
	var cancelled atomic.Bool
	cancel := func() {
		cancelled.Store(true)
		for _, sub := range subs {
			sub.Unsubscribe()
		}
	}
	// A subscription the connection closes (for good: it is kept while it
	// reconnects) ends, once: nats.go calls a subscription's closed handler
	// after its last message's callback returned.
	var endOnce sync.Once
	closed := func(string) {
		if !cancelled.Load() {
			endOnce.Do(func() { ended(fmt.Errorf("NATS subscription closed: %w", nats.ErrConnectionClosed)) })
		}
	}
	for _, subj := range subjects {
		sub, err := s.nc.Subscribe(subj, func(m *nats.Msg) { deliver(m.Subject, m.Data) })
		if err != nil {
			cancel()
			return nil, err
		}
		sub.SetClosedHandler(closed)
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

// consume delivers the messages of the durable consumer for subjects in
// sc's stream: it starts the consumer, or joins it if another subscription
// started it.
func (s *NATSSource) consume(ctx context.Context, subjects []string, sc *StreamConfig, deliver func(string, []byte), ended func(error)) (func(), error) {
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
	key := sc.StreamName + "\x00" + cfg.Durable
	r := &jsReader{deliver: deliver, ended: ended}
	s.mu.Lock()
	c, joined := s.consumers[key]
	if !joined {
		c = &jsConsumer{ready: make(chan struct{})}
		s.consumers[key] = c
	}
	c.setReaders(append(c.readersNow(), r))
	s.mu.Unlock()
	if !joined {
		c.stop, c.err = s.startConsumer(ctx, key, sc.StreamName, cfg, c)
		if c.err != nil {
			// The next subscription tries again.
			s.mu.Lock()
			if s.consumers[key] == c {
				delete(s.consumers, key)
			}
			s.mu.Unlock()
		}
		close(c.ready)
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		s.leave(key, c, r)
		return nil, ctx.Err()
	}
	if c.err != nil {
		s.leave(key, c, r)
		return nil, c.err
	}
	return func() { s.leave(key, c, r) }, nil
}

// startConsumer creates (or updates) the durable consumer cfg on stream
// and starts reading it into c. The function it returns stops the reading
// and returns once it has stopped: Stop only asks, and the Consume's
// goroutines unsubscribe, and finish a delivery under way, after it. A
// reading that stops by itself (the consumer deleted, the connection
// closed) ends c's readers with the error that stopped it, and c is
// forgotten, so that the next subscription starts it again.
//
// A consumer that is gone when the connection comes back (a server
// restarted without it: its stream kept in memory, or it deleted
// meanwhile) is not reported by Consume, which goes on asking it for
// messages, every 30 s, with no answer; so when a request of Consume's
// goes unanswered, or its heartbeats stop, the consumer is looked up, and
// the reading stopped if the server says it is not found.
func (s *NATSSource) startConsumer(ctx context.Context, key, stream string, cfg jetstream.ConsumerConfig, c *jsConsumer) (func(), error) {
	cons, err := s.js.CreateOrUpdateConsumer(ctx, stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %w", stream, err)
	}
	var (
		lastErr  atomic.Pointer[error]
		checking atomic.Bool
		checks   sync.WaitGroup
	)
	cc, err := cons.Consume(c.deliver, jetstream.ConsumeErrHandler(func(cc jetstream.ConsumeContext, err error) {
		lastErr.Store(&err)
		if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, jetstream.ErrNoHeartbeat) || !checking.CompareAndSwap(false, true) {
			return
		}
		checks.Go(func() {
			defer checking.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := cons.Info(ctx); errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
				lastErr.Store(&err)
				cc.Stop()
			}
		})
	}))
	if err != nil {
		return nil, err
	}
	var stopping atomic.Bool
	go func() {
		<-cc.Closed()
		if stopping.Load() {
			return
		}
		s.mu.Lock()
		if s.consumers[key] == c {
			delete(s.consumers, key)
		}
		readers := c.readersNow()
		c.setReaders(nil)
		s.mu.Unlock()
		why := errors.New("JetStream consumer stopped")
		if p := lastErr.Load(); p != nil {
			why = fmt.Errorf("JetStream consumer stopped: %w", *p)
		}
		for _, r := range readers {
			r.ended(why)
		}
	}()
	return func() {
		stopping.Store(true)
		cc.Stop()
		<-cc.Closed()
		checks.Wait()
	}, nil
}

// leave takes r off c, and stops c and forgets it when r was its last.
func (s *NATSSource) leave(key string, c *jsConsumer, r *jsReader) {
	s.mu.Lock()
	readers := slices.DeleteFunc(slices.Clone(c.readersNow()), func(x *jsReader) bool { return x == r })
	c.setReaders(readers)
	last := len(readers) == 0
	if last && s.consumers[key] == c {
		delete(s.consumers, key)
	}
	s.mu.Unlock()
	if last {
		<-c.ready // closed: the subscription that started c was a reader, and has left
		if c.stop != nil {
			c.stop()
		}
	}
}

func (c *jsConsumer) readersNow() []*jsReader {
	if p := c.readers.Load(); p != nil {
		return *p
	}
	return nil
}

// setReaders replaces c's readers. The caller holds NATSSource.mu.
func (c *jsConsumer) setReaders(readers []*jsReader) {
	readers = slices.Clip(readers) // the next append copies
	c.readers.Store(&readers)
}

// deliver hands m to each of c's readers, each with data of its own to
// keep, then acknowledges it. With no reader left (the last has left, and
// c is stopping) it is refused, to be delivered again when the durable
// consumer is read next, as the messages published after it stopped are:
// acknowledged, it would be lost to the next subscriber. A message the
// server delivers again once c delivered it or a later one (its
// acknowledgement lost with the connection, or with a server that
// stopped before storing it) is acknowledged and not delivered twice:
// the consumer delivers new messages in the stream's order.
func (c *jsConsumer) deliver(m jetstream.Msg) {
	readers := c.readersNow()
	if len(readers) == 0 {
		m.Nak()
		return
	}
	if meta, err := m.Metadata(); err == nil {
		if meta.Sequence.Stream <= c.last.Load() {
			m.Ack()
			return
		}
		c.last.Store(meta.Sequence.Stream)
	}
	for i, r := range readers {
		data := m.Data()
		if i > 0 {
			data = bytes.Clone(data)
		}
		r.deliver(m.Subject(), data)
	}
	m.Ack()
}

// Publish implements Source. It fails at once while the connection is
// being reestablished (nats.ErrConnectionReconnecting): nats.go would keep
// the message for the new connection and send it then, after the caller
// was told that the publish failed, its flush having timed out. (A
// connection lost during the publish may still send it after its error.)
func (s *NATSSource) Publish(ctx context.Context, subject string, data []byte) error {
	if err := checkSubject(subject); err != nil {
		return err
	}
	if s.nc.IsReconnecting() {
		return nats.ErrConnectionReconnecting
	}
	if err := s.nc.Publish(subject, data); err != nil {
		return err
	}
	return s.nc.FlushWithContext(ctx)
}

// maxSubjectLen bounds a subject so that the protocol lines that carry it
// (SUB, PUB, and MSG with a reply subject) fit in NATS's 4,096 bytes: past
// them the server answers "maximum control line exceeded", and nats.go
// closes the connection for good, every subscription on it.
const maxSubjectLen = 1024

// checkSubjectTemplate refuses, as the schema loads, a subject template
// that no arguments can make one subject: a wildcard, an empty token or
// white space in its text (each placeholder stands for a token's worth of
// text here), which checkSubject would refuse at every subscribe or
// publish.
func checkSubjectTemplate(t *template) error {
	var b strings.Builder
	for _, p := range t.parts {
		if p.path != nil {
			b.WriteString("x")
		} else {
			b.WriteString(p.text)
		}
	}
	if err := checkSubject(b.String()); err != nil {
		return fmt.Errorf("subject %q cannot be one NATS subject: wildcards, empty tokens and white space are refused", t.src)
	}
	return nil
}

// checkSubject refuses a subject that is empty, has empty tokens, white
// space or control characters, or wildcards: a subject rendered from a
// client's arguments must not widen a subscription to other subjects (nor
// hold a NUL, which separates subjects where consume names a durable
// consumer); nor one longer than maxSubjectLen, which would close the
// connection.
func checkSubject(subj string) error {
	if subj == "" {
		return errors.New("empty subject")
	}
	if len(subj) > maxSubjectLen {
		return fmt.Errorf("subject of %d bytes is longer than %d", len(subj), maxSubjectLen)
	}
	for _, tok := range strings.Split(subj, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsFunc(tok, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return fmt.Errorf("subject %q is not a valid NATS subject", subj)
		}
	}
	return nil
}
