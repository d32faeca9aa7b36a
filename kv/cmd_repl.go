package kv

import (
	"crypto/rand"
	"encoding/hex"
	"math"
	"time"
)

// evkv is a primary without replicas: ROLE says so, and WAIT, which waits
// for replicas to acknowledge the connection's writes, counts none.

func init() {
	register(
		cmd("role", 1, "noscript loading stale fast", 0, 0, 0, "server", "2.8.12", "Returns the replication role.", roleCommand).
			withCategories("@admin", "@fast", "@dangerous"),
		cmd("wait", 3, "noscript", 0, 0, 0, "generic", "3.0.0", "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.", waitCommand).
			withCategories("@slow", "@connection"),
	)
}

// newReplID returns a replication id: 40 random hex digits, as Redis
// makes one at start (and INFO's run_id alike).
func newReplID() string {
	var b [20]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// roleCommand replies as a primary with no replicas: its role, its
// replication offset and the list of its replicas.
func roleCommand(s *Server, c *client, args [][]byte) {
	s.w.Array(3)
	s.w.BulkString("master")
	s.w.Int(0)
	s.w.Array(0)
}

// msTimeoutArg parses a timeout in milliseconds, as Redis's
// getTimeoutFromObjectOrReply: not an integer, or negative, it answers
// Redis's error and reports false.
func (s *Server) msTimeoutArg(arg []byte) (int64, bool) {
	ms, ok := parseInt(arg)
	if !ok {
		s.w.Error("ERR timeout is not an integer or out of range")
		return 0, false
	}
	if ms < 0 {
		s.w.Error(errNegTimeout)
		return 0, false
	}
	return ms, true
}

// waitCommand answers at once when no replicas are asked for (or in a
// transaction, where nothing blocks); otherwise it blocks the client, as
// Redis does, until the timeout in milliseconds (0: for ever) or CLIENT
// UNBLOCK, and then replies that no replica acknowledged.
func waitCommand(s *Server, c *client, args [][]byte) {
	replicas, ok := parseInt(args[1])
	if !ok {
		s.w.Error(errNotInt)
		return
	}
	ms, ok := s.msTimeoutArg(args[2])
	if !ok {
		return
	}
	if replicas <= 0 {
		s.w.Int(0)
		return
	}
	timeout := time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
	s.block(c, nil, timeout, func([]byte) bool { return false }, func() { s.w.Int(0) })
}
