package kv

import (
	"math"
	"math/big"
	"strconv"
)

func init() {
	register(
		cmd("get", 2, "readonly fast", 1, 1, 1, "string", "1.0.0", "Returns the string value of a key.", getCommand),
		cmd("set", -3, "write denyoom", 1, 1, 1, "string", "1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", setCommand),
		cmd("setnx", 3, "write denyoom fast", 1, 1, 1, "string", "1.0.0", "Set the string value of a key only when the key doesn't exist.", setnxCommand),
		cmd("setex", 4, "write denyoom", 1, 1, 1, "string", "2.0.0", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", setexCommand),
		cmd("psetex", 4, "write denyoom", 1, 1, 1, "string", "2.6.0", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", psetexCommand),
		cmd("getset", 3, "write denyoom fast", 1, 1, 1, "string", "1.0.0", "Returns the previous string value of a key after setting it to a new value.", getsetCommand),
		cmd("getdel", 2, "write fast", 1, 1, 1, "string", "6.2.0", "Returns the string value of a key after deleting the key.", getdelCommand),
		cmd("getex", -2, "write fast", 1, 1, 1, "string", "6.2.0", "Returns the string value of a key after setting its expiration time.", getexCommand),
		cmd("mget", -2, "readonly fast", 1, -1, 1, "string", "1.0.0", "Atomically returns the string values of one or more keys.", mgetCommand),
		cmd("mset", -3, "write denyoom", 1, -1, 2, "string", "1.0.1", "Atomically creates or modifies the string values of one or more keys.", msetCommand),
		cmd("msetnx", -3, "write denyoom", 1, -1, 2, "string", "1.0.1", "Atomically modifies the string values of one or more keys only when all keys don't exist.", msetnxCommand),
		cmd("append", 3, "write denyoom fast", 1, 1, 1, "string", "2.0.0", "Appends a string to the value of a key. Creates the key if it doesn't exist.", appendCommand),
		cmd("strlen", 2, "readonly fast", 1, 1, 1, "string", "2.2.0", "Returns the length of a string value.", strlenCommand),
		cmd("incr", 2, "write denyoom fast", 1, 1, 1, "string", "1.0.0", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", incrCommand),
		cmd("decr", 2, "write denyoom fast", 1, 1, 1, "string", "1.0.0", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", decrCommand),
		cmd("incrby", 3, "write denyoom fast", 1, 1, 1, "string", "1.0.0", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", incrbyCommand),
		cmd("decrby", 3, "write denyoom fast", 1, 1, 1, "string", "1.0.0", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", decrbyCommand),
		cmd("incrbyfloat", 3, "write denyoom fast", 1, 1, 1, "string", "2.6.0", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", incrbyfloatCommand),
		cmd("getrange", 4, "readonly", 1, 1, 1, "string", "2.4.0", "Returns a substring of the string stored at a key.", getrangeCommand),
		cmd("substr", 4, "readonly", 1, 1, 1, "string", "1.0.0", "Returns a substring from a string value.", getrangeCommand),
		cmd("setrange", 4, "write denyoom", 1, 1, 1, "string", "2.2.0", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", setrangeCommand),
	)
}

// lookupString returns key's string value for a command that reads it
// (db.read): ok false with the WRONGTYPE error written if key holds
// another type; found false if absent.
func (s *Server) lookupString(c *client, key []byte) (val string, found, ok bool) {
	return s.stringOf(c.db.read(key))
}

// lookupStringWrite is lookupString for a command that writes key: as
// Redis's lookupKeyWrite, it counts no keyspace hit or miss.
func (s *Server) lookupStringWrite(c *client, key []byte) (val string, found, ok bool) {
	return s.stringOf(c.db.lookup(key))
}

func (s *Server) stringOf(e *entry) (val string, found, ok bool) {
	switch {
	case e == nil:
		return "", false, true
	case !e.isString():
		s.w.Error(errWrongType)
		return "", true, false
	}
	return e.str, true, true
}

func getCommand(s *Server, c *client, args [][]byte) {
	val, found, ok := s.lookupString(c, args[1])
	switch {
	case !ok:
	case !found:
		s.w.Null()
	default:
		s.w.BulkString(val)
	}
}

// expiry is a parsed EX/PX/EXAT/PXAT option.
type expiry struct {
	at      int64 // Unix ms; 0 for none
	keepTTL bool
	persist bool
}

// parseExpiry turns an amount in unit (seconds or ms, relative or absolute)
// into Unix ms, with Redis's error for a bad or overflowing time.
func (s *Server) parseExpiry(v []byte, seconds, absolute bool, cmdName string) (int64, string) {
	n, ok := parseInt(v)
	if !ok {
		return 0, errNotInt
	}
	invalid := "ERR invalid expire time in '" + cmdName + "' command"
	if n <= 0 {
		return 0, invalid
	}
	if seconds {
		if n > math.MaxInt64/1000 {
			return 0, invalid
		}
		n *= 1000
	}
	if !absolute {
		if n > math.MaxInt64-s.now() {
			return 0, invalid
		}
		n += s.now()
	}
	return n, ""
}

// stringOptions are the options of SET (NX, XX, GET, KEEPTTL and a time)
// or GETEX (PERSIST and a time).
type stringOptions struct {
	nx, xx, get bool
	keepTTL     bool
	persist     bool
	unit        string // "ex", "px", "exat" or "pxat" for a time; "" for none
	time        []byte // the time, read by readExpiry
}

// parseStringOptions reads SET's options (set) or GETEX's from args,
// writing the syntax error if they are bad, as Redis 7.0's
// parseExtendedStringArgumentsOrReply: an option may come again, not with
// one it excludes (NX and XX, KEEPTTL or PERSIST and a time, two units),
// and a time given twice in one unit is the last one, unread until readExpiry.
func (s *Server) parseStringOptions(args [][]byte, set bool) (o stringOptions, ok bool) {
	i := 2
	if set {
		i = 3
	}
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case set && isOpt(a, "nx") && !o.xx:
			o.nx = true
		case set && isOpt(a, "xx") && !o.nx:
			o.xx = true
		case set && isOpt(a, "get"):
			o.get = true
		case set && isOpt(a, "keepttl") && o.unit == "":
			o.keepTTL = true
		case !set && isOpt(a, "persist") && o.unit == "":
			o.persist = true
		default:
			unit := ""
			for _, u := range []string{"ex", "px", "exat", "pxat"} {
				if isOpt(a, u) {
					unit = u
				}
			}
			if unit == "" || (o.unit != "" && o.unit != unit) || o.keepTTL || o.persist || i+1 == len(args) {
				s.w.Error(errSyntax)
				return o, false
			}
			o.unit, o.time = unit, args[i+1]
			i++
		}
	}
	return o, true
}

// readExpiry reads the options' time, writing Redis's error if it is not a
// valid one for cmdName.
func (s *Server) readExpiry(o stringOptions, cmdName string) (expiry, bool) {
	exp := expiry{keepTTL: o.keepTTL, persist: o.persist}
	if o.unit == "" {
		return exp, true
	}
	at, msg := s.parseExpiry(o.time, o.unit == "ex" || o.unit == "exat", o.unit == "exat" || o.unit == "pxat", cmdName)
	if msg != "" {
		s.w.Error(msg)
		return exp, false
	}
	exp.at = at
	return exp, true
}

func setCommand(s *Server, c *client, args [][]byte) {
	o, ok := s.parseStringOptions(args, true)
	if !ok {
		return
	}
	exp, ok := s.readExpiry(o, "set")
	if !ok {
		return
	}
	nx, xx, get, hasExp := o.nx, o.xx, o.get, o.unit != ""
	key := args[1]
	var old string
	var oldFound bool
	if get {
		v, found, ok := s.lookupString(c, key)
		if !ok {
			return
		}
		old, oldFound = v, found
	}
	exists := oldFound || (!get && c.db.exists(key))
	if (nx && exists) || (xx && !exists) {
		if get {
			s.replyMaybe(old, oldFound)
		} else {
			s.w.Null()
		}
		return
	}
	s.setKey(c.db, key, valueString(args[2]), exp)
	if get {
		s.replyMaybe(old, oldFound)
	} else {
		s.w.OK()
	}
	if hasExp {
		s.rewrite([]byte("SET"), key, args[2], []byte("PXAT"), strconv.AppendInt(nil, exp.at, 10))
	} else if exp.keepTTL {
		s.rewrite([]byte("SET"), key, args[2], []byte("KEEPTTL"))
	} else if len(args) > 3 {
		s.rewrite([]byte("SET"), key, args[2])
	}
}

func (s *Server) replyMaybe(v string, found bool) {
	if found {
		s.w.BulkString(v)
	} else {
		s.w.Null()
	}
}

// setKey stores a string under key with its expiry, and says so to
// watchers and subscribers. Under an LFU policy the key is looked up
// first, an access its counter keeps, as Redis's setKey looks it up for
// writing (the access time of any other policy is the new value's own).
func (s *Server) setKey(d *db, key []byte, val string, exp expiry) {
	if s.evict.policy.lfu() {
		d.lookup(key)
	}
	s.storeString(d, key, val, exp, "set")
}

// storeString is setKey with the keyspace event to send (the INCR family
// sends its own), and returns the entry.
func (s *Server) storeString(d *db, key []byte, val string, exp expiry, event string) *entry {
	e := d.setString(key, val, exp.keepTTL)
	if exp.at != 0 {
		d.setExpire(key, e, exp.at)
	}
	s.modified(d, key)
	s.notify(notifyString, event, key, d.id)
	if exp.at != 0 {
		s.notify(notifyGeneric, "expire", key, d.id)
	}
	return e
}

func setnxCommand(s *Server, c *client, args [][]byte) {
	if c.db.lookup(args[1]) != nil { // an access, as Redis's lookupKeyWrite
		s.w.Int(0)
		return
	}
	s.setKey(c.db, args[1], valueString(args[2]), expiry{})
	s.w.Int(1)
}

func setexCommand(s *Server, c *client, args [][]byte)  { setexGeneric(s, c, args, true) }
func psetexCommand(s *Server, c *client, args [][]byte) { setexGeneric(s, c, args, false) }

func setexGeneric(s *Server, c *client, args [][]byte, seconds bool) {
	name := "setex"
	if !seconds {
		name = "psetex"
	}
	at, msg := s.parseExpiry(args[2], seconds, false, name)
	if msg != "" {
		s.w.Error(msg)
		return
	}
	s.setKey(c.db, args[1], valueString(args[3]), expiry{at: at})
	s.w.OK()
	s.rewrite([]byte("SET"), args[1], args[3], []byte("PXAT"), strconv.AppendInt(nil, at, 10))
}

func getsetCommand(s *Server, c *client, args [][]byte) {
	old, found, ok := s.lookupString(c, args[1])
	if !ok {
		return
	}
	s.setKey(c.db, args[1], valueString(args[2]), expiry{})
	s.replyMaybe(old, found)
	s.rewrite([]byte("SET"), args[1], args[2])
}

func getdelCommand(s *Server, c *client, args [][]byte) {
	val, found, ok := s.lookupString(c, args[1])
	if !ok {
		return
	}
	if !found {
		s.w.Null()
		return
	}
	s.deleteKey(c.db, args[1])
	s.w.BulkString(val)
	s.rewrite([]byte("DEL"), args[1])
}

func getexCommand(s *Server, c *client, args [][]byte) {
	o, ok := s.parseStringOptions(args, false)
	if !ok {
		return
	}
	key := args[1]
	val, found, ok := s.lookupString(c, key)
	if !ok {
		return
	}
	if !found {
		s.w.Null()
		return
	}
	// The time is read once the key is found a string, as Redis's
	// getexCommand reads it: an absent key is a null, whatever the time.
	exp, ok := s.readExpiry(o, "getex")
	if !ok {
		return
	}
	e := c.db.keys.get(key)
	switch {
	case exp.at != 0 && exp.at <= s.now():
		s.deleteKey(c.db, key)
		s.rewrite([]byte("DEL"), key)
	case exp.at != 0:
		c.db.setExpire(key, e, exp.at)
		s.modified(c.db, key)
		s.notify(notifyGeneric, "expire", key, c.db.id)
		s.rewrite([]byte("PEXPIREAT"), key, strconv.AppendInt(nil, exp.at, 10))
	case exp.persist:
		if c.db.persist(key, e) {
			s.modified(c.db, key)
			s.notify(notifyGeneric, "persist", key, c.db.id)
			s.rewrite([]byte("PERSIST"), key)
		}
	}
	s.w.BulkString(val)
}

func mgetCommand(s *Server, c *client, args [][]byte) {
	s.w.Array(len(args) - 1)
	for _, key := range args[1:] {
		if e := c.db.read(key); e == nil || !e.isString() {
			s.w.Null()
		} else {
			s.w.BulkString(e.str)
		}
	}
}

func msetCommand(s *Server, c *client, args [][]byte) {
	if len(args)%2 == 0 {
		s.w.Error("ERR wrong number of arguments for 'mset' command")
		return
	}
	for i := 1; i < len(args); i += 2 {
		s.setKey(c.db, args[i], valueString(args[i+1]), expiry{})
	}
	s.w.OK()
}

func msetnxCommand(s *Server, c *client, args [][]byte) {
	if len(args)%2 == 0 {
		s.w.Error("ERR wrong number of arguments for 'msetnx' command")
		return
	}
	for i := 1; i < len(args); i += 2 {
		if c.db.lookup(args[i]) != nil { // an access, as Redis's lookupKeyWrite
			s.w.Int(0)
			return
		}
	}
	for i := 1; i < len(args); i += 2 {
		s.setKey(c.db, args[i], valueString(args[i+1]), expiry{})
	}
	s.w.Int(1)
}

// checkStringLength reports Redis's error if a string of size bytes
// would grow past proto-max-bulk-len with add more (both at least 0; their
// sum is not computed, so that it cannot wrap around).
func (s *Server) checkStringLength(size, add int64) bool {
	if limit := int64(s.cfg.ProtoMaxBulkLen); size > limit || add > limit-size {
		s.w.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
		return false
	}
	return true
}

func appendCommand(s *Server, c *client, args [][]byte) {
	key := args[1]
	val, found, ok := s.lookupStringWrite(c, key)
	if !ok {
		return
	}
	if !s.checkStringLength(int64(len(val)), int64(len(args[2]))) {
		return
	}
	e := c.db.keys.get(key)
	if !found {
		e = c.db.setString(key, valueString(args[2]), false)
	} else {
		// In place, with room to grow (strBuf); unshared and raw even if
		// nothing is appended, as Redis makes it.
		b := e.edit(len(val) + len(args[2]))
		copy(b[len(val):], args[2])
	}
	s.modified(c.db, key)
	s.notify(notifyString, "append", key, c.db.id)
	s.w.Int(int64(len(e.str)))
}

func strlenCommand(s *Server, c *client, args [][]byte) {
	val, _, ok := s.lookupString(c, args[1])
	if ok {
		s.w.Int(int64(len(val)))
	}
}

func incrCommand(s *Server, c *client, args [][]byte) { incrGeneric(s, c, args[1], 1) }
func decrCommand(s *Server, c *client, args [][]byte) { incrGeneric(s, c, args[1], -1) }

func incrbyCommand(s *Server, c *client, args [][]byte) {
	n, ok := parseInt(args[2])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	incrGeneric(s, c, args[1], n)
}

func decrbyCommand(s *Server, c *client, args [][]byte) {
	n, ok := parseInt(args[2])
	if !ok || n == math.MinInt64 {
		if ok {
			s.w.Error("ERR decrement would overflow")
		} else {
			s.w.Error(errNotInt)
		}
		return
	}
	incrGeneric(s, c, args[1], -n)
}

func incrGeneric(s *Server, c *client, key []byte, by int64) {
	val, found, ok := s.lookupStringWrite(c, key)
	if !ok {
		return
	}
	var cur int64
	if found {
		if cur, ok = parseInt([]byte(val)); !ok {
			s.w.Error(errNotInt)
			return
		}
	}
	if (by > 0 && cur > math.MaxInt64-by) || (by < 0 && cur < math.MinInt64-by) {
		s.w.Error(errOverflow)
		return
	}
	cur += by
	s.storeString(c.db, key, intString(cur), expiry{keepTTL: true}, "incrby")
	s.w.Int(cur) // logged as sent, as Redis's incrDecrCommand is
}

func incrbyfloatCommand(s *Server, c *client, args [][]byte) {
	val, found, ok := s.lookupStringWrite(c, args[1])
	if !ok {
		return
	}
	cur := new(big.Float)
	if found {
		if cur, ok = parseLongDouble([]byte(val)); !ok {
			s.w.Error(errNotFloat)
			return
		}
	}
	by, ok := parseLongDouble(args[2])
	if !ok {
		s.w.Error(errNotFloat)
		return
	}
	sum, ok := addLongDouble(cur, by)
	if !ok {
		s.w.Error("ERR increment would produce NaN or Infinity")
		return
	}
	out := formatLongDouble(sum)
	s.storeString(c.db, args[1], out, expiry{keepTTL: true}, "incrbyfloat").enc = encNotInt
	s.w.BulkString(out)
	s.rewrite([]byte("SET"), args[1], []byte(out), []byte("KEEPTTL"))
}

func getrangeCommand(s *Server, c *client, args [][]byte) {
	start, ok1 := parseInt(args[2])
	end, ok2 := parseInt(args[3])
	if !ok1 || !ok2 {
		s.w.Error(errNotInt)
		return
	}
	val, _, ok := s.lookupString(c, args[1])
	if !ok {
		return
	}
	n := int64(len(val))
	if start < 0 && end < 0 && start > end {
		s.w.BulkString("")
		return
	}
	if start < 0 {
		start = max(n+start, 0)
	}
	if end < 0 {
		end = max(n+end, 0)
	}
	end = min(end, n-1)
	if start > end || n == 0 {
		s.w.BulkString("")
		return
	}
	s.w.BulkString(val[start : end+1])
}

func setrangeCommand(s *Server, c *client, args [][]byte) {
	off, ok := parseInt(args[2])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	if off < 0 {
		s.w.Error("ERR offset is out of range")
		return
	}
	key, part := args[1], args[3]
	val, found, ok := s.lookupStringWrite(c, key)
	if !ok {
		return
	}
	if len(part) == 0 {
		s.w.Int(int64(len(val)))
		return
	}
	if !s.checkStringLength(off, int64(len(part))) {
		return
	}
	var e *entry
	if found {
		e = c.db.keys.get(key)
	}
	_, b := c.db.editString(key, e, max(len(val), int(off)+len(part)))
	copy(b[off:], part)
	s.modified(c.db, key)
	s.notify(notifyString, "setrange", key, c.db.id)
	s.w.Int(int64(len(b)))
}
