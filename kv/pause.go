package kv

import (
	"math"
	"slices"
	"strings"
)

// CLIENT PAUSE, as Redis 7.0's: for a time, every client's commands
// (ALL) or those that may change the keyspace or propagate (WRITE: write
// commands, PUBLISH and the other may_replicate ones, and an EXEC with one
// of those queued) wait, in order, the client's later requests behind
// them, until the time is up or CLIENT UNPAUSE comes. Meanwhile the
// keyspace keeps still: keys whose time has come read as absent but are
// not deleted, and neither the expiry cycle nor eviction runs. The
// clients waiting count as blocked (CLIENT LIST's 'b', INFO's
// blocked_clients).

// Pause kinds, in order of strictness.
const (
	pauseOff = iota
	pauseWrite
	pauseAll
)

// pauseState is the server's CLIENT PAUSE.
type pauseState struct {
	kind      int
	end       int64     // Unix ms the pause ends at
	postponed []*client // waiting, in the order they came
}

// clientsPaused reports whether a pause is in force, ending it first if
// its time is up, as Redis's checkClientPauseTimeoutAndReturnIfPaused.
// Without a pause it is one comparison, inlined where it is asked.
func (s *Server) clientsPaused() bool { return s.pause.kind != pauseOff && s.pauseLasts() }

// pauseLasts ends the pause in force if its time is up, and reports
// whether it lasts.
func (s *Server) pauseLasts() bool {
	if s.pause.end < s.now() {
		s.unpause()
		return false
	}
	return true
}

// postpones reports whether the pause in force holds cmd, which c sends,
// back.
func (s *Server) postpones(c *client, cmd *command) bool {
	switch {
	case s.pause.kind == pauseAll:
		return true
	case cmd.flags&(cmdWrite|cmdMayReplicate) != 0:
		return true
	}
	return cmd.name == "exec" && c.flags&flagQueuedMayReplicate != 0
}

// postpone makes c wait for the pause to end, its command not run.
func (s *Server) postpone(c *client) {
	c.postponed = true
	s.pause.postponed = append(s.pause.postponed, c)
}

// unpause ends the pause: the clients waiting go on, in the order they
// came.
func (s *Server) unpause() {
	p := &s.pause
	p.kind, p.end = pauseOff, 0
	waiting := p.postponed
	p.postponed = nil
	for _, c := range waiting {
		c.postponed = false
		s.wake(c)
	}
}

// unpostpone takes c, which is going away, off the clients waiting.
func (s *Server) unpostpone(c *client) {
	if !c.postponed {
		return
	}
	c.postponed = false
	if i := slices.Index(s.pause.postponed, c); i >= 0 {
		s.pause.postponed = slices.Delete(s.pause.postponed, i, i+1)
	}
}

// clientPause is CLIENT PAUSE timeout [WRITE|ALL]: a pause already in
// force is made the stricter of the two, and as long as the longer.
func clientPause(s *Server, c *client, args [][]byte) {
	if len(args) > 4 {
		s.w.Error("ERR unknown subcommand or wrong number of arguments for '" + trunc(string(args[1]), 128) + "'. Try CLIENT HELP.")
		return
	}
	kind := pauseAll
	if len(args) == 4 {
		switch strings.ToLower(string(args[3])) {
		case "write":
			kind = pauseWrite
		case "all":
		default:
			s.w.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	ms, ok := s.msTimeoutArg(args[2])
	if !ok {
		return
	}
	now := s.now()
	var end int64 // 0: over at once, as Redis's end of 0
	if ms > 0 {
		if ms > math.MaxInt64-now {
			s.w.Error("ERR timeout is out of range")
			return
		}
		end = now + ms
	}
	if p := &s.pause; p.kind == pauseOff {
		p.kind, p.end = kind, end
	} else {
		p.kind, p.end = max(p.kind, kind), max(p.end, end)
	}
	s.clientsPaused() // one over at once (a timeout of 0) ends here
	s.w.OK()
}

func clientUnpause(s *Server, c *client, args [][]byte) {
	s.unpause()
	s.w.OK()
}
