package kv

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

func init() {
	debug := cmd("debug", -2, "admin noscript loading stale", 0, 0, 0, "server", "1.0.0",
		"A container for debugging commands", debugCommand)
	debug.flags |= cmdProtected
	register(debug)
}

// errDebugNotAllowed is the refusal of DEBUG that enable-debug-command
// does not allow, as Redis 7.0 words it.
const errDebugNotAllowed = `ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.`

// protectedAllowed reports whether c may run a protected command (DEBUG)
// under enable-debug-command: "yes", or "local" for a client of a Unix
// socket or of 127.0.0.1 or ::1, as Redis's allowProtectedAction has it.
func (s *Server) protectedAllowed(c *client) bool {
	switch s.inertValue("enable-debug-command") {
	case "yes":
		return true
	case "local":
		if isUnix(c.conn.LocalAddr()) {
			return true
		}
		if ta, ok := c.conn.RemoteAddr().(*net.TCPAddr); ok {
			ip := ta.IP.String()
			return ip == "127.0.0.1" || ip == "::1"
		}
	}
	return false
}

// debugCommand is Redis 7.0's DEBUG, for the subcommands that have a
// meaning here: those of Redis's that crash the server, tune its
// allocator, its replication or its encodings are unknown subcommands.
// Each subcommand takes the arguments Redis's takes; another count is
// an unknown subcommand, as in Redis.
func debugCommand(s *Server, c *client, args [][]byte) {
	sub, n := args[1], len(args)
	switch {
	case n == 2 && isOpt(sub, "help"):
		debugHelp(s)
	case isOpt(sub, "reload"):
		debugReload(s, args[2:])
	case n == 3 && isOpt(sub, "object"):
		debugObject(s, c, args[2])
	case n >= 3 && n <= 5 && isOpt(sub, "populate"):
		debugPopulate(s, c, args[2:])
	case n == 2 && isOpt(sub, "digest"):
		s.w.Simple(hex.EncodeToString(s.datasetDigest()))
	case isOpt(sub, "digest-value"):
		s.w.Array(n - 2)
		for _, key := range args[2:] {
			var digest [sha1.Size]byte
			// Not a lookup: a key whose time has passed has its digest,
			// as in Redis.
			if e := c.db.keys.get(key); e != nil {
				objectDigest(digest[:], e)
			}
			s.w.Simple(hex.EncodeToString(digest[:]))
		}
	case n == 3 && isOpt(sub, "protocol"):
		debugProtocol(s, c, args[2])
	case n == 3 && isOpt(sub, "sleep"):
		// As long as asked; past what a Duration holds, 146 years.
		time.Sleep(time.Duration(min(strtodPrefix(args[2])*float64(time.Second), 1<<62)))
		s.w.OK()
	case n == 3 && isOpt(sub, "set-active-expire"):
		s.expiry.off = atoi(args[2]) == 0
		s.w.OK()
	case n == 3 && isOpt(sub, "log"):
		s.log.Warn("DEBUG LOG: " + string(cstr(args[2])))
		s.w.OK()
	case n == 3 && isOpt(sub, "error"):
		// The argument as the whole error line, no "ERR" put before it,
		// and not counted among the error replies, as Redis sends it.
		b := append(s.w.Buf, '-')
		for _, ch := range args[2] {
			if ch == '\r' || ch == '\n' {
				ch = ' '
			}
			b = append(b, ch)
		}
		s.w.Buf = append(b, "\r\n"...)
	default:
		s.w.Error("ERR unknown subcommand or wrong number of arguments for '" + trunc(string(sub), 128) + "'. Try DEBUG HELP.")
	}
}

func debugHelp(s *Server) {
	s.help("DEBUG",
		"DIGEST",
		"    Output a hex signature representing the current DB content.",
		"DIGEST-VALUE <key> [<key> ...]",
		"    Output a hex signature of the values of all the specified keys.",
		"ERROR <string>",
		"    Return a Redis protocol error with <string> as message. Useful for clients",
		"    unit tests to simulate Redis errors.",
		"LOG <message>",
		"    Write <message> to the server log.",
		"OBJECT <key>",
		"    Show low level info about `key` and associated value.",
		"POPULATE <count> [<prefix>] [<size>]",
		"    Create <count> string keys named key:<num>. If <prefix> is specified then",
		"    it is used instead of the 'key' prefix. These are not propagated to",
		"    replicas. Cluster slots are not respected so keys not belonging to the",
		"    current node can be created in cluster mode.",
		"PROTOCOL <type>",
		"    Reply with a test value of the specified type. <type> can be: string,",
		"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
		"    true, false.",
		"RELOAD [option ...]",
		"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
		"    * MERGE: conflicting keys will be loaded from RDB.",
		"    * NOFLUSH: the existing database will not be removed before load, but",
		"      conflicting keys will generate an exception and kill the server.",
		"    * NOSAVE: the database will be loaded from an existing RDB file.",
		"    Examples:",
		"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
		"      the database.",
		"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
		"      existing RDB file.",
		"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
		"      file to the database.",
		"SET-ACTIVE-EXPIRE <0|1>",
		"    Setting it to 0 disables expiring keys in background when they are not",
		"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
		"    default.",
		"SLEEP <seconds>",
		"    Stop the server for <seconds>. Decimals allowed.",
	)
}

// debugReload saves the keyspace to the RDB file, empties it and loads
// the file back, as Redis's DEBUG RELOAD; NOSAVE loads the file as it
// is, NOFLUSH loads it over the keyspace, where a key the keyspace has
// already fails the load (Redis stops the server) unless MERGE lets the
// file's replace it. A background save that runs is stopped first, as
// FLUSHALL stops it, and a rewrite of the log starts again. Loading sends
// no keyspace events, as Redis's load sends none. The file is read whole
// before the keyspace changes: a load that fails (a corrupt file, a key
// twice) leaves the keyspace as it was, where Redis stops.
func debugReload(s *Server, opts [][]byte) {
	flush, save, merge := true, true, false
	for _, opt := range opts {
		switch {
		case isOpt(opt, "merge"):
			merge = true
		case isOpt(opt, "noflush"):
			flush = false
		case isOpt(opt, "nosave"):
			save = false
		default:
			s.w.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	s.abortBgsave("DEBUG RELOAD")
	if save {
		if err := s.save(); err != nil {
			s.log.Error("kv: DEBUG RELOAD could not save", "err", err)
			s.w.Error("ERR")
			return
		}
	}
	staged, err := s.stageSnapshot(flush || merge)
	if err != nil {
		s.log.Error("kv: DEBUG RELOAD could not load the RDB file", "err", err)
		s.w.Error("ERR Error trying to load the RDB dump")
		return
	}
	// The keyspace is about to be replaced under a rewrite's walk, which
	// goes by slot and by the mark each entry carries, and the reload is
	// not logged to the rewrite's tail: it starts again, as for SWAPDB.
	if s.aof != nil && s.aof.rw != nil {
		s.aof.rw.restart("DEBUG RELOAD")
	}
	if flush {
		for _, d := range s.dbs {
			s.touchAllWatched(d, nil)
			d.flush()
		}
	}
	s.replay = true // no keyspace events
	for i, sd := range staged {
		d := s.dbs[i]
		for j := range sd.keys.len() {
			k, e := sd.keys.at(j)
			key := []byte(k)
			d.remove(key)     // MERGE: the file's replaces it
			d.insert(key, *e) // its access as the file gave it, as Redis's load restores it
		}
	}
	s.replay = false
	if flush || merge {
		s.invalidateAll() // as Redis's emptyData; MERGE replaced keys too
	}
	s.log.Warn("kv: DB reloaded by DEBUG RELOAD")
	s.w.OK()
}

// stageSnapshot reads the RDB file, for DEBUG RELOAD, into databases of
// its own: a missing file is an error, and, unless replace, so is a key
// the keyspace holds.
func (s *Server) stageSnapshot(replace bool) ([]*db, error) {
	f, err := os.Open(s.snapshotPath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	staged := make([]*db, len(s.dbs))
	for i := range staged {
		staged[i] = newDB(s, i)
	}
	res, err := s.readSnapshot(f, staged)
	if err != nil {
		return nil, err
	}
	if !replace {
		for i, sd := range staged {
			for j := range sd.keys.len() {
				if k, _ := sd.keys.at(j); s.dbs[i].keys.get([]byte(k)) != nil {
					return nil, fmt.Errorf("key %q is in database %d already", k, i)
				}
			}
		}
	}
	s.snap.loaded, s.snap.expired = res.loaded, res.expired
	return staged, nil
}

// debugObject answers DEBUG OBJECT key with Redis's line: an address,
// the reference count OBJECT REFCOUNT gives, the encoding, the length of
// the value in an RDB file (serializedlength), the access clock and the
// idle seconds, and for a list Redis's quicklist figures (ql_nodes, the
// items a node on average, list-max-listpack-size, 0 for compression,
// the nodes' bytes as listpacks).
func debugObject(s *Server, c *client, key []byte) {
	e := c.db.keys.get(key) // not a lookup, as in Redis
	if e == nil {
		s.w.Error(errNoKey)
		return
	}
	w := rdbWriter{compress: s.compress()}
	w.value(e)
	line := fmt.Sprintf("Value at:%p refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		e, s.refcount(e), e.encoding(), len(w.buf), e.lru&(1<<24-1), s.clock()-e.lru)
	if l, ok := e.obj.(*list); ok {
		nodes, size := 0, 0
		for i := range l.count {
			nd := l.node(i)
			if nd.size() == 0 {
				continue
			}
			nodes++
			size += len(nd.listpack())
		}
		avg := 0.0
		if nodes > 0 {
			avg = float64(l.len()) / float64(nodes)
		}
		line += fmt.Sprintf(" ql_nodes:%d ql_avg_node:%.2f ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:%d", nodes, avg, size)
	}
	s.w.Simple(line)
}

// debugPopulate answers DEBUG POPULATE count [prefix] [size]: count string
// keys prefix:0, prefix:1, ... ("key" without a prefix), each "value:<n>"
// or, with a size, that many bytes starting with it and zeros after; a
// key that exists is left as it is. As in Redis, they are not written to
// the append-only file and count no change.
func debugPopulate(s *Server, c *client, args [][]byte) {
	count, ok := s.positiveArg(args[0])
	if !ok {
		return
	}
	var size int64
	if len(args) == 3 {
		if size, ok = s.positiveArg(args[2]); !ok {
			return
		}
	}
	prefix := "key"
	if len(args) >= 2 {
		prefix = string(cstr(args[1]))
	}
	d := c.db
	var key, val []byte
	for j := range count {
		key = strconv.AppendInt(append(append(key[:0], prefix...), ':'), j, 10)
		// Redis prints the name into a buffer of 128 bytes: a longer one is
		// cut, and the keys that share its first 127 bytes are one.
		key = key[:min(len(key), 127)]
		if d.exists(key) {
			continue
		}
		val = strconv.AppendInt(append(val[:0], "value:"...), j, 10)
		if n := int(size); n > 0 {
			// That many bytes: the text cut, or zeros after it.
			if len(val) >= n {
				val = val[:n]
			} else {
				val = append(val, make([]byte, n-len(val))...)
			}
		}
		d.setString(key, string(val), false)
		s.keyChanged(d, key, c) // no change counted
	}
	s.w.OK()
}

// positiveArg parses a count that must not be negative, answering Redis's
// one error for one that is not an integer or is negative.
func (s *Server) positiveArg(arg []byte) (int64, bool) {
	n, ok := parseInt(arg)
	if !ok || n < 0 {
		s.w.Error("ERR value is out of range, must be positive")
		return 0, false
	}
	return n, true
}

// debugProtocol answers DEBUG PROTOCOL type with Redis's sample reply of
// that type, for clients to test their decoding.
func debugProtocol(s *Server, c *client, name []byte) {
	w := &s.w
	switch {
	case isOpt(name, "string"):
		w.BulkString("Hello World")
	case isOpt(name, "integer"):
		w.Int(12345)
	case isOpt(name, "double"):
		w.Double(3.141)
	case isOpt(name, "bignum"):
		w.BigNumber("1234567999999999999999999999999999999")
	case isOpt(name, "null"):
		w.Null()
	case isOpt(name, "array"), isOpt(name, "set"):
		if isOpt(name, "set") {
			w.Set(3)
		} else {
			w.Array(3)
		}
		for j := range 3 {
			w.Int(int64(j))
		}
	case isOpt(name, "map"):
		w.Map(3)
		for j := range 3 {
			w.Int(int64(j))
			w.Bool(j == 1)
		}
	case isOpt(name, "attrib"):
		if c.proto >= 3 {
			w.Attribute(1)
			w.BulkString("key-popularity")
			w.Array(2)
			w.BulkString("key:123")
			w.Int(90)
		}
		w.BulkString("Some real reply following the attribute")
	case isOpt(name, "push"):
		if c.proto < 3 {
			w.Error("ERR RESP2 is not supported by this command")
			return
		}
		w.Push(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
		w.BulkString("Some real reply following the push reply")
	case isOpt(name, "true"):
		w.Bool(true)
	case isOpt(name, "false"):
		w.Bool(false)
	case isOpt(name, "verbatim"):
		w.Verbatim("txt", []byte("This is a verbatim\nstring"))
	default:
		w.Error("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// strtodPrefix reads a number from the start of b as C's strtod with an
// end pointer reads it: what follows the longest number there is ignored,
// and no number is 0.
func strtodPrefix(b []byte) float64 {
	b = cstr(b)
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	end := i
	for end < len(b) && (b[end] >= '0' && b[end] <= '9' || b[end] == '.' || b[end] == 'e' || b[end] == 'E' || b[end] == '+' || b[end] == '-') {
		end++
	}
	for ; end > i; end-- {
		if f, err := strconv.ParseFloat(string(b[i:end]), 64); err == nil || errors.Is(err, strconv.ErrRange) {
			return f
		}
	}
	return 0
}

// The digests of DEBUG DIGEST and DIGEST-VALUE, computed as Redis 7.0's
// debug.c computes them, so that a keyspace has the same digest in evkv
// and in Redis: a key's digest mixes its name, its type and its value
// (a string's bytes; a list's items in order; the XOR of a set's members'
// SHA-1s, and of a hash's or sorted set's pairs' digests, so that order
// does not count), and a mark if it has a TTL; the keyspace's is the XOR
// of its keys', each database's mixed with its number.

// xorDigest XORs the SHA-1 of b into digest.
func xorDigest(digest []byte, b []byte) {
	h := sha1.Sum(b)
	for i := range digest {
		digest[i] ^= h[i]
	}
}

// mixDigest XORs b's SHA-1 into digest, then replaces digest by its own
// SHA-1, so that the order of what is mixed counts.
func mixDigest(digest []byte, b []byte) {
	xorDigest(digest, b)
	h := sha1.Sum(digest)
	copy(digest, h[:])
}

// rdbObjectTypes are Redis's object type numbers (OBJ_STRING, ...), which
// a key's digest mixes in.
var rdbObjectTypes = map[string]uint32{typeString: 0, typeList: 1, typeSet: 2, typeZSet: 3, typeHash: 4}

// objectDigest mixes e's type and value into digest, as Redis's
// xorObjectDigest.
func objectDigest(digest []byte, e *entry) {
	mixDigest(digest, binary.BigEndian.AppendUint32(nil, rdbObjectTypes[e.typeName()]))
	switch o := e.obj.(type) {
	case nil, *strBuf:
		mixDigest(digest, stringBytes(e.str))
	case *list:
		for v := range o.items(0, o.len()-1) {
			mixDigest(digest, v)
		}
	case *set:
		for i := range o.len() {
			xorDigest(digest, stringBytes(o.at(i)))
		}
	case *zset:
		var buf [32]byte
		for z := o.tree.first(); z.ok(); z.next() {
			var pair [sha1.Size]byte
			mixDigest(pair[:], stringBytes(z.member()))
			mixDigest(pair[:], appendScore(buf[:0], z.score()))
			xorDigest(digest, pair[:])
		}
	case *hash:
		for f, v := range o.all() {
			var pair [sha1.Size]byte
			mixDigest(pair[:], f)
			mixDigest(pair[:], v)
			xorDigest(digest, pair[:])
		}
	}
	if e.exp != 0 {
		xorDigest(digest, []byte("!!expire!!"))
	}
}

// datasetDigest is DEBUG DIGEST's: 20 zero bytes for an empty keyspace.
func (s *Server) datasetDigest() []byte {
	final := make([]byte, sha1.Size)
	for _, d := range s.dbs {
		if d.size() == 0 {
			continue
		}
		mixDigest(final, binary.BigEndian.AppendUint32(nil, uint32(d.id)))
		for i := range d.keys.len() {
			key, e := d.keys.at(i)
			var digest [sha1.Size]byte
			mixDigest(digest[:], stringBytes(key))
			objectDigest(digest[:], e)
			xorDigest(final, digest[:])
		}
	}
	return final
}
