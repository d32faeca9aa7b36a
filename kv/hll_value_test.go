package kv

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// redisSparse is the value Redis 7.0 makes of PFADD h a b c d e f g.
var redisSparse = func() string {
	regs, err := hex.DecodeString("466d80560c80443c84388050b184498c80426d80425a")
	if err != nil {
		panic(err)
	}
	return hllHeader(hllSparse, 1<<63) + string(regs)
}()

// TestHllEstimate checks the estimator against Redis's answers for
// registers all at one value, up to those that leave nothing to divide
// by, which Redis answers with 1<<63.
func TestHllEstimate(t *testing.T) {
	for _, tc := range []struct {
		value uint8
		want  uint64
	}{
		{0, 0}, {1, 23637}, {20, 12392656037}, {50, 1 << 63}, {51, 1 << 63}, {63, 1 << 63},
	} {
		if got, ok := hllCount([]byte(hllDenseOf(tc.value))); got != tc.want || !ok {
			t.Errorf("hllCount of registers all %d = %d, %v; want %d", tc.value, got, ok, tc.want)
		}
	}
	if got, ok := hllCount([]byte(redisSparse)); got != 7 || !ok {
		t.Errorf("hllCount of Redis's value of 7 elements = %d, %v; want 7", got, ok)
	}
	if got, ok := hllCount(newHLL()); got != 0 || !ok {
		t.Errorf("hllCount of an empty value = %d, %v; want 0", got, ok)
	}
}

// TestDenseRegisters sets every register to random values and reads them
// back, as PFSELFTEST does, and checks the histogram and packing against
// them.
func TestDenseRegisters(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	regs := make([]byte, hllDenseSize-hllHdrSize)
	var want [hllRegisters]uint8
	for range 20 {
		for i := range want {
			want[i] = uint8(rng.IntN(64))
			denseSet(regs, i, want[i])
		}
		var h, wantH [64]int
		denseHisto(&h, regs)
		for i, v := range want {
			if got := denseGet(regs, i); got != v {
				t.Fatalf("register %d = %d; want %d", i, got, v)
			}
			wantH[v]++
		}
		if h != wantH {
			t.Fatalf("denseHisto = %v; want %v", h, wantH)
		}
		packed := make([]byte, len(regs))
		packDense(packed, &want)
		if !bytes.Equal(packed, regs) {
			t.Fatal("packDense differs from the registers set one by one")
		}
	}
}

// TestSparseSetModel raises random registers of a sparse value, one at a
// time, and checks each against an array of the registers: the value
// stays sparse and whole until it must be dense, at sizes given.
func TestSparseSetModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, limit := range []int64{0, 30, 300, 3000, 1 << 20} {
		h := hllEdit{b: newHLL(), owned: true}
		var model [hllRegisters]uint8
		for n := range 2000 {
			i, count := rng.IntN(hllRegisters), uint8(1+rng.IntN(4))
			switch {
			case n%2 == 0:
				i = rng.IntN(200) // runs of VALs next to each other
			case n%7 == 0:
				count = uint8(1 + rng.IntN(32))
			case n == 1500:
				count = hllSparseValMax + 1
			}
			wasSparse, size := h.b[4] == hllSparse, len(h.b)
			got := h.set(i, count, limit)
			want := 0
			if count > model[i] {
				model[i], want = count, 1
			}
			if got != want {
				t.Fatalf("limit %d, set #%d (%d, %d) = %d; want %d", limit, n, i, count, got, want)
			}
			if n < 300 || n%25 == 0 || wasSparse && h.b[4] == hllDense {
				checkRegisters(t, h.b, &model)
			}
			if wasSparse && h.b[4] == hllDense && count <= hllSparseValMax && int64(size)+3 <= limit {
				t.Fatalf("limit %d: a %d-byte value became dense on a set of %d", limit, size, count)
			}
			if h.b[4] == hllSparse && int64(len(h.b)) > max(limit, int64(size)) {
				t.Fatalf("limit %d: sparse value of %d bytes", limit, len(h.b))
			}
		}
		checkRegisters(t, h.b, &model)
	}
}

// checkRegisters fails unless b, a HyperLogLog, holds the registers regs.
func checkRegisters(t *testing.T, b []byte, regs *[hllRegisters]uint8) {
	t.Helper()
	var got [hllRegisters]uint8
	if !hllMerge(&got, b) {
		t.Fatalf("corrupt value %x", b)
	}
	if got != *regs {
		for i := range got {
			if got[i] != regs[i] {
				t.Fatalf("register %d = %d; want %d (value %x)", i, got[i], regs[i], b)
			}
		}
	}
}

// FuzzHLL reads any bytes as a HyperLogLog, as every command does, and
// raises a register of it: nothing panics or reads out of range, the
// bytes read are never written, and a value whose registers add up
// (sparse, or dense) changes as the register array does, stays whole,
// and estimates as its dense conversion. Seeded from the values of the
// tests that compare with Redis (hll_test.go).
func FuzzHLL(f *testing.F) {
	empty := hllHeader(hllSparse, 1<<63)
	for _, seed := range []string{
		string(newHLL()), redisSparse, hllDenseOf(1), hllDenseOf(51), hllDenseOf(3)[:hllDenseSize-1],
		empty, empty + "\x7f", empty + "\x40\xfe\x7f", empty + "\x7f\xff\x80", empty + "\x7f\xfe", empty + "\x7f\xff\x00",
		empty + "\x80\x7f\xfe", empty + "\x83\x83\x7f\xf6", empty + "\xfc\x7f\xfe", hllHeader(2, 0) + "\x7f\xff", "HYLL",
	} {
		f.Add([]byte(seed), uint16(100), uint8(3), uint16(3000))
		f.Add([]byte(seed), uint16(16383), uint8(40), uint16(20))
	}
	f.Fuzz(func(t *testing.T, data []byte, index uint16, count uint8, limit uint16) {
		if !isHLL(string(data)) {
			return
		}
		orig := bytes.Clone(data)
		i, c := int(index)%hllRegisters, 1+count%63
		var regs [hllRegisters]uint8
		whole := hllMerge(&regs, data)
		card, ok := hllCount(data)
		if ok != whole {
			t.Fatalf("hllCount ok %v; hllMerge %v", ok, whole)
		}
		hllCached(data)
		if data[4] == hllSparse {
			hllDecode(data[hllHdrSize:])
		}
		h := hllEdit{b: data}
		got := h.set(i, c, int64(limit))
		if !bytes.Equal(data, orig) {
			t.Fatal("set wrote into the bytes it read")
		}
		if !whole || endsInShortXZero(data) {
			// A split XZERO cut short is the one place Redis's value and
			// this one part (see hll.go).
			d := hllEdit{b: data}
			d.toDense()
			return
		}
		want := 0
		if c > regs[i] {
			regs[i], want = c, 1
		}
		if got != want {
			t.Fatalf("set(%d, %d) = %d; want %d", i, c, got, want)
		}
		checkRegisters(t, h.b, &regs)
		d := hllEdit{b: data}
		if !d.toDense() {
			t.Fatal("a whole value does not convert")
		}
		if dc, _ := hllCount(d.b); dc != card {
			t.Fatalf("estimate %d; %d once dense", card, dc)
		}
	})
}
