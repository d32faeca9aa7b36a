package kv

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// RDB is Redis's snapshot format, as Redis 7.0 writes it (version 10):
// dump.rdb, and DUMP's payloads, which are one value of it. This file
// reads it; rdb_write.go writes it.

// rdbVersion is the version written, and the newest read.
const rdbVersion = 10

// Value types.
const (
	rdbTypeString          = 0
	rdbTypeList            = 1
	rdbTypeSet             = 2
	rdbTypeZSet            = 3
	rdbTypeHash            = 4
	rdbTypeZSet2           = 5
	rdbTypeModule          = 6
	rdbTypeModule2         = 7
	rdbTypeHashZipmap      = 9
	rdbTypeListZiplist     = 10
	rdbTypeSetIntset       = 11
	rdbTypeZSetZiplist     = 12
	rdbTypeHashZiplist     = 13
	rdbTypeListQuicklist   = 14
	rdbTypeStreamListpacks = 15
	rdbTypeHashListpack    = 16
	rdbTypeZSetListpack    = 17
	rdbTypeListQuicklist2  = 18
	rdbTypeStreamListpack2 = 19
)

// Opcodes of a file, between its values.
const (
	rdbOpFunction2   = 245
	rdbOpFunction    = 246
	rdbOpModuleAux   = 247
	rdbOpIdle        = 248
	rdbOpFreq        = 249
	rdbOpAux         = 250
	rdbOpResizeDB    = 251
	rdbOpExpireMS    = 252
	rdbOpExpire      = 253
	rdbOpSelectDB    = 254
	rdbOpEOF         = 255
	rdbEncInt8       = 0
	rdbEncInt16      = 1
	rdbEncInt32      = 2
	rdbEncLZF        = 3
	quicklistPlain   = 1 // a list node holding one item as it is
	quicklistPacked  = 2 // a list node holding a listpack
	rdbMaxLZFRatio   = 100
	rdbReadBuffer    = 1 << 20
	rdbEmptyKeysLogs = 10
)

var (
	// errRDBTruncated is a value or file that ends before it should.
	errRDBTruncated = errors.New("unexpected end of the data")
	// errRDBEmptyKey is a collection with no elements, which a file may
	// hold (Redis skips them) but no key may be.
	errRDBEmptyKey = errors.New("empty key")
)

// rdbReader reads RDB data, a file's or a payload's, checksumming what
// it reads. left bounds what a length read may ask for, so that a
// corrupt length is an error, not an allocation of its size.
type rdbReader struct {
	r    io.Reader
	left int64
	crc  uint64
	ver  int
	// limits are the server's, which the values read take (nil: Redis's
	// defaults).
	limits *encodingLimits
}

func newRDBReader(r io.Reader, size int64) *rdbReader {
	return &rdbReader{r: bufio.NewReaderSize(r, min(rdbReadBuffer, int(max(size, 16)))), left: size, ver: rdbVersion, limits: &defaultLimits}
}

// read returns the next n bytes, new.
func (r *rdbReader) read(n uint64) ([]byte, error) {
	if n > uint64(r.left) {
		return nil, errRDBTruncated
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = errRDBTruncated
		}
		return nil, err
	}
	r.left -= int64(n)
	r.crc = rdbCRC(r.crc, b)
	return b, nil
}

func (r *rdbReader) byte() (byte, error) {
	b, err := r.read(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// length reads a length, or, if encoded, the kind of a string's special
// encoding.
func (r *rdbReader) length() (n uint64, encoded bool, err error) {
	c, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), false, nil
	case 1:
		b, err := r.byte()
		return uint64(c&0x3f)<<8 | uint64(b), false, err
	case 3:
		return uint64(c & 0x3f), true, nil
	}
	switch c {
	case 0x80:
		b, err := r.read(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(b)), false, nil
	case 0x81:
		b, err := r.read(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(b), false, nil
	}
	return 0, false, fmt.Errorf("unknown length encoding %d", c)
}

// count reads a plain length.
func (r *rdbReader) count() (uint64, error) {
	n, enc, err := r.length()
	if err == nil && enc {
		err = fmt.Errorf("a length is encoded as a string (%d)", n)
	}
	return n, err
}

// string reads a string: plain, an integer (returned as its decimal text)
// or LZF-compressed.
func (r *rdbReader) string() ([]byte, error) {
	n, enc, err := r.length()
	if err != nil || !enc {
		if err != nil {
			return nil, err
		}
		return r.read(n)
	}
	var v int64
	switch n {
	case rdbEncInt8:
		b, err := r.read(1)
		if err != nil {
			return nil, err
		}
		v = int64(int8(b[0]))
	case rdbEncInt16:
		b, err := r.read(2)
		if err != nil {
			return nil, err
		}
		v = int64(int16(binary.LittleEndian.Uint16(b)))
	case rdbEncInt32:
		b, err := r.read(4)
		if err != nil {
			return nil, err
		}
		v = int64(int32(binary.LittleEndian.Uint32(b)))
	case rdbEncLZF:
		clen, err := r.count()
		if err != nil {
			return nil, err
		}
		ulen, err := r.count()
		if err != nil {
			return nil, err
		}
		if ulen > clen*rdbMaxLZFRatio+64 {
			return nil, errLZF // more than LZF can expand to
		}
		c, err := r.read(clen)
		if err != nil {
			return nil, err
		}
		return lzfDecompress(c, int(ulen))
	default:
		return nil, fmt.Errorf("unknown string encoding %d", n)
	}
	return strconv.AppendInt(nil, v, 10), nil
}

// float reads a score as RDB_TYPE_ZSET writes it: a length byte and the
// text, or 253, 254, 255 for NaN, +inf and -inf.
func (r *rdbReader) float() (float64, error) {
	n, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := r.read(uint64(n))
	if err != nil {
		return 0, err
	}
	return parseRDBScore(b)
}

// parseRDBScore reads a score's text as strtod reads it.
func parseRDBScore(b []byte) (float64, error) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("bad score %q", b)
	}
	return f, nil
}

// binaryFloat reads a score as RDB_TYPE_ZSET_2 writes it: IEEE 754,
// little-endian.
func (r *rdbReader) binaryFloat() (float64, error) {
	b, err := r.read(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// isValueType reports whether t is a value type Redis 7.0 knows.
func isValueType(t byte) bool { return t <= 7 || t >= 9 && t <= 19 }

// value reads a value of type t into an entry: its str or obj set, the
// rest zero. The limits of the compact encodings are Redis 7.0's
// defaults, as the keyspace's: a value larger than its type's compact
// encoding takes is made the large one, as Redis converts it.
func (r *rdbReader) value(t byte) (entry, error) {
	switch t {
	case rdbTypeString:
		b, err := r.string()
		return entry{str: bytesString(b)}, err
	case rdbTypeList:
		return r.plainList()
	case rdbTypeListQuicklist, rdbTypeListQuicklist2:
		return r.quicklist(t)
	case rdbTypeListZiplist:
		b, err := r.string()
		if err != nil {
			return entry{}, err
		}
		items, err := zlItems(b)
		if err != nil {
			return entry{}, err
		}
		return listOf(items)
	case rdbTypeSet:
		return r.plainSet()
	case rdbTypeSetIntset:
		b, err := r.string()
		if err != nil {
			return entry{}, err
		}
		ints, err := intsetOf(b)
		if err != nil {
			return entry{}, err
		}
		o := &set{}
		if ints.len() > r.limits.intsetEntries {
			o.table = newDict[struct{}](ints.len())
		}
		for i := range ints.len() {
			v := ints.at(i)
			if o.table != nil {
				o.table.put(strconv.AppendInt(nil, v, 10))
			} else {
				o.ints.add(v)
			}
		}
		return entry{obj: o}, nil
	case rdbTypeZSet, rdbTypeZSet2:
		return r.plainZset(t)
	case rdbTypeZSetZiplist, rdbTypeZSetListpack:
		items, err := r.packed(t == rdbTypeZSetListpack)
		if err != nil {
			return entry{}, err
		}
		return zsetOf(items, r.limits)
	case rdbTypeHash:
		return r.plainHash()
	case rdbTypeHashZiplist, rdbTypeHashListpack, rdbTypeHashZipmap:
		var items [][]byte
		var err error
		if t == rdbTypeHashZipmap {
			var b []byte
			if b, err = r.string(); err == nil {
				items, err = zipmapPairs(b)
			}
		} else {
			items, err = r.packed(t == rdbTypeHashListpack)
		}
		if err != nil {
			return entry{}, err
		}
		return hashOf(items, r.limits)
	case rdbTypeModule, rdbTypeModule2:
		return entry{}, errors.New("a module's value: modules are not supported")
	case rdbTypeStreamListpacks, rdbTypeStreamListpack2:
		return entry{}, errors.New("a stream: streams are not supported")
	}
	return entry{}, fmt.Errorf("unknown value type %d", t)
}

// packed reads a string holding a listpack, or a ziplist, and returns its
// items.
func (r *rdbReader) packed(listpack bool) ([][]byte, error) {
	b, err := r.string()
	if err != nil {
		return nil, err
	}
	if listpack {
		return lpItems(b)
	}
	return zlItems(b)
}

func (r *rdbReader) plainList() (entry, error) {
	n, err := r.count()
	if err != nil {
		return entry{}, err
	}
	l := newList()
	for range n {
		v, err := r.string()
		if err != nil {
			return entry{}, err
		}
		l.pushBack(v)
	}
	if l.len() == 0 {
		return entry{}, errRDBEmptyKey
	}
	return entry{obj: l}, nil
}

// quicklist reads a list of nodes: each a listpack (RDB_TYPE_LIST_QUICKLIST_2,
// whose nodes may also be an item alone) or a ziplist.
func (r *rdbReader) quicklist(t byte) (entry, error) {
	n, err := r.count()
	if err != nil {
		return entry{}, err
	}
	l := newList()
	for range n {
		container := uint64(quicklistPacked)
		if t == rdbTypeListQuicklist2 {
			if container, err = r.count(); err != nil {
				return entry{}, err
			}
			if container != quicklistPacked && container != quicklistPlain {
				return entry{}, fmt.Errorf("unknown list node kind %d", container)
			}
		}
		b, err := r.string()
		if err != nil {
			return entry{}, err
		}
		if len(b) == 0 {
			return entry{}, errors.New("an empty list node")
		}
		if container == quicklistPlain {
			l.pushBack(b)
			continue
		}
		var items [][]byte
		if t == rdbTypeListQuicklist2 {
			items, err = lpItems(b)
		} else {
			items, err = zlItems(b)
		}
		if err != nil {
			return entry{}, err
		}
		for _, v := range items {
			l.pushBack(v)
		}
	}
	if l.len() == 0 {
		return entry{}, errRDBEmptyKey
	}
	return entry{obj: l}, nil
}

func listOf(items [][]byte) (entry, error) {
	if len(items) == 0 {
		return entry{}, errRDBEmptyKey
	}
	l := newList()
	for _, v := range items {
		l.pushBack(v)
	}
	return entry{obj: l}, nil
}

var errRDBDuplicate = errors.New("duplicate members")

func (r *rdbReader) plainSet() (entry, error) {
	n, err := r.count()
	if err != nil {
		return entry{}, err
	}
	if n == 0 {
		return entry{}, errRDBEmptyKey
	}
	o := &set{}
	if n > uint64(r.limits.intsetEntries) {
		// Not sized to n: the table grows with the members read, not
		// with what the count claims.
		o.table = newDict[struct{}](0)
	}
	for range n {
		m, err := r.string()
		if err != nil {
			return entry{}, err
		}
		if !o.add(m, r.limits.intsetEntries) {
			return entry{}, errRDBDuplicate
		}
	}
	return entry{obj: o}, nil
}

func (r *rdbReader) plainZset(t byte) (entry, error) {
	n, err := r.count()
	if err != nil {
		return entry{}, err
	}
	if n == 0 {
		return entry{}, errRDBEmptyKey
	}
	z := newZset(r.limits)
	z.big = true // -0 stays -0 until fitsListpack decides
	for range n {
		m, err := r.string()
		if err != nil {
			return entry{}, err
		}
		var score float64
		if t == rdbTypeZSet2 {
			score, err = r.binaryFloat()
		} else {
			score, err = r.float()
		}
		if err != nil {
			return entry{}, err
		}
		if math.IsNaN(score) {
			return entry{}, errors.New("a sorted set's score is NaN")
		}
		if !z.set(m, score) {
			return entry{}, errRDBDuplicate
		}
	}
	z.fitsListpack()
	return entry{obj: z}, nil
}

// zsetOf makes a sorted set of a listpack's or ziplist's members and
// scores, in turn. As Redis keeps it, it is compact unless it has more
// than lim's entries.
func zsetOf(items [][]byte, lim *encodingLimits) (entry, error) {
	if len(items)%2 != 0 {
		return entry{}, errors.New("a sorted set's member without its score")
	}
	if len(items) == 0 {
		return entry{}, errRDBEmptyKey
	}
	z := newZset(lim)
	for i := 0; i < len(items); i += 2 {
		score, err := parseRDBScore(items[i+1])
		if err == nil && math.IsNaN(score) {
			err = errors.New("a sorted set's score is NaN")
		}
		if err != nil {
			return entry{}, err
		}
		if !z.set(items[i], score) {
			return entry{}, errRDBDuplicate
		}
	}
	z.big = z.len() > z.lim.zsetEntries
	return entry{obj: z}, nil
}

func (r *rdbReader) plainHash() (entry, error) {
	n, err := r.count()
	if err != nil {
		return entry{}, err
	}
	if n == 0 {
		return entry{}, errRDBEmptyKey
	}
	h := newHash(r.limits)
	if n > uint64(r.limits.hashEntries) {
		h.convert()
	}
	for range n {
		f, err := r.string()
		if err != nil {
			return entry{}, err
		}
		v, err := r.string()
		if err != nil {
			return entry{}, err
		}
		if !h.set(f, v) {
			return entry{}, errRDBDuplicate
		}
	}
	return entry{obj: h}, nil
}

// hashOf makes a hash of a listpack's, ziplist's or zipmap's fields and
// values, in turn.
func hashOf(items [][]byte, lim *encodingLimits) (entry, error) {
	if len(items)%2 != 0 {
		return entry{}, errors.New("a hash's field without its value")
	}
	if len(items) == 0 {
		return entry{}, errRDBEmptyKey
	}
	h := newHash(lim)
	if len(items)/2 > h.lim.hashEntries {
		h.convert()
	}
	for i := 0; i < len(items); i += 2 {
		if !h.set(items[i], items[i+1]) {
			return entry{}, errRDBDuplicate
		}
	}
	return entry{obj: h}, nil
}
