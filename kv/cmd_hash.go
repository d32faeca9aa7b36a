package kv

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

func init() {
	register(
		cmd("hset", -4, "write denyoom fast", 1, 1, 1, "hash", "2.0.0", "Set the string value of a hash field", hsetCommand),
		cmd("hsetnx", 4, "write denyoom fast", 1, 1, 1, "hash", "2.0.0", "Set the value of a hash field, only if the field does not exist", hsetnxCommand),
		cmd("hmset", -4, "write denyoom fast", 1, 1, 1, "hash", "2.0.0", "Set multiple hash fields to multiple values", hsetCommand),
		cmd("hget", 3, "readonly fast", 1, 1, 1, "hash", "2.0.0", "Get the value of a hash field", hgetCommand),
		cmd("hmget", -3, "readonly fast", 1, 1, 1, "hash", "2.0.0", "Get the values of all the given hash fields", hmgetCommand),
		cmd("hdel", -3, "write fast", 1, 1, 1, "hash", "2.0.0", "Delete one or more hash fields", hdelCommand),
		cmd("hlen", 2, "readonly fast", 1, 1, 1, "hash", "2.0.0", "Get the number of fields in a hash", hlenCommand),
		cmd("hstrlen", 3, "readonly fast", 1, 1, 1, "hash", "3.2.0", "Get the length of the value of a hash field", hstrlenCommand),
		cmd("hexists", 3, "readonly fast", 1, 1, 1, "hash", "2.0.0", "Determine if a hash field exists", hexistsCommand),
		cmd("hincrby", 4, "write denyoom fast", 1, 1, 1, "hash", "2.0.0", "Increment the integer value of a hash field by the given number", hincrbyCommand),
		cmd("hincrbyfloat", 4, "write denyoom fast", 1, 1, 1, "hash", "2.6.0", "Increment the float value of a hash field by the given amount", hincrbyfloatCommand),
		cmd("hkeys", 2, "readonly", 1, 1, 1, "hash", "2.0.0", "Get all the fields in a hash", hkeysCommand),
		cmd("hvals", 2, "readonly", 1, 1, 1, "hash", "2.0.0", "Get all the values in a hash", hvalsCommand),
		cmd("hgetall", 2, "readonly", 1, 1, 1, "hash", "2.0.0", "Get all the fields and values in a hash", hgetallCommand),
		cmd("hrandfield", -2, "readonly", 1, 1, 1, "hash", "6.2.0", "Get one or multiple random fields from a hash", hrandfieldCommand),
		cmd("hscan", -3, "readonly", 1, 1, 1, "hash", "2.8.0", "Incrementally iterate hash fields and associated values", hscanCommand),
	)
}

var argHSET = []byte("HSET")

// hashForUpdate is lookupWriteAs, creating an empty hash if key is absent,
// as Redis's hashTypeLookupWriteOrCreate does; the caller must add a field
// to a created hash.
func hashForUpdate(s *Server, c *client, key []byte) (h *hash, ok bool) {
	h, ok = lookupWriteAs[*hash](s, c.db, key)
	if !ok || h != nil {
		return h, ok
	}
	h = newHash(&s.limits)
	c.db.add(key, h)
	return h, true
}

// hsetCommand serves HSET and HMSET, which differ in their reply.
func hsetCommand(s *Server, c *client, args [][]byte) {
	name := strings.ToLower(string(args[0]))
	if len(args)%2 != 0 {
		s.w.Error("ERR wrong number of arguments for '" + name + "' command")
		return
	}
	key := args[1]
	h, ok := hashForUpdate(s, c, key)
	if !ok {
		return
	}
	h.fit(args[2:])
	added := 0
	for i := 2; i < len(args); i += 2 {
		if h.set(args[i], args[i+1]) {
			added++
		}
	}
	if name == "hset" {
		s.w.Int(int64(added))
	} else {
		s.w.OK()
	}
	s.modified(c.db, key)
	s.dirty(len(args)/2 - 2) // Redis counts a change per field given
	s.notify(notifyHash, "hset", key, c.db.id)
}

func hsetnxCommand(s *Server, c *client, args [][]byte) {
	key := args[1]
	h, ok := hashForUpdate(s, c, key)
	if !ok {
		return
	}
	if h.exists(args[2]) {
		s.w.Int(0)
		return
	}
	h.fit(args[2:4])
	h.set(args[2], args[3])
	s.w.Int(1)
	s.modified(c.db, key)
	s.notify(notifyHash, "hset", key, c.db.id)
}

func hgetCommand(s *Server, c *client, args [][]byte) {
	h, _, ok := lookupAs[*hash](s, c.db, args[1])
	if !ok {
		return
	}
	if h != nil {
		if v, found := h.get(args[2]); found {
			s.w.Bulk(v)
			return
		}
	}
	s.w.Null()
}

func hmgetCommand(s *Server, c *client, args [][]byte) {
	h, _, ok := lookupAs[*hash](s, c.db, args[1])
	if !ok {
		return
	}
	s.w.Array(len(args) - 2)
	for _, f := range args[2:] {
		if h != nil {
			if v, found := h.get(f); found {
				s.w.Bulk(v)
				continue
			}
		}
		s.w.Null()
	}
}

func hdelCommand(s *Server, c *client, args [][]byte) {
	key := args[1]
	h, ok := lookupWriteAs[*hash](s, c.db, key)
	if !ok {
		return
	}
	n := 0
	if h != nil {
		for _, f := range args[2:] {
			if h.remove(f) {
				n++
				if h.len() == 0 {
					break
				}
			}
		}
	}
	if n > 0 {
		s.modified(c.db, key)
		s.dirty(n - 1) // Redis counts a change per field deleted
		s.notify(notifyHash, "hdel", key, c.db.id)
		s.removeIfEmpty(c.db, key, h.len())
	}
	s.w.Int(int64(n))
}

func hlenCommand(s *Server, c *client, args [][]byte) {
	h, _, ok := lookupAs[*hash](s, c.db, args[1])
	if !ok {
		return
	}
	if h == nil {
		s.w.Int(0)
		return
	}
	s.w.Int(int64(h.len()))
}

func hstrlenCommand(s *Server, c *client, args [][]byte) {
	h, _, ok := lookupAs[*hash](s, c.db, args[1])
	if !ok {
		return
	}
	n := 0
	if h != nil {
		v, _ := h.get(args[2])
		n = len(v)
	}
	s.w.Int(int64(n))
}

func hexistsCommand(s *Server, c *client, args [][]byte) {
	h, _, ok := lookupAs[*hash](s, c.db, args[1])
	if !ok {
		return
	}
	if h != nil && h.exists(args[2]) {
		s.w.Int(1)
		return
	}
	s.w.Int(0)
}

func hincrbyCommand(s *Server, c *client, args [][]byte) {
	by, ok := parseInt(args[3])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	key := args[1]
	h, ok := hashForUpdate(s, c, key)
	if !ok {
		return
	}
	var cur int64
	if v, found := h.get(args[2]); found {
		if cur, ok = parseInt(v); !ok {
			s.w.Error("ERR hash value is not an integer")
			return
		}
	}
	if (by < 0 && cur < 0 && by < math.MinInt64-cur) || (by > 0 && cur > 0 && by > math.MaxInt64-cur) {
		s.w.Error(errOverflow)
		return
	}
	cur += by
	h.set(args[2], strconv.AppendInt(nil, cur, 10))
	s.w.Int(cur)
	s.modified(c.db, key)
	s.notify(notifyHash, "hincrby", key, c.db.id)
}

func hincrbyfloatCommand(s *Server, c *client, args [][]byte) {
	by, ok := parseLongDouble(args[3])
	if !ok {
		s.w.Error(errNotFloat)
		return
	}
	if by.IsInf() {
		s.w.Error("ERR value is NaN or Infinity")
		return
	}
	key := args[1]
	h, ok := hashForUpdate(s, c, key)
	if !ok {
		return
	}
	cur := new(big.Float)
	if v, found := h.get(args[2]); found {
		if cur, ok = parseLongDouble(v); !ok {
			s.w.Error("ERR hash value is not a float")
			return
		}
	}
	sum, ok := addLongDouble(cur, by)
	if !ok {
		s.w.Error("ERR increment would produce NaN or Infinity")
		return
	}
	out := []byte(formatLongDouble(sum))
	h.set(args[2], out)
	s.w.Bulk(out)
	s.modified(c.db, key)
	s.notify(notifyHash, "hincrbyfloat", key, c.db.id)
	// Logged as the HSET of the result, so that a replay does not depend
	// on float arithmetic.
	s.rewrite(argHSET, key, args[2], out)
}

// Fields and values to reply with.
const (
	hashFields = 1 << iota
	hashValues
)

func hkeysCommand(s *Server, c *client, args [][]byte) { hgetallGeneric(s, c, args[1], hashFields) }
func hvalsCommand(s *Server, c *client, args [][]byte) { hgetallGeneric(s, c, args[1], hashValues) }
func hgetallCommand(s *Server, c *client, args [][]byte) {
	hgetallGeneric(s, c, args[1], hashFields|hashValues)
}

func hgetallGeneric(s *Server, c *client, key []byte, what int) {
	h, _, ok := lookupAs[*hash](s, c.db, key)
	if !ok {
		return
	}
	n := 0
	if h != nil {
		n = h.len()
	}
	if what == hashFields|hashValues {
		s.w.Map(n)
	} else {
		s.w.Array(n)
	}
	if n == 0 {
		return
	}
	for f, v := range h.all() {
		if what&hashFields != 0 {
			s.w.Bulk(f)
		}
		if what&hashValues != 0 {
			s.w.Bulk(v)
		}
	}
}

func hrandfieldCommand(s *Server, c *client, args [][]byte) {
	if len(args) == 2 {
		h, _, ok := lookupAs[*hash](s, c.db, args[1])
		if !ok {
			return
		}
		if h == nil {
			s.w.Null()
			return
		}
		f, _ := h.at(h.random())
		s.w.Bulk(f)
		return
	}
	count, ok := parseInt(args[2])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	if count == math.MinInt64 {
		s.w.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	if len(args) > 4 || (len(args) == 4 && !strings.EqualFold(string(args[3]), "withvalues")) {
		s.w.Error(errSyntax)
		return
	}
	withValues := len(args) == 4
	if withValues && (count < -math.MaxInt64/2 || count > math.MaxInt64/2) {
		s.w.Error("ERR value is out of range")
		return
	}
	h, _, ok := lookupAs[*hash](s, c.db, args[1])
	if !ok {
		return
	}
	if h == nil || count == 0 {
		s.w.Array(0)
		return
	}
	size := int64(h.len())
	var picks []int
	switch {
	case count < 0 || count == 1:
		// Repetitions allowed: count independent draws.
		n := count
		if n < 0 {
			n = -n
		}
		picks = make([]int, 0, min(n, 1<<20))
		for range n {
			picks = append(picks, h.random())
		}
	case count >= size:
		// The whole hash, in its order, as Redis does.
		picks = make([]int, size)
		for i := range picks {
			picks[i] = i
		}
	default:
		// Distinct fields: shuffle the first count positions.
		idx := make([]int, size)
		for i := range idx {
			idx[i] = i
		}
		for i := range int(count) {
			j := i + rand.IntN(int(size)-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
		picks = idx[:count]
		if !h.big() {
			// Redis samples a listpack's fields in their order.
			slices.Sort(picks)
		}
	}
	switch {
	case withValues && s.w.Proto < 3:
		s.w.Array(2 * len(picks))
	default:
		s.w.Array(len(picks))
	}
	pair := h.at
	if !h.big() {
		// at walks a small hash from its start: index its pairs once.
		fields, values := make([][]byte, 0, size), make([][]byte, 0, size)
		for f, v := range h.all() {
			fields, values = append(fields, f), append(values, v)
		}
		pair = func(i int) ([]byte, []byte) { return fields[i], values[i] }
	}
	for _, i := range picks {
		f, v := pair(i)
		if withValues && s.w.Proto >= 3 {
			s.w.Array(2)
		}
		s.w.Bulk(f)
		if withValues {
			s.w.Bulk(v)
		}
	}
}

func hscanCommand(s *Server, c *client, args [][]byte) {
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		s.w.Error("ERR invalid cursor")
		return
	}
	h, _, ok := lookupAs[*hash](s, c.db, args[1])
	if !ok {
		return
	}
	if h == nil {
		s.replyScan(0, nil)
		return
	}
	o, ok := s.parseScanOptions(args, 3, false)
	if !ok {
		return
	}
	var out []string
	add := func(f, v string) {
		if o.match == nil || globMatch(o.match, []byte(f), false) {
			out = append(out, f, v)
		}
	}
	next := uint64(0)
	if !h.big() {
		// Redis returns a small hash whole, in order.
		for f, v := range h.all() {
			add(string(f), string(v))
		}
	} else {
		next = h.ht.scan(cursor, o.count, func(f string, v *string) { add(f, *v) })
	}
	s.replyScan(next, out)
}
