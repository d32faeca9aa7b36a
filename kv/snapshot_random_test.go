package kv

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// interleavedKeys is how many keys the interleaving tests fill each
// database with (fillForBgsave's) and write, interleavedWrites how many
// commands a seed sends.
const (
	interleavedKeys   = 60
	interleavedWrites = 300
)

// interleavedWrite returns a random command of the interleaving tests:
// writes of every kind, with lazy expiry, renames and moves onto keys
// that exist or not, databases swapped (one time in swapOneIn) and
// flushed; and, for runInterleaved, "BLOCK" (a blocked client served),
// "EVICT" (keys evicted under maxmemory) and "MULTI" (a transaction).
func interleavedWrite(rng *rand.Rand, payload string, swapOneIn int) []string {
	key := func() string { return "k" + strconv.Itoa(rng.IntN(interleavedKeys)) }
	db := func() string { return strconv.Itoa(rng.IntN(bgsaveDBs)) }
	k, k2 := key(), key()
	switch rng.IntN(64) {
	case 0:
		return []string{"SELECT", db()}
	case 1:
		return []string{"SET", k, "new"}
	case 2:
		return []string{"APPEND", k, strings.Repeat("x", rng.IntN(100))}
	case 3:
		return []string{"INCR", k}
	case 4:
		return []string{"SETRANGE", k, strconv.Itoa(rng.IntN(100)), "zz"}
	case 5:
		return []string{"GETDEL", k}
	case 6:
		return []string{"GETEX", k, "PX", "100000"}
	case 7:
		return []string{"DEL", k, k2, key(), key()}
	case 8:
		return []string{"UNLINK", k, k2}
	case 9:
		return []string{"PEXPIRE", k, strconv.Itoa(1 + rng.IntN(3))}
	case 10:
		return []string{"PERSIST", k}
	case 11:
		return []string{"RENAME", k, k2}
	case 12:
		return []string{"RENAMENX", k, k2}
	case 13:
		return []string{"MOVE", k, db()}
	case 14:
		return []string{"COPY", k, k2, "DB", db(), "REPLACE"}
	case 15:
		return []string{"RESTORE", k, "0", payload, "REPLACE"}
	case 16:
		return []string{"LPUSH", k, "p"}
	case 17:
		return []string{"RPOP", k}
	case 18:
		return []string{"LMOVE", k, k2, "LEFT", "RIGHT"}
	case 19:
		return []string{"LTRIM", k, "1", "-1"}
	case 20:
		return []string{"HSET", k, "f" + strconv.Itoa(rng.IntN(200)), "new"} // grows past a listpack
	case 21:
		return []string{"HDEL", k, "f", "g"}
	case 22:
		return []string{"HINCRBY", k, "n", "1"}
	case 23:
		return []string{"SADD", k, "new" + strconv.Itoa(rng.IntN(200))} // no longer an intset
	case 24:
		return []string{"SREM", k, "1"}
	case 25:
		return []string{"SPOP", k}
	case 26:
		return []string{"SMOVE", k, k2, "2"}
	case 27:
		return []string{"ZADD", k, "5", "new" + strconv.Itoa(rng.IntN(200))}
	case 28:
		return []string{"ZINCRBY", k, "1", "a"}
	case 29:
		return []string{"ZPOPMIN", k}
	case 30:
		return []string{"SUNIONSTORE", k, k2, key()}
	case 31:
		return []string{"ZUNIONSTORE", k, "2", k2, key()}
	case 32:
		return []string{"SORT", k2, "ALPHA", "STORE", k}
	case 33:
		return []string{"PFADD", k, "new"}
	case 34:
		return []string{"PFCOUNT", k}
	case 35:
		return []string{"PFMERGE", k, k2}
	case 36:
		return []string{"SETBIT", k, "100", "1"}
	case 37:
		return []string{"BITOP", "OR", k, k2, key()}
	case 38:
		return []string{"MSET", k, "m1", k2, "m2"}
	case 39:
		return []string{"INCRBYFLOAT", k, "1.5"}
	case 40:
		return []string{"LINSERT", k, "BEFORE", "a", "ins"}
	case 41:
		return []string{"EXPIREAT", k, "1"} // in the past: deleted
	case 42:
		return []string{"BITFIELD", k, "SET", "u8", "0", "7"}
	case 43:
		return []string{"LPOP", k, "2"}
	case 44:
		return []string{"ZRANGESTORE", k, k2, "0", "-1"}
	case 45:
		return []string{"GEOADD", k, "13.36", "38.11", "m"}
	case 46:
		if rng.IntN(swapOneIn) == 0 {
			return []string{"SWAPDB", db(), db()}
		}
		return []string{"BLOCK", k, k2, strconv.Itoa(rng.IntN(3))}
	case 47:
		return []string{"SET", k, "sw", "PX", strconv.Itoa(1 + rng.IntN(3))}
	case 48:
		return []string{"SINTERSTORE", k, k2, key()}
	case 49:
		if rng.IntN(8) == 0 {
			return []string{"FLUSHDB"}
		}
		return []string{"GET", k}
	case 50:
		return []string{"SET", "n" + strconv.Itoa(rng.IntN(1000)), "added"}
	case 51:
		return []string{"RPUSH", k, "a", "b", strings.Repeat("y", rng.IntN(80))}
	case 52:
		return []string{"DEBUG", "SLEEP", "0.002"} // TTLs pass
	case 53:
		return []string{"EXISTS", k, k2}
	case 54:
		return []string{"GEORADIUS", k2, "13.36", "38.11", "100", "km", "STORE", k}
	case 55:
		return []string{"LMPOP", "2", k, k2, "LEFT"}
	case 56:
		return []string{"ZMPOP", "2", k, k2, "MIN"}
	case 57:
		return []string{"PSETEX", k, "2", "ex"}
	case 58:
		return []string{"MSETNX", k, "a", k2, "b"}
	case 59:
		return []string{"SET", k, "kept", "KEEPTTL"}
	case 60:
		if rng.IntN(4) == 0 {
			return []string{"EVICT", []string{"allkeys-random", "volatile-ttl", "allkeys-lru", "volatile-random"}[rng.IntN(4)]}
		}
		return []string{"MULTI"}
	case 61:
		return []string{"MULTI"}
	default:
		return []string{"RANDOMKEY"}
	}
}

// runInterleaved runs cmd, from interleavedWrite, on rc; blocker is the
// client a "BLOCK" blocks.
func runInterleaved(t *testing.T, rc, blocker *rawConn, cmd []string, rng *rand.Rand, payload string) {
	t.Helper()
	switch cmd[0] {
	case "MULTI":
		cmds := [][]string{{"MULTI"}}
		for range 1 + rng.IntN(5) {
			if c := interleavedWrite(rng, payload, 1); c[0] != "MULTI" && c[0] != "EVICT" && c[0] != "BLOCK" {
				cmds = append(cmds, c)
			}
		}
		cmds = append(cmds, []string{"EXEC"})
		rc.sendTogether(cmds...)
		for range cmds {
			rc.read()
		}
	case "BLOCK":
		k, k2 := cmd[1], cmd[2]
		db := strconv.Itoa(rng.IntN(bgsaveDBs))
		blocker.do("SELECT", db)
		rc.do("SELECT", db)
		rc.do("DEL", k)
		switch cmd[3] {
		case "0":
			blocker.send("BLMOVE", k, k2, "LEFT", "RIGHT", "0")
			waitBlocked(t, rc, 1)
			rc.do("LPUSH", k, "b1", "b2")
		case "1":
			blocker.send("BZPOPMIN", k, "0")
			waitBlocked(t, rc, 1)
			rc.do("ZADD", k, "1", "z1", "2", "z2")
		default:
			blocker.send("BLPOP", k, "0")
			waitBlocked(t, rc, 1)
			rc.do("RPUSH", k, "p1")
		}
		blocker.read()
	case "EVICT":
		rc.do("CONFIG", "SET", "maxmemory-policy", cmd[1])
		rc.do("CONFIG", "SET", "maxmemory", "1")
		rc.do("SET", "x", "y")
		rc.do("CONFIG", "SET", "maxmemory", "0")
	default:
		rc.do(cmd...)
	}
}

// interleave sends interleavedWrites random commands to rc, calling step
// (a step of a walk) between them, one time in eight.
func interleave(t *testing.T, rc, blocker *rawConn, rng *rand.Rand, payload string, swapOneIn int, step func()) {
	t.Helper()
	for range interleavedWrites {
		if rng.IntN(8) == 0 {
			step()
			continue
		}
		runInterleaved(t, rc, blocker, interleavedWrite(rng, payload, swapOneIn), rng, payload)
	}
}

// listPayload returns the DUMP payload of a list, for RESTORE.
func listPayload(t *testing.T, rc *rawConn) string {
	t.Helper()
	rc.do("RPUSH", "payload", "a", "b")
	p := string(parseReply(t, rc.do("DUMP", "payload")).Str)
	rc.do("DEL", "payload")
	return p
}

// TestBgsaveInterleaved: a background save whose walk takes a key or
// three at a time, between random writes of every kind (those of
// TestBgsavePointInTime, lazy and active expiry, blocked clients served,
// eviction, transactions, databases swapped and flushed), writes the
// keyspace as it was when the save started, and nothing changed is
// missed. The writes and the walk's steps alternate in an order the seed
// fixes.
func TestBgsaveInterleaved(t *testing.T) {
	for seed := range 8 {
		t.Run(strconv.Itoa(seed), func(t *testing.T) {
			walkBy(t, 1+seed%3, time.Hour)
			rng := rand.New(rand.NewPCG(uint64(seed), 3))
			dir := t.TempDir()
			s, addr := startServer(t, Config{Dir: dir, Databases: bgsaveDBs, Settings: map[string]string{"enable-debug-command": "yes"}})
			rc, blocker := dialRaw(t, addr), dialRaw(t, addr)
			payload := listPayload(t, rc)
			fillForBgsave(t, rc, interleavedKeys*bgsaveDBs)
			want := startCaptured(t, s)
			interleave(t, rc, blocker, rng, payload, 1, func() {
				onLoop(s, func() {
					if s.bg != nil {
						s.bg.step()
					}
				})
			})
			resumeWalk(s)
			savedAsStarted(t, s, rc, dir, want)
		})
	}
}

// valueKeyspace is captureKeyspace by value, whatever the encoding (a
// sorted set that grew past a listpack and shrank again is one when
// replayed): type and contents, fields and members sorted.
func valueKeyspace(s *Server) map[string]keyState {
	out := map[string]keyState{}
	for _, d := range s.dbs {
		for i := range d.keys.len() {
			k, e := d.keys.at(i)
			var v string
			switch o := e.obj.(type) {
			case nil, *strBuf:
				v = fmt.Sprintf("string %q", e.str)
			case *list:
				var items []string
				for it := range o.items(0, o.len()-1) {
					items = append(items, string(it))
				}
				v = fmt.Sprintf("list %q", items)
			case *hash:
				var items []string
				for f, x := range o.all() {
					items = append(items, string(f)+"="+string(x))
				}
				slices.Sort(items)
				v = fmt.Sprintf("hash %q", items)
			case *set:
				items := o.list()
				slices.Sort(items)
				v = fmt.Sprintf("set %q", items)
			case *zset:
				v = fmt.Sprintf("zset %v", o.rankRange(0, -1, false))
			}
			out[fmt.Sprintf("%d/%s", d.id, k)] = keyState{v, e.exp}
		}
	}
	return out
}

// stallRewrite makes a rewrite's walk stop after its first batch keys
// until the test steps it (rewrite.step), until the test ends.
func stallRewrite(t *testing.T, batch int) {
	slice, b, p := rewriteSlice, rewriteBatch, rewritePause
	rewriteSlice, rewriteBatch, rewritePause = 0, batch, time.Hour
	t.Cleanup(func() { rewriteSlice, rewriteBatch, rewritePause = slice, b, p })
}

// unexpired returns the keys of ks whose time is after now: a rewrite
// leaves out the keys whose time has passed.
func unexpired(ks map[string]keyState, now int64) map[string]keyState {
	out := map[string]keyState{}
	for k, v := range ks {
		if v.exp == 0 || v.exp > now {
			out[k] = v
		}
	}
	return out
}

// TestRewriteInterleaved: a rewrite of the log whose walk takes a key or
// three at a time, between the random writes of TestBgsaveInterleaved,
// makes a file whose replay is the keyspace as it is when the rewrite
// ends, the keys whose time has passed aside.
func TestRewriteInterleaved(t *testing.T) {
	for seed := range 8 {
		t.Run(strconv.Itoa(seed), func(t *testing.T) {
			stallRewrite(t, 1+seed%3)
			rng := rand.New(rand.NewPCG(uint64(seed), 3))
			s, addr := startServer(t, Config{Dir: t.TempDir(), AppendOnly: true, Databases: bgsaveDBs, Settings: map[string]string{"enable-debug-command": "yes"}})
			rc, blocker := dialRaw(t, addr), dialRaw(t, addr)
			payload := listPayload(t, rc)
			fillForBgsave(t, rc, interleavedKeys*bgsaveDBs)
			if got := rc.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
				t.Fatalf("BGREWRITEAOF = %q", got)
			}
			// SWAPDB starts the rewrite again: seldom, so that most of
			// the writes meet the walk of the one that ends.
			interleave(t, rc, blocker, rng, payload, 20, func() {
				onLoop(s, func() {
					if s.aof.rw != nil {
						s.aof.rw.step()
					}
				})
			})
			// The walk is taken to its end at once, and the file copied
			// then, with the keyspace it is to replay to.
			var want map[string]keyState
			var now int64
			replayDir := t.TempDir()
			for deadline := time.Now().Add(20 * time.Second); want == nil; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the rewrite does not end")
				}
				onLoop(s, func() {
					for s.aof.rw != nil {
						s.aof.rw.step()
					}
					if s.stats.aofRewrites == 0 {
						return // started again, by a SWAPDB: the new one starts next
					}
					now, want = s.now(), valueKeyspace(s)
					b, err := os.ReadFile(s.aof.path)
					if err == nil {
						err = os.WriteFile(filepath.Join(replayDir, "appendonly.aof"), b, 0o644)
					}
					if err != nil {
						t.Error(err)
					}
				})
			}
			replayed, _ := startServer(t, Config{Dir: replayDir, AppendOnly: true, Databases: bgsaveDBs})
			var got map[string]keyState
			onLoop(replayed, func() { got = valueKeyspace(replayed) })
			compareKeyspaces(t, unexpired(got, now), unexpired(want, now))
		})
	}
}

// A rewrite that SWAPDB starts again (see rewrite.restart) counts as
// running until the new one starts: a BGSAVE in the same batch is refused
// with Redis's reply for a save while its rewriting child runs, where it
// started between the two and a save and a rewrite ran at once.
func TestBgsaveRefusedWhileRewriteRestarts(t *testing.T) {
	stallRewrite(t, 1)
	_, addr := startServer(t, Config{Dir: t.TempDir(), AppendOnly: true})
	rc := dialRaw(t, addr)
	for i := range 10 {
		rc.do("SET", "k"+strconv.Itoa(i), "v")
	}
	if got := rc.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
		t.Fatalf("BGREWRITEAOF = %q", got)
	}
	rc.sendTogether([]string{"SWAPDB", "0", "1"}, []string{"BGSAVE"}, []string{"INFO", "persistence"})
	if got := rc.read(); got != "+OK\r\n" {
		t.Fatalf("SWAPDB = %q", got)
	}
	if got, want := rc.read(), "-ERR "+errChildActive.Error()+"\r\n"; got != want {
		t.Errorf("BGSAVE while the rewrite starts again = %q; want %q", got, want)
	}
	info := rc.read()
	for _, f := range []string{"rdb_bgsave_in_progress:0", "aof_rewrite_in_progress:1"} {
		if !strings.Contains(info, "\r\n"+f+"\r\n") {
			t.Errorf("INFO persistence in the same batch lacks %s: %q", f, info)
		}
	}
}
