package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// bgsave is a background save (BGSAVE, a save point): the RDB file of the
// keyspace as it is when the save starts, written without stopping the
// loop and without fork. The loop walks the keyspace a slice of time per
// iteration, from each database's last slot down, encoding keys into RDB
// bytes that a goroutine writes to the file (rdbSink). Every change to a
// key first passes through preserve, which encodes the key as it was if
// the walk has not reached it: the snapshot is copied on write, a key at
// a time, and only the keys changed before the walk reaches them are
// copied.
//
// Which keys the walk has yet to write is told by their slot: those at
// or below hi in the dict the database had at the start. A key added
// after the start goes at the end, above hi; a key deleted below hi
// moves the last one into its place, which, if the walk had passed it,
// is named in done, as a key preserve wrote is (the walk passes over the
// keys done names), and if not, brings hi down by the slot freed, where
// the next key added goes. FLUSHDB gives the database a new dict while a save
// runs (the walk keeps the old one), and SWAPDB swaps the
// dicts, which the save finds by identity: their keys are written under
// the numbers they had at the start.
type bgsave struct {
	s        *Server
	dbs      []snapDB // the databases that had keys at the start
	cur      int      // the one being walked
	selected int      // the database the bytes' last SELECTDB named; -1
	w        rdbWriter
	sink     *rdbSink
	started  time.Time
	dirty    int64         // stats.dirty at the start
	copied   int64         // keys preserve wrote
	longest  time.Duration // the longest step
	finished bool          // the walk is over
}

// snapDB is a database as the save has it: its dict at the start.
type snapDB struct {
	id            int
	keys          *dict[entry]
	hi            int // the slots 0..hi are not walked yet
	size, expires int // for RESIZEDB
	resized       bool
	done          map[string]struct{} // keys at or below hi not to write
}

// bgsaveSlice is how long the walk runs in a loop iteration, reading the
// clock every bgsaveBatch keys; bgsaveQueued how many bytes it lets wait
// for the file before it pauses until the goroutine has written half of
// them.
var (
	bgsaveSlice        = time.Millisecond
	bgsaveBatch        = 64
	bgsaveQueued int64 = 16 << 20
	// bgsavePause, if not 0, is how long the walk waits between slices
	// instead of going on at the next iteration, for tests.
	bgsavePause time.Duration
)

// errBgsaveRunning and errChildActive are Redis's replies, capitalized
// and punctuated as they are.
var (
	//lint:ignore ST1005 the text is Redis's reply
	errBgsaveRunning = errors.New("Background save already in progress")
	//lint:ignore ST1005 the text is Redis's reply
	errChildActive = errors.New("Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
)

// startBgsave starts a background save, as Redis's rdbSaveBackground
// forks one: unless one runs, or a rewrite of the append-only file
// (Redis's other child). Must be called on the loop.
func (s *Server) startBgsave() error {
	switch {
	case s.bg != nil:
		return errBgsaveRunning
	case s.rewriting():
		return errChildActive
	case s.ev == nil:
		return errors.New("the server is not serving")
	}
	s.snap.saves++
	now := time.Now()
	s.snap.lastTry = now
	b := &bgsave{s: s, selected: -1, w: rdbWriter{compress: s.compress(), access: s.accessSaver()}, started: now, dirty: s.stats.dirty}
	for _, d := range s.dbs {
		if n := d.keys.len(); n > 0 {
			b.dbs = append(b.dbs, snapDB{id: d.id, keys: d.keys, hi: n - 1, size: n, expires: d.expires.len()})
		}
	}
	b.w.buf = make([]byte, 0, rdbFlushAt+rdbFlushAt/4)
	s.rdbHeader(&b.w)
	path := s.snapshotPath()
	b.sink = newRDBSink(path, filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-bg-%d.rdb", os.Getpid())),
		s.inertValue("rdbchecksum") == "yes",
		func() { s.ev.Submit(0, b.step) },
		func(err error) { s.ev.Submit(0, func() { s.bgsaveDone(b, err) }) })
	s.bg = b
	s.log.Info("kv: background saving started", "keys", s.keyCount())
	s.ev.Submit(0, b.step)
	return nil
}

// step walks for bgsaveSlice, then yields to the loop; or, while the
// file is behind, waits for the goroutine to call it again.
func (b *bgsave) step() {
	if b.s.bg != b || b.finished {
		return
	}
	start := time.Now()
	defer func() { b.longest = max(b.longest, time.Since(start)) }()
	deadline := start.Add(bgsaveSlice)
	for b.cur < len(b.dbs) {
		if b.sink.behind() {
			return
		}
		sd := &b.dbs[b.cur]
		sd.hi = min(sd.hi, sd.keys.len()-1)
		for n := 0; sd.hi >= 0 && n < bgsaveBatch; n++ {
			key, e := sd.keys.at(sd.hi)
			sd.hi--
			if _, ok := sd.done[key]; ok {
				delete(sd.done, key)
				continue
			}
			b.write(sd, key, e)
		}
		if sd.hi < 0 {
			b.cur++
		}
		if len(b.w.buf) >= rdbFlushAt {
			b.handOff()
		}
		if time.Now().After(deadline) {
			if bgsavePause > 0 {
				b.s.ev.AfterFunc(0, bgsavePause, b.step)
			} else {
				b.s.ev.Submit(0, b.step)
			}
			return
		}
	}
	b.finished = true
	b.dbs = nil // the dicts flushed meanwhile may go
	b.w.byte(rdbOpEOF)
	b.handOff()
	b.sink.close()
}

// write encodes key's entry, of sd.
func (b *bgsave) write(sd *snapDB, key string, e *entry) {
	if b.selected != sd.id {
		if !sd.resized {
			b.w.selectDB(sd.id, sd.size, sd.expires)
			sd.resized = true
		} else {
			b.w.byte(rdbOpSelectDB)
			b.w.length(uint64(sd.id))
		}
		b.selected = sd.id
	}
	b.w.record(key, e)
}

// handOff gives the bytes encoded to the goroutine.
func (b *bgsave) handOff() {
	if len(b.w.buf) > 0 {
		b.w.buf = b.sink.put(b.w.buf)
	}
}

// snapDB returns the save's database whose dict is keys, or nil.
func (b *bgsave) snapDB(keys *dict[entry]) *snapDB {
	for i := range b.dbs {
		if b.dbs[i].keys == keys {
			return &b.dbs[i]
		}
	}
	return nil
}

// preserve writes key of d as it is, if the walk has not, before a
// change to it: see bgsave. A deletion passes del: the last key then
// moves into key's slot, and is marked done if the walk had passed it.
func (b *bgsave) preserve(d *db, key []byte, del bool) {
	sd := b.snapDB(d.keys)
	if sd == nil {
		return
	}
	i, _ := sd.keys.find(key)
	if i < 0 || i > sd.hi {
		return
	}
	k, e := sd.keys.at(i)
	if _, ok := sd.done[k]; !ok {
		b.write(sd, k, e)
		b.copied++
		b.s.snap.bgsaveCopied++
		if sd.done == nil {
			sd.done = make(map[string]struct{})
		}
		sd.done[k] = struct{}{}
		if len(b.w.buf) >= rdbFlushAt {
			b.handOff()
		}
	}
	if last := sd.keys.len() - 1; del && last > sd.hi {
		k, _ := sd.keys.at(last)
		sd.done[k] = struct{}{}
	} else if del {
		// The last slot, not walked yet, is going: the walk's bound comes
		// down with it, so that a key added next, in that slot, is not
		// taken for one the save started with.
		sd.hi = last - 1
	}
}

// check counts key, of d, as missed if it changed before the walk reached
// it without preserve: what the snapshot has of it is wrong.
func (b *bgsave) check(d *db, key []byte) {
	sd := b.snapDB(d.keys)
	if sd == nil {
		return
	}
	if i, _ := sd.keys.find(key); i >= 0 && i <= sd.hi {
		k, _ := sd.keys.at(i)
		if _, done := sd.done[k]; !done {
			if b.s.snap.bgsaveMissed++; b.s.snap.bgsaveMissed == 1 {
				b.s.log.Error("kv: a key changed during a background save was not preserved: the snapshot may hold its new value", "key", k)
			}
		}
	}
}

// flushing is told that d's keys are about to be dropped: if the save
// walks its dict, d gets a new one and the save keeps the old.
func (b *bgsave) flushing(d *db) bool {
	if b.snapDB(d.keys) == nil {
		return false
	}
	d.keys, d.expires = newDict[entry](0), newDict[struct{}](0)
	return true
}

// preserveKey passes a change to key of d to the running save, if any.
func (s *Server) preserveKey(d *db, key []byte) {
	if s.bg != nil {
		s.bg.preserve(d, key, false)
	}
}

// preserveRemoved is preserveKey for a key about to be deleted, whatever
// deletes it (remove, the active expiry cycle's reclaim).
func (s *Server) preserveRemoved(d *db, key []byte) {
	if s.bg != nil {
		s.bg.preserve(d, key, true)
	}
}

// beginCommand, while a save runs, preserves the keys a command that may
// write names, before it runs, and has the keys it looks up preserved as
// it runs (see db.peek).
func (b *bgsave) beginCommand(c *client, cmd *command, args [][]byte) {
	if cmd.flags&(cmdWrite|cmdMayReplicate) == 0 {
		return
	}
	b.s.writing = true
	if cmd.keys != nil {
		for _, k := range cmd.keys(args) {
			b.preserve(c.db, k, false)
		}
		return
	}
	if cmd.firstKey <= 0 {
		return
	}
	last := cmd.lastKey
	if last < 0 {
		last += len(args)
	}
	for i := cmd.firstKey; i <= last && i < len(args); i += max(cmd.step, 1) {
		b.preserve(c.db, args[i], false)
	}
}

// bgsaveDone ends a background save, on the loop, when the goroutine has
// put the file in place or failed, as Redis's backgroundSaveDoneHandler.
func (s *Server) bgsaveDone(b *bgsave, err error) {
	if s.bg != b {
		return // aborted
	}
	s.bg = nil
	s.snap.lastBgsaveStep = b.longest
	end := time.Now()
	s.snap.lastBgsaveTime = end.Unix() - b.started.Unix() // as Redis counts it, in whole seconds of the clock
	if err != nil {
		s.snap.bgsaveErr = err
		s.log.Error("kv: background saving error", "err", err)
		return
	}
	s.snap.bgsaveErr = nil
	s.snap.lastSave = end
	s.snap.dirtyAtSave = b.dirty
	s.log.Info("kv: background saving terminated with success", "file", s.snapshotPath(),
		"took", end.Sub(b.started), "copied_keys", b.copied, "longest_step", b.longest)
}

// abortBgsave stops the running save, if any, as Redis kills its child:
// the temporary file is removed and the file stays as it was; the last
// status does not change. It waits for the goroutine to stop, so that the
// file a save made next is not replaced by this one's.
func (s *Server) abortBgsave(why string) {
	b := s.bg
	if b == nil {
		return
	}
	s.bg = nil
	b.dbs = nil
	b.sink.abort()
	s.log.Warn("kv: background save stopped", "reason", why)
}

// saveCron starts a background save as Redis's serverCron does: when no
// save or rewrite runs, for the first save point whose changes and
// seconds since the last save are reached (unless the last background
// save failed less than bgsaveRetryDelay ago), or when one was
// scheduled; and a rewrite of the append-only file scheduled while a
// save ran.
func (s *Server) saveCron(now time.Time) {
	if s.bg != nil || s.rewriting() {
		return
	}
	if s.rewriteScheduled {
		s.rewriteScheduled = false
		if err := s.startRewrite(); err != nil {
			s.log.Error("kv: the scheduled rewrite of the append-only file could not start", "err", err)
			if s.aof != nil {
				s.aof.giveUp(err)
			}
		}
		if s.aof != nil && s.aof.rw != nil {
			return
		}
	}
	retry := now.Unix()-s.snap.lastTry.Unix() > bgsaveRetryDelay || s.snap.bgsaveErr == nil
	if !retry {
		return
	}
	f := strings.Fields(s.inertValue("save"))
	for i := 0; i+1 < len(f); i += 2 {
		secs, _ := strconv.ParseInt(f[i], 10, 64)
		changes, _ := strconv.ParseInt(f[i+1], 10, 64)
		if s.stats.dirty-s.snap.dirtyAtSave >= changes && now.Unix()-s.snap.lastSave.Unix() > secs {
			s.log.Info("kv: a save point is reached, saving", "changes", changes, "seconds", secs)
			if err := s.startBgsave(); err != nil {
				s.log.Error("kv: the background save could not start", "err", err)
			}
			return
		}
	}
	if s.snap.bgsaveScheduled {
		if s.startBgsave() == nil {
			s.snap.bgsaveScheduled = false
		}
	}
}

// bgsaveRetryDelay is how many seconds after a failed background save
// the save points wait, as Redis's CONFIG_BGSAVE_RETRY_DELAY.
var bgsaveRetryDelay int64 = 5

// bgsaveError is the MISCONF error of the write commands refused after a
// background save failed (see stopWrites), as Redis words it.
const bgsaveError = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error."

// stopWrites reports whether the write commands are refused, as Redis's
// writeCommandsDeniedByDiskError: the last background save failed, and
// with stop-writes-on-bgsave-error yes and save points.
func (s *Server) stopWrites() bool {
	return s.snap.bgsaveErr != nil && s.inertValue("stop-writes-on-bgsave-error") == "yes" && s.savePoints()
}

// rdbSink is the goroutine that writes a background save's bytes to the
// temporary file, syncs it, renames it over the RDB file and syncs the
// directory, the checksum computed on the way. The loop puts chunks; it
// never waits for the goroutine, except in abort.
type rdbSink struct {
	path, tmp string
	checksum  bool
	resume    func()          // calls step again, once the file has caught up
	done      func(err error) // the end, unless aborted

	mu      sync.Mutex
	wake    *sync.Cond
	chunks  [][]byte
	free    [][]byte // chunks written, for the loop to fill again
	queued  int64
	paused  bool // the walk waits for resume
	closed  bool // the last chunk is in
	stopped bool
	exited  chan struct{}
}

func newRDBSink(path, tmp string, checksum bool, resume func(), done func(error)) *rdbSink {
	k := &rdbSink{path: path, tmp: tmp, checksum: checksum, resume: resume, done: done, exited: make(chan struct{})}
	k.wake = sync.NewCond(&k.mu)
	go k.run()
	return k
}

// put queues b and returns an empty buffer to fill next.
func (k *rdbSink) put(b []byte) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.chunks = append(k.chunks, b)
	k.queued += int64(len(b))
	k.wake.Signal()
	if n := len(k.free); n > 0 {
		next := k.free[n-1]
		k.free = k.free[:n-1]
		return next[:0]
	}
	return make([]byte, 0, cap(b))
}

// behind reports whether the queue is past bgsaveQueued: the walk then
// pauses until resume.
func (k *rdbSink) behind() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.queued < bgsaveQueued {
		return false
	}
	k.paused = true
	return true
}

func (k *rdbSink) close() {
	k.mu.Lock()
	k.closed = true
	k.wake.Signal()
	k.mu.Unlock()
}

// abort stops the goroutine and waits until it has: the temporary file
// is removed, and the RDB file left as it was.
func (k *rdbSink) abort() {
	k.mu.Lock()
	k.stopped = true
	k.wake.Signal()
	k.mu.Unlock()
	<-k.exited
}

func (k *rdbSink) run() {
	defer close(k.exited)
	err := k.write()
	k.mu.Lock()
	stopped := k.stopped
	k.mu.Unlock()
	if stopped {
		return
	}
	k.done(err)
}

// write writes the chunks as they come, then puts the file in place.
func (k *rdbSink) write() error {
	f, err := os.Create(k.tmp)
	if err != nil {
		return fmt.Errorf("opening the temporary RDB file: %w", err)
	}
	fail := func(err error) error {
		f.Close()
		os.Remove(k.tmp)
		return err
	}
	var crc uint64
	for {
		k.mu.Lock()
		for len(k.chunks) == 0 && !k.closed && !k.stopped {
			k.wake.Wait()
		}
		if k.stopped {
			k.mu.Unlock()
			return fail(errors.New("aborted"))
		}
		chunks, closed := k.chunks, k.closed
		k.chunks = nil
		k.mu.Unlock()
		for _, c := range chunks {
			if k.checksum {
				crc = rdbCRC(crc, c)
			}
			if _, err := f.Write(c); err != nil {
				return fail(fmt.Errorf("writing the RDB file: %w", err))
			}
			k.mu.Lock()
			k.queued -= int64(len(c))
			k.free = append(k.free, c)
			resume := k.paused && k.queued < bgsaveQueued/2
			if resume {
				k.paused = false
			}
			stopped := k.stopped
			k.mu.Unlock()
			if stopped {
				return fail(errors.New("aborted"))
			}
			if resume {
				k.resume()
			}
		}
		if closed && len(chunks) == 0 {
			break
		}
	}
	if _, err := f.Write(binary.LittleEndian.AppendUint64(nil, crc)); err != nil {
		return fail(fmt.Errorf("writing the RDB file: %w", err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("syncing the RDB file: %w", err))
	}
	if err := f.Close(); err != nil {
		os.Remove(k.tmp)
		return fmt.Errorf("writing the RDB file: %w", err)
	}
	k.mu.Lock()
	stopped := k.stopped
	k.mu.Unlock()
	if stopped {
		os.Remove(k.tmp)
		return errors.New("aborted")
	}
	if err := os.Rename(k.tmp, k.path); err != nil {
		os.Remove(k.tmp)
		return fmt.Errorf("renaming the RDB file: %w", err)
	}
	if err := syncDir(filepath.Dir(k.path)); err != nil {
		return fmt.Errorf("syncing the RDB file's directory: %w", err)
	}
	return nil
}
