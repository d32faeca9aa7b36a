package kv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/evloop/evloop/resp"
)

// aof is the append-only file: every command that changed the keyspace, in
// RESP, replayed at start. Changes collect in buf during a loop iteration
// and are written (and, for "always", synced) before that iteration's
// replies leave, so an acknowledged change is in the file.
type aof struct {
	s     *Server
	path  string
	f     *os.File
	fsync string
	buf   []byte
	curDB int // the database the file's last SELECT chose; -1 before any
	// execOps counts the commands the running EXEC logged; execAt is
	// where the first begins in buf, where MULTI goes once a second
	// follows: one alone is logged bare, as Redis 7.0 logs it.
	execOps, execAt int
	err             error
	size            int64
	// snapshot is set while the log is off and a rewrite BGREWRITEAOF
	// started writes the keyspace to the log's file, as Redis rewrites
	// with appendonly no: when it is complete the file is closed and
	// s.aof is nil again (see logOn).
	snapshot bool

	// everysec: a goroutine syncs once a second when there was a write.
	mu      sync.Mutex
	written bool
	stop    chan struct{}
	stopped chan struct{}

	rw         *rewrite
	restarting bool // a rewrite given up is to start again (rewrite.restart)

	// base is the file's size after the last rewrite, or at start: the
	// automatic rewrite measures growth from it.
	base int64
	// failures counts the rewrites that failed in a row; from the third,
	// automatic rewrites wait until retryAt, a minute after the first
	// refusal, then twice as long each time, up to an hour (Redis's
	// limits).
	failures   int
	retryAt    time.Time
	retryDelay time.Duration
}

// openLog opens the log, replaying what it holds.
func (s *Server) openLog() error {
	path := filepath.Join(s.cfg.Dir, s.cfg.AppendFilename)
	if err := s.replayLog(path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("kv: opening the append-only file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	s.aof = &aof{s: s, path: path, f: f, fsync: s.cfg.AppendFsync, curDB: -1, size: st.Size(), base: st.Size()}
	return nil
}

// startLog turns the log on while serving, as CONFIG SET appendonly yes
// does: a rewrite writes the keyspace to a new file, which becomes the log
// when it is complete; until then the changes served are kept by the
// rewrite alone, and a failed rewrite turns the log off again. A rewrite
// BGREWRITEAOF started with the log off is that rewrite.
func (s *Server) startLog() error {
	if a := s.aof; a != nil && a.snapshot {
		a.snapshot = false
	} else if s.bg != nil {
		// As Redis's, while its saving child runs: the rewrite waits for
		// the save (saveCron), and the log has no file until it is done.
		s.aof = s.newLog()
		s.rewriteScheduled = true
	} else {
		s.aof = s.newLog()
		if err := s.startRewrite(); err != nil {
			s.aof = nil
			return fmt.Errorf("AOF rewrite failed to start: %s", err)
		}
	}
	s.aof.startSyncer()
	s.log.Info("kv: append-only file enabled, writing it", "file", s.aof.path)
	return nil
}

// newLog returns the log before its first rewrite: it has no file yet.
func (s *Server) newLog() *aof {
	return &aof{s: s, path: filepath.Join(s.cfg.Dir, s.cfg.AppendFilename), fsync: s.cfg.AppendFsync, curDB: -1}
}

// logOn reports whether the log is on (appendonly yes), its first rewrite
// done or not.
func (s *Server) logOn() bool { return s.aof != nil && !s.aof.snapshot }

// replayChunk is how much of the log replayLog reads at a time; a command
// longer than that grows its buffer.
const replayChunk = 1 << 20

// replayLog runs the commands of the log at path, if it exists, reading
// it a chunk at a time, so that a log of gigabytes needs, beyond the
// keyspace it builds, a buffer of a megabyte or of up to twice its longest
// command, no longer than the file (three times while that buffer grows).
// A last command cut short (a crash while writing it), or a transaction
// without its EXEC, is cut off the file, with a log line (or, with
// aof-load-truncated no, stops the start, naming where); anything else
// malformed stops the start.
func (s *Server) replayLog(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kv: reading the append-only file: %w", err)
	}
	defer f.Close()
	var size int64 // to grow the buffer no further than the file needs
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	s.replay = true
	defer func() { s.replay = false; s.w.Reset() }()
	c := &client{s: s, db: s.dbs[0], proto: 2, authenticated: true}
	var p resp.Parser
	p.MaxBulk = math.MaxInt
	buf := make([]byte, 0, replayChunk)
	// base is the file offset of buf[0]; good, the end of the last
	// complete command outside a transaction.
	base, off, good := int64(0), 0, int64(0)
	eof := false
	var queued [][][]byte
	inMulti := false
	n := 0
	for {
		args, m, err := p.Command(buf[off:])
		if err == resp.ErrIncomplete {
			if eof {
				break
			}
			base += int64(off)
			if buf, eof, err = refill(f, buf, off, size-base); err != nil {
				return fmt.Errorf("kv: reading the append-only file: %w", err)
			}
			off = 0
			continue
		}
		at := base + int64(off)
		if err != nil {
			return fmt.Errorf("kv: bad format in the append-only file %s at byte %d: %q", path, at, err.Error())
		}
		off += m
		if len(args) == 0 {
			continue
		}
		cmd := lookupCommand(args)
		if cmd == nil {
			return fmt.Errorf("kv: unknown command %q in the append-only file %s at byte %d", args[0], path, at)
		}
		if !arityOK(cmd.arity, len(args)) {
			return fmt.Errorf("kv: wrong number of arguments for %q in the append-only file %s at byte %d", cmd.name, path, at)
		}
		switch cmd.name {
		case "multi":
			inMulti = true
			continue
		case "exec":
			for _, q := range queued {
				s.replayOne(c, q)
			}
			queued, inMulti = nil, false
			good = base + int64(off)
			continue
		}
		if inMulti {
			queued = append(queued, copyArgs(args))
			continue
		}
		s.replayOne(c, args)
		n++
		good = base + int64(off)
	}
	if end := base + int64(len(buf)); good < end {
		if !s.loadTruncated {
			return fmt.Errorf("kv: the append-only file %s ends with an incomplete command or transaction at byte %d of %d, and aof-load-truncated is no: cut it there, or set aof-load-truncated yes", path, good, end)
		}
		s.log.Warn("kv: the append-only file ends with an incomplete command or transaction; cutting it off",
			"file", path, "size", end, "kept", good)
		if err := os.Truncate(path, good); err != nil {
			return fmt.Errorf("kv: cutting the append-only file: %w", err)
		}
	}
	s.log.Info("kv: append-only file loaded", "file", path, "commands", n, "keys", s.keyCount())
	return nil
}

// refill keeps buf[off:], the command begun (the parser goes on with its
// bytes wherever they are), at the front of buf and reads more of f after
// it, doubling buf when less than half a chunk is free, or growing it to what
// is left of the file (left bytes from the command's start). It reports
// the end of the file.
func refill(f *os.File, buf []byte, off int, left int64) ([]byte, bool, error) {
	buf = buf[:copy(buf, buf[off:])]
	if cap(buf)-len(buf) < replayChunk/2 {
		grown := 2 * cap(buf)
		if rest := left - int64(len(buf)); rest < int64(grown-len(buf)) {
			grown = len(buf) + int(max(rest, replayChunk/2))
		}
		buf = append(make([]byte, 0, grown), buf...)
	}
	k, err := f.Read(buf[len(buf):cap(buf)])
	buf = buf[:len(buf)+k]
	if err == io.EOF {
		return buf, true, nil
	}
	return buf, false, err
}

func (s *Server) replayOne(c *client, args [][]byte) {
	s.mono = s.tick()
	lookupCommand(args).fn(s, c, args)
	s.w.Reset()
}

func (s *Server) keyCount() int {
	n := 0
	for _, d := range s.dbs {
		n += d.size()
	}
	return n
}

// append logs a change made in database dbID.
func (a *aof) append(dbID int, args [][]byte) {
	if dbID != a.curDB {
		a.buf = resp.AppendCommand(a.buf, []byte("SELECT"), strconv.AppendInt(nil, int64(dbID), 10))
		a.curDB = dbID
	}
	if a.s.inExec {
		switch a.execOps++; a.execOps {
		case 1:
			a.execAt = len(a.buf)
		case 2:
			a.buf = slices.Insert(a.buf, a.execAt, resp.AppendCommand(nil, []byte("MULTI"))...)
		}
	}
	a.buf = resp.AppendCommand(a.buf, args...)
	if a.rw != nil {
		a.rw.logged(dbID, args)
	}
}

// endTransaction closes the transaction EXEC logged, if it logged more
// than one command.
func (a *aof) endTransaction() {
	if a.execOps > 1 {
		a.buf = resp.AppendCommand(a.buf, []byte("EXEC"))
	}
	a.execOps = 0
}

// flushBeforeExec writes what was logged before the transaction under
// way (the script's), which stays in the buffer, still open.
func (a *aof) flushBeforeExec() {
	if a.execOps == 0 {
		a.flush()
		return
	}
	if a.execAt == 0 {
		return
	}
	tx := slices.Clone(a.buf[a.execAt:])
	a.buf = a.buf[:a.execAt]
	a.flush()
	a.execAt = len(a.buf) // what the file did not take, if it failed
	a.buf = append(a.buf, tx...)
}

// dropTransaction takes the transaction under way out of the buffer, as
// if it had not been logged.
func (a *aof) dropTransaction() {
	if a.execOps > 0 {
		a.buf = a.buf[:a.execAt]
		a.execOps = 0
	}
}

// flush writes what this iteration logged; with "always" it also syncs.
// It runs on the loop before the iteration's replies are written. A write
// that fails leaves what the file did not take for the next flush, and
// the write commands are refused meanwhile (writeError); with "always"
// the server stops instead, as Redis exits ("Can't recover from AOF
// write error when the AOF fsync policy is 'always'"): none of the
// iteration's replies, which may acknowledge what the file lacks, leaves.
func (a *aof) flush() {
	if len(a.buf) == 0 {
		return
	}
	if a.f == nil {
		a.buf = a.buf[:0] // the first rewrite keeps what it needs
		return
	}
	lm, sec := &a.s.latency, a.s.ms/1000
	start := lm.clock()
	n, err := a.f.Write(a.buf)
	a.size += int64(n)
	lm.note("aof-write", lm.since(start), sec)
	if err == nil && a.fsync == "always" {
		start = lm.clock()
		err = a.f.Sync()
		lm.note("aof-fsync-always", lm.since(start), sec)
	}
	if err != nil {
		if a.err == nil {
			a.s.log.Error("kv: writing the append-only file", "err", err)
		}
		a.err = err
		a.buf = a.buf[n:]
		if a.fsync == "always" {
			a.s.stop(fmt.Errorf("kv: can't recover from a write error of the append-only file with appendfsync always: %w", err))
		}
		return
	}
	if a.err != nil {
		a.s.log.Info("kv: the append-only file is writable again")
	}
	a.err = nil
	a.buf = a.buf[:0]
	if a.fsync == "everysec" {
		a.mu.Lock()
		a.written = true
		a.mu.Unlock()
	}
}

// startSyncer starts the goroutine that syncs once a second ("everysec").
func (a *aof) startSyncer() {
	a.stop, a.stopped = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(a.stopped)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-a.stop:
				return
			case <-t.C:
			}
			a.mu.Lock()
			due := a.written
			a.written = false
			f := a.f
			a.mu.Unlock()
			if due && f != nil {
				if err := f.Sync(); err != nil {
					a.s.log.Error("kv: syncing the append-only file", "err", err)
				}
			}
		}
	}()
}

// cron runs ten times a second: a write that failed is tried again, and a
// file grown past auto-aof-rewrite-min-size by auto-aof-rewrite-percentage
// of its size after the last rewrite is rewritten, as Redis does.
func (a *aof) cron(now time.Time) {
	if a.err != nil {
		a.flush()
	}
	s := a.s
	if s.rewriting() || a.f == nil || s.bg != nil || s.autoRewritePerc == 0 || a.size <= s.autoRewriteMin {
		return
	}
	growth := a.size*100/max(a.base, 1) - 100
	if growth < s.autoRewritePerc || a.limited(now) {
		return
	}
	s.log.Info("kv: starting an automatic rewrite of the append-only file", "growth_percent", growth)
	if err := s.startRewrite(); err != nil {
		s.log.Error("kv: the automatic rewrite of the append-only file could not start", "err", err)
		a.failed(err)
	}
}

// limited reports whether automatic rewrites are held back after three or
// more failures in a row: the first time it is asked, for a minute, then
// for twice the last delay each time the last one has passed, up to an
// hour.
func (a *aof) limited(now time.Time) bool {
	if a.failures < 3 {
		a.retryAt, a.retryDelay = time.Time{}, 0
		return false
	}
	if !a.retryAt.IsZero() {
		if now.Before(a.retryAt) {
			return true
		}
		a.retryAt = time.Time{}
		return false
	}
	a.retryDelay = min(max(2*a.retryDelay, time.Minute), time.Hour)
	a.retryAt = now.Add(a.retryDelay)
	a.s.log.Warn("kv: the append-only file's rewrite has failed repeatedly; the next automatic one waits",
		"failures", a.failures, "delay", a.retryDelay)
	return true
}

// failed records a rewrite that failed, or could not start.
func (a *aof) failed(err error) {
	a.s.lastRewriteErr = err
	a.failures++
}

// closeLog writes and syncs what is pending and closes the file. It runs
// on the loop, or before the loop starts.
func (s *Server) closeLog() error {
	a := s.aof
	if a == nil {
		return nil
	}
	s.aof = nil
	s.rewriteScheduled = false // as Redis's stopAppendOnly
	if a.rw != nil {
		a.rw.abort(errors.New("shutting down"))
	}
	if a.stop != nil {
		close(a.stop)
		<-a.stopped
	}
	a.flush()
	if a.f == nil {
		return nil // the first rewrite was not complete: there is no log
	}
	err := a.err
	if serr := a.f.Sync(); err == nil {
		err = serr
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeError is the MISCONF error for the commands refused while the log
// cannot be written (see deniedOnWriteError), as Redis's
// writeCommandsGetDiskErrorMessage words it: the system's text for the
// error, without the file's path.
func (s *Server) writeError() string {
	return "MISCONF Errors writing to the AOF file: " + strerror(s.aof.err)
}

// deniedOnWriteError reports whether cmd is refused while the log cannot
// be written, as Redis's processCommand refuses them: a write command,
// PING (a health check is told), and an EXEC with a write queued.
func deniedOnWriteError(c *client, cmd *command) bool {
	return cmd.flags&cmdWrite != 0 || cmd.name == "ping" || (cmd.name == "exec" && c.flags&flagQueuedWrite != 0)
}

// strerror returns the text C's strerror gives for err's system error, as
// Redis replies it: Go's texts are C's with the first letter lowered ("no
// space left on device"). A short write is ENOSPC, as Redis takes it; an
// error of another kind gives its own text, without a path.
func strerror(err error) string {
	var errno syscall.Errno
	var pe *fs.PathError
	switch {
	case errors.As(err, &errno):
		err = errno
	case errors.Is(err, io.ErrShortWrite):
		err = syscall.ENOSPC
	case errors.As(err, &pe):
		err = pe.Err
	}
	msg := err.Error()
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// rewrite compacts the log without stopping the loop: it walks the
// keyspace a slice per loop iteration, writing each key as the commands
// that rebuild it into a new file, while the commands served meanwhile
// are also kept in memory. A command that changes only keys already
// written is kept as it is; one that changes a key not yet written keeps,
// instead, the resulting state of every key it changed (DEL and rebuild),
// and those keys count as written. Replaying the new file — the walk, then
// what was kept — gives the keyspace as it is when the rewrite ends, which
// then takes the log's place.
type rewrite struct {
	s       *Server
	a       *aof
	gen     uint16
	tmp     *os.File
	out     *bufio.Writer
	tail    resp.Writer // commands served during the rewrite
	db      int         // the database being walked
	pos     int         // the next slot to walk, from the end down
	written int64
	touched []touchedKey // keys the running command changed
	curDB   int          // the base's last SELECT
	tailDB  int          // the tail's last SELECT
	started time.Time
}

type touchedKey struct {
	db  *db
	key string
}

// errRewriteRunning is startRewrite's error while a rewrite runs.
var errRewriteRunning = errors.New("kv: a rewrite of the append-only file is running")

// startRewrite begins a rewrite, or reports one is running. With the log
// off, it writes the keyspace to the log's file all the same, as Redis's
// does: a snapshot (see aof.snapshot).
func (s *Server) startRewrite() error {
	a := s.aof
	if a == nil {
		a = s.newLog()
		a.snapshot = true
	}
	if a.rw != nil {
		return errRewriteRunning
	}
	tmp, err := os.CreateTemp(filepath.Dir(a.path), "temp-rewriteaof-*.aof")
	if err != nil {
		return fmt.Errorf("can't create the rewrite file: %w", err)
	}
	s.aof = a
	tmp.Chmod(0o644) // as the log's own mode; CreateTemp makes it 0600
	s.rewriteGen++
	if s.rewriteGen == 0 { // wrapped: no entry may carry the new generation
		for _, d := range s.dbs {
			for i := range d.keys.len() {
				_, e := d.keys.at(i)
				e.gen = 0
			}
		}
		s.rewriteGen = 1
	}
	rw := &rewrite{s: s, a: a, gen: s.rewriteGen, tmp: tmp, out: bufio.NewWriterSize(tmp, 256<<10),
		pos: s.dbs[0].keys.len() - 1, curDB: -1, tailDB: -1, started: time.Now()}
	a.rw = rw
	s.ev.Submit(0, rw.step)
	return nil
}

// rewriteSlice is how long the walk of a rewrite runs in a loop
// iteration, reading the clock every rewriteBatch keys.
var (
	rewriteSlice = time.Millisecond
	rewriteBatch = 256
	// rewritePause, if not 0, is how long the walk waits between slices
	// instead of going on at the next iteration, for tests.
	rewritePause time.Duration
)

// step walks for rewriteSlice, then yields to the loop.
func (rw *rewrite) step() {
	s := rw.s
	if rw.a.rw != rw {
		return // aborted
	}
	deadline := time.Now().Add(rewriteSlice)
	var w resp.Writer
	for rw.db < len(s.dbs) {
		d := s.dbs[rw.db]
		rw.pos = min(rw.pos, d.keys.len()-1) // the database may have shrunk
		if rw.pos < 0 {
			if rw.db++; rw.db < len(s.dbs) {
				rw.pos = s.dbs[rw.db].keys.len() - 1
			}
			continue
		}
		for n := 0; rw.pos >= 0 && n < rewriteBatch; n++ {
			key, e := d.keys.at(rw.pos)
			rw.pos--
			if e.gen == rw.gen || (e.exp != 0 && e.exp <= s.now()) {
				continue
			}
			e.gen = rw.gen
			if rw.curDB != d.id {
				w.Command([]byte("SELECT"), strconv.AppendInt(nil, int64(d.id), 10))
				rw.curDB = d.id
			}
			writeValue(&w, key, e)
		}
		if _, err := rw.out.Write(w.Buf); err != nil {
			rw.abort(err)
			return
		}
		rw.written += int64(len(w.Buf))
		w.Reset()
		if time.Now().After(deadline) {
			if rewritePause > 0 {
				s.ev.AfterFunc(0, rewritePause, rw.step)
			} else {
				s.ev.Submit(0, rw.step)
			}
			return
		}
	}
	rw.finish()
}

// writeValue writes the commands that rebuild key's value and expiry.
func writeValue(w *resp.Writer, key string, e *entry) {
	k := []byte(key)
	switch o := e.obj.(type) {
	case nil, *strBuf:
		w.Command([]byte("SET"), k, []byte(e.str))
	case *list:
		o.rewrite(w, k)
	case *hash:
		o.rewrite(w, k)
	case *set:
		o.rewrite(w, k)
	case *zset:
		o.rewrite(w, k)
	}
	if e.exp != 0 {
		w.Command([]byte("PEXPIREAT"), k, strconv.AppendInt(nil, e.exp, 10))
	}
}

// touch notes that the running command changed key.
func (rw *rewrite) touch(d *db, key []byte) {
	for _, t := range rw.touched {
		if t.db == d && t.key == string(key) {
			return
		}
	}
	rw.touched = append(rw.touched, touchedKey{db: d, key: string(key)})
}

// logged keeps a command logged during the rewrite, as described on
// rewrite.
func (rw *rewrite) logged(dbID int, args [][]byte) {
	touched := rw.touched
	rw.touched = rw.touched[:0]
	allWritten := true
	for _, t := range touched {
		if e := t.db.keys.get([]byte(t.key)); e == nil || e.gen != rw.gen {
			allWritten = false
		}
	}
	if allWritten {
		rw.selectDB(dbID)
		rw.tail.Command(args...)
		return
	}
	for _, t := range touched {
		rw.selectDB(t.db.id)
		k := []byte(t.key)
		rw.tail.Command([]byte("DEL"), k)
		if e := t.db.keys.get(k); e != nil {
			e.gen = rw.gen
			writeValue(&rw.tail, t.key, e)
		}
	}
}

func (rw *rewrite) selectDB(id int) {
	if rw.tailDB != id {
		rw.tail.Command([]byte("SELECT"), strconv.AppendInt(nil, int64(id), 10))
		rw.tailDB = id
	}
}

// finish writes what was kept after the walk, syncs the new file and puts
// it in the log's place.
func (rw *rewrite) finish() {
	a := rw.a
	a.flush() // the old file gets everything up to here
	_, err := rw.out.Write(rw.tail.Buf)
	if err == nil {
		err = rw.out.Flush()
	}
	if err == nil {
		err = rw.tmp.Sync()
	}
	if err == nil {
		err = os.Rename(rw.tmp.Name(), a.path)
	}
	if err != nil {
		rw.abort(err)
		return
	}
	// The rename is the directory's to keep: without its sync, a power
	// loss could bring the old file back while the writes acknowledged
	// since went to the new one (Redis syncs the directory too).
	if err := syncDir(filepath.Dir(a.path)); err != nil {
		rw.s.log.Warn("kv: syncing the append-only file's directory after the rewrite", "err", err)
	}
	rw.s.stats.aofRewrites++
	rw.s.lastRewriteErr = nil
	if a.snapshot {
		rw.tmp.Close()
		a.rw = nil
		rw.s.aof = nil
		rw.s.log.Info("kv: append-only file rewritten, the log staying off", "file", a.path, "took", time.Since(rw.started))
		return
	}
	st, _ := rw.tmp.Stat()
	a.mu.Lock()
	old := a.f
	a.f = rw.tmp
	a.mu.Unlock()
	if old != nil {
		old.Close()
	}
	if st != nil {
		a.size = st.Size()
	}
	a.curDB = rw.tailDB
	if a.curDB < 0 {
		a.curDB = rw.curDB
	}
	// What the old file could not take when a write failed (a.buf, which
	// may begin inside a command) is in the new one, walked or kept in the
	// tail: the failure ends with the old file.
	if a.err != nil {
		a.s.log.Info("kv: the append-only file is writable again")
	}
	a.buf, a.err = a.buf[:0], nil
	a.base = a.size
	a.rw = nil
	a.failures = 0
	rw.s.log.Info("kv: append-only file rewritten", "file", a.path, "bytes", a.size, "took", time.Since(rw.started))
}

// abort gives the rewrite up; the old log stays in use.
func (rw *rewrite) abort(err error) {
	rw.discard()
	rw.s.log.Error("kv: append-only file rewrite failed", "err", err)
	rw.a.giveUp(err)
}

// restart gives the rewrite up for a new one that walks the keyspace from
// the start, as SWAPDB needs; it is not a failure unless the new one
// cannot start. The new one starts after the running command, which the
// old file alone logs (its effect is in what the new one walks).
//
// Until it starts, a.restarting keeps a background save from starting in
// between, which Redis refuses while its rewriting child runs.
func (rw *rewrite) restart(why string) {
	rw.discard()
	rw.s.log.Info("kv: append-only file rewrite starts again", "reason", why)
	s, a := rw.s, rw.a
	a.restarting = true
	s.ev.Submit(0, func() {
		a.restarting = false
		if s.aof != a || a.rw != nil {
			return // the log was turned off, or another rewrite runs
		}
		if err := s.startRewrite(); err != nil {
			s.log.Error("kv: append-only file rewrite failed", "err", err)
			a.giveUp(err)
		}
	})
}

// rewriting reports whether a rewrite of the append-only file runs, or
// is to start again at once (rewrite.restart): Redis's rewriting child
// runs through what evkv's restart is.
func (s *Server) rewriting() bool {
	return s.aof != nil && (s.aof.rw != nil || s.aof.restarting)
}

// discard ends the rewrite and removes its file.
func (rw *rewrite) discard() {
	rw.a.rw = nil
	rw.tmp.Close()
	os.Remove(rw.tmp.Name())
}

// giveUp records a rewrite that failed; the log the first rewrite of
// CONFIG SET appendonly yes was to start is turned off again, as is the
// one of a snapshot.
func (a *aof) giveUp(err error) {
	a.failed(err)
	if a.f == nil && a.s.aof == a {
		if !a.snapshot {
			a.s.log.Error("kv: append-only file disabled: its first rewrite failed")
		}
		a.s.closeLog()
	}
}

// syncDir flushes a directory's entries (a rename in it) to the disk.
// Windows cannot sync a directory; its renames are journaled.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
