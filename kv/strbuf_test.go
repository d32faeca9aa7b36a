package kv

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestAppendInPlace checks that APPEND grows a value in place, with room
// to spare, as Redis's sds strings grow: appending 2 MiB a KiB at a time
// allocates a few times the value, where copying the value at each append
// allocates a gigabyte.
func TestAppendInPlace(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	piece := strings.Repeat("0123456789abcdef", 64) // 1 KiB
	const appends = 2048
	// What a command of the size costs the server and this test's client
	// otherwise: as many SETs.
	allocated := totalAlloc()
	for range appends {
		rc.do("SET", "other", piece)
	}
	sets := totalAlloc() - allocated
	allocated = totalAlloc()
	for i := range appends {
		want := ":" + strconv.Itoa((i+1)*len(piece)) + "\r\n"
		if got := rc.do("APPEND", "log", piece); got != want {
			t.Fatalf("APPEND %d = %q; want %q", i, got, want)
		}
	}
	if n := int64(totalAlloc()-allocated) - int64(sets); n > 16<<20 {
		t.Errorf("%d appends of 1 KiB allocated %d MiB more than as many SETs", appends, n>>20)
	}
	for _, at := range []int{0, 1, appends / 2, appends - 1} {
		start := strconv.Itoa(at * len(piece))
		end := strconv.Itoa((at+1)*len(piece) - 1)
		if got, want := rc.do("GETRANGE", "log", start, end), bulk(piece); got != want {
			t.Fatalf("GETRANGE of piece %d = %.40q…; want %.40q…", at, got, want)
		}
	}
}

// TestEditedValuesStayApart edits, in place, values that share bytes or
// were read just before, and checks that every other value and reply kept
// what it had: a copy (COPY), a value replied before the edit, in a
// transaction too, a list SORT stored from it, a value renamed or moved.
func TestEditedValuesStayApart(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"APPEND", "a", "hello"}, ":5\r\n"},
		{[]string{"APPEND", "a", " world"}, ":11\r\n"}, // a now owns room to grow
		{[]string{"COPY", "a", "b"}, ":1\r\n"},
		{[]string{"APPEND", "a", "!"}, ":12\r\n"},
		{[]string{"APPEND", "b", "?"}, ":12\r\n"},
		{[]string{"GET", "a"}, bulk("hello world!")},
		{[]string{"GET", "b"}, bulk("hello world?")},
		{[]string{"SETRANGE", "b", "0", "J"}, ":12\r\n"},
		{[]string{"GET", "a"}, bulk("hello world!")},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"GET", "a"}, "+QUEUED\r\n"},
		{[]string{"SETRANGE", "a", "0", "H"}, "+QUEUED\r\n"},
		{[]string{"SETBIT", "a", "7", "1"}, "+QUEUED\r\n"},
		{[]string{"GET", "a"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*4\r\n" + bulk("hello world!") + ":12\r\n:0\r\n" + bulk("Iello world!")},
		{[]string{"RPUSH", "l", "1"}, ":1\r\n"},
		{[]string{"SET", "w_1", "x"}, "+OK\r\n"},
		{[]string{"APPEND", "w_1", "yz"}, ":3\r\n"},
		{[]string{"SORT", "l", "GET", "w_*", "STORE", "sorted"}, ":1\r\n"},
		{[]string{"SETRANGE", "w_1", "0", "Q"}, ":3\r\n"},
		{[]string{"LRANGE", "sorted", "0", "-1"}, "*1\r\n" + bulk("xyz")},
		{[]string{"RENAME", "a", "c"}, "+OK\r\n"},
		{[]string{"APPEND", "c", "."}, ":13\r\n"},
		{[]string{"MOVE", "c", "1"}, ":1\r\n"},
		{[]string{"SELECT", "1"}, "+OK\r\n"},
		{[]string{"BITFIELD", "c", "SET", "u8", "0", "74"}, "*1\r\n:73\r\n"},
		{[]string{"GET", "c"}, bulk("Jello world!.")},
		{[]string{"OBJECT", "ENCODING", "c"}, bulk("raw")},
		{[]string{"SELECT", "0"}, "+OK\r\n"},
		{[]string{"GET", "b"}, bulk("Jello world?")},
		{[]string{"INCR", "b"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"TYPE", "b"}, "+string\r\n"},
		{[]string{"LPUSH", "b", "x"}, "-" + errWrongType + "\r\n"},
	}
	for _, st := range steps {
		if got := rc.do(st.args...); got != st.want {
			t.Fatalf("%q = %q; want %q", st.args, got, st.want)
		}
	}
}

// TestCompatEdits compares values edited in place with Redis's, with the
// commands that read them, encodings and all.
func TestCompatEdits(t *testing.T) {
	script := [][]string{
		{"SET", "n", "12"}, {"APPEND", "n", "3"}, {"OBJECT", "ENCODING", "n"}, {"INCR", "n"}, {"OBJECT", "ENCODING", "n"}, {"APPEND", "n", "0"}, {"GET", "n"},
		{"APPEND", "s", "abc"}, {"APPEND", "s", "def"}, {"SETRANGE", "s", "10", "XY"}, {"GET", "s"}, {"STRLEN", "s"}, {"GETRANGE", "s", "2", "-2"},
		{"SETBIT", "s", "200", "1"}, {"STRLEN", "s"}, {"BITCOUNT", "s"}, {"GET", "s"}, {"APPEND", "s", "z"}, {"GET", "s"},
		{"BITFIELD", "s", "INCRBY", "u8", "#3", "7", "GET", "u16", "0"}, {"GET", "s"}, {"OBJECT", "ENCODING", "s"},
		{"COPY", "s", "t"}, {"SETRANGE", "t", "0", "T"}, {"GET", "s"}, {"GET", "t"}, {"LCS", "s", "t"},
		{"PFADD", "s", "a"}, {"SET", "h", "x"}, {"APPEND", "h", "y"}, {"PFADD", "h", "a"},
		{"SETBIT", "bm", "1000", "1"}, {"SETBIT", "bm", "5", "1"}, {"SETBIT", "bm", "5", "1"}, {"BITPOS", "bm", "1"}, {"BITOP", "NOT", "nb", "bm"}, {"SETBIT", "nb", "0", "0"}, {"GET", "nb"},
		{"GETDEL", "bm"}, {"APPEND", "bm", "again"}, {"GET", "bm"},
	}
	compareWithRedis(t, script)
}

// bulk is s as a RESP bulk string.
func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// TestEditTooLongLeavesNoKey checks that a write to a new key at an
// offset no allocation can reach (proto-max-bulk-len raised past the
// address space) fails without leaving the key behind: the bytes are
// allocated before the key is made. (Redis aborts on the allocation.)
func TestEditTooLongLeavesNoKey(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	rc.do("CONFIG", "SET", "proto-max-bulk-len", "1000000000gb") // refused on 32-bit platforms (TestStringLengthOverflow)
	far := int64(1) << 50
	for _, args := range [][]string{
		{"SETBIT", "sb", strconv.FormatInt(8*far, 10), "1"},
		{"SETRANGE", "sr", strconv.FormatInt(far, 10), "x"},
		{"BITFIELD", "bf", "SET", "u8", strconv.FormatInt(8*far, 10), "1"},
	} {
		c := dialRaw(t, addr)
		c.send(args...)
		if reply, err := c.r.ReadString('\n'); err == nil && !strings.HasPrefix(reply, "-") {
			t.Errorf("%q = %q; want an error, or the connection closed", args, reply)
		}
	}
	if got := rc.do("EXISTS", "sb", "sr", "bf"); got != ":0\r\n" {
		t.Errorf("EXISTS of the keys written = %q; want :0", got)
	}
}

// TestStringLengthOverflow checks that a string's length is checked
// against proto-max-bulk-len without wrapping around, as Redis checks it
// since 7.0.8: SETRANGE at an offset near the largest int64 is refused,
// where the sum of offset and length wrapped, passed, and the copy
// panicked, leaving an empty key; and that proto-max-bulk-len is at most
// the largest int (Redis's LONG_MAX), which on a 32-bit platform it
// passed, wrapping to a negative bound.
func TestStringLengthOverflow(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	past := strconv.FormatUint(uint64(math.MaxInt)+1, 10)
	if got := rc.do("CONFIG", "SET", "proto-max-bulk-len", past); !strings.HasPrefix(got, "-ERR") {
		t.Errorf("CONFIG SET proto-max-bulk-len %s = %q; want an error", past, got)
	}
	for _, limit := range []string{"512mb", strconv.Itoa(math.MaxInt)} {
		if got := rc.do("CONFIG", "SET", "proto-max-bulk-len", limit); got != "+OK\r\n" {
			t.Fatalf("CONFIG SET proto-max-bulk-len %s = %q", limit, got)
		}
		for _, off := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 2} {
			args := []string{"SETRANGE", "k", strconv.FormatInt(off, 10), "xyz"}
			want := "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
			if got := rc.do(args...); got != want {
				t.Errorf("limit %s: %q = %q; want %q", limit, args, got, want)
			}
		}
		if got := rc.do("EXISTS", "k"); got != ":0\r\n" {
			t.Errorf("limit %s: EXISTS k after the refused SETRANGEs = %q; want :0", limit, got)
		}
	}
}

// TestHLLInPlace checks that PFADD and PFCOUNT change a dense
// HyperLogLog in place (its 12 KiB copied once), where each copied it
// when it changed a register or wrote the cached count.
func TestHLLInPlace(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	rc.do("PFADD", "hll", "first")
	if got := rc.do("PFDEBUG", "TODENSE", "hll"); got != ":1\r\n" {
		t.Fatalf("PFDEBUG TODENSE = %q", got)
	}
	const adds = 2000
	allocated := totalAlloc()
	for i := range adds {
		rc.do("SET", "other", strconv.Itoa(i))
		rc.do("GET", "other")
	}
	baseline := totalAlloc() - allocated
	allocated = totalAlloc()
	changed := 0
	for i := range adds {
		if rc.do("PFADD", "hll", "e"+strconv.Itoa(i)) == ":1\r\n" {
			changed++
		}
		rc.do("PFCOUNT", "hll")
	}
	if changed < adds/2 {
		t.Fatalf("only %d of %d PFADDs changed a register", changed, adds)
	}
	if n := int64(totalAlloc()-allocated) - int64(baseline); n > 4<<20 {
		t.Errorf("%d PFADDs and PFCOUNTs of a dense HyperLogLog allocated %d MiB more than as many SETs and GETs", adds, n>>20)
	}
	if got := rc.do("PFCOUNT", "hll"); got < ":1900\r\n" || got > ":2100\r\n" {
		t.Errorf("PFCOUNT = %q; want about 2001", got)
	}
	// A copy, and a value read before, keep their bytes when the
	// HyperLogLog changes in place.
	rc.do("COPY", "hll", "copy")
	before := rc.do("GET", "hll")
	for i := range 200 {
		rc.do("PFADD", "hll", "more"+strconv.Itoa(i))
	}
	if rc.do("GET", "copy") != before {
		t.Error("the copy changed with the HyperLogLog it was copied from")
	}
	if rc.do("GET", "hll") == before {
		t.Error("200 more elements changed no register")
	}
}
