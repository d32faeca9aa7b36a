package kv

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

func init() {
	register(
		cmd("dump", 2, "readonly", 1, 1, 1, "generic", "2.6.0", "Return a serialized version of the value stored at the specified key.", dumpCommand),
		cmd("restore", -4, "write denyoom", 1, 1, 1, "generic", "2.6.0", "Create a key using the provided serialized value, previously obtained using DUMP.", restoreCommand).withCategories("@keyspace", "@dangerous"),
	)
}

// compress reports whether strings are written LZF-compressed
// (rdbcompression).
func (s *Server) compress() bool { return s.inertValue("rdbcompression") == "yes" }

func dumpCommand(s *Server, c *client, args [][]byte) {
	e := c.db.read(args[1])
	if e == nil {
		s.w.Null()
		return
	}
	s.w.Bulk(dumpPayload(e, s.compress()))
}

// parsePayload checks a DUMP payload's version and checksum, as Redis's
// verifyDumpPayload, and reads its value. ok is false for a payload whose
// footer is wrong; err is the value's error otherwise.
func parsePayload(p []byte, lim *encodingLimits) (e entry, ok bool, err error) {
	if len(p) < 10 {
		return entry{}, false, nil
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > rdbVersion || rdbCRC(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return entry{}, false, nil
	}
	// The value is read from the whole payload, footer included, as
	// Redis reads it: a value may end inside the footer.
	r := newRDBReader(bytes.NewReader(p), int64(len(p)))
	if lim != nil {
		r.limits = lim
	}
	t, err := r.byte()
	if err != nil {
		return entry{}, true, err
	}
	if !isValueType(t) {
		return entry{}, true, errRDBBadType(t)
	}
	e, err = r.value(t)
	return e, true, err
}

type errRDBBadType byte

func (t errRDBBadType) Error() string { return "unknown value type " + strconv.Itoa(int(t)) }

// restoreCommand is RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME
// seconds] [FREQ frequency], as Redis 7.0's: the options are checked
// first, then that the key is absent (unless REPLACE), the TTL, and the
// payload. A TTL already past makes no key (deleting the one REPLACE
// replaces, logged as DEL); a relative one is logged as absolute, with
// ABSTTL. IDLETIME sets the key's idle time unless an LFU policy is
// set, and FREQ its access frequency only then, as Redis's
// objectSetLRUOrLFU.
func restoreCommand(s *Server, c *client, args [][]byte) {
	key := args[1]
	replace, absTTL := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(args); j++ {
		more := len(args) - j - 1
		switch opt := strings.ToLower(string(args[j])); {
		case opt == "replace":
			replace = true
		case opt == "absttl":
			absTTL = true
		case opt == "idletime" && more >= 1 && freq == -1:
			v, ok := s.intArg(args[j+1], 0, math.MaxInt64, "ERR Invalid IDLETIME value, must be >= 0")
			if !ok {
				return
			}
			idle = v
			j++
		case opt == "freq" && more >= 1 && idle == -1:
			v, ok := s.intArg(args[j+1], 0, 255, "ERR Invalid FREQ value, must be >= 0 and <= 255")
			if !ok {
				return
			}
			freq = v
			j++
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	d := c.db
	if !replace && d.lookup(key) != nil {
		s.w.Error("BUSYKEY Target key name already exists.")
		return
	}
	ttl, ok := s.intArg(args[2], 0, math.MaxInt64, "ERR Invalid TTL value, must be >= 0")
	if !ok {
		return
	}
	val, ok, err := parsePayload(args[3], &s.limits)
	if !ok {
		s.w.Error("ERR DUMP payload version or checksum are wrong")
		return
	}
	if err != nil {
		s.w.Error("ERR Bad data format")
		return
	}
	deleted := replace && d.remove(key)
	if ttl != 0 && !absTTL {
		ttl += s.now()
	}
	if ttl != 0 && s.passed(ttl) {
		if deleted {
			s.rewrite([]byte("DEL"), key)
			s.modified(d, key)
			s.notify(notifyGeneric, "del", key, d.id)
		}
		s.w.OK()
		return
	}
	val.exp = ttl
	val.lru = s.loadedLRU(idle, freq)
	d.insert(key, val)
	if ttl != 0 && !absTTL {
		prop := make([][]byte, 0, len(args)+1)
		prop = append(prop, args[0], args[1], strconv.AppendInt(nil, ttl, 10))
		prop = append(append(prop, args[3:]...), []byte("ABSTTL"))
		s.rewrite(prop...)
	}
	s.modified(d, key)
	s.notify(notifyGeneric, "restore", key, d.id)
	s.signalReady(d, key)
	s.w.OK()
}
