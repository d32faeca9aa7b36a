package kv

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"unsafe"
)

func init() {
	register(
		cmd("pfadd", -2, "write denyoom fast", 1, 1, 1, "hyperloglog", "2.8.9", "Adds the specified elements to the specified HyperLogLog.", pfaddCommand),
		cmd("pfcount", -2, "readonly may_replicate", 1, -1, 1, "hyperloglog", "2.8.9", "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", pfcountCommand),
		cmd("pfmerge", -2, "write denyoom", 1, -1, 1, "hyperloglog", "2.8.9", "Merge N different HyperLogLogs into a single one.", pfmergeCommand),
		cmd("pfdebug", 3, "write denyoom admin", 2, 2, 1, "hyperloglog", "2.8.9", "Internal commands for debugging HyperLogLog values", pfdebugCommand),
		cmd("pfselftest", 1, "admin", 0, 0, 0, "hyperloglog", "2.8.9", "An internal command for testing HyperLogLog values", pfselftestCommand),
	)
	// The size past which a sparse HyperLogLog becomes dense, its header
	// included.
	configParams = append(configParams, configParam{"hll-sparse-max-bytes",
		func(s *Server) string { return strconv.FormatInt(s.hllSparseMax, 10) },
		setMemory(0, func(s *Server, n int64) { s.hllSparseMax = n })})
}

// The HyperLogLog commands read and write string values in Redis's
// representation (hll.go), with Redis 7.0's replies, errors, events and
// change counts. A command that reads one as a HyperLogLog leaves it a
// raw string of its own, as Redis's dbUnshareStringValue does.

// checkHLL reports whether e, a key's entry, holds a HyperLogLog, and
// writes WRONGTYPE's error if not (Redis's own wording for a string that
// is not one).
func (s *Server) checkHLL(e *entry) bool {
	switch {
	case !e.isString():
		s.w.Error(errWrongType)
		return false
	case !isHLL(e.str):
		s.w.Error(errNotHLL)
		return false
	}
	return true
}

// storeHLL makes h's bytes the value of key, whose entry is e (nil to
// create it): they are already if h changed them in place.
func storeHLL(d *db, key []byte, e *entry, h *hllEdit) {
	if e == nil {
		e = d.setString(key, "", false)
	}
	if sb, ok := e.owns(); ok && len(h.b) == len(sb.b) && unsafe.SliceData(h.b) == unsafe.SliceData(sb.b) {
		return
	}
	e.setStr(h.value())
}

func pfaddCommand(s *Server, c *client, args [][]byte) {
	key := args[1]
	e := c.db.lookup(key)
	var h hllEdit
	updated := 0
	if e == nil {
		h = hllEdit{b: newHLL(), owned: true}
		updated++
	} else {
		if !s.checkHLL(e) {
			return
		}
		makeRaw(e)
		h.b, h.e = stringBytes(e.str), e
	}
	for _, ele := range args[2:] {
		switch h.add(ele, s.hllSparseMax) {
		case 1:
			updated++
		case -1:
			// The registers set before stay set, unsignalled and unlogged,
			// as in Redis. (A new value is never corrupt: e is not nil.)
			if h.owned {
				storeHLL(c.db, key, e, &h)
			}
			s.w.Error(errCorruptHLL)
			return
		}
	}
	if updated > 0 {
		h.invalidate()
		storeHLL(c.db, key, e, &h)
		s.modified(c.db, key)
		s.dirty(updated - 1) // Redis counts a change per register raised
		s.notify(notifyString, "pfadd", key, c.db.id)
	}
	s.w.Int(boolInt(updated > 0))
}

func pfcountCommand(s *Server, c *client, args [][]byte) {
	if len(args) > 2 {
		// The union's estimate, from registers merged apart; nothing
		// is cached.
		var regs [hllRegisters]uint8
		if !s.mergeHLLs(c, args[1:], &regs, nil) {
			return
		}
		var h [64]int
		for _, r := range regs {
			h[r]++
		}
		s.w.Int(int64(hllEstimate(&h)))
		return
	}
	key := args[1]
	e := c.db.read(key)
	if e == nil {
		s.w.Int(0)
		return
	}
	if !s.checkHLL(e) {
		return
	}
	makeRaw(e)
	b := stringBytes(e.str)
	card, valid := hllCached(b)
	if !valid {
		var ok bool
		if card, ok = hllCount(b); !ok {
			s.w.Error(errCorruptHLL)
			return
		}
		// The cache is written as Redis writes it: a change to the key
		// (WATCH, the log: PFCOUNT is logged), with no event.
		binary.LittleEndian.PutUint64(e.edit(len(b))[8:hllHdrSize], card) // in place
		s.modified(c.db, key)
	}
	s.w.Int(int64(card))
}

// mergeHLLs raises regs to the registers of each of keys that exists,
// read as Redis's lookupKeyRead (a keyspace hit or miss each), and
// reports whether all were HyperLogLogs, writing the error if not; dense,
// if not nil, is set when one is dense.
func (s *Server) mergeHLLs(c *client, keys [][]byte, regs *[hllRegisters]uint8, dense *bool) bool {
	for _, key := range keys {
		e := c.db.read(key)
		if e == nil {
			continue
		}
		if !s.checkHLL(e) {
			return false
		}
		b := stringBytes(e.str)
		if dense != nil && b[4] == hllDense {
			*dense = true
		}
		if !hllMerge(regs, b) {
			s.w.Error(errCorruptHLL)
			return false
		}
	}
	return true
}

func pfmergeCommand(s *Server, c *client, args [][]byte) {
	// The destination is a source too.
	var regs [hllRegisters]uint8
	dense := false
	if !s.mergeHLLs(c, args[1:], &regs, &dense) {
		return
	}
	dst := args[1]
	e := c.db.lookup(dst)
	var h hllEdit
	if e == nil {
		h = hllEdit{b: newHLL(), owned: true}
	} else {
		makeRaw(e)
		h.b, h.e = stringBytes(e.str), e
	}
	// A destination read above converts (merged, it is not corrupt).
	if dense && !h.toDense() {
		s.w.Error(errCorruptHLL)
		return
	}
	for i, v := range regs {
		if v != 0 {
			h.set(i, v, s.hllSparseMax)
		}
	}
	h.invalidate()
	storeHLL(c.db, dst, e, &h)
	s.modified(c.db, dst)
	s.notify(notifyString, "pfadd", dst, c.db.id) // Redis's event for a merge
	s.w.OK()
}

func pfdebugCommand(s *Server, c *client, args [][]byte) {
	sub, key := args[1], args[2]
	e := c.db.lookup(key)
	if e == nil {
		s.w.Error("ERR The specified key does not exist")
		return
	}
	if !s.checkHLL(e) {
		return
	}
	makeRaw(e)
	h := hllEdit{b: stringBytes(e.str)}
	// toDense converts a sparse value, as GETREG and TODENSE do: a change
	// logged (Redis counts it to propagate the command) but not signalled
	// to WATCH.
	toDense := func() (converted, ok bool) {
		if h.b[4] == hllDense {
			return false, true
		}
		if !h.toDense() {
			s.w.Error(errCorruptHLL)
			return false, false
		}
		e.setStr(bytesString(h.b))
		s.dirty(1)
		s.rewriteTouch(c.db, key)
		return true, true
	}
	switch {
	case isOpt(sub, "getreg"):
		if _, ok := toDense(); !ok {
			return
		}
		s.w.Array(hllRegisters)
		for i := range hllRegisters {
			s.w.Int(int64(denseGet(h.b[hllHdrSize:], i)))
		}
	case isOpt(sub, "decode"):
		if h.b[4] != hllSparse {
			s.w.Error("ERR HLL encoding is not sparse")
			return
		}
		s.w.BulkString(hllDecode(h.b[hllHdrSize:]))
	case isOpt(sub, "encoding"):
		if h.b[4] == hllDense {
			s.w.Simple("dense")
		} else {
			s.w.Simple("sparse")
		}
	case isOpt(sub, "todense"):
		if converted, ok := toDense(); ok {
			s.w.Int(boolInt(converted))
		}
	default:
		s.w.Error("ERR Unknown PFDEBUG subcommand '" + string(cstr(sub)) + "'")
	}
}

func pfselftestCommand(s *Server, c *client, args [][]byte) {
	if msg := hllSelfTest(s.hllSparseMax); msg != "" {
		s.w.Error(msg)
		return
	}
	s.w.OK()
}

// hllSelfTest is Redis's PFSELFTEST: it sets and reads back random dense
// registers 1000 times, then adds 10 million distinct elements to a dense
// and a sparse HyperLogLog, checking at each power of ten that the sparse
// one is still sparse while small, that both estimate the same, and that
// the estimate is within 6 standard errors. It returns Redis's
// TESTFAILED error, or "" if all held.
func hllSelfTest(sparseMax int64) string {
	dense := make([]byte, hllDenseSize) // its encoding byte 0: dense
	regs := dense[hllHdrSize:]
	var want [hllRegisters]uint8
	for range 1000 {
		for i := range want {
			want[i] = uint8(rand.Uint32() & hllRegisterMax)
			denseSet(regs, i, want[i])
		}
		for i := range want {
			if v := denseGet(regs, i); v != want[i] {
				return fmt.Sprintf("TESTFAILED Register %d should be %d but is %d", i, want[i], v)
			}
		}
	}
	clear(regs)
	sparse := hllEdit{b: newHLL(), owned: true}
	relerr := 1.04 / math.Sqrt(hllRegisters)
	seed := rand.Uint64()
	var ele [8]byte
	for j, checkpoint := int64(1), int64(1); j <= 10_000_000; j++ {
		binary.LittleEndian.PutUint64(ele[:], uint64(j)^seed)
		i, count := hllPatLen(ele[:])
		if denseGet(regs, i) < count {
			denseSet(regs, i, count)
		}
		sparse.set(i, count, sparseMax)
		if j != checkpoint {
			continue
		}
		if j < sparseMax/2 && sparse.b[4] != hllSparse {
			return "TESTFAILED sparse encoding not used"
		}
		card, _ := hllCount(dense)
		if other, _ := hllCount(sparse.b); other != card {
			return "TESTFAILED dense/sparse disagree"
		}
		maxErr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxErr = 1 // collisions make a larger error likely enough here
		}
		if absErr := checkpoint - int64(card); max(absErr, -absErr) > maxErr {
			return fmt.Sprintf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, max(absErr, -absErr))
		}
		checkpoint *= 10
	}
	return ""
}
