package kv

import (
	"fmt"
	"strings"
	"time"
)

func init() {
	register(
		cmd("slowlog", -2, "", 0, 0, 0, "server", "2.2.12", "A container for slow log commands.", nil).withSubs(
			cmd("get", -2, "admin loading stale", 0, 0, 0, "", "2.2.12", "Returns the slow log's entries.", slowlogGet),
			cmd("len", 2, "admin loading stale", 0, 0, 0, "", "2.2.12", "Returns the number of entries in the slow log.", slowlogLen),
			cmd("reset", 2, "admin loading stale", 0, 0, 0, "", "2.2.12", "Clears all entries from the slow log.", slowlogReset),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "6.2.0", "Show helpful text about the different subcommands", slowlogHelp),
		),
	)
}

// Redis's bounds on what an entry keeps of its command.
const (
	slowlogMaxArgs   = 32  // SLOWLOG_ENTRY_MAX_ARGC
	slowlogMaxString = 128 // SLOWLOG_ENTRY_MAX_STRING
)

// slowlog keeps the commands that ran for at least slowerThan
// microseconds, the latest maxLen of them, as Redis's slow log does.
type slowlog struct {
	slowerThan int64 // slowlog-log-slower-than, µs; negative keeps none
	maxLen     int64 // slowlog-max-len

	entries []slowEntry // oldest first, from start on
	start   int
	nextID  int64
}

// slowEntry is one command of the slow log.
type slowEntry struct {
	id     int64
	at     int64 // Unix seconds
	micros int64
	args   []string
	peer   string
	name   string // the client's name, as CLIENT SETNAME set it
}

func newSlowlog() slowlog { return slowlog{slowerThan: 10000, maxLen: 128} }

// note logs c's command args, which ran for d, and trims the log to
// maxLen. The caller checks d against slowerThan.
func (l *slowlog) note(c *client, args [][]byte, d time.Duration, nowMs int64) {
	e := slowEntry{id: l.nextID, at: nowMs / 1000, micros: d.Microseconds(), name: c.name}
	l.nextID++
	if c.conn != nil {
		e.peer = c.peer()
	}
	n := min(len(args), slowlogMaxArgs)
	e.args = make([]string, n)
	for j := range n {
		switch a := args[j]; {
		case n != len(args) && j == n-1:
			// The last place says how many arguments did not fit.
			e.args[j] = fmt.Sprintf("... (%d more arguments)", len(args)-n+1)
		case len(a) > slowlogMaxString:
			e.args[j] = fmt.Sprintf("%s... (%d more bytes)", a[:slowlogMaxString], len(a)-slowlogMaxString)
		default:
			e.args[j] = string(a)
		}
	}
	redact(e.args, len(args))
	l.entries = append(l.entries, e)
	l.trim()
}

// redact hides the secrets of a logged command, as Redis does: AUTH's
// arguments, HELLO's AUTH credentials (its options read as HELLO reads
// them) and the values of CONFIG SET's secret settings, whether or not
// evkv has them. argc is the command's count of
// arguments before they were cut to fit.
func redact(args []string, argc int) {
	kept := len(args)
	if kept < argc {
		kept-- // the last place counts what was cut
	}
	hide := func(j int) {
		if j < kept {
			args[j] = "(redacted)"
		}
	}
	switch strings.ToLower(args[0]) {
	case "auth":
		for j := 1; j < kept; j++ {
			hide(j)
		}
	case "hello":
		for j := 2; j < kept; j++ {
			switch more := argc - 1 - j; {
			case strings.EqualFold(args[j], "auth") && more >= 2:
				hide(j + 1)
				hide(j + 2)
				j += 2
			case strings.EqualFold(args[j], "setname") && more >= 1:
				j++
			default:
				return // HELLO stops at a bad option
			}
		}
	case "config":
		if kept > 1 && strings.EqualFold(args[1], "set") {
			for j := 2; j+1 < kept; j += 2 {
				switch strings.ToLower(args[j]) {
				case "requirepass", "masterauth", "masteruser": // Redis's secret settings
					hide(j + 1)
				}
			}
		}
	}
}

// trim drops the oldest entries past maxLen, while the log is on: Redis
// trims after every command then, so a lower slowlog-max-len shortens the
// log at once.
func (l *slowlog) trim() {
	if l.slowerThan < 0 {
		return
	}
	if n := int64(len(l.entries) - l.start); n > l.maxLen {
		drop := int(n - l.maxLen)
		clear(l.entries[l.start : l.start+drop])
		l.start += drop
	}
	if l.start > 0 && l.start >= len(l.entries)/2 {
		kept := l.entries[l.start:]
		if cap(l.entries) > 4*len(kept)+64 {
			l.entries = append([]slowEntry(nil), kept...) // let a much longer log's array go
		} else {
			n := copy(l.entries, kept)
			clear(l.entries[n:])
			l.entries = l.entries[:n]
		}
		l.start = 0
	}
}

func (l *slowlog) len() int { return len(l.entries) - l.start }

func (l *slowlog) reset() {
	l.entries, l.start = nil, 0
}

func slowlogGet(s *Server, c *client, args [][]byte) {
	count := int64(10)
	if len(args) == 3 {
		n, ok := parseInt(args[2])
		if !ok || n < -1 {
			s.w.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	} else if len(args) > 3 {
		s.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try SLOWLOG HELP.")
		return
	}
	l := &s.slowlog
	if count == -1 || count > int64(l.len()) {
		count = int64(l.len())
	}
	s.w.Array(int(count))
	for i := range int(count) {
		e := &l.entries[len(l.entries)-1-i] // newest first
		s.w.Array(6)
		s.w.Int(e.id)
		s.w.Int(e.at)
		s.w.Int(e.micros)
		s.w.Array(len(e.args))
		for _, a := range e.args {
			s.w.BulkString(a)
		}
		s.w.BulkString(e.peer)
		s.w.BulkString(e.name)
	}
}

func slowlogLen(s *Server, c *client, args [][]byte) { s.w.Int(int64(s.slowlog.len())) }

func slowlogReset(s *Server, c *client, args [][]byte) {
	s.slowlog.reset()
	s.w.OK()
}

func slowlogHelp(s *Server, c *client, args [][]byte) {
	s.help("SLOWLOG",
		"GET [<count>]", "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN", "    Return the length of the slowlog.",
		"RESET", "    Reset the slowlog.",
	)
}
