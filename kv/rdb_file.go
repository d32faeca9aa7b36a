package kv

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// rdbState is the state of the RDB file: the last save, and the last load.
type rdbState struct {
	lastSave     time.Time // the last save that succeeded (SAVE, BGSAVE), or the start
	dirtyAtSave  int64     // stats.dirty then
	saves        int64     // SAVEs and BGSAVEs run, failed or not (rdb_saves)
	loaded       int64     // keys the last load took (rdb_last_load_keys_loaded)
	expired      int64     // keys it skipped as expired (rdb_last_load_keys_expired)
	shutdownMode string    // SHUTDOWN's SAVE or NOSAVE, if given
	shutdownDone bool      // SHUTDOWN saved: Shutdown need not, unless keys changed

	lastTry         time.Time // the last background save's start
	bgsaveErr       error     // why the last background save failed; nil if it did not
	bgsaveScheduled bool      // BGSAVE SCHEDULE came while a rewrite ran
	lastBgsaveTime  int64     // the seconds the last background save took; -1 before one
	// bgsaveCopied counts the keys background saves preserved before
	// their walks reached them; bgsaveMissed those changed unpreserved,
	// which no write path should leave (see bgsave.check).
	bgsaveCopied, bgsaveMissed int64
	lastBgsaveStep             time.Duration // the last background save's longest step
}

// snapshotPath is where the RDB file is: dir/dbfilename.
func (s *Server) snapshotPath() string {
	return filepath.Join(s.cfg.Dir, s.inertValue("dbfilename"))
}

// savePoints reports whether the save parameter names save points: then
// the keyspace is saved in the background when they are reached (see
// saveCron), and at shutdown, as Redis saves it.
func (s *Server) savePoints() bool { return strings.TrimSpace(s.inertValue("save")) != "" }

// errSaveParams is Redis's reply to a malformed save, capitalized as it is.
//
//lint:ignore ST1005 the text is Redis's reply
var errSaveParams = errors.New("Invalid save parameters")

// checkSave checks save's value as Redis does: pairs of seconds and
// changes, or nothing.
func checkSave(v string) (string, error) {
	f := strings.Fields(v)
	if len(f)%2 != 0 {
		return "", errSaveParams
	}
	for _, n := range f {
		if i, err := strconv.ParseInt(n, 10, 64); err != nil || i < 0 {
			return "", errSaveParams
		}
	}
	return strings.Join(f, " "), nil
}

// loadSnapshot loads the RDB file, if there is one, into the empty
// keyspace, as Redis loads it at start when appendonly is off. Keys
// whose time has passed are left out, as a master leaves them; a
// corrupt file stops the start.
func (s *Server) loadSnapshot() error {
	path := s.snapshotPath()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kv: reading the RDB file: %w", err)
	}
	defer f.Close()
	start := time.Now()
	res, err := s.readSnapshot(f, s.dbs)
	if err != nil {
		return fmt.Errorf("kv: the RDB file %s cannot be loaded: %w", path, err)
	}
	s.snap.loaded, s.snap.expired = res.loaded, res.expired
	s.log.Info("kv: RDB file loaded", "file", path, "version", res.version, "created_by", res.createdBy,
		"keys", res.loaded, "expired", res.expired, "took", time.Since(start))
	return nil
}

// readSnapshot loads the open RDB file f into dbs, which must be empty,
// as loadRDB loads it, keys whose time has passed left out, without
// keyspace events, and logs the file's warnings.
func (s *Server) readSnapshot(f *os.File, dbs []*db) (rdbLoad, error) {
	st, err := f.Stat()
	if err != nil {
		return rdbLoad{}, err
	}
	s.replay = true
	res, err := loadRDB(f, st.Size(), dbs, s.now(), s.inertValue("rdbchecksum") == "yes")
	s.replay = false
	for _, w := range res.warnings {
		s.log.Warn("kv: " + w)
	}
	return res, err
}

// rdbLoad is what loadRDB found.
type rdbLoad struct {
	version         int
	createdBy       string // the redis-ver aux field
	loaded, expired int64
	warnings        []string
}

// loadRDB reads an RDB file of size bytes from r into dbs, which must be
// empty, as Redis's rdbLoad: keys expired at now (Unix ms) are skipped,
// collections with no elements skipped with a warning, and anything
// malformed, a key twice, a database past dbs, a module's data or a
// function library is an error. The checksum is checked unless check is
// false or it is 0 (written without one).
func loadRDB(r io.Reader, size int64, dbs []*db, now int64, check bool) (res rdbLoad, err error) {
	rd := newRDBReader(r, size)
	if len(dbs) > 0 && dbs[0].s != nil {
		rd.limits = &dbs[0].s.limits
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("at byte %d: %w", size-rd.left, err)
		}
	}()
	head, err := rd.read(9)
	if err != nil {
		return res, err
	}
	if string(head[:5]) != "REDIS" {
		return res, errors.New("wrong signature: not an RDB file")
	}
	res.version, err = strconv.Atoi(string(head[5:]))
	if err != nil || res.version < 1 || res.version > rdbVersion {
		return res, fmt.Errorf("can't handle RDB format version %q", head[5:])
	}
	rd.ver = res.version
	d := dbs[0]
	expireAt, empty := int64(-1), 0
	idle, freq := int64(-1), int64(-1) // the next key's, if the file gives them
	for {
		t, err := rd.byte()
		if err != nil {
			return res, err
		}
		switch t {
		case rdbOpExpire:
			b, err := rd.read(4)
			if err != nil {
				return res, err
			}
			expireAt = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
			continue
		case rdbOpExpireMS:
			b, err := rd.read(8)
			if err != nil {
				return res, err
			}
			expireAt = int64(binary.LittleEndian.Uint64(b))
			continue
		case rdbOpFreq:
			b, err := rd.byte()
			if err != nil {
				return res, err
			}
			freq = int64(b)
			continue
		case rdbOpIdle:
			n, err := rd.count()
			if err != nil {
				return res, err
			}
			idle = int64(min(n, math.MaxInt64))
			continue
		case rdbOpSelectDB:
			n, err := rd.count()
			if err != nil {
				return res, err
			}
			if n >= uint64(len(dbs)) {
				return res, fmt.Errorf("the file has database %d, and there are %d databases", n, len(dbs))
			}
			d = dbs[n]
			continue
		case rdbOpResizeDB:
			if _, err := rd.count(); err != nil {
				return res, err
			}
			if _, err := rd.count(); err != nil {
				return res, err
			}
			continue
		case rdbOpAux:
			k, err := rd.string()
			if err != nil {
				return res, err
			}
			v, err := rd.string()
			if err != nil {
				return res, err
			}
			if string(k) == "redis-ver" {
				res.createdBy = string(v)
			}
			continue // the others are information, or replication's
		case rdbOpModuleAux:
			return res, errors.New("the file holds a module's data: modules are not supported")
		case rdbOpFunction, rdbOpFunction2:
			return res, errors.New("the file holds a function library: functions are not supported")
		case rdbOpEOF:
		default:
			if !isValueType(t) {
				return res, errRDBBadType(t)
			}
			key, err := rd.string()
			if err != nil {
				return res, err
			}
			val, err := rd.value(t)
			switch {
			case errors.Is(err, errRDBEmptyKey):
				if empty++; empty <= rdbEmptyKeysLogs {
					res.warnings = append(res.warnings, fmt.Sprintf("RDB file: skipping the empty key %q", key))
				}
			case err != nil:
				return res, fmt.Errorf("key %q: %w", key, err)
			case expireAt != -1 && expireAt < now:
				res.expired++
			case d.keys.get(key) != nil:
				return res, fmt.Errorf("key %q is in database %d twice", key, d.id)
			default:
				if expireAt != -1 {
					val.exp = expireAt
				}
				val.lru = d.s.loadedLRU(idle, freq)
				d.insert(key, val)
				res.loaded++
			}
			expireAt, idle, freq = -1, -1, -1
			continue
		}
		break
	}
	if res.version >= 5 {
		want := rd.crc
		b, err := rd.read(8)
		if err != nil {
			return res, err
		}
		switch got := binary.LittleEndian.Uint64(b); {
		case got == 0:
			res.warnings = append(res.warnings, "the RDB file was saved without a checksum: none checked")
		case check && got != want:
			return res, fmt.Errorf("wrong checksum %#x, want %#x", got, want)
		}
	}
	if empty > 0 {
		res.warnings = append(res.warnings, fmt.Sprintf("RDB file: %d empty keys skipped", empty))
	}
	return res, nil
}

// rdbFlushAt is how much a save buffers before writing.
const rdbFlushAt = 64 << 10

// save writes the keyspace to the RDB file as Redis's rdbSave does: to a
// temporary file in its directory, synced, renamed over the file, and the
// directory synced, so that a crash leaves the old file or the new one.
// It runs on the loop and blocks it until done.
func (s *Server) save() error {
	path := s.snapshotPath()
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d.rdb", os.Getpid()))
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("opening the temporary RDB file: %w", err)
	}
	err = s.writeRDB(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the RDB file: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("syncing the RDB file's directory: %w", err)
	}
	s.snap.lastSave = time.Now()
	s.snap.dirtyAtSave = s.stats.dirty
	s.snap.bgsaveErr = nil // as Redis's rdbSave: writes are allowed again
	return nil
}

// writeRDB writes the keyspace in RDB version 10 to out: the aux fields
// Redis writes, then each database that has keys, its keys with their
// TTLs (those whose time has passed too, as Redis's rdbSaveKeyValuePair
// writes them: loading leaves them out), then the end and the checksum
// (0 with rdbchecksum no).
func (s *Server) writeRDB(out io.Writer) error {
	bw := bufio.NewWriterSize(out, rdbFlushAt)
	w := rdbWriter{compress: s.compress(), access: s.accessSaver()}
	var crc uint64
	flush := func() error {
		crc = rdbCRC(crc, w.buf)
		_, err := bw.Write(w.buf)
		w.buf = w.buf[:0]
		return err
	}
	s.rdbHeader(&w)
	for _, d := range s.dbs {
		if d.keys.len() == 0 {
			continue
		}
		w.selectDB(d.id, d.keys.len(), d.expires.len())
		for i := range d.keys.len() {
			key, e := d.keys.at(i)
			w.record(key, e)
			if len(w.buf) >= rdbFlushAt {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	w.byte(rdbOpEOF)
	if err := flush(); err != nil {
		return err
	}
	if s.inertValue("rdbchecksum") != "yes" {
		crc = 0
	}
	w.buf = binary.LittleEndian.AppendUint64(w.buf, crc)
	if _, err := bw.Write(w.buf); err != nil {
		return err
	}
	return bw.Flush()
}

// rdbHeader writes the file's signature and the aux fields Redis writes.
func (s *Server) rdbHeader(w *rdbWriter) {
	w.buf = append(w.buf, fmt.Sprintf("REDIS%04d", rdbVersion)...)
	aux := func(k, v string) {
		w.byte(rdbOpAux)
		w.string([]byte(k))
		w.string([]byte(v))
	}
	aux("redis-ver", serverVersion)
	aux("redis-bits", strconv.Itoa(strconv.IntSize))
	aux("ctime", strconv.FormatInt(time.Now().Unix(), 10))
	aux("used-mem", strconv.FormatInt(readHeap().objects, 10))
	aux("aof-base", "0")
}

// selectDB writes the records that the keys after them are database
// id's, which has size keys, expires of them with a TTL.
func (w *rdbWriter) selectDB(id, size, expires int) {
	w.byte(rdbOpSelectDB)
	w.length(uint64(id))
	w.byte(rdbOpResizeDB)
	w.length(uint64(size))
	w.length(uint64(expires))
}

// record writes key and its entry: the TTL, if it has one, whether or
// not it has passed, its idle time or access frequency (w.access), then
// the type, the key and the value.
func (w *rdbWriter) record(key string, e *entry) {
	if e.exp != 0 {
		w.byte(rdbOpExpireMS)
		w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(e.exp))
	}
	switch a := &w.access; {
	case a.lru:
		w.byte(rdbOpIdle)
		w.length(uint64(a.clock - e.lru))
	case a.lfu:
		w.byte(rdbOpFreq)
		w.byte(byte(lfuDecay(e.lru, a.minute, a.decayTime)))
	}
	w.byte(valueType(e))
	w.string(stringBytes(key))
	w.value(e)
}
