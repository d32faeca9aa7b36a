package kv

import (
	"slices"
	"strings"
	"unsafe"
)

func init() {
	register(
		cmd("memory", -2, "", 0, 0, 0, "server", "4.0.0", "A container for memory diagnostics commands.", nil).withSubs(
			cmd("usage", -3, "readonly", 2, 2, 1, "", "4.0.0", "Estimates the memory usage of a key.", memoryUsage),
			cmd("stats", 2, "", 0, 0, 0, "", "4.0.0", "Returns details about memory usage.", memoryStats),
			cmd("doctor", 2, "", 0, 0, 0, "", "4.0.0", "Outputs a memory problems report.", memoryDoctor),
			cmd("purge", 2, "", 0, 0, 0, "", "4.0.0", "Asks the allocator to release memory.", memoryPurge),
			cmd("malloc-stats", 2, "", 0, 0, 0, "", "4.0.0", "Returns the allocator statistics.", memoryMallocStats),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "4.0.0", "Returns helpful text about the different subcommands.", memoryHelp),
		),
	)
}

// memorySamples is how many elements of a list, hash, set or sorted set
// MEMORY USAGE looks at by default, as Redis's OBJ_COMPUTE_SIZE_DEF_SAMPLES.
const memorySamples = 5

// memoryUsage answers MEMORY USAGE key [SAMPLES count]: an estimate of the
// bytes key and its value take in evkv's structures, the elements of an
// aggregate sampled (count of them, every one with 0) and the average
// taken for the rest, as Redis estimates them. It does not touch the key's
// access time.
func memoryUsage(s *Server, c *client, args [][]byte) {
	samples := memorySamples
	for i := 3; i < len(args); i += 2 {
		if !strings.EqualFold(string(args[i]), "samples") || i+1 == len(args) {
			s.w.Error(errSyntax)
			return
		}
		n, ok := parseInt(args[i+1])
		if !ok {
			s.w.Error("ERR value is not an integer or out of range")
			return
		}
		if n < 0 {
			s.w.Error(errSyntax)
			return
		}
		samples = int(min(n, 1<<31))
		if samples == 0 {
			samples = -1 // every element
		}
	}
	key := args[2]
	e := c.db.keys.get(key)
	if e == nil || e.exp != 0 && e.exp <= s.now() {
		s.w.Null()
		return
	}
	size := c.db.keys.slotBytes() + heapBytes(len(key)) + valueBytes(e, samples)
	if e.exp != 0 {
		size += c.db.expires.slotBytes()
	}
	s.w.Int(int64(size))
}

func memoryHelp(s *Server, c *client, args [][]byte) {
	s.help("MEMORY",
		"DOCTOR", "    Return memory problems reports.",
		"MALLOC-STATS", "    Return internal statistics report from the memory allocator.",
		"PURGE", "    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS", "    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]", "    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).",
	)
}

// heapBytes is what the allocator hands out for n bytes: the size class
// n falls in (Go's, up to 32 KiB), or whole pages beyond.
func heapBytes(n int) int {
	if n == 0 {
		return 0
	}
	if n > maxSizeClass {
		return (n + 8191) &^ 8191
	}
	i, _ := slices.BinarySearch(sizeClasses[:], n)
	return sizeClasses[i]
}

// sizeClasses are the Go runtime's size classes for small objects
// (internal/runtime/gc's table).
var sizeClasses = [...]int{
	8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280,
	1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528,
	6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432,
	19072, 20480, 21760, 24576, 27264, 28672, 32768,
}

const maxSizeClass = 32768

// slotBytes is what one entry of d costs besides its key's and value's
// own bytes: its slot and its share of the index.
func (d *dict[V]) slotBytes() int {
	n := int(unsafe.Sizeof(dictSlot[V]{}))
	if d.n > 0 {
		n += 8 * len(d.index) / d.n
	}
	return n
}

// overheadBytes is d's own memory: its slots and index, without what the
// keys and values hold.
func (d *dict[V]) overheadBytes() int {
	n := int(unsafe.Sizeof(*d)) + 8*len(d.index) + 24*len(d.chunks)
	for _, ch := range d.chunks {
		n += cap(ch) * int(unsafe.Sizeof(dictSlot[V]{}))
	}
	return n
}

// bytes estimates d: its slots and index, and the keys' and values' own
// bytes, as elem gives them for samples of its entries (all when samples
// is negative), averaged over the rest.
func (d *dict[V]) bytes(samples int, elem func(key string, val *V) int) int {
	n := d.overheadBytes()
	if samples < 0 || samples > d.n {
		samples = d.n
	}
	sum := 0
	for i := range samples {
		sl := d.slot(i)
		sum += elem(sl.key, &sl.val)
	}
	if samples > 0 {
		n += sum * d.n / samples
	}
	return n
}

// valueBytes estimates the bytes of e's value.
func valueBytes(e *entry, samples int) int {
	switch o := e.obj.(type) {
	case nil, *strBuf:
		return stringBytesHeld(e)
	case *list:
		return o.bytes(samples)
	case *hash:
		return o.bytes(samples)
	case *set:
		if o.isIntset() {
			return int(unsafe.Sizeof(*o)) + heapBytes(cap(o.ints.data))
		}
		return int(unsafe.Sizeof(*o)) + o.table.bytes(samples, func(m string, _ *struct{}) int { return heapBytes(len(m)) })
	case *zset:
		return o.bytes(samples)
	}
	return 0
}

// bytes estimates l: its ring of nodes, and its nodes as samples of them
// (all when samples is negative) average.
func (l *list) bytes(samples int) int {
	n := int(unsafe.Sizeof(*l)) + 8*cap(l.nodes)
	if samples < 0 || samples > l.count {
		samples = l.count
	}
	sum := 0
	for i := range samples {
		nd := l.nodes[(l.head+i)&(len(l.nodes)-1)]
		sum += int(unsafe.Sizeof(*nd)) + heapBytes(cap(nd.data)) + heapBytes(2*cap(nd.offs))
	}
	if samples > 0 {
		n += sum * l.count / samples
	}
	return n
}

// bytes estimates h: its pack and its fields' hashes while small, its table
// once big, the fields and values as samples of them average.
func (h *hash) bytes(samples int) int {
	n := int(unsafe.Sizeof(*h))
	if h.big() {
		return n + h.ht.bytes(samples, func(f string, v *string) int { return heapBytes(len(f)) + heapBytes(len(*v)) })
	}
	return n + heapBytes(cap(h.pack)) + heapBytes(4*cap(h.tags))
}

// bytes estimates z: its table of members and its tree, whose leaves and
// inner nodes hold each member's string header and score again. With
// samples, the leaves are counted from how full the first of them are.
func (z *zset) bytes(samples int) int {
	n := int(unsafe.Sizeof(*z)) + z.members.bytes(samples, func(m string, _ *float64) int { return heapBytes(len(m)) })
	leaves, inner := 0, 0
	if samples < 0 {
		for lf := z.tree.head; lf != nil; lf = lf.next {
			leaves++
		}
		if z.tree.root != nil {
			inner = z.tree.innerNodes()
		}
	} else {
		seen, held := 0, 0
		for lf := z.tree.head; lf != nil && seen < max(samples, 1); lf = lf.next {
			seen++
			held += lf.n
		}
		if held > 0 {
			leaves = (z.tree.n*seen + held - 1) / held
		}
		if z.tree.root != nil {
			inner = 1 + leaves/(zInnerCap*3/4) // most of them just above the leaves
		}
	}
	return n + leaves*int(unsafe.Sizeof(zleaf{})) + inner*int(unsafe.Sizeof(zinner{}))
}

// innerNodes counts t's inner nodes.
func (t *ztree) innerNodes() int {
	var count func(nd *zinner, height int) int
	count = func(nd *zinner, height int) int {
		n := 1
		if height > 1 {
			for _, child := range nd.inner[:nd.n] {
				n += count(child, height-1)
			}
		}
		return n
	}
	return count(t.root, t.height)
}
