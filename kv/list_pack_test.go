package kv

// Tests of the packed list at its limits: items that are slices of the
// nodes' buffers, and what the nodes hold after churn.

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// limitItem returns an item whose size sits at a node limit or near it.
func limitItem(r *rand.Rand, step int) string {
	switch r.IntN(24) {
	case 0:
		return ""
	case 1:
		return strings.Repeat("a", listNodeBytes)
	case 2:
		return strings.Repeat("b", listNodeBytes+1)
	case 3:
		return strings.Repeat("c", listNodeBytes-1)
	case 4:
		return strings.Repeat("d", 1+r.IntN(4000))
	}
	return strconv.Itoa(step % 50) // many repeats, for remove and index
}

// TestListModelMoves drives the list API as lmoveItem, LREM, LTRIM,
// LSET and LINSERT do, on one list, with items at the node limits. The
// item a pop returns is checked after it is pushed back onto the same
// list (LMOVE k k): it must still hold what was popped.
func TestListModelMoves(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	l := newList()
	var model []string
	for step := range 6000 {
		v := limitItem(r, step)
		switch op := r.IntN(12); {
		case op < 2 || len(model) < 3:
			left := r.IntN(2) == 0
			l.push([]byte(v), left)
			if left {
				model = slices.Insert(model, 0, v)
			} else {
				model = append(model, v)
			}
		case op < 5:
			// LMOVE k k from to: pop, reply, push.
			from, to := r.IntN(2) == 0, r.IntN(2) == 0
			var want string
			if from {
				want, model = model[0], model[1:]
			} else {
				want, model = model[len(model)-1], model[:len(model)-1]
			}
			got := l.pop(from)
			reply := string(got)
			l.push(got, to)
			if reply != want || string(got) != want {
				t.Fatalf("step %d: moved %.20q (after the push %.20q); want %.20q", step, reply, got, want)
			}
			if to {
				model = slices.Insert(model, 0, want)
			} else {
				model = append(model, want)
			}
		case op < 6:
			i := r.IntN(len(model))
			l.set(i, []byte(v))
			model[i] = v
		case op < 7:
			i := r.IntN(len(model) + 1)
			l.insert(i, []byte(v))
			model = slices.Insert(model, i, v)
		case op < 8:
			w := model[r.IntN(len(model))]
			count := []int64{0, 1, 2, -1, -2, math.MinInt64, math.MaxInt64}[r.IntN(7)]
			want := listRemoveModel(model, w, count)
			if count == math.MinInt64 {
				want = listRemoveModel(model, w, 0)
			}
			if got := l.remove([]byte(w), count); got != len(model)-len(want) {
				t.Fatalf("step %d: remove(%.20q, %d) = %d; want %d", step, w, count, got, len(model)-len(want))
			}
			model = want
		case op < 9 && len(model) > 40:
			left := r.IntN(len(model)/2 + 1)
			right := r.IntN(len(model) - left + 1)
			l.trim(left, right)
			model = model[left : len(model)-right]
		case op < 10:
			if got := l.pop(true); string(got) != model[0] {
				t.Fatalf("step %d: popFront = %.20q; want %.20q", step, got, model[0])
			}
			model = model[1:]
		default:
			if got := l.pop(false); string(got) != model[len(model)-1] {
				t.Fatalf("step %d: popBack = %.20q; want %.20q", step, got, model[len(model)-1])
			}
			model = model[:len(model)-1]
		}
		checkListShape(t, step, l, len(model))
		if step%53 == 0 {
			checkListItems(t, step, l, model)
			i := 0
			for it := range l.items(0, l.len()-1) {
				if string(it) != model[i] {
					t.Fatalf("step %d: items()[%d] = %.20q; want %.20q", step, i, it, model[i])
				}
				i++
			}
		}
	}
}

// TestListAliasingCompat compares with Redis the commands that read
// items as slices and change the same list in one command (LMOVE k k,
// RPOPLPUSH k k), in MULTI/EXEC and pipelined, with items at the node
// limits.
func TestListAliasingCompat(t *testing.T) {
	big := strings.Repeat("B", listNodeBytes+1)
	full := strings.Repeat("F", listNodeBytes)
	script := [][]string{
		{"RPUSH", "k", "a", "", full, big, "b"}, {"LPUSH", "k", "c", big, ""},
		{"LMOVE", "k", "k", "LEFT", "LEFT"}, {"LMOVE", "k", "k", "RIGHT", "RIGHT"},
		{"LMOVE", "k", "k", "LEFT", "RIGHT"}, {"LMOVE", "k", "k", "RIGHT", "LEFT"},
		{"RPOPLPUSH", "k", "k"}, {"LRANGE", "k", "0", "-1"},
		{"MULTI"}, {"RPOPLPUSH", "k", "k"}, {"LSET", "k", "0", "xyz"}, {"LINDEX", "k", "0"}, {"LMOVE", "k", "k", "LEFT", "LEFT"},
		{"LPOP", "k"}, {"RPUSH", "k", "zz"}, {"LRANGE", "k", "0", "-1"}, {"EXEC"},
		{"LINSERT", "k", "BEFORE", big, full}, {"LINSERT", "k", "AFTER", full, ""}, {"LSET", "k", "1", big + "x"},
		{"LSET", "k", "2", "short"}, {"LRANGE", "k", "0", "-1"}, {"LREM", "k", "0", ""}, {"LRANGE", "k", "0", "-1"},
		{"LTRIM", "k", "1", "-2"}, {"LRANGE", "k", "0", "-1"},
	}
	for i := range 300 {
		script = append(script, []string{"RPUSH", "q", strconv.Itoa(i)}, []string{"LMOVE", "q", "q", "LEFT", "RIGHT"})
		if i%7 == 0 {
			script = append(script, []string{"LPOP", "q", "2"}, []string{"LRANGE", "q", "0", "-1"})
		}
	}
	compareListScript(t, 2, script)

	// Pipelined: the replies of pops and moves are in the output buffer
	// while later commands of the batch write over the popped bytes.
	_, addr := startServer(t, Config{})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	pipe := [][]string{{"RPUSH", "p", "one", "two", "three"}}
	for i := range 200 {
		pipe = append(pipe, []string{"RPOP", "p"}, []string{"RPUSH", "p", "X" + strconv.Itoa(i)},
			[]string{"LMOVE", "p", "p", "LEFT", "LEFT"}, []string{"LPUSH", "p", "Y" + strconv.Itoa(i)}, []string{"LPOP", "p"})
	}
	pipe = append(pipe, []string{"LRANGE", "p", "0", "-1"})
	for _, rc := range []*rawConn{ours, theirs} {
		for _, args := range pipe {
			rc.send(args...)
		}
	}
	for _, args := range pipe {
		if got, want := ours.read(), theirs.read(); got != want {
			t.Fatalf("pipelined %q: evkv %q; Redis %q", args, got, want)
		}
	}
}

// TestBLMoveSameKey serves a client blocked in BLMOVE k k with
// another client's push.
func TestBLMoveSameKey(t *testing.T) {
	c, ctx := serverAndClient(t)
	blocked := goRedis(t, c.Options().Addr)
	done := make(chan string)
	go func() { done <- blocked.BLMove(ctx, "k", "k", "RIGHT", "LEFT", 0).Val() }()
	listWaitBlocked(t, c, 1)
	c.RPush(ctx, "k", "a", "bb", "ccc")
	if got := <-done; got != "ccc" {
		t.Errorf("BLMOVE = %q; want ccc", got)
	}
	if got := c.LRange(ctx, "k", 0, -1).Val(); !slices.Equal(got, []string{"ccc", "a", "bb"}) {
		t.Errorf("LRANGE = %q; want [ccc a bb]", got)
	}
}

// liveHeap returns the live heap after collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// totalAlloc is the bytes allocated on the heap so far, freed or not.
func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// TestListOneItemAfterChurn checks that a list drained to one item does
// not keep the buffers its items needed, whichever end they were taken
// from: a million such lists would otherwise hold gigabytes (Redis: 160
// bytes each).
func TestListOneItemAfterChurn(t *testing.T) {
	const lists = 1000
	for _, tc := range []struct {
		name  string
		churn func(l *list)
	}{
		{"RPUSH 1025, LPOP 1024", func(l *list) {
			for j := range 1025 {
				l.pushBack([]byte("item" + strconv.Itoa(1000+j)))
			}
			for range 1024 {
				l.popFront()
			}
		}},
		{"RPUSH 1025, LTRIM -1 -1", func(l *list) {
			for j := range 1025 {
				l.pushBack([]byte("item" + strconv.Itoa(1000+j)))
			}
			l.trim(1024, 0)
		}},
		{"RPUSH 8000-byte item and 1-byte item, LPOP", func(l *list) {
			l.pushBack([]byte(strings.Repeat("x", 8000)))
			l.pushBack([]byte("y"))
			l.popFront()
		}},
		{"LPUSH 8000-byte item and 1-byte item, RPOP", func(l *list) {
			l.pushFront([]byte(strings.Repeat("x", 8000)))
			l.pushFront([]byte("y"))
			l.popBack()
		}},
		{"RPUSH 1024, LPUSH 1, RPOP 1024", func(l *list) {
			for j := range 1024 {
				l.pushBack([]byte("item" + strconv.Itoa(1000+j)))
			}
			l.pushFront([]byte("head"))
			for range 1024 {
				l.popBack()
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := make([]*list, lists)
			before := liveHeap()
			for i := range ls {
				ls[i] = newList()
				tc.churn(ls[i])
				if ls[i].len() != 1 {
					t.Fatalf("len %d; want 1", ls[i].len())
				}
			}
			per := int64(liveHeap()-before) / lists
			nd := ls[0].node(0)
			runtime.KeepAlive(ls)
			if per > 1024 {
				t.Errorf("a list of one item holds %d bytes of heap (its node: %d bytes of buffer, %d offsets); want under 1 KiB",
					per, len(nd.data), len(nd.offs))
			}
		})
	}
}

// TestListPushPopAtTheOtherEnd checks that LPUSH then LPOP on a list
// built by RPUSH (and RPUSH then RPOP on one built by LPUSH) allocates
// nothing once the end node has made room at that end.
func TestListPushPopAtTheOtherEnd(t *testing.T) {
	s, c := directServer(t)
	bs := argv
	for _, tc := range []struct {
		build           func(*Server, *client, [][]byte)
		push, pop       func(*Server, *client, [][]byte)
		pushCmd, popCmd string
	}{
		{rpushCommand, lpushCommand, lpopCommand, "LPUSH", "LPOP"},
		{lpushCommand, rpushCommand, rpopCommand, "RPUSH", "RPOP"},
	} {
		for _, n := range []int{10, 2000} {
			t.Run(tc.pushCmd+" then "+tc.popCmd+" on "+strconv.Itoa(n), func(t *testing.T) {
				key := "k" + tc.pushCmd + strconv.Itoa(n)
				build := []string{"PUSH", key}
				for i := range n {
					build = append(build, "element:"+strconv.Itoa(i))
				}
				tc.build(s, c, bs(build...))
				push, pop := bs(tc.pushCmd, key, "v"), bs(tc.popCmd, key)
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				allocs := testing.AllocsPerRun(200, func() {
					s.w.Reset()
					tc.push(s, c, push)
					tc.pop(s, c, pop)
				})
				runtime.ReadMemStats(&m1)
				bytesPer := (m1.TotalAlloc - m0.TotalAlloc) / 201
				if allocs > 1 || bytesPer > 256 {
					t.Errorf("%s then %s on a list of %d: %v allocations, %d bytes each; want at most 1 and a few bytes",
						tc.pushCmd, tc.popCmd, n, allocs, bytesPer)
				}
			})
		}
	}
}

// TestListFragments checks that changes in the middle do not split a
// list into small nodes: LINSERT AFTER one pivot again and again, and LSET
// growing each item of a full node.
func TestListFragments(t *testing.T) {
	t.Run("LINSERT AFTER one pivot", func(t *testing.T) {
		before := liveHeap()
		l := newList()
		for j := range 1024 {
			l.pushBack([]byte("item" + strconv.Itoa(1000+j)))
		}
		for j := range 3000 {
			l.insert(l.index([]byte("item1000"))+1, []byte("ins"+strconv.Itoa(10000+j)))
		}
		used := liveHeap() - before
		before = liveHeap()
		packed := l.clone()
		usedPacked := liveHeap() - before
		runtime.KeepAlive(l)
		runtime.KeepAlive(packed)
		if maxNodes := 4 * (l.len()/listNodeItems + 1); l.count > maxNodes {
			t.Errorf("%d items in %d nodes (%d bytes of heap; the same items pushed: %d nodes, %d bytes); want at most %d nodes",
				l.len(), l.count, used, packed.count, usedPacked, maxNodes)
		}
	})
	t.Run("LSET growing items", func(t *testing.T) {
		l := newList()
		for j := range 1024 {
			l.pushBack([]byte("item" + strconv.Itoa(1000+j)))
		}
		for j := range 1024 {
			l.set(j, []byte("itemx"+strconv.Itoa(1000+j)))
		}
		if l.count > 4 {
			sizes := make([]int, 0, l.count)
			for k := range l.count {
				sizes = append(sizes, l.node(k).size())
			}
			t.Errorf("1024 items of 9 bytes in %d nodes, of sizes %v; want at most 4", l.count, sizes[:min(len(sizes), 12)])
		}
	})
}

// TestListEmptyItemsKeepOffsets checks that a node of empty items drained
// to one does not keep its offsets (its byte buffer is empty).
func TestListEmptyItemsKeepOffsets(t *testing.T) {
	l := newList()
	for range listNodeItems {
		l.pushBack(nil)
	}
	for range listNodeItems - 1 {
		l.popBack()
	}
	if c := len(l.node(0).offs); c > 64 {
		t.Errorf("a node of one empty item keeps %d offsets; want a few", c)
	}
}

// TestListDifferentialBigItems is TestListDifferential with items at
// the node limits among the short ones, on fewer keys so that moves and
// inserts meet on one list.
func TestListDifferentialBigItems(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 2026))
	bigs := []string{"", strings.Repeat("a", listNodeBytes), strings.Repeat("b", listNodeBytes+1),
		strings.Repeat("c", listNodeBytes-1), strings.Repeat("d", 3000)}
	var script [][]string
	for range 2500 {
		args := randomListCommand(r)
		for i := 2; i < len(args); i++ {
			if args[0] != "LPOS" && args[0] != "LRANGE" && args[0] != "LTRIM" && args[0] != "LINDEX" &&
				args[0] != "LREM" && args[0] != "LMPOP" && args[0] != "BLMPOP" && !strings.HasSuffix(args[0], "MOVE") &&
				args[0] != "RPOPLPUSH" && args[0] != "BRPOPLPUSH" && args[0] != "BLPOP" && args[0] != "BRPOP" &&
				r.IntN(6) == 0 && (args[0] != "LSET" || i == 3) {
				args[i] = bigs[r.IntN(len(bigs))]
			}
		}
		if args[0] == "LREM" && r.IntN(3) == 0 {
			args[3] = bigs[r.IntN(len(bigs))]
		}
		script = append(script, args)
		if r.IntN(4) == 0 {
			for range 30 {
				script = append(script, []string{"RPUSH", "l1", strconv.Itoa(r.IntN(5))})
			}
		}
	}
	// Checksum the long lists rather than compare each big reply alone.
	script = append(script, []string{"LRANGE", "l1", "0", "-1"}, []string{"LRANGE", "l2", "0", "-1"})
	compareListScript(t, 2, script)
}
