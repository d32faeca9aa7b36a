package kv

import "testing"

// TestKeyEvents compares the keyspace events of the commands on keys of
// any type with Redis's. COPY ... REPLACE onto an existing key publishes
// copy_to alone: Redis's copyCommand drops the old value with dbDelete,
// which publishes nothing.
func TestKeyEvents(t *testing.T) {
	compareEvents(t, [][]string{
		{"SET", "a", "1"}, {"SET", "b", "2"}, {"DEL", "a", "nokey"}, {"UNLINK", "b"},
		{"SET", "src", "v"}, {"COPY", "src", "dst"}, {"COPY", "src", "dst"}, {"COPY", "src", "dst", "REPLACE"},
		{"COPY", "src", "fresh", "REPLACE"}, {"COPY", "src", "dst", "DB", "1"}, {"COPY", "nokey", "dst", "REPLACE"},
		{"RPUSH", "l", "x"}, {"COPY", "l", "dst", "REPLACE"}, {"TYPE", "dst"},
		{"RENAME", "src", "r"}, {"RENAMENX", "r", "fresh"}, {"RENAMENX", "r", "r2"}, {"RENAME", "r2", "dst"},
		{"MOVE", "fresh", "1"}, {"EXPIRE", "dst", "100"}, {"PERSIST", "dst"}, {"PEXPIRE", "dst", "-1"},
	})
}
