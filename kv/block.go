package kv

import (
	"math"
	"runtime/debug"
	"slices"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/resp"
)

// blockState is what a client blocked by BLPOP and its kin waits for.
type blockState struct {
	db    *db
	keys  []string
	timer evloop.Timer
	armed bool
	// serve tries to answer from key, which received data, writing the
	// reply to s.w, and reports whether it did (the key may hold the wrong
	// type or be empty again by now).
	serve func(key []byte) bool
	// timedOut writes the reply for a timeout.
	timedOut func()
	// cmd is the command that blocked, took how long it ran then, and args
	// its arguments, kept while the slow log is on: as Redis does, a
	// command served when data comes is timed then (its histogram, the
	// slow log), for the time it ran at first and while it was served, not
	// while it waited.
	cmd  *command
	took time.Duration
	args [][]byte
}

// readyKey is a key that received data while clients were blocked on it.
type readyKey struct {
	db  *db
	key string
}

// parseTimeout parses a blocking command's timeout: seconds, fractions
// allowed; 0 waits forever.
func (s *Server) parseTimeout(b []byte) (time.Duration, bool) {
	sec, ok := parseLongDouble(b)
	if !ok {
		s.w.Error(errTimeout)
		return 0, false
	}
	ms := timeoutMillis(sec)
	if ms < 0 {
		s.w.Error(errNegTimeout)
		return 0, false
	}
	if ms > math.MaxInt64/int64(time.Millisecond) {
		ms = math.MaxInt64 / int64(time.Millisecond) // about 292 years
	}
	return time.Duration(ms) * time.Millisecond, true
}

// block makes c wait for data on keys: serve runs when one of them
// receives some, timedOut when timeout (0: never) passes first. In a
// transaction, where nothing blocks, timedOut answers at once.
func (s *Server) block(c *client, keys [][]byte, timeout time.Duration, serve func(key []byte) bool, timedOut func()) {
	if s.inExec || s.replay {
		timedOut()
		return
	}
	b := &blockState{db: c.db, serve: serve, timedOut: timedOut}
	if c.db.blocking == nil {
		c.db.blocking = make(map[string][]*client)
	}
	// A key named twice counts once. Past a few keys, a set finds the
	// repeats, where comparing each key with those before would take
	// seconds of the loop for a BLPOP of 100,000.
	var seen map[string]struct{}
	if len(keys) > 8 {
		seen = make(map[string]struct{}, len(keys))
	}
	for _, k := range keys {
		key := string(k)
		if seen != nil {
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
		} else if slices.Contains(b.keys, key) {
			continue
		}
		b.keys = append(b.keys, key)
		c.db.blocking[key] = append(c.db.blocking[key], c)
	}
	notePeak(c.db.blocking, &c.db.blockingPeak)
	if timeout > 0 {
		b.timer = s.ev.AfterFunc(0, timeout, func() { s.unblockTimeout(c) })
		b.armed = true
	}
	c.block = b
}

// unblock releases c from waiting, if it was, without a reply.
func (s *Server) unblock(c *client) {
	b := c.block
	if b == nil {
		return
	}
	c.block = nil
	if b.armed {
		b.timer.Stop()
	}
	for _, key := range b.keys {
		list := b.db.blocking[key]
		for i, o := range list {
			if o == c {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(b.db.blocking, key)
		} else {
			b.db.blocking[key] = list
		}
	}
	b.db.blocking = shrunk(b.db.blocking, &b.db.blockingPeak)
}

// answer runs reply, which writes the reply of the blocked client c to
// s.w as c's commands do, and sends what it wrote to c; it reports what
// reply does. It may run while another client is being served (CLIENT
// UNBLOCK): the replies s.w holds for that one stay for it. A panic in
// reply is c's: c is released from waiting and closed, what reply wrote is
// not sent, and the client being served, if any, goes on.
func (s *Server) answer(c *client, reply func() bool) (answered bool) {
	w, cur, running := s.w, s.cur, s.running
	s.w, s.cur = resp.Writer{Buf: s.bw[:0], Proto: c.proto, OnError: s.countError}, c
	defer func() {
		v := recover()
		s.bw = s.w.Buf[:0]
		s.w, s.cur, s.running = w, cur, running
		if v != nil {
			s.ow.Reset()
			s.log.Error("kv: panic answering a blocked client; closing it", "client", c.id,
				"panic", v, "stack", string(debug.Stack()))
			s.closeClient(c)
			answered = false
		}
	}()
	// As a command runs: the invalidations its own changes give c wait for
	// its reply.
	s.running++
	ok := reply()
	s.running = running
	if !ok {
		return false
	}
	if len(c.pendingInval) > 0 {
		s.sendPendingInvalidations(c)
	}
	s.endCommand(c, 0)
	s.flushReply(c)
	return true
}

// wake goes on with c's pipeline, if it has one, after its wait ended.
func (s *Server) wake(c *client) {
	if !c.closed && c.conn.InboundBuffered() > 0 {
		c.conn.Wake()
	}
}

// unblockTimeout answers a blocked client whose time ran out.
func (s *Server) unblockTimeout(c *client) {
	b := c.block
	if b == nil || c.closed {
		return
	}
	s.unblock(c)
	if s.answer(c, func() bool { b.timedOut(); return true }) {
		s.wake(c)
	}
}

// unblockWithError answers a blocked client with an error (CLIENT UNBLOCK).
func (s *Server) unblockWithError(c *client, msg string) {
	if c.block == nil {
		return
	}
	s.unblock(c)
	w, send := s.to(c, false)
	w.Error(msg)
	send()
	c.nextCommand()
	c.track &^= trackCaching // CLIENT CACHING's word was for the command that blocked
	s.wake(c)
}

// signalReady notes that key received data, for the clients blocked on it.
func (s *Server) signalReady(d *db, key []byte) {
	if len(d.blocking[string(key)]) == 0 {
		return
	}
	for _, r := range s.ready {
		if r.db == d && r.key == string(key) {
			return
		}
	}
	s.ready = append(s.ready, readyKey{db: d, key: string(key)})
}

// signalAllReady is signalReady for every key of d clients wait on (after
// SWAPDB).
func (s *Server) signalAllReady(d *db) {
	for key := range d.blocking {
		s.signalReady(d, []byte(key))
	}
}

// handleReady serves the clients blocked on keys that received data, first
// come first served, each that the key has data for: a client blocked by
// BLPOP does not stop one blocked by BZPOPMIN after it from being served
// with a sorted set. It runs after each client's batch of commands, when
// no reply is pending.
func (s *Server) handleReady() {
	if s.scripts.run != nil {
		return // served from inside a busy script: the clients it woke wait till it ends
	}
	for len(s.ready) > 0 {
		ready := s.ready
		s.ready = nil
		for _, r := range ready {
			key := []byte(r.key)
			for _, c := range append([]*client(nil), r.db.blocking[r.key]...) {
				b := c.block
				if b == nil || c.closed {
					continue
				}
				errs := s.stats.errorReplies
				served := s.answer(c, func() bool {
					dirty := s.stats.dirty
					s.prop.begin()
					s.mono = s.tick()
					if s.bg != nil {
						s.writing = true
						s.bg.preserve(r.db, key, false)
					}
					served := b.serve(key)
					s.writing = false
					if s.stats.dirty != dirty || s.prop.override {
						s.prop.end(s, r.db.id, nil)
					}
					return served
				})
				if c.block == nil {
					continue // its code panicked: it is closed
				}
				if !served {
					// The key holds nothing for it: it may hold a type
					// another client waits for, as Redis serves those
					// blocked on a key by type, in order.
					continue
				}
				end := s.tick()
				if b.cmd != nil {
					s.timed(c, b.cmd, b.args, b.took+end-s.mono)
					if s.stats.errorReplies > errs { // WRONGTYPE at BLMOVE's destination, say
						s.cmdStats[b.cmd.id].failed++
					}
				}
				s.latency.note("command-unblocking", end-s.mono, s.ms/1000)
				s.mono = end
				s.unblock(c)
				s.wake(c)
			}
		}
	}
}
