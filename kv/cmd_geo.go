package kv

import (
	"math"
	"math/big"
	"slices"
	"strconv"
)

func init() {
	register(
		cmd("geoadd", -5, "write denyoom", 1, 1, 1, "geo", "3.2.0", "Add one or more geospatial items in the geospatial index represented using a sorted set", geoaddCommand),
		cmd("geodist", -4, "readonly", 1, 1, 1, "geo", "3.2.0", "Returns the distance between two members of a geospatial index", geodistCommand),
		cmd("geohash", -2, "readonly", 1, 1, 1, "geo", "3.2.0", "Returns members of a geospatial index as standard geohash strings", geohashCommand),
		cmd("geopos", -2, "readonly", 1, 1, 1, "geo", "3.2.0", "Returns longitude and latitude of members of a geospatial index", geoposCommand),
		cmd("georadius", -6, "write denyoom movablekeys", 1, 1, 1, "geo", "3.2.0", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", georadiusCommand).withKeys(geoStoreKeys(6)),
		cmd("georadius_ro", -6, "readonly", 1, 1, 1, "geo", "3.2.10", "A read-only variant for GEORADIUS", georadiusroCommand),
		cmd("georadiusbymember", -5, "write denyoom movablekeys", 1, 1, 1, "geo", "3.2.0", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", georadiusbymemberCommand).withKeys(geoStoreKeys(5)),
		cmd("georadiusbymember_ro", -5, "readonly", 1, 1, 1, "geo", "3.2.10", "A read-only variant for GEORADIUSBYMEMBER", georadiusbymemberroCommand),
		cmd("geosearch", -7, "readonly", 1, 1, 1, "geo", "6.2.0", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", geosearchCommand),
		cmd("geosearchstore", -8, "write denyoom", 1, 2, 1, "geo", "6.2.0", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", geosearchstoreCommand),
	)
}

// geoStoreKeys finds GEORADIUS's keys, from its fixed arguments (from
// on): the source, and the keys after the first STORE and the first
// STOREDIST, as Redis's key specs find them.
func geoStoreKeys(from int) func(args [][]byte) [][]byte {
	return func(args [][]byte) [][]byte {
		keys := [][]byte{args[1]}
		for _, kw := range []string{"store", "storedist"} {
			for i := from; i+1 < len(args); i++ {
				if isOpt(args[i], kw) {
					keys = append(keys, args[i+1])
					break
				}
			}
		}
		return keys
	}
}

// GEOADD key [NX|XX] [CH] longitude latitude member ... is ZADD with each
// point's score, as Redis runs it.
func geoaddCommand(s *Server, c *client, args [][]byte) {
	nx, xx, at := false, false, 2
options:
	for ; at < len(args); at++ {
		switch {
		case isOpt(args[at], "nx"):
			nx = true
		case isOpt(args[at], "xx"):
			xx = true
		case isOpt(args[at], "ch"):
		default:
			break options
		}
	}
	if (len(args)-at)%3 != 0 || nx && xx {
		s.w.Error(errSyntax)
		return
	}
	zargs := append([][]byte{[]byte("zadd")}, args[1:at]...)
	for i := at; i < len(args); i += 3 {
		lon, lat, ok := s.parseLonLat(args[i], args[i+1])
		if !ok {
			return
		}
		zargs = append(zargs, strconv.AppendUint(nil, geoScore(lon, lat), 10), args[i+2])
	}
	zaddGeneric(s, c, zargs, false)
}

// parseLonLat parses a longitude and a latitude within Redis's limits,
// writing Redis's error if not.
func (s *Server) parseLonLat(lonArg, latArg []byte) (lon, lat float64, ok bool) {
	lon, ok1 := parseScore(lonArg)
	lat, ok2 := parseScore(latArg)
	switch {
	case !ok1 || !ok2:
		s.w.Error(errNotFloat)
		return 0, 0, false
	case lon < geoLonMin || lon > geoLonMax || lat < geoLatMin || lat > geoLatMax:
		s.w.Error("ERR invalid longitude,latitude pair " + cFloat(lon) + "," + cFloat(lat)) // Redis's %f
		return 0, 0, false
	}
	return lon, lat, true
}

// cFloat formats f as C's "%f".
func cFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// parseUnit is the meters in a unit of GEODIST and the searches, writing
// Redis's error if it is none of theirs.
func (s *Server) parseUnit(b []byte) (float64, bool) {
	switch {
	case isOpt(b, "m"):
		return 1, true
	case isOpt(b, "km"):
		return 1000, true
	case isOpt(b, "ft"):
		return 0.3048, true
	case isOpt(b, "mi"):
		return 1609.34, true
	}
	s.w.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0, false
}

// parseDistance parses a distance (or a width or height) that may not be
// negative, writing Redis's errors.
func (s *Server) parseDistance(b []byte, notNumber, negative string) (float64, bool) {
	d, ok := parseScore(b)
	switch {
	case !ok:
		s.w.Error(notNumber)
		return 0, false
	case d < 0:
		s.w.Error(negative)
		return 0, false
	}
	return d, true
}

// replyDistance writes a distance, never negative, with four decimals, as
// Redis's fixedpoint_d2string rounds it (to even at a tie).
func (s *Server) replyDistance(d float64) {
	var buf [32]byte
	s.w.Bulk(strconv.AppendFloat(buf[:0], math.RoundToEven(d*10000)/10000, 'f', 4, 64))
}

// replyCoordinate writes a longitude or latitude as Redis's
// addReplyHumanLongDouble: "%.17Lf" without trailing zeros, a bulk
// string in RESP2 and a double in RESP3.
func (s *Server) replyCoordinate(f float64) {
	s.replyDoubleText([]byte(formatLongDouble(new(big.Float).SetFloat64(f))))
}

func geodistCommand(s *Server, c *client, args [][]byte) {
	toMeters := 1.0
	switch {
	case len(args) == 5:
		var ok bool
		if toMeters, ok = s.parseUnit(args[4]); !ok {
			return
		}
	case len(args) > 5:
		s.w.Error(errSyntax)
		return
	}
	z, _, ok := lookupAs[*zset](s, c.db, args[1])
	if !ok {
		return
	}
	if z == nil {
		s.w.Null()
		return
	}
	s1, ok1 := z.score(args[2])
	s2, ok2 := z.score(args[3])
	if !ok1 || !ok2 {
		s.w.Null()
		return
	}
	lon1, lat1 := geoPoint(s1)
	lon2, lat2 := geoPoint(s2)
	s.replyDistance(geoDistance(lon1, lat1, lon2, lat2) / toMeters)
}

func geohashCommand(s *Server, c *client, args [][]byte) {
	s.replyScores(c, args, func(score float64) { s.w.BulkString(geohashString(score)) }, s.w.Null)
}

func geoposCommand(s *Server, c *client, args [][]byte) {
	s.replyScores(c, args, func(score float64) {
		lon, lat := geoPoint(score)
		s.w.Array(2)
		s.replyCoordinate(lon)
		s.replyCoordinate(lat)
	}, s.w.NullArray)
}

// How a search is asked for: the variants of georadiusGeneric in Redis.
const (
	geoFromCoords  = 1 << iota // GEORADIUS: a point
	geoFromMember              // GEORADIUSBYMEMBER: a member's point
	geoNoStore                 // the _RO variants: no STORE or STOREDIST
	geoSearch                  // GEOSEARCH: FROMMEMBER/FROMLONLAT, BYRADIUS/BYBOX
	geoSearchStore             // GEOSEARCHSTORE: its destination first
)

func georadiusCommand(s *Server, c *client, args [][]byte) {
	geoSearchGeneric(s, c, args, 1, geoFromCoords)
}
func georadiusroCommand(s *Server, c *client, args [][]byte) {
	geoSearchGeneric(s, c, args, 1, geoFromCoords|geoNoStore)
}
func georadiusbymemberCommand(s *Server, c *client, args [][]byte) {
	geoSearchGeneric(s, c, args, 1, geoFromMember)
}
func georadiusbymemberroCommand(s *Server, c *client, args [][]byte) {
	geoSearchGeneric(s, c, args, 1, geoFromMember|geoNoStore)
}
func geosearchCommand(s *Server, c *client, args [][]byte) {
	geoSearchGeneric(s, c, args, 1, geoSearch)
}
func geosearchstoreCommand(s *Server, c *client, args [][]byte) {
	geoSearchGeneric(s, c, args, 2, geoSearch|geoSearchStore)
}

// maxKeptGeoFound bounds the points a search's buffer, kept for the next
// one (Server.geoFound), may hold.
const maxKeptGeoFound = 4096

// geoFound is a point a search found.
type geoFound struct {
	member   string
	score    float64
	dist     float64 // meters, then in the search's unit
	lon, lat float64
	seq      int // the order found
}

// geoQuery is a search's arguments.
type geoQuery struct {
	sh        geoShape
	store     []byte // the destination of STORE, STOREDIST or GEOSEARCHSTORE
	storeDist bool
	withDist  bool
	withHash  bool
	withCoord bool
	any       bool
	sort      int // 1 ascending, -1 descending, 0 in the order found
	count     int64
}

// geoSearchGeneric is GEORADIUS, GEORADIUSBYMEMBER, their _RO variants,
// GEOSEARCH and GEOSEARCHSTORE, with src the source key's place, as
// Redis's georadiusGeneric.
func geoSearchGeneric(s *Server, c *client, args [][]byte, src int, flags int) {
	z, _, ok := lookupAs[*zset](s, c.db, args[src])
	if !ok {
		return
	}
	q, ok := s.parseGeoQuery(z, args, flags)
	if !ok {
		return
	}
	if z == nil {
		if q.store != nil {
			s.deleteKey(c.db, q.store)
			s.w.Int(0)
		} else {
			s.w.Array(0)
		}
		return
	}
	if q.count != 0 && q.sort == 0 && !q.any {
		q.sort = 1 // the closest COUNT
	}
	limit := 0
	if q.any {
		limit = int(min(q.count, math.MaxInt32))
	}
	found := q.sh.search(z, limit, s.geoFound)
	all := found
	defer func() {
		clear(all) // the members
		if cap(all) <= maxKeptGeoFound {
			s.geoFound = all[:0]
		}
	}()
	if len(found) == 0 && q.store == nil {
		s.w.Array(0)
		return
	}
	byDist := func(a, b *geoFound) int {
		switch {
		case a.dist > b.dist:
			return q.sort
		case a.dist < b.dist:
			return -q.sort
		}
		return 0
	}
	switch {
	case q.sort == 0:
	case q.count != 0 && int64(len(found)) > q.count:
		// The first count, as Redis's pqsort picks them among equal
		// distances.
		partialSort(found, byDist, 0, int(q.count)-1)
	default:
		// Equal distances stay in the order found, as glibc's qsort (a
		// merge sort) keeps them for Redis.
		for i := range found {
			found[i].seq = i
		}
		slices.SortFunc(found, func(a, b geoFound) int {
			if c := byDist(&a, &b); c != 0 {
				return c
			}
			return a.seq - b.seq
		})
	}
	if q.count != 0 && int64(len(found)) > q.count {
		found = found[:q.count]
	}
	for i := range found {
		found[i].dist /= q.sh.toMeters
	}
	if q.store != nil {
		event := "georadiusstore"
		if flags&geoSearch != 0 {
			event = "geosearchstore"
		}
		s.storeGeoFound(c, &q, found, event)
		return
	}
	s.replyGeoFound(&q, found)
}

// parseGeoQuery reads a search's arguments from args, after the key, as
// geoSearchGeneric's flags say which it takes, checking them in the order
// Redis's georadiusGeneric does, with its errors (then ok is false). z is
// the source, for FROMMEMBER and GEORADIUSBYMEMBER's member: nil if
// absent, when the member is not looked for.
func (s *Server) parseGeoQuery(z *zset, args [][]byte, flags int) (q geoQuery, ok bool) {
	sh := &q.sh
	base := 2
	switch {
	case flags&geoFromCoords != 0:
		base = 6
		if sh.lon, sh.lat, ok = s.parseLonLat(args[2], args[3]); !ok {
			return q, false
		}
		if !s.parseRadius(sh, args[4:6]) {
			return q, false
		}
	case flags&geoFromMember != 0:
		base = 5
		if z != nil {
			if !s.memberPoint(z, args[2], sh) || !s.parseRadius(sh, args[3:5]) {
				return q, false
			}
		}
	case flags&geoSearchStore != 0:
		base = 3
		q.store = args[1]
	}
	var fromMember, fromLonLat, byRadius, byBox bool
	for i := base; i < len(args); i++ {
		a, left := args[i], len(args)-i-1
		switch {
		case isOpt(a, "withdist"):
			q.withDist = true
		case isOpt(a, "withhash"):
			q.withHash = true
		case isOpt(a, "withcoord"):
			q.withCoord = true
		case isOpt(a, "any"):
			q.any = true
		case isOpt(a, "asc"):
			q.sort = 1
		case isOpt(a, "desc"):
			q.sort = -1
		case isOpt(a, "count") && left >= 1:
			n, ok := parseInt(args[i+1])
			if !ok {
				s.w.Error(errNotInt)
				return q, false
			}
			if n <= 0 {
				s.w.Error("ERR COUNT must be > 0")
				return q, false
			}
			q.count = n
			i++
		case (isOpt(a, "store") || isOpt(a, "storedist")) && left >= 1 && flags&(geoNoStore|geoSearch) == 0:
			q.store, q.storeDist = args[i+1], isOpt(a, "storedist")
			i++
		case isOpt(a, "storedist") && flags&geoSearchStore != 0:
			q.storeDist = true
		case isOpt(a, "frommember") && left >= 1 && flags&geoSearch != 0 && !fromLonLat:
			if z != nil && !s.memberPoint(z, args[i+1], sh) {
				return q, false
			}
			fromMember = true
			i++
		case isOpt(a, "fromlonlat") && left >= 2 && flags&geoSearch != 0 && !fromMember:
			if sh.lon, sh.lat, ok = s.parseLonLat(args[i+1], args[i+2]); !ok {
				return q, false
			}
			fromLonLat = true
			i += 2
		case isOpt(a, "byradius") && left >= 2 && flags&geoSearch != 0 && !byBox:
			if !s.parseRadius(sh, args[i+1:i+3]) {
				return q, false
			}
			byRadius = true
			i += 2
		case isOpt(a, "bybox") && left >= 3 && flags&geoSearch != 0 && !byRadius:
			if !s.parseBox(sh, args[i+1:i+4]) {
				return q, false
			}
			byBox = true
			i += 3
		default:
			s.w.Error(errSyntax)
			return q, false
		}
	}
	switch {
	case q.store != nil && (q.withDist || q.withHash || q.withCoord):
		if flags&geoSearchStore != 0 {
			s.w.Error("ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		} else {
			s.w.Error("ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		}
	case flags&geoSearch != 0 && !fromMember && !fromLonLat:
		s.w.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(args[0]))
	case flags&geoSearch != 0 && !byRadius && !byBox:
		s.w.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(args[0]))
	case q.any && q.count == 0:
		s.w.Error("ERR the ANY argument requires COUNT argument")
	default:
		return q, true
	}
	return q, false
}

// memberPoint makes member's point in z the center of sh, writing
// Redis's error if z has no such member.
func (s *Server) memberPoint(z *zset, member []byte, sh *geoShape) bool {
	score, found := z.score(member)
	if !found {
		s.w.Error("ERR could not decode requested zset member")
		return false
	}
	sh.lon, sh.lat = geoPoint(score)
	return true
}

// storeGeoFound stores the points found as a sorted set under q.store, by
// geohash or (STOREDIST) by distance, and replies with their number.
func (s *Server) storeGeoFound(c *client, q *geoQuery, found []geoFound, event string) {
	out := newZset(&s.limits)
	for _, f := range found {
		score := f.score
		if q.storeDist {
			score = f.dist
		}
		out.insert([]byte(f.member), score)
	}
	s.storeZset(c, q.store, out, event, true)
	if len(found) > 1 {
		s.dirty(len(found) - 1) // Redis counts a change per member
	}
}

// replyGeoFound replies with the points found: each a member, or an array
// of the member and what the WITH options ask for.
func (s *Server) replyGeoFound(q *geoQuery, found []geoFound) {
	extra := 0
	for _, with := range []bool{q.withDist, q.withHash, q.withCoord} {
		if with {
			extra++
		}
	}
	s.w.Array(len(found))
	for _, f := range found {
		if extra > 0 {
			s.w.Array(extra + 1)
		}
		s.w.BulkString(f.member)
		if q.withDist {
			s.replyDistance(f.dist)
		}
		if q.withHash {
			s.w.Int(int64(f.score))
		}
		if q.withCoord {
			s.w.Array(2)
			s.replyCoordinate(f.lon)
			s.replyCoordinate(f.lat)
		}
	}
}

// parseRadius parses a radius and its unit into sh.
func (s *Server) parseRadius(sh *geoShape, args [][]byte) bool {
	r, ok := s.parseDistance(args[0], "ERR need numeric radius", "ERR radius cannot be negative")
	if !ok {
		return false
	}
	if sh.toMeters, ok = s.parseUnit(args[1]); !ok {
		return false
	}
	sh.radius = r
	return true
}

// parseBox parses a box's width, height and unit into sh, both numbers
// read before either's sign is checked, as Redis's extractBoxOrReply
// reads them.
func (s *Server) parseBox(sh *geoShape, args [][]byte) bool {
	w, okW := parseScore(args[0])
	h, okH := parseScore(args[1])
	var ok bool
	switch {
	case !okW:
		s.w.Error("ERR need numeric width")
	case !okH:
		s.w.Error("ERR need numeric height")
	case w < 0 || h < 0:
		s.w.Error("ERR height or width cannot be negative")
	default:
		sh.toMeters, ok = s.parseUnit(args[2])
	}
	sh.box, sh.width, sh.height = ok, w, h
	return ok
}

// search finds z's points in the shape, box after box in Redis's order
// and by score within a box, stopping at limit points if it is not 0. It
// appends them to buf[:0].
func (sh *geoShape) search(z *zset, limit int, buf []geoFound) []geoFound {
	found := buf[:0]
	cosLat := math.Cos(sh.lat * degRad)
	nb := sh.areas()
	last := 0
	for i, h := range nb {
		if h.zero() {
			continue
		}
		// Boxes of a huge radius may be alike: one is searched once, if
		// it follows another than the center, as Redis skips it.
		if last != 0 && h == nb[last] {
			continue
		}
		if limit != 0 && len(found) >= limit {
			break
		}
		lo, hi := h.scores()
		r := &scoreRange{min: lo, max: hi, maxex: true}
		for cur, _ := z.firstIn(r); cur.ok() && r.lteMax(cur.score(), cur.member()); cur.next() {
			lon, lat := geoPoint(cur.score())
			if d, in := sh.within(cosLat, lon, lat); in {
				found = append(found, geoFound{member: cur.member(), score: cur.score(), dist: d, lon: lon, lat: lat})
			}
			if limit != 0 && len(found) >= limit {
				break
			}
		}
		last = i
	}
	return found
}
