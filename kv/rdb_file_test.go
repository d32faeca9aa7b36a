package kv

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// redisSave fills a Redis with populateAll, SAVEs it and returns the
// file's bytes and Redis's keyspace digest.
func redisSave(t *testing.T) ([]byte, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	rc := dialRaw(t, redisServer(t, "--dir", dir))
	populateAll(t, rc)
	if got := rc.do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("Redis SAVE = %q", got)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	return b, keyspaceDigest(t, rc)
}

// redisSaveSmall returns the file of a Redis that holds every type in
// its small and large encodings, with TTLs, in two databases: Redis's
// thresholds set low, so that each value is a few elements and the file
// a few kilobytes.
func redisSaveSmall(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	rc := dialRaw(t, redisServer(t, "--dir", dir,
		"--hash-max-listpack-entries", "2", "--zset-max-listpack-entries", "2",
		"--set-max-intset-entries", "2", "--list-max-listpack-size", "2",
		"--list-compress-depth", "1"))
	for _, db := range []string{"0", "2"} {
		for _, c := range [][]string{
			{"SELECT", db},
			{"SET", "str", "hello"},
			{"SET", "empty", ""},
			{"SET", "int", "12345"},
			{"SET", "bigint", "-123456789012345"},
			{"SET", "compressible", strings.Repeat("abc", 30)},
			{"SET", "binary", "\x00\x01\xff\r\n"},
			{"SET", "ttl", "v", "EX", "3600"},
			{"PFADD", "hll", "a", "b", "c"},
			{"RPUSH", "list", "a", "1"},
			{"RPUSH", "biglist", "a", "-200", "70000", "5000000000", strings.Repeat("x", 60), strings.Repeat("y", 60), "z", "tail"},
			{"SADD", "intset", "1", "-5000000000"},
			{"SADD", "bigintset", "1", "2", "300"},
			{"SADD", "set", "a", "b", "1"},
			{"HSET", "hash", "f1", "v1", "n", "-3"},
			{"HSET", "bighash", "f1", "v1", "f2", "2", "n", "-3"},
			{"ZADD", "zset", "1.5", "a", "-inf", "b"},
			{"ZADD", "bigzset", "1.5", "a", "-inf", "b", "inf", "c", "-2.5e-300", "d"},
			{"EXPIRE", "list", "1000"},
			{"EXPIRE", "bigzset", "1000"},
		} {
			if r := rc.do(c...); strings.HasPrefix(r, "-") {
				t.Fatalf("%q: %q", c, r)
			}
		}
	}
	if got := rc.do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("Redis SAVE = %q", got)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startWithRDB starts evkv on a directory holding file as dump.rdb.
func startWithRDB(t *testing.T, file []byte) (*Server, *rawConn, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	s, addr := startServer(t, Config{Dir: dir})
	return s, dialRaw(t, addr), dir
}

// serveOwnShutdown serves a fresh Server with cfg, which the test shuts
// down itself, and dials it.
func serveOwnShutdown(t *testing.T, cfg Config) (*Server, *rawConn) {
	t.Helper()
	cfg.Logger = quietLogger()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return s, dialRaw(t, a.String())
}

// TestLoadRedisRDB: a file Redis saved, with every type in its small and
// large encodings and TTLs in several databases, loads into evkv as Redis
// loads it.
func TestLoadRedisRDB(t *testing.T) {
	file, _ := redisSave(t)
	_, ours, _ := startWithRDB(t, file)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o644)
	theirs := dialRaw(t, redisServer(t, "--dir", dir))
	compareDigests(t, "Redis's file", keyspaceDigest(t, ours), keyspaceDigest(t, theirs))
	info := ours.do("INFO", "persistence")
	if !strings.Contains(info, "rdb_last_load_keys_loaded:") || strings.Contains(info, "rdb_last_load_keys_loaded:0\r\n") {
		t.Errorf("INFO persistence after the load: %q", info)
	}
}

// TestSaveLoadsInRedis: SAVE writes a file that Redis loads as evkv had
// the keyspace, and that evkv loads back the same; LASTSAVE, rdb_saves
// and rdb_changes_since_last_save follow the save, as Redis's.
func TestSaveLoadsInRedis(t *testing.T) {
	dir := t.TempDir()
	_, addr := startServer(t, Config{Dir: dir})
	rc := dialRaw(t, addr)
	populateAll(t, rc)
	want := keyspaceDigest(t, rc)
	if info := rc.do("INFO", "persistence"); strings.Contains(info, "rdb_changes_since_last_save:0\r\n") {
		t.Errorf("before SAVE: %q", info)
	}
	before := time.Now().Unix()
	if got := rc.do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE = %q", got)
	}
	info := rc.do("INFO", "persistence")
	for _, f := range []string{"rdb_changes_since_last_save:0\r\n", "rdb_saves:1\r\n", "rdb_last_bgsave_status:ok\r\n"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO persistence after SAVE lacks %q: %q", f, info)
		}
	}
	if n := parseReply(t, rc.do("LASTSAVE")).Int; n < before {
		t.Errorf("LASTSAVE = %d; want %d or later", n, before)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "temp-*")); len(m) > 0 {
		t.Errorf("temporary files left: %q", m)
	}
	theirs := dialRaw(t, redisServer(t, "--dir", dir))
	compareDigests(t, "evkv's file in Redis", keyspaceDigest(t, theirs), want)
	file, _ := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	_, again, _ := startWithRDB(t, file)
	compareDigests(t, "evkv's file in evkv", keyspaceDigest(t, again), want)
}

// TestRDBSkipsExpired: a key whose time passed after the save is not
// loaded, as Redis's master leaves it out; it counts in
// rdb_last_load_keys_expired.
func TestRDBSkipsExpired(t *testing.T) {
	dir := t.TempDir()
	_, addr := startServer(t, Config{Dir: dir})
	rc := dialRaw(t, addr)
	rc.do("SET", "gone", "v", "PX", "150")
	rc.do("SET", "kept", "v", "EX", "100")
	rc.do("SAVE")
	file, _ := os.ReadFile(filepath.Join(dir, "dump.rdb"))
	for deadline := time.Now().Add(150 * time.Millisecond); time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // the key's time must pass: nothing to wait on
	}
	_, ours, _ := startWithRDB(t, file)
	if got := ours.do("EXISTS", "gone", "kept"); got != ":1\r\n" {
		t.Errorf("EXISTS gone kept = %q; want 1", got)
	}
	if info := ours.do("INFO", "persistence"); !strings.Contains(info, "rdb_last_load_keys_expired:1\r\n") || !strings.Contains(info, "rdb_last_load_keys_loaded:1\r\n") {
		t.Errorf("INFO persistence: %q", info)
	}
}

// TestRDBBadFiles: a file cut short, with a wrong checksum, a byte
// changed, a database past the configured ones, a stream, a module's
// data or a function stops New with an error naming the file; a checksum
// of 0 is none; appendonly yes ignores the RDB file.
func TestRDBBadFiles(t *testing.T) {
	file, _ := redisSave(t)
	load := func(b []byte, cfg Config) error {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "dump.rdb"), b, 0o644)
		cfg.Dir, cfg.Logger = dir, quietLogger()
		s, err := New(cfg)
		if err == nil {
			s.Shutdown(t.Context())
		}
		return err
	}
	if err := load(file, Config{}); err != nil {
		t.Fatalf("the good file: %v", err)
	}
	noSum := bytes.Clone(file)
	binary.LittleEndian.PutUint64(noSum[len(noSum)-8:], 0)
	if err := load(noSum, Config{}); err != nil {
		t.Errorf("a file with checksum 0: %v", err)
	}
	if err := load([]byte("garbage"), Config{AppendOnly: true}); err != nil {
		t.Errorf("appendonly yes with a bad RDB file: %v", err)
	}
	small := rdbFile(t, func(w *rdbWriter) {
		w.byte(rdbOpSelectDB)
		w.length(20)
		w.byte(rdbTypeString)
		w.string([]byte("k"))
		w.string([]byte("v"))
	})
	for _, tc := range []struct {
		name string
		file []byte
		cfg  Config
		want string
	}{
		{"truncated", file[:len(file)/2], Config{}, "unexpected end"},
		{"no checksum", file[:len(file)-8], Config{}, "unexpected end"},
		{"wrong checksum", append(bytes.Clone(file[:len(file)-1]), file[len(file)-1]^1), Config{}, "checksum"},
		{"not RDB", []byte("REDIX0010\xff"), Config{}, "signature"},
		{"newer version", []byte("REDIS0011\xff"), Config{}, "version"},
		{"database 20 of 16", small, Config{}, "database 20"},
		{"stream", rdbFile(t, func(w *rdbWriter) { w.byte(rdbTypeStreamListpack2); w.string([]byte("s")) }), Config{}, "streams are not supported"},
		{"module", rdbFile(t, func(w *rdbWriter) { w.byte(rdbTypeModule2); w.string([]byte("m")) }), Config{}, "modules are not supported"},
		{"module aux", rdbFile(t, func(w *rdbWriter) { w.byte(rdbOpModuleAux) }), Config{}, "modules are not supported"},
		{"function", rdbFile(t, func(w *rdbWriter) { w.byte(rdbOpFunction2); w.string([]byte("#!lua name=x")) }), Config{}, "functions are not supported"},
		{"duplicate key", rdbFile(t, func(w *rdbWriter) {
			for range 2 {
				w.byte(rdbTypeString)
				w.string([]byte("k"))
				w.string([]byte("v"))
			}
		}), Config{}, "twice"},
	} {
		err := load(tc.file, tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "dump.rdb") {
			t.Errorf("%s: New = %v; want an error naming dump.rdb and saying %q", tc.name, err, tc.want)
		}
	}
	if err := load(small, Config{Databases: 32}); err != nil {
		t.Errorf("database 20 of 32: %v", err)
	}
	// Every byte changed in turn, in a small file: an error or a load,
	// never a panic.
	file = redisSaveSmall(t)
	few := file[:min(len(file), 4096)]
	for i := range few {
		b := bytes.Clone(file)
		b[i] ^= 0x5a
		var dbs []*db
		s := &Server{}
		for id := range 16 {
			dbs = append(dbs, newDB(s, id))
		}
		if _, err := loadRDB(bytes.NewReader(b), int64(len(b)), dbs, 0, true); err == nil && i < len(file)-8 {
			t.Errorf("byte %d changed: loaded", i)
		}
	}
}

// rdbFile returns an RDB file whose body body writes, with a checksum.
func rdbFile(t *testing.T, body func(w *rdbWriter)) []byte {
	t.Helper()
	w := rdbWriter{}
	w.buf = append(w.buf, "REDIS0010"...)
	body(&w)
	w.byte(rdbOpEOF)
	return binary.LittleEndian.AppendUint64(w.buf, rdbCRC(0, w.buf))
}

// TestShutdownSaves: with save points, SHUTDOWN saves, as does the
// program's Shutdown; SHUTDOWN NOSAVE does not; SHUTDOWN SAVE does
// without them; a save that fails stops SHUTDOWN with Redis's error.
func TestShutdownSaves(t *testing.T) {
	for _, tc := range []struct {
		name   string
		save   string
		args   []string
		saved  bool
		direct bool // Shutdown, not SHUTDOWN
	}{
		{"save points", "3600 1", []string{"SHUTDOWN"}, true, false},
		{"nosave", "3600 1", []string{"SHUTDOWN", "NOSAVE"}, false, false},
		{"no save points", "", []string{"SHUTDOWN"}, false, false},
		{"save without points", "", []string{"SHUTDOWN", "SAVE"}, true, false},
		{"Shutdown with save points", "3600 1", nil, true, true},
		{"Shutdown without", "", nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, rc := serveOwnShutdown(t, Config{Dir: dir, Settings: map[string]string{"save": tc.save}})
			rc.do("SET", "k", "v")
			if !tc.direct {
				rc.send(tc.args...)
				<-s.Done()
			}
			rc.c.Close()
			if err := s.Shutdown(t.Context()); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(filepath.Join(dir, "dump.rdb"))
			if saved := err == nil; saved != tc.saved {
				t.Errorf("saved = %v; want %v", saved, tc.saved)
			}
		})
	}
	t.Run("failing", func(t *testing.T) {
		dir := t.TempDir()
		_, addr := startServer(t, Config{Dir: dir, Settings: map[string]string{"save": "3600 1", "dbfilename": "sub/dump.rdb"}})
		rc := dialRaw(t, addr)
		if got := rc.do("SHUTDOWN"); got != "-ERR Errors trying to SHUTDOWN. Check logs.\r\n" {
			t.Errorf("SHUTDOWN = %q", got)
		}
		if got := rc.do("SAVE"); got != "-ERR\r\n" {
			t.Errorf("SAVE = %q", got)
		}
		rc.do("CONFIG", "SET", "save", "") // so that the test's Shutdown does not save
	})
}

// FuzzRDB: no file makes loading panic; a file that loads saves to one
// that loads the same.
func FuzzRDB(f *testing.F) {
	f.Add(rdbFile(&testing.T{}, func(w *rdbWriter) {
		w.byte(rdbOpAux)
		w.string([]byte("redis-ver"))
		w.string([]byte("7.0.15"))
		w.byte(rdbOpSelectDB)
		w.length(1)
		w.byte(rdbOpResizeDB)
		w.length(2)
		w.length(1)
		w.byte(rdbOpExpireMS)
		w.buf = binary.LittleEndian.AppendUint64(w.buf, 1<<50)
		w.byte(rdbTypeString)
		w.string([]byte("k"))
		w.string([]byte(strings.Repeat("ab", 30)))
		w.byte(rdbTypeSet)
		w.string([]byte("s"))
		w.length(2)
		w.string([]byte("1"))
		w.string([]byte("x"))
	}))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &Server{}
		var dbs []*db
		for id := range 4 {
			dbs = append(dbs, newDB(s, id))
		}
		s.dbs = dbs
		if _, err := loadRDB(bytes.NewReader(b), int64(len(b)), dbs, 0, true); err != nil {
			return
		}
		var out bytes.Buffer
		if err := s.writeRDB(&out); err != nil {
			t.Fatal(err)
		}
		s2 := &Server{}
		for id := range 4 {
			s2.dbs = append(s2.dbs, newDB(s2, id))
		}
		if _, err := loadRDB(bytes.NewReader(out.Bytes()), int64(out.Len()), s2.dbs, 0, true); err != nil {
			t.Fatalf("a saved file does not load: %v", err)
		}
	})
}
