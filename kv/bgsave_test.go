package kv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// bgsaveDBs are the databases the background save tests fill.
const bgsaveDBs = 4

// fillForBgsave fills the databases with n keys of every type, some with
// TTLs, a few of which pass during the save.
func fillForBgsave(t *testing.T, rc *rawConn, n int) {
	t.Helper()
	var cmds [][]string
	for db := range bgsaveDBs {
		cmds = append(cmds, []string{"SELECT", strconv.Itoa(db)})
		for i := range n / bgsaveDBs {
			k := "k" + strconv.Itoa(i)
			switch i % 7 {
			case 0:
				cmds = append(cmds, []string{"SET", k, "v" + strconv.Itoa(i)})
			case 1:
				cmds = append(cmds, []string{"RPUSH", k, "a", "b", strconv.Itoa(i)})
			case 2:
				cmds = append(cmds, []string{"HSET", k, "f", "v", "g", strconv.Itoa(i)})
			case 3:
				cmds = append(cmds, []string{"SADD", k, "1", "2", strconv.Itoa(i)})
			case 4:
				cmds = append(cmds, []string{"ZADD", k, "1", "a", strconv.Itoa(i), "b"})
			case 5:
				cmds = append(cmds, []string{"PFADD", k, "a", "b", strconv.Itoa(i)})
			case 6:
				cmds = append(cmds, []string{"SET", k, strconv.Itoa(i), "PX", strconv.Itoa(50 + i%2000)})
			}
			if i%11 == 0 {
				cmds = append(cmds, []string{"EXPIRE", k, "3600"})
			}
		}
	}
	cmds = append(cmds, []string{"SELECT", "0"})
	for i := 0; i < len(cmds); i += 500 {
		batch := cmds[i:min(i+500, len(cmds))]
		rc.sendTogether(batch...)
		for range batch {
			if r := rc.read(); strings.HasPrefix(r, "-") {
				t.Fatalf("filling: %q", r)
			}
		}
	}
}

// keyState is a key as a snapshot holds it: its DUMP payload and expiry.
type keyState struct {
	payload string
	exp     int64
}

// captureKeyspace returns every key of s's databases, by database and
// name. It must run on the loop.
func captureKeyspace(s *Server) map[string]keyState {
	out := map[string]keyState{}
	for _, d := range s.dbs {
		for i := range d.keys.len() {
			k, e := d.keys.at(i)
			out[fmt.Sprintf("%d/%s", d.id, k)] = keyState{string(dumpPayload(e, true)), e.exp}
		}
	}
	return out
}

// loadFile loads the RDB file at path, expired keys and all, and returns
// its keys as captureKeyspace does.
func loadFile(t *testing.T, path string) map[string]keyState {
	t.Helper()
	s, err := New(Config{Dir: t.TempDir(), Logger: quietLogger(), Databases: bgsaveDBs})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	if _, err := loadRDB(f, st.Size(), s.dbs, 0, true); err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	return captureKeyspace(s)
}

func compareKeyspaces(t *testing.T, got, want map[string]keyState) {
	t.Helper()
	bad := 0
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("key %s is missing from the file", k)
		case g != w:
			t.Errorf("key %s: the file has %q exp %d; want %q exp %d", k, g.payload, g.exp, w.payload, w.exp)
		default:
			continue
		}
		if bad++; bad > 10 {
			t.Fatal("too many differences")
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("key %s is in the file and was not there when the save started", k)
			if bad++; bad > 10 {
				t.Fatal("too many differences")
			}
		}
	}
}

// walkBy makes the walk of a background save take batch keys at a time,
// pause apart, until the test ends.
func walkBy(t *testing.T, batch int, pause time.Duration) {
	slice, b, p := bgsaveSlice, bgsaveBatch, bgsavePause
	bgsaveSlice, bgsaveBatch, bgsavePause = 0, batch, pause
	t.Cleanup(func() { bgsaveSlice, bgsaveBatch, bgsavePause = slice, b, p })
}

// slowWalk makes the walk of a background save take a sliver of each
// loop iteration, so that the writes of a test meet it halfway.
func slowWalk(t *testing.T) { walkBy(t, 8, 200*time.Microsecond) }

// startCaptured starts a background save and returns the keyspace as it
// was when the save started.
func startCaptured(t *testing.T, s *Server) map[string]keyState {
	t.Helper()
	var want map[string]keyState
	var err error
	onLoop(s, func() {
		want = captureKeyspace(s)
		err = s.startBgsave()
	})
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// savedAsStarted waits for the background save to end and checks that
// nothing changed was missed and that its file in dir holds want, the
// keyspace at the save's start.
func savedAsStarted(t *testing.T, s *Server, rc *rawConn, dir string, want map[string]keyState) {
	t.Helper()
	waitInfo(t, rc, "rdb_bgsave_in_progress", "0")
	var missed int64
	onLoop(s, func() { missed = s.snap.bgsaveMissed })
	if missed != 0 {
		t.Errorf("%d keys counted as changed unpreserved", missed)
	}
	compareKeyspaces(t, loadFile(t, filepath.Join(dir, "dump.rdb")), want)
}

// waitBgsave waits until no background save runs, and returns INFO
// persistence.
func waitBgsave(t *testing.T, rc *rawConn) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		info := rc.do("INFO", "persistence")
		if strings.Contains(info, "rdb_bgsave_in_progress:0\r\n") {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background save is not over: %q", info)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writeStream sends random writes of every kind to rc until stop is
// closed.
func writeStream(t *testing.T, rc *rawConn, seed uint64, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(seed, 7))
	key := func() string { return "k" + strconv.Itoa(rng.IntN(3000)) }
	db := func() string { return strconv.Itoa(rng.IntN(bgsaveDBs)) }
	payload := string(parseReply(t, rc.do("DUMP", "k1")).Str) // a list, in db 0
	rc.do("SELECT", db())
	for {
		select {
		case <-stop:
			return
		default:
		}
		k, k2 := key(), key()
		var cmd []string
		switch r := rng.IntN(60); r {
		case 0:
			cmd = []string{"SELECT", db()}
		case 1:
			cmd = []string{"SET", k, "new"}
		case 2:
			cmd = []string{"APPEND", k, "x"}
		case 3:
			cmd = []string{"INCR", k}
		case 4:
			cmd = []string{"SETRANGE", k, "2", "zz"}
		case 5:
			cmd = []string{"GETDEL", k}
		case 6:
			cmd = []string{"GETEX", k, "PX", "100000"}
		case 7:
			cmd = []string{"DEL", k, k2}
		case 8:
			cmd = []string{"UNLINK", k}
		case 9:
			cmd = []string{"EXPIRE", k, "1000"}
		case 10:
			cmd = []string{"PEXPIRE", k, "1"}
		case 11:
			cmd = []string{"PERSIST", k}
		case 12:
			cmd = []string{"RENAME", k, k2}
		case 13:
			cmd = []string{"MOVE", k, db()}
		case 14:
			cmd = []string{"COPY", k, k2, "DB", db(), "REPLACE"}
		case 15:
			cmd = []string{"RESTORE", k, "0", payload, "REPLACE"}
		case 16:
			cmd = []string{"LPUSH", k, "p"}
		case 17:
			cmd = []string{"RPOP", k}
		case 18:
			cmd = []string{"LMOVE", k, k2, "LEFT", "RIGHT"}
		case 19:
			cmd = []string{"LSET", k, "0", "set"}
		case 20:
			cmd = []string{"LTRIM", k, "1", "-1"}
		case 21:
			cmd = []string{"HSET", k, "f", "new"}
		case 22:
			cmd = []string{"HDEL", k, "g"}
		case 23:
			cmd = []string{"HINCRBY", k, "n", "1"}
		case 24:
			cmd = []string{"SADD", k, "new"}
		case 25:
			cmd = []string{"SREM", k, "1"}
		case 26:
			cmd = []string{"SPOP", k}
		case 27:
			cmd = []string{"SMOVE", k, k2, "2"}
		case 28:
			cmd = []string{"ZADD", k, "5", "new"}
		case 29:
			cmd = []string{"ZINCRBY", k, "1", "a"}
		case 30:
			cmd = []string{"ZPOPMIN", k}
		case 31:
			cmd = []string{"SUNIONSTORE", k, k2, key()}
		case 32:
			cmd = []string{"ZUNIONSTORE", k, "2", k2, key()}
		case 33:
			cmd = []string{"SORT", k2, "ALPHA", "STORE", k}
		case 34:
			cmd = []string{"PFADD", k, "new"}
		case 35:
			cmd = []string{"PFCOUNT", k}
		case 36:
			cmd = []string{"PFMERGE", k, k2}
		case 37:
			cmd = []string{"SETBIT", k, "100", "1"}
		case 38:
			cmd = []string{"BITOP", "OR", k, k2, key()}
		case 39:
			cmd = []string{"GETSET", k, "gs"}
		case 40:
			cmd = []string{"SETNX", k, "nx"}
		case 41:
			cmd = []string{"MSET", k, "m1", k2, "m2"}
		case 42:
			cmd = []string{"INCRBYFLOAT", k, "1.5"}
		case 43:
			cmd = []string{"LINSERT", k, "BEFORE", "a", "ins"}
		case 44:
			cmd = []string{"HSETNX", k, "h", "1"}
		case 45:
			cmd = []string{"ZREMRANGEBYRANK", k, "0", "0"}
		case 46:
			cmd = []string{"EXPIREAT", k, "1"} // in the past: deleted
		case 47:
			cmd = []string{"RENAMENX", k, k2}
		case 48:
			cmd = []string{"BITFIELD", k, "SET", "u8", "0", "7"}
		case 49:
			cmd = []string{"LPOP", k, "2"}
		case 50:
			cmd = []string{"ZRANGESTORE", k, k2, "0", "-1"}
		case 51:
			cmd = []string{"HINCRBYFLOAT", k, "fl", "0.5"}
		case 52:
			cmd = []string{"GEOADD", k, "13.36", "38.11", "m"}
		case 53:
			rc.sendTogether([]string{"MULTI"}, []string{"SET", k, "tx"}, []string{"DEL", k2}, []string{"LPUSH", key(), "tx"}, []string{"EXEC"})
			for range 5 {
				rc.read()
			}
			continue
		case 54:
			cmd = []string{"SET", k, "sw"}
		case 55:
			cmd = []string{"DECR", k}
		case 56:
			cmd = []string{"SINTERSTORE", k, k2, key()}
		default:
			cmd = []string{"GET", k}
		}
		rc.do(cmd...)
	}
}

// TestBgsavePointInTime: the file a background save writes holds the
// keyspace as it was when BGSAVE ran, every key with its value and TTL
// (those whose time passes during the save too), while clients write to
// it by every kind of command meanwhile — keys the walk has not reached
// changed, deleted, expired, renamed, moved, restored, served to a
// blocked client, databases flushed and swapped — and nothing changed is
// missed; the keys added meanwhile are not in it. LASTSAVE and INFO
// follow the save.
func TestBgsavePointInTime(t *testing.T) {
	slowWalk(t)
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir, Databases: bgsaveDBs})
	rc := dialRaw(t, addr)
	fillForBgsave(t, rc, 12000)
	before := parseReply(t, rc.do("LASTSAVE")).Int

	// A client blocked on a key, served by a push while the save runs,
	// moving the value to a key the walk may not have reached.
	blocked := dialRaw(t, addr)
	blocked.send("BLMOVE", "waiting", "k8", "LEFT", "LEFT", "0")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	started := make(chan struct{})
	for w := range 4 {
		wc := dialRaw(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-started
			writeStream(t, wc, uint64(w), stop)
		}()
	}
	want := startCaptured(t, s)
	close(started)
	rc.do("LPUSH", "waiting", "x")
	if got := blocked.read(); got != "$1\r\nx\r\n" {
		t.Errorf("BLMOVE = %q", got)
	}
	if got := rc.do("BGSAVE"); got != "-ERR Background save already in progress\r\n" {
		t.Errorf("BGSAVE while one runs = %q", got)
	}
	if got := rc.do("SAVE"); got != "-ERR Background save already in progress\r\n" {
		t.Errorf("SAVE while a BGSAVE runs = %q", got)
	}
	// The save's seconds so far: 0 unless a loaded machine made it last.
	info := rc.do("INFO", "persistence")
	if !strings.Contains(info, "rdb_bgsave_in_progress:1\r\n") || !regexp.MustCompile(`\r\nrdb_current_bgsave_time_sec:\d+\r\n`).MatchString(info) {
		t.Errorf("INFO persistence while saving: %q", info)
	}
	// The databases swapped and flushed as the walk goes: database 1,
	// not walked yet, swapped with 2 and flushed, then 3 swapped with
	// 0, which is being walked; and 3's keys, now in 0, flushed while
	// they are walked.
	walking := func(db int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
			var at int
			onLoop(s, func() {
				at = -1
				if b := s.bg; b != nil && b.cur < len(b.dbs) {
					at = b.dbs[b.cur].id
				}
			})
			if at >= db {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the walk does not reach database %d", db)
			}
		}
	}
	walking(0)
	rc.do("SWAPDB", "1", "2")
	rc.do("SELECT", "2")
	rc.do("FLUSHDB")
	rc.do("SELECT", "0")
	rc.do("SWAPDB", "3", "0")
	walking(3)
	rc.do("FLUSHDB")
	info = waitBgsave(t, rc)
	close(stop)
	wg.Wait()
	var missed, copied int64
	onLoop(s, func() { missed, copied = s.snap.bgsaveMissed, s.snap.bgsaveCopied })
	if missed != 0 {
		t.Errorf("%d keys changed before the walk reached them without being preserved", missed)
	}
	if copied == 0 {
		t.Errorf("no key was preserved: the writes did not meet the walk")
	}
	t.Logf("%d keys, %d preserved", len(want), copied)
	if strings.Contains(info, "rdb_last_bgsave_time_sec:-1\r\n") {
		t.Errorf("INFO persistence after the save: no rdb_last_bgsave_time_sec: %q", info)
	}
	for _, f := range []string{"rdb_last_bgsave_status:ok", "rdb_current_bgsave_time_sec:-1"} {
		if !strings.Contains(info, f+"\r\n") {
			t.Errorf("INFO persistence after the save lacks %s: %q", f, info)
		}
	}
	if after := parseReply(t, rc.do("LASTSAVE")).Int; after < before {
		t.Errorf("LASTSAVE = %d, was %d", after, before)
	}
	compareKeyspaces(t, loadFile(t, filepath.Join(dir, "dump.rdb")), want)
	if m, _ := filepath.Glob(filepath.Join(dir, "temp-*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// Keys deleted while a save runs, below where the walk is, leave the
// database with fewer slots than the walk has yet to visit: a key added
// then takes a slot the walk visits, and was written to the file as if it
// had been there when the save started, and a change to it was counted
// as missed. The walk's bound now follows the deletions.
func TestBgsaveKeysAddedAfterDeletes(t *testing.T) {
	stallWalk(t)
	dir := t.TempDir()
	s, addr := startServer(t, Config{Dir: dir})
	rc := dialRaw(t, addr)
	for i := range 10 {
		rc.do("SET", "k"+strconv.Itoa(i), "v")
	}
	var want map[string]keyState
	onLoop(s, func() { want = captureKeyspace(s) })
	if got := rc.do("BGSAVE"); got != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE = %q", got)
	}
	for i := range 5 {
		rc.do("DEL", "k"+strconv.Itoa(i))
	}
	for i := range 5 {
		rc.do("SET", "new"+strconv.Itoa(i), "x")
		rc.do("APPEND", "new"+strconv.Itoa(i), "y")
	}
	resumeWalk(s)
	savedAsStarted(t, s, rc, dir, want)
}

// stallWalk makes a background save stop after its first key until
// resumeWalk.
func stallWalk(t *testing.T) { walkBy(t, 1, time.Hour) }

// resumeWalk lets a stalled save go on to its end.
func resumeWalk(s *Server) {
	onLoop(s, func() {
		bgsavePause = 0
		if s.bg != nil {
			s.bg.step()
		}
	})
}

// infoField returns field's value in INFO's reply info.
func infoField(info, field string) string {
	_, v, _ := strings.Cut(info, "\r\n"+field+":")
	v, _, _ = strings.Cut(v, "\r\n")
	return v
}

// waitInfo waits until INFO persistence's field is want on rc.
func waitInfo(t *testing.T, rc *rawConn, field, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		info := rc.do("INFO", "persistence")
		if infoField(info, field) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("INFO persistence's %s is not %s: %q", field, want, info)
		}
	}
}

// TestCompatBgsave: BGSAVE's replies and errors, and those of SAVE,
// BGSAVE SCHEDULE, BGREWRITEAOF and a BGSAVE in a transaction while a
// background save runs, and of BGSAVE while a rewrite of the append-only
// file runs, are Redis's, as are INFO persistence's fields meanwhile; the
// rewrite and the save scheduled run once what ran is over.
func TestCompatBgsave(t *testing.T) {
	stallWalk(t)
	s, addr := startServer(t, Config{Dir: t.TempDir()})
	ours := dialRaw(t, addr)
	// Redis's save takes 0.3 s a key, long enough for the commands
	// meanwhile.
	theirs := dialRaw(t, redisServer(t, "--rdb-key-save-delay", "300000"))
	both := func(args ...string) (string, string) {
		t.Helper()
		return ours.do(args...), theirs.do(args...)
	}
	same := func(args ...string) {
		t.Helper()
		if got, want := both(args...); got != want {
			t.Errorf("%q: evkv %q; Redis %q", args, got, want)
		}
	}
	for _, k := range []string{"a", "b", "c"} {
		same("SET", k, "v")
	}
	lastsave := parseReply(t, ours.do("LASTSAVE")).Int
	same("BGSAVE", "NOW")
	same("BGSAVE", "SCHEDULE", "x")
	same("BGSAVE")
	same("BGSAVE")
	same("BGSAVE", "SCHEDULE")
	same("SAVE")
	same("MULTI")
	same("BGSAVE")
	same("EXEC")
	same("BGREWRITEAOF")
	got, want := both("INFO", "persistence")
	for _, f := range []string{"rdb_bgsave_in_progress", "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec", "rdb_current_bgsave_time_sec", "rdb_saves", "rdb_changes_since_last_save", "aof_rewrite_in_progress", "aof_rewrite_scheduled"} {
		if g, w := infoField(got, f), infoField(want, f); g != w {
			t.Errorf("INFO persistence's %s while saving: evkv %q; Redis %q", f, g, w)
		}
	}
	if got := parseReply(t, ours.do("LASTSAVE")).Int; got != lastsave {
		t.Errorf("LASTSAVE while saving = %d; want %d", got, lastsave)
	}
	resumeWalk(s)
	for _, rc := range []*rawConn{ours, theirs} {
		waitInfo(t, rc, "rdb_bgsave_in_progress", "0")
		waitInfo(t, rc, "aof_rewrite_scheduled", "0")
		waitInfo(t, rc, "aof_rewrite_in_progress", "0")
	}
	got, want = both("INFO", "persistence")
	for _, f := range []string{"rdb_last_bgsave_status", "rdb_changes_since_last_save", "aof_rewrites"} {
		if g, w := infoField(got, f), infoField(want, f); g != w {
			t.Errorf("INFO persistence's %s after the save: evkv %q; Redis %q", f, g, w)
		}
	}
	if got := parseReply(t, ours.do("LASTSAVE")).Int; got < lastsave {
		t.Errorf("LASTSAVE after the save = %d; want %d or later", got, lastsave)
	}

	// While a rewrite runs: sent together, so that evkv's rewrite, of
	// three keys, is not over before them.
	script := [][]string{{"BGREWRITEAOF"}, {"BGSAVE"}, {"BGSAVE", "SCHEDULE"}}
	ours.sendTogether(script...)
	theirs.sendTogether(script...)
	for _, args := range script {
		if got, want := ours.read(), theirs.read(); got != want {
			t.Errorf("%q during a rewrite: evkv %q; Redis %q", args, got, want)
		}
	}
	for _, rc := range []*rawConn{ours, theirs} {
		waitInfo(t, rc, "rdb_saves", "2")
		waitInfo(t, rc, "rdb_bgsave_in_progress", "0")
	}
}

// TestBgsaveFailure: a background save that cannot write the file (its
// directory gone) leaves rdb_last_bgsave_status err and, with save points
// and stop-writes-on-bgsave-error yes, the write commands and PING are
// refused with Redis's MISCONF error, reads served, until a save
// succeeds, the parameter is no or the save points are gone, as in Redis.
func TestBgsaveFailure(t *testing.T) {
	root := t.TempDir()
	ourDir, theirDir := filepath.Join(root, "ours"), filepath.Join(root, "theirs")
	os.Mkdir(ourDir, 0o755)
	os.Mkdir(theirDir, 0o755)
	_, addr := startServer(t, Config{Dir: ourDir, Settings: map[string]string{"save": "3600 1"}})
	ours := dialRaw(t, addr)
	theirs := dialRaw(t, redisServer(t, "--dir", theirDir, "--save", "3600 1"))
	same := func(args ...string) string {
		t.Helper()
		got, want := ours.do(args...), theirs.do(args...)
		if got != want {
			t.Errorf("%q: evkv %q; Redis %q", args, got, want)
		}
		return got
	}
	same("SET", "k", "v")
	os.RemoveAll(ourDir)
	os.RemoveAll(theirDir)
	same("BGSAVE")
	for _, rc := range []*rawConn{ours, theirs} {
		waitInfo(t, rc, "rdb_bgsave_in_progress", "0")
		waitInfo(t, rc, "rdb_last_bgsave_status", "err")
	}
	if got := same("SET", "k", "w"); !strings.HasPrefix(got, "-MISCONF") {
		t.Errorf("SET after a failed save = %q; want MISCONF", got)
	}
	same("PING")
	same("GET", "k")
	same("MULTI")
	same("SET", "k", "w")
	same("EXEC")
	same("CONFIG", "SET", "stop-writes-on-bgsave-error", "no")
	same("SET", "k", "x")
	same("CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
	same("INCR", "n")
	same("CONFIG", "SET", "save", "")
	same("INCR", "n")
	same("CONFIG", "SET", "save", "3600 1")
	same("INCR", "n")
	got, want := ours.do("INFO", "persistence"), theirs.do("INFO", "persistence")
	for _, f := range []string{"rdb_last_bgsave_status", "rdb_changes_since_last_save", "rdb_saves"} {
		if g, w := infoField(got, f), infoField(want, f); g != w {
			t.Errorf("INFO persistence's %s: evkv %q; Redis %q", f, g, w)
		}
	}
	// A save that succeeds ends it, as Redis's rdbSave does (Redis's
	// directory, its working one, cannot come back to test it there).
	os.Mkdir(ourDir, 0o755)
	if got := ours.do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE = %q", got)
	}
	if got := ours.do("INCR", "n"); got != ":2\r\n" {
		t.Errorf("INCR after SAVE = %q; want 2", got)
	}
	if got := infoField(ours.do("INFO", "persistence"), "rdb_last_bgsave_status"); got != "ok" {
		t.Errorf("rdb_last_bgsave_status after SAVE = %q; want ok", got)
	}
}

// TestSavePoints: the cron starts a background save when a save point's
// changes and seconds since the last save are reached, as Redis's
// serverCron does, and not before; none with save ""; after a failed
// one, the next waits for the retry delay.
func TestSavePoints(t *testing.T) {
	delay := bgsaveRetryDelay
	bgsaveRetryDelay = 1
	t.Cleanup(func() { bgsaveRetryDelay = delay })
	dir := filepath.Join(t.TempDir(), "d")
	os.Mkdir(dir, 0o755)
	_, addr := startServer(t, Config{Dir: dir, Settings: map[string]string{"save": "0 2"}})
	rc := dialRaw(t, addr)
	unchanged := func(field, want string) {
		t.Helper()
		for deadline := time.Now().Add(1200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if got := infoField(rc.do("INFO", "persistence"), field); got != want {
				t.Fatalf("INFO persistence's %s = %s; want %s", field, got, want)
			}
		}
	}
	rc.do("SET", "a", "1")
	unchanged("rdb_saves", "0") // one change of two
	rc.do("SET", "b", "2")
	waitInfo(t, rc, "rdb_saves", "1")
	waitInfo(t, rc, "rdb_bgsave_in_progress", "0")
	if got := infoField(rc.do("INFO", "persistence"), "rdb_changes_since_last_save"); got != "0" {
		t.Errorf("rdb_changes_since_last_save after the save = %s; want 0", got)
	}
	got := loadFile(t, filepath.Join(dir, "dump.rdb"))
	if _, ok := got["0/b"]; !ok || len(got) != 2 {
		t.Errorf("the file has %d keys, b %v; want a and b", len(got), ok)
	}

	rc.do("CONFIG", "SET", "save", "")
	rc.do("SET", "c", "3")
	rc.do("SET", "d", "4")
	unchanged("rdb_saves", "1")

	// A save that fails is tried again once the delay has passed.
	os.RemoveAll(dir)
	rc.do("CONFIG", "SET", "save", "0 1")
	waitInfo(t, rc, "rdb_saves", "2")
	waitInfo(t, rc, "rdb_last_bgsave_status", "err")
	failed := time.Now()
	os.Mkdir(dir, 0o755)
	waitInfo(t, rc, "rdb_saves", "3")
	waitInfo(t, rc, "rdb_last_bgsave_status", "ok")
	if d := time.Since(failed); d < 900*time.Millisecond {
		t.Errorf("the save was tried again %v after it failed; want 1 s or more", d)
	}
	if got := loadFile(t, filepath.Join(dir, "dump.rdb")); len(got) != 4 {
		t.Errorf("the file has %d keys; want 4", len(got))
	}
}

// TestCompatSaveChanges: rdb_changes_since_last_save counts the changes
// of each command as Redis's server.dirty does, and BGSAVE's end takes
// off those it saved.
func TestCompatSaveChanges(t *testing.T) {
	_, addr := startServer(t, Config{Dir: t.TempDir()})
	ours, theirs := dialRaw(t, addr), dialRaw(t, redisServer(t))
	script := [][]string{
		{"MSET", "a", "1", "b", "2", "c", "3"}, {"DEL", "a", "b", "x"}, {"SADD", "s", "1", "2", "3"},
		{"SADD", "s", "3"}, {"RPUSH", "l", "1", "2"}, {"LPOP", "l", "5"}, {"HSET", "h", "f", "1", "g", "2"},
		{"INCR", "n"}, {"EXPIRE", "n", "100"}, {"PERSIST", "n"}, {"RENAME", "n", "m"}, {"ZADD", "z", "1", "a", "2", "b"},
		{"ZINCRBY", "z", "1", "a"}, {"SET", "c", "3"}, {"APPEND", "c", "x"}, {"FLUSHDB"}, {"SET", "e", "1"}, {"FLUSHALL"},
		{"SET", "p", "1"}, {"PEXPIRE", "p", "0"}, {"SWAPDB", "0", "1"}, {"BGSAVE"},
	}
	for _, args := range script {
		got, want := ours.do(args...), theirs.do(args...)
		if got != want {
			t.Errorf("%q: evkv %q; Redis %q", args, got, want)
		}
		if args[0] == "BGSAVE" {
			waitInfo(t, ours, "rdb_bgsave_in_progress", "0")
			waitInfo(t, theirs, "rdb_bgsave_in_progress", "0")
		}
		g, w := infoField(ours.do("INFO", "persistence"), "rdb_changes_since_last_save"), infoField(theirs.do("INFO", "persistence"), "rdb_changes_since_last_save")
		if g != w {
			t.Errorf("after %q, rdb_changes_since_last_save: evkv %s; Redis %s", args, g, w)
		}
	}
}

// TestCompatFlushallStopsBgsave: FLUSHALL stops a background save that
// runs and, with save points, saves the empty keyspace, as Redis's
// does: the last save's status stays ok, LASTSAVE and the changes follow
// the save, and the file has no keys.
func TestCompatFlushallStopsBgsave(t *testing.T) {
	stallWalk(t)
	ourDir, theirDir := t.TempDir(), t.TempDir()
	_, addr := startServer(t, Config{Dir: ourDir, Settings: map[string]string{"save": "3600 1"}})
	ours := dialRaw(t, addr)
	theirs := dialRaw(t, redisServer(t, "--dir", theirDir, "--save", "3600 1", "--rdb-key-save-delay", "300000"))
	for _, args := range [][]string{{"SET", "a", "1"}, {"SET", "b", "2"}, {"BGSAVE"}, {"SET", "c", "3"}, {"FLUSHALL"}} {
		if got, want := ours.do(args...), theirs.do(args...); got != want {
			t.Errorf("%q: evkv %q; Redis %q", args, got, want)
		}
	}
	for _, rc := range []*rawConn{ours, theirs} {
		waitInfo(t, rc, "rdb_bgsave_in_progress", "0")
	}
	got, want := ours.do("INFO", "persistence"), theirs.do("INFO", "persistence")
	for _, f := range []string{"rdb_last_bgsave_status", "rdb_changes_since_last_save", "rdb_saves"} {
		if g, w := infoField(got, f), infoField(want, f); g != w {
			t.Errorf("INFO persistence's %s after FLUSHALL: evkv %q; Redis %q", f, g, w)
		}
	}
	if got := loadFile(t, filepath.Join(ourDir, "dump.rdb")); len(got) != 0 {
		t.Errorf("the file after FLUSHALL has %v; want no keys", got)
	}
	if m, _ := filepath.Glob(filepath.Join(ourDir, "temp-*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// TestCompatAppendonlyDuringBgsave: CONFIG SET appendonly yes while a
// background save runs schedules the log's first rewrite, as Redis's
// does, which runs once the save is over and leaves the log on.
func TestCompatAppendonlyDuringBgsave(t *testing.T) {
	stallWalk(t)
	s, addr := startServer(t, Config{Dir: t.TempDir()})
	ours := dialRaw(t, addr)
	theirs := dialRaw(t, redisServer(t, "--rdb-key-save-delay", "300000"))
	same := func(args ...string) {
		t.Helper()
		if got, want := ours.do(args...), theirs.do(args...); got != want {
			t.Errorf("%q: evkv %q; Redis %q", args, got, want)
		}
	}
	same("SET", "a", "1")
	same("BGSAVE")
	same("CONFIG", "SET", "appendonly", "yes")
	same("SET", "b", "2")
	got, want := ours.do("INFO", "persistence"), theirs.do("INFO", "persistence")
	for _, f := range []string{"rdb_bgsave_in_progress", "aof_rewrite_in_progress", "aof_rewrite_scheduled"} {
		if g, w := infoField(got, f), infoField(want, f); g != w {
			t.Errorf("INFO persistence's %s while saving: evkv %q; Redis %q", f, g, w)
		}
	}
	resumeWalk(s)
	for _, rc := range []*rawConn{ours, theirs} {
		waitInfo(t, rc, "rdb_bgsave_in_progress", "0")
		waitInfo(t, rc, "aof_rewrite_scheduled", "0")
		waitInfo(t, rc, "aof_rewrite_in_progress", "0")
	}
	same("CONFIG", "GET", "appendonly")
	got, want = ours.do("INFO", "persistence"), theirs.do("INFO", "persistence")
	for _, f := range []string{"aof_enabled", "aof_rewrites", "aof_last_bgrewrite_status"} {
		if g, w := infoField(got, f), infoField(want, f); g != w {
			t.Errorf("INFO persistence's %s after the rewrite: evkv %q; Redis %q", f, g, w)
		}
	}
}

// TestShutdownDuringBgsave: SHUTDOWN, and Shutdown, while a background
// save runs stop it, its temporary file removed, and save the keyspace
// as it is then, as Redis kills its child and saves in the foreground.
func TestShutdownDuringBgsave(t *testing.T) {
	stallWalk(t)
	for _, byCommand := range []bool{true, false} {
		dir := t.TempDir()
		s, rc := serveOwnShutdown(t, Config{Dir: dir, Settings: map[string]string{"save": "3600 1"}})
		rc.do("SET", "a", "1")
		rc.do("SET", "b", "2")
		if got := rc.do("BGSAVE"); got != "+Background saving started\r\n" {
			t.Fatalf("BGSAVE = %q", got)
		}
		rc.do("SET", "later", "3")
		rc.do("DEL", "a")
		if byCommand {
			rc.send("SHUTDOWN")
			<-s.Done()
		}
		if err := s.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		got := loadFile(t, filepath.Join(dir, "dump.rdb"))
		if _, ok := got["0/later"]; !ok || len(got) != 2 {
			t.Errorf("SHUTDOWN %v: the file has %v; want b and later", byCommand, got)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "temp-*")); len(m) > 0 {
			t.Errorf("temporary files left: %v", m)
		}
	}
}
