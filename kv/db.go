package kv

// Value types, as TYPE names them.
const (
	typeString = "string"
	typeList   = "list"
	typeHash   = "hash"
	typeSet    = "set"
	typeZSet   = "zset"
	typeNone   = "none"
)

// String encodings, as OBJECT ENCODING names them (Redis's rules: an integer
// of at most 20 digits is "int", up to 44 bytes "embstr", else "raw"; a
// string changed in place by APPEND or SETRANGE is "raw"; INCRBYFLOAT's
// result is never "int").
const (
	encAuto uint8 = iota
	encRaw
	encNotInt
)

// entry is a key's value. A string lives in str, with obj nil or, once a
// command edited it in place, the *strBuf holding its bytes; the other
// types are in obj: *list, *hash, *set, *zset.
type entry struct {
	str string
	obj any
	exp int64  // expiry, Unix milliseconds; 0 for none
	lru uint32 // last access, seconds on the server's clock
	gen uint16 // the log rewrite that last wrote it
	enc uint8
}

func (e *entry) typeName() string {
	switch e.obj.(type) {
	case nil, *strBuf:
		return typeString
	case *list:
		return typeList
	case *hash:
		return typeHash
	case *set:
		return typeSet
	case *zset:
		return typeZSet
	}
	panic("kv: unknown value type")
}

func (e *entry) encoding() string {
	if e.isString() {
		if e.enc == encRaw {
			return "raw"
		}
		if len(e.str) <= 20 && e.enc != encNotInt {
			if _, ok := parseInt(stringBytes(e.str)); ok {
				return "int"
			}
		}
		if len(e.str) <= 44 {
			return "embstr"
		}
		return "raw"
	}
	if o, ok := e.obj.(interface{ encoding() string }); ok {
		return o.encoding()
	}
	return "unknown"
}

// db is one of the numbered databases. Owned by the loop.
type db struct {
	id      int
	s       *Server
	keys    *dict[entry]
	expires *dict[struct{}] // the keys with a TTL, for sampling, as keys holds them (the same bytes)

	watchers map[string][]*watchedKey // the WATCHes of each key
	blocking map[string][]*client     // blocked on each key, first come first
	// The most keys watchers and blocking held since they were made
	// (shrunk).
	watchersPeak, blockingPeak int
}

func newDB(s *Server, id int) *db {
	return &db{id: id, s: s, keys: newDict[entry](0), expires: newDict[struct{}](0)}
}

// miss counts a read that found no key, and sends the keymiss event, as
// Redis's lookupKeyRead does.
func (d *db) miss(key []byte) {
	d.s.stats.keyspaceMiss++
	d.s.notify(notifyKeyMiss, "keymiss", key, d.id)
}

// lookup returns key's entry, or nil if absent or expired (an expired key
// is deleted on the way). The pointer is valid until the keyspace changes.
func (d *db) lookup(key []byte) *entry {
	e := d.peek(key)
	if e != nil {
		d.s.touch(e)
	}
	return e
}

// passed reports whether the expiry time at (unix ms) has passed. While
// the log is replayed none has, as none has for Redis while it loads: the
// commands logged after one that set a TTL ran while the key was there,
// and meet it as they did, whatever the time now (it expires once the
// server runs).
func (s *Server) passed(at int64) bool { return at <= s.now() && !s.replay }

// peek is lookup without touching the access time.
func (d *db) peek(key []byte) *entry {
	if d.s.writing {
		d.s.preserveKey(d, key)
	}
	e := d.keys.get(key)
	if e == nil {
		return nil
	}
	if e.exp != 0 && d.s.passed(e.exp) {
		// Absent, but left in place while clients are paused, as Redis
		// keeps the keyspace still then.
		if !d.s.clientsPaused() {
			d.expire(key)
		}
		return nil
	}
	return e
}

// exists reports whether key is present, without touching its access
// time.
func (d *db) exists(key []byte) bool { return d.peek(key) != nil }

// read is lookup for a command that reads key, as Redis's lookupKeyRead:
// a present key counts as a keyspace hit, whatever its type; an absent one
// as a miss, with the keymiss event.
func (d *db) read(key []byte) *entry {
	e := d.lookup(key)
	d.count(key, e, true)
	return e
}

// readNoTouch is read without touching the access time, as Redis's
// LOOKUP_NOTOUCH (EXISTS, TYPE, TTL).
func (d *db) readNoTouch(key []byte) *entry {
	e := d.peek(key)
	d.count(key, e, true)
	return e
}

// count counts a read's lookup of key, which found e: a keyspace hit, or
// a miss, with the keymiss event if notify.
func (d *db) count(key []byte, e *entry, notify bool) {
	switch {
	case e != nil:
		d.s.stats.keyspaceHits++
	case notify:
		d.miss(key)
	default:
		d.s.stats.keyspaceMiss++
	}
}

// expire deletes a key whose time has come, as a DEL the log records, with
// its keyspace event.
func (d *db) expire(key []byte) {
	d.expiring(key)
	d.remove(key)
	d.expired(key)
}

// expiring comes before the deletion of key, whose time has come: a
// rewrite of the log under way is told of the change.
func (d *db) expiring(key []byte) {
	if a := d.s.aof; a != nil && a.rw != nil {
		a.rw.touch(d, key)
	}
}

// expired follows the deletion of key, whose time had come, as Redis's
// deleteExpiredKeyAndPropagate: it is counted, the log gets its DEL, the
// expired event is sent and the clients WATCHing or caching it see a
// change. Each
// is skipped at once when nothing takes it (no log, no events, no
// WATCH), so that the active cycle's deletions cost little more than the
// deletion.
func (d *db) expired(key []byte) {
	d.s.stats.expiredKeys++
	if d.s.aof != nil {
		d.s.propagate(d.id, [][]byte{[]byte("DEL"), key})
	}
	d.s.notify(notifyExpired, "expired", key, d.id)
	d.s.keyChanged(d, key, nil)
}

// setString stores a string value, replacing whatever key held; keepTTL
// keeps the old expiry. A key that has expired is deleted as such first,
// with its event, as Redis's setKey looks it up for writing; a key
// created sends the new event, as Redis's dbAdd. It returns the entry.
func (d *db) setString(key []byte, val string, keepTTL bool) *entry {
	d.s.preserveKey(d, key)
	e, added := d.keys.put(key)
	if !added && e.exp != 0 && d.s.passed(e.exp) {
		d.expire(key)
		e, added = d.keys.put(key)
	}
	exp := e.exp
	var lru uint32
	if added {
		lru = d.s.newLRU()
	} else {
		lru = d.s.overwriteLRU(e)
	}
	*e = entry{str: val, lru: lru}
	if keepTTL && !added {
		e.exp = exp
	} else if exp != 0 {
		d.expires.delete(key)
	}
	if added {
		d.created(key)
	}
	return e
}

// add stores a new value of another type under key, which must be absent,
// with the new event, as Redis's dbAdd.
func (d *db) add(key []byte, obj any) *entry {
	e, _ := d.keys.put(key)
	*e = entry{obj: obj, lru: d.s.newLRU()}
	d.created(key)
	return e
}

// set stores obj, a value of another type than string, under key,
// replacing what it held and its expiry, as Redis's setKey: a key that has
// expired is deleted as such first, with its event, and an absent one is
// added (add). It reports whether key was absent.
func (d *db) set(key []byte, obj any) (added bool) {
	if !d.exists(key) {
		d.add(key, obj)
		return true
	}
	d.s.preserveKey(d, key)
	e := d.keys.get(key)
	if e.exp != 0 {
		d.expires.delete(key)
	}
	*e = entry{obj: obj, lru: d.s.overwriteLRU(e)}
	return false
}

// insert adds val, another key's entry (RENAME's, COPY's, MOVE's), under
// key, which must be absent, with its expiry and the new event, as
// Redis's dbAdd.
func (d *db) insert(key []byte, val entry) {
	e, _ := d.keys.put(key)
	*e = val
	if val.exp != 0 {
		d.expires.putShared(d.keys.keyOf(key))
	}
	d.created(key)
}

// created sends the new event for key, just added, as Redis's dbAdd
// does: before the event of the command that added it. The log's replay
// sends none, as no event: it runs before any client is served (Redis,
// which serves clients while it loads, publishes them to those that
// subscribe meanwhile).
func (d *db) created(key []byte) { d.s.notify(notifyNew, "new", key, d.id) }

// remove deletes key and reports whether it was there. Expiry is not
// checked: an expired key is removed too.
func (d *db) remove(key []byte) bool {
	d.s.preserveRemoved(d, key)
	e := d.keys.get(key)
	if e == nil {
		return false
	}
	if e.exp != 0 {
		d.expires.delete(key)
	}
	d.keys.delete(key)
	return true
}

// setExpire sets key's expiry, Unix milliseconds; key must exist.
func (d *db) setExpire(key []byte, e *entry, at int64) {
	d.s.preserveKey(d, key)
	if e.exp == 0 {
		d.expires.putShared(d.keys.keyOf(key))
	}
	e.exp = at
}

// persist removes key's expiry and reports whether it had one.
func (d *db) persist(key []byte, e *entry) bool {
	if e.exp == 0 {
		return false
	}
	d.s.preserveKey(d, key)
	e.exp = 0
	d.expires.delete(key)
	return true
}

// flush empties the database; a background save walking its keys keeps
// them.
func (d *db) flush() {
	if d.s.bg != nil && d.s.bg.flushing(d) {
		return
	}
	d.keys.clear()
	d.expires.clear()
}

// size returns the number of keys, expired ones not yet removed included.
func (d *db) size() int { return d.keys.len() }

// lookupWriteAs is lookupAs for a command that changes key: as Redis's
// lookupKeyWrite, it counts no keyspace hits or misses.
func lookupWriteAs[T any](s *Server, d *db, key []byte) (o T, ok bool) {
	e := d.lookup(key)
	if e == nil {
		return o, true
	}
	if o, ok = e.obj.(T); !ok {
		s.w.Error(errWrongType)
	}
	return o, ok
}

// lookupAs returns key's value if it is of type T (*list, *hash, *set or
// *zset), with its entry; nil if key is absent. If key holds another type
// it writes the WRONGTYPE error and returns ok false.
func lookupAs[T any](s *Server, d *db, key []byte) (o T, e *entry, ok bool) {
	e = d.read(key)
	if e == nil {
		return o, nil, true
	}
	o, isT := e.obj.(T)
	if !isT {
		s.w.Error(errWrongType)
		return o, nil, false
	}
	return o, e, true
}
