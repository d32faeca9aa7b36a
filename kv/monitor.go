package kv

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

func init() {
	register(cmd("monitor", 1, "admin noscript loading stale", 0, 0, 0, "server", "1.0.0",
		"Listens for all requests received by the server in real time.", monitorCommand))
}

// monitorCommand makes c a monitor: every command any client runs from
// now on, but the administrative ones, is sent to it as a line, as Redis
// sends it. A client already monitoring gets no reply, as in Redis.
func monitorCommand(s *Server, c *client, args [][]byte) {
	if s.inExec {
		s.w.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if c.flags&flagMonitor != 0 {
		return
	}
	c.flags |= flagMonitor
	s.monitors = append(s.monitors, c)
	s.w.OK()
}

// stopMonitor takes c off the monitors.
func (s *Server) stopMonitor(c *client) {
	if c.flags&flagMonitor == 0 {
		return
	}
	c.flags &^= flagMonitor
	s.monitors = slices.DeleteFunc(s.monitors, func(m *client) bool { return m == c })
}

// feedMonitors sends the command c ran to the monitors, as Redis's
// replicationFeedMonitors does: "+<unix seconds.micros> [<db> <addr>]"
// and the arguments quoted, AUTH's and HELLO's passwords redacted.
func (s *Server) feedMonitors(c *client, cmd *command, args [][]byte) {
	now := time.Now()
	line := append(s.monitorBuf[:0], '+')
	line = strconv.AppendInt(line, now.Unix(), 10)
	line = append(line, '.')
	us := strconv.AppendInt(nil, int64(now.Nanosecond()/1000), 10)
	line = append(line, "000000"[len(us):]...)
	line = append(line, us...)
	line = append(line, " ["...)
	line = strconv.AppendInt(line, int64(c.db.id), 10)
	line = append(line, ' ')
	if c.script {
		line = append(line, "lua"...) // a script's command
	} else if ua, ok := c.conn.LocalAddr().(*net.UnixAddr); ok {
		line = append(line, "unix:"...) // Redis's monitors see the socket's path so
		line = append(line, ua.Name...)
	} else {
		line = append(line, c.peer()...)
	}
	line = append(line, "] "...)
	for i, a := range args {
		if i > 0 {
			line = append(line, ' ')
		}
		if redacted(cmd, args, i) {
			a = []byte("(redacted)")
		}
		line = appendRepr(line, a)
	}
	line = append(line, "\r\n"...)
	s.monitorBuf = line
	for _, m := range s.monitors {
		w, send := s.to(m, false)
		w.Buf = append(w.Buf, line...)
		send()
	}
}

// redacted reports whether argument i of a command is a password that
// Redis shows its monitors as "(redacted)": AUTH's, and HELLO's after AUTH
// and the user name.
func redacted(cmd *command, args [][]byte, i int) bool {
	switch cmd.name {
	case "auth":
		return i > 0
	case "hello":
		// Its options read as HELLO reads them: SETNAME takes a word,
		// AUTH two, each AUTH's redacted.
		for j := 2; j < len(args); j++ {
			switch {
			case strings.EqualFold(string(args[j]), "auth") && j+2 < len(args):
				if i == j+1 || i == j+2 {
					return true
				}
				j += 2
			case strings.EqualFold(string(args[j]), "setname") && j+1 < len(args):
				j++
			}
		}
	}
	return false
}

// appendRepr appends b quoted as Redis's sdscatrepr quotes it: escapes
// for the quote, backslash and control characters, \x.. for the other
// bytes that do not print.
func appendRepr(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, ch := range b {
		switch ch {
		case '\\', '"':
			dst = append(dst, '\\', ch)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if ch >= ' ' && ch <= '~' {
				dst = append(dst, ch)
			} else {
				dst = append(dst, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(dst, '"')
}
