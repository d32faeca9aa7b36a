package kv

import "testing"

// TestStringEvents compares the keyspace events of every string command
// with Redis's.
func TestStringEvents(t *testing.T) {
	compareEvents(t, [][]string{
		{"SET", "s", "1"}, {"SET", "s", "2", "EX", "100"}, {"SET", "s", "3", "KEEPTTL"},
		{"SETNX", "n", "1"}, {"SETNX", "n", "2"}, {"SETEX", "e", "100", "v"}, {"PSETEX", "p", "100000", "v"},
		{"GETSET", "s", "4"}, {"GETDEL", "n"}, {"GETEX", "e", "EX", "200"}, {"GETEX", "e", "PERSIST"},
		{"MSET", "m1", "a", "m2", "b"}, {"MSETNX", "m3", "c", "m4", "d"}, {"MSETNX", "m1", "x"},
		{"APPEND", "s", "x"}, {"SETRANGE", "s", "3", "yz"},
		{"INCR", "c"}, {"DECR", "c"}, {"INCRBY", "c", "10"}, {"DECRBY", "c", "3"}, {"INCRBYFLOAT", "c", "1.5"},
		{"INCR", "s"}, // not an integer: no event
	})
}

// TestSharedIntegers checks what OBJECT tells of small integer values,
// which evkv keeps once, as Redis does: the same encodings and reference
// counts, whichever command stored them, and values that read back as
// they were written.
func TestSharedIntegers(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"SET", "a", "100"}, {"OBJECT", "REFCOUNT", "a"}, {"OBJECT", "ENCODING", "a"}, {"GET", "a"},
		{"INCR", "a"}, {"OBJECT", "REFCOUNT", "a"}, {"GET", "a"},
		{"SET", "z", "0"}, {"OBJECT", "REFCOUNT", "z"}, {"GET", "z"},
		{"SET", "b", "0100"}, {"OBJECT", "REFCOUNT", "b"}, {"OBJECT", "ENCODING", "b"}, {"GET", "b"},
		{"SET", "c", "9999"}, {"OBJECT", "REFCOUNT", "c"}, {"INCR", "c"}, {"OBJECT", "REFCOUNT", "c"}, {"GET", "c"},
		{"DECR", "c"}, {"OBJECT", "REFCOUNT", "c"},
		{"SET", "d", "-1"}, {"OBJECT", "REFCOUNT", "d"}, {"INCR", "d"}, {"OBJECT", "REFCOUNT", "d"},
		{"INCRBY", "fresh", "42"}, {"OBJECT", "REFCOUNT", "fresh"},
		{"SETNX", "nx", "7"}, {"OBJECT", "REFCOUNT", "nx"}, {"SETEX", "ex", "100", "8"}, {"OBJECT", "REFCOUNT", "ex"},
		{"GETSET", "a", "9"}, {"OBJECT", "REFCOUNT", "a"}, {"MSET", "m1", "1", "m2", "x1"},
		{"OBJECT", "REFCOUNT", "m1"}, {"OBJECT", "REFCOUNT", "m2"},
		{"APPEND", "m1", "0"}, {"OBJECT", "REFCOUNT", "m1"}, {"OBJECT", "ENCODING", "m1"}, {"GET", "m1"},
		{"SET", "r", "5"}, {"SETRANGE", "r", "0", "6"}, {"OBJECT", "REFCOUNT", "r"}, {"GET", "r"},
		{"SET", "src", "12"}, {"COPY", "src", "dst"}, {"OBJECT", "REFCOUNT", "dst"}, {"OBJECT", "REFCOUNT", "src"},
		{"GET", "dst"}, {"SET", "sp", " 1"}, {"GET", "sp"}, {"SET", "plus", "+1"}, {"GET", "plus"},
		{"APPEND", "nk", "5"}, {"OBJECT", "REFCOUNT", "nk"}, {"OBJECT", "ENCODING", "nk"},
		{"SET", "a5", "5"}, {"APPEND", "a5", ""}, {"OBJECT", "REFCOUNT", "a5"}, {"OBJECT", "ENCODING", "a5"},
		{"SET", "e1", "-0"}, {"SET", "e2", "+1"}, {"SET", "e3", " 1"}, {"SET", "e4", "00"}, {"SET", "e5", "-12"},
		{"OBJECT", "ENCODING", "e1"}, {"OBJECT", "ENCODING", "e2"}, {"OBJECT", "ENCODING", "e3"},
		{"OBJECT", "ENCODING", "e4"}, {"OBJECT", "ENCODING", "e5"}, {"OBJECT", "ENCODING", "sp"},
		{"INCRBYFLOAT", "f", "3"}, {"OBJECT", "ENCODING", "f"}, {"OBJECT", "REFCOUNT", "f"},
		{"INCRBYFLOAT", "f", "0.5"}, {"OBJECT", "ENCODING", "f"},
	})
}

// TestCompatStringOptions: SET's and GETEX's options as Redis 7.0's
// parseExtendedStringArgumentsOrReply reads them: an option may come
// again (EX 10 EX 20 is EX 20, the first time never read; NX NX, GET
// GET, PERSIST PERSIST), but not beside one it excludes (two units,
// KEEPTTL or PERSIST and a time), each read as a C string; and GETEX
// reads its time once the key is found a string, so that an absent key
// is a null and another type WRONGTYPE, whatever the time.
func TestCompatStringOptions(t *testing.T) {
	var script [][]string
	for _, args := range [][]string{
		{"SET", "k", "v", "EX", "10", "EX", "20"}, {"SET", "k", "v", "PX", "10", "PX", "20000"}, {"SET", "k", "v", "EX", "x", "EX", "10"},
		{"SET", "k", "v", "KEEPTTL", "KEEPTTL"}, {"SET", "k", "v", "NX", "NX"}, {"SET", "k", "v", "XX", "XX", "GET", "GET"},
		{"SET", "k", "v", "EX", "10", "PX", "10"}, {"SET", "k", "v", "KEEPTTL", "EX", "10"}, {"SET", "k", "v", "EX", "10", "KEEPTTL"},
		{"SET", "k", "v", "EX", "x", "NOSUCH"}, {"SET", "k", "v", "EX", "0", "NX", "XX"}, {"SET", "k", "v", "EX"},
		{"SET", "k", "v", "ex\x00y", "10"}, {"SET", "k", "v", "nx\x00", "keepttl\x00z"}, {"SET", "k", "v", "GET", "EX", "0"},
		{"GETEX", "k", "EX", "10", "EX", "20"}, {"GETEX", "k", "PX", "10", "PX", "20000"}, {"GETEX", "k", "PERSIST", "PERSIST"},
		{"GETEX", "k", "EX", "10", "PERSIST"}, {"GETEX", "k", "PERSIST", "PXAT", "10"}, {"GETEX", "k", "persist\x00"}, {"GETEX", "k", "EXAT", "10", "EX", "1"},
		{"GETEX", "k", "EX", "0"}, {"GETEX", "k", "EX", "-5"}, {"GETEX", "k", "EX", "x"}, {"GETEX", "k", "EX", "9223372036854776"},
		{"GETEX", "k", "PX", "9223372036854775807"}, {"GETEX", "k", "EXAT", "9223372036854776"}, {"GETEX", "k", "EX", "10", "NX"},
	} {
		script = append(script, []string{"DEL", "k"}, args, []string{"TTL", "k"})
		script = append(script, []string{"SET", "k", "v", "EX", "1000"}, args, []string{"GET", "k"}, []string{"TTL", "k"})
		script = append(script, []string{"DEL", "k"}, []string{"RPUSH", "k", "x"}, args, []string{"TYPE", "k"})
	}
	compareWithRedis(t, script)
}

// TestCompatExpireTimeRounded: EXPIRETIME rounds the expiry to the
// nearest second, as TTL rounds the time left, in Redis 7.0's
// ttlGenericCommand: a key expiring at 4000000000.600 s has 4000000001,
// and one at the largest time, 2^63-1 ms, 9223372036854776.
func TestCompatExpireTimeRounded(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"SET", "k", "v", "PXAT", "4000000000600"}, {"EXPIRETIME", "k"}, {"PEXPIRETIME", "k"},
		{"PEXPIREAT", "k", "4000000000499"}, {"EXPIRETIME", "k"},
		{"PEXPIREAT", "k", "4000000000500"}, {"EXPIRETIME", "k"},
		{"SET", "k", "v", "PXAT", "9223372036854775807"}, {"EXPIRETIME", "k"}, {"PEXPIRETIME", "k"},
		{"PEXPIREAT", "k", "9223372036854775300"}, {"EXPIRETIME", "k"},
	})
}
