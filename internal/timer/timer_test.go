package timer

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// check verifies the heap property and that every slot knows its position.
func (q *Queue[T]) check(t *testing.T) {
	t.Helper()
	for i := range q.heap {
		if i > 0 {
			if p := (i - 1) / 4; q.heap[i].before(&q.heap[p]) {
				t.Fatalf("heap[%d] before its parent heap[%d]", i, p)
			}
		}
		if s := q.heap[i].slot; q.slots[s].pos != int32(i) || !q.slots[s].live {
			t.Fatalf("slot %d: pos %d live %v; want pos %d live", s, q.slots[s].pos, q.slots[s].live, i)
		}
	}
}

// drain pops every timer due at or before now, in order.
func drain[T any](q *Queue[T], now int64) []T {
	var out []T
	for {
		id, when, ok := q.Peek()
		if !ok || when > now {
			return out
		}
		v, _ := q.Remove(id)
		out = append(out, v)
	}
}

func TestOrderAndTies(t *testing.T) {
	var q Queue[string]
	q.Add(30, "c")
	q.Add(10, "a1")
	q.Add(20, "b")
	q.Add(10, "a2")
	q.Add(10, "a3")
	if got, want := drain(&q, 25), []string{"a1", "a2", "a3", "b"}; !slices.Equal(got, want) {
		t.Fatalf("drain(25) = %v; want %v", got, want)
	}
	if got := drain(&q, 29); len(got) != 0 {
		t.Fatalf("drain(29) = %v; want nothing: never early", got)
	}
	if got := drain(&q, 30); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("drain(30) = %v; want [c]", got)
	}
	if q.Len() != 0 {
		t.Fatalf("Len = %d; want 0", q.Len())
	}
}

func TestResetMovesBehindEqualDeadlines(t *testing.T) {
	var q Queue[string]
	a := q.Add(10, "a")
	q.Add(10, "b")
	if !q.Reset(a, 10) {
		t.Fatal("Reset(a) = false; want true")
	}
	if got := drain(&q, 10); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("drain = %v; want [b a]", got)
	}
}

func TestInvalidIDs(t *testing.T) {
	var q Queue[int]
	id := q.Add(5, 1)
	q.Remove(id)
	reused := q.Add(6, 2) // takes the same slot with a new generation
	if reused.slot() != id.slot() {
		t.Fatalf("slot not reused: %d vs %d", reused.slot(), id.slot())
	}
	for _, bad := range []ID{0, id, makeID(99, 0), ^ID(0)} {
		if _, ok := q.Remove(bad); ok {
			t.Errorf("Remove(%#x) = true; want false", bad)
		}
		if q.Reset(bad, 1) {
			t.Errorf("Reset(%#x) = true; want false", bad)
		}
		if _, ok := q.Get(bad); ok {
			t.Errorf("Get(%#x) = true; want false", bad)
		}
	}
	if v, ok := q.Get(reused); !ok || v != 2 {
		t.Fatalf("Get(reused) = %d, %v; want 2, true", v, ok)
	}
	if w, ok := q.When(reused); !ok || w != 6 {
		t.Fatalf("When(reused) = %d, %v; want 6, true", w, ok)
	}
}

// TestRandomAgainstModel runs random operations against a sorted-slice model.
func TestRandomAgainstModel(t *testing.T) {
	type timer struct {
		when int64
		seq  int
		val  int
		id   ID
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var q Queue[int]
	var model []timer
	seq := 0
	now := int64(0)
	for step := range 200_000 {
		switch op := rng.IntN(10); {
		case op < 4:
			seq++
			w := now + rng.Int64N(1000)
			model = append(model, timer{w, seq, seq, q.Add(w, seq)})
		case op < 6 && len(model) > 0:
			i := rng.IntN(len(model))
			if v, ok := q.Remove(model[i].id); !ok || v != model[i].val {
				t.Fatalf("step %d: Remove = %d, %v; want %d, true", step, v, ok, model[i].val)
			}
			model = slices.Delete(model, i, i+1)
		case op < 7 && len(model) > 0:
			i := rng.IntN(len(model))
			seq++
			w := now + rng.Int64N(1000)
			if !q.Reset(model[i].id, w) {
				t.Fatalf("step %d: Reset = false", step)
			}
			model[i].when, model[i].seq = w, seq
		default:
			now += rng.Int64N(50)
			slices.SortFunc(model, func(a, b timer) int {
				if a.when != b.when {
					return int(a.when - b.when)
				}
				return a.seq - b.seq
			})
			for len(model) > 0 && model[0].when <= now {
				id, when, ok := q.Peek()
				if !ok || id != model[0].id || when != model[0].when {
					t.Fatalf("step %d: Peek = %#x, %d, %v; want %#x, %d", step, id, when, ok, model[0].id, model[0].when)
				}
				q.Remove(id)
				model = model[1:]
			}
			if _, when, ok := q.Peek(); ok && when <= now {
				t.Fatalf("step %d: timer due at %d left after draining to %d", step, when, now)
			}
		}
		if q.Len() != len(model) {
			t.Fatalf("step %d: Len = %d; want %d", step, q.Len(), len(model))
		}
		if step%10_000 == 0 {
			q.check(t)
		}
	}
	q.check(t)
}

func TestMillionTimersBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a million timers")
	}
	const n = 1_000_000
	var q Queue[uint64]
	ids := make([]ID, n)
	heapInUse := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	var first uint64
	for round := range 4 {
		for i := range ids {
			ids[i] = q.Add(int64(i*7919%n), uint64(i))
		}
		for _, i := range rand.Perm(n) {
			if _, ok := q.Remove(ids[i]); !ok {
				t.Fatalf("round %d: Remove(%d) = false", round, i)
			}
		}
		if q.Len() != 0 {
			t.Fatalf("Len = %d; want 0", q.Len())
		}
		if round == 0 {
			first = heapInUse()
			continue
		}
		if got := heapInUse(); got > first+first/10+1<<20 {
			t.Fatalf("round %d: heap in use %d bytes; after round 0 it was %d: memory grows with churn", round, got, first)
		}
	}
	if got := len(q.slots); got != n {
		t.Fatalf("slots = %d; want %d: slots not reused", got, n)
	}
}

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	var q Queue[int]
	for i := range 1000 {
		q.Add(int64(i), i)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		id := q.Add(500, 1)
		q.Reset(id, 900)
		q.Remove(id)
	})
	if allocs != 0 {
		t.Fatalf("Add/Reset/Remove with a warm slab: %v allocs; want 0", allocs)
	}
}

// TestGenerationWrap: a slot whose 32-bit generation has counted 2^32
// timers is retired, where it was reused with its generation wrapped to 0,
// so that the ID of its first timer, long removed, named the new one:
// Remove of that stale ID cancelled it.
func TestGenerationWrap(t *testing.T) {
	var q Queue[string]
	first := q.Add(1, "first")
	q.Remove(first)
	// As if the slot had held 2^32-1 more timers since.
	q.slots[first.slot()].gen = math.MaxUint32
	last := q.Add(2, "last")
	if last.slot() != first.slot() || last.gen() != math.MaxUint32 {
		t.Fatalf("Add = slot %d gen %#x; want slot %d gen %#x", last.slot(), last.gen(), first.slot(), uint32(math.MaxUint32))
	}
	q.Remove(last)
	next := q.Add(3, "next")
	if next == first {
		t.Fatalf("Add after the generation wrapped = %#x, the ID of the slot's first timer", next)
	}
	if _, ok := q.Remove(first); ok {
		t.Fatalf("Remove(first) = true; want false: it was removed long ago")
	}
	if v, ok := q.Get(next); !ok || v != "next" {
		t.Fatalf("Get(next) = %q, %v; want next, true", v, ok)
	}
	// The retired slot stays out of use; the others are reused as before.
	q.Remove(next)
	if again := q.Add(4, "again"); again.slot() != next.slot() {
		t.Fatalf("Add after Remove took slot %d; want the freed slot %d", again.slot(), next.slot())
	}
	q.check(t)
}
