package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/internal/drain"
	"github.com/evloop/evloop/internal/loop"
	"github.com/evloop/evloop/internal/workpool"
	"github.com/evloop/evloop/ws"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The engine owns every trigger and every subscriber's place in one: its
// maps are touched only on its own loop goroutine, so they need no lock.
//
//	client loop ──add/remove──► engine loop ◄──event── source goroutine
//	                              │    ▲
//	                       resolve│    │resolved (next event of the trigger)
//	                              ▼    │
//	                           worker pool ──frames──► each client loop
//
// An event is decoded once per trigger, projected once per distinct
// selection set (and filter), and the one payload is written by each loop
// to its own subscribers. A trigger resolves one event at a time, so every
// subscriber sees its events in the order the source delivered them.
type engine struct {
	l       *loop.Loop
	pool    *workpool.Pool
	sources map[providerKey]Source
	log     *slog.Logger
	stats   *Stats

	triggers map[string]*trigger // owned by the loop
	// maxQueue bounds a trigger's events waiting to be resolved; past it
	// the oldest are dropped (and counted).
	maxQueue int
	// dropLogEvery is how often the log says how many events a trigger
	// that goes on dropping them dropped.
	dropLogEvery time.Duration
	// maxOutbound bounds a subscriber's connection's unsent bytes; past it
	// the connection is closed as a slow consumer.
	maxOutbound int
	// upstreamTimeout bounds the start of an upstream subscription.
	upstreamTimeout time.Duration
	// up resolves entities' fields the events do not carry, if set.
	up *upstream

	// ctx is the context of every upstream call; stop cancels it, so
	// that subscriptions still starting and fetches give up.
	ctx    context.Context
	cancel context.CancelFunc
	// calls counts the goroutines that start or end upstream
	// subscriptions, for stop to wait on.
	calls drain.Count
}

// trigger is one upstream subscription shared by every subscriber whose
// provider, rendered subjects, stream and root field are the same.
type trigger struct {
	key      string
	src      Source
	subjects []string
	stream   *StreamConfig
	headers  map[string]string // forwarded to the upstream
	groups   map[string]*group
	n        int    // subscribers
	cancel   func() // ends the upstream subscription once started
	started  bool
	dead     bool     // removed from the engine
	queue    [][]byte // events waiting
	busy     bool     // an event is being resolved
	// unwritten counts the events handed to the pool whose messages
	// the loops have not all written yet (the one being resolved too).
	unwritten int
	view      *view // snapshot for the pool; nil when groups changed
	// dropped counts the events dropped from a full queue since the
	// log last said how many, at dropSince; dropLog is the timer that
	// will say it, zero when t has not dropped any since the last report.
	dropped   int
	dropSince time.Time
	dropLog   loop.TimerID
}

// group is a trigger's subscribers that share one projection, filter and
// fetch of entities, and so one payload per event; by loop, for the loops
// to write.
type group struct {
	key   string
	proj  *projection
	flt   *filter
	fetch *entityFetch
	loops map[int]*loopSubs
}

type loopSubs struct {
	submit func(func()) error
	subs   map[*subscriber]struct{}
}

// view is an immutable snapshot of a trigger's groups, read by the pool.
type view struct {
	groups  []groupView
	fetches []*entityFetch    // the groups' upstream fetches, one per selection
	headers map[string]string // forwarded to the upstream
}

type groupView struct {
	proj  *projection
	flt   *filter
	fetch int // the group's fetch in view.fetches, or -1
	loops []loopView
}

type loopView struct {
	submit func(func()) error
	subs   []*subscriber
}

func newEngine(pool *workpool.Pool, sources map[providerKey]Source, log *slog.Logger, stats *Stats) (*engine, error) {
	l, err := loop.New(loop.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	e := &engine{
		l: l, pool: pool, sources: sources, log: log, stats: stats,
		triggers: make(map[string]*trigger), maxQueue: 4096, dropLogEvery: 10 * time.Second, maxOutbound: 1 << 20,
		upstreamTimeout: 10 * time.Second,
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if err := l.Start(); err != nil {
		return nil, err
	}
	return e, nil
}

// stop ends every upstream subscription and the engine's loop: a
// subscription still starting is given up (its context is cancelled) or,
// if its source completes it all the same, ended at once. It returns when
// the sources have ended them all, or with ctx's error if ctx ends first.
func (e *engine) stop(ctx context.Context) error {
	done := make(chan struct{})
	if e.l.Submit(func() {
		for _, t := range e.triggers {
			e.drop(t)
		}
		close(done)
	}) == nil {
		<-done
	}
	e.cancel()
	// Once the loop has stopped, only the goroutines counted already call
	// upstream: the count can only fall.
	e.l.Stop()
	return e.calls.Wait(ctx)
}

// goUpstream runs f on a goroutine of its own, counted for stop.
func (e *engine) goUpstream(f func()) {
	e.calls.Add(1)
	go func() {
		defer e.calls.Add(-1)
		f()
	}()
}

// triggerKey is what makes two subscriptions share a trigger. Each part
// is written after its length, so that no subject or header value, which
// may come from a client and hold any byte, can spell another set of them.
func triggerKey(src providerKey, field string, subjects []string, stream *StreamConfig, headers map[string]string) string {
	var b []byte
	part := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	part(src.String())
	part(field)
	sorted := slices.Sorted(slices.Values(subjects))
	b = strconv.AppendInt(b, int64(len(sorted)), 10)
	b = append(b, 's')
	for _, s := range sorted {
		part(s)
	}
	if stream != nil {
		b = append(b, 'j')
		part(stream.StreamName)
		part(stream.ConsumerName)
	}
	b = append(b, 'h')
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		part(k)
		part(headers[k])
	}
	return string(b)
}

// add places sub in its trigger, starting the trigger if it is new. It
// runs on the engine's loop.
func (e *engine) add(sub *subscriber) {
	t := e.triggers[sub.trigger]
	if t == nil {
		t = &trigger{
			key: sub.trigger, src: e.sources[sub.op.provider], subjects: sub.op.subjects,
			stream: sub.op.bind.stream, headers: sub.s.headers, groups: make(map[string]*group),
		}
		e.triggers[t.key] = t
		e.stats.Triggers.Add(1)
		e.start(t)
	}
	gkey := sub.op.group
	g := t.groups[gkey]
	if g == nil {
		g = &group{key: gkey, proj: sub.op.proj, flt: sub.op.flt, fetch: sub.op.fetch, loops: make(map[int]*loopSubs)}
		t.groups[gkey] = g
	}
	ls := g.loops[sub.loop]
	if ls == nil {
		ls = &loopSubs{submit: sub.s.wc.Submit, subs: make(map[*subscriber]struct{})}
		g.loops[sub.loop] = ls
	}
	ls.subs[sub] = struct{}{}
	sub.t, sub.g = t, g
	t.n++
	e.stats.Subscriptions.Add(1)
	t.view = nil
}

// remove takes sub out of its trigger, ending the trigger when it was the
// last. It runs on the engine's loop.
func (e *engine) remove(sub *subscriber) {
	t, g := sub.t, sub.g
	if t == nil {
		return
	}
	e.stats.Subscriptions.Add(-1)
	if t.dead {
		return
	}
	ls := g.loops[sub.loop]
	delete(ls.subs, sub)
	if len(ls.subs) == 0 {
		delete(g.loops, sub.loop)
		if len(g.loops) == 0 {
			delete(t.groups, g.key)
		}
	}
	sub.t, sub.g = nil, nil
	t.view = nil
	if t.n--; t.n == 0 {
		e.drop(t)
	}
}

// drop ends trigger t.
func (e *engine) drop(t *trigger) {
	t.dead = true
	delete(e.triggers, t.key)
	e.stats.Triggers.Add(-1)
	if t.cancel != nil {
		e.goUpstream(t.cancel) // it may wait on the network
	}
	if t.dropLog != 0 {
		e.l.CancelTimer(t.dropLog)
		e.reportDrops(t) // the drops since the last report, as t ends
	}
}

// start subscribes upstream, off the loop.
func (e *engine) start(t *trigger) {
	e.goUpstream(func() {
		ctx, stop := context.WithTimeout(e.ctx, e.upstreamTimeout)
		defer stop()
		cancel, err := t.src.Subscribe(ctx, t.subjects, t.stream, func(_ string, data []byte) {
			e.stats.EventsIn.Add(1)
			e.l.Submit(func() { e.push(t, data) })
		}, func(err error) {
			e.l.Submit(func() { e.ended(t, err) })
		})
		if e.l.Submit(func() { e.started(t, cancel, err) }) != nil && err == nil {
			cancel() // the engine has stopped, and ended t
		}
	})
}

func (e *engine) started(t *trigger, cancel func(), err error) {
	if err != nil {
		e.log.Warn("gateway: upstream subscription failed", "subjects", t.subjects, "err", err)
		e.failAll(t, "upstream subscription failed: "+err.Error())
		return
	}
	if t.dead {
		e.goUpstream(cancel)
		return
	}
	t.cancel, t.started = cancel, true
}

// ended runs when t's upstream subscription ended by itself (the source's
// connection closed for good, its consumer gone): its subscribers are
// told with an error, as the protocol has an operation that cannot go on
// end, rather than wait for events that will not come; a client that
// subscribes again starts a new trigger. A source that ends it with no
// error has no more events for it: its subscribers complete.
func (e *engine) ended(t *trigger, err error) {
	if err == nil {
		e.log.Info("gateway: upstream subscription completed", "subjects", t.subjects)
		e.endAll(t, func(s *subscriber) { s.s.complete(s) })
		return
	}
	e.log.Warn("gateway: upstream subscription ended", "subjects", t.subjects, "err", err)
	e.failAll(t, "upstream subscription ended: "+err.Error())
}

// failAll ends every subscriber of t with an error saying msg, and t.
func (e *engine) failAll(t *trigger, msg string) {
	e.endAll(t, func(s *subscriber) { s.s.fail(s, gqlerror.List{gqlerror.Errorf("%s", msg)}) })
}

// endAll ends every subscriber of t with end, run on its loop, and t.
func (e *engine) endAll(t *trigger, end func(*subscriber)) {
	if t.dead {
		return
	}
	for _, g := range t.groups {
		for _, ls := range g.loops {
			subs := make([]*subscriber, 0, len(ls.subs))
			for s := range ls.subs {
				subs = append(subs, s)
			}
			ls.submit(func() {
				for _, s := range subs {
					end(s)
				}
			})
		}
	}
	e.drop(t)
}

// push queues an event of t's and resolves it when t is idle.
func (e *engine) push(t *trigger, data []byte) {
	if t.dead {
		return
	}
	if len(t.queue) >= e.maxQueue {
		t.queue = t.queue[1:]
		e.dropped(t)
	}
	t.queue = append(t.queue, data)
	e.next(t)
}

// dropped counts an event dropped from t's full queue. The first of an
// episode is logged at once, and every dropLogEvery after it how many
// were dropped since, until an interval drops none or t ends: a line or
// two an interval, however many events a busy trigger drops.
func (e *engine) dropped(t *trigger) {
	e.stats.EventsDropped.Add(1)
	t.dropped++
	if t.dropLog != 0 {
		return
	}
	e.log.Warn("gateway: a trigger's queue is full; dropping its oldest events",
		"subjects", t.subjects, "queue", e.maxQueue)
	t.dropSince = time.Now()
	t.dropLog = e.l.AfterFunc(e.dropLogEvery, func() { e.reportDrops(t) })
}

// reportDrops says how many events t dropped since the last report and,
// if it dropped any and has not ended, sets the timer for the next.
func (e *engine) reportDrops(t *trigger) {
	t.dropLog = 0
	if t.dropped == 0 {
		return
	}
	e.log.Warn("gateway: events a trigger dropped",
		"subjects", t.subjects, "dropped", t.dropped, "over", time.Since(t.dropSince).Round(time.Millisecond))
	t.dropped, t.dropSince = 0, time.Now()
	if !t.dead {
		t.dropLog = e.l.AfterFunc(e.dropLogEvery, func() { e.reportDrops(t) })
	}
}

// maxUnwritten bounds a trigger's events resolved, or being resolved,
// whose messages the loops have not all written: the next waits in the
// trigger's queue (bounded by maxQueue) rather than in the loops' task
// queues, where it would hold up every other trigger's messages on those
// loops behind a burst's, and their memory without bound. Enough are
// let through that the pool resolves while the loops write: with 4, a
// trigger of 200 subscribers on busy loops fell behind at 1,000 events/s.
const maxUnwritten = 64

// next hands t's oldest waiting event to the pool, unless one is being
// resolved or maxUnwritten are not yet written.
func (e *engine) next(t *trigger) {
	if t.busy || t.unwritten >= maxUnwritten || len(t.queue) == 0 || t.dead {
		return
	}
	data := t.queue[0]
	t.queue[0] = nil
	t.queue = t.queue[1:]
	if len(t.queue) == 0 {
		t.queue = nil
	}
	t.busy = true
	t.unwritten++
	v := t.snapshot()
	e.pool.Submit(func() {
		e.resolve(v, data, func() {
			e.l.Submit(func() { t.unwritten--; e.next(t) })
		})
		e.l.Submit(func() { t.busy = false; e.next(t) })
	})
}

// snapshot returns t's groups as a view the pool may read.
func (t *trigger) snapshot() *view {
	if t.view != nil {
		return t.view
	}
	v := &view{groups: make([]groupView, 0, len(t.groups)), headers: t.headers}
	fetches := map[string]int{} // by selection
	for _, g := range t.groups {
		gv := groupView{proj: g.proj, flt: g.flt, fetch: -1}
		if g.fetch != nil {
			i, ok := fetches[g.fetch.selection]
			if !ok {
				i = len(v.fetches)
				fetches[g.fetch.selection] = i
				v.fetches = append(v.fetches, g.fetch)
			}
			gv.fetch = i
		}
		for _, ls := range g.loops {
			lv := loopView{submit: ls.submit, subs: make([]*subscriber, 0, len(ls.subs))}
			for s := range ls.subs {
				lv.subs = append(lv.subs, s)
			}
			gv.loops = append(gv.loops, lv)
		}
		v.groups = append(v.groups, gv)
	}
	t.view = v
	return v
}

// resolve decodes one event, projects it for each group and hands each
// payload to the loops of the group's subscribers; written runs once
// every loop has written its messages (at once if there are none). It
// runs on the pool.
func (e *engine) resolve(v *view, data []byte, written func()) {
	// left counts the loops still to write, and resolve itself until it
	// has handed every payload out.
	var left atomic.Int32
	left.Store(1)
	defer func() {
		if left.Add(-1) == 0 {
			written()
		}
	}()
	event, err := decodeEvent(data)
	var bad []byte
	if err != nil {
		e.stats.EventsInvalid.Add(1)
		bad = appendErrorsResult(nil, "invalid event: "+err.Error())
	}
	var fetches []fetched
	if err == nil && len(v.fetches) > 0 {
		fetches = e.fetch(event, v)
	}
	for _, g := range v.groups {
		gevent, fetchErr := event, error(nil)
		if g.fetch >= 0 && fetches != nil {
			gevent, fetchErr = fetches[g.fetch].event, fetches[g.fetch].err
		}
		pb := getBuffer()
		if !e.payload(pb, g, gevent, bad, fetchErr) {
			pb.release()
			continue
		}
		// The payload goes back to the pool when the last loop wrote it.
		pb.refs.Store(int32(len(g.loops)))
		for _, lv := range g.loops {
			subs := lv.subs
			left.Add(1)
			if lv.submit(func() {
				e.deliver(subs, pb.b)
				pb.release()
				if left.Add(-1) == 0 {
					written()
				}
			}) != nil {
				pb.release()
				left.Add(-1) // resolve holds one: never the last
			}
		}
	}
}

// errFetchPanicked is what subscribers are told when fetching an event's
// entities panicked; the log has the panic.
var errFetchPanicked = errors.New("internal error fetching the entities")

// fetch returns, for each of v's fetches, event completed with the
// entity's fields it fetches from the upstream, or event and the error
// that kept them from it, counting a request that failed in whole or in
// part. A panic in it (a bug) is logged and makes every fetch fail with
// errFetchPanicked.
func (e *engine) fetch(event any, v *view) (out []fetched) {
	failAll := func(err error) []fetched {
		out := make([]fetched, len(v.fetches))
		for i := range out {
			out[i] = fetched{event: event, err: err}
		}
		return out
	}
	defer func() {
		if p := recover(); p != nil {
			e.stats.ResolvePanics.Add(1)
			e.log.Error("gateway: panic fetching an event's entities", "panic", p, "stack", string(debug.Stack()))
			out = failAll(errFetchPanicked)
		}
	}()
	ctx, cancel := context.WithTimeout(e.ctx, e.upstreamTimeout)
	defer cancel()
	out, err := e.up.fetchEntities(ctx, event, v.fetches, v.headers)
	if err != nil {
		out = failAll(err)
	}
	if slices.ContainsFunc(out, func(f fetched) bool { return f.err != nil }) {
		e.stats.UpstreamErrors.Add(1)
	}
	return out
}

// payload writes to pb what g's subscribers get for event: bad if the
// event is invalid, else the event as g's selection projects it, with
// fetchErr if g's fetch of entities failed. It reports false if
// g's filter keeps event from them. A panic in filtering or projecting (a
// bug) is logged, and they get an error result in place of the event:
// the other groups' subscribers and the later events are not disturbed.
func (e *engine) payload(pb *buffer, g groupView, event any, bad []byte, fetchErr error) (send bool) {
	defer func() {
		if p := recover(); p != nil {
			e.stats.ResolvePanics.Add(1)
			e.log.Error("gateway: panic projecting an event", "panic", p, "stack", string(debug.Stack()))
			pb.b = appendErrorsResult(pb.b[:0], "internal error resolving the event")
			send = true
		}
	}()
	switch {
	case bad != nil:
		pb.b = append(pb.b, bad...)
	case !g.flt.match(event):
		return false
	case fetchErr != nil:
		pb.b = append(pb.b, spliceError(g.proj.appendResult(nil, event), fetchErr.Error())...)
	default:
		pb.b = g.proj.appendResult(pb.b, event)
	}
	return true
}

// buffer is a pooled payload or message buffer. A payload is shared by the
// loops that write it; refs counts those still to.
type buffer struct {
	b    []byte
	refs atomic.Int32
}

var buffers = sync.Pool{New: func() any { return &buffer{b: make([]byte, 0, 1024)} }}

// getBuffer returns an empty buffer with one reference.
func getBuffer() *buffer {
	pb := buffers.Get().(*buffer)
	pb.b = pb.b[:0]
	pb.refs.Store(1)
	return pb
}

// release drops one reference; the last returns the buffer to the pool
// (unless it grew past 64 KiB: a rare large event should not stay pinned).
func (pb *buffer) release() {
	if pb.refs.Add(-1) <= 0 && cap(pb.b) <= 64<<10 {
		buffers.Put(pb)
	}
}

// deliver writes payload to subs, on their loop. Each message is framed
// from a pooled buffer; WriteMessage copies it.
func (e *engine) deliver(subs []*subscriber, payload []byte) {
	mb := getBuffer()
	buf := mb.b
	delivered := 0
	for _, s := range subs {
		if s.done || s.s.gone {
			continue
		}
		buf = s.s.proto.appendNext(buf[:0], s.id, payload)
		if err := s.s.wc.WriteMessage(ws.Text, buf); err != nil {
			if errors.Is(err, evloop.ErrOutboundFull) {
				s.s.slow()
			}
			continue
		}
		delivered++
		s.s.queued(e.maxOutbound)
	}
	// One shared counter update per call, not per subscriber: every loop
	// delivers at once.
	e.stats.Deliveries.Add(int64(delivered))
	mb.b = buf
	mb.release()
}

// decodeEvent decodes an event's JSON, keeping numbers as they were
// written. An event must be one JSON value.
func decodeEvent(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errTrailingData
	}
	return v, nil
}

var errTrailingData = errors.New("more than one JSON value")

// appendErrorsResult appends an execution result with no data and one
// error.
func appendErrorsResult(dst []byte, msg string) []byte {
	dst = append(dst, `{"data":null,"errors":[{"message":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, "}]}"...)
}

// Stats counts what a Gateway does. Its fields may be read at any time.
type Stats struct {
	Connections    atomic.Int64 // open WebSocket connections
	Subscriptions  atomic.Int64 // active subscriptions
	Triggers       atomic.Int64 // active upstream subscriptions
	EventsIn       atomic.Int64 // events received from sources
	EventsInvalid  atomic.Int64 // events that were not JSON
	EventsDropped  atomic.Int64 // events dropped from a full trigger queue
	Deliveries     atomic.Int64 // next messages queued to clients
	SlowConsumers  atomic.Int64 // connections closed for not reading
	Published      atomic.Int64 // events published by mutations
	UpstreamErrors atomic.Int64 // failed entity fetches
	ResolvePanics  atomic.Int64 // panics filtering, fetching for or projecting an event (bugs)
}
