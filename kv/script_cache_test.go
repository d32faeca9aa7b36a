package kv

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// scriptSHA is the digest EVALSHA takes for body.
func scriptSHA(body string) string {
	sum := sha1.Sum([]byte(body))
	return hex.EncodeToString(sum[:])
}

// returnScript is the script that returns i, the body a client makes
// when it writes its values into the script.
func returnScript(i int) string { return "return " + strconv.Itoa(i) }

// evalReturns runs EVAL of returnScript(i) for i from lo to hi-1.
func evalReturns(c *rawConn, lo, hi int) {
	c.t.Helper()
	c.doMany(hi-lo, func(i int) []string { return []string{"EVAL", returnScript(lo + i), "0"} })
}

// scriptCache returns INFO's number_of_cached_scripts, evicted_scripts
// (-1 if INFO has none) and used_memory_scripts_eval, and checks that
// MEMORY STATS's lua.caches is the last.
func scriptCache(t *testing.T, c *rawConn) (cached, evicted, mem int64) {
	t.Helper()
	info := c.do("INFO", "memory")
	cached = infoInt(t, info, "number_of_cached_scripts")
	mem = infoInt(t, info, "used_memory_scripts_eval")
	evicted = -1
	if v := infoField(c.do("INFO", "stats"), "evicted_scripts"); v != "" {
		evicted, _ = strconv.ParseInt(v, 10, 64)
	}
	if stats := c.do("MEMORY", "STATS"); !strings.Contains(stats, "lua.caches\r\n:"+strconv.FormatInt(mem, 10)+"\r\n") {
		t.Errorf("MEMORY STATS %q; want lua.caches %d, as used_memory_scripts_eval", stats, mem)
	}
	return cached, evicted, mem
}

// cachedBytes is the memory the cache counts for the scripts bodies: each
// one's body and digest.
func cachedBytes(bodies ...string) int64 {
	var n int64
	for _, b := range bodies {
		n += int64(len(b) + 40)
	}
	return n
}

const noScript = "-NOSCRIPT No matching script. Please use EVAL.\r\n"

// TestEvalScriptCacheBounded: a client that writes its values into its
// scripts makes a new script at each EVAL; the cache keeps the 500 used
// last of those, as Redis 7.4 does, the others evicted and counted,
// their memory given back, their digests unknown to EVALSHA.
func TestEvalScriptCacheBounded(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dialRaw(t, addr)
	evalReturns(c, 0, 1000)
	cached, evicted, mem := scriptCache(t, c)
	var kept []string
	for i := 500; i < 1000; i++ {
		kept = append(kept, returnScript(i))
	}
	if cached != 500 || evicted != 500 || mem != cachedBytes(kept...) {
		t.Errorf("after 1,000 scripts: %d cached, %d evicted, %d bytes; want 500, 500, %d", cached, evicted, mem, cachedBytes(kept...))
	}
	for _, i := range []int{0, 1, 499} {
		if got := c.do("EVALSHA", scriptSHA(returnScript(i)), "0"); got != noScript {
			t.Errorf("EVALSHA of evicted script %d: %q; want NOSCRIPT", i, got)
		}
		if got := c.do("EVALSHA_RO", strings.ToUpper(scriptSHA(returnScript(i))), "0"); got != noScript {
			t.Errorf("EVALSHA_RO of evicted script %d: %q; want NOSCRIPT", i, got)
		}
	}
	for _, i := range []int{500, 999} {
		if got, want := c.do("EVALSHA", scriptSHA(returnScript(i)), "0"), ":"+strconv.Itoa(i)+"\r\n"; got != want {
			t.Errorf("EVALSHA of kept script %d: %q; want %q", i, got, want)
		}
	}
	if got := c.do("SCRIPT", "EXISTS", scriptSHA(returnScript(0)), scriptSHA(returnScript(999))); got != "*2\r\n:0\r\n:1\r\n" {
		t.Errorf("SCRIPT EXISTS of an evicted and a kept script: %q", got)
	}
	// A script evicted is loaded again by EVAL, evicting the one used
	// least recently (500: 999 and 500 were run since).
	if got := c.do("EVAL", returnScript(0), "0"); got != ":0\r\n" {
		t.Errorf("EVAL of an evicted script: %q", got)
	}
	if got := c.do("SCRIPT", "EXISTS", scriptSHA(returnScript(0)), scriptSHA(returnScript(500)), scriptSHA(returnScript(501))); got != "*3\r\n:1\r\n:1\r\n:0\r\n" {
		t.Errorf("SCRIPT EXISTS of 0, 500, 501 after EVAL of 0: %q; want 1, 1, 0", got)
	}
	if cached, evicted, _ := scriptCache(t, c); cached != 500 || evicted != 501 {
		t.Errorf("after loading an evicted script again: %d cached, %d evicted; want 500, 501", cached, evicted)
	}
}

// TestEvalScriptCacheLRU: EVAL and EVALSHA of a script EVAL loaded make
// it the one used last, and the script evicted is the one used least
// recently, as Redis 7.4's "Lua scripts eviction is plain LRU".
func TestEvalScriptCacheLRU(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dialRaw(t, addr)
	const writer = "#!lua\nreturn 'w'"
	c.do("EVAL", writer, "0")
	evalReturns(c, 1, 500)
	c.do("EVAL", returnScript(1), "0")
	c.do("EVALSHA", scriptSHA(returnScript(2)), "0")
	c.do("EVAL_RO", returnScript(3), "0")
	c.do("EVALSHA_RO", strings.ToUpper(scriptSHA(returnScript(4))), "0")
	// A run refused does not use the script, as in Redis.
	if got := c.do("EVAL_RO", writer, "0"); !strings.HasPrefix(got, "-ERR Can not execute a script with write flag") {
		t.Fatalf("EVAL_RO of a writing script: %q", got)
	}
	c.do("EVAL", returnScript(1000), "0")
	c.do("EVAL", returnScript(1001), "0")
	if _, evicted, _ := scriptCache(t, c); evicted != 2 {
		t.Errorf("evicted_scripts %d; want 2 (the writing script and 5)", evicted)
	}
	if got := c.do("EVALSHA", scriptSHA(writer), "0"); got != noScript {
		t.Errorf("EVALSHA of the writing script: %q; want NOSCRIPT", got)
	}
	for i, want := range map[int]string{1: ":1\r\n", 2: ":2\r\n", 3: ":3\r\n", 4: ":4\r\n", 5: noScript, 6: ":6\r\n", 1000: ":1000\r\n", 1001: ":1001\r\n"} {
		if got := c.do("EVALSHA", scriptSHA(returnScript(i)), "0"); got != want {
			t.Errorf("EVALSHA of script %d: %q; want %q", i, got, want)
		}
	}

	// The script found last by EVAL or EVALSHA, once evicted, is not
	// found: EVALSHA answers NOSCRIPT, and EVAL loads it again.
	c.do("SCRIPT", "FLUSH")
	const last = "return 'last'"
	c.do("EVAL", last, "0")
	c.do("EVAL", last, "0")
	c.do("EVALSHA", scriptSHA(last), "0")
	evalReturns(c, 0, 500)
	if got := c.do("EVALSHA", scriptSHA(last), "0"); got != noScript {
		t.Errorf("EVALSHA of the last script found, evicted: %q; want NOSCRIPT", got)
	}
	if got := c.do("EVAL", last, "0"); got != "$4\r\nlast\r\n" {
		t.Errorf("EVAL of the last script found, evicted: %q", got)
	}
	if got := c.do("SCRIPT", "EXISTS", scriptSHA(last)); got != "*1\r\n:1\r\n" {
		t.Errorf("SCRIPT EXISTS of the script EVAL loaded again: %q; want it cached", got)
	}
	var kept []string
	for i := 1; i < 500; i++ {
		kept = append(kept, returnScript(i))
	}
	if cached, evicted, mem := scriptCache(t, c); cached != 500 || evicted != 4 || mem != cachedBytes(append(kept, last)...) {
		t.Errorf("%d cached, %d evicted, %d bytes; want 500, 4, %d", cached, evicted, mem, cachedBytes(append(kept, last)...))
	}

	// No script can load one while it runs: EVAL and SCRIPT are refused
	// to scripts, so the script running is never the one evicted.
	for _, call := range []string{"redis.pcall('script', 'load', 'return 1')", "redis.pcall('eval', 'return 1', 0)"} {
		if got := c.do("EVAL", "return "+call, "0"); !strings.Contains(got, "not allowed from script") {
			t.Errorf("%s: %q; want it refused", call, got)
		}
	}
}

// TestEvalScriptCacheScriptLoad: the scripts SCRIPT LOAD loads stay, and
// are not counted against EVAL's 500; SCRIPT LOAD of a script EVAL loaded
// keeps it for good; CONFIG RESETSTAT sets evicted_scripts to 0 and
// SCRIPT FLUSH empties the list.
func TestEvalScriptCacheScriptLoad(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dialRaw(t, addr)
	c.doMany(1200, func(i int) []string {
		if i%2 == 0 {
			return []string{"SCRIPT", "LOAD", returnScript(i)}
		}
		return []string{"EVAL", returnScript(i), "0"}
	})
	if cached, evicted, _ := scriptCache(t, c); cached != 1100 || evicted != 100 {
		t.Errorf("600 scripts loaded, 600 EVAL: %d cached, %d evicted; want 1100, 100", cached, evicted)
	}
	if got := c.do("EVALSHA", scriptSHA(returnScript(0)), "0"); got != ":0\r\n" {
		t.Errorf("EVALSHA of the first script SCRIPT LOAD loaded: %q", got)
	}

	if got := c.do("CONFIG", "RESETSTAT"); got != "+OK\r\n" {
		t.Fatalf("CONFIG RESETSTAT: %q", got)
	}
	if _, evicted, _ := scriptCache(t, c); evicted != 0 {
		t.Errorf("evicted_scripts %d after CONFIG RESETSTAT; want 0", evicted)
	}

	c.do("SCRIPT", "FLUSH")
	if cached, _, mem := scriptCache(t, c); cached != 0 || mem != 0 {
		t.Errorf("after SCRIPT FLUSH: %d cached, %d bytes; want none", cached, mem)
	}
	const kept = "return 'kept'"
	c.do("EVAL", kept, "0")
	if got := c.do("SCRIPT", "LOAD", kept); got != "$40\r\n"+scriptSHA(kept)+"\r\n" {
		t.Fatalf("SCRIPT LOAD of a script EVAL loaded: %q", got)
	}
	c.do("EVALSHA", scriptSHA(kept), "0")
	evalReturns(c, 0, 500)
	bodies := []string{kept}
	for i := 0; i < 500; i++ {
		bodies = append(bodies, returnScript(i))
	}
	if cached, evicted, mem := scriptCache(t, c); cached != 501 || evicted != 0 || mem != cachedBytes(bodies...) {
		t.Errorf("a script made permanent and 500 EVAL: %d cached, %d evicted, %d bytes; want 501, 0, %d", cached, evicted, mem, cachedBytes(bodies...))
	}
	evalReturns(c, 500, 1000)
	if got := c.do("EVALSHA", scriptSHA(kept), "0"); got != "$4\r\nkept\r\n" {
		t.Errorf("EVALSHA of the script SCRIPT LOAD made permanent, after 1,000 EVAL: %q", got)
	}
	if cached, evicted, _ := scriptCache(t, c); cached != 501 || evicted != 500 {
		t.Errorf("%d cached, %d evicted; want 501, 500", cached, evicted)
	}
}

// TestEvalScriptCacheGoRedis: go-redis's Script.Run, by EVALSHA, falls
// back to EVAL when its script was evicted, and gets its result.
func TestEvalScriptCacheGoRedis(t *testing.T) {
	c, ctx := serverAndClient(t)
	incr := redis.NewScript("return redis.call('INCR', KEYS[1])")
	if n, err := incr.Run(ctx, c, []string{"ctr"}).Int(); n != 1 || err != nil {
		t.Fatalf("first Run = %d, %v; want 1", n, err)
	}
	pipe := c.Pipeline()
	for i := 0; i < 500; i++ {
		pipe.Eval(ctx, returnScript(i), nil)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("500 EVAL: %v", err)
	}
	if exists, err := incr.Exists(ctx, c).Result(); err != nil || len(exists) != 1 || exists[0] {
		t.Fatalf("SCRIPT EXISTS = %v, %v; want the script evicted", exists, err)
	}
	if err := incr.EvalSha(ctx, c, []string{"ctr"}).Err(); !redis.HasErrorPrefix(err, "NOSCRIPT") {
		t.Fatalf("EvalSha of the evicted script = %v; want NOSCRIPT", err)
	}
	if n, err := incr.Run(ctx, c, []string{"ctr"}).Int(); n != 2 || err != nil {
		t.Fatalf("Run after the eviction = %d, %v; want 2", n, err)
	}
	if exists, err := incr.Exists(ctx, c).Result(); err != nil || len(exists) != 1 || !exists[0] {
		t.Fatalf("SCRIPT EXISTS = %v, %v; want it cached again by the EVAL fallback", exists, err)
	}
	if n, err := incr.Run(ctx, c, []string{"ctr"}).Int(); n != 3 || err != nil {
		t.Fatalf("third Run = %d, %v; want 3", n, err)
	}
	// The script, then "return 0" to make room for it again.
	if v := infoField(c.Info(ctx, "stats").Val(), "evicted_scripts"); v != "2" {
		t.Errorf("evicted_scripts %s; want 2", v)
	}
}

// TestScriptListUsed: moving a script to the most recently used end, as
// each EVAL and EVALSHA of one EVAL loaded does, takes no allocation, and
// the list stays linked both ways.
func TestScriptListUsed(t *testing.T) {
	var l scriptList
	a, b, c, loaded := &script{sha: "a"}, &script{sha: "b"}, &script{sha: "c"}, &script{sha: "loaded"}
	for _, sc := range []*script{a, b, c} {
		l.pushBack(sc)
	}
	order := func() string {
		var fwd, back []string
		for sc := l.head; sc != nil; sc = sc.next {
			fwd = append(fwd, sc.sha)
		}
		for sc := l.tail; sc != nil; sc = sc.prev {
			back = append([]string{sc.sha}, back...)
		}
		if strings.Join(fwd, "") != strings.Join(back, "") || len(fwd) != l.n {
			t.Fatalf("list forward %v, backward %v, n %d", fwd, back, l.n)
		}
		return strings.Join(fwd, "")
	}
	if allocs := testing.AllocsPerRun(100, func() { l.used(a); l.used(b); l.used(c); l.used(loaded) }); allocs != 0 {
		t.Errorf("used: %v allocations; want none", allocs)
	}
	if got := order(); got != "abc" {
		t.Errorf("after using a, b, c: %q", got)
	}
	l.used(b)
	l.used(b)
	if got := order(); got != "acb" {
		t.Errorf("after using b: %q", got)
	}
	l.remove(a)
	l.remove(b)
	if got := order(); got != "c" || a.evictable || b.evictable || !c.evictable {
		t.Errorf("after removing a and b: %q", got)
	}
	l.used(a) // not on the list: left off it
	l.remove(c)
	if got := order(); got != "" || l.head != nil || l.tail != nil {
		t.Errorf("after removing all: %q", got)
	}
}
