package kv

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// checkDict compares d with the model m entry by entry.
func checkDict(t *testing.T, d *dict[int], m map[string]int) {
	t.Helper()
	if d.len() != len(m) {
		t.Fatalf("len %d, want %d", d.len(), len(m))
	}
	for k, want := range m {
		v := d.get([]byte(k))
		if v == nil || *v != want {
			t.Fatalf("get(%q) = %v, want %d", k, v, want)
		}
	}
	seen := make(map[string]bool, len(m))
	for i := range d.len() {
		k, v := d.at(i)
		if seen[k] {
			t.Fatalf("%q at two positions", k)
		}
		seen[k] = true
		if m[k] != *v {
			t.Fatalf("at(%d) = %q:%d, want %d", i, k, *v, m[k])
		}
	}
}

func TestDictMatchesMap(t *testing.T) {
	for _, keys := range []int{4, 20, 300, 5000} {
		t.Run(strconv.Itoa(keys), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(keys)))
			d := newDict[int](0)
			m := make(map[string]int)
			for op := range 20 * keys {
				k := "k" + strconv.Itoa(r.IntN(keys))
				switch r.IntN(10) {
				case 0, 1, 2, 3, 4:
					v, added := d.put([]byte(k))
					_, had := m[k]
					if added == had {
						t.Fatalf("op %d: put(%q) added=%v, key present before: %v", op, k, added, had)
					}
					*v = op
					m[k] = op
				case 5, 6, 7:
					_, had := m[k]
					if got := d.delete([]byte(k)); got != had {
						t.Fatalf("op %d: delete(%q) = %v, want %v", op, k, got, had)
					}
					delete(m, k)
				case 8:
					if d.len() > 0 {
						i := d.random()
						k, _ := d.at(i)
						d.deleteAt(i)
						delete(m, k)
					}
				case 9:
					if v := d.get([]byte(k)); (v != nil) != (m[k] != 0 || hasKey(m, k)) {
						t.Fatalf("op %d: get(%q) = %v", op, k, v)
					}
				}
				if op%(keys+1) == 0 {
					checkDict(t, d, m)
				}
			}
			checkDict(t, d, m)
			d.clear()
			checkDict(t, d, map[string]int{})
		})
	}
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// TestDictScanGuarantee checks SCAN's promise: an entry present from the
// start to the end of a walk is returned at least once, however the dict
// changes in between.
func TestDictScanGuarantee(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	d := newDict[int](0)
	for i := range 3000 {
		d.put([]byte("stay" + strconv.Itoa(i)))
	}
	seen := map[string]bool{}
	cursor := uint64(0)
	next := 0
	for {
		cursor = d.scan(cursor, 10, func(k string, _ *int) { seen[k] = true })
		// Churn between calls: add and delete keys other than the stayers.
		for range 20 {
			d.put([]byte("tmp" + strconv.Itoa(next)))
			next++
		}
		for range 15 {
			i := r.IntN(d.len())
			if k, _ := d.at(i); k[0] == 't' && k[1] == 'm' {
				d.deleteAt(i)
			}
		}
		if cursor == 0 {
			break
		}
	}
	for i := range 3000 {
		if k := "stay" + strconv.Itoa(i); !seen[k] {
			t.Fatalf("%s missed by the scan", k)
		}
	}
}

// TestDictScanEmpty: a walk of an empty dict ends at once whatever the
// cursor, as SCAN 1 of an empty database replies 0 in Redis, where the
// cursor was taken for a position in the dict.
func TestDictScanEmpty(t *testing.T) {
	d := newDict[int](0)
	d.put([]byte("gone"))
	d.deleteAt(0)
	for _, cursor := range []uint64{0, 1, 2, 1 << 63} {
		visited := 0
		if got := d.scan(cursor, 10, func(string, *int) { visited++ }); got != 0 || visited != 0 {
			t.Errorf("scan(%d) = %d, %d visited; want 0, 0", cursor, got, visited)
		}
	}
}

// TestDictOrder checks that a dict without deletions keeps insertion order,
// which the small hashes' replies rely on.
func TestDictOrder(t *testing.T) {
	d := newDict[struct{}](0)
	var want []string
	for i := range 100 {
		k := fmt.Sprint(i * 7919 % 1000)
		d.put([]byte(k))
		want = append(want, k)
	}
	var got []string
	for i := range d.len() {
		k, _ := d.at(i)
		got = append(got, k)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// TestDictShrinks deletes all but 10 of 100,000 entries, in random order:
// the index, rebuilt smaller from itself each time the dict is an eighth
// of it, finds every entry left, and the memory is given back.
func TestDictShrinks(t *testing.T) {
	d := newDict[int](0)
	m := map[string]int{}
	for i := range 100000 {
		d.put([]byte(strconv.Itoa(i)))
		m[strconv.Itoa(i)] = 0
	}
	r := rand.New(rand.NewPCG(1, 2))
	for left := 100000; left > 10; left-- {
		k, _ := d.at(r.IntN(d.len()))
		d.delete([]byte(k))
		delete(m, k)
		if left&(left-1) == 0 { // at each power of two
			checkDict(t, d, m)
		}
	}
	checkDict(t, d, m)
	if n := d.footprint(); n > 4096 {
		t.Errorf("10 entries left hold %d bytes of table and slots", n)
	}
}

// BenchmarkKeyspaceMemory reports the heap one string key costs: 16-byte
// keys holding 16-byte values, as the memory comparison with Redis loads.
func BenchmarkKeyspaceMemory(b *testing.B) {
	const keys = 1_000_000
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := &Server{}
		d := newDB(s, 0)
		key := make([]byte, 0, 16)
		for i := range keys {
			key = fmt.Appendf(key[:0], "key:%012d", i)
			d.keys.put(key)
			e := d.keys.get(key)
			e.str = string(key[:16]) + ""
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/keys, "B/key")
		runtime.KeepAlive(d)
	}
}

func BenchmarkDictGet(b *testing.B) {
	for _, n := range []int{4, 1000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			d := newDict[int](0)
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "key:%012d", i)
				d.put(keys[i])
			}
			b.ResetTimer()
			for i := range b.N {
				if d.get(keys[i%n]) == nil {
					b.Fatal("missing")
				}
			}
		})
	}
}

func BenchmarkDictPutDelete(b *testing.B) {
	d := newDict[int](0)
	keys := make([][]byte, 100000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%012d", i)
		d.put(keys[i])
	}
	b.ResetTimer()
	for i := range b.N {
		k := keys[i%len(keys)]
		d.delete(k)
		d.put(k)
	}
}
