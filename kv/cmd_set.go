package kv

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

func init() {
	for _, c := range []*command{
		cmd("sadd", -3, "write denyoom fast", 1, 1, 1, "set", "1.0.0", "Adds one or more members to a set. Creates the key if it doesn't exist.", saddCommand),
		cmd("srem", -3, "write fast", 1, 1, 1, "set", "1.0.0", "Removes one or more members from a set. Deletes the set if the last member was removed.", sremCommand),
		cmd("scard", 2, "readonly fast", 1, 1, 1, "set", "1.0.0", "Returns the number of members in a set.", scardCommand),
		cmd("sismember", 3, "readonly fast", 1, 1, 1, "set", "1.0.0", "Determines whether a member belongs to a set.", sismemberCommand),
		cmd("smismember", -3, "readonly fast", 1, 1, 1, "set", "6.2.0", "Determines whether multiple members belong to a set.", smismemberCommand),
		cmd("smembers", 2, "readonly", 1, 1, 1, "set", "1.0.0", "Returns all members of a set.", smembersCommand),
		cmd("srandmember", -2, "readonly", 1, 1, 1, "set", "1.0.0", "Get one or multiple random members from a set", srandmemberCommand),
		cmd("spop", -2, "write fast", 1, 1, 1, "set", "1.0.0", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", spopCommand),
		cmd("smove", 4, "write fast", 1, 2, 1, "set", "1.0.0", "Moves a member from one set to another.", smoveCommand),
		cmd("sinter", -2, "readonly", 1, -1, 1, "set", "1.0.0", "Returns the intersect of multiple sets.", sinterCommand),
		cmd("sintercard", -3, "readonly movablekeys", 0, 0, 0, "set", "7.0.0", "Returns the number of members of the intersect of multiple sets.", sintercardCommand).withKeyCount(1),
		cmd("sinterstore", -3, "write denyoom", 1, -1, 1, "set", "1.0.0", "Stores the intersect of multiple sets in a key.", sinterstoreCommand),
		cmd("sunion", -2, "readonly", 1, -1, 1, "set", "1.0.0", "Returns the union of multiple sets.", sunionCommand),
		cmd("sunionstore", -3, "write denyoom", 1, -1, 1, "set", "1.0.0", "Stores the union of multiple sets in a key.", sunionstoreCommand),
		cmd("sdiff", -2, "readonly", 1, -1, 1, "set", "1.0.0", "Returns the difference of multiple sets.", sdiffCommand),
		cmd("sdiffstore", -3, "write denyoom", 1, -1, 1, "set", "1.0.0", "Stores the difference of multiple sets in a key.", sdiffstoreCommand),
		cmd("sscan", -3, "readonly", 1, 1, 1, "set", "2.8.0", "Iterates over members of a set.", sscanCommand),
	} {
		register(c)
	}
}

// replySet writes members as RESP3 set (an array in RESP2).
func (s *Server) replySet(members []string) {
	s.w.Set(len(members))
	for _, m := range members {
		s.w.BulkString(m)
	}
}

func saddCommand(s *Server, c *client, args [][]byte) {
	key := args[1]
	o, ok := lookupWriteAs[*set](s, c.db, key)
	if !ok {
		return
	}
	if o == nil {
		o = newSet(args[2])
		c.db.add(key, o)
	}
	added := 0
	for _, m := range args[2:] {
		if o.add(m, s.limits.intsetEntries) {
			added++
		}
	}
	if added > 0 {
		s.modified(c.db, key)
		s.dirty(added - 1)
		s.notify(notifySet, "sadd", key, c.db.id)
	}
	s.w.Int(int64(added))
}

func sremCommand(s *Server, c *client, args [][]byte) {
	key := args[1]
	o, ok := lookupWriteAs[*set](s, c.db, key)
	if !ok {
		return
	}
	removed := 0
	if o != nil {
		for _, m := range args[2:] {
			if o.remove(m) {
				removed++
				if o.len() == 0 {
					break
				}
			}
		}
	}
	if removed > 0 {
		s.modified(c.db, key)
		s.dirty(removed - 1)
		s.notify(notifySet, "srem", key, c.db.id)
		s.removeIfEmpty(c.db, key, o.len())
	}
	s.w.Int(int64(removed))
}

func scardCommand(s *Server, c *client, args [][]byte) {
	o, _, ok := lookupAs[*set](s, c.db, args[1])
	if !ok {
		return
	}
	if o == nil {
		s.w.Int(0)
		return
	}
	s.w.Int(int64(o.len()))
}

func sismemberCommand(s *Server, c *client, args [][]byte) {
	o, _, ok := lookupAs[*set](s, c.db, args[1])
	if !ok {
		return
	}
	s.w.Int(int64(b2i(o != nil && o.has(args[2]))))
}

func smismemberCommand(s *Server, c *client, args [][]byte) {
	o, _, ok := lookupAs[*set](s, c.db, args[1])
	if !ok {
		return
	}
	s.w.Array(len(args) - 2)
	for _, m := range args[2:] {
		s.w.Int(int64(b2i(o != nil && o.has(m))))
	}
}

func smembersCommand(s *Server, c *client, args [][]byte) {
	o, _, ok := lookupAs[*set](s, c.db, args[1])
	if !ok {
		return
	}
	if o == nil {
		s.w.Set(0)
		return
	}
	s.replySet(o.list())
}

func srandmemberCommand(s *Server, c *client, args [][]byte) {
	if len(args) > 3 {
		s.w.Error(errSyntax)
		return
	}
	if len(args) == 2 {
		o, _, ok := lookupAs[*set](s, c.db, args[1])
		if !ok {
			return
		}
		if o == nil {
			s.w.Null()
			return
		}
		s.w.BulkString(o.random())
		return
	}
	n, ok := parseInt(args[2])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	if n == math.MinInt64 {
		s.w.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	o, _, ok := lookupAs[*set](s, c.db, args[1])
	if !ok {
		return
	}
	if o == nil || n == 0 {
		s.w.Array(0)
		return
	}
	if n < 0 {
		// Repetitions allowed: n draws.
		s.w.Array(int(-n))
		for range -n {
			s.w.BulkString(o.random())
		}
		return
	}
	if n >= int64(o.len()) {
		members := o.list()
		s.w.Array(len(members))
		for _, m := range members {
			s.w.BulkString(m)
		}
		return
	}
	picked := distinctRandom(o, int(n))
	s.w.Array(len(picked))
	for _, m := range picked {
		s.w.BulkString(m)
	}
}

// distinctRandom returns n distinct random members of o, n < o.len(): by
// drawing when n is small next to the set, else by shuffling positions.
func distinctRandom(o *set, n int) []string {
	out := make([]string, 0, n)
	if n*3 <= o.len() {
		seen := make(map[int]struct{}, n)
		for len(out) < n {
			i := o.randomIndex()
			if _, dup := seen[i]; dup {
				continue
			}
			seen[i] = struct{}{}
			out = append(out, o.at(i))
		}
		return out
	}
	idx := rand.Perm(o.len())
	for _, i := range idx[:n] {
		out = append(out, o.at(i))
	}
	return out
}

func spopCommand(s *Server, c *client, args [][]byte) {
	if len(args) > 3 {
		s.w.Error(errSyntax)
		return
	}
	key := args[1]
	if len(args) == 2 {
		o, ok := lookupWriteAs[*set](s, c.db, key)
		if !ok {
			return
		}
		if o == nil {
			s.w.Null()
			return
		}
		m := o.random()
		o.remove([]byte(m))
		s.w.BulkString(m)
		s.notify(notifySet, "spop", key, c.db.id)
		s.removeIfEmpty(c.db, key, o.len())
		s.modified(c.db, key)
		s.rewrite([]byte("SREM"), key, []byte(m))
		return
	}
	n, ok := parseInt(args[2])
	if !ok || n < 0 {
		s.w.Error("ERR value is out of range, must be positive")
		return
	}
	o, ok := lookupWriteAs[*set](s, c.db, key)
	if !ok {
		return
	}
	if o == nil || n == 0 {
		s.w.Set(0)
		return
	}
	s.notify(notifySet, "spop", key, c.db.id)
	s.modified(c.db, key)
	if n >= int64(o.len()) {
		s.dirty(o.len() - 1)
		s.replySet(o.list())
		c.db.remove(key)
		s.notify(notifyGeneric, "del", key, c.db.id)
		s.rewrite([]byte("DEL"), key)
		return
	}
	s.dirty(int(n) - 1)
	var popped []string
	if remaining := o.len() - int(n); remaining*5 > int(n) {
		popped = distinctRandom(o, int(n))
		for _, m := range popped {
			o.remove([]byte(m))
		}
	} else {
		// Most of the set goes: as Redis does, draw the members that stay
		// into a new set, whose encoding follows from them (a table may
		// become an intset again), and pop the rest in the set's order.
		// A table that stays one loses the rest in place, as single
		// removals take them: built anew, its members would take other
		// slots, and an SSCAN under way would miss some that stay (see
		// dict).
		kept := distinctRandom(o, remaining)
		rest := newSet([]byte(kept[0]))
		for _, m := range kept {
			rest.add([]byte(m), s.limits.intsetEntries)
		}
		popped = make([]string, 0, n)
		for _, m := range o.list() {
			if !rest.has([]byte(m)) {
				popped = append(popped, m)
			}
		}
		if rest.isIntset() {
			*o = *rest
		} else {
			for _, m := range popped {
				o.remove([]byte(m))
			}
		}
	}
	s.replySet(popped)
	const batch = 1024
	for len(popped) > 0 {
		k := min(len(popped), batch)
		srem := make([][]byte, 0, 2+k)
		srem = append(srem, []byte("SREM"), key)
		for _, m := range popped[:k] {
			srem = append(srem, []byte(m))
		}
		s.rewrite(srem...)
		popped = popped[k:]
	}
}

func smoveCommand(s *Server, c *client, args [][]byte) {
	src, dst, member := args[1], args[2], args[3]
	from, ok := lookupWriteAs[*set](s, c.db, src)
	if !ok {
		return
	}
	if from == nil {
		s.w.Int(0)
		return
	}
	to, ok := lookupWriteAs[*set](s, c.db, dst)
	if !ok {
		return
	}
	if from == to {
		s.w.Int(int64(b2i(from.has(member))))
		return
	}
	if !from.remove(member) {
		s.w.Int(0)
		return
	}
	s.notify(notifySet, "srem", src, c.db.id)
	s.removeIfEmpty(c.db, src, from.len())
	if to == nil {
		to = newSet(member)
		c.db.add(dst, to)
	}
	s.modified(c.db, src)
	if to.add(member, s.limits.intsetEntries) {
		s.modified(c.db, dst)
		s.notify(notifySet, "sadd", dst, c.db.id)
	}
	s.w.Int(1)
}

// setSources looks up keys as sets for the algebra: a missing key is nil
// (an empty set). They are read, the STORE forms' too, as Redis 7.0's
// lookupKeyRead counts them. ok is false after a WRONGTYPE error on any of
// them.
func setSources(s *Server, c *client, keys [][]byte) (sets []*set, ok bool) {
	sets = make([]*set, len(keys))
	for i, k := range keys {
		sets[i], _, ok = lookupAs[*set](s, c.db, k)
		if !ok {
			return nil, false
		}
	}
	return sets, true
}

// intersect returns the members common to sets, walking the smallest in
// the order Redis walks it, and stops after limit members (0: no limit).
func intersect(sets []*set, limit int) []string {
	if len(sets) == 0 {
		return nil
	}
	for _, o := range sets {
		if o == nil {
			return nil
		}
	}
	order := append([]*set(nil), sets...)
	sortBySize(order)
	var out []string
	for _, m := range order[0].list() {
		in := true
		for _, o := range order[1:] {
			if !o.has([]byte(m)) {
				in = false
				break
			}
		}
		if in {
			out = append(out, m)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out
}

// sortBySize orders sets by size, smallest first, those of one size in
// their order.
func sortBySize(sets []*set) {
	slices.SortStableFunc(sets, func(a, b *set) int { return cmp.Compare(a.len(), b.len()) })
}

// unionOrDiff builds the union of sets, or the first minus the others, as
// a new set, whose encoding follows from its members as Redis's would, an
// intset of at most maxInts.
func unionOrDiff(sets []*set, diff bool, maxInts int) *set {
	out := &set{}
	if diff {
		first := sets[0]
		if first == nil {
			return out
		}
		// Missing keys take nothing away: the others are the sets there,
		// largest first, where a member of the first is likelier found
		// (Redis's order; it also goes through the missing ones for each
		// member, which for an SDIFF of 50,000 keys held the loop 2.5 s).
		// Redis's choice of algorithm is kept, which decides the encoding
		// of an SDIFFSTORE's result.
		others := make([]*set, 0, len(sets)-1)
		oneWork, twoWork := first.len(), first.len()
		for _, o := range sets[1:] {
			if o != nil {
				others = append(others, o)
				oneWork += first.len()
				twoWork += o.len()
			}
		}
		if oneWork/2 <= twoWork {
			// Each member of the first looked for in the others.
			slices.SortStableFunc(others, func(a, b *set) int { return cmp.Compare(b.len(), a.len()) })
			for _, m := range first.list() {
				in := false
				for _, o := range others {
					if o.has([]byte(m)) {
						in = true
						break
					}
				}
				if !in {
					out.add([]byte(m), maxInts)
				}
			}
			return out
		}
		// The first copied, and the others' members taken out of it.
		for i := range first.len() {
			out.add([]byte(first.at(i)), maxInts)
		}
		for _, o := range others {
			for i := 0; i < o.len() && out.len() > 0; i++ {
				out.remove([]byte(o.at(i)))
			}
		}
		return out
	}
	for _, o := range sets {
		if o == nil {
			continue
		}
		for i := range o.len() {
			out.add([]byte(o.at(i)), maxInts)
		}
	}
	return out
}

func sinterCommand(s *Server, c *client, args [][]byte) {
	sets, ok := setSources(s, c, args[1:])
	if !ok {
		return
	}
	s.replySet(intersect(sets, 0))
}

func sunionCommand(s *Server, c *client, args [][]byte) { setAlgebra(s, c, args[1:], false) }
func sdiffCommand(s *Server, c *client, args [][]byte)  { setAlgebra(s, c, args[1:], true) }

func setAlgebra(s *Server, c *client, keys [][]byte, diff bool) {
	sets, ok := setSources(s, c, keys)
	if !ok {
		return
	}
	s.replySet(unionOrDiff(sets, diff, s.limits.intsetEntries).list())
}

func sintercardCommand(s *Server, c *client, args [][]byte) {
	numkeys, ok := parseInt(args[1])
	if !ok || numkeys <= 0 {
		s.w.Error("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(args)-2) {
		s.w.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	keys := args[2 : 2+numkeys]
	limit := int64(0)
	for i := 2 + int(numkeys); i < len(args); i++ {
		if strings.EqualFold(string(args[i]), "limit") && i+1 < len(args) {
			if limit, ok = parseInt(args[i+1]); !ok || limit < 0 {
				s.w.Error("ERR LIMIT can't be negative")
				return
			}
			i++
			continue
		}
		s.w.Error(errSyntax)
		return
	}
	sets, ok := setSources(s, c, keys)
	if !ok {
		return
	}
	s.w.Int(int64(len(intersect(sets, int(min(limit, math.MaxInt32))))))
}

func sinterstoreCommand(s *Server, c *client, args [][]byte) {
	sets, ok := setSources(s, c, args[2:])
	if !ok {
		return
	}
	out := &set{}
	for _, m := range intersect(sets, 0) {
		out.add([]byte(m), s.limits.intsetEntries)
	}
	s.storeSet(c, args[1], out, "sinterstore")
}

func sunionstoreCommand(s *Server, c *client, args [][]byte) { setAlgebraStore(s, c, args, false) }
func sdiffstoreCommand(s *Server, c *client, args [][]byte)  { setAlgebraStore(s, c, args, true) }

func setAlgebraStore(s *Server, c *client, args [][]byte, diff bool) {
	sets, ok := setSources(s, c, args[2:])
	if !ok {
		return
	}
	event := "sunionstore"
	if diff {
		event = "sdiffstore"
	}
	s.storeSet(c, args[1], unionOrDiff(sets, diff, s.limits.intsetEntries), event)
}

// storeSet makes o the value of key, replacing what it held, or deletes
// key if o is empty (storeResult); it replies with o's size.
func (s *Server) storeSet(c *client, key []byte, o *set, event string) {
	if s.storeResult(c.db, key, o, o.len()) {
		s.notify(notifySet, event, key, c.db.id)
	}
}

func sscanCommand(s *Server, c *client, args [][]byte) {
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		s.w.Error("ERR invalid cursor")
		return
	}
	o, _, ok := lookupAs[*set](s, c.db, args[1])
	if !ok {
		return
	}
	if o == nil {
		s.replyScan(0, nil)
		return
	}
	opts, ok := s.parseScanOptions(args, 3, false)
	if !ok {
		return
	}
	var out []string
	add := func(m string) {
		if opts.match == nil || globMatch(opts.match, []byte(m), false) {
			out = append(out, m)
		}
	}
	next := uint64(0)
	if o.isIntset() {
		// Redis returns an intset whole, in order.
		for _, m := range o.list() {
			add(m)
		}
	} else {
		next = o.table.scan(cursor, opts.count, func(m string, _ *struct{}) { add(m) })
	}
	s.replyScan(next, out)
}
