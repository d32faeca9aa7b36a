package kv

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"time"
)

// Error replies, worded as Redis words them: clients and their tests match
// on the text.
const (
	errSyntax     = "ERR syntax error"
	errNotInt     = "ERR value is not an integer or out of range"
	errNotFloat   = "ERR value is not a valid float"
	errWrongType  = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNoKey      = "ERR no such key"
	errOverflow   = "ERR increment or decrement would overflow"
	errDBIndex    = "ERR DB index is out of range"
	errNoAuth     = "NOAUTH Authentication required."
	errWrongPass  = "WRONGPASS invalid username-password pair or user is disabled."
	errNotInMulti = "ERR Command not allowed inside a transaction"
	errTimeout    = "ERR timeout is not a float or out of range"
	errNegTimeout = "ERR timeout is negative"
)

// cmdFlags are a command's properties, as COMMAND reports them.
type cmdFlags uint32

const (
	cmdWrite cmdFlags = 1 << iota
	cmdReadonly
	cmdDenyOOM
	cmdAdmin
	cmdPubSub
	cmdNoScript
	cmdBlocking
	cmdLoading
	cmdStale
	cmdFast
	cmdNoAuth
	cmdMayReplicate
	cmdNoMulti
	cmdAllowBusy
	cmdMovableKeys
	cmdSkipSlowlog
	cmdNoAsyncLoading
	// cmdProtected: a command that enable-debug-command (DEBUG's) allows,
	// checked before authentication, as Redis checks it. Like Redis,
	// COMMAND does not list it.
	cmdProtected
	// cmdSkipMonitor: the command shows itself to the monitors (EVAL,
	// before the commands its script runs).
	cmdSkipMonitor
	cmdNoMandatoryKeys
)

// flagNames are the flags' names, in the order COMMAND lists them.
var flagNames = []struct {
	f    cmdFlags
	name string
}{
	{cmdWrite, "write"}, {cmdReadonly, "readonly"}, {cmdDenyOOM, "denyoom"},
	{cmdAdmin, "admin"}, {cmdPubSub, "pubsub"}, {cmdNoScript, "noscript"},
	{cmdBlocking, "blocking"}, {cmdLoading, "loading"}, {cmdStale, "stale"}, {cmdSkipMonitor, "skip_monitor"},
	{cmdSkipSlowlog, "skip_slowlog"}, {cmdFast, "fast"}, {cmdNoAuth, "no_auth"},
	{cmdMayReplicate, "may_replicate"}, {cmdNoMandatoryKeys, "no_mandatory_keys"}, {cmdNoAsyncLoading, "no_async_loading"}, {cmdNoMulti, "no_multi"},
	{cmdMovableKeys, "movablekeys"}, {cmdAllowBusy, "allow_busy"},
}

func parseFlags(s string) cmdFlags {
	var f cmdFlags
	for _, w := range strings.Fields(s) {
		found := false
		for _, fn := range flagNames {
			if fn.name == w {
				f |= fn.f
				found = true
			}
		}
		if !found {
			panic("kv: unknown command flag " + w)
		}
	}
	return f
}

// command is an entry of the command table.
type command struct {
	name     string // lower case; "client|id" for a subcommand
	arity    int    // > 0: exactly; < 0: at least -arity arguments, the name included
	flags    cmdFlags
	firstKey int // position of the first key argument, 0 if none
	lastKey  int // of the last; -1 is the last argument
	step     int
	// keyCount is the position of the count the command's keys follow
	// (LMPOP numkeys key [key ...]), 0 if none: a key spec of Redis's
	// begin_search index and find_keys keynum.
	keyCount int
	// notKey says that the range firstKey to lastKey names no keys but
	// what Redis's key spec flags not_key (shard channels): COMMAND INFO
	// shows the range, GETKEYS finds no keys in it.
	notKey  bool
	group   string   // "string", "list", ...: COMMAND DOCS and the ACL categories
	cats    []string // ACL categories in place of the group's, as Redis's command table gives them
	since   string
	summary string
	fn      func(s *Server, c *client, args [][]byte)
	keys    func(args [][]byte) [][]byte // COMMAND GETKEYS's, where not firstKey to lastKey
	subs    map[string]*command
	id      int // index of the command's statistics in Server.cmdStats

	// runsScript marks EVAL and its kin, whose flags are their script's
	// (scriptedFlags).
	runsScript bool
}

// cmdStat is one command's statistics in one Server: INFO commandstats.
type cmdStat struct {
	calls int64
	time  time.Duration
	hist  *latencyHist // with latency-tracking on, once called
	// rejected counts the requests refused before running (arity,
	// authentication, ...), failed the calls that replied an error.
	rejected, failed int64
}

// numCommands counts the commands and subcommands registered, for ids.
var numCommands int

// commands is the command table, by lower-case name. It is filled by the
// init functions of the files that implement each group and never changes
// afterwards.
var commands = map[string]*command{}

// cmd describes a command for register.
func cmd(name string, arity int, flags string, first, last, step int, group, since, summary string, fn func(*Server, *client, [][]byte)) *command {
	return &command{name: name, arity: arity, flags: parseFlags(flags), firstKey: first, lastKey: last, step: step,
		group: group, since: since, summary: summary, fn: fn}
}

// withSubs makes c a container of subcommands, named "c|sub".
func (c *command) withSubs(subs ...*command) *command {
	c.subs = make(map[string]*command, len(subs))
	for _, sc := range subs {
		sc.name = c.name + "|" + sc.name
		if sc.group == "" {
			sc.group = c.group
		}
		c.subs[strings.TrimPrefix(sc.name, c.name+"|")] = sc
	}
	return c
}

// withCategories gives c ACL categories of its own in place of its
// group's, as Redis's command table gives a command's; those its flags
// imply (@write, @fast, ...) it has anyway.
func (c *command) withCategories(cats ...string) *command {
	for _, cat := range cats {
		if !slices.Contains(aclCategories, cat) {
			panic("kv: unknown ACL category " + cat)
		}
	}
	c.cats = cats
	return c
}

// withKeys gives c a function that finds its keys in its arguments, for a
// command whose keys are not a range of them.
func (c *command) withKeys(keys func(args [][]byte) [][]byte) *command {
	c.keys = keys
	return c
}

// withNotKeys says that c's range of key arguments holds no keys (notKey).
func (c *command) withNotKeys() *command {
	c.notKey = true
	return c
}

// withKeyCount says that c's keys follow a count at args[at] (and, if c
// has firstKey, come after the key there, a destination): COMMAND
// GETKEYS finds them as Redis finds them (countedKeys) and COMMAND INFO
// gives their key spec.
func (c *command) withKeyCount(at int) *command {
	c.keyCount = at
	c.keys = func(args [][]byte) [][]byte { return countedKeys(args, c.firstKey, at) }
	return c
}

// countedKeys returns the keys of a command whose keys follow a count at
// args[at], after a destination at args[store] if store is not 0, as
// Redis 7.0's getKeysFromCommandWithSpecs finds them. Its key specs come
// first: the destination, then as many keys as the count says, the count
// read as string2ll does and cut to a C int, if it is not negative and
// the arguments hold that many keys, one at least. Otherwise the
// command's getkeys procedure, genericGetKeys: the count read as atoi
// does (space and a sign before the digits, anything after them), the
// keys if it is at least one and the arguments hold them, and the
// destination after them. Nil if neither finds any.
func countedKeys(args [][]byte, store, at int) [][]byte {
	var keys [][]byte
	if n, ok := parseInt(args[at]); ok && n >= 0 {
		first, last := at+1, at+int(int32(n))
		if first <= last && last < len(args) {
			if store > 0 {
				keys = append(keys, args[store])
			}
			return append(keys, args[first:last+1]...)
		}
	}
	n := atoi(args[at])
	if n < 1 || n > len(args)-(at+1) {
		return nil
	}
	keys = append(keys, args[at+1:at+1+n]...)
	if store > 0 {
		keys = append(keys, args[store])
	}
	return keys
}

// atoi reads b as C's atoi reads a string, (int)strtol(b, NULL, 10) with
// glibc: leading white space, a sign, the digits up to the first other
// byte (none is 0), clamped to a 64-bit long and cut to a 32-bit int.
func atoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || (b[i] >= '\t' && b[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var v uint64 // the magnitude, up to 2^63
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if v > (1<<63)/10 {
			v = 1 << 63
		} else {
			v = min(v*10+uint64(b[i]-'0'), 1<<63)
		}
	}
	var l int64
	switch {
	case neg:
		l = -int64(v) // 2^63 wraps to the minimum, strtol's LONG_MIN
	case v >= 1<<63:
		l = math.MaxInt64
	default:
		l = int64(v)
	}
	return int(int32(l))
}

func register(cmds ...*command) {
	for _, c := range cmds {
		if _, dup := commands[c.name]; dup {
			panic("kv: command registered twice: " + c.name)
		}
		commands[c.name] = c
		c.id = numCommands
		numCommands++
		for _, sc := range c.subs {
			sc.id = numCommands
			numCommands++
		}
	}
}

// lookupName finds the command named b, case-insensitively, without
// allocating for names of up to 32 bytes.
func lookupName(table map[string]*command, b []byte) *command {
	var buf [32]byte
	if len(b) > len(buf) {
		return table[strings.ToLower(string(b))]
	}
	for i, ch := range b {
		buf[i] = lower(ch)
	}
	return table[string(buf[:len(b)])]
}

// lookupCommand finds the command args call for, as Redis's
// lookupCommand does: a container's subcommand named by args[1], or the
// container itself when it has no further argument (a bare COMMAND). It
// returns nil for an unknown command or subcommand.
func lookupCommand(args [][]byte) *command {
	cmd := lookupName(commands, args[0])
	if cmd != nil && cmd.subs != nil && len(args) > 1 {
		cmd = lookupName(cmd.subs, args[1])
	}
	return cmd
}

// isName reports whether b is name, a command's lower-case name, in any
// case.
func isName(b []byte, name string) bool {
	if len(b) != len(name) {
		return false
	}
	for i, ch := range b {
		if lower(ch) != name[i] {
			return false
		}
	}
	return true
}

// cstr is b as C's string functions see it: up to its first NUL byte.
// Redis reads many arguments so (strcasecmp, strchr, strtol on a copy):
// SORT's "ASC\x00x" is ASC, BITFIELD's "u8\x00x" is u8.
func cstr(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// isOpt reports whether arg is name, a lower-case word, as Redis's
// strcasecmp finds it: ASCII letters in any case, up to a NUL byte.
func isOpt(arg []byte, name string) bool { return isName(cstr(arg), name) }

// arityOK reports whether n arguments suit arity.
func arityOK(arity, n int) bool {
	return (arity > 0 && n == arity) || (arity < 0 && n >= -arity)
}

// call runs one request of c's, with the checks Redis makes first.
func (s *Server) call(c *client, args [][]byte) {
	c.lastActive = s.ms
	if s.track.clients > 0 {
		s.limitTable()
	}
	cmd := c.lastTop
	if cmd == nil || !isName(args[0], cmd.name) {
		// A client mostly sends one command over and over: the map only
		// when it changes.
		if cmd = lookupName(commands, args[0]); cmd == nil {
			c.cmdClient = false
			s.reject(c, nil, args, unknownCommand(args))
			return
		}
		c.lastTop = cmd
	}
	c.cmdClient = cmd.name == "client" && len(args) > 1 // a bare CLIENT is no CLIENT command to Redis
	if !arityOK(cmd.arity, len(args)) {
		s.reject(c, cmd, args, "ERR wrong number of arguments for '"+cmd.name+"' command")
		return
	}
	if cmd.subs != nil && len(args) > 1 {
		sub := lookupName(cmd.subs, args[1])
		if sub == nil {
			c.cmdClient = false
			s.reject(c, nil, args, "ERR unknown subcommand '"+trunc(string(args[1]), 128)+"'. Try "+strings.ToUpper(cmd.name)+" HELP.")
			return
		}
		if !arityOK(sub.arity, len(args)) {
			s.reject(c, sub, args, "ERR wrong number of arguments for '"+sub.name+"' command")
			return
		}
		cmd = sub
	}
	if cmd.runsScript {
		cmd = s.scriptedFlags(cmd, args) // EVAL's flags are its script's
	}
	if cmd.flags&cmdProtected != 0 && !s.protectedAllowed(c) {
		s.reject(c, cmd, args, errDebugNotAllowed)
		return
	}
	c.lastCmd = cmd.name
	if !c.authenticated && cmd.flags&cmdNoAuth == 0 {
		s.reject(c, cmd, args, errNoAuth)
		return
	}
	if c.flags&flagMulti != 0 && cmd.flags&cmdNoMulti != 0 {
		s.reject(c, cmd, args, errNotInMulti)
		return
	}
	busy := s.scripts.run != nil && s.scripts.run.busy // served from inside the script
	if s.evict.max > 0 && !busy && s.outOfMemory(c, cmd, args) {
		// Not while a script is busy, as Redis: its changes and the
		// evictions' would mix.
		s.reject(c, cmd, args, errOOM)
		return
	}
	if s.snap.bgsaveErr != nil && deniedOnWriteError(c, cmd) && s.stopWrites() {
		s.reject(c, cmd, args, bgsaveError)
		return
	}
	if a := s.aof; a != nil && a.err != nil && deniedOnWriteError(c, cmd) {
		s.reject(c, cmd, args, s.writeError())
		return
	}
	if c.inPubSub() && !allowedInPubSub(cmd.name) {
		s.reject(c, cmd, args, "ERR Can't execute '"+cmd.name+"': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
		return
	}
	if busy && cmd.flags&cmdAllowBusy == 0 {
		s.reject(c, cmd, args, errBusyScript)
		return
	}
	if c.flags&flagMonitor != 0 && cmd.flags&(cmdReadonly|cmdWrite|cmdMayReplicate) != 0 {
		// Redis makes a monitor a replica, which may not.
		s.reject(c, cmd, args, "ERR Replica can't interact with the keyspace")
		return
	}
	if s.clientsPaused() && s.postpones(c, cmd) {
		s.postpone(c) // serve runs it again when the pause ends
		return
	}
	if c.flags&flagMulti != 0 && !controlsMulti(cmd.name) {
		c.multi = append(c.multi, copyArgs(args))
		if cmd.flags&cmdWrite != 0 {
			c.flags |= flagQueuedWrite
		}
		if cmd.flags&(cmdWrite|cmdMayReplicate) != 0 {
			c.flags |= flagQueuedMayReplicate
		}
		if cmd.flags&cmdDenyOOM != 0 {
			c.flags |= flagQueuedDenyOOM
		}
		s.w.Simple("QUEUED")
		s.skipTime()
		return
	}
	s.exec(c, cmd, args)
}

// exec runs cmd and propagates what it changed to the log. The clock read
// when it ends is the next command's start, in this loop iteration: a
// command's time in INFO commandstats and the slow log includes parsing
// it (and, for a connection's first command in an iteration, reading it),
// and n commands served in one iteration cost n+1 reads of the clock, not
// 2n.
func (s *Server) exec(c *client, cmd *command, args [][]byte) {
	dirty := s.stats.dirty
	s.prop.begin()
	start := s.mono
	s.errMark = s.stats.errorReplies
	if s.bg != nil {
		s.bg.beginCommand(c, cmd, args)
	}
	prevArgs := s.curArgs // EXEC's, around a command it runs
	s.curArgs = args
	s.running++
	cmd.fn(s, c, args)
	s.running--
	s.curArgs = prevArgs
	if cmd.flags&cmdReadonly != 0 && c.track&(trackOn|trackBcast) == trackOn {
		s.trackRead(c, cmd, args)
	}
	s.writing = false
	end := s.tick()
	st := &s.cmdStats[cmd.id]
	// As Redis counts them: a call failed if it replied an error after
	// the last command it ran itself (EXEC's) was counted.
	if s.stats.errorReplies > s.errMark { // not after CONFIG RESETSTAT
		st.failed++
	}
	s.errMark = s.stats.errorReplies
	took := end - start // EXEC's includes the commands it ran, as Redis's
	st.time += took
	s.mono = end
	if b := c.block; b != nil {
		// A command that blocked is timed when data serves it, if it does,
		// as Redis times it: its histogram and the slow log wait till then.
		b.cmd, b.took = cmd, took
		if s.slowlog.slowerThan >= 0 && cmd.flags&cmdSkipSlowlog == 0 {
			b.args = copyArgs(args)
		}
	} else {
		s.timed(c, cmd, args, took)
		if s.latency.on() {
			event := "command"
			if cmd.flags&cmdFast != 0 {
				event = "fast-command"
			}
			s.latency.note(event, took, s.ms/1000)
		}
	}
	st.calls++
	s.stats.commands++
	if len(s.monitors) > 0 && cmd.flags&(cmdAdmin|cmdSkipMonitor) == 0 && !s.replay {
		s.feedMonitors(c, cmd, args)
	}
	if s.stats.dirty != dirty || s.prop.override {
		s.prop.end(s, c.db.id, args)
	}
}

// timed counts a command that ran for took in its latency histogram and,
// if args are given and it was slow enough, in the slow log.
func (s *Server) timed(c *client, cmd *command, args [][]byte, took time.Duration) {
	if s.latencyTracking {
		st := &s.cmdStats[cmd.id]
		if st.hist == nil {
			st.hist = new(latencyHist)
		}
		st.hist.record(took)
	}
	if l := &s.slowlog; args != nil && l.slowerThan >= 0 && cmd.flags&cmdSkipSlowlog == 0 && took.Microseconds() >= l.slowerThan {
		l.note(c, args, took, s.ms)
	}
}

// reject answers a request for cmd (nil if there is no such command)
// that cannot run, counts it against cmd, and spoils the transaction
// being queued, if any, as Redis does. An EXEC refused ends the
// transaction, as Redis's execCommandAbort does: it replies EXECABORT
// with the reason, discards what was queued (in MULTI or not), and is
// shown to the monitors.
func (s *Server) reject(c *client, cmd *command, args [][]byte, msg string) {
	if c.flags&flagMulti != 0 {
		c.flags |= flagDirtyExec
	}
	if cmd != nil {
		s.cmdStats[cmd.id].rejected++
		if cmd.name == "exec" {
			s.discardMulti(c)
			// Redis's reason has no ERR; another code (NOAUTH) stays.
			msg = "EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR ")
			if len(s.monitors) > 0 {
				s.feedMonitors(c, cmd, args)
			}
		}
	}
	s.w.Error(msg)
	s.skipTime()
}

// countError counts an error reply, by its code (its first word, as
// Redis reads it: within its first 31 bytes, else ERR), for INFO.
func (s *Server) countError(msg string) {
	if s.replay {
		return
	}
	s.stats.errorReplies++
	code := "ERR"
	if i := strings.IndexByte(msg[:min(len(msg), 31)], ' '); i >= 0 {
		code = msg[:i]
	}
	if s.stats.errorCodes == nil {
		s.stats.errorCodes = map[string]int64{}
	}
	s.stats.errorCodes[code]++
}

// skipTime starts the next command's time now, for a request that did not
// run (rejected, or queued in MULTI): its time is not the next one's.
func (s *Server) skipTime() { s.mono = s.tick() }

func unknownCommand(args [][]byte) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		b.WriteByte('\'')
		b.WriteString(trunc(string(a), 128-b.Len()))
		b.WriteString("' ")
	}
	return "ERR unknown command '" + trunc(string(args[0]), 128) + "', with args beginning with: " + b.String()
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:max(n, 0)]
	}
	return s
}

func allowedInPubSub(name string) bool {
	switch name {
	case "ping", "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "quit", "reset":
		return true
	}
	return false
}

func controlsMulti(name string) bool {
	switch name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

func copyArgs(args [][]byte) [][]byte {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	backing := make([]byte, 0, n)
	out := make([][]byte, len(args))
	for i, a := range args {
		backing = append(backing, a...)
		out[i] = backing[len(backing)-len(a) : len(backing) : len(backing)]
	}
	return out
}

// propagation is what the command being run sends to the log: its own
// arguments, unless it rewrote them (a relative expiry made absolute, a
// random pop made a removal of what it took).
type propagation struct {
	override bool
	cmds     [][][]byte
}

func (p *propagation) begin() {
	p.override = false
	clear(p.cmds)
	p.cmds = p.cmds[:0]
}

// rewrite makes the command being run log args instead of itself; called
// more than once, it logs each.
func (s *Server) rewrite(args ...[]byte) {
	s.prop.override = true
	if s.aof == nil || s.replay {
		return // nothing is logged: no need to keep a copy
	}
	s.prop.cmds = append(s.prop.cmds, copyArgs(args))
}

// dirty counts n changes to the keyspace: the command will be logged.
func (s *Server) dirty(n int) { s.stats.dirty += int64(n) }

func (p *propagation) end(s *Server, dbID int, args [][]byte) {
	if !p.override {
		s.propagate(dbID, args)
		return
	}
	for _, a := range p.cmds {
		s.propagate(dbID, a)
	}
}

// propagate sends a change to the log.
func (s *Server) propagate(dbID int, args [][]byte) {
	if s.aof != nil && !s.replay {
		s.aof.append(dbID, args)
	}
}
