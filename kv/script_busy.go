package kv

import (
	"errors"
	"strconv"
	"time"

	"github.com/evloop/evloop/resp"
)

// A script that runs past busy-reply-threshold makes the server busy, as
// in Redis 7.0: it runs on, and the other clients are served meanwhile,
// from inside it, every watchEvery instructions (the loop's ServeOthers),
// with BUSY for every command but the few flagged allow_busy. SCRIPT KILL
// stops a busy script that has not written; SHUTDOWN NOSAVE stops the
// server, the script's changes left out of the log. The caller is not
// read meanwhile, and its reply goes when the script ends.

// errBusyScript answers the commands a busy script leaves no room for.
const errBusyScript = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."

const (
	errScriptKilled   = "ERR Script killed by user with SCRIPT KILL..."
	errScriptShutdown = "ERR Script killed by SHUTDOWN NOSAVE"
)

// watchEvery is how many instructions a script runs between two looks at
// the clock (Redis's hook runs every 100,000).
const watchEvery = 1 << 16

// scriptWatch is the interpreter's context. gopher-lua asks for its Done
// before every instruction: the hook Redis sets on its interpreter
// (luaMaskCountHook), where gopher-lua has none. Done returns nil, which
// never fires, until the running script is killed; from then on a closed
// channel, so that the interpreter raises the kill's error at every
// instruction, and a pcall in the script cannot keep it running.
type scriptWatch struct {
	s     *Server
	count uint32
	done  chan struct{}
	err   error
}

// killedDone is the Done of a killed script.
var killedDone = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

func (w *scriptWatch) Done() <-chan struct{} {
	if w.count++; w.count%watchEvery == 0 {
		w.s.scriptInterrupt()
	}
	return w.done
}

func (w *scriptWatch) Err() error                  { return w.err }
func (w *scriptWatch) Deadline() (time.Time, bool) { return time.Time{}, false }
func (w *scriptWatch) Value(any) any               { return nil }

// scriptInterrupt runs every watchEvery instructions of a script, as
// Redis's scriptInterrupt: a script past busy-reply-threshold makes the
// server busy (logged once), and while it is, the other clients are
// served.
func (s *Server) scriptInterrupt() {
	run := s.scripts.run
	if run == nil || run.calling || run.killed != "" || s.replay || run.caller.conn == nil {
		return
	}
	if !run.busy {
		limit, _ := strconv.ParseInt(s.inertValue("busy-reply-threshold"), 10, 64)
		took := time.Since(run.start)
		if limit <= 0 || took.Milliseconds() < limit {
			return // 0: never busy, as Redis, which sets no hook then
		}
		run.busy = true
		s.log.Warn("kv: slow script detected: still in execution after busy-reply-threshold; SCRIPT KILL can stop it",
			"script", run.sha, "ms", took.Milliseconds())
	}
	if a := s.aof; a != nil {
		// The replies of the commands run before the script in this
		// iteration may go out: what they logged goes first.
		a.flushBeforeExec()
		if s.Err() != nil {
			// The write failed with appendfsync always: the server
			// stops, its clients closed, as Redis exits.
			s.killScript(run, errScriptShutdown)
			return
		}
	}
	run.caller.conn.ServeOthers()
}

// serveWhileBusy serves c from inside a busy script (through ServeOthers):
// its requests are answered as in serve, where call answers BUSY to most.
// What the script's caller had in s.w, and the state of the script's
// command, are put back after, also if c's command panics (c is then
// closed, as always).
func (s *Server) serveWhileBusy(c *client) {
	w, cur, running, inExec, curArgs := s.w, s.cur, s.running, s.inExec, s.curArgs
	s.w = resp.Writer{Buf: s.bw[:0], Proto: c.proto, OnError: s.countError}
	s.inExec = false // c's commands are no part of the script's transaction
	defer func() {
		s.bw = s.w.Buf[:0]
		s.w, s.cur, s.running, s.inExec, s.curArgs = w, cur, running, inExec, curArgs
	}()
	s.serve(c)
}

// killScript stops the busy script with msg: at its next instruction, and
// at every one after, it raises msg.
func (s *Server) killScript(run *scriptRun, msg string) {
	run.killed = msg
	if vm := s.scripts.vm; vm != nil {
		vm.watch.err = errors.New(msg)
		vm.watch.done = killedDone
	}
}

// scriptKill stops the busy script, unless it has written, as Redis's
// scriptKill.
func scriptKill(s *Server, c *client, args [][]byte) {
	switch run := s.scripts.run; {
	case run == nil || !run.busy:
		s.w.Error("NOTBUSY No scripts in execution right now.")
	case run.wrote:
		s.w.Error("UNKILLABLE Sorry the script already executed write commands against the dataset. " +
			"You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
	default:
		s.log.Warn("kv: Lua script killed by user with SCRIPT KILL", "script", run.sha)
		s.killScript(run, errScriptKilled)
		s.w.OK()
	}
}

// stopBusyScript stops the busy script for SHUTDOWN NOSAVE, whatever it
// wrote, and takes what it logged out of the log's buffer: Redis exits
// there, and its log has none of the script, which it writes when the
// script ends.
func (s *Server) stopBusyScript() {
	run := s.scripts.run
	s.killScript(run, errScriptShutdown)
	// Nor does its caller get a reply, its pipeline's before or after
	// the script's: dropped, and it is closed before the loop flushes.
	s.markClosing(run.caller)
	if s.aof != nil {
		s.aof.dropTransaction()
	}
}
