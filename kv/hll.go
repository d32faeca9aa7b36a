package kv

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// A HyperLogLog is a string value in Redis 7.0's representation, byte for
// byte, so that a value read from one server (GET, or the log) is usable
// by the other: a 16-byte header, "HYLL", the encoding (0 dense, 1
// sparse), three bytes unused and the cached cardinality, 8 bytes little
// endian whose top bit set marks it stale; then 16384 registers, each the
// longest run of zeros (plus one) seen in the hashes of the elements that
// fall to it.
//
// Dense registers are 6 bits each, packed from the least significant bit
// of each byte up: 12288 bytes. Sparse ones are runs: ZERO (00xxxxxx, 1
// to 64 registers at 0), XZERO (01xxxxxx yyyyyyyy, 1 to 16384 at 0) and
// VAL (1vvvvvxx, 1 to 4 registers at 1 to 32). A new HyperLogLog is
// sparse, and becomes dense for good when a register passes 32 or the
// value would pass hll-sparse-max-bytes.
//
// Values are strings: a change is made at the first register that
// changes (hllEdit), to a dense value in place, in its key's own bytes
// (strBuf, copied the first time only), to a sparse one in a copy stored
// as a new value, as it changes length. A value that is not Redis's (a
// corrupt one SET by a client) is read as Redis's code reads it, to the
// same replies and errors, but for one thing Redis leaves to chance: the
// byte an XZERO cut short at the end reads past the string is 0, as the
// NUL after a fresh Redis string is, where Redis, once it has split such
// an XZERO, keeps a byte of the split there.

const (
	hllP           = 14
	hllQ           = 64 - hllP
	hllRegisters   = 1 << hllP
	hllBits        = 6
	hllRegisterMax = 1<<hllBits - 1
	hllHdrSize     = 16
	hllDenseSize   = hllHdrSize + (hllRegisters*hllBits+7)/8
	hllDense       = 0
	hllSparse      = 1
	hllAlphaInf    = 0.721347520444481703680 // 0.5/ln(2)
	hllSeed        = 0xadc83b19

	hllSparseValMax     = 32
	hllSparseValMaxLen  = 4
	hllSparseZeroMaxLen = 64
	hllSparseXZeroBit   = 0x40
	hllSparseValBit     = 0x80
)

// Redis's errors for a string that is not a HyperLogLog and for one whose
// registers do not add up.
const (
	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errCorruptHLL = "INVALIDOBJ Corrupted HLL object detected"
)

// isHLL reports whether v can be read as a HyperLogLog, as Redis's
// isHLLObjectOrReply checks it: the header, a known encoding, and a
// dense one of its exact length.
func isHLL(v string) bool {
	return len(v) >= hllHdrSize && v[:4] == "HYLL" && v[4] <= hllSparse &&
		(v[4] != hllDense || len(v) == hllDenseSize)
}

// newHLL returns an empty HyperLogLog: sparse, one XZERO of every
// register, its cached cardinality 0 and valid.
func newHLL() []byte {
	b := make([]byte, hllHdrSize+2, hllHdrSize+16)
	copy(b, "HYLL")
	b[4] = hllSparse
	putZeros(b[hllHdrSize:], hllRegisters)
	return b
}

// hllCached returns b's cached cardinality and whether it is valid.
func hllCached(b []byte) (uint64, bool) {
	card := binary.LittleEndian.Uint64(b[8:hllHdrSize])
	return card, card>>63 == 0
}

// murmurHash64A is MurmurHash2's 64-bit version, as Redis's, which reads
// the 8-byte words little endian on every architecture.
func murmurHash64A(key []byte, seed uint64) uint64 {
	const m, r = 0xc6a4a7935bd1e995, 47
	h := seed ^ uint64(len(key))*m
	for ; len(key) >= 8; key = key[8:] {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen returns the register ele falls to and the run its hash
// counts: the zeros above the register's bits, plus one (1 to 51).
func hllPatLen(ele []byte) (index int, count uint8) {
	hash := murmurHash64A(ele, hllSeed)
	index = int(hash & (hllRegisters - 1))
	hash = hash>>hllP | 1<<hllQ
	return index, uint8(bits.TrailingZeros64(hash) + 1)
}

// denseGet returns register i of dense registers regs.
func denseGet(regs []byte, i int) uint8 {
	byt, fb := i*hllBits/8, uint(i*hllBits&7)
	v := uint(regs[byt]) >> fb
	if byt+1 < len(regs) {
		v |= uint(regs[byt+1]) << (8 - fb)
	}
	return uint8(v & hllRegisterMax)
}

// denseSet sets register i of dense registers regs to v, below 64.
func denseSet(regs []byte, i int, v uint8) {
	byt, fb := i*hllBits/8, uint(i*hllBits&7)
	regs[byt] = regs[byt]&^byte(hllRegisterMax<<fb) | byte(uint(v)<<fb)
	if byt+1 < len(regs) {
		regs[byt+1] = regs[byt+1]&^byte(hllRegisterMax>>(8-fb)) | byte(uint(v)>>(8-fb))
	}
}

// denseHisto counts dense registers regs by value, four to each three
// bytes.
func denseHisto(h *[64]int, regs []byte) {
	for p := 0; p+3 <= len(regs); p += 3 {
		b0, b1, b2 := regs[p], regs[p+1], regs[p+2]
		h[b0&63]++
		h[(b0>>6|b1<<2)&63]++
		h[(b1>>4|b2<<4)&63]++
		h[b2>>2]++
	}
}

// packDense writes regs, each below 64, as dense registers into out.
func packDense(out []byte, regs *[hllRegisters]uint8) {
	for i, p := 0, 0; i < hllRegisters; i, p = i+4, p+3 {
		r0, r1, r2, r3 := regs[i], regs[i+1], regs[i+2], regs[i+3]
		out[p] = r0 | r1<<6
		out[p+1] = r1>>2 | r2<<4
		out[p+2] = r2>>4 | r3<<2
	}
}

// sparseOp decodes the sparse opcode at sp[p]: the registers it covers,
// their value (0 for ZERO and XZERO) and its length in bytes. An XZERO
// whose second byte would be past the end reads it as 0, the NUL Redis
// reads there.
func sparseOp(sp []byte, p int) (span int, val uint8, size int) {
	x := sp[p]
	switch {
	case x&hllSparseValBit != 0:
		return int(x&3) + 1, x>>2&0x1f + 1, 1
	case x&hllSparseXZeroBit == 0:
		return int(x&0x3f) + 1, 0, 1
	}
	lo := 0
	if p+1 < len(sp) {
		lo = int(sp[p+1])
	}
	return (int(x&0x3f)<<8 | lo) + 1, 0, 2
}

// valOp is the VAL opcode of n registers at v.
func valOp(v uint8, n int) byte {
	return byte(int(v-1)<<2|(n-1)) | hllSparseValBit
}

// putZeros writes the opcode of n registers at 0 (1 to 16384), a ZERO up
// to 64 and an XZERO past, and returns its length.
func putZeros(b []byte, n int) int {
	if n > hllSparseZeroMaxLen {
		b[0] = byte((n-1)>>8) | hllSparseXZeroBit
		b[1] = byte(n - 1)
		return 2
	}
	b[0] = byte(n - 1)
	return 1
}

// sparseMax raises each of regs to the value of the sparse registers sp,
// and reports whether sp's runs cover exactly the 16384 registers. A run
// past the last register is corruption, as Redis has read it since the
// fix of CVE-2025-32023 (in 7.2.10 and later, and in Debian's 7.0.15,
// which the tests compare with); the 7.0.15 release stopped reading at a
// VAL past the last register and took what came before for the whole.
func sparseMax(regs *[hllRegisters]uint8, sp []byte) bool {
	i := 0
	for p := 0; p < len(sp); {
		span, val, size := sparseOp(sp, p)
		if i+span > hllRegisters {
			return false
		}
		for j := i; j < i+span && val != 0; j++ {
			regs[j] = max(regs[j], val)
		}
		i += span
		p += size
	}
	return i == hllRegisters
}

// hllMerge raises each of regs to b's registers, b a HyperLogLog; false
// if b is sparse and corrupt.
func hllMerge(regs *[hllRegisters]uint8, b []byte) bool {
	if b[4] == hllSparse {
		return sparseMax(regs, b[hllHdrSize:])
	}
	d := b[hllHdrSize:]
	for i := range regs {
		regs[i] = max(regs[i], denseGet(d, i))
	}
	return true
}

// hllCount estimates the cardinality of b, a HyperLogLog; ok false if b
// is sparse and corrupt.
func hllCount(b []byte) (card uint64, ok bool) {
	var h [64]int
	if b[4] == hllDense {
		denseHisto(&h, b[hllHdrSize:])
	} else {
		var regs [hllRegisters]uint8
		if !sparseMax(&regs, b[hllHdrSize:]) {
			return 0, false
		}
		for _, r := range regs {
			h[r]++
		}
	}
	return hllEstimate(&h), true
}

// hllEstimate estimates a cardinality from the histogram of register
// values, with Redis 7.0's hllCount: Otmar Ertl's estimator ("New
// cardinality estimation algorithms for HyperLogLog sketches",
// arXiv:1702.01284), in the same float64 operations in the same order,
// none fused, so that the estimate is Redis's to the unit.
func hllEstimate(h *[64]int) uint64 {
	m := float64(hllRegisters)
	z := m * hllTau((m-float64(h[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(h[j])
		z = float64(z * 0.5)
	}
	z += float64(m * hllSigma(float64(h[0])/m))
	alpha := float64(hllAlphaInf)
	return llround(alpha * m * m / z)
}

// hllSigma is Ertl's sigma.
func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y)
		y += y
		if prev == z {
			return z
		}
	}
}

// hllTau is Ertl's tau.
func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if prev == z {
			return z / 3
		}
	}
}

// llround rounds x to the nearest integer, halves away from zero, as C's
// llroundl on x86-64, where what a long long cannot hold (+Inf, from
// registers that leave nothing to divide by) is its lowest value: Redis
// then replies, and caches, 1<<63 read as a signed number.
func llround(x float64) uint64 {
	r := math.Round(x)
	if r >= -(1<<63) && r < 1<<63 {
		return uint64(int64(r))
	}
	return 1 << 63
}

// hllDecode lists sparse registers sp as Redis's PFDEBUG DECODE does.
func hllDecode(sp []byte) string {
	var b strings.Builder
	for p := 0; p < len(sp); {
		span, val, size := sparseOp(sp, p)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		switch {
		case val != 0:
			b.WriteString("v:")
			b.WriteString(strconv.Itoa(int(val)))
			b.WriteByte(',')
		case size == 2:
			b.WriteString("Z:")
		default:
			b.WriteString("z:")
		}
		b.WriteString(strconv.Itoa(span))
		p += size
	}
	return b.String()
}

// hllEdit is a HyperLogLog being changed: b is the value's bytes, read
// only until owned, when b is a copy of its own.
type hllEdit struct {
	b     []byte
	owned bool
	// e is the key's entry whose value b is, if any: a dense value (of
	// fixed length) is then changed in place, in the entry's own bytes
	// (entry.edit: copied the first time only), where a sparse one, which
	// changes length, is changed in a copy.
	e *entry
}

func (h *hllEdit) own() {
	switch {
	case h.owned:
	case h.e != nil && h.b[4] == hllDense:
		h.b = h.e.edit(len(h.b))
		h.owned = true
	default:
		h.b = append(make([]byte, 0, len(h.b)+16), h.b...)
		h.owned = true
	}
}

// value returns the bytes as a string, h done with: its allocation trimmed
// if sparse growth left much room in it.
func (h *hllEdit) value() string {
	if cap(h.b)-len(h.b) > 64+len(h.b)/8 {
		h.b = slices.Clone(h.b)
	}
	return bytesString(h.b)
}

// add adds ele, as Redis's hllAdd: 1 if a register changed, 0 if none
// did, -1 if the value is corrupt (sparse).
func (h *hllEdit) add(ele []byte, sparseMax int64) int {
	i, count := hllPatLen(ele)
	return h.set(i, count, sparseMax)
}

// set raises register i to count, if below: 1 if it did, 0 if not, -1 if
// the value is corrupt (sparse).
func (h *hllEdit) set(i int, count uint8, sparseMax int64) int {
	if h.b[4] == hllSparse {
		return h.sparseSet(i, count, sparseMax)
	}
	if denseGet(h.b[hllHdrSize:], i) >= count {
		return 0
	}
	h.own()
	denseSet(h.b[hllHdrSize:], i, count)
	return 1
}

// invalidate marks the cached cardinality stale, leaving its other bits
// as they are, as Redis does.
func (h *hllEdit) invalidate() {
	h.own()
	h.b[15] |= 0x80
}

// toDense makes a sparse value dense, as Redis's hllSparseToDense: the
// header is kept, cached cardinality and all. It reports false, changing
// nothing, if the value is corrupt.
func (h *hllEdit) toDense() bool {
	if h.b[4] == hllDense {
		return true
	}
	var regs [hllRegisters]uint8
	if !sparseMax(&regs, h.b[hllHdrSize:]) {
		return false
	}
	d := make([]byte, hllDenseSize)
	copy(d, h.b[:hllHdrSize])
	d[4] = hllDense
	packDense(d[hllHdrSize:], &regs)
	h.b, h.owned = d, true
	return true
}

// promote makes the value dense and sets register i to count, as Redis's
// hllSparseSet does when a sparse value cannot take it.
func (h *hllEdit) promote(i int, count uint8) int {
	if !h.toDense() {
		return -1
	}
	regs := h.b[hllHdrSize:]
	if denseGet(regs, i) < count {
		denseSet(regs, i, count)
	}
	return 1
}

// sparseSet is set for a sparse value, as Redis's hllSparseSet: the
// opcode covering register i is rewritten, split in up to three (the
// registers before, i, the registers after), then VALs of one value next
// to each other merged; the value becomes dense when count passes 32 or
// the split would take it past sparseMax bytes.
func (h *hllEdit) sparseSet(i int, count uint8, sparseMax int64) int {
	if count > hllSparseValMax {
		return h.promote(i, count)
	}
	b := h.b
	p, first, prev := hllHdrSize, 0, -1
	var span, size int
	var val uint8
	for p < len(b) {
		span, val, size = sparseOp(b, p)
		if i <= first+span-1 {
			break
		}
		prev = p
		p += size
		first += span
	}
	if span == 0 || p >= len(b) {
		return -1
	}
	isVal := val != 0
	if isVal && val >= count {
		return 0
	}
	if span == 1 && (isVal || size == 1) {
		// A VAL or a ZERO of this register alone.
		h.own()
		h.b[p] = valOp(count, 1)
		h.mergeVals(prev)
		return 1
	}
	var seq [5]byte
	n := 0
	// keep writes k registers of the opcode's run, as they were.
	keep := func(k int) {
		switch {
		case k == 0:
		case isVal:
			seq[n] = valOp(val, k)
			n++
		default:
			n += putZeros(seq[n:], k)
		}
	}
	keep(i - first)
	seq[n] = valOp(count, 1)
	n++
	keep(first + span - 1 - i)
	grow := n - size
	if grow > 0 && int64(len(b)+grow) > sparseMax {
		return h.promote(i, count)
	}
	h.own()
	// An XZERO cut short at the end is replaced as if whole: Redis's
	// string then ends a byte before the sequence does.
	newLen := len(h.b) + grow
	h.b = slices.Replace(h.b, p, min(p+size, len(h.b)), seq[:n]...)[:newLen]
	h.mergeVals(prev)
	return 1
}

// mergeVals merges the VALs of one value next to each other, up to 4
// registers, in the five opcodes from prev (the opcode before the one
// changed, or the first), and marks the cached cardinality stale, as the
// end of Redis's hllSparseSet.
func (h *hllEdit) mergeVals(prev int) {
	b := h.b
	p := max(prev, hllHdrSize)
	for scan := 5; p < len(b) && scan > 0; scan-- {
		switch x := b[p]; {
		case x&hllSparseValBit == 0 && x&hllSparseXZeroBit != 0:
			p += 2
			continue
		case x&hllSparseValBit == 0:
			p++
			continue
		}
		if p+1 < len(b) && b[p+1]&hllSparseValBit != 0 {
			n1, v1, _ := sparseOp(b, p)
			n2, v2, _ := sparseOp(b, p+1)
			if v1 == v2 && n1+n2 <= hllSparseValMaxLen {
				b[p+1] = valOp(v1, n1+n2)
				b = append(b[:p], b[p+1:]...)
				continue
			}
		}
		p++
	}
	b[15] |= 0x80
	h.b = b
}
