package kv

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

func init() {
	register(
		cmd("zadd", -4, "write denyoom fast", 1, 1, 1, "sorted_set", "1.2.0", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", zaddCommand),
		cmd("zincrby", 4, "write denyoom fast", 1, 1, 1, "sorted_set", "1.2.0", "Increments the score of a member in a sorted set.", zincrbyCommand),
		cmd("zrem", -3, "write fast", 1, 1, 1, "sorted_set", "1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", zremCommand),
		cmd("zcard", 2, "readonly fast", 1, 1, 1, "sorted_set", "1.2.0", "Returns the number of members in a sorted set.", zcardCommand),
		cmd("zscore", 3, "readonly fast", 1, 1, 1, "sorted_set", "1.2.0", "Returns the score of a member in a sorted set.", zscoreCommand),
		cmd("zmscore", -3, "readonly fast", 1, 1, 1, "sorted_set", "6.2.0", "Returns the score of one or more members in a sorted set.", zmscoreCommand),
		cmd("zcount", 4, "readonly fast", 1, 1, 1, "sorted_set", "2.0.0", "Returns the count of members in a sorted set that have scores within a range.", zcountCommand),
		cmd("zlexcount", 4, "readonly fast", 1, 1, 1, "sorted_set", "2.8.9", "Returns the number of members in a sorted set within a lexicographical range.", zlexcountCommand),
		cmd("zrank", 3, "readonly fast", 1, 1, 1, "sorted_set", "2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores.", zrankCommand),
		cmd("zrevrank", 3, "readonly fast", 1, 1, 1, "sorted_set", "2.0.0", "Returns the index of a member in a sorted set ordered by descending scores.", zrevrankCommand),
		cmd("zrange", -4, "readonly", 1, 1, 1, "sorted_set", "1.2.0", "Returns members in a sorted set within a range of indexes.", zrangeCommand),
		cmd("zrangebyscore", -4, "readonly", 1, 1, 1, "sorted_set", "1.0.5", "Returns members in a sorted set within a range of scores.", zrangebyscoreCommand),
		cmd("zrevrangebyscore", -4, "readonly", 1, 1, 1, "sorted_set", "2.2.0", "Returns members in a sorted set within a range of scores in reverse order.", zrevrangebyscoreCommand),
		cmd("zrangebylex", -4, "readonly", 1, 1, 1, "sorted_set", "2.8.9", "Returns members in a sorted set within a lexicographical range.", zrangebylexCommand),
		cmd("zrevrangebylex", -4, "readonly", 1, 1, 1, "sorted_set", "2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order.", zrevrangebylexCommand),
		cmd("zrevrange", -4, "readonly", 1, 1, 1, "sorted_set", "1.2.0", "Returns members in a sorted set within a range of indexes in reverse order.", zrevrangeCommand),
		cmd("zrangestore", -5, "write denyoom", 1, 2, 1, "sorted_set", "6.2.0", "Stores a range of members from sorted set in a key.", zrangestoreCommand),
		cmd("zpopmin", -2, "write fast", 1, 1, 1, "sorted_set", "5.0.0", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", zpopminCommand),
		cmd("zpopmax", -2, "write fast", 1, 1, 1, "sorted_set", "5.0.0", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", zpopmaxCommand),
		cmd("bzpopmin", -3, "write noscript blocking fast", 1, -2, 1, "sorted_set", "5.0.0", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise.", bzpopminCommand),
		cmd("bzpopmax", -3, "write noscript blocking fast", 1, -2, 1, "sorted_set", "5.0.0", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.", bzpopmaxCommand),
		cmd("zmpop", -4, "write movablekeys", 0, 0, 0, "sorted_set", "7.0.0", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", zmpopCommand).withKeyCount(1),
		cmd("bzmpop", -5, "write blocking movablekeys", 0, 0, 0, "sorted_set", "7.0.0", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", bzmpopCommand).withKeyCount(2),
		cmd("zremrangebyrank", 4, "write", 1, 1, 1, "sorted_set", "2.0.0", "Removes members in a sorted set within a range of indexes.", zremrangebyrankCommand),
		cmd("zremrangebyscore", 4, "write", 1, 1, 1, "sorted_set", "1.2.0", "Removes members in a sorted set within a range of scores.", zremrangebyscoreCommand),
		cmd("zremrangebylex", 4, "write", 1, 1, 1, "sorted_set", "2.8.9", "Removes members in a sorted set within a lexicographical range.", zremrangebylexCommand),
		cmd("zrandmember", -2, "readonly", 1, 1, 1, "sorted_set", "6.2.0", "Returns one or more random members from a sorted set.", zrandmemberCommand),
		cmd("zscan", -3, "readonly", 1, 1, 1, "sorted_set", "2.8.0", "Iterates over members and scores of a sorted set.", zscanCommand),
		cmd("zunionstore", -4, "write denyoom movablekeys", 1, 1, 1, "sorted_set", "2.0.0", "Stores the union of multiple sorted sets in a key.", zunionstoreCommand).withKeyCount(2),
		cmd("zinterstore", -4, "write denyoom movablekeys", 1, 1, 1, "sorted_set", "2.0.0", "Stores the intersect of multiple sorted sets in a key.", zinterstoreCommand).withKeyCount(2),
		cmd("zdiffstore", -4, "write denyoom movablekeys", 1, 1, 1, "sorted_set", "6.2.0", "Stores the difference of multiple sorted sets in a key.", zdiffstoreCommand).withKeyCount(2),
		cmd("zunion", -3, "readonly movablekeys", 0, 0, 0, "sorted_set", "6.2.0", "Returns the union of multiple sorted sets.", zunionCommand).withKeyCount(1),
		cmd("zinter", -3, "readonly movablekeys", 0, 0, 0, "sorted_set", "6.2.0", "Returns the intersect of multiple sorted sets.", zinterCommand).withKeyCount(1),
		cmd("zdiff", -3, "readonly movablekeys", 0, 0, 0, "sorted_set", "6.2.0", "Returns the difference between multiple sorted sets.", zdiffCommand).withKeyCount(1),
		cmd("zintercard", -3, "readonly movablekeys", 0, 0, 0, "sorted_set", "7.0.0", "Returns the number of members of the intersect of multiple sorted sets.", zintercardCommand).withKeyCount(1),
	)
}

const (
	errMinMaxFloat = "ERR min or max is not a float"
	errMinMaxLex   = "ERR min or max not valid string range item"
	errPositive    = "ERR value is out of range, must be positive"
)

// appendScore appends a score as Redis 7.0 writes it: "%.17g", and "inf",
// "-inf". An integer of up to 15 digits, whose "%.17g" is its decimal
// digits, is written by AppendInt: the same text, found faster.
func appendScore(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case f == math.Trunc(f) && math.Abs(f) < 1e15 && !(f == 0 && math.Signbit(f)): // "%.17g" writes -0 as "-0"
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}

// formatScore returns a score's text, as appendScore writes it.
func formatScore(f float64) string {
	var buf [32]byte
	return string(appendScore(buf[:0], f))
}

// replyScore writes a score: a bulk string in RESP2, a double in RESP3,
// with Redis 7.0's text (the Writer's Double writes Redis 7.2's).
func (s *Server) replyScore(f float64) {
	var buf [32]byte
	s.replyDoubleText(appendScore(buf[:0], f))
}

// replyDoubleText writes a number formatted already: a bulk string in
// RESP2, a double in RESP3.
func (s *Server) replyDoubleText(text []byte) {
	if s.w.Proto < 3 {
		s.w.Bulk(text)
		return
	}
	s.w.Buf = append(s.w.Buf, ',')
	s.w.Buf = append(s.w.Buf, text...)
	s.w.Buf = append(s.w.Buf, '\r', '\n')
}

// replyEntries writes members, with their scores if withScores: flat in
// RESP2, [member, score] pairs in RESP3.
func (s *Server) replyEntries(nodes []zentry, withScores bool) {
	switch {
	case !withScores:
		s.w.Array(len(nodes))
	case s.w.Proto < 3:
		s.w.Array(2 * len(nodes))
	default:
		s.w.Array(len(nodes))
	}
	for _, n := range nodes {
		if withScores && s.w.Proto >= 3 {
			s.w.Array(2)
		}
		s.w.BulkString(n.member)
		if withScores {
			s.replyScore(n.score)
		}
	}
}

// shortInt parses a plain decimal integer of at most 15 digits, with an
// optional sign — the scores clients send most — without allocating. It
// leaves "-0" (a negative zero) and everything else to strtod's full path.
func shortInt(b []byte) (int64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i, neg = 1, b[0] == '-'
	}
	if len(b) == i || len(b)-i > 15 {
		return 0, false
	}
	var n int64
	for ; i < len(b); i++ {
		d := b[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if neg {
		if n == 0 {
			return 0, false
		}
		n = -n
	}
	return n, true
}

// strtod parses a number as C's strtod does with the whole string
// consumed: leading spaces, hexadecimal ("0x1.8"), "inf" and "infinity";
// the empty string is 0. It reports an overflow and an underflow to zero.
func strtod(b []byte) (f float64, ok, outOfRange bool) {
	if n, isInt := shortInt(b); isInt {
		return float64(n), true, false // exact: fewer than 16 digits
	}
	str := strings.TrimLeft(string(b), " \t\n\v\f\r")
	if str == "" {
		return 0, len(b) == 0, false
	}
	digits := strings.TrimLeft(str, "+-")
	hex := len(digits) > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')
	if hex && !strings.ContainsAny(digits, "pP") {
		str += "p0"
	}
	if strings.ContainsRune(str, '_') {
		return 0, false, false
	}
	f, err := strconv.ParseFloat(str, 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); !isNum || ne.Err != strconv.ErrRange {
			return 0, false, false
		}
		outOfRange = true
	}
	if f == 0 {
		mantissa := digits
		if hex {
			mantissa = digits[2:]
		}
		if i := strings.IndexAny(mantissa, "eEpP"); i >= 0 && !hex || i >= 0 && (mantissa[i] == 'p' || mantissa[i] == 'P') {
			mantissa = mantissa[:i]
		}
		outOfRange = strings.ContainsAny(mantissa, "123456789abcdefABCDEF")
	}
	return f, !math.IsNaN(f), outOfRange
}

// parseScore parses a score or an increment as Redis's
// getDoubleFromObject does: no leading space, no NaN, no overflow or
// underflow to zero.
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || b[0] == ' ' || (b[0] >= '\t' && b[0] <= '\r') {
		return 0, false
	}
	f, ok, outOfRange := strtod(b)
	return f, ok && !outOfRange
}

func parseScoreBound(b []byte) (float64, bool, bool) {
	if len(b) > 0 && b[0] == '(' {
		f, ok, _ := strtod(b[1:])
		return f, true, ok
	}
	f, ok, _ := strtod(b)
	return f, false, ok
}

// parseScoreRange parses ZRANGEBYSCORE's min and max.
func parseScoreRange(min, max []byte) (*scoreRange, bool) {
	var r scoreRange
	var ok1, ok2 bool
	r.min, r.minex, ok1 = parseScoreBound(min)
	r.max, r.maxex, ok2 = parseScoreBound(max)
	return &r, ok1 && ok2
}

func parseLexBound(b []byte) (lexBound, bool) {
	if len(b) == 0 {
		return lexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) != 1 {
			return lexBound{}, false
		}
		if b[0] == '+' {
			return lexBound{inf: 1, ex: true}, true
		}
		return lexBound{inf: -1, ex: true}, true
	case '(':
		return lexBound{s: string(b[1:]), ex: true}, true
	case '[':
		return lexBound{s: string(b[1:])}, true
	}
	return lexBound{}, false
}

// parseLexRange parses ZRANGEBYLEX's min and max.
func parseLexRange(min, max []byte) (*lexRange, bool) {
	var r lexRange
	var ok1, ok2 bool
	r.min, ok1 = parseLexBound(min)
	r.max, ok2 = parseLexBound(max)
	return &r, ok1 && ok2
}

// storeZset makes z the value of key, replacing what it held, or deletes
// key if z is empty (storeResult); it replies with z's size. compact
// chooses the encoding from the contents, as Redis does for a computed
// set.
func (s *Server) storeZset(c *client, key []byte, z *zset, event string, compact bool) {
	if compact && z.len() > 0 {
		z.fitsListpack()
	}
	if s.storeResult(c.db, key, z, z.len()) {
		s.notify(notifyZSet, event, key, c.db.id)
		s.signalReady(c.db, key)
	}
}

func zaddCommand(s *Server, c *client, args [][]byte)    { zaddGeneric(s, c, args, false) }
func zincrbyCommand(s *Server, c *client, args [][]byte) { zaddGeneric(s, c, args, true) }

func zaddGeneric(s *Server, c *client, args [][]byte, zincrby bool) {
	var nx, xx, gt, lt, ch, incr bool
	i := 2
	if zincrby {
		incr = true
	} else {
	flags:
		for ; i < len(args); i++ {
			switch strings.ToLower(string(args[i])) {
			case "nx":
				nx = true
			case "xx":
				xx = true
			case "gt":
				gt = true
			case "lt":
				lt = true
			case "ch":
				ch = true
			case "incr":
				incr = true
			default:
				break flags
			}
		}
	}
	pairs := args[i:]
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		s.w.Error(errSyntax)
		return
	}
	if nx && xx {
		s.w.Error("ERR XX and NX options at the same time are not compatible")
		return
	}
	if (gt && nx) || (lt && nx) || (gt && lt) {
		s.w.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	}
	if incr && len(pairs) > 2 {
		s.w.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		f, ok := parseScore(pairs[2*j])
		if !ok {
			s.w.Error(errNotFloat)
			return
		}
		scores[j] = f
	}
	key := args[1]
	z, ok := lookupWriteAs[*zset](s, c.db, key)
	if !ok {
		return
	}
	added, updated, processed := 0, 0, 0
	var newScore float64
	created := false
	nan := false
	if z != nil || !xx {
		for j, score := range scores {
			member := pairs[2*j+1]
			var p *float64 // the member's score in the dict
			if z != nil {
				p = z.members.get(member)
			}
			if p != nil {
				if nx {
					continue
				}
				cur := *p
				if incr {
					score += cur
					if math.IsNaN(score) {
						nan = true
						break
					}
				}
				if (lt && score >= cur) || (gt && score <= cur) {
					continue
				}
				newScore = score
				processed++
				if score != cur {
					z.update(member, p, score)
					updated++
				}
				continue
			}
			if xx {
				continue
			}
			if z == nil {
				z = newZset(&s.limits)
				c.db.add(key, z)
				created = true
			}
			z.insert(member, score)
			newScore = score
			added++
			processed++
		}
	}
	if added+updated > 0 {
		s.modified(c.db, key)
		s.dirty(added + updated - 1) // Redis counts a change per member
		event := "zadd"
		if incr {
			event = "zincr"
		}
		s.notify(notifyZSet, event, key, c.db.id)
	}
	if created {
		s.signalReady(c.db, key)
	}
	switch {
	case nan:
		s.w.Error("ERR resulting score is not a number (NaN)")
	case incr && processed > 0:
		s.replyScore(newScore)
	case incr:
		s.w.Null()
	case ch:
		s.w.Int(int64(added + updated))
	default:
		s.w.Int(int64(added))
	}
}

func zremCommand(s *Server, c *client, args [][]byte) {
	key := args[1]
	z, ok := lookupWriteAs[*zset](s, c.db, key)
	if !ok {
		return
	}
	n := 0
	if z != nil {
		for _, m := range args[2:] {
			if z.remove(m) {
				n++
				if z.len() == 0 {
					break
				}
			}
		}
	}
	if n > 0 {
		s.modified(c.db, key)
		s.dirty(n - 1) // Redis counts a change per member removed
		s.notify(notifyZSet, "zrem", key, c.db.id)
		s.removeIfEmpty(c.db, key, z.len())
	}
	s.w.Int(int64(n))
}

func zcardCommand(s *Server, c *client, args [][]byte) {
	z, _, ok := lookupAs[*zset](s, c.db, args[1])
	if !ok {
		return
	}
	if z == nil {
		s.w.Int(0)
		return
	}
	s.w.Int(int64(z.len()))
}

func zscoreCommand(s *Server, c *client, args [][]byte) {
	z, _, ok := lookupAs[*zset](s, c.db, args[1])
	if !ok {
		return
	}
	if z != nil {
		if f, found := z.score(args[2]); found {
			s.replyScore(f)
			return
		}
	}
	s.w.Null()
}

func zmscoreCommand(s *Server, c *client, args [][]byte) {
	s.replyScores(c, args, s.replyScore, s.w.Null)
}

// replyScores answers a command whose key, args[1], is a sorted set and
// whose other arguments are its members (ZMSCORE, GEOPOS, GEOHASH): an
// array of reply(score) for each, or absent() where there is none.
func (s *Server) replyScores(c *client, args [][]byte, reply func(score float64), absent func()) {
	z, _, ok := lookupAs[*zset](s, c.db, args[1])
	if !ok {
		return
	}
	s.w.Array(len(args) - 2)
	for _, m := range args[2:] {
		if z == nil {
			absent()
		} else if score, found := z.score(m); found {
			reply(score)
		} else {
			absent()
		}
	}
}

func zcountCommand(s *Server, c *client, args [][]byte) {
	r, ok := parseScoreRange(args[2], args[3])
	if !ok {
		s.w.Error(errMinMaxFloat)
		return
	}
	zcountGeneric(s, c, args[1], r)
}

func zlexcountCommand(s *Server, c *client, args [][]byte) {
	r, ok := parseLexRange(args[2], args[3])
	if !ok {
		s.w.Error(errMinMaxLex)
		return
	}
	zcountGeneric(s, c, args[1], r)
}

func zcountGeneric(s *Server, c *client, key []byte, r zrange) {
	z, _, ok := lookupAs[*zset](s, c.db, key)
	if !ok {
		return
	}
	if z == nil {
		s.w.Int(0)
		return
	}
	s.w.Int(int64(z.count(r)))
}

func zrankCommand(s *Server, c *client, args [][]byte)    { zrankGeneric(s, c, args, false) }
func zrevrankCommand(s *Server, c *client, args [][]byte) { zrankGeneric(s, c, args, true) }

func zrankGeneric(s *Server, c *client, args [][]byte, rev bool) {
	z, _, ok := lookupAs[*zset](s, c.db, args[1])
	if !ok {
		return
	}
	if z != nil {
		if p := z.members.get(args[2]); p != nil {
			r := z.tree.rank(*p, bytesString(args[2]))
			if rev {
				r = z.len() - 1 - r
			}
			s.w.Int(int64(r))
			return
		}
	}
	s.w.Null()
}

// Kinds of range, as ZRANGE chooses them.
const (
	byAuto = iota
	byRank
	byScore
	byLex
)

// Directions of a range.
const (
	dirAuto = iota
	dirForward
	dirReverse
)

func zrangeCommand(s *Server, c *client, args [][]byte) {
	zrangeGeneric(s, c, args, 1, nil, byAuto, dirAuto)
}
func zrangebyscoreCommand(s *Server, c *client, args [][]byte) {
	zrangeGeneric(s, c, args, 1, nil, byScore, dirForward)
}
func zrevrangebyscoreCommand(s *Server, c *client, args [][]byte) {
	zrangeGeneric(s, c, args, 1, nil, byScore, dirReverse)
}
func zrangebylexCommand(s *Server, c *client, args [][]byte) {
	zrangeGeneric(s, c, args, 1, nil, byLex, dirForward)
}
func zrevrangebylexCommand(s *Server, c *client, args [][]byte) {
	zrangeGeneric(s, c, args, 1, nil, byLex, dirReverse)
}
func zrevrangeCommand(s *Server, c *client, args [][]byte) {
	zrangeGeneric(s, c, args, 1, nil, byRank, dirReverse)
}
func zrangestoreCommand(s *Server, c *client, args [][]byte) {
	zrangeGeneric(s, c, args, 2, args[1], byAuto, dirAuto)
}

// zrangeGeneric is Redis's zrangeGenericCommand: the source key is at
// args[at], min and max follow; dst, if not nil, receives the result.
func zrangeGeneric(s *Server, c *client, args [][]byte, at int, dst []byte, kind, dir int) {
	withScores := false
	offset, limit := int64(0), int64(-1)
	for j := at + 3; j < len(args); j++ {
		left := len(args) - j - 1
		opt := strings.ToLower(string(args[j]))
		switch {
		case dst == nil && opt == "withscores":
			withScores = true
		case opt == "limit" && left >= 2:
			var ok1, ok2 bool
			offset, ok1 = parseInt(args[j+1])
			if ok1 {
				limit, ok2 = parseInt(args[j+2])
			}
			if !ok1 || !ok2 {
				s.w.Error(errNotInt)
				return
			}
			j += 2
		case dir == dirAuto && opt == "rev":
			dir = dirReverse
		case kind == byAuto && opt == "bylex":
			kind = byLex
		case kind == byAuto && opt == "byscore":
			kind = byScore
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	if dir == dirAuto {
		dir = dirForward
	}
	if kind == byAuto {
		kind = byRank
	}
	if limit != -1 && kind == byRank {
		s.w.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && kind == byLex {
		s.w.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	minArg, maxArg := args[at+1], args[at+2]
	if dir == dirReverse && kind != byRank {
		minArg, maxArg = maxArg, minArg
	}
	var start, end int64
	var r zrange
	switch kind {
	case byRank:
		var ok1, ok2 bool
		start, ok1 = parseInt(minArg)
		if ok1 {
			end, ok2 = parseInt(maxArg)
		}
		if !ok1 || !ok2 {
			s.w.Error(errNotInt)
			return
		}
	case byScore:
		sr, ok := parseScoreRange(minArg, maxArg)
		if !ok {
			s.w.Error(errMinMaxFloat)
			return
		}
		r = sr
	case byLex:
		lr, ok := parseLexRange(minArg, maxArg)
		if !ok {
			s.w.Error(errMinMaxLex)
			return
		}
		r = lr
	}
	z, _, ok := lookupAs[*zset](s, c.db, args[at])
	if !ok {
		return
	}
	var nodes []zentry
	if z != nil {
		if kind == byRank {
			nodes = z.rankRange(start, end, dir == dirReverse)
		} else {
			nodes = z.rangeIn(r, offset, limit, dir == dirReverse)
		}
	}
	if dst != nil {
		// Redis 7.0 fills a compact set unless the rank range is known
		// to be large, converting it on the way when it outgrows it.
		out := newZset(&s.limits)
		out.big = kind == byRank && len(nodes) > s.limits.zsetEntries
		for _, n := range nodes {
			out.set([]byte(n.member), n.score)
		}
		s.storeZset(c, dst, out, "zrangestore", false)
		return
	}
	s.replyEntries(nodes, withScores)
}

// rankRange returns the elements of ranks start to end (0-based, negative
// from the end), from the end if rev.
func (z *zset) rankRange(start, end int64, rev bool) []zentry {
	n := int64(z.len())
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start = max(start, 0)
	if start > end || start >= n {
		return nil
	}
	end = min(end, n-1)
	nodes := make([]zentry, 0, end-start+1)
	if rev {
		for c := z.tree.cursor(int(n - 1 - start)); c.ok() && len(nodes) < cap(nodes); c.prev() {
			nodes = append(nodes, c.entry())
		}
		return nodes
	}
	for c := z.tree.cursor(int(start)); c.ok() && len(nodes) < cap(nodes); c.next() {
		nodes = append(nodes, c.entry())
	}
	return nodes
}

// rangeIn returns the elements in r, skipping offset and at most limit
// (all if negative), from the highest if rev.
func (z *zset) rangeIn(r zrange, offset, limit int64, rev bool) []zentry {
	if offset < 0 {
		return nil
	}
	var nodes []zentry
	if rev {
		c, rank := z.lastIn(r)
		if !c.ok() || offset > int64(rank) {
			return nil
		}
		for c = z.tree.cursor(rank - int(offset)); c.ok() && limit != 0 && r.gteMin(c.score(), c.member()); c.prev() {
			nodes = append(nodes, c.entry())
			limit--
		}
		return nodes
	}
	c, rank := z.firstIn(r)
	if !c.ok() || offset >= int64(z.len()-rank) {
		return nil
	}
	for c = z.tree.cursor(rank + int(offset)); c.ok() && limit != 0 && r.lteMax(c.score(), c.member()); c.next() {
		nodes = append(nodes, c.entry())
		limit--
	}
	return nodes
}

func zpopminCommand(s *Server, c *client, args [][]byte) { zpopGeneric(s, c, args, false) }
func zpopmaxCommand(s *Server, c *client, args [][]byte) { zpopGeneric(s, c, args, true) }

func zpopGeneric(s *Server, c *client, args [][]byte, fromMax bool) {
	if len(args) > 3 {
		s.w.Error(errSyntax)
		return
	}
	count := int64(-1)
	if len(args) == 3 {
		n, ok := parseInt(args[2])
		if !ok || n < 0 {
			s.w.Error(errPositive)
			return
		}
		count = n
	}
	key := args[1]
	z, ok := lookupWriteAs[*zset](s, c.db, key)
	if !ok {
		return
	}
	if z == nil || count == 0 {
		s.w.Array(0)
		return
	}
	var one [1]zentry // room for the usual single pop
	nodes := z.pop(one[:0], max(count, 1), fromMax)
	s.replyPopped(nodes, s.w.Proto >= 3 && count != -1)
	s.popped(c.db, key, z, fromMax, len(nodes))
}

// replyPopped writes popped elements, as [member, score] pairs if nested,
// else flat.
func (s *Server) replyPopped(nodes []zentry, nested bool) {
	if nested {
		s.w.Array(len(nodes))
	} else {
		s.w.Array(2 * len(nodes))
	}
	for _, n := range nodes {
		if nested {
			s.w.Array(2)
		}
		s.w.BulkString(n.member)
		s.replyScore(n.score)
	}
}

// pop removes up to count elements from the lowest, or the highest if
// fromMax, and appends them to nodes.
func (z *zset) pop(nodes []zentry, count int64, fromMax bool) []zentry {
	for ; count > 0 && z.len() > 0; count-- {
		r := 0
		if fromMax {
			r = z.len() - 1
		}
		e := z.tree.deleteAt(r)
		z.members.delete(stringBytes(e.member))
		nodes = append(nodes, e)
	}
	return nodes
}

var (
	argZPOPMIN = []byte("ZPOPMIN")
	argZPOPMAX = []byte("ZPOPMAX")
)

// popped records the pop of n elements from key: a change each, as
// Redis counts them, and one event.
func (s *Server) popped(d *db, key []byte, z *zset, fromMax bool, n int) {
	event := "zpopmin"
	if fromMax {
		event = "zpopmax"
	}
	s.modified(d, key)
	s.dirty(n - 1)
	s.notify(notifyZSet, event, key, d.id)
	s.removeIfEmpty(d, key, z.len())
}

// zpopKey pops from key's sorted set z, replying with the key first: one
// element for BZPOPMIN and BZPOPMAX (count -1), in a flat array; up to
// count for ZMPOP and BZMPOP, as pairs in an array of their own. It logs
// the pop as ZPOPMIN or ZPOPMAX, with the number popped unless count is
// -1, as Redis propagates them.
func (s *Server) zpopKey(d *db, key []byte, z *zset, fromMax bool, count int64) {
	var one [1]zentry
	nodes := z.pop(one[:0], max(count, 1), fromMax)
	if count == -1 {
		s.w.Array(3)
		s.w.Bulk(key)
		s.w.BulkString(nodes[0].member)
		s.replyScore(nodes[0].score)
	} else {
		s.w.Array(2)
		s.w.Bulk(key)
		s.replyPopped(nodes, true)
	}
	s.popped(d, key, z, fromMax, len(nodes))
	name := argZPOPMIN
	if fromMax {
		name = argZPOPMAX
	}
	if count == -1 {
		s.rewrite(name, key)
	} else {
		s.rewrite(name, key, strconv.AppendInt(nil, int64(len(nodes)), 10))
	}
}

// zpopAny pops from the first of keys that holds a sorted set (zpopKey),
// and reports whether it replied, with the elements or WRONGTYPE for a
// key of another type before it. The keys are looked up for writing, as
// Redis's lookupKeyWrite: they count as no keyspace hit or miss.
func zpopAny(s *Server, c *client, keys [][]byte, fromMax bool, count int64) bool {
	for _, key := range keys {
		z, ok := lookupWriteAs[*zset](s, c.db, key)
		if !ok {
			return true
		}
		if z != nil {
			s.zpopKey(c.db, key, z, fromMax, count)
			return true
		}
	}
	return false
}

func zmpopCommand(s *Server, c *client, args [][]byte) {
	keys, fromMin, count, ok := s.mpopParse(args[1:], "min", "max")
	if !ok {
		return
	}
	if !zpopAny(s, c, keys, !fromMin, count) {
		s.w.NullArray()
	}
}

func bzpopminCommand(s *Server, c *client, args [][]byte) { bzpopCommand(s, c, args, false) }
func bzpopmaxCommand(s *Server, c *client, args [][]byte) { bzpopCommand(s, c, args, true) }

func bzpopCommand(s *Server, c *client, args [][]byte, fromMax bool) {
	timeout, ok := s.parseTimeout(args[len(args)-1])
	if !ok {
		return
	}
	bzpopGeneric(s, c, args[1:len(args)-1], timeout, fromMax, -1)
}

func bzmpopCommand(s *Server, c *client, args [][]byte) {
	if keys, fromMin, count, timeout, ok := s.bmpopParse(args, "min", "max"); ok {
		bzpopGeneric(s, c, keys, timeout, !fromMin, count)
	}
}

// bzpopGeneric is BZPOPMIN and BZPOPMAX (count -1) and BZMPOP: zpopAny,
// or if none of keys holds a sorted set, c waits until one does, served
// then by zpopKey, or until timeout passes, answered with a null array.
func bzpopGeneric(s *Server, c *client, keys [][]byte, timeout time.Duration, fromMax bool, count int64) {
	if zpopAny(s, c, keys, fromMax, count) {
		return
	}
	d := c.db
	s.block(c, keys, timeout, func(key []byte) bool {
		e := d.lookup(key)
		if e == nil {
			return false
		}
		z, isZset := e.obj.(*zset)
		if !isZset {
			return false
		}
		s.zpopKey(d, key, z, fromMax, count)
		return true
	}, func() { s.w.NullArray() })
}

func zremrangebyrankCommand(s *Server, c *client, args [][]byte) {
	start, ok1 := parseInt(args[2])
	end, ok2 := parseInt(args[3])
	if !ok1 || !ok2 {
		s.w.Error(errNotInt)
		return
	}
	zremrangeGeneric(s, c, args[1], "zremrangebyrank", func(z *zset) []zentry {
		return z.rankRange(start, end, false)
	})
}

func zremrangebyscoreCommand(s *Server, c *client, args [][]byte) {
	r, ok := parseScoreRange(args[2], args[3])
	if !ok {
		s.w.Error(errMinMaxFloat)
		return
	}
	zremrangeGeneric(s, c, args[1], "zremrangebyscore", func(z *zset) []zentry {
		return z.rangeIn(r, 0, -1, false)
	})
}

func zremrangebylexCommand(s *Server, c *client, args [][]byte) {
	r, ok := parseLexRange(args[2], args[3])
	if !ok {
		s.w.Error(errMinMaxLex)
		return
	}
	zremrangeGeneric(s, c, args[1], "zremrangebylex", func(z *zset) []zentry {
		return z.rangeIn(r, 0, -1, false)
	})
}

func zremrangeGeneric(s *Server, c *client, key []byte, event string, find func(*zset) []zentry) {
	z, ok := lookupWriteAs[*zset](s, c.db, key)
	if !ok {
		return
	}
	if z == nil {
		s.w.Int(0)
		return
	}
	nodes := find(z)
	for _, n := range nodes {
		z.removeEntry(n)
	}
	if len(nodes) > 0 {
		s.modified(c.db, key)
		s.dirty(len(nodes) - 1) // Redis counts a change per member removed
		s.notify(notifyZSet, event, key, c.db.id)
		s.removeIfEmpty(c.db, key, z.len())
	}
	s.w.Int(int64(len(nodes)))
}

func zrandmemberCommand(s *Server, c *client, args [][]byte) {
	if len(args) == 2 {
		z, _, ok := lookupAs[*zset](s, c.db, args[1])
		if !ok {
			return
		}
		if z == nil {
			s.w.Null()
			return
		}
		m, _ := z.members.at(z.members.random())
		s.w.BulkString(m)
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
	withScores := false
	if len(args) > 4 || (len(args) == 4 && !strings.EqualFold(string(args[3]), "withscores")) {
		s.w.Error(errSyntax)
		return
	}
	if len(args) == 4 {
		withScores = true
		if count < -math.MaxInt64/2 || count > math.MaxInt64/2 {
			s.w.Error("ERR value is out of range")
			return
		}
	}
	z, _, ok := lookupAs[*zset](s, c.db, args[1])
	if !ok {
		return
	}
	if z == nil || count == 0 {
		s.w.Array(0)
		return
	}
	size := int64(z.len())
	var nodes []zentry
	switch {
	case count < 0 || count == 1:
		n := count
		if n < 0 {
			n = -n
		}
		nodes = make([]zentry, 0, min(n, 1<<20))
		for range n {
			m, sc := z.members.at(z.members.random())
			nodes = append(nodes, zentry{m, *sc})
		}
	case count >= size:
		// Redis 7.0 returns the whole set from the highest.
		nodes = z.rankRange(0, -1, true)
	default:
		// A random subset: shuffle the first count positions.
		idx := make([]int, size)
		for i := range idx {
			idx[i] = i
		}
		for i := range int(count) {
			j := i + rand.IntN(int(size)-i)
			idx[i], idx[j] = idx[j], idx[i]
			m, sc := z.members.at(idx[i])
			nodes = append(nodes, zentry{m, *sc})
		}
	}
	s.replyEntries(nodes, withScores)
}

func zscanCommand(s *Server, c *client, args [][]byte) {
	cursor, ok := parseScanCursor(args[2])
	if !ok {
		s.w.Error("ERR invalid cursor")
		return
	}
	z, _, ok := lookupAs[*zset](s, c.db, args[1])
	if !ok {
		return
	}
	if z == nil {
		s.replyScan(0, nil)
		return
	}
	o, ok := s.parseScanOptions(args, 3, false)
	if !ok {
		return
	}
	var out []string
	add := func(member string, score float64) {
		if o.match == nil || globMatch(o.match, []byte(member), false) {
			out = append(out, member, formatScore(score))
		}
	}
	next := uint64(0)
	if !z.big {
		// Redis returns a compact set whole, in order.
		for c := z.tree.first(); c.ok(); c.next() {
			add(c.member(), c.score())
		}
	} else {
		next = z.members.scan(cursor, o.count, func(member string, score *float64) { add(member, *score) })
	}
	s.replyScan(next, out)
}

// Operations of zsetOp.
const (
	zsetUnion = iota
	zsetInter
	zsetDiff
)

func zunionCommand(s *Server, c *client, args [][]byte) { zsetOp(s, c, args, nil, zsetUnion, false) }
func zinterCommand(s *Server, c *client, args [][]byte) { zsetOp(s, c, args, nil, zsetInter, false) }
func zdiffCommand(s *Server, c *client, args [][]byte)  { zsetOp(s, c, args, nil, zsetDiff, false) }
func zintercardCommand(s *Server, c *client, args [][]byte) {
	zsetOp(s, c, args, nil, zsetInter, true)
}
func zunionstoreCommand(s *Server, c *client, args [][]byte) {
	zsetOp(s, c, args, args[1], zsetUnion, false)
}
func zinterstoreCommand(s *Server, c *client, args [][]byte) {
	zsetOp(s, c, args, args[1], zsetInter, false)
}
func zdiffstoreCommand(s *Server, c *client, args [][]byte) {
	zsetOp(s, c, args, args[1], zsetDiff, false)
}

// zsetSource is an input of ZUNION, ZINTER, ZDIFF and their kin: a sorted
// set or a set (whose members score 1).
type zsetSource struct {
	z      *zset
	s      *set
	weight float64
}

func (src *zsetSource) len() int {
	switch {
	case src.z != nil:
		return src.z.len()
	case src.s != nil:
		return src.s.len()
	}
	return 0
}

func (src *zsetSource) score(member []byte) (float64, bool) {
	switch {
	case src.z != nil:
		return src.z.score(member)
	case src.s != nil:
		return 1, src.s.has(member)
	}
	return 0, false
}

// each visits the members, until fn returns false.
func (src *zsetSource) each(fn func(member string, score float64) bool) {
	switch {
	case src.z != nil:
		for c := src.z.tree.first(); c.ok() && fn(c.member(), c.score()); c.next() {
		}
	case src.s != nil:
		for i := 0; i < src.s.len() && fn(src.s.at(i), 1); i++ {
		}
	}
}

// Aggregations of ZUNION and ZINTER.
const (
	aggSum = iota
	aggMin
	aggMax
)

func aggregate(agg int, target *float64, v float64) {
	switch agg {
	case aggSum:
		*target += v
		if math.IsNaN(*target) {
			*target = 0
		}
	case aggMin: // as C compares: a NaN v leaves target
		if v < *target {
			*target = v
		}
	case aggMax:
		if v > *target {
			*target = v
		}
	}
}

// zsetOp is Redis's zunionInterDiffGenericCommand: ZUNION, ZINTER and
// ZDIFF (op), which reply with the result, and, with dst, their STORE
// forms, which store it there; with cardOnly, ZINTERCARD, which replies
// with the size of the intersection, counted up to its LIMIT. The number
// of keys follows dst, or the command's name.
func zsetOp(s *Server, c *client, args [][]byte, dst []byte, op int, cardOnly bool) {
	at := 1
	if dst != nil {
		at = 2
	}
	n, ok := parseInt(args[at])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	if n < 1 {
		s.w.Error("ERR at least 1 input key is needed for '" + strings.ToLower(string(args[0])) + "' command")
		return
	}
	if n > int64(len(args)-at-1) {
		s.w.Error(errSyntax)
		return
	}
	srcs := make([]zsetSource, n)
	j := at + 1
	for i := range srcs {
		srcs[i].weight = 1
		// Looked up for reading, as Redis's lookupKeyRead: each key
		// counts as a keyspace hit or miss, the STORE forms' too.
		e := c.db.read(args[j])
		j++
		if e == nil {
			continue
		}
		switch o := e.obj.(type) {
		case *zset:
			srcs[i].z = o
		case *set:
			srcs[i].s = o
		default:
			s.w.Error(errWrongType)
			return
		}
	}
	agg, withScores, limit := aggSum, false, int64(0)
	combines := op != zsetDiff && !cardOnly // WEIGHTS and AGGREGATE apply
	for j < len(args) {
		left := len(args) - j
		opt := strings.ToLower(string(args[j]))
		switch {
		case combines && opt == "weights" && left >= len(srcs)+1:
			j++
			for i := range srcs {
				w, ok := parseScore(args[j])
				if !ok {
					s.w.Error("ERR weight value is not a float")
					return
				}
				srcs[i].weight = w
				j++
			}
		case combines && opt == "aggregate" && left >= 2:
			switch strings.ToLower(string(args[j+1])) {
			case "sum":
				agg = aggSum
			case "min":
				agg = aggMin
			case "max":
				agg = aggMax
			default:
				s.w.Error(errSyntax)
				return
			}
			j += 2
		case dst == nil && !cardOnly && opt == "withscores":
			withScores = true
			j++
		case cardOnly && opt == "limit" && left >= 2:
			l, ok := parseInt(args[j+1])
			if !ok || l < 0 {
				s.w.Error("ERR LIMIT can't be negative")
				return
			}
			limit = l
			j += 2
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	if op != zsetDiff {
		sortSources(srcs) // smallest first, as Redis does
	}
	if cardOnly {
		s.w.Int(int64(zinterCard(srcs, limit)))
		return
	}
	out := newZset(&s.limits)
	out.big = true // until stored: Redis computes in a skiplist
	switch op {
	case zsetUnion:
		zunion(srcs, agg, out)
	case zsetInter:
		zinter(srcs, agg, out)
	case zsetDiff:
		zdiff(srcs, out)
	}
	if dst == nil {
		s.replyEntries(out.rankRange(0, -1, false), withScores)
		return
	}
	s.storeZset(c, dst, out, strings.ToLower(string(args[0])), true)
}

// weighted returns score times weight, 0 if that is NaN (0 times an
// infinity), as Redis weighs a member's first score.
func weighted(score, weight float64) float64 {
	if v := score * weight; !math.IsNaN(v) {
		return v
	}
	return 0
}

// zunion adds to out the members of srcs, each with its scores, weighted,
// aggregated by agg.
func zunion(srcs []zsetSource, agg int, out *zset) {
	acc := newDict[float64](0)
	var order []string
	for i := range srcs {
		srcs[i].each(func(member string, score float64) bool {
			v := weighted(score, srcs[i].weight)
			p, added := acc.put([]byte(member))
			if added {
				*p = v
				order = append(order, member)
			} else {
				aggregate(agg, p, v)
			}
			return true
		})
	}
	for _, m := range order {
		out.set([]byte(m), *acc.get([]byte(m)))
	}
}

// zinterEach visits the members of every one of srcs, sorted by size,
// with their scores, weighted, aggregated by agg, until fn returns false.
func zinterEach(srcs []zsetSource, agg int, fn func(member string, score float64) bool) {
	srcs[0].each(func(member string, score float64) bool {
		v := weighted(score, srcs[0].weight)
		for i := 1; i < len(srcs); i++ {
			sc, found := srcs[i].score(stringBytes(member))
			if !found {
				return true
			}
			aggregate(agg, &v, sc*srcs[i].weight) // unchecked for NaN, as in Redis
		}
		return fn(member, v)
	})
}

// zinter adds to out the members of every one of srcs, as zinterEach
// visits them.
func zinter(srcs []zsetSource, agg int, out *zset) {
	zinterEach(srcs, agg, func(member string, score float64) bool {
		out.set([]byte(member), score)
		return true
	})
}

// zinterCard counts the members of every one of srcs, stopping at limit
// unless it is 0.
func zinterCard(srcs []zsetSource, limit int64) int64 {
	n := int64(0)
	zinterEach(srcs, aggSum, func(string, float64) bool {
		n++
		return limit == 0 || n < limit
	})
	return n
}

// zdiff adds to out the members of srcs[0] in none of the others, with
// their scores there.
func zdiff(srcs []zsetSource, out *zset) {
	srcs[0].each(func(member string, score float64) bool {
		for _, src := range srcs[1:] {
			if _, found := src.score(stringBytes(member)); found {
				return true
			}
		}
		out.set([]byte(member), score)
		return true
	})
}

// sortSources orders srcs by size, smallest first, stably.
func sortSources(srcs []zsetSource) {
	for i := 1; i < len(srcs); i++ {
		for j := i; j > 0 && srcs[j].len() < srcs[j-1].len(); j-- {
			srcs[j], srcs[j-1] = srcs[j-1], srcs[j]
		}
	}
}
