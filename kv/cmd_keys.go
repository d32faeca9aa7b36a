package kv

import (
	"math"
	"strconv"
	"strings"
)

func init() {
	register(
		cmd("del", -2, "write", 1, -1, 1, "generic", "1.0.0", "Deletes one or more keys.", delCommand),
		cmd("unlink", -2, "write fast", 1, -1, 1, "generic", "4.0.0", "Asynchronously deletes one or more keys.", delCommand),
		cmd("exists", -2, "readonly fast", 1, -1, 1, "generic", "1.0.0", "Determines whether one or more keys exist.", existsCommand),
		cmd("type", 2, "readonly fast", 1, 1, 1, "generic", "1.0.0", "Determines the type of value stored at a key.", typeCommand),
		cmd("keys", 2, "readonly", 0, 0, 0, "generic", "1.0.0", "Returns all key names that match a pattern.", keysCommand).withCategories("@keyspace", "@dangerous"),
		cmd("scan", -2, "readonly", 0, 0, 0, "generic", "2.8.0", "Iterates over the key names in the database.", scanCommand),
		cmd("randomkey", 1, "readonly", 0, 0, 0, "generic", "1.0.0", "Returns a random key name from the database.", randomkeyCommand),
		cmd("rename", 3, "write", 1, 2, 1, "generic", "1.0.0", "Renames a key and overwrites the destination.", renameCommand),
		cmd("renamenx", 3, "write fast", 1, 2, 1, "generic", "1.0.0", "Renames a key only when the target key name doesn't exist.", renamenxCommand),
		cmd("expire", -3, "write fast", 1, 1, 1, "generic", "1.0.0", "Sets the expiration time of a key in seconds.", expireCommand),
		cmd("pexpire", -3, "write fast", 1, 1, 1, "generic", "2.6.0", "Sets the expiration time of a key in milliseconds.", pexpireCommand),
		cmd("expireat", -3, "write fast", 1, 1, 1, "generic", "1.2.0", "Sets the expiration time of a key to a Unix timestamp.", expireatCommand),
		cmd("pexpireat", -3, "write fast", 1, 1, 1, "generic", "2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp.", pexpireatCommand),
		cmd("ttl", 2, "readonly fast", 1, 1, 1, "generic", "1.0.0", "Returns the expiration time in seconds of a key.", ttlCommand),
		cmd("pttl", 2, "readonly fast", 1, 1, 1, "generic", "2.6.0", "Returns the expiration time in milliseconds of a key.", pttlCommand),
		cmd("expiretime", 2, "readonly fast", 1, 1, 1, "generic", "7.0.0", "Returns the expiration time of a key as a Unix timestamp.", expiretimeCommand),
		cmd("pexpiretime", 2, "readonly fast", 1, 1, 1, "generic", "7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp.", pexpiretimeCommand),
		cmd("persist", 2, "write fast", 1, 1, 1, "generic", "2.2.0", "Removes the expiration time of a key.", persistCommand),
		cmd("touch", -2, "readonly fast", 1, -1, 1, "generic", "3.2.1", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", touchCommand),
		cmd("copy", -3, "write denyoom", 1, 2, 1, "generic", "6.2.0", "Copies the value of a key to a new key.", copyCommand),
		cmd("move", 3, "write fast", 1, 1, 1, "generic", "2.0.0", "Moves a key to another database.", moveCommand),
		cmd("dbsize", 1, "readonly fast", 0, 0, 0, "server", "1.0.0", "Returns the number of keys in the database.", dbsizeCommand).withCategories("@keyspace"),
		cmd("flushdb", -1, "write", 0, 0, 0, "server", "1.0.0", "Remove all keys from the current database.", flushdbCommand).withCategories("@keyspace", "@dangerous"),
		cmd("flushall", -1, "write", 0, 0, 0, "server", "1.0.0", "Removes all keys from all databases.", flushallCommand).withCategories("@keyspace", "@dangerous"),
		cmd("swapdb", 3, "write fast", 0, 0, 0, "server", "4.0.0", "Swaps two Redis databases.", swapdbCommand).withCategories("@keyspace", "@dangerous"),
		cmd("object", -2, "", 0, 0, 0, "generic", "2.2.3", "A container for object introspection commands.", nil).withSubs(
			cmd("encoding", 3, "readonly", 2, 2, 1, "", "2.2.3", "Returns the internal encoding of a Redis object.", objectEncoding),
			cmd("refcount", 3, "readonly", 2, 2, 1, "", "2.2.3", "Returns the reference count of a value of a key.", objectRefcount),
			cmd("idletime", 3, "readonly", 2, 2, 1, "", "2.2.3", "Returns the time since the last access to a Redis object.", objectIdletime),
			cmd("freq", 3, "readonly", 2, 2, 1, "", "4.0.0", "Returns the logarithmic access frequency counter of a Redis object.", objectFreq),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "6.2.0", "Returns helpful text about the different subcommands.", objectHelp),
		),
	)
}

// modified records a change to key: the command is logged, and clients
// WATCHing key will fail their EXEC.
func (s *Server) modified(d *db, key []byte) {
	s.dirty(1)
	s.touched(d, key)
}

// touched records that key changed, without counting a change, as
// Redis's signalModifiedKey: clients WATCHing key will fail their EXEC,
// and a log rewrite under way takes it again. The command counts its
// changes itself (dirty), so that it is logged.
func (s *Server) touched(d *db, key []byte) {
	s.changedUnsignalled(d, key)
	s.keyChanged(d, key, s.cur)
}

// changedUnsignalled is touched without Redis's signalModifiedKey: a save
// or a log rewrite under way takes key's change, but WATCHes and caching
// clients are not told.
func (s *Server) changedUnsignalled(d *db, key []byte) {
	if s.bg != nil {
		s.bg.check(d, key)
	}
	s.rewriteTouch(d, key)
}

// keyChanged is Redis's signalModifiedKey: clients WATCHing key will fail
// their EXEC, and the clients that may cache it are told it changed. by
// is the client whose command changed it, nil for an expiry or an
// eviction.
func (s *Server) keyChanged(d *db, key []byte, by *client) {
	s.touchWatched(d, key)
	if s.track.table != nil {
		s.invalidate(key, by, true)
	}
}

// rewriteTouch notes, for a rewrite of the log under way, that the
// running command changed key.
func (s *Server) rewriteTouch(d *db, key []byte) {
	if s.aof != nil && s.aof.rw != nil {
		s.aof.rw.touch(d, key)
	}
}

// deleteKey deletes key, if present, with its "del" event.
func (s *Server) deleteKey(d *db, key []byte) bool {
	if !d.remove(key) {
		return false
	}
	s.modified(d, key)
	s.notify(notifyGeneric, "del", key, d.id)
	return true
}

// storeResult makes obj, the n elements a *STORE command computed, the
// value of key, replacing what it held, as Redis's setKey does (a key
// that has expired is deleted as such first, with its event), or, if n
// is 0, deletes key with a del event, as Redis's dbDelete does, expired
// or not. It replies n and reports whether it stored obj, whose own event
// the caller then sends.
func (s *Server) storeResult(d *db, key []byte, obj any, n int) bool {
	s.w.Int(int64(n))
	if n == 0 {
		s.deleteKey(d, key)
		return false
	}
	d.set(key, obj)
	s.modified(d, key)
	return true
}

// removeIfEmpty deletes key, whose aggregate value now holds size
// elements, if size is 0, with the "del" event: as in Redis, an empty
// list, hash, set or sorted set never stays in the keyspace.
func (s *Server) removeIfEmpty(d *db, key []byte, size int) {
	if size == 0 {
		d.remove(key)
		s.notify(notifyGeneric, "del", key, d.id)
	}
}

func delCommand(s *Server, c *client, args [][]byte) {
	n := 0
	for _, key := range args[1:] {
		if c.db.exists(key) && s.deleteKey(c.db, key) {
			n++
		}
	}
	s.w.Int(int64(n))
}

func existsCommand(s *Server, c *client, args [][]byte) {
	n := 0
	for _, key := range args[1:] {
		if c.db.readNoTouch(key) != nil {
			n++
		}
	}
	s.w.Int(int64(n))
}

func typeCommand(s *Server, c *client, args [][]byte) {
	e := c.db.readNoTouch(args[1])
	if e == nil {
		s.w.Simple(typeNone)
		return
	}
	s.w.Simple(e.typeName())
}

func keysCommand(s *Server, c *client, args [][]byte) {
	pattern := args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	var out []string
	now := s.now()
	for i := range c.db.keys.len() {
		key, e := c.db.keys.at(i)
		if e.exp != 0 && e.exp <= now {
			continue
		}
		if all || globMatch(pattern, []byte(key), false) {
			out = append(out, key)
		}
	}
	s.w.Array(len(out))
	for _, k := range out {
		s.w.BulkString(k)
	}
}

// parseScanCursor parses a cursor as Redis 7.0 does, with strtoul: a
// sign is allowed and a negative number wraps around.
func parseScanCursor(b []byte) (uint64, bool) {
	str := string(b)
	if str != "" && (str[0] == ' ' || (str[0] >= '\t' && str[0] <= '\r')) {
		return 0, false
	}
	neg := false
	if str != "" && (str[0] == '+' || str[0] == '-') {
		neg = str[0] == '-'
		str = str[1:]
	}
	if str == "" {
		return 0, len(b) == 0
	}
	if str[0] < '0' || str[0] > '9' {
		return 0, false
	}
	v, err := strconv.ParseUint(str, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// replyScan writes a SCAN reply: the cursor to go on from, and items.
func (s *Server) replyScan(next uint64, items []string) {
	s.w.Array(2)
	s.w.BulkString(strconv.FormatUint(next, 10))
	s.w.Array(len(items))
	for _, v := range items {
		s.w.BulkString(v)
	}
}

// scanOptions are SCAN's MATCH, COUNT and TYPE.
type scanOptions struct {
	match []byte
	count int
	typ   string
}

// parseScanOptions parses args from position i on, writing the error if
// they are bad. withType allows TYPE (SCAN only).
func (s *Server) parseScanOptions(args [][]byte, i int, withType bool) (scanOptions, bool) {
	o := scanOptions{count: 10}
	for ; i < len(args); i += 2 {
		if i+1 >= len(args) {
			s.w.Error(errSyntax)
			return o, false
		}
		switch strings.ToLower(string(args[i])) {
		case "match":
			o.match = args[i+1]
			if len(o.match) == 1 && o.match[0] == '*' {
				o.match = nil
			}
		case "count":
			n, ok := parseInt(args[i+1])
			if !ok {
				s.w.Error(errNotInt)
				return o, false
			}
			if n < 1 {
				s.w.Error(errSyntax)
				return o, false
			}
			o.count = int(min(n, math.MaxInt32))
		case "type":
			if !withType {
				s.w.Error(errSyntax)
				return o, false
			}
			o.typ = strings.ToLower(string(args[i+1]))
		default:
			s.w.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

func scanCommand(s *Server, c *client, args [][]byte) {
	cursor, ok := parseScanCursor(args[1])
	if !ok {
		s.w.Error("ERR invalid cursor")
		return
	}
	o, ok := s.parseScanOptions(args, 2, true)
	if !ok {
		return
	}
	var keys []string
	next := c.db.keys.scan(cursor, o.count, func(key string, e *entry) {
		keys = append(keys, key)
	})
	// The keys are filtered as Redis 7.0's scanGenericCommand filters
	// them, touching none: by MATCH first, so that an expired key that
	// does not match is left for later; by TYPE through a read (a
	// keyspace hit or miss, keymiss, an expired key deleted and "none");
	// then an expired key is deleted and left out, unless TYPE's read
	// deleted it already, when Redis returns it.
	out := keys[:0]
	for _, key := range keys {
		k := []byte(key)
		if o.match != nil && !globMatch(o.match, k, false) {
			continue
		}
		if o.typ != "" {
			typ := typeNone
			if e := c.db.readNoTouch(k); e != nil {
				typ = e.typeName()
			}
			if typ != o.typ {
				continue
			}
		}
		if e := c.db.keys.get(k); e != nil && e.exp != 0 && s.passed(e.exp) {
			c.db.expire(k)
			continue
		}
		out = append(out, key)
	}
	s.replyScan(next, out)
}

// randomkeyCommand draws keys until one that has not expired, deleting
// each expired one drawn, as Redis's dbRandomKey does on a master: it
// never returns an expired key, and the draws are bounded by the keys,
// one fewer each time.
func randomkeyCommand(s *Server, c *client, args [][]byte) {
	for c.db.keys.len() > 0 {
		key, e := c.db.keys.at(c.db.keys.random())
		if e.exp != 0 && e.exp <= s.now() {
			c.db.expire([]byte(key))
			continue
		}
		s.w.BulkString(key)
		return
	}
	s.w.Null()
}

func renameCommand(s *Server, c *client, args [][]byte)   { renameGeneric(s, c, args, false) }
func renamenxCommand(s *Server, c *client, args [][]byte) { renameGeneric(s, c, args, true) }

func renameGeneric(s *Server, c *client, args [][]byte, nx bool) {
	src, dst := args[1], args[2]
	e := c.db.lookup(src)
	if e == nil {
		s.w.Error(errNoKey)
		return
	}
	if string(src) == string(dst) {
		if nx {
			s.w.Int(0)
		} else {
			s.w.OK()
		}
		return
	}
	val := *e // before dst is looked up: deleting it if expired moves entries
	// As Redis's lookupKeyWrite of dst, exists deletes it if expired,
	// with its event.
	if c.db.exists(dst) && nx {
		s.w.Int(0)
		return
	}
	c.db.remove(src)
	c.db.remove(dst)
	c.db.insert(dst, val)
	s.modified(c.db, src)
	s.touched(c.db, dst) // one change, as Redis counts it
	s.notify(notifyGeneric, "rename_from", src, c.db.id)
	s.notify(notifyGeneric, "rename_to", dst, c.db.id)
	s.signalReady(c.db, dst)
	if nx {
		s.w.Int(1)
	} else {
		s.w.OK()
	}
}

func expireCommand(s *Server, c *client, args [][]byte)    { expireGeneric(s, c, args, true, false) }
func pexpireCommand(s *Server, c *client, args [][]byte)   { expireGeneric(s, c, args, false, false) }
func expireatCommand(s *Server, c *client, args [][]byte)  { expireGeneric(s, c, args, true, true) }
func pexpireatCommand(s *Server, c *client, args [][]byte) { expireGeneric(s, c, args, false, true) }

// expireGeneric is EXPIRE and its kin, with NX, XX, GT and LT.
func expireGeneric(s *Server, c *client, args [][]byte, seconds, absolute bool) {
	var nx, xx, gt, lt bool
	for _, a := range args[3:] {
		switch strings.ToUpper(string(a)) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		default:
			s.w.Error("ERR Unsupported option " + string(a))
			return
		}
	}
	if nx && (xx || gt || lt) {
		s.w.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if gt && lt {
		s.w.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	n, ok := parseInt(args[2])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	name := strings.ToLower(string(args[0]))
	at := n
	if seconds {
		if at > math.MaxInt64/1000 || at < math.MinInt64/1000 {
			s.w.Error("ERR invalid expire time in '" + name + "' command")
			return
		}
		at *= 1000
	}
	if !absolute {
		// Only upwards, as Redis checks: a time far in the past is past.
		if at > math.MaxInt64-s.now() {
			s.w.Error("ERR invalid expire time in '" + name + "' command")
			return
		}
		at += s.now()
	}
	key := args[1]
	e := c.db.lookup(key)
	if e == nil {
		s.w.Int(0)
		return
	}
	cur := e.exp
	switch {
	case nx && cur != 0,
		xx && cur == 0,
		gt && (cur == 0 || at <= cur), // no TTL counts as infinite
		lt && cur != 0 && at >= cur:
		s.w.Int(0)
		return
	}
	if s.passed(at) {
		s.deleteKey(c.db, key)
		s.rewrite([]byte("DEL"), key)
		s.w.Int(1)
		return
	}
	c.db.setExpire(key, e, at)
	s.modified(c.db, key)
	s.notify(notifyGeneric, "expire", key, c.db.id)
	s.rewrite([]byte("PEXPIREAT"), key, strconv.AppendInt(nil, at, 10))
	s.w.Int(1)
}

// ttlGeneric replies with key's remaining time or deadline: -2 if absent,
// -1 if it has none.
func ttlGeneric(s *Server, c *client, key []byte, ms, absolute bool) {
	e := c.db.readNoTouch(key)
	switch {
	case e == nil:
		s.w.Int(-2)
	case e.exp == 0:
		s.w.Int(-1)
	default:
		v := e.exp
		if !absolute {
			v = max(v-s.now(), 0)
		}
		if !ms {
			// rounded, EXPIRETIME's too, as Redis's ttlGenericCommand;
			// the remainder apart, so that a deadline within 500 ms of
			// the largest is rounded up where v+500 would wrap, as it
			// does not in Redis's build
			v = v/1000 + (v%1000+500)/1000
		}
		s.w.Int(v)
	}
}

func ttlCommand(s *Server, c *client, args [][]byte)  { ttlGeneric(s, c, args[1], false, false) }
func pttlCommand(s *Server, c *client, args [][]byte) { ttlGeneric(s, c, args[1], true, false) }
func expiretimeCommand(s *Server, c *client, args [][]byte) {
	ttlGeneric(s, c, args[1], false, true)
}
func pexpiretimeCommand(s *Server, c *client, args [][]byte) {
	ttlGeneric(s, c, args[1], true, true)
}

func persistCommand(s *Server, c *client, args [][]byte) {
	e := c.db.lookup(args[1])
	if e == nil || !c.db.persist(args[1], e) {
		s.w.Int(0)
		return
	}
	s.modified(c.db, args[1])
	s.notify(notifyGeneric, "persist", args[1], c.db.id)
	s.w.Int(1)
}

func touchCommand(s *Server, c *client, args [][]byte) {
	n := 0
	for _, key := range args[1:] {
		if c.db.read(key) != nil {
			n++
		}
	}
	s.w.Int(int64(n))
}

// cloneValue returns a deep copy of a value of any type.
func cloneValue(e entry) entry {
	switch o := e.obj.(type) {
	case nil:
		if isShared(e.str) {
			e.str = strings.Clone(e.str) // a copy of its own, as Redis makes
		}
	case *strBuf:
		e.setStr(strings.Clone(e.str)) // a strBuf is never shared
	case *list:
		e.obj = o.clone()
	case *hash:
		e.obj = o.clone()
	case *set:
		e.obj = o.clone()
	case *zset:
		e.obj = o.clone()
	}
	return e
}

func copyCommand(s *Server, c *client, args [][]byte) {
	src, dst := args[1], args[2]
	target := c.db
	replace := false
	for i := 3; i < len(args); i++ {
		switch strings.ToLower(string(args[i])) {
		case "replace":
			replace = true
		case "db":
			if i+1 >= len(args) {
				s.w.Error(errSyntax)
				return
			}
			n, ok := parseInt(args[i+1])
			if !ok {
				s.w.Error(errNotInt)
				return
			}
			if n < 0 || n >= int64(len(s.dbs)) {
				s.w.Error("ERR DB index is out of range")
				return
			}
			target = s.dbs[n]
			i++
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	if target == c.db && string(src) == string(dst) {
		s.w.Error("ERR source and destination objects are the same")
		return
	}
	e := c.db.read(src)
	if e == nil {
		s.w.Int(0)
		return
	}
	if target.exists(dst) {
		if !replace {
			s.w.Int(0)
			return
		}
		// Without an event, as Redis's dbDelete: copy_to alone tells.
		target.remove(dst)
	}
	// Looked up again: deleting dst, expired or replaced, moves entries.
	val := cloneValue(*c.db.keys.get(src))
	val.lru = s.newLRU()
	target.insert(dst, val)
	s.modified(target, dst)
	s.notify(notifyGeneric, "copy_to", dst, target.id)
	s.signalReady(target, dst)
	s.w.Int(1)
}

func moveCommand(s *Server, c *client, args [][]byte) {
	n, ok := parseInt(args[2])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	if n < 0 || n >= int64(len(s.dbs)) {
		s.w.Error(errDBIndex)
		return
	}
	target := s.dbs[n]
	if target == c.db {
		s.w.Error("ERR source and destination objects are the same")
		return
	}
	key := args[1]
	e := c.db.lookup(key)
	if e == nil || target.exists(key) {
		s.w.Int(0)
		return
	}
	val := *e
	c.db.remove(key)
	target.insert(key, val)
	s.modified(c.db, key)
	s.touched(target, key) // one change, as Redis counts it
	s.notify(notifyGeneric, "move_from", key, c.db.id)
	s.notify(notifyGeneric, "move_to", key, target.id)
	s.signalReady(target, key)
	s.w.Int(1)
}

func dbsizeCommand(s *Server, c *client, args [][]byte) { s.w.Int(int64(c.db.size())) }

// parseFlushMode checks FLUSHDB's and FLUSHALL's optional ASYNC or SYNC.
func (s *Server) parseFlushMode(args [][]byte) bool {
	if len(args) > 2 {
		s.w.Error(errSyntax)
		return false
	}
	if len(args) == 2 {
		switch strings.ToUpper(string(args[1])) {
		case "ASYNC", "SYNC":
		default:
			s.w.Error(errSyntax)
			return false
		}
	}
	return true
}

// flushDB empties d, counting a change a key, as Redis's emptyData.
func (s *Server) flushDB(d *db) {
	n := d.size()
	s.touchAllWatched(d, nil)
	d.flush()
	s.dirty(n)
}

func flushdbCommand(s *Server, c *client, args [][]byte) {
	if !s.parseFlushMode(args) {
		return
	}
	s.flushDB(c.db)
	s.invalidateAll()
	s.rewrite(args...) // logged when nothing was there too, as Redis's forceCommandPropagation
	s.w.OK()
}

// flushallCommand empties every database and, as Redis's
// flushAllDataAndResetRDB, stops a background save that runs and, with
// save points, saves the empty keyspace (a failure only logged).
func flushallCommand(s *Server, c *client, args [][]byte) {
	if !s.parseFlushMode(args) {
		return
	}
	s.abortBgsave("FLUSHALL")
	for _, d := range s.dbs {
		s.flushDB(d)
	}
	s.invalidateAll()
	if s.savePoints() {
		if err := s.save(); err != nil {
			s.log.Error("kv: saving the RDB file after FLUSHALL failed", "err", err)
		}
	}
	s.rewrite(args...)
	s.w.OK()
}

func swapdbCommand(s *Server, c *client, args [][]byte) {
	a, ok1 := parseInt(args[1])
	b, ok2 := parseInt(args[2])
	if !ok1 {
		s.w.Error("ERR invalid first DB index")
		return
	}
	if !ok2 {
		s.w.Error("ERR invalid second DB index")
		return
	}
	if a < 0 || a >= int64(len(s.dbs)) || b < 0 || b >= int64(len(s.dbs)) {
		s.w.Error(errDBIndex)
		return
	}
	da, dbb := s.dbs[a], s.dbs[b]
	if s.aof != nil && s.aof.rw != nil {
		s.aof.rw.restart("SWAPDB")
	}
	if da != dbb {
		s.touchAllWatched(da, dbb)
		s.touchAllWatched(dbb, da)
	}
	da.keys, dbb.keys = dbb.keys, da.keys
	da.expires, dbb.expires = dbb.expires, da.expires
	s.dirty(1)
	s.signalAllReady(da)
	s.signalAllReady(dbb)
	// Caching clients are told every key changed, as after a flush, where
	// Redis tells them nothing and leaves what they cached of the swapped
	// databases stale.
	s.invalidateAll()
	s.w.OK()
}

// objectEntry looks key up for OBJECT, as Redis's objectCommandLookup:
// not an access, and a miss sends no keymiss event.
func (s *Server) objectEntry(c *client, key []byte) *entry {
	e := c.db.peek(key)
	c.db.count(key, e, false)
	if e == nil {
		s.w.Null()
	}
	return e
}

func objectEncoding(s *Server, c *client, args [][]byte) {
	if e := s.objectEntry(c, args[2]); e != nil {
		s.w.BulkString(e.encoding())
	}
}

func objectRefcount(s *Server, c *client, args [][]byte) {
	if e := s.objectEntry(c, args[2]); e != nil {
		s.w.Int(s.refcount(e))
	}
}

// refcount is e's reference count as Redis reports it: its shared
// objects' count for a small integer it shares, else 1. Redis shares none
// made while maxmemory is set with an LRU or LFU policy, where each key
// keeps its own access time; here the policy in force now decides.
func (s *Server) refcount(e *entry) int64 {
	p := s.evict.policy
	if e.obj == nil && isShared(e.str) && (s.evict.max == 0 || !p.lru() && !p.lfu()) {
		return math.MaxInt32
	}
	return 1
}

func objectIdletime(s *Server, c *client, args [][]byte) {
	e := s.objectEntry(c, args[2])
	switch {
	case e == nil:
	case s.evict.policy.lfu():
		s.w.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	default:
		s.w.Int(int64(s.clock() - e.lru))
	}
}

func objectFreq(s *Server, c *client, args [][]byte) {
	e := s.objectEntry(c, args[2])
	switch {
	case e == nil:
	case !s.evict.policy.lfu():
		s.w.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	default:
		s.w.Int(int64(s.lfuDecayed(e)))
	}
}

func objectHelp(s *Server, c *client, args [][]byte) {
	s.help("OBJECT",
		"ENCODING <key>", "    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.",
		"FREQ <key>", "    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>", "    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>", "    Return the number of references of the value associated with the specified",
		"    <key>.",
	)
}
