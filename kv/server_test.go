package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evloop/evloop/resp"
)

// TestProtocolErrors sends malformed requests: each gets Redis's error and
// its connection is closed, while another client goes on undisturbed and
// the keyspace is unchanged.
func TestProtocolErrors(t *testing.T) {
	_, addr := startServer(t, Config{})
	other := goRedis(t, addr)
	ctx := context.Background()
	if err := other.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"bad count", "*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"bad bulk", "*1\r\n$x\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"not a bulk", "*1\r\n:1\r\n", "-ERR Protocol error: expected '$', got ':'\r\n"},
		{"unbalanced", "SET \"a b\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"huge bulk", "*1\r\n$999999999999\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"set then garbage", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nw\r\n*1\r\n$x\r\n", "+OK\r\n-ERR Protocol error: invalid bulk length\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialRaw(t, addr)
			if _, err := rc.c.Write([]byte(tc.in)); err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc.c)
			if err != nil || string(got) != tc.want {
				t.Errorf("reply %q, %v; want %q then EOF", got, err, tc.want)
			}
			if v, err := other.Get(ctx, "k").Result(); err != nil || (v != "v" && v != "w") {
				t.Errorf("other client: GET = %q, %v", v, err)
			}
		})
	}
}

// TestCompatQueryBufferLimit: client-query-buffer-limit is set at run
// time, as in Redis 7.0 (a memory value of 1mb at least): a client whose
// request left buffered passes it is closed without a reply, as Redis's
// readQueryFromClient closes it, and one whose request stays within the
// raised limit is served.
func TestCompatQueryBufferLimit(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"CONFIG", "SET", "client-query-buffer-limit", "100"}, {"CONFIG", "SET", "client-query-buffer-limit", "abc"},
		{"CONFIG", "SET", "client-query-buffer-limit", "2mb"}, {"CONFIG", "GET", "client-query-buffer-limit"},
		{"CONFIG", "SET", "proto-max-bulk-len", "100"}, {"CONFIG", "GET", "proto-max-bulk-len"},
	})
	_, addr := startServer(t, Config{})
	for name, a := range map[string]string{"evkv": addr, "redis": redisServer(t)} {
		admin := dialRaw(t, a)
		part := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1600000\r\n" + strings.Repeat("x", 1500000) // a request of 1.6 MB, cut
		for _, limit := range []string{"1mb", "2mb"} {
			admin.do("CONFIG", "SET", "client-query-buffer-limit", limit)
			rc := dialRaw(t, a)
			if _, err := rc.c.Write([]byte(part)); err != nil {
				t.Fatal(err)
			}
			if limit == "1mb" {
				if !gone(rc) {
					t.Errorf("%s: a client past the limit of %s is still served", name, limit)
				}
				continue
			}
			if _, err := rc.c.Write([]byte(strings.Repeat("x", 100000) + "\r\n")); err != nil { // the rest
				t.Fatal(err)
			}
			if got := rc.read(); got != "+OK\r\n" {
				t.Errorf("%s: the request within the limit of %s: %q; want +OK", name, limit, got)
			}
		}
		if got := admin.do("STRLEN", "k"); got != ":1600000\r\n" {
			t.Errorf("%s: STRLEN k = %q", name, got)
		}
	}
}

func TestRequirePass(t *testing.T) {
	_, addr := startServer(t, Config{RequirePass: "secret"})
	rc := dialRaw(t, addr)
	if got := rc.do("GET", "k"); got != "-NOAUTH Authentication required.\r\n" {
		t.Errorf("GET before AUTH = %q", got)
	}
	// As Redis's execCommandAbort words it, for an EXEC refused.
	if got := rc.do("EXEC"); got != "-EXECABORT Transaction discarded because of: NOAUTH Authentication required.\r\n" {
		t.Errorf("EXEC before AUTH = %q", got)
	}
	if got := rc.do("AUTH", "wrong"); !strings.HasPrefix(got, "-WRONGPASS") {
		t.Errorf("AUTH wrong = %q", got)
	}
	// Unauthenticated clients may not send big requests.
	if got := rc.do("AUTH", strings.Repeat("x", 20000)); got != "-ERR Protocol error: unauthenticated bulk length\r\n" {
		t.Errorf("big AUTH = %q", got)
	}
	c := goRedis(t, addr, func(o *redis.Options) { o.Password = "secret" })
	if err := c.Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET after AUTH: %v", err)
	}
	bad := goRedis(t, addr, func(o *redis.Options) { o.Password = "nope" })
	if err := bad.Ping(context.Background()).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("PING with a wrong password: %v", err)
	}
}

func TestMaxClients(t *testing.T) {
	_, addr := startServer(t, Config{MaxClients: 2})
	a, b := dialRaw(t, addr), dialRaw(t, addr)
	a.do("PING")
	b.do("PING")
	c := dialRaw(t, addr)
	got, _ := io.ReadAll(c.c)
	if string(got) != "-ERR max number of clients reached\r\n" {
		t.Errorf("third client got %q", got)
	}
	if got := a.do("PING"); got != "+PONG\r\n" {
		t.Errorf("first client after the refusal: %q", got)
	}
}

func TestExpiry(t *testing.T) {
	c, ctx := serverAndClient(t)
	c.Set(ctx, "lazy", "v", 50*time.Millisecond)
	for i := range 100 {
		c.Set(ctx, fmt.Sprint("active", i), "v", 50*time.Millisecond)
	}
	c.Set(ctx, "stays", "v", time.Hour)
	time.Sleep(100 * time.Millisecond)
	if err := c.Get(ctx, "lazy").Err(); err != redis.Nil {
		t.Errorf("GET of an expired key: %v; want nil", err)
	}
	// The active cycle removes the others without their being touched.
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := c.DBSize(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("DBSIZE = %d after expiry; want 1", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ttl := c.TTL(ctx, "stays").Val(); ttl < 59*time.Minute {
		t.Errorf("TTL = %v", ttl)
	}
}

func TestWatch(t *testing.T) {
	_, addr := startServer(t, Config{})
	a, b := goRedis(t, addr), goRedis(t, addr)
	ctx := context.Background()
	a.Set(ctx, "n", "1", 0)
	err := a.Watch(ctx, func(tx *redis.Tx) error {
		b.Set(ctx, "n", "2", 0) // another client changes the key
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, "n")
			return nil
		})
		return err
	}, "n")
	if !errors.Is(err, redis.TxFailedErr) {
		t.Errorf("EXEC after the watched key changed: %v; want TxFailedErr", err)
	}
	err = a.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, "n")
			return nil
		})
		return err
	}, "n")
	if err != nil || a.Get(ctx, "n").Val() != "3" {
		t.Errorf("EXEC = %v, n = %s; want nil, 3", err, a.Get(ctx, "n").Val())
	}
}

// TestCompatWatchFlushSwapExpired: which changes fail the EXEC of a client
// WATCHing a key, beside Redis 7.0. SWAPDB and FLUSHDB touch the watched
// keys that exist in the database emptied or in the one that replaces
// it (touchAllWatchedKeysInDb), so that a key absent from db 0 that
// SWAPDB brings in fails it. A key that had expired, not yet deleted,
// when WATCHed is watched as expired (watchForKey's wk->expired): its
// deletion, by a later access, FLUSHDB or SWAPDB, is no change, and an
// absent key that SWAPDB replaces with an expired one is no change
// either; a write to it is one.
func TestCompatWatchFlushSwapExpired(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	set, setX := []string{"SET", "k", "v"}, []string{"SET", "x", "v"}
	swap, flush := []string{"SWAPDB", "0", "1"}, []string{"FLUSHDB"}
	expiredIn := func(db string) [][]string { // k in db, expired but not deleted
		return [][]string{{"SELECT", db}, {"SET", "k", "v", "PX", "1"}, {"SELECT", "0"}}
	}
	// Keys with an hour to live make the expiry cycle (20 keys sampled a
	// run) unlikely to delete k before the commands do.
	for _, a := range []string{addr, raddr} {
		rc := dialRaw(t, a)
		for _, db := range []string{"0", "1"} {
			rc.do("SELECT", db)
			for i := range 1000 {
				rc.send("SET", fmt.Sprint("pad", i), "x", "EX", "3600")
			}
			for range 1000 {
				rc.read()
			}
		}
	}
	for _, tc := range []struct {
		name          string
		before, after [][]string // another client's commands, before and after WATCH k in db 0
		runs          bool
	}{
		{"swapdb brings the key in", nil, [][]string{{"SELECT", "1"}, set, {"SELECT", "0"}, swap}, false},
		{"swapdb takes the key away", [][]string{set}, [][]string{swap}, false},
		{"swapdb of other keys", [][]string{setX}, [][]string{swap}, true},
		{"swapdb with itself", [][]string{set}, [][]string{{"SWAPDB", "0", "0"}}, true},
		{"flushdb of the key", [][]string{set}, [][]string{flush}, false},
		{"flushdb of other keys", [][]string{setX}, [][]string{flush}, true},
		{"expired key deleted by GET", expiredIn("0"), [][]string{{"GET", "k"}}, true},
		{"expired key deleted by FLUSHDB", expiredIn("0"), [][]string{flush}, true},
		{"expired key swapped away", expiredIn("0"), [][]string{swap}, true},
		{"expired key written", expiredIn("0"), [][]string{{"SET", "k", "new"}}, false},
		{"absent key swapped for an expired one", expiredIn("1"), [][]string{swap}, true},
		{"absent key swapped for an expired one, then deleted", expiredIn("1"), [][]string{swap, {"GET", "k"}}, true},
		{"absent key swapped for an expired one, then written", expiredIn("1"), [][]string{swap, {"SET", "k", "new"}}, false},
	} {
		for name, a := range map[string]string{"evkv": addr, "redis": raddr} {
			w, o := dialRaw(t, a), dialRaw(t, a)
			o.do("SELECT", "1")
			o.do("DEL", "k", "x")
			o.do("SELECT", "0")
			o.do("DEL", "k", "x")
			for _, args := range tc.before {
				o.do(args...)
			}
			time.Sleep(5 * time.Millisecond) // a PX 1 key has expired
			w.do("WATCH", "k")
			for _, args := range tc.after {
				o.do(args...)
			}
			w.do("MULTI")
			w.do("PING")
			want := "*-1\r\n"
			if tc.runs {
				want = "*1\r\n+PONG\r\n"
			}
			if got := w.do("EXEC"); got != want {
				t.Errorf("%s: %s: EXEC = %q; want %q", name, tc.name, got, want)
			}
		}
	}
}

// TestCompatExecAtOneTime: the commands of an EXEC all see the time EXEC
// started, in Redis 7.0 (call() raises server.fixed_time_expire, so that
// keyIsExpired compares with the cached time of the EXEC): a key with a
// millisecond to live, set in the transaction, still exists for a command
// after a slow one. Redis 7.0.15: *3 +OK :200000 :1.
func TestCompatExecAtOneTime(t *testing.T) {
	_, addr := startServer(t, Config{})
	for name, a := range map[string]string{"evkv": addr, "redis": redisServer(t)} {
		rc := dialRaw(t, a)
		for i := 0; i < 200000; i += 1000 {
			args := []string{"SADD", "big"}
			for j := i; j < i+1000; j++ {
				args = append(args, fmt.Sprint("m", j))
			}
			rc.do(args...)
		}
		rc.do("MULTI")
		rc.do("SET", "k", "v", "PX", "1")
		rc.do("SUNIONSTORE", "dst", "big") // takes more than a millisecond
		rc.do("EXISTS", "k")
		if got := rc.do("EXEC"); got != "*3\r\n+OK\r\n:200000\r\n:1\r\n" {
			t.Errorf("%s: EXEC = %q; want *3 +OK :200000 :1, the key set in the transaction still there at its end", name, got)
		}
	}
}

func TestPubSub(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("RESP", proto), func(t *testing.T) {
			_, addr := startServer(t, Config{NotifyKeyspaceEvents: "KEA"})
			opt := func(o *redis.Options) { o.Protocol = proto }
			pub, sub := goRedis(t, addr, opt), goRedis(t, addr, opt)
			ctx := context.Background()
			ps := sub.Subscribe(ctx, "news")
			defer ps.Close()
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			if err := ps.PSubscribe(ctx, "__keyevent@0__:*"); err != nil {
				t.Fatal(err)
			}
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			if n := pub.Publish(ctx, "news", "hello").Val(); n != 1 {
				t.Errorf("PUBLISH = %d; want 1", n)
			}
			pub.Set(ctx, "k", "v", 0)
			m1, err := ps.ReceiveMessage(ctx)
			if err != nil || m1.Channel != "news" || m1.Payload != "hello" {
				t.Fatalf("message %+v, %v", m1, err)
			}
			m2, err := ps.ReceiveMessage(ctx)
			if err != nil || m2.Channel != "__keyevent@0__:set" || m2.Payload != "k" {
				t.Fatalf("keyspace event %+v, %v", m2, err)
			}
			if n := pub.PubSubNumSub(ctx, "news").Val()["news"]; n != 1 {
				t.Errorf("PUBSUB NUMSUB = %d", n)
			}
		})
	}
}

// registerPanicking registers, for the test's time, a command called
// name, of the given flags, that runs before (if not nil) and panics. It
// is to be called before the server starts; it is forgotten after the
// server's own cleanup.
func registerPanicking(t *testing.T, name, flags string, before func(s *Server)) {
	boom := cmd(name, 1, flags, 0, 0, 0, "server", "7.0.0", "Panics.",
		func(s *Server, c *client, args [][]byte) {
			if before != nil {
				before(s)
			}
			panic(name)
		})
	register(boom)
	t.Cleanup(func() { delete(commands, boom.name) })
}

// TestPanicInTransaction: a command that panics inside EXEC closes its
// connection after what came before the EXEC was answered, and the log
// closes the transaction, so that the commands of other clients logged
// after it are not taken into it on replay.
func TestPanicInTransaction(t *testing.T) {
	registerPanicking(t, "test-boom2", "write fast", nil)
	dir := t.TempDir()
	cfg := Config{AppendOnly: true, AppendFsync: "always", Dir: dir}
	s1, addr := startServer(t, cfg)
	victim, other := dialRaw(t, addr), dialRaw(t, addr)
	victim.send("SET", "before", "1")
	victim.send("MULTI")
	victim.send("SET", "in", "1")
	victim.send("TEST-BOOM2")
	victim.send("SET", "never", "1")
	victim.send("EXEC")
	want := "+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n"
	if b, err := io.ReadAll(victim.r); err != nil || string(b) != want {
		t.Errorf("the connection whose EXEC panicked read %q, %v; want %q, then EOF", b, err, want)
	}
	if got := other.do("SET", "later", "1"); got != "+OK\r\n" {
		t.Fatalf("SET after the panic: %q", got)
	}
	c := restartRaw(t, s1, cfg)
	if got := c.do("EXISTS", "before", "in", "never", "later"); got != ":3\r\n" {
		t.Errorf("after replay, EXISTS before in never later = %q; want 3 (all but never)", got)
	}
}

// TestAppendOnlyReplay writes through a server with the log on, then
// starts a new one on the same file and finds the data, TTLs included.
func TestAppendOnlyReplay(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{AppendOnly: true, AppendFsync: "always", Dir: dir}
	s1, addr := startServer(t, cfg)
	c := goRedis(t, addr)
	ctx := context.Background()
	c.Set(ctx, "a", "1", 0)
	c.Incr(ctx, "a")
	c.Set(ctx, "ttl", "x", time.Hour)
	conn := c.Conn()
	defer conn.Close()
	conn.Select(ctx, 3)
	conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "t1", "v", 0)
		p.Set(ctx, "t2", "v", 0)
		return nil
	})
	conn.Set(ctx, "gone", "x", 0)
	conn.Del(ctx, "gone")
	conn.Close()
	c.Close()
	ctxS, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s1.Shutdown(ctxS); err != nil {
		t.Fatal(err)
	}
	_, addr2 := startServer(t, cfg)
	c2 := goRedis(t, addr2)
	if v := c2.Get(ctx, "a").Val(); v != "2" {
		t.Errorf("a = %q; want 2", v)
	}
	if ttl := c2.TTL(ctx, "ttl").Val(); ttl < 59*time.Minute {
		t.Errorf("TTL = %v", ttl)
	}
	c2 = goRedis(t, addr2, func(o *redis.Options) { o.DB = 3 })
	if n := c2.Exists(ctx, "t1", "t2", "gone").Val(); n != 2 {
		t.Errorf("EXISTS t1 t2 gone in db 3 = %d; want 2", n)
	}
}

// TestAppendOnlyTruncated cuts the log inside its last command: the start
// keeps what came before, cuts the rest off the file, and goes on; unless
// aof-load-truncated is no.
func TestAppendOnlyTruncated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "appendonly.aof")
	whole := "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n"
	cut := "*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1"
	multi := "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$1\r\n1\r\n"
	for _, tail := range []string{cut, multi} {
		if err := os.WriteFile(path, []byte(whole+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{AppendOnly: true, Dir: dir, Logger: quietLogger()})
		if err != nil {
			t.Fatalf("New with a cut log: %v", err)
		}
		if got := s.dbs[0].size(); got != 1 {
			t.Errorf("keys after replay = %d; want 1", got)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		if string(data) != whole {
			t.Errorf("file after the cut = %q; want %q", data, whole)
		}
	}
	// With aof-load-truncated no, a cut log stops the start, untouched.
	os.WriteFile(path, []byte(whole+cut), 0o644)
	_, err := New(Config{AppendOnly: true, Dir: dir, Logger: quietLogger(), Settings: map[string]string{"aof-load-truncated": "no"}})
	if err == nil || !strings.Contains(err.Error(), "aof-load-truncated is no") {
		t.Errorf("New with a cut log and aof-load-truncated no: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != whole+cut {
		t.Errorf("file after a refused start = %q; want it as it was", data)
	}
	// Garbage in the middle is not a crash: the start fails, clearly.
	os.WriteFile(path, []byte("*1\r\n$x\r\n"+whole), 0o644)
	if _, err := New(Config{AppendOnly: true, Dir: dir, Logger: quietLogger()}); err == nil || !strings.Contains(err.Error(), "bad format") {
		t.Errorf("New with a corrupt log: %v; want a bad-format error", err)
	}
}

// TestAppendOnlyWrongArity: a command in the log with the wrong number of
// arguments for it (a count the disk changed, a file written by hand)
// stops the start with an error naming it and where it is, as an unknown
// command does, where the command ran on arguments it did not have and
// the start panicked (SET with no key: index out of range) or made what
// it could of them (HSET h made an empty hash).
func TestAppendOnlyWrongArity(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "appendonly.aof")
	set := "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n"
	for _, tc := range []struct {
		log, want string
	}{
		{set + "*1\r\n$3\r\nSET\r\n", `"set" in the append-only file ` + path + " at byte 27"},
		{"*2\r\n$4\r\nHSET\r\n$1\r\nh\r\n", `"hset" in the append-only file ` + path + " at byte 0"},
		{"*1\r\n$6\r\nOBJECT\r\n", `"object"`},
		{"*2\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n", `"config|get"`},
		{"*1\r\n$5\r\nMULTI\r\n*1\r\n$4\r\nLPOP\r\n*1\r\n$4\r\nEXEC\r\n", `"lpop"`},
	} {
		if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := New(Config{AppendOnly: true, Dir: dir, Logger: quietLogger()})
		if err == nil || !strings.Contains(err.Error(), "wrong number of arguments for "+tc.want) {
			t.Errorf("New with log %q: %v; want wrong number of arguments for %s", tc.log, err, tc.want)
		}
	}
}

// TestAppendOnlyReplayChunks replays a log several times longer than the
// chunk the replay reads at a time, with commands across the chunks'
// ends: a list of 300,000 items, a value longer than a chunk, a
// transaction, and a cut last command.
func TestAppendOnlyReplayChunks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "appendonly.aof")
	var log []byte
	cmd := func(args ...string) {
		bs := make([][]byte, len(args))
		for i, a := range args {
			bs[i] = []byte(a)
		}
		log = resp.AppendCommand(log, bs...)
	}
	for i := range 30000 {
		cmd("SET", fmt.Sprint("k", i), strings.Repeat("v", i%97))
	}
	push := []string{"RPUSH", "list"}
	for i := range 300000 {
		push = append(push, fmt.Sprint(i%10))
	}
	cmd(push...)
	big := strings.Repeat("0123456789", replayChunk/10*5/2) // two and a half chunks
	cmd("SET", "big", big)
	hset := []string{"HSET", "hash"}
	for i := range 2000 {
		hset = append(hset, fmt.Sprint("f", i), "x")
	}
	cmd(hset...)
	cmd("MULTI")
	cmd("SET", "in-multi", "1")
	cmd("EXEC")
	whole := len(log)
	cmd("SET", "cut", "off")
	log = log[:len(log)-3]
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{AppendOnly: true, Dir: dir, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	db := s.dbs[0]
	if got, want := db.size(), 30000+4; got != want {
		t.Errorf("keys after replay = %d; want %d", got, want)
	}
	str := func(key string) string {
		e := db.lookup([]byte(key))
		if e == nil {
			return "<missing>"
		}
		return e.str
	}
	if got := str("k29999"); got != strings.Repeat("v", 29999%97) {
		t.Errorf("k29999 after replay = %q", got)
	}
	if got := str("big"); got != big {
		t.Errorf("big after replay: %d bytes; want %d", len(got), len(big))
	}
	if e := db.lookup([]byte("list")); e == nil || e.obj.(*list).len() != 300000 {
		t.Error("list after replay: not of 300,000 items")
	}
	if e := db.lookup([]byte("hash")); e == nil || e.obj.(*hash).len() != 2000 {
		t.Error("hash after replay: not of 2,000 fields")
	}
	if str("in-multi") != "1" {
		t.Error("in-multi missing after replay")
	}
	data, _ := os.ReadFile(path)
	if len(data) != whole {
		t.Errorf("file after the cut: %d bytes; want %d", len(data), whole)
	}
}

// TestRewriteWhileWriting rewrites the log while clients change keys, then
// replays the new file and finds exactly the final state.
func TestRewriteWhileWriting(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{AppendOnly: true, Dir: dir}
	s1, addr := startServer(t, cfg)
	ctx := context.Background()
	c := goRedis(t, addr)
	fill(t, c, 20000)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := goRedis(t, addr)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprint("k", (i*7+w)%20000)
				cl.Incr(ctx, k)
				cl.Append(ctx, fmt.Sprint("new", w), "x")
				if i%10 == 0 {
					cl.Del(ctx, fmt.Sprint("k", (i*13)%20000))
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if err := c.Do(ctx, "BGREWRITEAOF").Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_rewrite_in_progress:0") {
		if time.Now().After(deadline) {
			t.Fatal("the rewrite did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	if !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_rewrites:1") {
		t.Fatalf("INFO persistence: %s", c.Info(ctx, "persistence").Val())
	}
	want := snapshot(t, c)
	c.Close()
	s1.Shutdown(ctx)
	replayedAs(t, cfg, want)
}

// TestConfigSetAppendOnly turns the log on while clients write: the first
// rewrite writes the keyspace and what was served meanwhile, and a restart
// from the file has it all. Turned off, the log gets nothing more.
func TestConfigSetAppendOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s1, addr := startServer(t, Config{Dir: dir})
	ctx := context.Background()
	c := goRedis(t, addr)
	fill(t, c, 20000)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		cl := goRedis(t, addr)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			cl.Incr(ctx, fmt.Sprint("k", (i*7)%20000))
			cl.Append(ctx, "new", "x")
		}
	}()
	if err := c.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(c.Info(ctx, "persistence").Val(), "aof_enabled:1") {
		if time.Now().After(deadline) {
			t.Fatal("the first rewrite did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	c.Set(ctx, "logged", "1", 0)
	want := snapshot(t, c)
	if err := c.ConfigSet(ctx, "appendonly", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if v := c.ConfigGet(ctx, "appendonly").Val()["appendonly"]; v != "no" {
		t.Errorf("CONFIG GET appendonly = %q after turning it off", v)
	}
	c.Set(ctx, "not-logged", "1", 0)
	c.Close()
	s1.Shutdown(ctx)
	replayedAs(t, Config{Dir: dir, AppendOnly: true}, want)
}

// TestLogTurnedOnAgain: a log turned off after a rewrite and on again is
// rewritten whole: the keys the earlier rewrite wrote, unchanged since,
// are in the new log too (the generation that marks what a rewrite has
// written is the server's, not the log's).
func TestLogTurnedOnAgain(t *testing.T) {
	t.Parallel()
	cfg := Config{Dir: t.TempDir(), AppendOnly: true}
	s, addr := startServer(t, cfg)
	rc := dialRaw(t, addr)
	rc.do("SET", "a", "1")
	rc.do("BGREWRITEAOF")
	waitRewritten(t, rc, 1)
	rc.do("CONFIG", "SET", "appendonly", "no")
	rc.do("CONFIG", "SET", "appendonly", "yes")
	waitLogOn(t, rc)
	rc.do("SET", "b", "2")
	s.Shutdown(context.Background())
	replayedAs(t, cfg, map[string]string{"a": "1", "b": "2"})
}

// replayedAs starts a server with cfg, which replays its log, and checks
// that its string keys are want.
func replayedAs(t *testing.T, cfg Config, want map[string]string) {
	t.Helper()
	_, addr := startServer(t, cfg)
	got := snapshot(t, goRedis(t, addr))
	if len(got) != len(want) {
		t.Fatalf("%d keys after replay; want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q after replay; want %q", k, got[k], v)
		}
	}
}

// snapshot returns every string key of db 0 with its value.
func snapshot(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string, len(keys))
	for chunk := range slices.Chunk(keys, pipelined) {
		pipe := c.Pipeline()
		gets := make([]*redis.StringCmd, len(chunk))
		for i, k := range chunk {
			gets[i] = pipe.Get(ctx, k)
		}
		pipe.Exec(ctx) // a GET's error leaves its value "", as c.Get's
		for i, k := range chunk {
			out[k] = gets[i].Val()
		}
	}
	return out
}

// pipelined is how many commands fill and snapshot send at once: go-redis
// gives all of a pipeline's replies one read timeout.
const pipelined = 1000

// fill sets k0 to k(n-1) to 0 to n-1.
func fill(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i += pipelined {
		pipe := c.Pipeline()
		for j := i; j < min(i+pipelined, n); j++ {
			pipe.Set(ctx, fmt.Sprint("k", j), j, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPanicDisturbsNoOther runs a command that writes part of its reply
// and panics: its connection closes, and the next client served gets its
// own replies only, not the rest of that one's.
func TestPanicDisturbsNoOther(t *testing.T) {
	registerPanicking(t, "test-boom", "fast", func(s *Server) { s.w.Simple("HALF") })
	_, addr := startServer(t, Config{})
	other, victim := dialRaw(t, addr), dialRaw(t, addr)
	if got := other.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING: %q", got)
	}
	// Pipelined around the command that panics: the reply before it is
	// sent, its half reply and what came after it are not.
	victim.send("SET", "before", "1")
	victim.send("TEST-BOOM")
	victim.send("SET", "after", "1")
	if got := victim.read(); got != "+OK\r\n" {
		t.Fatalf("the connection whose command panicked read %q; want +OK", got)
	}
	// It is no longer among the clients, though its close waits for it.
	if got := other.do("INFO", "clients"); !strings.Contains(got, "connected_clients:1\r\n") {
		t.Errorf("INFO clients after the panic: %q; want connected_clients:1", got)
	}
	if b, err := io.ReadAll(victim.r); err != nil || len(b) != 0 {
		t.Errorf("the connection whose command panicked read %q, %v after +OK; want EOF", b, err)
	}
	if got := other.do("EXISTS", "before", "after"); got != ":1\r\n" {
		t.Errorf("EXISTS before after = %q; want 1 (the command before the panic ran, the one after did not)", got)
	}
	for range 3 {
		if got := other.do("PING"); got != "+PONG\r\n" {
			t.Fatalf("PING after another client's panic: %q", got)
		}
	}
	if got := other.do("SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET after another client's panic: %q", got)
	}
}

// TestCommandInPieces sends a command of many arguments in small writes,
// so that the server reads it over many reads and parses it as it comes,
// while another client's commands pass through the loop in between; then
// the same with a malformed argument header far into the command.
func TestCommandInPieces(t *testing.T) {
	_, addr := startServer(t, Config{})
	const n = 30000
	args := [][]byte{[]byte("RPUSH"), []byte("big")}
	for i := range n {
		args = append(args, strconv.AppendInt(nil, int64(i), 10))
	}
	var stream []byte
	stream = resp.AppendCommand(stream, []byte("SET"), []byte("a"), []byte("1"))
	stream = resp.AppendCommand(stream, args...)
	stream = resp.AppendCommand(stream, []byte("GET"), []byte("a"))

	big, other := dialRaw(t, addr), dialRaw(t, addr)
	for i, piece := 0, 0; len(stream) > 0; i++ {
		piece = []int{1, 7, 300, 2000}[i%4]
		k := min(piece, len(stream))
		if _, err := big.c.Write(stream[:k]); err != nil {
			t.Fatal(err)
		}
		stream = stream[k:]
		if i%16 == 0 {
			if got := other.do("SET", "b", strconv.Itoa(i)); got != "+OK\r\n" {
				t.Fatalf("other client's SET while the big command arrives: %q", got)
			}
		}
	}
	for _, want := range []string{"+OK\r\n", ":" + strconv.Itoa(n) + "\r\n", "$1\r\n1\r\n"} {
		if got := big.read(); got != want {
			t.Fatalf("reply %q; want %q", got, want)
		}
	}
	for _, i := range []int{0, 1, n / 2, n - 1} {
		want := "$" + strconv.Itoa(len(strconv.Itoa(i))) + "\r\n" + strconv.Itoa(i) + "\r\n"
		if got := other.do("LINDEX", "big", strconv.Itoa(i)); got != want {
			t.Errorf("LINDEX big %d = %q; want %q", i, got, want)
		}
	}

	// A bad header far in: the error, the connection closed, nothing run.
	bad := resp.AppendCommand(nil, append([][]byte{[]byte("RPUSH"), []byte("bad")}, args[2:]...)...)
	at := bytes.LastIndexByte(bad[:len(bad)*3/4], '$')
	bad[at] = ':'
	rc := dialRaw(t, addr)
	for len(bad) > 0 {
		k := min(1000, len(bad))
		if _, err := rc.c.Write(bad[:k]); err != nil {
			break // closed on the error
		}
		bad = bad[k:]
	}
	if b, _ := io.ReadAll(rc.r); string(b) != "-ERR Protocol error: expected '$', got ':'\r\n" {
		t.Errorf("malformed big command: read %q; want the protocol error, then EOF", b)
	}
	if got := other.do("EXISTS", "bad"); got != ":0\r\n" {
		t.Errorf("EXISTS bad = %q; want 0", got)
	}
}

// TestClientUnblockPipelined unblocks a client with CLIENT UNBLOCK between
// other commands of the same batch: each client gets its own replies.
func TestClientUnblockPipelined(t *testing.T) {
	_, addr := startServer(t, Config{})
	blocked, other := dialRaw(t, addr), dialRaw(t, addr)
	id := strings.TrimSuffix(strings.TrimPrefix(blocked.do("CLIENT", "ID"), ":"), "\r\n")
	blocked.send("BLPOP", "nothing", "0")
	waitBlocked(t, other, 1)
	for _, reason := range []string{"TIMEOUT", "ERROR"} {
		other.send("PING")
		other.send("CLIENT", "UNBLOCK", id, reason)
		other.send("ECHO", "after")
		for _, want := range []string{"+PONG\r\n", ":1\r\n", "$5\r\nafter\r\n"} {
			if got := other.read(); got != want {
				t.Fatalf("%s: the unblocking client read %q; want %q", reason, got, want)
			}
		}
		want := "*-1\r\n"
		if reason == "ERROR" {
			want = "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
		}
		if got := blocked.read(); got != want {
			t.Fatalf("%s: the unblocked client read %q; want %q", reason, got, want)
		}
		blocked.send("BLPOP", "nothing", "0")
		waitBlocked(t, other, 1)
	}
}

// TestCompatClientKillFreesAtOnce: CLIENT KILL frees its victim at once in
// Redis 7.0 (clientKillCommand's freeClient unblocks and unsubscribes
// it): a push to the key a killed client was blocked on stays in the list
// for the others (LLEN 1), the killed client is gone from CLIENT LIST and
// INFO's counts, and a PUBLISH to the channel only it subscribed to
// reaches no one (:0). Its connection's close may take longer (its
// queued replies are written first); it no longer counts meanwhile.
func TestCompatClientKillFreesAtOnce(t *testing.T) {
	_, addr := startServer(t, Config{})
	for name, a := range map[string]string{"evkv": addr, "redis": redisServer(t)} {
		blocked, subscriber, o := dialRaw(t, a), dialRaw(t, a), dialRaw(t, a)
		id := func(rc *rawConn) string {
			return strings.TrimSuffix(strings.TrimPrefix(rc.do("CLIENT", "ID"), ":"), "\r\n")
		}
		blockedID, subscriberID := id(blocked), id(subscriber)
		blocked.send("BLPOP", "l", "0")
		subscriber.do("SUBSCRIBE", "ch")
		waitBlocked(t, o, 1)
		for _, v := range []string{blockedID, subscriberID} {
			if got := o.do("CLIENT", "KILL", "ID", v); got != ":1\r\n" {
				t.Fatalf("%s: CLIENT KILL ID %s = %q; want :1", name, v, got)
			}
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"RPUSH", "l", "x"}, ":1\r\n"},
			{[]string{"LLEN", "l"}, ":1\r\n"},
			{[]string{"PUBLISH", "ch", "m"}, ":0\r\n"},
			{[]string{"CLIENT", "KILL", "ID", blockedID}, ":0\r\n"},
		} {
			if got := o.do(tc.args...); got != tc.want {
				t.Errorf("%s: %q after CLIENT KILL = %q; want %q", name, tc.args, got, tc.want)
			}
		}
		if list := o.do("CLIENT", "LIST"); strings.Contains(list, "id="+blockedID+" ") || strings.Contains(list, "id="+subscriberID+" ") {
			t.Errorf("%s: the killed clients are still listed:\n%s", name, list)
		}
		info := o.do("INFO", "clients")
		for _, field := range []string{"connected_clients:1\r\n", "blocked_clients:0\r\n"} {
			if !strings.Contains(info, field) {
				t.Errorf("%s: INFO clients after CLIENT KILL lacks %q:\n%s", name, field, info)
			}
		}
		o.do("DEL", "l")
	}
}

// waitBlocked waits until INFO clients, asked through rc, counts n
// blocked clients.
func waitBlocked(t *testing.T, rc *rawConn, n int) {
	t.Helper()
	want := "blocked_clients:" + strconv.Itoa(n) + "\r\n"
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if strings.Contains(rc.do("INFO", "clients"), want) {
			return
		}
	}
	t.Fatalf("never %d blocked clients", n)
}

// TestPanicServingBlocked makes the code answering a blocked client panic,
// when another client's push serves it, when its timeout passes and when
// CLIENT UNBLOCK ends its wait: the blocked client is closed, nothing of
// its reply reaches anyone, and the client whose command led to it is
// served as if nothing happened.
func TestPanicServingBlocked(t *testing.T) {
	boom := cmd("test-bpop-boom", 3, "write blocking", 1, 1, 1, "list", "7.0.0", "Blocks, then panics after half a reply.",
		func(s *Server, c *client, args [][]byte) {
			timeout, ok := s.parseTimeout(args[2])
			if !ok {
				return
			}
			s.block(c, args[1:2], timeout, func([]byte) bool {
				s.w.Simple("HALF")
				panic("test-bpop-boom served")
			}, func() {
				s.w.Simple("HALF")
				panic("test-bpop-boom timed out")
			})
		})
	register(boom)
	t.Cleanup(func() { delete(commands, boom.name) }) // after the server's own cleanup
	_, addr := startServer(t, Config{})
	other := dialRaw(t, addr)

	// A well-behaved blocked client on another key, served after the
	// panic in the same turn.
	fine := dialRaw(t, addr)
	fine.send("BLPOP", "fine", "0")
	victim := dialRaw(t, addr)
	victim.send("TEST-BPOP-BOOM", "k", "0")
	waitBlocked(t, other, 2)
	other.send("PING")
	other.send("LPUSH", "k", "v")
	other.send("LPUSH", "fine", "x")
	other.send("PING")
	for _, want := range []string{"+PONG\r\n", ":1\r\n", ":1\r\n", "+PONG\r\n"} {
		if got := other.read(); got != want {
			t.Fatalf("the pushing client read %q; want %q", got, want)
		}
	}
	if b, err := io.ReadAll(victim.r); err != nil || len(b) != 0 {
		t.Errorf("served blocked client whose code panicked read %q, %v; want EOF", b, err)
	}
	if got := fine.read(); got != "*2\r\n$4\r\nfine\r\n$1\r\nx\r\n" {
		t.Errorf("the other blocked client read %q", got)
	}

	// Its timeout.
	victim = dialRaw(t, addr)
	victim.send("TEST-BPOP-BOOM", "k2", "0.05")
	if b, err := io.ReadAll(victim.r); err != nil || len(b) != 0 {
		t.Errorf("timed-out blocked client whose code panicked read %q, %v; want EOF", b, err)
	}

	// CLIENT UNBLOCK, pipelined between other commands.
	victim = dialRaw(t, addr)
	id := strings.TrimSuffix(strings.TrimPrefix(victim.do("CLIENT", "ID"), ":"), "\r\n")
	victim.send("TEST-BPOP-BOOM", "k3", "0")
	waitBlocked(t, other, 1)
	other.send("PING")
	other.send("CLIENT", "UNBLOCK", id)
	other.send("PING")
	for _, want := range []string{"+PONG\r\n", ":1\r\n", "+PONG\r\n"} {
		if got := other.read(); got != want {
			t.Fatalf("the unblocking client read %q; want %q", got, want)
		}
	}
	if b, err := io.ReadAll(victim.r); err != nil || len(b) != 0 {
		t.Errorf("unblocked client whose code panicked read %q, %v; want EOF", b, err)
	}
	waitBlocked(t, other, 0)
	if got := other.do("LLEN", "k"); got != ":1\r\n" {
		t.Errorf("LLEN k = %q; want 1 (the element the panicking code did not take)", got)
	}
}

// TestMoreThanAMillionArguments: a request of more than 1024*1024
// arguments is served, as Redis 7.0 serves one (it refuses only a count
// past INT_MAX); the same SADD gets the same reply from Redis when it is
// installed.
func TestMoreThanAMillionArguments(t *testing.T) {
	_, addr := startServer(t, Config{})
	const n = 1<<20 + 1
	args := make([]string, 0, n+2)
	args = append(args, "SADD", "big")
	for i := range n {
		args = append(args, strconv.Itoa(i))
	}
	want := ":" + strconv.Itoa(n) + "\r\n"
	for i, a := range []string{addr, redisServer(t)} {
		if got := dialRaw(t, a).do(args...); got != want {
			t.Errorf("SADD of %d members on %s = %q; want %q", n, []string{"evkv", "Redis"}[i], got, want)
		}
	}
}

// TestBigCommandKeepsNoArguments checks that once a request of many
// arguments is served, its connection keeps neither the slice of its
// arguments nor, through them, the buffer the request arrived in.
func TestBigCommandKeepsNoArguments(t *testing.T) {
	_, addr := startServer(t, Config{})
	rc := dialRaw(t, addr)
	const n = 300000
	args := make([]string, 0, n+2)
	args = append(args, "RPUSH", "big")
	for range n {
		args = append(args, "x")
	}
	before := liveHeap()
	if got := rc.do(args...); got != ":300000\r\n" {
		t.Fatalf("RPUSH of %d items: %q", n, got)
	}
	args = nil
	if got := rc.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING: %q", got)
	}
	// The list itself takes about 3 bytes an item; the arguments' slice
	// 24 bytes each and the request 7.
	if grown := int64(liveHeap()) - int64(before); grown > 8*n {
		t.Errorf("after RPUSH of %d items the heap grew by %d bytes (%d an item); want the list's alone, under %d",
			n, grown, grown/n, 8*n)
	}
}

// TestCommandWithoutArguments: a bare COMMAND, as go-redis's Command and
// cluster clients send it, is the container's own command, as Redis's
// lookupCommand takes it when no subcommand follows: Redis 7.0 replies
// with an entry for every command (COMMAND COUNT of them), inside MULTI
// too.
func TestCommandWithoutArguments(t *testing.T) {
	_, addr := startServer(t, Config{})
	info, err := goRedis(t, addr).Command(context.Background()).Result()
	if err != nil {
		t.Fatalf("COMMAND: %v", err)
	}
	if info["get"] == nil || info["config"] == nil {
		t.Errorf("COMMAND has no entry for get or config: %d entries", len(info))
	}
	rc := dialRaw(t, addr)
	count := rc.do("COMMAND", "COUNT")
	rc.send("MULTI")
	rc.send("COMMAND")
	for _, want := range []string{"+OK\r\n", "+QUEUED\r\n"} {
		if got := rc.read(); got != want {
			t.Fatalf("MULTI, COMMAND: read %q; want %q", got, want)
		}
	}
	v, _, err := resp.Parse([]byte(rc.do("EXEC")))
	if err != nil || len(v.Elems) != 1 || ":"+strconv.Itoa(len(v.Elems[0].Elems))+"\r\n" != count {
		t.Errorf("EXEC of COMMAND = %d replies, %v; want one of COMMAND COUNT (%q) entries", len(v.Elems), err, count)
	}
}

// TestBulkTrailingBytesSkipped: the two bytes after a bulk string's data
// are skipped unread, as Redis's processMultibulkBuffer skips them, so
// that "*1\r\n$4\r\nPINGxx" is a PING. Each input, then a PING, gets the
// same replies as from Redis when it is installed.
func TestBulkTrailingBytesSkipped(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	for _, tc := range []struct {
		name, in string
		replies  int
	}{
		{"not crlf", "*1\r\n$4\r\nPINGxx", 1},
		{"lf lf", "*1\r\n$4\r\nPING\n\n", 1},
		{"arguments", "*2\r\n$4\r\nECHO\r\n$3\r\nabc\n\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nvxy", 2},
		{"longer than its length", "*1\r\n$3\r\nPING\r\n", 1}, // PIN, then an empty inline line
		{"count cr x", "*1\rx$4\r\nPING\r\n", 1},
		{"bulk length cr cr", "*2\r\n$4\r\rECHO\r\n$2\r\nhi\r\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [2]string
			for i, a := range []string{addr, raddr} {
				rc := dialRaw(t, a)
				if _, err := rc.c.Write([]byte(tc.in + "*1\r\n$4\r\nPING\r\n")); err != nil {
					t.Fatal(err)
				}
				for range tc.replies + 1 {
					got[i] += rc.read()
				}
			}
			if got[0] != got[1] || !strings.HasSuffix(got[0], "+PONG\r\n") {
				t.Errorf("%q: evkv replied %q; Redis %q", tc.in, got[0], got[1])
			}
		})
	}
}
