package kv

// Tests of the packed list's nodes: the bounds of their buffers, and
// patterns of use that could fragment a list or keep memory.

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// boundarySizes are item sizes at Go size-class boundaries and node limits.
var boundarySizes = []int{0, 1, 2, 3, 5, 7, 8, 9, 10, 11, 15, 16, 17, 21, 22, 23, 31, 32, 33, 42, 43, 47, 48, 63, 64,
	65, 85, 86, 127, 128, 129, 170, 171, 255, 256, 257, 341, 342, 511, 512, 513, 1023, 1024, 1025, 2047, 2048, 2049,
	2730, 2731, 4095, 4096, 4097, 5461, 5462, 6143, 6144, 8191, listNodeBytes, listNodeBytes + 1}

// modelPush pushes v at an end of l and of model.
func modelPush(l *list, model []string, v string, left bool) []string {
	l.push([]byte(v), left)
	if left {
		return slices.Insert(model, 0, v)
	}
	return append(model, v)
}

// TestListNodeBoundaries pushes items of sizes at size-class
// boundaries at one end, alternating ends, and around 1023 empty items,
// checking the list's shape and items after each change.
func TestListNodeBoundaries(t *testing.T) {
	step := 0
	check := func(l *list, model []string) {
		t.Helper()
		checkListShape(t, step, l, len(model))
		for k := range l.count {
			nd := l.node(k)
			if nd.packed() && (len(nd.data) > 65535 || nd.lo < 0 || nd.hi > len(nd.offs)-1) {
				t.Fatalf("step %d: node %d: %d bytes, lo %d hi %d of %d offsets", step, k, len(nd.data), nd.lo, nd.hi, len(nd.offs))
			}
		}
		step++
	}
	for _, s := range boundarySizes {
		for pattern := range 4 {
			l, model := newList(), []string(nil)
			if pattern == 3 {
				for range listNodeItems - 1 {
					model = modelPush(l, model, "", false)
				}
			}
			n := 40
			if s <= 64 {
				n = 1100
			}
			for i := range n {
				v := strings.Repeat(string(rune('a'+i%26)), s)
				var left bool
				switch pattern {
				case 0:
					left = false
				case 1:
					left = true
				default:
					left = i%2 == 0
				}
				model = modelPush(l, model, v, left)
				check(l, model)
			}
			checkListItems(t, step, l, model)
			// Drain from alternate ends, then from one.
			for len(model) > 0 {
				left := len(model)%3 != 0
				var want string
				if left {
					want, model = model[0], model[1:]
				} else {
					want, model = model[len(model)-1], model[:len(model)-1]
				}
				if got := l.pop(left); string(got) != want {
					t.Fatalf("size %d pattern %d: pop = %.20q; want %.20q", s, pattern, got, want)
				}
				check(l, model)
			}
		}
	}
}

// TestListInsertBeforeBigItem inserts short items before an item
// longer than a node again and again (LINSERT k BEFORE <big> x): each
// should join the packed node before it, not make a node of its own.
func TestListInsertBeforeBigItem(t *testing.T) {
	big := strings.Repeat("B", listNodeBytes+1)
	l := newList()
	l.pushBack([]byte("a"))
	l.pushBack([]byte(big))
	before := liveHeap()
	const inserts = 2000
	for j := range inserts {
		l.insert(l.index([]byte(big)), []byte("x"+strconv.Itoa(j)))
	}
	used := liveHeap() - before
	runtime.KeepAlive(l)
	checkListShape(t, 0, l, inserts+2)
	if l.count > 4 {
		t.Errorf("%d short items inserted before a long one: %d nodes, %d bytes of heap (%d per item); want at most 4 nodes",
			inserts, l.count, used, used/inserts)
	}
}

// allocsPer returns the allocations and bytes allocated per run of f.
func allocsPer(f func()) (float64, uint64) {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	allocs := testing.AllocsPerRun(200, f)
	runtime.ReadMemStats(&m1)
	return allocs, (m1.TotalAlloc - m0.TotalAlloc) / 201
}

// TestListSetLongItemAndBack sets random items of a list of short ones
// to an item longer than a node and back (LSET i <big>; LSET i <old>):
// the list must end about as it began, not in pieces.
func TestListSetLongItemAndBack(t *testing.T) {
	big := []byte(strings.Repeat("B", listNodeBytes+1))
	const n = 10 * listNodeItems
	l := newList()
	for j := range n {
		l.pushBack([]byte("i" + strconv.Itoa(j%10)))
	}
	before := liveHeap()
	nodes := l.count
	for c := range 1000 {
		i := (c * 7919) % n
		l.set(i, big)
		l.set(i, []byte("i"+strconv.Itoa(i%10)))
	}
	grown := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(l)
	checkListShape(t, 0, l, n)
	if l.count > 2*nodes+2 {
		t.Errorf("%d 2-byte items, %d nodes at first: %d nodes after 1000 LSETs to a long item and back, the heap %d bytes larger; want at most %d",
			n, nodes, l.count, grown, 2*nodes+2)
	}
}

// TestListCappedHead is the capped list (LPUSH k v; LTRIM k 0 99)
// with items of 1000 bytes: the LTRIM at the tail must not compact the
// head node the LPUSH just started, which would then regrow step by step.
func TestListCappedHead(t *testing.T) {
	l := newList()
	v := []byte(strings.Repeat("v", 1000))
	for range 100 {
		l.pushBack(v)
	}
	thrown, started := 0, 0
	for range 80 {
		count := l.count
		l.pushFront(v)
		grown := l.count > count
		dataCap := len(l.node(0).data)
		l.trim(0, 1)
		if grown {
			started++
			if len(l.node(0).data) < dataCap {
				thrown++
			}
		}
	}
	_, bytesPer := allocsPer(func() {
		l.pushFront(v)
		l.trim(0, 1)
	})
	if thrown > 0 {
		t.Errorf("LPUSH then LTRIM 0 99 of 1000-byte items: %d of the %d head nodes started were compacted by the LTRIM right after; %d bytes allocated per LPUSH",
			thrown, started, bytesPer)
	}
}
