package kv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// bitScript exercises every bitmap command's replies, errors and argument
// parsing, and what the string commands then say of the values they
// wrote.
func bitScript() [][]string {
	return [][]string{
		// SETBIT and GETBIT.
		{"SETBIT", "b", "7", "1"}, {"GET", "b"}, {"OBJECT", "ENCODING", "b"}, {"STRLEN", "b"}, {"GETBIT", "b", "7"}, {"GETBIT", "b", "6"},
		{"SETBIT", "b", "7", "1"}, {"SETBIT", "b", "7", "0"}, {"SETBIT", "b", "100", "1"}, {"STRLEN", "b"}, {"GET", "b"},
		{"GETBIT", "b", "100"}, {"GETBIT", "b", "101"}, {"GETBIT", "b", "1000000"}, {"GETBIT", "nokey", "0"}, {"GETBIT", "nokey", "x"},
		{"SETBIT", "b", "-1", "1"}, {"SETBIT", "b", "x", "1"}, {"SETBIT", "b", "", "1"}, {"SETBIT", "b", "1.5", "1"}, {"SETBIT", "b", "01", "1"},
		{"SETBIT", "b", "+1", "1"}, {"SETBIT", "b", " 1", "1"}, {"SETBIT", "b", "#1", "1"}, {"SETBIT", "b", "-0", "1"},
		{"SETBIT", "b", "0", "2"}, {"SETBIT", "b", "0", "-1"}, {"SETBIT", "b", "0", "x"}, {"SETBIT", "b", "0", ""}, {"SETBIT", "b", "0", "1.0"},
		{"SETBIT", "b", "x", "x"}, {"SETBIT", "b", "4294967296", "1"}, {"SETBIT", "b", "9223372036854775807", "1"},
		{"SETBIT", "b", "9223372036854775808", "1"}, {"GETBIT", "b", "4294967296"}, {"GETBIT", "b", "4294967295"}, {"GETBIT", "b", "-1"},
		{"SETBIT", "nokey2", "0", "0"}, {"GET", "nokey2"}, {"OBJECT", "ENCODING", "nokey2"}, {"EXISTS", "nokey2"},
		{"SETBIT", "nokey3", "0", "x"}, {"EXISTS", "nokey3"},
		// Integers and embedded strings become raw strings; shared
		// integers are unshared even when no bit changes.
		{"SET", "i", "5"}, {"OBJECT", "REFCOUNT", "i"}, {"SETBIT", "i", "0", "0"}, {"OBJECT", "ENCODING", "i"}, {"OBJECT", "REFCOUNT", "i"},
		{"GET", "i"}, {"SET", "i", "5"}, {"GETBIT", "i", "2"}, {"GETBIT", "i", "3"}, {"OBJECT", "ENCODING", "i"},
		{"SETBIT", "i", "6", "1"}, {"GET", "i"}, {"OBJECT", "ENCODING", "i"}, {"INCR", "i"}, {"GET", "i"}, {"OBJECT", "ENCODING", "i"},
		{"SET", "big", "12345678901"}, {"BITCOUNT", "big"}, {"GETBIT", "big", "2"}, {"SETBIT", "big", "87", "1"}, {"GET", "big"}, {"OBJECT", "ENCODING", "big"},
		{"SET", "e", "hello"}, {"OBJECT", "ENCODING", "e"}, {"SETBIT", "e", "0", "0"}, {"OBJECT", "ENCODING", "e"}, {"GET", "e"},
		{"APPEND", "e", "!"}, {"GET", "e"}, {"SETRANGE", "e", "1", "ELLO"}, {"GET", "e"}, {"SETBIT", "e", "47", "1"}, {"GET", "e"}, {"STRLEN", "e"},
		{"SET", "empty", ""}, {"SETBIT", "empty", "0", "0"}, {"GET", "empty"}, {"STRLEN", "empty"}, {"OBJECT", "ENCODING", "empty"},
		// Wrong types.
		{"LPUSH", "l", "a"}, {"SETBIT", "l", "0", "1"}, {"GETBIT", "l", "0"}, {"BITCOUNT", "l"}, {"BITCOUNT", "l", "0", "x"},
		{"BITPOS", "l", "1"}, {"BITPOS", "l", "2"}, {"BITPOS", "l", "x"}, {"BITOP", "AND", "d", "l"}, {"BITOP", "AND", "d", "b", "l"},
		{"BITOP", "NOT", "l", "b"}, {"GET", "l"}, {"TYPE", "l"}, {"BITOP", "AND", "l", "b"}, {"TYPE", "l"},
		{"BITFIELD", "l", "GET", "u8", "0"}, {"BITFIELD", "l", "SET", "u8", "0", "1"}, {"BITFIELD_RO", "l", "GET", "u8", "0"},
		{"BITFIELD", "l"}, {"BITFIELD", "l", "SET", "u8", "x", "1"}, {"SETBIT", "l", "x", "1"}, {"GETBIT", "l", "x"},
		// BITCOUNT.
		{"SET", "s", "foobar"}, {"BITCOUNT", "s"}, {"BITCOUNT", "s", "0", "0"}, {"BITCOUNT", "s", "1", "1"}, {"BITCOUNT", "s", "0", "-1"},
		{"BITCOUNT", "s", "-2", "-1"}, {"BITCOUNT", "s", "-1", "-2"}, {"BITCOUNT", "s", "2", "1"}, {"BITCOUNT", "s", "-100", "100"},
		{"BITCOUNT", "s", "100", "200"}, {"BITCOUNT", "s", "-100", "-50"}, {"BITCOUNT", "s", "0"}, {"BITCOUNT", "s", "0", "1", "2"},
		{"BITCOUNT", "s", "x", "1"}, {"BITCOUNT", "s", "0", "x"}, {"BITCOUNT", "s", "0", "1", "BIT", "x"},
		{"BITCOUNT", "s", "5", "30", "BIT"}, {"BITCOUNT", "s", "5", "30", "bit"}, {"BITCOUNT", "s", "5", "30", "BYTE"}, {"BITCOUNT", "s", "0", "0", "BIT"},
		{"BITCOUNT", "s", "1", "1", "BIT"}, {"BITCOUNT", "s", "7", "8", "BIT"}, {"BITCOUNT", "s", "-1", "-1", "BIT"}, {"BITCOUNT", "s", "-8", "-1", "BIT"},
		{"BITCOUNT", "s", "-9", "-2", "BIT"}, {"BITCOUNT", "s", "3", "3", "BIT"}, {"BITCOUNT", "s", "3", "2", "BIT"}, {"BITCOUNT", "s", "0", "1000", "BIT"},
		{"BITCOUNT", "s", "-1000", "-40", "BIT"}, {"BITCOUNT", "s", "0", "1", "BITS"}, {"BITCOUNT", "s", "0", "1", "BIT\x00x"},
		{"BITCOUNT", "s", "-1", "-2", "NOSUCH"}, {"BITCOUNT", "s", "1", "-2", "NOSUCH"}, {"BITCOUNT", "s", "x", "-2", "NOSUCH"},
		{"BITCOUNT", "s", "-9223372036854775808", "9223372036854775807"}, {"BITCOUNT", "s", "-9223372036854775808", "9223372036854775807", "BIT"},
		{"BITCOUNT", "s", "9223372036854775807", "-9223372036854775808", "BIT"}, {"BITCOUNT", "s", "0", "9223372036854775808"},
		{"BITCOUNT", "nokey"}, {"BITCOUNT", "nokey", "0"}, {"BITCOUNT", "nokey", "x", "y", "z", "w"}, {"BITCOUNT", "empty"},
		{"BITCOUNT", "empty", "0", "-1"}, {"BITCOUNT", "empty", "0"}, {"BITCOUNT", "empty", "0", "0", "BIT"},
		{"BITCOUNT", "i"}, {"BITCOUNT", "i", "0", "0", "BIT"},
		// BITPOS.
		{"SET", "p", "\xff\xf0\x00"}, {"BITPOS", "p", "0"}, {"BITPOS", "p", "1"}, {"BITPOS", "p", "0", "2"}, {"BITPOS", "p", "1", "2"},
		{"BITPOS", "p", "0", "0", "0"}, {"BITPOS", "p", "0", "0", "1"}, {"BITPOS", "p", "1", "1", "-1"}, {"BITPOS", "p", "0", "-1"},
		{"BITPOS", "p", "0", "-1", "-1"}, {"BITPOS", "p", "1", "2", "-1"}, {"BITPOS", "p", "0", "2", "1"}, {"BITPOS", "p", "1", "-100", "100"},
		{"BITPOS", "p", "0", "0", "10", "BIT"}, {"BITPOS", "p", "0", "12", "15", "BIT"}, {"BITPOS", "p", "0", "12", "12", "BIT"},
		{"BITPOS", "p", "1", "12", "23", "BIT"}, {"BITPOS", "p", "1", "3", "5", "BIT"}, {"BITPOS", "p", "0", "3", "11", "bit"},
		{"BITPOS", "p", "1", "0", "-1", "BIT"}, {"BITPOS", "p", "0", "-12", "-1", "BIT"}, {"BITPOS", "p", "1", "-12", "-1", "BIT"},
		{"BITPOS", "p", "0", "0", "-1", "BYTE"}, {"BITPOS", "p", "0", "0", "1", "BYTE"}, {"BITPOS", "p", "1", "5", "2", "BIT"},
		{"BITPOS", "p", "0", "9", "10", "BIT"}, {"BITPOS", "p", "1", "9", "10", "BIT"}, {"BITPOS", "p", "0", "1", "14", "BIT"},
		{"BITPOS", "p", "1", "20", "21", "BIT"}, {"BITPOS", "p", "0", "1", "2", "BITS"}, {"BITPOS", "p", "0", "1", "x", "BITS"},
		{"BITPOS", "p", "0", "1", "x", "BIT"}, {"BITPOS", "p", "0", "x"}, {"BITPOS", "p", "0", "0", "x"}, {"BITPOS", "p", "0", "0", "1", "BIT", "x"},
		{"BITPOS", "p", "2"}, {"BITPOS", "p", "-1"}, {"BITPOS", "p", "x"}, {"BITPOS", "p", ""},
		{"BITPOS", "nokey", "0"}, {"BITPOS", "nokey", "1"}, {"BITPOS", "nokey", "0", "5", "10"}, {"BITPOS", "nokey", "1", "x", "y", "z", "w"},
		{"BITPOS", "nokey", "2"}, {"BITPOS", "empty", "0"}, {"BITPOS", "empty", "1"}, {"BITPOS", "empty", "0", "0"}, {"BITPOS", "empty", "0", "0", "-1"},
		{"SET", "ones", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"}, {"BITPOS", "ones", "0"}, {"BITPOS", "ones", "0", "3"}, {"BITPOS", "ones", "0", "3", "-1"},
		{"BITPOS", "ones", "0", "3", "5"}, {"BITPOS", "ones", "0", "3", "100"}, {"BITPOS", "ones", "0", "0", "79", "BIT"}, {"BITPOS", "ones", "0", "5", "8", "BIT"},
		{"BITPOS", "ones", "1", "5", "8", "BIT"}, {"BITPOS", "ones", "0", "70", "-1", "BIT"}, {"BITPOS", "ones", "0", "9", "9"},
		{"SET", "zeros", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"}, {"BITPOS", "zeros", "1"}, {"BITPOS", "zeros", "0"},
		{"BITPOS", "zeros", "1", "3", "-1"}, {"BITPOS", "zeros", "1", "0", "95", "BIT"}, {"BITPOS", "zeros", "0", "17", "95", "BIT"},
		{"SETBIT", "zeros", "94", "1"}, {"BITPOS", "zeros", "1"}, {"BITPOS", "zeros", "1", "-1"}, {"BITPOS", "zeros", "1", "90", "93", "BIT"},
		{"BITPOS", "zeros", "1", "90", "94", "BIT"}, {"BITPOS", "zeros", "1", "-2", "-2", "BIT"}, {"BITPOS", "zeros", "1", "8", "94", "BIT"},
		{"BITPOS", "i", "1"}, {"BITPOS", "i", "0", "0", "3", "BIT"},
		{"BITPOS", "p", "0", "-9223372036854775808", "9223372036854775807"}, {"BITPOS", "p", "1", "-9223372036854775808", "9223372036854775807", "BIT"},
		// BITOP.
		{"SET", "k1", "foobar"}, {"SET", "k2", "abcdef"}, {"SET", "k3", "\xff"}, {"BITOP", "AND", "dest", "k1", "k2"}, {"GET", "dest"},
		{"OBJECT", "ENCODING", "dest"}, {"BITOP", "OR", "dest", "k1", "k2"}, {"GET", "dest"}, {"BITOP", "XOR", "dest", "k1", "k2", "k3"}, {"GET", "dest"},
		{"BITOP", "NOT", "dest", "k1"}, {"GET", "dest"}, {"BITOP", "not", "dest", "k1", "k2"}, {"BITOP", "NOT", "dest", "k3"}, {"GET", "dest"},
		{"BITOP", "AND", "dest", "k1", "k3"}, {"GET", "dest"}, {"BITOP", "OR", "dest", "k3", "k1"}, {"GET", "dest"},
		{"BITOP", "AND", "dest", "k1", "nokey"}, {"GET", "dest"}, {"STRLEN", "dest"}, {"BITOP", "OR", "dest", "nokey", "k3"}, {"GET", "dest"},
		{"BITOP", "XOR", "dest", "nokey", "nokey2"}, {"EXISTS", "dest"}, {"BITOP", "XOR", "dest", "nokey"}, {"BITOP", "NOT", "dest", "nokey"},
		{"BITOP", "AND", "dest", "empty"}, {"SET", "dest", "x"}, {"BITOP", "AND", "dest", "empty", "nokey"}, {"EXISTS", "dest"},
		{"BITOP", "NAND", "dest", "k1"}, {"BITOP", "AND\x00x", "dest", "k1"}, {"BITOP", "ANDX", "dest", "k1"}, {"BITOP", "", "dest", "k1"},
		{"BITOP", "NOT", "dest"}, {"BITOP", "AND", "dest"}, {"BITOP", "NOT", "dest", "nokey", "k1"},
		{"SET", "n", "7"}, {"BITOP", "OR", "dn", "n"}, {"GET", "dn"}, {"OBJECT", "ENCODING", "dn"}, {"OBJECT", "REFCOUNT", "dn"},
		{"BITOP", "AND", "k1", "k1", "k2"}, {"GET", "k1"}, {"SET", "ttl", "v", "EX", "1000"}, {"BITOP", "OR", "ttl", "k2"}, {"TTL", "ttl"},
		{"SET", "long", strings.Repeat("\x5a", 100)}, {"SET", "long2", strings.Repeat("\xa5\x0f", 45)},
		{"BITOP", "AND", "dl", "long", "long2"}, {"GET", "dl"}, {"BITOP", "OR", "dl", "long", "long2"}, {"GET", "dl"},
		{"BITOP", "XOR", "dl", "long", "long2", "k2"}, {"GET", "dl"}, {"BITOP", "NOT", "dl", "long2"}, {"GET", "dl"},
		// BITFIELD.
		{"BITFIELD", "f", "SET", "u8", "0", "255"}, {"GET", "f"}, {"OBJECT", "ENCODING", "f"}, {"BITFIELD", "f", "GET", "u8", "0", "GET", "i8", "0"},
		{"BITFIELD", "f", "INCRBY", "u8", "0", "1"}, {"BITFIELD", "f", "INCRBY", "i5", "100", "1", "GET", "u4", "0"},
		{"BITFIELD", "f", "SET", "i8", "#1", "-100", "GET", "i8", "#1", "GET", "u8", "8"}, {"BITFIELD", "f", "GET", "u8", "#-1"},
		{"BITFIELD", "f", "GET", "u8", "#x"}, {"BITFIELD", "f", "GET", "u8", "##1"}, {"BITFIELD", "f", "GET", "u8", "#"},
		{"BITFIELD", "f", "GET", "i64", "0", "GET", "u63", "1", "GET", "i1", "0", "GET", "u1", "0"}, {"BITFIELD", "f", "GET", "u64", "0"},
		{"BITFIELD", "f", "GET", "i65", "0"}, {"BITFIELD", "f", "GET", "i0", "0"}, {"BITFIELD", "f", "GET", "u0", "0"}, {"BITFIELD", "f", "GET", "I8", "0"},
		{"BITFIELD", "f", "GET", "U8", "0"}, {"BITFIELD", "f", "GET", "8", "0"}, {"BITFIELD", "f", "GET", "i", "0"}, {"BITFIELD", "f", "GET", "", "0"},
		{"BITFIELD", "f", "GET", "i08", "0"}, {"BITFIELD", "f", "GET", "i-8", "0"}, {"BITFIELD", "f", "GET", "i8\x00x", "0"},
		{"BITFIELD", "f", "GET", "u8 ", "0"}, {"BITFIELD", "f", "GET", "u8", "0", "SET"}, {"BITFIELD", "f", "GET"}, {"BITFIELD", "f", "GET", "u8"},
		{"BITFIELD", "f", "SET", "u8", "0"}, {"BITFIELD", "f", "INCRBY", "u8", "0"}, {"BITFIELD", "f", "NOSUCH", "u8", "0"},
		{"BITFIELD", "f", "OVERFLOW"}, {"BITFIELD", "f", "OVERFLOW", "NOSUCH"}, {"BITFIELD", "f", "OVERFLOW", "sat"}, {"BITFIELD", "f", "overflow", "FAIL", "get", "u2", "0"},
		{"BITFIELD", "f", "OVERFLOW", "WRAP\x00x", "INCRBY", "u2", "0", "5"}, {"BITFIELD", "f", "GET\x00y", "u8", "0"},
		{"BITFIELD", "f", "SET", "u8", "0", "x"}, {"BITFIELD", "f", "SET", "u8", "0", "1.5"}, {"BITFIELD", "f", "SET", "u8", "0", "18446744073709551616"},
		{"BITFIELD", "f", "SET", "x8", "0", "x"}, {"BITFIELD", "f", "SET", "u8", "-1", "x"}, {"BITFIELD", "f", "GET", "u8", "0", "SET", "u8", "0", "1", "GET", "u8", "-1"},
		{"BITFIELD", "f", "GET", "u8", "4294967288"}, {"BITFIELD", "f", "GET", "u8", "4294967296"}, {"BITFIELD", "f", "GET", "u8", "#536870911"},
		{"BITFIELD", "f", "GET", "u8", "#536870912"}, {"BITFIELD", "f", "GET", "u2", "#2305843009213693952"}, {"BITFIELD", "f", "GET", "u8", "#2305843009213693952"},
		{"BITFIELD", "f", "GET", "u8", "#4611686018427387904"}, {"BITFIELD", "f", "GET", "i64", "#144115188075855872"}, {"BITFIELD", "f", "GET", "u4", "#-9223372036854775808"},
		{"BITFIELD", "f", "GET", "u8", "9223372036854775807"}, {"BITFIELD", "f", "GET", "i64", "4294967295"}, {"BITFIELD", "f", "GET", "u8", "-0"},
		{"BITFIELD", "f"}, {"BITFIELD", "nokey"}, {"EXISTS", "nokey"}, {"BITFIELD", "nokey", "GET", "i8", "0"}, {"EXISTS", "nokey"},
		{"BITFIELD", "f", "SET", "u8", "0", "1", "OVERFLOW"}, {"BITFIELD", "f", "SET", "u8", "0", "1", "NOSUCH"}, {"GET", "f"},
		{"BITFIELD_RO", "f", "GET", "u8", "0", "GET", "i4", "#3"}, {"BITFIELD_RO", "f", "SET", "u8", "0", "1"}, {"BITFIELD_RO", "f", "INCRBY", "u8", "0", "1"},
		{"BITFIELD_RO", "f", "OVERFLOW", "SAT"}, {"BITFIELD_RO", "f", "OVERFLOW", "SAT", "GET", "u8", "0"}, {"BITFIELD_RO", "f", "SET", "u8", "0", "x"},
		{"BITFIELD_RO", "f", "SET", "u8", "0"}, {"BITFIELD_RO", "nokey", "GET", "u8", "0"}, {"BITFIELD_RO", "nokey"}, {"BITFIELD_RO", "f"},
		{"BITFIELD_RO", "nokey", "SET", "u8", "0", "1"}, {"EXISTS", "nokey"},
		{"SET", "fi", "100"}, {"BITFIELD", "fi", "GET", "u8", "0"}, {"OBJECT", "ENCODING", "fi"}, {"OBJECT", "REFCOUNT", "fi"},
		{"BITFIELD", "fi", "SET", "u8", "0", "49"}, {"OBJECT", "ENCODING", "fi"}, {"OBJECT", "REFCOUNT", "fi"}, {"GET", "fi"},
		{"SET", "fi", "100"}, {"BITFIELD", "fi", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1000"}, {"OBJECT", "ENCODING", "fi"}, {"GET", "fi"},
		{"BITFIELD", "ff", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "10"}, {"EXISTS", "ff"}, {"GET", "ff"}, {"OBJECT", "ENCODING", "ff"},
		{"BITFIELD", "ff", "OVERFLOW", "FAIL", "SET", "u2", "20", "10", "GET", "u8", "0"}, {"GET", "ff"},
		{"BITFIELD", "ff", "SET", "u1", "3", "0"}, {"GET", "ff"}, {"BITFIELD", "ff", "SET", "i64", "1", "-1", "GET", "u63", "1", "GET", "i64", "1"}, {"GET", "ff"},
		{"BITFIELD", "ff", "INCRBY", "i64", "1", "1", "INCRBY", "i64", "1", "-1", "GET", "u8", "70"},
		{"BITFIELD", "ff", "SET", "u8", "200", "1", "GET", "u8", "200", "GET", "u8", "1000"}, {"STRLEN", "ff"},
		{"BITFIELD", "ff", "SET", "u3", "7", "5", "SET", "u3", "7", "2", "SET", "u3", "7", "5"}, {"GET", "ff"},
		{"APPEND", "ff", "tail"}, {"BITFIELD", "ff", "GET", "u32", "#7"}, {"SETRANGE", "ff", "0", "AB"}, {"BITFIELD", "ff", "GET", "u16", "0"},
		// In transactions.
		{"MULTI"}, {"SETBIT", "m", "3", "1"}, {"SETBIT", "m", "x", "1"}, {"BITFIELD", "m", "INCRBY", "u4", "0", "3"}, {"BITCOUNT", "m"}, {"EXEC"},
		{"MULTI"}, {"SETBIT", "m"}, {"BITCOUNT", "m"}, {"EXEC"},
	}
}

func TestCompatBitCommands(t *testing.T) {
	compareWithRedis(t, bitScript())
}

func TestCompatBitCommandsRESP3(t *testing.T) {
	compareWithRedis(t, append([][]string{{"HELLO", "3"}}, bitScript()...))
}

func TestCompatBitArity(t *testing.T) {
	var script [][]string
	for _, name := range []string{"SETBIT", "GETBIT", "BITCOUNT", "BITPOS", "BITOP", "BITFIELD", "BITFIELD_RO"} {
		script = append(script, []string{name}, []string{strings.ToLower(name), "k"}, []string{name, "k", "1"},
			[]string{name, "k", "1", "0"}, []string{name, "k", "0", "1", "2", "BIT", "x"})
	}
	compareWithRedis(t, script)
}

// TestCompatBitCommandInfo compares what COMMAND INFO and DOCS say of
// each bitmap command with Redis's.
func TestCompatBitCommandInfo(t *testing.T) {
	compareCommandInfo(t, "setbit", "getbit", "bitcount", "bitpos", "bitop", "bitfield", "bitfield_ro")
}

func TestCompatBitEvents(t *testing.T) {
	compareEvents(t, [][]string{
		{"SETBIT", "b", "3", "1"}, {"SETBIT", "b", "3", "1"}, {"SETBIT", "b", "3", "0"}, {"SETBIT", "b", "100", "0"}, {"SETBIT", "b", "x", "1"},
		{"GETBIT", "b", "3"}, {"BITCOUNT", "b"}, {"BITPOS", "b", "1"},
		{"BITFIELD", "f", "SET", "u8", "0", "1", "INCRBY", "u8", "0", "1"}, {"BITFIELD", "f", "SET", "u8", "0", "2"}, {"BITFIELD", "f", "GET", "u8", "0"},
		{"BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1000"}, {"BITFIELD", "g", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1000"},
		{"BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "100", "1000"}, {"BITFIELD", "f", "SET", "u8", "200", "0"},
		{"BITFIELD_RO", "f", "GET", "u8", "0"}, {"SET", "i", "7"}, {"SETBIT", "i", "0", "0"}, {"BITFIELD", "i", "SET", "u8", "0", "55"},
		{"BITOP", "OR", "d", "b", "f"}, {"BITOP", "NOT", "d", "b"}, {"BITOP", "AND", "d", "nokey"}, {"BITOP", "AND", "d", "nokey"},
		{"SET", "t", "v", "EX", "100"}, {"BITOP", "XOR", "t", "b"}, {"BITOP", "NOT", "d", "b", "f"}, {"SETBIT", "b", "0", "1"},
	})
}

func TestCompatBitKeyspaceStats(t *testing.T) {
	compareStats(t, [][]string{
		{"SETBIT", "b", "3", "1"}, {"SETBIT", "b", "3", "1"}, {"SETBIT", "nokey", "x", "1"}, {"GETBIT", "b", "3"}, {"GETBIT", "nokey", "3"},
		{"BITCOUNT", "b"}, {"BITCOUNT", "nokey"}, {"BITPOS", "b", "1"}, {"BITPOS", "nokey", "1"}, {"BITPOS", "nokey", "2"},
		{"BITOP", "OR", "d", "b", "nokey", "b"}, {"BITOP", "AND", "d", "nokey"}, {"BITOP", "AND", "d", "nokey"},
		{"BITFIELD", "f", "SET", "u8", "0", "1", "INCRBY", "u8", "0", "1", "SET", "u8", "8", "0", "GET", "u8", "0"},
		{"BITFIELD", "f", "SET", "u8", "0", "2", "SET", "u8", "8", "0"}, {"BITFIELD", "f", "GET", "u8", "0"}, {"BITFIELD", "nokey", "GET", "u8", "0"},
		{"BITFIELD", "g", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"}, {"BITFIELD_RO", "f", "GET", "u8", "0"}, {"BITFIELD_RO", "nokey"},
		{"LPUSH", "l", "a"}, {"GETBIT", "l", "0"}, {"BITCOUNT", "l"}, {"BITPOS", "l", "0"}, {"BITFIELD_RO", "l", "GET", "u8", "0"},
		{"SETBIT", "l", "0", "1"}, {"BITOP", "OR", "d", "b", "l"},
	}, "keyspace_", "rdb_changes_since_last_save")
}

// TestBitGoRedis runs each bitmap command through go-redis.
func TestBitGoRedis(t *testing.T) {
	c, ctx := serverAndClient(t)
	if n, err := c.SetBit(ctx, "b", 7, 1).Result(); n != 0 || err != nil {
		t.Fatalf("SETBIT = %d, %v; want 0", n, err)
	}
	if n, err := c.SetBit(ctx, "b", 7, 0).Result(); n != 1 || err != nil {
		t.Errorf("SETBIT again = %d, %v; want 1", n, err)
	}
	c.SetBit(ctx, "b", 9, 1)
	if n, err := c.GetBit(ctx, "b", 9).Result(); n != 1 || err != nil {
		t.Errorf("GETBIT = %d, %v; want 1", n, err)
	}
	if v := c.Get(ctx, "b").Val(); v != "\x00\x40" {
		t.Errorf("GET after SETBIT = %q; want \\x00\\x40", v)
	}
	c.Set(ctx, "s", "foobar", 0)
	for _, tc := range []struct {
		name string
		bc   *redis.BitCount
		want int64
	}{
		{"whole", nil, 26},
		{"bytes", &redis.BitCount{Start: 1, End: 1}, 6},
		{"negative", &redis.BitCount{Start: -2, End: -1}, 7},
		{"bits", &redis.BitCount{Start: 5, End: 30, Unit: "BIT"}, 17},
	} {
		if n, err := c.BitCount(ctx, "s", tc.bc).Result(); n != tc.want || err != nil {
			t.Errorf("BITCOUNT %s = %d, %v; want %d", tc.name, n, err, tc.want)
		}
	}
	c.Set(ctx, "p", "\xff\xf0\x00", 0)
	if n, err := c.BitPos(ctx, "p", 0).Result(); n != 12 || err != nil {
		t.Errorf("BITPOS 0 = %d, %v; want 12", n, err)
	}
	if n, err := c.BitPos(ctx, "p", 1, 2).Result(); n != -1 || err != nil {
		t.Errorf("BITPOS 1 2 = %d, %v; want -1", n, err)
	}
	if n, err := c.BitPos(ctx, "p", 0, 0, 0).Result(); n != -1 || err != nil {
		t.Errorf("BITPOS 0 0 0 = %d, %v; want -1 (no clear bit within the range)", n, err)
	}
	c.Set(ctx, "ones", "\xff", 0)
	if n, err := c.BitPos(ctx, "ones", 0).Result(); n != 8 || err != nil {
		t.Errorf("BITPOS of all ones = %d, %v; want 8, the bit past the end", n, err)
	}
	if n, err := c.BitPosSpan(ctx, "p", 1, 10, 15, "bit").Result(); n != 10 || err != nil {
		t.Errorf("BITPOS 1 10 15 BIT = %d, %v; want 10", n, err)
	}
	c.Set(ctx, "k1", "foobar", 0)
	c.Set(ctx, "k2", "abcdef", 0)
	for _, tc := range []struct {
		name string
		op   func(ctx context.Context, dst string, keys ...string) *redis.IntCmd
		want string
	}{
		{"AND", c.BitOpAnd, "`bc`ab"},
		{"OR", c.BitOpOr, "goofev"},
		{"XOR", c.BitOpXor, "\x07\r\x0c\x06\x04\x14"},
		{"NOT", func(ctx context.Context, dst string, keys ...string) *redis.IntCmd {
			return c.BitOpNot(ctx, dst, keys[0])
		}, "\x99\x90\x90\x9d\x9e\x8d"},
	} {
		if n, err := tc.op(ctx, "d", "k1", "k2").Result(); n != 6 || err != nil {
			t.Errorf("BITOP %s = %d, %v; want 6", tc.name, n, err)
		}
		if v := c.Get(ctx, "d").Val(); v != tc.want {
			t.Errorf("GET after BITOP %s = %q; want %q", tc.name, v, tc.want)
		}
	}
	if err := c.BitOpDiff(ctx, "d", "k1", "k2").Err(); err == nil || err.Error() != "ERR syntax error" {
		t.Errorf("BITOP DIFF (Redis 8's) = %v; want Redis 7.0's syntax error", err)
	}
	if n, err := c.BitOpAnd(ctx, "d", "nokey").Result(); n != 0 || err != nil || c.Exists(ctx, "d").Val() != 0 {
		t.Errorf("BITOP AND of a missing key = %d, %v; want 0 and the destination deleted", n, err)
	}
	if vs, err := c.BitField(ctx, "f", "SET", "u8", 0, 200, "INCRBY", "u8", 0, 100, "GET", "i8", 0).Result(); err != nil || !slices.Equal(vs, []int64{0, 44, 44}) {
		t.Errorf("BITFIELD = %v, %v; want [0 44 44]", vs, err)
	}
	if vs, err := c.Do(ctx, "BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 250, "GET", "u8", 0).Slice(); err != nil || fmt.Sprint(vs) != "[<nil> 44]" {
		t.Errorf("BITFIELD OVERFLOW FAIL = %v, %v; want [<nil> 44]", vs, err)
	}
	if vs, err := c.BitFieldRO(ctx, "f", "u8", 0, "i4", "#1").Result(); err != nil || !slices.Equal(vs, []int64{44, -4}) {
		t.Errorf("BITFIELD_RO = %v, %v; want [44 -4]", vs, err)
	}

	// Errors.
	c.LPush(ctx, "l", "a")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"SETBIT wrong type", c.SetBit(ctx, "l", 0, 1).Err(), errWrongType},
		{"BITOP wrong type", c.BitOpOr(ctx, "d", "k1", "l").Err(), errWrongType},
		{"SETBIT bad offset", c.SetBit(ctx, "b", -1, 1).Err(), errBitOffset},
		{"SETBIT past 512 MB", c.SetBit(ctx, "b", 1<<32, 1).Err(), errBitOffset},
		{"SETBIT bad bit", c.SetBit(ctx, "b", 0, 2).Err(), errBitValue},
		{"BITPOS bad bit", c.BitPos(ctx, "b", 2).Err(), "ERR The bit argument must be 1 or 0."},
		{"BITCOUNT bad unit", c.Do(ctx, "BITCOUNT", "s", 0, 1, "BITS").Err(), errSyntax},
		{"BITOP NOT of two", c.Do(ctx, "BITOP", "NOT", "d", "k1", "k2").Err(), "ERR BITOP NOT must be called with a single source key."},
		{"BITFIELD u64", c.BitField(ctx, "f", "GET", "u64", 0).Err(), errBitfieldType},
		{"BITFIELD overflow", c.BitField(ctx, "f", "OVERFLOW", "LOOSE").Err(), "ERR Invalid OVERFLOW type specified"},
		{"BITFIELD_RO SET", c.Do(ctx, "BITFIELD_RO", "f", "SET", "u8", 0, 1).Err(), "ERR BITFIELD_RO only supports the GET subcommand"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%s: %v; want %s", tc.name, tc.err, tc.want)
		}
	}
}

// TestBitWatch checks which bit commands fail the EXEC of a client
// WATCHing their key: those that change it, as Redis's signal it.
func TestBitWatch(t *testing.T) {
	_, addr := startServer(t, Config{})
	c, other := goRedis(t, addr), goRedis(t, addr)
	ctx := context.Background()
	c.SetBit(ctx, "b", 3, 1)
	c.Set(ctx, "src", "x", 0)
	checkWatch(t, c, "b", []watchCase{
		{"SETBIT of a bit already set", func() error { return other.SetBit(ctx, "b", 3, 1).Err() }, false},
		{"SETBIT that clears a bit", func() error { return other.SetBit(ctx, "b", 3, 0).Err() }, true},
		{"SETBIT 0 that grows the string", func() error { return other.SetBit(ctx, "b", 64, 0).Err() }, true},
		{"GETBIT", func() error { return other.GetBit(ctx, "b", 3).Err() }, false},
		{"BITFIELD GET", func() error { return other.BitField(ctx, "b", "GET", "u8", 0).Err() }, false},
		{"BITFIELD SET of the same value", func() error { return other.BitField(ctx, "b", "SET", "u8", 0, 0).Err() }, false},
		{"BITFIELD INCRBY", func() error { return other.BitField(ctx, "b", "INCRBY", "u8", 0, 1).Err() }, true},
		{"BITFIELD that fails", func() error { return other.Do(ctx, "BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 300).Err() }, false},
		{"BITFIELD that fails and grows the string", func() error {
			return other.Do(ctx, "BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u8", 200, 300).Err()
		}, false},
		{"BITOP onto it", func() error { return other.BitOpNot(ctx, "b", "src").Err() }, true},
		{"BITOP of it", func() error { return other.BitOpNot(ctx, "d", "b").Err() }, false},
		{"BITOP deleting it", func() error { return other.BitOpAnd(ctx, "b", "nokey").Err() }, true},
		{"BITOP deleting it when absent", func() error { return other.BitOpAnd(ctx, "b", "nokey").Err() }, false},
	})
}

// TestBitAppendOnly checks that the log replays the bitmaps as written,
// before and after a rewrite, with a BITFIELD that created its key while
// every write failed on OVERFLOW FAIL (which Redis leaves out of its log).
func TestBitAppendOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := Config{AppendOnly: true, AppendFsync: "always", Dir: dir}
	ctx := context.Background()
	keys := []string{"b", "f", "failed", "d", "small"}
	want := map[string]string{}
	func() {
		s, addr := startServer(t, cfg)
		c := goRedis(t, addr)
		c.SetBit(ctx, "b", 1000, 1)
		c.SetBit(ctx, "b", 3, 1)
		c.SetBit(ctx, "b", 3, 1)
		c.BitField(ctx, "f", "SET", "i16", "#3", -300, "INCRBY", "u4", 1, 9, "GET", "u8", 0)
		c.Do(ctx, "BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 9)
		c.Do(ctx, "BITFIELD", "failed", "OVERFLOW", "FAIL", "INCRBY", "u2", 90, 9)
		c.BitOpXor(ctx, "d", "b", "f")
		c.BitOpAnd(ctx, "gone", "nokey")
		c.Set(ctx, "small", "5", 0)
		c.SetBit(ctx, "small", 6, 1)
		for _, k := range keys {
			want[k] = c.Get(ctx, k).Val()
		}
		if want["failed"] != "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" {
			t.Errorf("GET failed = %q; want the 12 bytes BITFIELD made room for", want["failed"])
		}
		if err := s.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	}()
	check := func(when string, c *redis.Client) {
		t.Helper()
		for _, k := range keys {
			if got, err := c.Get(ctx, k).Result(); got != want[k] || err != nil {
				t.Errorf("%s, GET %s = %q, %v; want %q", when, k, got, err, want[k])
			}
		}
		if n := c.Exists(ctx, "gone").Val(); n != 0 {
			t.Errorf("%s, EXISTS gone = %d; want 0", when, n)
		}
	}
	replayAndRewrite(t, cfg, check)
}

// TestCompatBitOffsetLimit: offsets address bytes below
// proto-max-bulk-len, as in Redis: SETBIT, GETBIT and BITFIELD (#n too)
// refuse the first bit past it, and a BITFIELD field that starts below it
// may end past it.
func TestCompatBitOffsetLimit(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"CONFIG", "SET", "proto-max-bulk-len", "1mb"},
		{"SETBIT", "b", "8388608", "1"}, {"GETBIT", "b", "8388608"}, {"EXISTS", "b"}, {"SETBIT", "b", "8388607", "1"}, {"STRLEN", "b"},
		{"GETBIT", "b", "8388607"}, {"BITCOUNT", "b"}, {"BITPOS", "b", "1"}, {"APPEND", "b", "x"},
		{"BITFIELD", "f", "SET", "u8", "#1048576", "1"}, {"BITFIELD", "f", "GET", "u8", "#1048576"}, {"BITFIELD", "f", "SET", "u8", "#1048575", "1"},
		{"STRLEN", "f"}, {"BITFIELD", "g", "SET", "i64", "8388607", "-1"}, {"STRLEN", "g"}, {"BITFIELD", "g", "GET", "i64", "8388607"},
		{"SETRANGE", "g", "1048576", "x"},
	})
}

// TestBitOffsetAllocates checks that SETBIT at the highest offset
// proto-max-bulk-len allows allocates the string once, to measure, and a
// SETBIT that changes a bit of it changes it in place.
func TestBitOffsetAllocates(t *testing.T) {
	_, addr := startServer(t, Config{ProtoMaxBulkLen: 8 << 20})
	rc := dialRaw(t, addr)
	before := liveHeap()
	if got := rc.do("SETBIT", "b", strconv.Itoa(8<<23-1), "1"); got != ":0\r\n" {
		t.Fatalf("SETBIT at the last bit = %q", got)
	}
	if grown := int64(liveHeap()) - int64(before); grown < 8<<20 || grown > 9<<20 {
		t.Errorf("an 8 MB bitmap grew the live heap by %d bytes; want 8 MB", grown)
	}
	allocated := totalAlloc()
	if got := rc.do("SETBIT", "b", "0", "1"); got != ":0\r\n" {
		t.Fatalf("SETBIT 0 = %q", got)
	}
	if n := totalAlloc() - allocated; n > 1<<20 {
		t.Errorf("SETBIT of one bit of an 8 MB bitmap allocated %d bytes; want it changed in place", n)
	}
	if got := rc.do("SETBIT", "b", strconv.Itoa(8<<23), "1"); got != "-"+errBitOffset+"\r\n" {
		t.Errorf("SETBIT past the limit = %q", got)
	}
}

// TestBitDifferential sends random bitmap commands, over short strings
// and ranges around their ends, to evkv and Redis and compares every
// reply.
func TestBitDifferential(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(len(proto))))
			script := [][]string{{"HELLO", proto}}
			for range 3000 {
				script = append(script, randomBitCommand(rng))
			}
			compareWithRedis(t, script)
		})
	}
}

func randomBitCommand(rng *rand.Rand) []string {
	key := func() string { return string(rune('a' + rng.IntN(4))) }
	num := func(lo, hi int) string { return strconv.Itoa(lo + rng.IntN(hi-lo+1)) }
	unit := func(args []string) []string {
		switch rng.IntN(3) {
		case 0:
			return append(args, "BIT")
		case 1:
			return append(args, "BYTE")
		}
		return args
	}
	typ := func() string {
		if rng.IntN(2) == 0 {
			return "i" + num(1, 64)
		}
		return "u" + num(1, 63)
	}
	value := func() string {
		if rng.IntN(4) == 0 {
			return strconv.FormatInt(int64(rng.Uint64()), 10)
		}
		return num(-300, 300)
	}
	switch rng.IntN(16) {
	case 0:
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = []byte{0, 0xff, byte(rng.IntN(256))}[rng.IntN(3)]
		}
		return []string{"SET", key(), string(b)}
	case 1, 2:
		return []string{"SETBIT", key(), num(0, 100), num(0, 1)}
	case 3:
		return []string{"GETBIT", key(), num(0, 100)}
	case 4:
		if rng.IntN(4) == 0 {
			return []string{"BITCOUNT", key()}
		}
		return unit([]string{"BITCOUNT", key(), num(-100, 100), num(-100, 100)})
	case 5, 6:
		args := []string{"BITPOS", key(), num(0, 1)}
		switch rng.IntN(4) {
		case 0:
			return args
		case 1:
			return append(args, num(-15, 15))
		}
		return unit(append(args, num(-100, 100), num(-100, 100)))
	case 7:
		op := []string{"AND", "OR", "XOR", "NOT"}[rng.IntN(4)]
		args := []string{"BITOP", op, key(), key()}
		if op != "NOT" {
			for range rng.IntN(3) {
				args = append(args, key())
			}
		}
		return args
	case 8, 9:
		args := []string{"BITFIELD", key()}
		if rng.IntN(5) == 0 {
			args[0] = "BITFIELD_RO"
		}
		for range 1 + rng.IntN(4) {
			offset := num(0, 90)
			if rng.IntN(4) == 0 {
				offset = "#" + num(0, 10)
			}
			switch rng.IntN(4) {
			case 0:
				args = append(args, "GET", typ(), offset)
			case 1:
				args = append(args, "SET", typ(), offset, value())
			case 2:
				args = append(args, "INCRBY", typ(), offset, value())
			case 3:
				args = append(args, "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[rng.IntN(3)])
			}
		}
		return args
	case 10:
		return []string{[]string{"GET", "STRLEN", "DEL"}[rng.IntN(3)], key()}
	case 12:
		// Values edited in place, copied and moved between keys.
		return []string{"APPEND", key(), strings.Repeat("\xff", rng.IntN(3)) + num(0, 9)}
	case 13:
		return []string{"SETRANGE", key(), num(0, 20), num(0, 999)}
	case 14:
		if rng.IntN(2) == 0 {
			return []string{"RENAME", key(), key()}
		}
		return []string{"COPY", key(), key(), "REPLACE"}
	}
	return []string{"OBJECT", "ENCODING", key()}
}
