package kv

import (
	"bytes"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strings"
)

func init() {
	register(
		cmd("sort", -2, "write denyoom movablekeys", 1, 1, 1, "generic", "1.0.0", "Sort the elements in a list, set or sorted set", sortCommand).
			withCategories("@write", "@set", "@sortedset", "@list", "@slow", "@dangerous").withKeys(sortKeys),
		cmd("sort_ro", -2, "readonly movablekeys", 1, 1, 1, "generic", "7.0.0", "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", sortroCommand).
			withCategories("@read", "@set", "@sortedset", "@list", "@slow", "@dangerous"),
		cmd("lcs", -3, "readonly", 1, 2, 1, "string", "7.0.0", "Find longest common substring", lcsCommand),
	)
}

// sortOptions are SORT's options, as Redis's sortCommandGeneric reads them.
type sortOptions struct {
	desc, alpha bool
	// dontsort is set by any BY pattern without '*' (BY nosort), even
	// when a later BY has one: the elements keep their order.
	dontsort bool
	start    int64 // LIMIT's offset and count; count -1 is all
	count    int64
	by       []byte // the last BY pattern, when hasBy
	hasBy    bool
	gets     [][]byte
	store    []byte // the destination, when hasStore
	hasStore bool
}

// parseSortOptions parses SORT's arguments from args[2] on, in order, as
// Redis does: the first bad one is the error (a LIMIT that is not two
// integers, a word it does not know, an option without its arguments,
// STORE in SORT_RO), and a later option overrides an earlier one. It
// returns the error's text, "" if none.
func parseSortOptions(args [][]byte, readonly bool) (sortOptions, string) {
	o := sortOptions{count: -1}
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		a := args[j]
		switch {
		case isOpt(a, "asc"):
			o.desc = false
		case isOpt(a, "desc"):
			o.desc = true
		case isOpt(a, "alpha"):
			o.alpha = true
		case isOpt(a, "limit") && left >= 2:
			start, ok := parseInt(args[j+1])
			if !ok {
				return o, errNotInt
			}
			count, ok := parseInt(args[j+2])
			if !ok {
				return o, errNotInt
			}
			o.start, o.count = start, count
			j += 2
		case !readonly && isOpt(a, "store") && left >= 1:
			o.store, o.hasStore = args[j+1], true
			j++
		case isOpt(a, "by") && left >= 1:
			o.by, o.hasBy = args[j+1], true
			if bytes.IndexByte(cstr(o.by), '*') < 0 {
				o.dontsort = true
			}
			j++
		case isOpt(a, "get") && left >= 1:
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			return o, errSyntax
		}
	}
	return o, ""
}

// sortKeys returns SORT's keys for COMMAND GETKEYS, as Redis's
// sortGetKeys finds them: the key sorted, and the last STORE's
// destination, skipping the arguments of LIMIT, GET and BY.
func sortKeys(args [][]byte) [][]byte {
	keys := [][]byte{args[1]}
	var store []byte
	for i := 2; i < len(args); i++ {
		switch {
		case isOpt(args[i], "limit"):
			i += 2
		case isOpt(args[i], "get"), isOpt(args[i], "by"):
			i++
		case isOpt(args[i], "store") && i+1 < len(args):
			store = args[i+1]
		}
	}
	if store != nil {
		keys = append(keys, store)
	}
	return keys
}

// sortPattern is a BY or GET pattern, read as Redis's lookupKeyByPattern
// reads it: "#" is the element itself; otherwise the first '*' is
// replaced by the element to name a key holding a string, or, with "->"
// and a field name somewhere after the '*', a hash whose field is the
// value. A pattern without '*' names nothing. Only the part before a NUL
// byte is searched for '#', '*' and "->", the rest being kept.
type sortPattern struct {
	self           bool
	none           bool
	prefix, suffix []byte
	field          []byte // when hasField
	hasField       bool
}

func parseSortPattern(p []byte) sortPattern {
	cp := cstr(p)
	if len(cp) == 1 && cp[0] == '#' {
		return sortPattern{self: true}
	}
	star := bytes.IndexByte(cp, '*')
	if star < 0 {
		return sortPattern{none: true}
	}
	sp := sortPattern{prefix: p[:star], suffix: p[star+1:]}
	if f := bytes.Index(cp[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(cp) {
		arrow := star + 1 + f
		sp.suffix, sp.field, sp.hasField = p[star+1:arrow], p[arrow+2:], true
	}
	return sp
}

// lookup returns the value p names for the element elem, if any.
func (p *sortPattern) lookup(s *Server, d *db, elem string) (string, bool) {
	if p.self {
		return elem, true
	}
	if p.none {
		return "", false
	}
	key := make([]byte, 0, len(p.prefix)+len(elem)+len(p.suffix))
	key = append(append(append(key, p.prefix...), elem...), p.suffix...)
	e := d.read(key)
	switch {
	case e == nil:
		return "", false
	case p.hasField:
		h, isHash := e.obj.(*hash)
		if !isHash {
			return "", false
		}
		v, ok := h.get(p.field)
		return string(v), ok
	case !e.isString():
		return "", false
	}
	return e.str, true
}

// sortItem is an element being sorted, with what it is sorted by: a
// score, or with ALPHA and BY the value the pattern names (none: nil).
type sortItem struct {
	elem  string
	score float64
	by    *string
}

// sortScore parses an element or a BY value as a score, as SORT does
// with strtod: the string up to a NUL byte, whole, not NaN, with no
// overflow or underflow.
func sortScore(v string) (float64, bool) {
	b := cstr(stringBytes(v))
	f, ok, outOfRange := strtod(b)
	if !ok || outOfRange {
		return 0, false
	}
	if f != 0 && math.Abs(f) < 0x1p-1022 && !exactSubnormal(b) {
		return 0, false // glibc's strtod sets ERANGE for an inexact subnormal
	}
	return f, true
}

// exactSubnormal reports whether the number b, which parses to a
// subnormal double, is that double exactly.
func exactSubnormal(b []byte) bool {
	var x big.Float
	x.SetPrec(64)
	if _, _, err := x.Parse(strings.TrimLeft(string(b), " \t\n\v\f\r"), 0); err != nil || x.Acc() != big.Exact {
		return false
	}
	_, acc := x.Float64()
	return acc == big.Exact
}

// sortCompare returns SORT's comparison, as Redis's sortCompare: by score,
// ties by the elements' bytes; with ALPHA by the elements, or by the BY
// values with the elements that have none first. Without STORE, ALPHA
// compares as strcoll does in the C locale (up to a NUL byte), with STORE
// all the bytes. DESC reverses it all.
func sortCompare(alpha, byPattern, store, desc bool) func(a, b *sortItem) int {
	text := strings.Compare
	if !store {
		text = func(a, b string) int { return bytes.Compare(cstr(stringBytes(a)), cstr(stringBytes(b))) }
	}
	var cmp func(a, b *sortItem) int
	switch {
	case !alpha:
		cmp = func(a, b *sortItem) int {
			switch {
			case a.score > b.score:
				return 1
			case a.score < b.score:
				return -1
			}
			return strings.Compare(a.elem, b.elem)
		}
	case byPattern:
		cmp = func(a, b *sortItem) int {
			switch {
			case a.by == nil && b.by == nil:
				return 0
			case a.by == nil:
				return -1
			case b.by == nil:
				return 1
			}
			return text(*a.by, *b.by)
		}
	default:
		cmp = func(a, b *sortItem) int { return text(a.elem, b.elem) }
	}
	if desc {
		return func(a, b *sortItem) int { return -cmp(a, b) }
	}
	return cmp
}

func sortCommand(s *Server, c *client, args [][]byte)   { sortGeneric(s, c, args, false) }
func sortroCommand(s *Server, c *client, args [][]byte) { sortGeneric(s, c, args, true) }

// sortSource is the value SORT sorts: a list, a set or a sorted set, or
// none for a key that is absent, which sorts as an empty list.
type sortSource struct {
	l  *list
	st *set
	z  *zset
}

func (src *sortSource) len() int {
	switch {
	case src.l != nil:
		return src.l.len()
	case src.st != nil:
		return src.st.len()
	case src.z != nil:
		return src.z.len()
	}
	return 0
}

// sortGeneric is SORT and SORT_RO, as Redis 7.0's sortCommandGeneric.
func sortGeneric(s *Server, c *client, args [][]byte, readonly bool) {
	o, msg := parseSortOptions(args, readonly)
	if msg != "" {
		s.w.Error(msg)
		return
	}
	d := c.db
	var src sortSource
	if e := d.read(args[1]); e != nil {
		switch v := e.obj.(type) {
		case *list:
			src.l = v
		case *set:
			src.st = v
		case *zset:
			src.z = v
			v.big = true // Redis converts a listpack to a skiplist to sort it
		default:
			s.w.Error(errWrongType)
			return
		}
	}
	alpha, byPattern, dontsort := o.alpha, o.hasBy, o.dontsort
	if dontsort && src.st != nil && o.hasStore {
		// What is stored is logged and replayed: a set is sorted so that
		// the replay stores the same list.
		dontsort, alpha, byPattern = false, true, false
	}
	vec, start, end := src.elements(o.start, o.count, dontsort, o.desc)
	if !dontsort {
		var by *sortPattern
		if byPattern {
			p := parseSortPattern(o.by)
			by = &p
		}
		if !s.weigh(d, vec, alpha, by) {
			s.w.Error("ERR One or more scores can't be converted into double")
			return
		}
		cmp := sortCompare(alpha, byPattern, o.hasStore, o.desc)
		if byPattern && (start != 0 || end != len(vec)-1) {
			partialSort(vec, cmp, start, end)
		} else {
			slices.SortStableFunc(vec, func(a, b sortItem) int { return cmp(&a, &b) })
		}
	}
	var out []sortItem
	if end >= start {
		out = vec[start : end+1]
	}
	gets := make([]sortPattern, len(o.gets))
	for i, p := range o.gets {
		gets[i] = parseSortPattern(p)
	}
	if o.hasStore {
		s.sortStore(d, o.store, out, gets)
		return
	}
	s.w.Array(len(out) * max(len(gets), 1))
	for i := range out {
		if len(gets) == 0 {
			s.w.BulkString(out[i].elem)
		}
		for g := range gets {
			if v, found := gets[g].lookup(s, d, out[i].elem); found {
				s.w.BulkString(v)
			} else {
				s.w.Null()
			}
		}
	}
}

// elements returns the elements to sort and the range of them that LIMIT
// offset count asks for, as Redis clamps it (empty if end < start). With
// dontsort, a list or a sorted set keeps its order, reversed by desc, and
// only that range is read; a set keeps the order it is walked in, and
// desc does nothing.
func (src *sortSource) elements(offset, count int64, dontsort, desc bool) (vec []sortItem, start, end int) {
	n := src.len()
	start = int(min(max(offset, 0), int64(n)))
	end = n - 1
	if count := int(min(max(count, -1), int64(n))); count >= 0 {
		end = start + count - 1
	}
	if start >= n {
		start, end = n-1, n-2
	}
	end = min(end, n-1)
	switch {
	case dontsort && src.st == nil:
		if end < start {
			return nil, start, end
		}
		vec = make([]sortItem, 0, end-start+1)
		from, to := start, end
		if desc {
			from, to = n-1-end, n-1-start
		}
		if src.l != nil {
			for it := range src.l.items(from, to) {
				vec = append(vec, sortItem{elem: string(it)})
			}
		} else {
			for cur := src.z.tree.cursor(from); len(vec) < to-from+1; cur.next() {
				vec = append(vec, sortItem{elem: cur.member()})
			}
		}
		if desc {
			slices.Reverse(vec)
		}
		return vec, 0, end - start
	case src.l != nil:
		vec = make([]sortItem, 0, n)
		for it := range src.l.items(0, n-1) {
			vec = append(vec, sortItem{elem: string(it)})
		}
	case src.st != nil:
		vec = make([]sortItem, n)
		for i := range vec {
			vec[i].elem = src.st.at(i)
		}
	case src.z != nil:
		// Redis walks its hash table, in an order of its own.
		vec = make([]sortItem, 0, n)
		for cur := src.z.tree.first(); cur.ok(); cur.next() {
			vec = append(vec, sortItem{elem: cur.member()})
		}
	}
	return vec, start, end
}

// weigh gives each element what it is sorted by: its score, or with a BY
// pattern the score of the value the pattern names (0 if none); with
// ALPHA and a pattern, that value. It looks up every element's, as
// Redis does, and reports whether every score was a number.
func (s *Server) weigh(d *db, vec []sortItem, alpha bool, by *sortPattern) bool {
	ok := true
	for i := range vec {
		it := &vec[i]
		v := it.elem
		if by != nil {
			var found bool
			if v, found = by.lookup(s, d, it.elem); !found {
				continue
			}
		}
		switch {
		case alpha && by != nil:
			it.by = &v
		case !alpha:
			f, isNum := sortScore(v)
			ok = ok && isNum
			it.score = f
		}
	}
	return ok
}

// sortStore makes the elements out, or the values the GET patterns name
// for them ("" for none), a list under key dst, replacing what it held,
// as Redis's setKey does, or deletes dst if there are none, as its
// dbDelete does (expired or not). It replies with the list's length.
func (s *Server) sortStore(d *db, dst []byte, out []sortItem, gets []sortPattern) {
	l := newList()
	for i := range out {
		if len(gets) == 0 {
			l.pushBack(stringBytes(out[i].elem))
		}
		for g := range gets {
			v, _ := gets[g].lookup(s, d, out[i].elem)
			l.pushBack(stringBytes(v))
		}
	}
	if l.len() == 0 {
		s.deleteKey(d, dst)
		s.w.Int(0)
		return
	}
	// A key that has expired is deleted as such first; a new key wakes
	// the clients blocked on it. The events go out before the reply, as
	// Redis's, for a RESP3 client subscribed to them.
	added := d.set(dst, l)
	s.modified(d, dst)
	s.dirty(l.len() - 1) // Redis counts an element a change
	s.notify(notifyList, "sortstore", dst, d.id)
	if added {
		s.signalReady(d, dst)
	}
	s.w.Int(int64(l.len()))
}

// partialSort puts v[start..end] in place as Redis's pqsort does: the
// quicksort of Bentley and McIlroy's "Engineering a Sort Function", which
// skips the parts of the array outside that range. Redis uses it for BY
// with a LIMIT and for a geo search that keeps fewer points than it
// finds; its order among equal elements (ALPHA's BY values, equal
// distances) is the one Redis replies, so it is followed step for step.
func partialSort[T any](v []T, cmp func(a, b *T) int, start, end int) {
	pqsort(v, 0, len(v), cmp, start, end)
}

// pqsort sorts the n elements from lo; a part is skipped when start and
// end are both before it or both past it (end may be start-1).
func pqsort[T any](v []T, lo, n int, cmp func(a, b *T) int, start, end int) {
	swap := func(i, j int) { v[i], v[j] = v[j], v[i] }
	med3 := func(a, b, c int) int {
		if cmp(&v[a], &v[b]) < 0 {
			switch {
			case cmp(&v[b], &v[c]) < 0:
				return b
			case cmp(&v[a], &v[c]) < 0:
				return c
			}
			return a
		}
		switch {
		case cmp(&v[b], &v[c]) > 0:
			return b
		case cmp(&v[a], &v[c]) < 0:
			return a
		}
		return c
	}
	outside := func(lo, n int) bool {
		return (start < lo && end < lo) || (start >= lo+n && end >= lo+n)
	}
	for {
		if n < 7 {
			for m := lo + 1; m < lo+n; m++ {
				for l := m; l > lo && cmp(&v[l-1], &v[l]) > 0; l-- {
					swap(l, l-1)
				}
			}
			return
		}
		m := lo + n/2
		if n > 7 {
			l, r := lo, lo+n-1
			if n > 40 {
				d := n / 8
				l = med3(l, l+d, l+2*d)
				m = med3(m-d, m, m+d)
				r = med3(r-2*d, r-d, r)
			}
			m = med3(l, m, r)
		}
		swap(lo, m)
		pa, pb := lo+1, lo+1
		pc, pd := lo+n-1, lo+n-1
		for {
			for pb <= pc {
				c := cmp(&v[pb], &v[lo])
				if c > 0 {
					break
				}
				if c == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				c := cmp(&v[pc], &v[lo])
				if c < 0 {
					break
				}
				if c == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		pn := lo + n
		r := min(pa-lo, pb-pa)
		for i := range r {
			swap(lo+i, pb-r+i)
		}
		r = min(pd-pc, pn-pd-1)
		for i := range r {
			swap(pb+i, pn-r+i)
		}
		if r = pb - pa; r > 1 && !outside(lo, r) {
			pqsort(v, lo, r, cmp, start, end)
		}
		if r = pd - pc; r <= 1 || outside(pn-r, r) {
			return
		}
		lo, n = pn-r, r
	}
}

// lcsMaxCells bounds LCS's table whatever proto-max-bulk-len allows: a
// table Redis could hardly allocate (16 GiB of its 4-byte cells; 512 MiB
// here, a bit a cell) is refused as Redis refuses one whose allocation
// fails.
const lcsMaxCells = 1 << 32

// lcsString returns key's string for LCS, "" if absent; ok false if it
// holds another type.
func (s *Server) lcsString(d *db, key []byte) (string, bool) {
	e := d.read(key)
	if e == nil {
		return "", true
	}
	return e.str, e.isString()
}

// lcsMatch is a range of LCS's IDX: a[a0..a1] is b[b0..b1].
type lcsMatch struct{ a0, a1, b0, b1 int }

// lcsCommand is LCS as Redis 7.0's lcsCommand: both keys looked up
// first (absent ones are ""), then the options, then the bound on the
// work: Redis refuses strings whose table of lengths, 4 bytes a cell,
// would pass proto-max-bulk-len, so does LCS (at the default 512 MiB,
// 2^27 cells, a third of a second's work; the table here takes 16 MiB).
// The reply is the common subsequence, its length with LEN, or with IDX
// the ranges of matches Redis's walk back through the table finds.
func lcsCommand(s *Server, c *client, args [][]byte) {
	a, okA := s.lcsString(c.db, args[1])
	b, okB := s.lcsString(c.db, args[2])
	if !okA || !okB {
		s.w.Error("ERR The specified keys must contain string values")
		return
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(args); j++ {
		switch opt := args[j]; {
		case isOpt(opt, "idx"):
			getIdx = true
		case isOpt(opt, "len"):
			getLen = true
		case isOpt(opt, "withmatchlen"):
			withMatchLen = true
		case isOpt(opt, "minmatchlen") && j+1 < len(args):
			n, ok := parseInt(args[j+1])
			if !ok {
				s.w.Error(errNotInt)
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			s.w.Error(errSyntax)
			return
		}
	}
	if getLen && getIdx {
		s.w.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	if uint64(len(a)) >= math.MaxUint32-1 || uint64(len(b)) >= math.MaxUint32-1 {
		s.w.Error("ERR String too long for LCS")
		return
	}
	cells := uint64(len(a)+1) * uint64(len(b)+1)
	hi, bytesNeeded := bits.Mul64(cells, 4)
	if hi == 0 && bytesNeeded > uint64(s.cfg.ProtoMaxBulkLen) {
		s.w.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	if hi != 0 || cells > lcsMaxCells {
		s.w.Error("ERR Insufficient memory, failed allocating transient memory for LCS")
		return
	}
	t := lcsTable(a, b, getIdx || !getLen)
	if getLen {
		s.w.Int(int64(t.length))
		return
	}
	common, matches := t.walk(a, b, minMatchLen)
	if !getIdx {
		s.w.Bulk(common)
		return
	}
	s.w.Map(2)
	s.w.BulkString("matches")
	s.w.Array(len(matches))
	for _, m := range matches {
		s.w.Array(2 + b2i(withMatchLen))
		s.w.Array(2)
		s.w.Int(int64(m.a0))
		s.w.Int(int64(m.a1))
		s.w.Array(2)
		s.w.Int(int64(m.b0))
		s.w.Int(int64(m.b1))
		if withMatchLen {
			s.w.Int(int64(m.a1 - m.a0 + 1))
		}
	}
	s.w.BulkString("len")
	s.w.Int(int64(t.length))
}

// lcsResult is the dynamic programming table of the longest common
// subsequence of a and b, L(i, j) for their first i and j bytes, reduced
// to what Redis's walk back through it reads: where a[i-1] != b[j-1], the
// walk goes up if L(i-1, j) > L(i, j-1), else left. up holds that bit for
// each cell (i-1)*len(b)+(j-1); the table's values are kept a row at a
// time.
type lcsResult struct {
	length int
	up     []uint64
}

// lcsTable fills the table of a and b; with walk, the bits of up too.
func lcsTable(a, b string, walk bool) lcsResult {
	var t lcsResult
	if walk {
		t.up = make([]uint64, (len(a)*len(b)+63)/64)
	}
	prev, cur := make([]uint32, len(b)+1), make([]uint32, len(b)+1)
	for i := 1; i <= len(a); i++ {
		ai, row := a[i-1], (i-1)*len(b)
		for j := 1; j <= len(b); j++ {
			switch {
			case ai == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] > cur[j-1]:
				cur[j] = prev[j]
				if walk {
					k := row + j - 1
					t.up[k/64] |= 1 << (k % 64)
				}
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	t.length = int(prev[len(b)])
	return t
}

// walk goes back through the table from its end, as Redis's lcsCommand
// does, and returns the common subsequence and, last first, the ranges
// of consecutive matches at least minLen long.
func (t *lcsResult) walk(a, b string, minLen int64) ([]byte, []lcsMatch) {
	common := make([]byte, t.length)
	var matches []lcsMatch
	k := t.length
	i, j := len(a), len(b)
	cur, open := lcsMatch{}, false
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			common[k-1] = a[i-1]
			if !open {
				cur, open = lcsMatch{a0: i - 1, a1: i - 1, b0: j - 1, b1: j - 1}, true
			} else {
				// Consecutive: a match after a step up or left has
				// emitted the range before it.
				cur.a0--
				cur.b0--
			}
			emit = cur.a0 == 0 || cur.b0 == 0
			k--
			i--
			j--
		} else {
			if c := (i-1)*len(b) + j - 1; t.up[c/64]&(1<<(c%64)) != 0 {
				i--
			} else {
				j--
			}
			emit = open
		}
		if emit {
			if int64(cur.a1-cur.a0+1) >= minLen {
				matches = append(matches, cur)
			}
			open = false
		}
	}
	return common, matches
}
