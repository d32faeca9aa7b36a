package kv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/redis/go-redis/v9"
)

// evalCases are scripts whose replies evkv gives as Redis 7.0.15 gives
// them, run with one key ("key1") and one argument ("arg1").
var evalCases = []string{
	// Globals: reading one not set, setting one, the protected tables.
	"return x", "x = 1", "return nosuch()", "return _G.x", "return rawget(_G,'x')", "rawset(_G,'x',1)",
	"redis.call = nil", "string.x = 1", "math.pi = 3", "setmetatable(_G, {})", "getmetatable('').__index = nil",
	"getmetatable('').__index.upper = nil", "return ('x'):upper()", "return type(getmetatable(''))",
	"return type(print)", "return type(loadstring)", "return type(os)", "return type(io)", "return type(debug)",
	"return type(arg)", "local function f(...) return type(arg) end return f(1)", "return type(dofile)", "return type(require)", "return type(coroutine)", "return type(unpack)",
	// Errors the script raises, and how they read.
	"error('boom')", "error({err='MY thing'})", "error({err='nocode'})", "error()", "error(12)",
	"local function f() error('deep') end\nlocal x = 1\nf()",
	"return {pcall(function() error('e') end)}",
	"return pcall(function() return redis.call('nosuch') end)",
	// redis.call and redis.pcall refusing a command.
	"return redis.call('nosuch')", "return redis.call('get')", "return redis.call('incr','k','x')",
	"return redis.pcall('nosuch')", "return redis.call('subscribe','x')", "return redis.call('multi')",
	"return redis.call('blpop','nolist',0)", "return redis.call('eval','return 1', 0)", "return redis.call('client','id')",
	"return redis.call('config','get','maxmemory')", "return redis.call('set', {} , 1)", "return redis.call('set', true , 1)",
	"return redis.call()", "return redis.pcall()", "return redis.call('object','nosuch','k')",
	// Error replies of commands: raised by call, returned by pcall.
	"local a = redis.call('set','s','a'); return redis.call('incr','s')", "return redis.pcall('incr','s')",
	"local r = redis.pcall('incr','s'); return r['err']", "return redis.pcall('lpush','s','x')",
	"local ok, e = pcall(redis.call, 'incr', 's'); return {ok and 1 or 0, e['err']}",
	// The reply helpers.
	"return redis.error_reply('X y')", "return redis.error_reply('-X y')", "return redis.error_reply('nospace')",
	"return redis.status_reply('fine')", "return redis.status_reply('a\\r\\nb')", "return redis.status_reply(1)",
	"return redis.error_reply()", "return redis.sha1hex('abc')", "return redis.sha1hex('')", "return redis.sha1hex(12)",
	"return redis.sha1hex()", "return redis.setresp(4)", "return redis.setresp()",
	"return redis.log(9, 'x')", "return redis.log('x', 'y')", "return redis.log(1)",
	"return redis.set_repl(99)", "return redis.set_repl()", "redis.set_repl(redis.REPL_ALL); return 1",
	"return redis.acl_check_cmd('get','k')", "return redis.acl_check_cmd('nosuch')", "return redis.acl_check_cmd()",
	"return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}",
	"return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}",
	// Lua values as replies.
	"return {1,2,3,nil,4}", "return {1,'a',{2,3},true,false}", "return 3.99", "return -3.99", "return 0/0 > 1",
	"return {err='oops'}", "return {ok='O'}", "return {ok=1}", "return {}", "return nil", "return true", "return false",
	"return {double=1.5}", "return {big_number='123'}", "return {map={a=1}}", "return {set={a=true}}",
	"return {verbatim_string={format='txt', string='hi'}}", "return 'a\\0b'", "return 2^53", "return -2^63",
	"return {{{{{{1}}}}}}", "return KEYS[1]", "return ARGV[1]", "return #KEYS + #ARGV", "return KEYS[2]",
	"return tostring(math.huge)", "return math.huge == 1/0", "return cjson.encode({a = {1, 2.5, 'x'}})", "return cjson.decode('[1,2,{\"a\":3}]')[3].a",
	"return cmsgpack.unpack(cmsgpack.pack({1, 2, 3}))", "return bit.band(0xff, 0x0f)", "return struct.pack('>I2', 258)", "cjson.x = 1",
	"return tostring(0.1 + 0.2)", "return tostring(1e15)", "return tostring(2^53)", "return tostring(-1/0)", "return tostring(1/3)",
	// Commands and their replies through the conversions.
	"return redis.call('set','n', 0.1)", "return redis.call('get','n')", "return redis.call('set','n', 12)",
	"return redis.call('set','n', -1e300)", "return redis.call('get','n')", "return redis.call('set','n', 1/0)",
	"return redis.call('get','n')", "return redis.call('set','n', 2^63)", "return redis.call('get','n')",
	"return redis.call('del','s','n','k')", "return redis.call('rpush','l','a','b','c')", "return redis.call('lrange','l',0,-1)",
	"return redis.call('hset','h','f','v')", "return redis.call('hgetall','h')", "return redis.call('get','nokey')",
	"return redis.call('lpop','nolist')", "return redis.call('lpop','nolist', 2)", "return redis.call('ping')",
	"return redis.call('echo', 12)", "return redis.call('incrbyfloat', 'f', 1.5)", "return redis.call('zadd','z',1.5,'a')",
	"return redis.call('zscore','z','a')", "return redis.call('zrange','z',0,-1,'withscores')", "return redis.call('type','z')",
	"return redis.call('object','encoding','z')", "return redis.call('set', 'k1', 'v', 'EX', 100)", "return redis.call('ttl', 'k1')",
	"return redis.call('exists', 'k1', 'nokey', 'k1')", "return redis.call('mget', 'k1', 'nokey')",
	"return tostring(redis.call('exists','z'))", "return redis.call('hmget','h','f','nof')",
	"return redis.call('sadd','st','a'); ", "return redis.call('smembers','st')", "return redis.call('sismember','st','a')",
	"return redis.call('brpop','nolist',0)", "return redis.call('blmove','nolist','l2','left','right',0)",
	"return redis.call('info','nosuchsection')", "return redis.call('command','count') > 100",
	"return redis.call('select', 1)", "redis.call('select', 1); redis.call('set','indb1','v'); return redis.call('dbsize')",
	"return redis.call('get', 'indb1')", "return redis.call('select', 99)",
	"return redis.call('publish', 'chan', 'm')", "return redis.call('debug','sleep','0')", "return redis.call('wait','0','0')",
	// RESP3 inside the script.
	"redis.setresp(3); return redis.call('hgetall','h')", "redis.setresp(3); return redis.call('get','nokey')",
	"redis.setresp(3); return {true, false}", "return {true, false}", "redis.setresp(3); return redis.call('sismember','xx','a')",
	"redis.setresp(3); local r = redis.call('hgetall','h'); return r['map']['f']",
	"redis.setresp(3); return redis.call('zscore','z','a')", "redis.setresp(3); local r = redis.call('zscore','z','a'); return r['double']",
	"redis.setresp(3); return redis.call('smembers','st')", "redis.setresp(3); return redis.call('lpop','nolist')",
	"redis.setresp(3); return type(redis.call('get','nokey'))", "return type(redis.call('get','nokey'))",
	// The libraries Lua has.
	"return table.concat({'a','b'}, ',')", "return string.format('%5.2f', 3.14159)", "return math.floor(3.7)",
	"return select('#', 1, 2, 3)", "return unpack({1, 2})", "return tonumber('0x10')", "return string.rep('ab', 3)",
	"return ('abc'):upper()", "return string.byte('A')", "return #'hello'", "local t = {3,1,2}; table.sort(t); return t",
	"return math.max(1, 5, 3)", "return string.sub('hello', 2, 3)", "return string.find('hello', 'l')",
	"return tostring(nil)", "return tostring(true)", "return type({})",
	"local co = coroutine.create(function(a) coroutine.yield(a + 1); return 'done' end); local _, x = coroutine.resume(co, 1); local _, y = coroutine.resume(co); return {x, y}",
	"local co = coroutine.wrap(function() return redis.call('ping') end); return co()",
	"return loadstring('return 1 + 1')()",
	// The script's database is the caller's, and its own SELECT stays its own.
	"redis.call('select', 2); return redis.call('set', 'in2', 'v')", "return redis.call('get', 'in2')",
}

// TestCompatEval runs evalCases against evkv and Redis, in RESP2 and RESP3,
// and compares the replies byte for byte, then the script cache's commands.
func TestCompatEval(t *testing.T) {
	for _, proto := range []string{"2", "3"} {
		t.Run("RESP"+proto, func(t *testing.T) {
			t.Parallel()
			var cmds [][]string
			cmds = append(cmds, []string{"HELLO", proto})
			for _, src := range evalCases {
				cmds = append(cmds, []string{"EVAL", src, "1", "key1", "arg1"})
			}
			compareWithRedis(t, cmds)
		})
	}
}

// TestCompatEvalCommands compares EVAL's and EVALSHA's arguments, the
// script cache (SCRIPT LOAD, EXISTS, FLUSH), shebang flags and the
// read-only commands with Redis.
func TestCompatEvalCommands(t *testing.T) {
	const (
		body = "return {KEYS[1], ARGV[1]}"
		sha  = "4a2267357833227dd98abdedb8cf24b15a986445"
	)
	compareWithRedis(t, [][]string{
		{"EVAL"}, {"EVAL", "return 1"}, {"EVAL", "return 1", "x"}, {"EVAL", "return 1", "-1"}, {"EVAL", "return 1", "2", "a"},
		{"EVAL", "return 1", "99999999999999999999"}, {"EVAL", "return {KEYS[1], KEYS[2], ARGV[1]}", "2", "a", "b", "c"},
		{"EVALSHA", sha, "0"}, {"EVALSHA", "short", "0"}, {"EVALSHA", strings.ToUpper(sha), "0"},
		{"SCRIPT", "LOAD", body}, {"SCRIPT", "EXISTS", sha, "nosuch", strings.ToUpper(sha)},
		{"EVALSHA", sha, "1", "k", "a"}, {"EVALSHA", strings.ToUpper(sha), "1", "k", "a"}, {"EVALSHA_RO", sha, "1", "k", "a"},
		{"SCRIPT", "FLUSH", "NOSUCH"}, {"SCRIPT", "FLUSH", "SYNC", "x"}, {"SCRIPT", "FLUSH", "ASYNC"}, {"SCRIPT", "EXISTS", sha},
		{"EVALSHA", sha, "0"}, {"SCRIPT", "FLUSH"}, {"SCRIPT", "LOAD"}, {"SCRIPT", "EXISTS"},
		{"SCRIPT", "KILL"}, {"SCRIPT", "NOSUCH"}, {"SCRIPT", "HELP"}, {"SCRIPT", "DEBUG", "NO"}, {"SCRIPT", "DEBUG", "MAYBE"},
		// Shebang flags.
		{"EVAL", "#!lua\nreturn 1", "0"}, {"EVAL", "#!lua", "0"}, {"EVAL", "#!lua flags=no-writes\nreturn 1", "0"},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.call('set','k','v')", "0"}, {"EVAL", "#!lua flags=no-writes,allow-oom\nreturn 2", "0"},
		{"EVAL", "#!lua flags=nosuch\nreturn 1", "0"}, {"EVAL", "#!lua flags=\nreturn 1", "0"}, {"EVAL", "#!lua other\nreturn 1", "0"},
		{"EVAL", "#!python\nreturn 1", "0"}, {"EVAL", "#! lua\nreturn 1", "0"}, {"EVAL", "#!\nreturn 1", "0"}, {"EVAL", "#!lua \"x\nreturn 1", "0"},
		{"EVAL", "#!lua\nreturn error('line')", "0"}, {"EVAL", "#!lua flags=allow-stale,no-cluster,allow-cross-slot-keys\nreturn 3", "0"},
		// The read-only commands.
		{"EVAL_RO", "return redis.call('get','k')", "1", "k"}, {"EVAL_RO", "return redis.call('set','k','v')", "1", "k"},
		{"EVAL_RO", "return redis.pcall('del','k')", "1", "k"}, {"EVAL_RO", "return redis.call('publish','c','m')", "0"},
		{"EVAL_RO", "#!lua\nreturn 1", "0"}, {"EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"},
		{"EVAL", "return redis.call('set','k','v')", "1", "k"}, {"EVAL_RO", "return redis.call('get','k')", "1", "k"},
		// Transactions: EVAL queued and run by EXEC.
		{"MULTI"}, {"EVAL", "return redis.call('incr','ctr')", "1", "ctr"}, {"EVAL", "return redis.call('incr','ctr')", "1", "ctr"}, {"EXEC"},
		{"MULTI"}, {"EVAL", "return redis.call('nosuch')", "0"}, {"INCR", "ctr"}, {"EXEC"},
		{"GET", "ctr"},
	})
}

// evalShapes are scripts run again and again; what they do after each
// other is the test.
var evalPrograms = []struct {
	name string
	cmds [][]string
}{
	{"lock", [][]string{
		{"EVAL", "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end", "1", "lock", "token"},
		{"SET", "lock", "token", "NX", "PX", "100000"},
		{"EVAL", "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end", "1", "lock", "other"},
		{"EVAL", "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end", "1", "lock", "token"},
		{"EXISTS", "lock"},
	}},
	{"ratelimit", [][]string{
		{"EVAL", "local n = redis.call('incr', KEYS[1]); if n == 1 then redis.call('pexpire', KEYS[1], ARGV[1]) end; if n > tonumber(ARGV[2]) then return 0 end; return n", "1", "rl", "100000", "3"},
		{"EVAL", "local n = redis.call('incr', KEYS[1]); if n == 1 then redis.call('pexpire', KEYS[1], ARGV[1]) end; if n > tonumber(ARGV[2]) then return 0 end; return n", "1", "rl", "100000", "3"},
		{"EVAL", "local n = redis.call('incr', KEYS[1]); if n == 1 then redis.call('pexpire', KEYS[1], ARGV[1]) end; if n > tonumber(ARGV[2]) then return 0 end; return n", "1", "rl", "100000", "3"},
		{"EVAL", "local n = redis.call('incr', KEYS[1]); if n == 1 then redis.call('pexpire', KEYS[1], ARGV[1]) end; if n > tonumber(ARGV[2]) then return 0 end; return n", "1", "rl", "100000", "3"},
		{"EVAL", "return redis.call('pttl', KEYS[1]) > 0", "1", "rl"},
	}},
	{"queue", [][]string{
		{"RPUSH", "q", "a", "b", "c"},
		{"EVAL", "local v = redis.call('lpop', KEYS[1]); if v then redis.call('rpush', KEYS[2], v) end; return v", "2", "q", "work"},
		{"EVAL", "local v = redis.call('lpop', KEYS[1]); if v then redis.call('rpush', KEYS[2], v) end; return v", "2", "q", "work"},
		{"LRANGE", "work", "0", "-1"}, {"LRANGE", "q", "0", "-1"},
		{"EVAL", "local out = {}; for i, k in ipairs(KEYS) do out[i] = redis.call('llen', k) end; return out", "3", "q", "work", "none"},
	}},
	{"sum", [][]string{
		{"HSET", "hh", "a", "1", "b", "2", "c", "3.5"},
		{"EVAL", "local s = 0; local all = redis.call('hgetall', KEYS[1]); for i = 2, #all, 2 do s = s + tonumber(all[i]) end; return tostring(s)", "1", "hh"},
		{"EVAL", "redis.setresp(3); local s = 0; for k, v in pairs(redis.call('hgetall', KEYS[1])['map']) do s = s + tonumber(v) end; return {double = s}", "1", "hh"},
	}},
	{"random", [][]string{
		{"EVAL", "return {math.random(1000), math.random(1000), math.random(5, 9)}", "0"},
		{"EVAL", "return tostring(math.random())", "0"},
		{"EVAL", "math.randomseed(42); return {math.random(1000), math.random(1000)}", "0"},
		{"EVAL", "math.randomseed(-7); return math.random(100000)", "0"},
		{"SCRIPT", "FLUSH"},
		{"EVAL", "return math.random(1000)", "0"},
	}},
}

// TestCompatEvalPrograms runs evalPrograms against evkv and Redis, each
// on fresh servers, and compares the replies: the scripts clients use
// (a lock's release, a rate limiter, a queue's move), and math.random,
// whose sequence is Redis's.
func TestCompatEvalPrograms(t *testing.T) {
	for _, p := range evalPrograms {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			compareWithRedis(t, p.cmds)
		})
	}
}

// Where gopher-lua words Lua's own errors differently from Lua 5.1, evkv's
// replies keep Redis's form around them.
func TestEvalLuaErrors(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dialRaw(t, addr)
	for _, tc := range []struct{ src, want string }{
		{"return 1 + {}", "-ERR user_script:1: cannot perform add operation between number and table script: "},
		{"local t = nil; return t.x", "-ERR user_script:1: attempt to index a non-table object(nil) with key 'x' script: "},
		{"return +", "-ERR Error compiling script (new function): user_script line:1(column:8) near '+':   syntax error\r\n"},
		{"local function f() return f() + 1 end return f()", "-ERR Error running script 6ab18391d60e7e7bcbf4a881fd9b0c865dade0c6, lua callstack overflow\r\n"},
		{"local t = {} ; t[1] = t ; return t", strings.Repeat("*1\r\n", maxReplyDepth+1) + "-ERR reached lua stack limit\r\n"},
		{"return string.rep('x', -1)", "$0\r\n\r\n"},
	} {
		if got := c.do("EVAL", tc.src, "0"); !strings.HasPrefix(got, tc.want) {
			t.Errorf("EVAL %q = %q; want %q...", tc.src, got, tc.want)
		}
	}
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING after the errors = %q", got)
	}
}

// A script's writes reach the log as the commands it ran, in MULTI and
// EXEC when there are several, never as EVAL; the server started again
// from the log has them. redis.set_repl(redis.REPL_NONE) keeps them out.
func TestEvalAppendOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := Config{Dir: dir, AppendOnly: true, AppendFsync: "always"}
	s, addr := startServer(t, cfg)
	c := dialRaw(t, addr)
	for _, cmd := range [][]string{
		{"EVAL", "redis.call('set', KEYS[1], ARGV[1]); redis.call('rpush', KEYS[2], 'a', 'b'); return redis.call('incrby', 'n', 5)", "2", "k", "l", "v"},
		{"EVAL", "return redis.call('set', 'one', '1')", "0"},
		{"EVAL", "return redis.call('get', 'one')", "0"},
		{"EVAL", "redis.call('select', 3); return redis.call('set', 'in3', 'x')", "0"},
		{"EVAL", "redis.set_repl(redis.REPL_NONE); return redis.call('set', 'unlogged', 'x')", "0"},
		{"EVAL", "redis.call('set', 'before', 'x'); return redis.call('nosuch')", "0"},
	} {
		c.do(cmd...)
	}
	want := map[string]string{"k": "v", "one": "1", "before": "x"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	log := readAppendOnly(t, dir)
	if strings.Contains(strings.ToLower(log), "eval") {
		t.Errorf("the log has EVAL: %q", log)
	}
	for _, frag := range []string{"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nset\r\n$1\r\nk\r\n$1\r\nv\r\n", "*1\r\n$4\r\nEXEC\r\n", "$6\r\nSELECT\r\n$1\r\n3\r\n"} {
		if !strings.Contains(log, frag) {
			t.Errorf("the log lacks %q: %q", frag, log)
		}
	}
	if strings.Contains(log, "unlogged") {
		t.Errorf("the log has the write made under REPL_NONE: %q", log)
	}
	_, addr = startServer(t, cfg)
	c = dialRaw(t, addr)
	for k, v := range want {
		if got := c.do("GET", k); got != fmt.Sprintf("$%d\r\n%s\r\n", len(v), v) {
			t.Errorf("GET %s after the restart = %q; want %q", k, got, v)
		}
	}
	if got := c.do("LRANGE", "l", "0", "-1"); got != "*2\r\n$1\r\na\r\n$1\r\nb\r\n" {
		t.Errorf("LRANGE l after the restart = %q", got)
	}
	c.do("SELECT", "3")
	if got := c.do("GET", "in3"); got != "$1\r\nx\r\n" {
		t.Errorf("GET in3 in database 3 after the restart = %q", got)
	}
}

// readAppendOnly returns what the log in dir holds, its files joined.
func readAppendOnly(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(path, ".aof") || strings.HasSuffix(path, ".manifest") {
			return err
		}
		data, err := os.ReadFile(path)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// go-redis's Script runs by EVALSHA and falls back to EVAL on NOSCRIPT;
// its Eval and EvalRO read the replies it converts.
func TestEvalGoRedis(t *testing.T) {
	c, ctx := serverAndClient(t)
	incrBy := redis.NewScript(`
local n = redis.call("INCRBY", KEYS[1], ARGV[1])
if n > tonumber(ARGV[2]) then
	return redis.error_reply("LIMIT reached " .. n)
end
return n`)
	if n, err := incrBy.Run(ctx, c, []string{"ctr"}, 5, 12).Int(); n != 5 || err != nil {
		t.Fatalf("first Run = %d, %v; want 5", n, err)
	}
	if exists, err := incrBy.Exists(ctx, c).Result(); err != nil || len(exists) != 1 || !exists[0] {
		t.Fatalf("SCRIPT EXISTS = %v, %v; want it cached by the EVAL fallback", exists, err)
	}
	if n, err := incrBy.Run(ctx, c, []string{"ctr"}, 5, 12).Int(); n != 10 || err != nil {
		t.Fatalf("second Run = %d, %v; want 10", n, err)
	}
	_, err := incrBy.Run(ctx, c, []string{"ctr"}, 5, 12).Result()
	if err == nil || err.Error() != "LIMIT reached 15" {
		t.Fatalf("third Run = %v; want LIMIT reached 15", err)
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		t.Errorf("error %T is not a redis.Error", err)
	}
	v, err := c.Eval(ctx, "return {1, 'two', {3}, redis.status_reply('OK')}", nil).Result()
	if fmt.Sprint(v) != "[1 two [3] OK]" || err != nil {
		t.Errorf("Eval = %v, %v", v, err)
	}
	if v, err := c.EvalRO(ctx, "return redis.call('get', KEYS[1])", []string{"ctr"}).Result(); v != "15" || err != nil {
		t.Errorf("EvalRO = %v, %v", v, err)
	}
	if err := c.EvalRO(ctx, "return redis.call('del', KEYS[1])", []string{"ctr"}).Err(); err == nil || !strings.Contains(err.Error(), "Write commands are not allowed from read-only scripts") {
		t.Errorf("EvalRO of a write = %v", err)
	}
	if err := c.EvalSha(ctx, "ffffffffffffffffffffffffffffffffffffffff", nil).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Errorf("EvalSha of no script = %v", err)
	}
}

// A script's error disturbs no other client, and the caller's next
// request is served.
func TestEvalErrorsDisturbNothing(t *testing.T) {
	_, addr := startServer(t, Config{})
	a, b := dialRaw(t, addr), dialRaw(t, addr)
	b.do("SET", "k", "v")
	a.sendTogether([]string{"EVAL", "redis.call('set', 'x', '1'); error('stop')", "0"}, []string{"GET", "x"},
		[]string{"EVAL", "local t = {} for i = 1, 100000 do t[i] = i end return #t", "0"}, []string{"PING"})
	for i, want := range []string{"-ERR user_script:1: stop script: ", "$1\r\n1\r\n", ":100000\r\n", "+PONG\r\n"} {
		if got := a.read(); !strings.HasPrefix(got, want) {
			t.Errorf("reply %d = %q; want %q...", i, got, want)
		}
	}
	if got := b.do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Errorf("the other client's GET = %q", got)
	}
}

// A message a script's PUBLISH sends to its own caller, subscribed in
// RESP3, comes before the script's reply, not inside the reply of the
// PUBLISH the script reads.
func TestEvalPublishToCaller(t *testing.T) {
	_, addr := startServer(t, Config{})
	raddr := redisServer(t)
	run := func(addr string) []string {
		c := dialRaw(t, addr)
		c.do("HELLO", "3")
		var got []string
		got = append(got, c.do("SUBSCRIBE", "ch"))
		c.send("EVAL", "return redis.call('publish', 'ch', 'm')", "0")
		got = append(got, c.read(), c.read())
		return got
	}
	compareTranscripts(t, "", run(addr), run(raddr))
}

// The monitors see EVAL, then each command of its script from "lua".
func TestEvalMonitor(t *testing.T) {
	_, addr := startServer(t, Config{})
	m, c := dialRaw(t, addr), dialRaw(t, addr)
	m.do("MONITOR")
	c.do("EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "k")
	first, second := m.read(), m.read()
	if !strings.Contains(first, `"EVAL" "return redis.call('set', KEYS[1], 'v')" "1" "k"`) {
		t.Errorf("first monitor line %q; want the EVAL", first)
	}
	if !strings.Contains(second, `[0 lua] "set" "k" "v"`) {
		t.Errorf("second monitor line %q; want the script's SET from lua", second)
	}
}

// A tracking client's cache learns the keys its scripts read, as Redis
// 7.0's: a change to one is told to it.
func TestEvalTracking(t *testing.T) {
	_, addr := startServer(t, Config{})
	c, other := dialRaw(t, addr), dialRaw(t, addr)
	c.do("HELLO", "3")
	c.do("CLIENT", "TRACKING", "on")
	c.do("EVAL", "return redis.call('get', KEYS[1])", "1", "cached")
	other.do("SET", "cached", "new")
	if got := c.read(); !strings.Contains(got, "invalidate") || !strings.Contains(got, "cached") {
		t.Errorf("after a change of the key the script read: %q; want an invalidation", got)
	}
}

// Past maxmemory, a script with a shebang line that may write is refused
// before it runs, unless allow-oom; one without, or with no-writes, runs
// and only a command that may add memory is refused, until the script has
// written. Under CLIENT PAUSE WRITE, a no-writes script runs and one of
// the older form waits. As Redis 7.0 does.
func TestCompatEvalScriptFlags(t *testing.T) {
	_, addr := startServer(t, Config{})
	run := func(addr string) []string {
		a, b := dialRaw(t, addr), dialRaw(t, addr)
		var got []string
		a.do("CONFIG", "SET", "maxmemory-policy", "noeviction")
		a.do("SET", "big", strings.Repeat("x", 1<<20))
		a.do("CONFIG", "SET", "maxmemory", "1")
		for _, src := range []string{
			"#!lua\nreturn 1", "#!lua flags=allow-oom\nreturn redis.call('set', 'x', 'y')", "#!lua flags=no-writes\nreturn redis.call('get', 'x')",
			"return redis.call('get', 'x')", "return redis.call('set', 'x', 'z')", "redis.call('del', 'x'); return redis.call('set', 'x', 'z')",
		} {
			got = append(got, a.do("EVAL", src, "0"))
		}
		got = append(got, a.do("MULTI"), a.do("EVAL", "#!lua\nreturn 1", "0"), a.do("EXEC"))
		a.do("CONFIG", "SET", "maxmemory", "0")

		b.do("CLIENT", "PAUSE", "100000", "WRITE")
		got = append(got, a.do("EVAL", "#!lua flags=no-writes\nreturn 5", "0"), a.do("EVAL_RO", "return 6", "0"))
		a.send("EVAL", "return 7", "0")
		held := blockedClients(b.do("INFO", "clients"))
		for deadline := time.Now().Add(10 * time.Second); held != "blocked_clients:1" && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			held = blockedClients(b.do("INFO", "clients"))
		}
		got = append(got, held, b.do("CLIENT", "UNPAUSE"), a.read())

		// A script's write makes the EXEC of a client WATCHing the key
		// fail; a script's push serves a client blocked on the list.
		a.do("WATCH", "w")
		b.do("EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "w")
		got = append(got, a.do("MULTI"), a.do("GET", "w"), a.do("EXEC"))
		a.send("BLPOP", "queue", "0")
		time.Sleep(50 * time.Millisecond)
		got = append(got, b.do("EVAL", "return redis.call('rpush', KEYS[1], 'job')", "1", "queue"), a.read())
		return got
	}
	compareTranscripts(t, "", run(addr), run(redisServer(t)))
}

// INFO counts the commands a script runs and their errors as Redis
// does: a command refused by the script's checks as rejected, an error
// counted once, the script failed when its command's error ends it.
func TestCompatEvalStats(t *testing.T) {
	_, addr := startServer(t, Config{})
	run := func(addr string) []string {
		c := dialRaw(t, addr)
		c.do("EVAL", "redis.call('set', 'a', '1'); return redis.call('get', 'a')", "0")
		c.do("EVAL", "return redis.call('incr', 'a', 'x')", "0")
		c.do("EVAL", "redis.call('set', 's', 'x'); return redis.call('incr', 's')", "0")
		c.do("EVAL", "return redis.pcall('incr', 's')", "0")
		c.do("EVAL", "return redis.call('nosuch')", "0")
		c.do("EVAL", "return redis.error_reply('MINE x')", "0")
		c.do("EVAL", "error('raised')", "0")
		c.do("EVAL_RO", "return redis.call('set', 'a', 'b')", "0")
		var out []string
		for _, line := range strings.Split(c.do("INFO", "commandstats"), "\r\n") {
			name, fields, ok := strings.Cut(line, ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			var kept []string
			for _, f := range strings.Split(fields, ",") {
				if !strings.HasPrefix(f, "usec") {
					kept = append(kept, f)
				}
			}
			out = append(out, name+":"+strings.Join(kept, ","))
		}
		for _, line := range strings.Split(c.do("INFO", "errorstats"), "\r\n") {
			if strings.HasPrefix(line, "errorstat_") {
				out = append(out, line)
			}
		}
		return out
	}
	ours, theirs := run(addr), run(redisServer(t))
	slices.Sort(ours)
	slices.Sort(theirs)
	compareTranscripts(t, "", ours, theirs)
	c := dialRaw(t, addr)
	c.do("SCRIPT", "LOAD", "return 1")
	if info := c.do("INFO", "memory"); !strings.Contains(info, "number_of_cached_scripts:9") {
		t.Errorf("INFO memory: %s; want 9 cached scripts", info)
	}
}

// FuzzShebangFlags: the flags line of any script is read without a panic,
// and a line read without an error ends where the script's first line does.
func FuzzShebangFlags(f *testing.F) {
	for _, s := range []string{"#!lua\n", "#!lua flags=no-writes,allow-oom\nreturn 1", "#!lua flags=\n", "#!lua \"x\n", "#!\n", "return 1", "#!lua flags=nosuch\n", "#!lua 'a b' \n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		flags, skip, msg := shebangFlags(body)
		if msg != "" {
			return
		}
		if !strings.HasPrefix(string(body), "#!") {
			if flags != scriptCompat || skip != 0 {
				t.Fatalf("no shebang: flags %b, skip %d", flags, skip)
			}
			return
		}
		if flags&scriptCompat != 0 || skip < 2 || body[skip] != '\n' {
			t.Fatalf("shebang %q: flags %b, skip %d", body, flags, skip)
		}
	})
}

// ioredis's scripting against evkv: defineCommand's EVALSHA with its
// fallback to EVAL, in a pipeline too, after SCRIPT FLUSH, eval, and a
// script's error reply (testdata/ioredis/scripts.js).
func TestIoredisScripts(t *testing.T) {
	modules := testpeer.NodeModules(t, "ioredis@5")
	_, addr := startServer(t, Config{})
	cmd := exec.Command("node", filepath.Join("testdata", "ioredis", "scripts.js"), addr)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.CombinedOutput()
	var got struct {
		Error string
		Steps map[string]any
	}
	if jerr := json.Unmarshal(out, &got); jerr != nil || err != nil || got.Error != "" {
		t.Fatalf("node: %v, %v: %s", err, jerr, out)
	}
	want := map[string]string{
		"first": "4", "second": "8", "capped": "error: CAPPED at 10", "pipeline": "[OK 1 3]",
		"flushed": "4", "eval": "[k a PONG]", "cjson": `{"a":[1,2]}`,
	}
	for name, w := range want {
		if g := fmt.Sprint(got.Steps[name]); g != w {
			t.Errorf("%s: %s; want %s", name, g, w)
		}
	}
}

// redis-cli --eval runs a script file with its keys and arguments.
func TestRedisCliEval(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli is not installed")
	}
	_, addr := startServer(t, Config{})
	host, port, _ := strings.Cut(addr, ":")
	file := filepath.Join(t.TempDir(), "swap.lua")
	os.WriteFile(file, []byte("local a = redis.call('GET', KEYS[1])\nredis.call('SET', KEYS[1], ARGV[1])\nreturn {a or false, redis.call('GET', KEYS[1])}\n"), 0o644)
	for i, want := range []string{"\n1\n", "1\n2\n"} {
		out, err := exec.Command(cli, "-h", host, "-p", port, "--eval", file, "k", ",", strconv.Itoa(i+1)).CombinedOutput()
		if err != nil || string(out) != want {
			t.Errorf("redis-cli --eval, run %d: %q, %v; want %q", i+1, out, err, want)
		}
	}
}

// BenchmarkEval runs EVAL and EVALSHA of a one-INCR script, 100 to a
// write, through a connection: the cost of a script's call and its one
// command on the loop.
func BenchmarkEval(b *testing.B) {
	_, addr := startServer(b, Config{})
	c := dialRaw(b, addr)
	const src = "return redis.call('INCR', KEYS[1])"
	sha := strings.TrimSpace(strings.Split(c.do("SCRIPT", "LOAD", src), "\r\n")[1])
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"EVAL", []string{"EVAL", src, "1", "ctr"}},
		{"EVALSHA", []string{"EVALSHA", sha, "1", "ctr"}},
		{"INCR", []string{"INCR", "ctr"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			batch := make([][]string, 100)
			for i := range batch {
				batch[i] = bc.args
			}
			for i := 0; i < b.N; i += len(batch) {
				c.sendTogether(batch...)
				for range batch {
					c.read()
				}
			}
		})
	}
}

// TestEvalNestedCalls: scripts that nest coroutines, pcall or xpcall
// without end get an error, as Lua 5.1's "C stack overflow", where they
// overflowed the server's stack and ended the process; the server goes on.
func TestEvalNestedCalls(t *testing.T) {
	_, addr := startServer(t, Config{})
	c := dialRaw(t, addr)
	for _, src := range []string{
		"local function f() return coroutine.wrap(f)() end return f()",
		"local function f() local co = coroutine.create(f); return coroutine.resume(co) end return f()",
		"local function g(n) if n == 0 then return 0 end return select(2, pcall(g, n - 1)) end " +
			"local function f(d) if d == 0 then return g(9000) end return coroutine.wrap(f)(d - 1) end return f(150)",
		"local function g(n) if n == 0 then return 0 end return select(2, xpcall(function() return g(n - 1) end, function(e) return e end)) end " +
			"local function f(d) if d == 0 then return g(9000) end return coroutine.wrap(f)(d - 1) end return f(150)",
	} {
		if got := c.do("EVAL", src, "0"); got == "" {
			t.Errorf("EVAL %q: no reply", src)
		}
	}
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Errorf("PING after the scripts = %q", got)
	}
	compareWithRedis(t, [][]string{
		{"EVAL", "local n = 0 local function f() n = n + 1 local ok, e = coroutine.resume(coroutine.create(f)) if not ok then return {n, e} end return ok and e end return f()", "0"},
		{"EVAL", "local n = 0 local function f() n = n + 1 local ok, e = pcall(f) if not ok then return {n, e} end return e end return f()", "0"},
	})
}

// TestCompatEvalEnvironment: a script cannot change the environment the
// next scripts' code runs in, nor read the interpreter's own globals: no
// getfenv, setfenv or newproxy, as in Redis 7.0.15, where setfenv(0, t)
// left the next script's loadstring without redis.
func TestCompatEvalEnvironment(t *testing.T) {
	compareWithRedis(t, [][]string{
		{"EVAL", "setfenv(0, {}) return 1", "0"},
		{"EVAL", "return type(loadstring('return redis')())", "0"},
		{"EVAL", "return type(getfenv(redis.call))", "0"},
		{"EVAL", "return type(getfenv)", "0"}, {"EVAL", "return type(setfenv)", "0"}, {"EVAL", "return type(newproxy)", "0"},
	})
}

// TestEvalPanicAppendOnly: a command that panics in a script closes the
// caller, and the log closes the transaction of the script's commands
// that ran before it, where it was left open and took in the commands
// of the other clients that came after, lost on replay.
func TestEvalPanicAppendOnly(t *testing.T) {
	registerPanicking(t, "test-boom3", "write fast", nil)
	dir := t.TempDir()
	cfg := Config{AppendOnly: true, AppendFsync: "always", Dir: dir}
	s1, addr := startServer(t, cfg)
	victim, other := dialRaw(t, addr), dialRaw(t, addr)
	victim.send("EVAL", "redis.call('set', 'a', '1'); redis.call('set', 'b', '1'); redis.call('test-boom3')", "0")
	if b, err := io.ReadAll(victim.r); err != nil || len(b) != 0 {
		t.Errorf("the connection whose script panicked read %q, %v; want EOF", b, err)
	}
	if got := other.do("SET", "later", "1"); got != "+OK\r\n" {
		t.Fatalf("SET after the panic: %q", got)
	}
	c := restartRaw(t, s1, cfg)
	if got := c.do("EXISTS", "a", "b", "later"); got != ":3\r\n" {
		t.Errorf("after replay, EXISTS a b later = %q; want 3", got)
	}
}

// compareEvalsWithRedis runs EVAL of each script, without keys, through
// compareWithRedis.
func compareEvalsWithRedis(t *testing.T, scripts ...string) {
	t.Helper()
	cmds := make([][]string, len(scripts))
	for i, src := range scripts {
		cmds[i] = []string{"EVAL", src, "0"}
	}
	compareWithRedis(t, cmds)
}

// TestCompatEvalMetatables: what getmetatable gives of the globals and of
// the library tables cannot be changed, as in Redis, where it was a table
// every script could write and the next read.
func TestCompatEvalMetatables(t *testing.T) {
	compareEvalsWithRedis(t,
		"local m = getmetatable(_G); m.x = 1; return 1", "return getmetatable(_G).x", "return type(getmetatable(_G))",
		"rawset(getmetatable(_G), 'x', 1); return 1", "return getmetatable(getmetatable(_G))",
		"return getmetatable(string)", "return getmetatable(redis)", "return getmetatable(cjson)", "return cjson.encode({1})",
		"return getmetatable('').__index == string", "return getmetatable(setmetatable({}, {__metatable = 'no'}))",
		"return getmetatable(setmetatable({}, {a = 1})).a", "return getmetatable(1)",
	)
}

// TestCompatEvalStringRep: string.rep takes its count as Lua 5.1's C int,
// as in Redis, where a count past it (2^36) made the server allocate it
// all and die out of memory.
func TestCompatEvalStringRep(t *testing.T) {
	compareEvalsWithRedis(t,
		"return #string.rep('x', 2^36)", "return #string.rep('ab', 2^32 + 3)", "return #string.rep('x', -2^63)",
		"return #string.rep('x', 0/0)", "return #string.rep('x', 3.9)", "return #string.rep('x', -3.9)",
		"return #('x'):rep(2^33 + 1)", "return string.rep('x', '2')", "return #string.rep('x', 2^63)", "return string.rep('ab', 3)",
	)
}

// TestCompatEvalUnpack: unpack refuses more results than Lua 5.1's stack
// holds, as in Redis, where unpack({}, 1, 1e8) held the server for
// minutes pushing them.
func TestCompatEvalUnpack(t *testing.T) {
	compareEvalsWithRedis(t,
		"return select('#', unpack({}, 1, 1e8))", "return select('#', unpack({}, -2^31, 2^31))", "return select('#', unpack({}, 1, 7990))",
		"return select('#', unpack({}, 1, 8000))", "return #string.char(unpack({}, 1, 1e7))", "return {unpack({1, 2, 3})}",
		"return {unpack({1, 2, 3}, 2)}", "return {unpack({1, 2, 3}, 2, 5)}", "return {unpack({1, 2, 3}, 3, 1)}", "return {unpack({1, 2, 3}, -1, 1)}",
		"return {unpack({1, 2, 3}, 1.9, 2.9)}", "return {unpack({1, 2, 3}, nil, 2)}", "return {unpack({1, 2, 3}, '2')}",
	)
}

// TestCompatEvalStringByte: string.byte refuses more results than Lua
// 5.1's stack holds, as in Redis, where string.byte of a 10 MB string
// held the server for minutes pushing them.
func TestCompatEvalStringByte(t *testing.T) {
	compareEvalsWithRedis(t,
		"return select('#', string.byte(string.rep('x', 1e7), 1, -1))", "return select('#', string.byte(string.rep('x', 7990), 1, -1))",
		"return select('#', string.byte(string.rep('x', 8000), 1, -1))", "return {string.byte('abc')}", "return {string.byte('abc', 2)}",
		"return {string.byte('abc', -2, -1)}", "return {string.byte('abc', 0, 10)}", "return {string.byte('abc', 3, 1)}",
		"return {string.byte('abc', -10, 2)}", "return {string.byte('', 1)}", "return {('abc'):byte(1.9, 2.9)}", "return {string.byte(123, 2)}",
		"return {string.byte('abc', -2^63, 2^63)}", "return {string.byte('abc', nil, 2)}",
	)
}

// TestCompatEvalErrorLevel: error's message gets the position of the
// function at its level only when that is Lua code, as in Lua 5.1, where
// a Go function's (pcall's) or none was passed over to the script's.
func TestCompatEvalErrorLevel(t *testing.T) {
	compareEvalsWithRedis(t,
		"local ok, e = pcall(error, 'x') return e", "return {pcall(pcall, error, 'x')}", "return error('x', 2)",
		"error('x', 2)", "error('x', 3)", "error('x', 1)", "error('x')", "error('x', 0)", "error(12, 2)",
		"local function f() error('x', 2) end\nf()", "local function f() error('x', 1) end\nf()",
		"local function f() error('x', 2) end\nlocal ok, e = pcall(f) return e",
		"local function f() error('x', 3) end\nlocal function g() f() end\ng()",
		"return select(2, pcall(error, 'y', 1))", "return select(2, pcall(error, 'y', 2))",
		"return select(2, pcall(function() error('z', 2) end))",
	)
}
