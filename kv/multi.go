package kv

func init() {
	register(
		cmd("multi", 1, "noscript loading stale fast allow_busy", 0, 0, 0, "transactions", "1.2.0", "Starts a transaction.", multiCommand),
		cmd("exec", 1, "noscript loading stale skip_slowlog", 0, 0, 0, "transactions", "1.2.0", "Executes all commands in a transaction.", execCommand),
		cmd("discard", 1, "noscript loading stale fast allow_busy", 0, 0, 0, "transactions", "2.0.0", "Discards a transaction.", discardCommand),
		cmd("watch", -2, "noscript loading stale fast allow_busy", 1, -1, 1, "transactions", "2.2.0", "Monitors changes to keys to determine the execution of a transaction.", watchCommand),
		cmd("unwatch", 1, "noscript loading stale fast allow_busy", 0, 0, 0, "transactions", "2.2.0", "Forgets about watched keys of a transaction.", unwatchCommand),
	)
}

// watchedKey is a key a client WATCHes, in the client's list and in its
// database's watchers.
type watchedKey struct {
	c        *client
	db       *db
	key      string
	volatile bool // it had a TTL, not yet due, when watched
	// expired is set while the key is one that had expired, not yet
	// deleted, when watched (or that SWAPDB brought in expired): its
	// deletion is no change, as Redis's watchedKey.expired says.
	expired bool
}

func multiCommand(s *Server, c *client, args [][]byte) {
	if c.flags&flagMulti != 0 {
		s.w.Error("ERR MULTI calls can not be nested")
		return
	}
	c.flags |= flagMulti
	s.w.OK()
}

// discardMulti leaves MULTI, dropping what was queued, and forgets the
// watched keys.
func (s *Server) discardMulti(c *client) {
	clear(c.multi)
	c.multi = c.multi[:0]
	c.flags &^= flagMulti | flagDirtyExec | flagDirtyCAS | flagQueuedWrite | flagQueuedDenyOOM | flagQueuedMayReplicate
	s.unwatchAll(c)
}

func discardCommand(s *Server, c *client, args [][]byte) {
	if c.flags&flagMulti == 0 {
		s.w.Error("ERR DISCARD without MULTI")
		return
	}
	s.discardMulti(c)
	s.w.OK()
}

func execCommand(s *Server, c *client, args [][]byte) {
	if c.flags&flagMulti == 0 {
		s.w.Error("ERR EXEC without MULTI")
		return
	}
	if c.flags&flagDirtyExec != 0 {
		s.discardMulti(c)
		s.w.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	if c.flags&flagDirtyCAS != 0 || s.watchedExpired(c) {
		s.discardMulti(c)
		s.w.NullArray()
		return
	}
	queued := c.multi
	c.multi = nil
	c.flags &^= flagMulti | flagQueuedWrite | flagQueuedDenyOOM | flagQueuedMayReplicate
	s.unwatchAll(c)
	s.w.Array(len(queued))
	s.inExec = true
	// Every command runs at EXEC's time, as Redis's call() fixes its
	// cached time for the commands EXEC runs: a key cannot expire
	// partway through the transaction. exec reads the clock after each
	// one for its statistics.
	now := s.ms
	for _, q := range queued {
		s.ms = now
		s.exec(c, lookupCommand(q), q)
		s.w.Proto = c.proto
	}
	s.inExec = false
	s.endExec()
}

// endExec closes EXEC: the log gets the commands it ran as one
// transaction, and EXEC itself is not logged.
func (s *Server) endExec() {
	if s.aof != nil {
		s.aof.endTransaction()
	}
	s.prop.begin()
	s.prop.override = true
}

func watchCommand(s *Server, c *client, args [][]byte) {
	if c.flags&flagMulti != 0 {
		s.w.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	for _, key := range args[1:] {
		s.watch(c, key)
	}
	s.w.OK()
}

func (s *Server) watch(c *client, key []byte) {
	// Already watched: found among the key's watchers, where Redis 7.0
	// looks through the client's watched keys, which for a WATCH of
	// 100,000 keys held the loop for seconds.
	for _, w := range c.db.watchers[string(key)] {
		if w.c == c {
			return
		}
	}
	w := &watchedKey{c: c, db: c.db, key: string(key)}
	if e := c.db.keys.get(key); e != nil && e.exp != 0 {
		w.volatile, w.expired = e.exp > s.now(), e.exp <= s.now()
	}
	c.watched = append(c.watched, w)
	if c.db.watchers == nil {
		c.db.watchers = make(map[string][]*watchedKey)
	}
	c.db.watchers[w.key] = append(c.db.watchers[w.key], w)
	notePeak(c.db.watchers, &c.db.watchersPeak)
}

func unwatchCommand(s *Server, c *client, args [][]byte) {
	s.unwatchAll(c)
	c.flags &^= flagDirtyCAS
	s.w.OK()
}

// unwatchAll forgets c's watched keys.
func (s *Server) unwatchAll(c *client) {
	for _, w := range c.watched {
		list := w.db.watchers[w.key]
		for i, o := range list {
			if o == w {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(w.db.watchers, w.key)
			w.db.watchers = shrunk(w.db.watchers, &w.db.watchersPeak)
		} else {
			w.db.watchers[w.key] = list
		}
	}
	if cap(c.watched) > minShrink {
		c.watched = nil // a WATCH of many keys: not kept for the next
		return
	}
	clear(c.watched)
	c.watched = c.watched[:0]
}

// touchWatched makes the EXEC of every client WATCHing key fail, but for
// a client that WATCHed it expired, as Redis's touchWatchedKey: the
// deletion of a key that had already expired is no change.
func (s *Server) touchWatched(d *db, key []byte) {
	if len(d.watchers) == 0 {
		return
	}
	for _, w := range d.watchers[string(key)] {
		if w.expired && d.keys.get(key) == nil {
			w.expired = false // now deleted, as a key never there
			continue
		}
		w.c.flags |= flagDirtyCAS
	}
}

// touchAllWatched makes the EXEC of the clients WATCHing keys of emptied
// fail when it is flushed (replaced nil) or swapped with replaced, as
// Redis's touchAllWatchedKeysInDb: a watched key counts as changed if it
// exists in emptied or in replaced, unless it has expired before and
// after (a key WATCHed expired and now gone, or still expired, and a
// key absent that SWAPDB replaces with an expired one, which is watched
// as expired from then on). It runs before the keys change.
func (s *Server) touchAllWatched(emptied, replaced *db) {
	for key, list := range emptied.watchers {
		k := []byte(key)
		inEmptied := emptied.keys.get(k) != nil
		var next *entry // the key's entry once replaced takes emptied's place
		if replaced != nil {
			next = replaced.keys.get(k)
		}
		if !inEmptied && next == nil {
			continue
		}
		nextExpired := next != nil && next.exp != 0 && next.exp <= s.now()
		for _, w := range list {
			switch {
			case w.expired && next == nil:
				w.expired = false
				continue
			case w.expired && nextExpired:
				continue
			case !w.expired && !inEmptied && nextExpired:
				w.expired = true
				continue
			}
			w.c.flags |= flagDirtyCAS
		}
	}
}

// watchedExpired reports whether a key c WATCHed with a TTL has expired
// since: the transaction then fails, as in Redis 7.
func (s *Server) watchedExpired(c *client) bool {
	for _, w := range c.watched {
		if !w.volatile || w.expired {
			continue
		}
		e := w.db.keys.get([]byte(w.key))
		if e == nil || (e.exp != 0 && e.exp <= s.now()) {
			return true
		}
	}
	return false
}
