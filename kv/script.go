package kv

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"time"

	"github.com/evloop/evloop/resp"
	lua "github.com/yuin/gopher-lua"
)

// Scripting, as Redis 7.0's EVAL: scripts in Lua 5.1 (gopher-lua), cached
// by their SHA1 digest, run on the loop like any command, their commands
// run through redis.call as the commands of a client of their own. What a
// script changes reaches the log as the commands it ran, wrapped in
// MULTI and EXEC when there are several, as Redis 7.0 propagates effects.
// The scripts EVAL loads are kept in an LRU list of maxEvalScripts, as
// Redis 7.4 keeps them; those SCRIPT LOAD loads stay until SCRIPT FLUSH.

func init() {
	register(
		cmd("eval", -3, "noscript stale skip_monitor may_replicate no_mandatory_keys movablekeys", 0, 0, 0, "scripting", "2.6.0",
			"Executes a server-side Lua script.", evalCommand).withKeyCount(2).runningScripts(),
		cmd("evalsha", -3, "noscript stale skip_monitor may_replicate no_mandatory_keys movablekeys", 0, 0, 0, "scripting", "2.6.0",
			"Executes a server-side Lua script by SHA1 digest.", evalshaCommand).withKeyCount(2).runningScripts(),
		cmd("eval_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", 0, 0, 0, "scripting", "7.0.0",
			"Executes a read-only server-side Lua script.", evalroCommand).withKeyCount(2).runningScripts(),
		cmd("evalsha_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", 0, 0, 0, "scripting", "7.0.0",
			"Executes a read-only server-side Lua script by SHA1 digest.", evalsharoCommand).withKeyCount(2).runningScripts(),
		cmd("script", -2, "", 0, 0, 0, "scripting", "2.6.0", "A container for Lua scripts management commands.", nil).withSubs(
			cmd("load", 3, "noscript stale", 0, 0, 0, "", "2.6.0", "Loads a server-side Lua script to the script cache.", scriptLoad),
			cmd("exists", -3, "noscript", 0, 0, 0, "", "2.6.0", "Determines whether server-side Lua scripts exist in the script cache.", scriptExists),
			cmd("flush", -2, "noscript", 0, 0, 0, "", "2.6.0", "Removes all server-side Lua scripts from the script cache.", scriptFlush),
			cmd("kill", 2, "noscript allow_busy", 0, 0, 0, "", "2.6.0", "Terminates a server-side Lua script during execution.", scriptKill),
			cmd("debug", 3, "noscript", 0, 0, 0, "", "3.2.0", "Sets the debug mode of server-side Lua scripts.", scriptDebug),
			cmd("help", 2, "loading stale", 0, 0, 0, "", "5.0.0", "Returns helpful text about the different subcommands.", scriptHelp),
		),
	)
}

const errNoScript = "NOSCRIPT No matching script. Please use EVAL."

// maxEvalScripts is how many of the scripts EVAL loaded are kept, as
// Redis 7.4's LRU_LIST_LENGTH: one more evicts the one used least
// recently. A client that writes its values into its scripts, a new
// script at each call, cannot grow the cache without end.
const maxEvalScripts = 500

// scripting is the server's scripting state.
type scripting struct {
	vm    *luaVM             // made when first needed
	cache map[string]*script // by digest, lower-case hex
	last  *script            // the one EVAL or EVALSHA found last, cached
	mem   int64              // the bytes of the cached bodies and digests
	// evals are the cached scripts EVAL loaded and SCRIPT LOAD did not,
	// least recently used first: the ones that may be evicted.
	evals scriptList
	rand  rand48     // math.random's
	run   *scriptRun // the script running, if any
	// client runs the scripts' commands: its database and protocol are
	// the running script's.
	client *client
	buf    []byte // the reply of a script's command, kept for the next
}

// script is a cached script.
type script struct {
	sha   string
	body  []byte
	flags scriptFlags
	fn    *lua.LFunction
	// prev and next link the script in scripting.evals, when evictable.
	prev, next *script
	evictable  bool
}

// scriptList is a doubly linked list of scripts, through their prev and
// next: adding, removing and moving one to the end take no allocation.
type scriptList struct {
	head, tail *script // least and most recently used
	n          int
}

// pushBack adds sc, on no list, at the most recently used end.
func (l *scriptList) pushBack(sc *script) {
	sc.prev, sc.next, sc.evictable = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = sc
	} else {
		l.head = sc
	}
	l.tail = sc
	l.n++
}

// remove takes sc, on the list, off it.
func (l *scriptList) remove(sc *script) {
	if sc.prev != nil {
		sc.prev.next = sc.next
	} else {
		l.head = sc.next
	}
	if sc.next != nil {
		sc.next.prev = sc.prev
	} else {
		l.tail = sc.prev
	}
	sc.prev, sc.next, sc.evictable = nil, nil, false
	l.n--
}

// used moves sc, if it is on the list, to the most recently used end, as
// Redis does after EVAL or EVALSHA ran it.
func (l *scriptList) used(sc *script) {
	if sc.evictable && l.tail != sc {
		l.remove(sc)
		l.pushBack(sc)
	}
}

// scriptFlags are the flags a script's shebang line declares.
type scriptFlags uint8

const (
	// scriptCompat: no shebang, the flags of Redis before 7.0 apply.
	scriptCompat scriptFlags = 1 << iota
	scriptNoWrites
	scriptAllowOOM
	scriptAllowStale
	scriptNoCluster
	scriptAllowCrossSlot
)

var scriptFlagNames = []struct {
	f    scriptFlags
	name string
}{
	{scriptNoWrites, "no-writes"}, {scriptAllowOOM, "allow-oom"}, {scriptAllowStale, "allow-stale"},
	{scriptNoCluster, "no-cluster"}, {scriptAllowCrossSlot, "allow-cross-slot-keys"},
}

// scriptRun is the context of a script while it runs.
type scriptRun struct {
	cmd    *command // EVAL's, or EVALSHA's, ...
	caller *client
	client *client
	sha    string
	// readOnly: a write command is refused (EVAL_RO, or no-writes);
	// allowOOM: allow-oom was declared; oom: the memory used was past
	// maxmemory when the script started.
	readOnly, allowOOM, oom bool
	// wrote is set once a write command ran: the checks of the state of
	// the server no longer refuse one, as the script cannot be undone.
	wrote bool
	// noLog: redis.set_repl said the log is not to get the changes.
	noLog bool
	// calling is set while one of the script's commands runs.
	calling bool
	// panicked is the panic of a command of the script's, raised again
	// when the interpreter has returned.
	panicked any
	argBuf   [][]byte
	// outer is the caller's reply writer while one of the script's
	// commands runs: a message for the caller (a pub/sub message it is
	// subscribed to) goes there, not into the command's reply.
	outer resp.Writer
	// start is when the script began; busy is set once it ran past
	// busy-reply-threshold, and killed to the error it stops with once
	// SCRIPT KILL or SHUTDOWN NOSAVE stopped it (script_busy.go).
	start  time.Time
	busy   bool
	killed string
}

func evalCommand(s *Server, c *client, args [][]byte)      { s.eval(c, args, false, false) }
func evalshaCommand(s *Server, c *client, args [][]byte)   { s.eval(c, args, true, false) }
func evalroCommand(s *Server, c *client, args [][]byte)    { s.eval(c, args, false, true) }
func evalsharoCommand(s *Server, c *client, args [][]byte) { s.eval(c, args, true, true) }

// eval runs a script, by its body (EVAL) or its digest (EVALSHA), read-only
// for EVAL_RO and EVALSHA_RO, as Redis's evalGenericCommand does.
func (s *Server) eval(c *client, args [][]byte, bySHA, ro bool) {
	if len(s.monitors) > 0 && !s.replay {
		// Before the script's commands, as Redis shows it.
		s.feedMonitors(c, lookupCommand(args), args)
	}
	numkeys, ok := parseInt(args[2])
	switch {
	case !ok:
		s.w.Error(errNotInt)
		return
	case numkeys > int64(len(args)-3):
		s.w.Error("ERR Number of keys can't be greater than number of args")
		return
	case numkeys < 0:
		s.w.Error("ERR Number of keys can't be negative")
		return
	}
	var sc *script
	if bySHA {
		if sc = s.scriptBySHA(args[1]); sc == nil {
			s.w.Error(errNoScript)
			return
		}
	} else {
		var msg string
		if sc, msg = s.loadScript(args[1], true); sc == nil {
			s.w.Error(msg)
			return
		}
	}
	if msg := s.scriptRefused(sc, ro); msg != "" {
		s.w.Error(msg)
		return
	}
	// Used, as Redis counts it: a run refused leaves the list as it was.
	// No script is loaded or evicted while this one runs, EVAL and
	// SCRIPT being refused to scripts (noscript).
	s.scripts.evals.used(sc)
	s.runScript(c, lookupName(commands, args[0]), sc, args[3:3+numkeys], args[3+numkeys:], ro)
}

// runningScripts marks c as a command that runs a script (runsScript).
func (c *command) runningScripts() *command {
	c.runsScript = true
	return c
}

// scriptedFlags returns cmd, an EVAL, EVALSHA or their _RO, with the
// flags its script declares, for the checks before it runs (memory, the
// disk's errors, CLIENT PAUSE, MULTI), as Redis's evalGetCommandFlags: a
// script with a shebang line is a write unless no-writes, may add memory
// unless allow-oom or no-writes, and is no may_replicate. A script of the
// older form, or not known, leaves cmd as it is.
func (s *Server) scriptedFlags(cmd *command, args [][]byte) *command {
	var flags scriptFlags
	if bySHA := strings.HasPrefix(cmd.name, "evalsha"); bySHA {
		sc := s.scriptBySHA(args[1])
		if sc == nil {
			return cmd
		}
		flags = sc.flags
	} else {
		if sc, _ := s.cachedScript(args[1]); sc != nil {
			flags = sc.flags
		} else if f, _, msg := shebangFlags(args[1]); msg == "" {
			flags = f
		} else {
			return cmd
		}
	}
	if flags&scriptCompat != 0 {
		return cmd
	}
	scripted := *cmd
	scripted.flags &^= cmdStale | cmdDenyOOM | cmdWrite | cmdMayReplicate
	if flags&(scriptAllowOOM|scriptNoWrites) == 0 {
		scripted.flags |= cmdDenyOOM
	}
	if flags&scriptNoWrites == 0 {
		scripted.flags |= cmdWrite
	}
	if flags&scriptAllowStale != 0 {
		scripted.flags |= cmdStale
	}
	return &scripted
}

// scriptRefused returns why a script with declared flags may not run
// now, as Redis's scriptPrepareForRun: its writes refused while the disk
// cannot take them or by a read-only command, and it refused past
// maxmemory without allow-oom. "" if it may.
func (s *Server) scriptRefused(sc *script, ro bool) string {
	if sc.flags&scriptCompat != 0 {
		return ""
	}
	if sc.flags&scriptNoWrites == 0 {
		switch {
		case s.stopWrites():
			return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts."
		case s.aof != nil && s.aof.err != nil:
			return "MISCONF Redis is configured to persist data to AOF, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts. AOF error: " + strerror(s.aof.err)
		case ro:
			return "ERR Can not execute a script with write flag using *_ro command."
		}
	}
	if s.evict.max > 0 && s.evict.oom && sc.flags&(scriptAllowOOM|scriptNoWrites) == 0 {
		return "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
	}
	return ""
}

// loadScript returns the cached script of body, compiling and caching it
// if it is new; or nil and the error to reply. A script new to EVAL
// (byEval) may be evicted, the one used least recently evicted first if
// there are maxEvalScripts already; one SCRIPT LOAD loads stays, also if
// EVAL loaded it before, as Valkey keeps it (Redis 7.4 leaves that one
// evictable, though SCRIPT LOAD says a script stays until SCRIPT FLUSH).
func (s *Server) loadScript(body []byte, byEval bool) (*script, string) {
	sc, sha := s.cachedScript(body)
	if sc != nil {
		if !byEval && sc.evictable {
			s.scripts.evals.remove(sc)
		}
		return sc, ""
	}
	flags, skip, msg := shebangFlags(body)
	if msg != "" {
		return nil, "ERR " + msg
	}
	vm := s.luaVM()
	// The shebang line is left out, its newline kept, so that line
	// numbers stay the body's.
	fn, err := vm.L.Load(bytes.NewReader(body[skip:]), chunkName)
	if err != nil {
		return nil, "ERR Error compiling script (new function): " + strings.TrimSpace(err.Error())
	}
	fn.Env = vm.genv
	// The main chunk has no "arg" table, as in Lua 5.1, where gopher-lua
	// would make one at each call.
	fn.Proto.IsVarArg &^= lua.VarArgNeedsArg
	sc = &script{sha: sha, body: bytes.Clone(body), flags: flags, fn: fn}
	if s.scripts.cache == nil {
		s.scripts.cache = map[string]*script{}
	}
	if byEval {
		for s.scripts.evals.n >= maxEvalScripts {
			s.evictScript(s.scripts.evals.head)
		}
		s.scripts.evals.pushBack(sc)
	}
	s.scripts.cache[sha] = sc
	s.scripts.mem += int64(len(body) + len(sha))
	return sc, ""
}

// evictScript drops sc, one EVAL loaded, from the cache, as Redis's
// luaDeleteFunction: EVALSHA of its digest answers NOSCRIPT, and its body
// and compiled function are left to the garbage collector.
func (s *Server) evictScript(sc *script) {
	s.scripts.evals.remove(sc)
	delete(s.scripts.cache, sc.sha)
	s.scripts.mem -= int64(len(sc.body) + len(sc.sha))
	if s.scripts.last == sc {
		s.scripts.last = nil
	}
	s.stats.evictedScripts++
}

// cachedScript returns the cached script of body, or nil, and body's
// digest. The script found last is compared first: a client sends the
// same one again and again, and a comparison is cheaper than the digest.
func (s *Server) cachedScript(body []byte) (*script, string) {
	if sc := s.scripts.last; sc != nil && bytes.Equal(sc.body, body) {
		return sc, sc.sha
	}
	sum := sha1.Sum(body)
	sha := hex.EncodeToString(sum[:])
	sc := s.scripts.cache[sha]
	if sc != nil {
		s.scripts.last = sc
	}
	return sc, sha
}

// scriptBySHA returns the cached script whose digest is sha, in either
// case, or nil. The script found last is compared first, as in
// cachedScript: call's check of EVALSHA's flags and EVALSHA itself look
// the same one up.
func (s *Server) scriptBySHA(sha []byte) *script {
	if len(sha) != 40 {
		return nil
	}
	if sc := s.scripts.last; sc != nil && bytes.EqualFold([]byte(sc.sha), sha) {
		return sc
	}
	sc := s.scripts.cache[strings.ToLower(string(sha))]
	if sc != nil {
		s.scripts.last = sc
	}
	return sc
}

// shebangFlags reads the flags of a script's "#!lua flags=..." line, as
// Redis's evalExtractShebangFlags: without one, scriptCompat. skip is the
// length of the line, its newline not counted; msg says what is wrong
// with it.
func shebangFlags(body []byte) (flags scriptFlags, skip int, msg string) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return scriptCompat, 0, ""
	}
	skip = bytes.IndexByte(body, '\n')
	if skip < 0 {
		return 0, 0, "Invalid script shebang"
	}
	parts, err := resp.SplitArgs(body[:skip])
	if err != nil || len(parts) == 0 {
		return 0, 0, "Invalid engine in script shebang"
	}
	if string(cstr(parts[0])) != "#!lua" {
		return 0, 0, "Unexpected engine in script shebang: " + string(cstr(parts[0]))
	}
	for _, p := range parts[1:] {
		list, ok := bytes.CutPrefix(cstr(p), []byte("flags="))
		if !ok {
			return 0, 0, "Unknown lua shebang option: " + string(cstr(p))
		}
		if len(list) == 0 {
			continue
		}
		for _, name := range strings.Split(string(list), ",") {
			found := false
			for _, fn := range scriptFlagNames {
				if fn.name == name {
					flags |= fn.f
					found = true
				}
			}
			if !found {
				return 0, 0, "Unexpected flag in script shebang: " + name
			}
		}
	}
	return flags, skip, ""
}

// luaVM returns the interpreter, made when first asked for.
func (s *Server) luaVM() *luaVM {
	if s.scripts.vm == nil {
		if s.scripts.rand == 0 {
			s.scripts.rand = rand48Init
		}
		s.scripts.vm = newLuaVM(s)
	}
	return s.scripts.vm
}

// runScript calls a script with its keys and arguments, and writes its
// result, or its error, as c's reply.
func (s *Server) runScript(c *client, cmd *command, sc *script, keys, argv [][]byte, ro bool) {
	vm := s.luaVM()
	L := vm.L
	if s.scripts.client == nil {
		s.scripts.client = &client{s: s, authenticated: true, script: true}
	}
	sclient := s.scripts.client
	sclient.db, sclient.proto = c.db, 2
	run := &scriptRun{cmd: cmd, caller: c, client: sclient, sha: sc.sha, oom: s.evict.max > 0 && s.evict.oom,
		readOnly: ro || sc.flags&(scriptCompat|scriptNoWrites) == scriptNoWrites,
		allowOOM: sc.flags&scriptCompat == 0 && sc.flags&scriptAllowOOM != 0}
	s.scripts.run = run
	wasInExec := s.inExec
	s.inExec = true // nothing blocks; the log gets the changes as a transaction
	vm.env.RawSetString("KEYS", luaArray(L, keys))
	vm.env.RawSetString("ARGV", luaArray(L, argv))
	vm.watch.done, vm.watch.err = nil, nil
	run.start = time.Now()
	L.Push(sc.fn)
	err := L.PCall(0, 1, vm.handler)
	s.scripts.run = nil
	if run.panicked != nil {
		// serve closes the caller, as for any command; s.inExec stays
		// set, so that it also closes the log's transaction of the
		// commands that ran before.
		panic(run.panicked)
	}
	if !wasInExec {
		s.inExec = false
		s.endExec()
	} else {
		s.prop.begin()
		s.prop.override = true // the script's commands were logged, not EVAL
	}
	if err != nil {
		s.writeScriptError(run, err)
		return
	}
	result := L.Get(-1)
	L.Pop(1)
	s.writeLuaReply(&s.w, run, result, 0)
}

// luaArray returns a Lua array of items, KEYS or ARGV.
func luaArray(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for i, a := range items {
		t.RawSetInt(i+1, lua.LString(a))
	}
	return t
}

// scriptErrorHandler makes the error a script raised a table, as Redis's
// __redis__err__handler: {err = "ERR " .. msg} for an error that is not
// one, with the source and line of the Lua code that raised it.
func scriptErrorHandler(L *lua.LState) int {
	v := L.Get(1)
	t, ok := v.(*lua.LTable)
	if !ok {
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+luaToString(v)))
	}
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine < 0 {
			continue
		}
		source := dbg.Source
		if source == chunkName {
			source = "@" + chunkName
		}
		t.RawSetString("source", lua.LString(source))
		t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
		break
	}
	L.Push(t)
	return 1
}

// luaToString is Lua's tostring of v.
func luaToString(v lua.LValue) string {
	if v == lua.LNil {
		return "nil"
	}
	return v.String()
}

// writeScriptError writes the error a script ended with, as Redis's
// luaCallFunction: its message, and where it was raised.
func (s *Server) writeScriptError(run *scriptRun, err error) {
	var v lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		v = ae.Object
	}
	t, ok := v.(*lua.LTable)
	if !ok {
		s.w.Error("ERR Error running script " + run.sha + ", " + trunc(luaToString(v), 100))
		return
	}
	msg := "ERR unknown error"
	if e, ok := t.RawGetString("err").(lua.LString); ok {
		msg = string(e)
	}
	if run.killed != "" {
		msg = run.killed // whatever a pcall in the script made of it
	}
	source, sok := t.RawGetString("source").(lua.LString)
	line := t.RawGetString("line")
	if sok && line != lua.LNil {
		msg += " script: " + run.sha + ", on " + string(source) + ":" + line.String() + "."
	}
	s.writeScriptErrorReply(&s.w, run, msg, t.RawGetString("ignore_error_stats_update") == lua.LTrue)
}

// writeScriptErrorReply writes an error reply of a script's. One a
// command of the script replied (counted) is not counted again, but the
// script is failed, as Redis counts it (ERR_REPLY_FLAG_NO_STATS_UPDATE).
func (s *Server) writeScriptErrorReply(w *resp.Writer, run *scriptRun, msg string, counted bool) {
	if !counted {
		w.Error(msg)
		return
	}
	onError := w.OnError
	w.OnError = nil
	w.Error(msg)
	w.OnError = onError
	s.cmdStats[run.cmd.id].failed++
}

// scriptCommand runs one of a script's commands, with the checks Redis's
// scriptCall makes first, and returns its reply as a Lua value, and
// whether it is an error reply, which redis.call raises. A command the
// checks refuse is an error table.
func (s *Server) scriptCommand(L *lua.LState, run *scriptRun, args [][]byte) (lua.LValue, bool) {
	cmd := lookupCommand(args)
	if msg := s.scriptCallRefused(run, cmd, args); msg != "" {
		t := errTable(L, msg)
		// Counted as Redis's afterErrorReply counts it; the script's own
		// error reply, if it raises this one, is not counted again.
		s.countError(string(t.RawGetString("err").(lua.LString)))
		s.errMark = s.stats.errorReplies // counted against cmd, not the script
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		if cmd != nil {
			s.cmdStats[cmd.id].rejected++
		}
		return t, true
	}
	if cmd.flags&cmdWrite != 0 {
		run.wrote = true
	}
	reply := s.scriptExec(run, cmd, args)
	if cmd.flags&cmdReadonly != 0 && run.caller.track&(trackOn|trackBcast) == trackOn {
		s.trackRead(run.caller, cmd, args) // the caller's cache, as Redis 7.0's
	}
	v, _, err := resp.Parse(reply)
	if err != nil {
		// Not a reply evkv writes: a fault of the command's.
		return errTable(L, "-ERR the reply of "+cmd.name+" could not be read: "+err.Error()), true
	}
	return replyToLua(L, &v), len(reply) > 0 && reply[0] == '-'
}

// scriptCallRefused returns why a script may not run cmd, as Redis's
// scriptCall checks it, or "": an unknown command, the wrong number of
// arguments, one scripts may not run, a write in a read-only script, and,
// before the script has written, a write while the disk cannot take it
// or one that may add memory past maxmemory.
func (s *Server) scriptCallRefused(run *scriptRun, cmd *command, args [][]byte) string {
	switch {
	case cmd == nil:
		return "Unknown Redis command called from script"
	case !arityOK(cmd.arity, len(args)):
		return "Wrong number of args calling Redis command from script"
	case cmd.flags&cmdNoScript != 0:
		return "This Redis command is not allowed from script"
	case run.readOnly && cmd.flags&(cmdWrite|cmdMayReplicate) != 0:
		return "Write commands are not allowed from read-only scripts."
	case run.wrote:
		return ""
	case cmd.flags&cmdWrite != 0 && s.stopWrites():
		return "-" + bgsaveError
	case cmd.flags&cmdWrite != 0 && s.aof != nil && s.aof.err != nil:
		return "-" + s.writeError()
	case !run.allowOOM && run.oom && cmd.flags&cmdDenyOOM != 0:
		return "-" + errOOM
	}
	return ""
}

// scriptExec runs cmd as the script's client and returns its reply, read
// from a writer of its own; the caller's replies are put back after it,
// also if it panics.
func (s *Server) scriptExec(run *scriptRun, cmd *command, args [][]byte) []byte {
	run.calling = true
	run.outer = s.w
	s.w = resp.Writer{Buf: s.scripts.buf[:0], Proto: run.client.proto, OnError: s.countError}
	aof := s.aof
	if run.noLog {
		s.aof = nil
	}
	defer func() {
		s.aof = aof
		s.scripts.buf = s.w.Buf
		s.w = run.outer
		run.outer = resp.Writer{}
		run.calling = false
		if v := recover(); v != nil {
			// The interpreter would take the panic for the script's
			// error: runScript panics again once it is out of it.
			run.panicked = v
			panic(v)
		}
	}()
	s.exec(run.client, cmd, args)
	return s.w.Buf
}

func scriptLoad(s *Server, c *client, args [][]byte) {
	sc, msg := s.loadScript(args[2], false)
	if sc == nil {
		s.w.Error(msg)
		return
	}
	s.w.BulkString(sc.sha)
}

func scriptExists(s *Server, c *client, args [][]byte) {
	s.w.Array(len(args) - 2)
	for _, a := range args[2:] {
		_, ok := s.scripts.cache[string(a)]
		s.w.Int(int64(b2i(ok)))
	}
}

// scriptFlush empties the cache and starts a new interpreter, as Redis's
// scriptingReset; SYNC and ASYNC are the same here, the old one left to
// the garbage collector.
func scriptFlush(s *Server, c *client, args [][]byte) {
	if len(args) > 3 || len(args) == 3 && !isOpt(args[2], "sync") && !isOpt(args[2], "async") {
		s.w.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	if s.scripts.vm != nil {
		s.scripts.vm.L.Close()
		s.scripts.vm = nil
	}
	s.scripts.cache, s.scripts.last, s.scripts.mem = nil, nil, 0
	s.scripts.evals = scriptList{} // the scripts on it are dropped with the cache
	s.w.OK()
}

// scriptKill answers as Redis does when no script runs: a script holds the
// loop until it ends, so no SCRIPT KILL is read while one runs.
// scriptDebug: the Lua debugger is not there; NO, which turns it off, is
// taken.
func scriptDebug(s *Server, c *client, args [][]byte) {
	switch {
	case isOpt(args[2], "no"):
		s.w.OK()
	case isOpt(args[2], "yes"), isOpt(args[2], "sync"):
		s.w.Error("ERR SCRIPT DEBUG is not supported by this server: the Lua debugger is not available")
	default:
		s.w.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

func scriptHelp(s *Server, c *client, args [][]byte) {
	s.help("SCRIPT",
		"DEBUG (YES|SYNC|NO)",
		"    Set the debug mode for subsequent scripts executed.",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.",
	)
}
