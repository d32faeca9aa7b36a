package kv

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
)

func init() {
	register(
		cmd("lpush", -3, "write denyoom fast", 1, 1, 1, "list", "1.0.0", "Prepend one or multiple elements to a list", lpushCommand),
		cmd("rpush", -3, "write denyoom fast", 1, 1, 1, "list", "1.0.0", "Append one or multiple elements to a list", rpushCommand),
		cmd("lpushx", -3, "write denyoom fast", 1, 1, 1, "list", "2.2.0", "Prepend an element to a list, only if the list exists", lpushxCommand),
		cmd("rpushx", -3, "write denyoom fast", 1, 1, 1, "list", "2.2.0", "Append an element to a list, only if the list exists", rpushxCommand),
		cmd("lpop", -2, "write fast", 1, 1, 1, "list", "1.0.0", "Remove and get the first elements in a list", lpopCommand),
		cmd("rpop", -2, "write fast", 1, 1, 1, "list", "1.0.0", "Remove and get the last elements in a list", rpopCommand),
		cmd("llen", 2, "readonly fast", 1, 1, 1, "list", "1.0.0", "Get the length of a list", llenCommand),
		cmd("lindex", 3, "readonly", 1, 1, 1, "list", "1.0.0", "Get an element from a list by its index", lindexCommand),
		cmd("lrange", 4, "readonly", 1, 1, 1, "list", "1.0.0", "Get a range of elements from a list", lrangeCommand),
		cmd("lset", 4, "write denyoom", 1, 1, 1, "list", "1.0.0", "Set the value of an element in a list by its index", lsetCommand),
		cmd("linsert", 5, "write denyoom", 1, 1, 1, "list", "2.2.0", "Insert an element before or after another element in a list", linsertCommand),
		cmd("lrem", 4, "write", 1, 1, 1, "list", "1.0.0", "Remove elements from a list", lremCommand),
		cmd("ltrim", 4, "write", 1, 1, 1, "list", "1.0.0", "Trim a list to the specified range", ltrimCommand),
		cmd("lpos", -3, "readonly", 1, 1, 1, "list", "6.0.6", "Return the index of matching elements on a list", lposCommand),
		cmd("lmove", 5, "write denyoom", 1, 2, 1, "list", "6.2.0", "Pop an element from a list, push it to another list and return it", lmoveCommand),
		cmd("rpoplpush", 3, "write denyoom", 1, 2, 1, "list", "1.2.0", "Remove the last element in a list, prepend it to another list and return it", rpoplpushCommand),
		cmd("lmpop", -4, "write movablekeys", 0, 0, 0, "list", "7.0.0", "Pop elements from a list", lmpopCommand).withKeyCount(1),
		cmd("blpop", -3, "write noscript blocking", 1, -2, 1, "list", "2.0.0", "Remove and get the first element in a list, or block until one is available", blpopCommand),
		cmd("brpop", -3, "write noscript blocking", 1, -2, 1, "list", "2.0.0", "Remove and get the last element in a list, or block until one is available", brpopCommand),
		cmd("blmove", 6, "write denyoom noscript blocking", 1, 2, 1, "list", "6.2.0", "Pop an element from a list, push it to another list and return it; or block until one is available", blmoveCommand),
		cmd("brpoplpush", 4, "write denyoom noscript blocking", 1, 2, 1, "list", "2.2.0", "Pop an element from a list, push it to another list and return it; or block until one is available", brpoplpushCommand),
		cmd("blmpop", -5, "write blocking movablekeys", 0, 0, 0, "list", "7.0.0", "Pop elements from a list, or block until one is available", blmpopCommand).withKeyCount(2),
	)
}

// Error replies of the list commands, as Redis words them.
const (
	errListIndex    = "ERR index out of range"
	errListPopCount = "ERR value is out of range, must be positive"
	errMpopNumKeys  = "ERR numkeys should be greater than 0" // ZMPOP's too
	errMpopCount    = "ERR count should be greater than 0"   // ZMPOP's too
	errLposRank     = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errLposCount    = "ERR COUNT can't be negative"
	errLposMaxlen   = "ERR MAXLEN can't be negative"
)

var (
	argListLPOP      = []byte("LPOP")
	argListRPOP      = []byte("RPOP")
	argListLMOVE     = []byte("LMOVE")
	argListRPOPLPUSH = []byte("RPOPLPUSH")
	argListLEFT      = []byte("LEFT")
	argListRIGHT     = []byte("RIGHT")
)

func listPopCmd(left bool) []byte {
	if left {
		return argListLPOP
	}
	return argListRPOP
}

func listPopEvent(left bool) string {
	if left {
		return "lpop"
	}
	return "rpop"
}

func listPushEvent(left bool) string {
	if left {
		return "lpush"
	}
	return "rpush"
}

func listSideArg(left bool) []byte {
	if left {
		return argListLEFT
	}
	return argListRIGHT
}

// parseListSide parses LEFT or RIGHT, writing a syntax error otherwise.
func (s *Server) parseListSide(b []byte) (left, ok bool) {
	switch strings.ToLower(string(b)) {
	case "left":
		return true, true
	case "right":
		return false, true
	}
	s.w.Error(errSyntax)
	return false, false
}

// parseListInt parses an integer, writing msg if it is not one.
func (s *Server) parseListInt(b []byte, msg string) (int64, bool) {
	n, ok := parseInt(b)
	if !ok {
		s.w.Error(msg)
	}
	return n, ok
}

// parseListIntIn parses an integer in [lo, hi], writing msg if it is not one
// or out of range.
func (s *Server) parseListIntIn(b []byte, lo, hi int64, msg string) (int64, bool) {
	n, ok := parseInt(b)
	if !ok || n < lo || n > hi {
		s.w.Error(msg)
		return 0, false
	}
	return n, true
}

// listKey returns the list under key in d without a reply: nil if key is
// absent, empty or holds another type. Blocked clients are served with it.
func listKey(d *db, key []byte) *list {
	e := d.lookup(key)
	if e == nil {
		return nil
	}
	l, _ := e.obj.(*list)
	if l == nil || l.len() == 0 {
		return nil
	}
	return l
}

// listRemoved reports that items were taken from key's list l at the head
// (left) or the tail, deleting the key if l is now empty, and counts
// changes: Redis counts an item a change, and none for BLPOP, BRPOP,
// BLMOVE and BRPOPLPUSH served late (Redis 7.0's
// serveClientBlockedOnList counts none). Served late, the pop is not
// signalled either, as Redis's is not: the push that served it was, so
// a BCAST NOLOOP client it serves is told of the push, not taken for the
// key's last changer.
func (s *Server) listRemoved(d *db, key []byte, l *list, left bool, changes int) {
	s.notify(notifyList, listPopEvent(left), key, d.id)
	s.removeIfEmpty(d, key, l.len())
	if changes > 0 {
		s.touched(d, key)
	} else {
		s.changedUnsignalled(d, key)
	}
	s.dirty(changes)
}

func lpushCommand(s *Server, c *client, args [][]byte)  { listPushGeneric(s, c, args, true, false) }
func rpushCommand(s *Server, c *client, args [][]byte)  { listPushGeneric(s, c, args, false, false) }
func lpushxCommand(s *Server, c *client, args [][]byte) { listPushGeneric(s, c, args, true, true) }
func rpushxCommand(s *Server, c *client, args [][]byte) { listPushGeneric(s, c, args, false, true) }

func listPushGeneric(s *Server, c *client, args [][]byte, left, onlyExisting bool) {
	key := args[1]
	l, ok := lookupWriteAs[*list](s, c.db, key)
	if !ok {
		return
	}
	if l == nil {
		if onlyExisting {
			s.w.Int(0)
			return
		}
		l = newList()
		c.db.add(key, l)
		s.signalReady(c.db, key)
	}
	for _, v := range args[2:] {
		l.push(v, left)
	}
	s.w.Int(int64(l.len()))
	s.touched(c.db, key)
	s.dirty(len(args) - 2) // Redis counts an item a change
	s.notify(notifyList, listPushEvent(left), key, c.db.id)
}

func lpopCommand(s *Server, c *client, args [][]byte) { listPopGeneric(s, c, args, true) }
func rpopCommand(s *Server, c *client, args [][]byte) { listPopGeneric(s, c, args, false) }

func listPopGeneric(s *Server, c *client, args [][]byte, left bool) {
	if len(args) > 3 {
		s.w.Error("ERR wrong number of arguments for '" + strings.ToLower(string(args[0])) + "' command")
		return
	}
	hasCount := len(args) == 3
	var count int64
	if hasCount {
		n, ok := s.parseListIntIn(args[2], 0, math.MaxInt64, errListPopCount)
		if !ok {
			return
		}
		count = n
	}
	key := args[1]
	l, ok := lookupWriteAs[*list](s, c.db, key)
	switch {
	case !ok:
		return
	case l == nil && hasCount:
		s.w.NullArray()
		return
	case l == nil:
		s.w.Null()
		return
	case hasCount && count == 0:
		s.w.Array(0)
		return
	}
	n := 1
	if !hasCount {
		s.w.Bulk(l.pop(left))
	} else {
		n = int(min(count, int64(l.len())))
		s.w.Array(n)
		for range n {
			s.w.Bulk(l.pop(left))
		}
	}
	s.listRemoved(c.db, key, l, left, n)
}

func llenCommand(s *Server, c *client, args [][]byte) {
	l, _, ok := lookupAs[*list](s, c.db, args[1])
	switch {
	case !ok:
	case l == nil:
		s.w.Int(0)
	default:
		s.w.Int(int64(l.len()))
	}
}

func lindexCommand(s *Server, c *client, args [][]byte) {
	l, _, ok := lookupAs[*list](s, c.db, args[1])
	if !ok {
		return
	}
	if l == nil {
		s.w.Null()
		return
	}
	i, ok := s.parseListInt(args[2], errNotInt)
	if !ok {
		return
	}
	if i < 0 {
		i += int64(l.len())
	}
	if i < 0 || i >= int64(l.len()) {
		s.w.Null()
		return
	}
	s.w.Bulk(l.at(int(i)))
}

// listRange turns start and end, which may count from the end when
// negative, into a range of item positions of a list of n items; empty
// when start > end.
func listRange(start, end int64, n int) (int, int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= ln {
		return 0, -1
	}
	if end >= ln {
		end = ln - 1
	}
	return int(start), int(end)
}

func lrangeCommand(s *Server, c *client, args [][]byte) {
	start, ok := s.parseListInt(args[2], errNotInt)
	if !ok {
		return
	}
	end, ok := s.parseListInt(args[3], errNotInt)
	if !ok {
		return
	}
	l, _, ok := lookupAs[*list](s, c.db, args[1])
	if !ok {
		return
	}
	if l == nil {
		s.w.Array(0)
		return
	}
	from, to := listRange(start, end, l.len())
	s.w.Array(to - from + 1)
	for it := range l.items(from, to) {
		s.w.Bulk(it)
	}
}

func lsetCommand(s *Server, c *client, args [][]byte) {
	key := args[1]
	l, ok := lookupWriteAs[*list](s, c.db, key)
	if !ok {
		return
	}
	if l == nil {
		s.w.Error(errNoKey)
		return
	}
	i, ok := s.parseListInt(args[2], errNotInt)
	if !ok {
		return
	}
	if i < 0 {
		i += int64(l.len())
	}
	if i < 0 || i >= int64(l.len()) {
		s.w.Error(errListIndex)
		return
	}
	l.set(int(i), args[3])
	s.w.OK()
	s.modified(c.db, key)
	s.notify(notifyList, "lset", key, c.db.id)
}

func linsertCommand(s *Server, c *client, args [][]byte) {
	var after bool
	switch strings.ToLower(string(args[2])) {
	case "after":
		after = true
	case "before":
	default:
		s.w.Error(errSyntax)
		return
	}
	key := args[1]
	l, ok := lookupWriteAs[*list](s, c.db, key)
	if !ok {
		return
	}
	if l == nil {
		s.w.Int(0)
		return
	}
	i := l.index(args[3])
	if i < 0 {
		s.w.Int(-1)
		return
	}
	if after {
		i++
	}
	l.insert(i, args[4])
	s.modified(c.db, key)
	s.notify(notifyList, "linsert", key, c.db.id)
	s.w.Int(int64(l.len()))
}

func lremCommand(s *Server, c *client, args [][]byte) {
	count, ok := s.parseListInt(args[2], errNotInt)
	if !ok {
		return
	}
	key := args[1]
	l, ok := lookupWriteAs[*list](s, c.db, key)
	if !ok {
		return
	}
	if l == nil {
		s.w.Int(0)
		return
	}
	removed := l.remove(args[3], count)
	if removed > 0 {
		s.notify(notifyList, "lrem", key, c.db.id)
	}
	s.removeIfEmpty(c.db, key, l.len())
	s.w.Int(int64(removed))
	if removed > 0 {
		s.touched(c.db, key)
		s.dirty(removed) // Redis counts an item a change
	}
}

func ltrimCommand(s *Server, c *client, args [][]byte) {
	start, ok := s.parseListInt(args[2], errNotInt)
	if !ok {
		return
	}
	end, ok := s.parseListInt(args[3], errNotInt)
	if !ok {
		return
	}
	key := args[1]
	l, ok := lookupWriteAs[*list](s, c.db, key)
	if !ok {
		return
	}
	if l == nil {
		s.w.OK()
		return
	}
	n := l.len()
	from, to := listRange(start, end, n)
	if from > to {
		l.trim(n, 0)
	} else {
		l.trim(from, n-1-to)
	}
	removed := n - l.len()
	s.notify(notifyList, "ltrim", key, c.db.id)
	s.removeIfEmpty(c.db, key, l.len())
	// As Redis, a change an item removed, none if none was; the key is
	// touched even then.
	s.touched(c.db, key)
	s.dirty(removed)
	s.w.OK()
}

func lposCommand(s *Server, c *client, args [][]byte) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for i := 3; i < len(args); i++ {
		opt := strings.ToUpper(string(args[i]))
		more := i+1 < len(args)
		switch {
		case opt == "RANK" && more:
			i++
			n, ok := parseInt(args[i])
			if !ok {
				s.w.Error(errNotInt)
				return
			}
			if n == math.MinInt64 {
				n = -1 // Redis negates it to itself: from the tail, every match
			}
			if n == 0 {
				s.w.Error(errLposRank)
				return
			}
			rank = n
		case opt == "COUNT" && more:
			i++
			n, ok := s.parseListIntIn(args[i], 0, math.MaxInt64, errLposCount)
			if !ok {
				return
			}
			count = n
		case opt == "MAXLEN" && more:
			i++
			n, ok := s.parseListIntIn(args[i], 0, math.MaxInt64, errLposMaxlen)
			if !ok {
				return
			}
			maxlen = n
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	reverse := rank < 0
	if reverse {
		rank = -rank
	}
	l, _, ok := lookupAs[*list](s, c.db, args[1])
	if !ok {
		return
	}
	if l == nil {
		if count != -1 {
			s.w.Array(0)
		} else {
			s.w.Null()
		}
		return
	}
	want := args[2]
	limit := count
	if limit == -1 {
		limit = 1
	}
	var found []int
	matches := int64(0)
	n := l.len()
	for i := 0; i < n && (maxlen == 0 || int64(i) < maxlen); i++ {
		idx := i
		if reverse {
			idx = n - 1 - i
		}
		if !bytes.Equal(l.at(idx), want) {
			continue
		}
		matches++
		if matches >= rank {
			found = append(found, idx)
			if limit != 0 && int64(len(found)) >= limit {
				break
			}
		}
	}
	if count == -1 {
		if len(found) == 0 {
			s.w.Null()
		} else {
			s.w.Int(int64(found[0]))
		}
		return
	}
	s.w.Array(len(found))
	for _, idx := range found {
		s.w.Int(int64(idx))
	}
}

// lmoveItem pops an item from src's list sl and pushes it to dst's dl (nil to
// create dst), replying with the item, and counts changes (listRemoved).
func (s *Server) lmoveItem(d *db, src []byte, sl *list, dst []byte, dl *list, fromLeft, toLeft bool, changes int) {
	v := sl.pop(fromLeft)
	// The reply first: v is valid until a list changes, and dl may be sl.
	s.w.Bulk(v)
	if dl == nil {
		dl = newList()
		d.add(dst, dl)
		s.signalReady(d, dst)
	}
	s.touched(d, dst)
	dl.push(v, toLeft)
	s.notify(notifyList, listPushEvent(toLeft), dst, d.id)
	s.listRemoved(d, src, sl, fromLeft, changes)
}

func lmoveCommand(s *Server, c *client, args [][]byte) {
	from, ok := s.parseListSide(args[3])
	if !ok {
		return
	}
	to, ok := s.parseListSide(args[4])
	if !ok {
		return
	}
	listMoveGeneric(s, c, args[1], args[2], from, to, false)
}

func rpoplpushCommand(s *Server, c *client, args [][]byte) {
	listMoveGeneric(s, c, args[1], args[2], false, true, false)
}

// listMoveGeneric moves an item from src to dst and reports whether it
// replied: with the item, or an error. When src is absent it replies with
// a null unless canBlock.
func listMoveGeneric(s *Server, c *client, src, dst []byte, from, to, canBlock bool) (replied, moved bool) {
	sl, ok := lookupWriteAs[*list](s, c.db, src)
	if !ok {
		return true, false
	}
	if sl == nil {
		if canBlock {
			return false, false
		}
		s.w.Null()
		return true, false
	}
	dl, ok := lookupWriteAs[*list](s, c.db, dst)
	if !ok {
		return true, false
	}
	s.lmoveItem(c.db, src, sl, dst, dl, from, to, 1)
	return true, true
}

// mpopParse parses the arguments of LMPOP and ZMPOP from numkeys on:
// numkeys key [key ...] first|second [COUNT count], the end to pop from
// named first or second (LEFT or RIGHT, MIN or MAX) in any case; it
// reports whether it is first. The count is 1 if not given.
func (s *Server) mpopParse(args [][]byte, first, second string) (keys [][]byte, isFirst bool, count int64, ok bool) {
	numKeys, ok := s.parseListIntIn(args[0], 1, math.MaxInt64, errMpopNumKeys)
	if !ok {
		return nil, false, 0, false
	}
	if numKeys >= int64(len(args))-1 { // no end named after the keys
		s.w.Error(errSyntax)
		return nil, false, 0, false
	}
	keys = args[1 : 1+numKeys]
	switch end := args[1+numKeys]; {
	case strings.EqualFold(string(end), first):
		isFirst = true
	case !strings.EqualFold(string(end), second):
		s.w.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for i := int(numKeys) + 2; i < len(args); i++ {
		if count == -1 && strings.EqualFold(string(args[i]), "count") && i+1 < len(args) {
			i++
			if count, ok = s.parseListIntIn(args[i], 1, math.MaxInt64, errMpopCount); !ok {
				return nil, false, 0, false
			}
		} else {
			s.w.Error(errSyntax)
			return nil, false, 0, false
		}
	}
	if count == -1 {
		count = 1
	}
	return keys, isFirst, count, true
}

// bmpopParse parses the arguments of BLMPOP and BZMPOP: the timeout, then
// mpopParse's, which are checked first, as Redis checks them.
func (s *Server) bmpopParse(args [][]byte, first, second string) (keys [][]byte, isFirst bool, count int64, timeout time.Duration, ok bool) {
	if keys, isFirst, count, ok = s.mpopParse(args[2:], first, second); ok {
		timeout, ok = s.parseTimeout(args[1])
	}
	return keys, isFirst, count, timeout, ok
}

// lmpopFrom pops up to count items from key's list l, replying with the key
// and the items, and logs it as LPOP or RPOP with a count.
func (s *Server) lmpopFrom(d *db, key []byte, l *list, left bool, count int64) {
	n := int(min(count, int64(l.len())))
	s.w.Array(2)
	s.w.Bulk(key)
	s.w.Array(n)
	for range n {
		s.w.Bulk(l.pop(left))
	}
	s.listRemoved(d, key, l, left, n)
	s.rewrite(listPopCmd(left), key, strconv.AppendInt(nil, int64(n), 10))
}

func lmpopCommand(s *Server, c *client, args [][]byte) {
	keys, left, count, ok := s.mpopParse(args[1:], "left", "right")
	if !ok {
		return
	}
	if !lmpopAny(s, c, keys, left, count) {
		s.w.NullArray()
	}
}

// lmpopAny pops from the first of keys that holds a list, and reports
// whether it replied (with items or WRONGTYPE).
func lmpopAny(s *Server, c *client, keys [][]byte, left bool, count int64) bool {
	for _, key := range keys {
		l, ok := lookupWriteAs[*list](s, c.db, key)
		if !ok {
			return true
		}
		if l != nil && l.len() > 0 {
			s.lmpopFrom(c.db, key, l, left, count)
			return true
		}
	}
	return false
}

// listBPopOne pops an item from key's list l for BLPOP and BRPOP, replying with
// the key and the item, and logs it as LPOP or RPOP; it counts changes
// (listRemoved).
func (s *Server) listBPopOne(d *db, key []byte, l *list, left bool, changes int) {
	s.w.Array(2)
	s.w.Bulk(key)
	s.w.Bulk(l.pop(left))
	s.listRemoved(d, key, l, left, changes)
	s.rewrite(listPopCmd(left), key)
}

func blpopCommand(s *Server, c *client, args [][]byte) { listBPopGeneric(s, c, args, true) }
func brpopCommand(s *Server, c *client, args [][]byte) { listBPopGeneric(s, c, args, false) }

func listBPopGeneric(s *Server, c *client, args [][]byte, left bool) {
	timeout, ok := s.parseTimeout(args[len(args)-1])
	if !ok {
		return
	}
	keys := args[1 : len(args)-1]
	for _, key := range keys {
		l, ok := lookupWriteAs[*list](s, c.db, key)
		if !ok {
			return
		}
		if l != nil && l.len() > 0 {
			s.listBPopOne(c.db, key, l, left, 1)
			return
		}
	}
	d := c.db
	s.block(c, keys, timeout, func(key []byte) bool {
		l := listKey(d, key)
		if l == nil {
			return false
		}
		s.listBPopOne(d, key, l, left, 0)
		return true
	}, func() { s.w.NullArray() })
}

func blmpopCommand(s *Server, c *client, args [][]byte) {
	keys, left, count, timeout, ok := s.bmpopParse(args, "left", "right")
	if !ok {
		return
	}
	if lmpopAny(s, c, keys, left, count) {
		return
	}
	d := c.db
	s.block(c, keys, timeout, func(key []byte) bool {
		l := listKey(d, key)
		if l == nil {
			return false
		}
		s.lmpopFrom(d, key, l, left, count)
		return true
	}, func() { s.w.NullArray() })
}

func blmoveCommand(s *Server, c *client, args [][]byte) {
	from, ok := s.parseListSide(args[3])
	if !ok {
		return
	}
	to, ok := s.parseListSide(args[4])
	if !ok {
		return
	}
	timeout, ok := s.parseTimeout(args[5])
	if !ok {
		return
	}
	listBMoveGeneric(s, c, args[1], args[2], from, to, timeout, false)
}

func brpoplpushCommand(s *Server, c *client, args [][]byte) {
	timeout, ok := s.parseTimeout(args[3])
	if !ok {
		return
	}
	listBMoveGeneric(s, c, args[1], args[2], false, true, timeout, true)
}

// listBMoveGeneric is BLMOVE and BRPOPLPUSH (legacy): LMOVE at once if src
// has items, else when it receives some.
func listBMoveGeneric(s *Server, c *client, src, dst []byte, from, to bool, timeout time.Duration, legacy bool) {
	logMove := func(src, dst []byte) {
		if legacy {
			s.rewrite(argListRPOPLPUSH, src, dst)
		} else {
			s.rewrite(argListLMOVE, src, dst, listSideArg(from), listSideArg(to))
		}
	}
	if replied, moved := listMoveGeneric(s, c, src, dst, from, to, true); replied {
		if moved {
			logMove(src, dst)
		}
		return
	}
	if s.inExec {
		// Where nothing may wait, BLMOVE answers as LMOVE does at once;
		// when a wait times out Redis 7.0 answers with a null array.
		s.w.Null()
		return
	}
	d, dstKey := c.db, []byte(string(dst))
	s.block(c, [][]byte{src}, timeout, func(key []byte) bool {
		sl := listKey(d, key)
		if sl == nil {
			return false
		}
		var dl *list
		if e := d.lookup(dstKey); e != nil {
			var isList bool
			if dl, isList = e.obj.(*list); !isList {
				s.w.Error(errWrongType)
				return true
			}
		}
		s.lmoveItem(d, key, sl, dstKey, dl, from, to, 0)
		logMove(key, dstKey)
		return true
	}, func() { s.w.NullArray() })
}
