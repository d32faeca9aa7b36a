package lualib

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// The differential tests run each Lua chunk both in a real Redis 7.0 (EVAL)
// and in gopher-lua after Open, and compare what the two return. The chunk
// runs under pcall inside a wrapper that turns its results, or its error,
// into one string both sides build alike: numbers by their exact binary
// value, tables with their entries sorted, strings with their length.

// TestMain stops the Redis server the differential tests started, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	stopRedis()
	os.Exit(code)
}

var redisServer struct {
	once sync.Once
	cmd  *exec.Cmd
	dir  string
	conn net.Conn
	rd   *bufio.Reader
	err  error
	mu   sync.Mutex
}

// startRedis starts redis-server on a Unix socket in a new directory and
// connects to it.
func startRedis() error {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return errSkip
	}
	dir, err := os.MkdirTemp("", "lualib-redis")
	if err != nil {
		return err
	}
	redisServer.dir = dir
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(path, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--busy-reply-threshold", "60000")
	// Redis sorts strings with strcoll; the C locale makes that byte order,
	// as in gopher-lua.
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if err := cmd.Start(); err != nil {
		return err
	}
	redisServer.cmd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := net.Dial("unix", sock)
		if err == nil {
			redisServer.conn = conn
			redisServer.rd = bufio.NewReader(conn)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server did not listen on %s: %v", sock, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var errSkip = errors.New("redis-server is not on PATH")

// stopRedis stops the server startRedis started and removes its directory.
func stopRedis() {
	if redisServer.conn != nil {
		redisServer.conn.Close()
	}
	if redisServer.cmd != nil {
		redisServer.cmd.Process.Kill()
		redisServer.cmd.Wait()
	}
	if redisServer.dir != "" {
		os.RemoveAll(redisServer.dir)
	}
}

// needRedis starts Redis on first use, skipping the test when redis-server
// is not installed.
func needRedis(t *testing.T) {
	t.Helper()
	redisServer.once.Do(func() { redisServer.err = startRedis() })
	if redisServer.err == errSkip {
		t.Skip(errSkip)
	}
	if redisServer.err != nil {
		t.Fatal(redisServer.err)
	}
}

// redisCommand sends one command and reads its reply, rendered as a string:
// "+text", "-error", ":n", "$bulk", "(nil)" or "*[...]".
func redisCommand(args ...string) (string, error) {
	redisServer.mu.Lock()
	defer redisServer.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := redisServer.conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	return readReply(redisServer.rd)
}

// readReply reads one RESP2 reply.
func readReply(rd *bufio.Reader) (string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply line")
	}
	switch line[0] {
	case '+', '-', ':':
		return line, nil
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", err
		}
		if n < 0 {
			return "(nil)", nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(rd, buf); err != nil {
			return "", err
		}
		return "$" + string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", err
		}
		parts := make([]string, 0, max(n, 0))
		for i := 0; i < n; i++ {
			p, err := readReply(rd)
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		return "*[" + strings.Join(parts, " ") + "]", nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

// ioReadFull reads exactly len(buf) bytes.
func ioReadFull(rd *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := rd.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// wrapperPrelude defines the functions the wrapper renders results with.
const wrapperPrelude = `
local function num(n)
  if n ~= n then return 'nan' end
  if n == 1/0 then return 'inf' end
  if n == -1/0 then return '-inf' end
  if n == 0 then if 1/n < 0 then return '-0' end return '0' end
  if n == math.floor(n) and n > -1e14 and n < 1e14 then return tostring(n) end
  local sign = ''
  if n < 0 then sign = '-' n = -n end
  local m, e = math.frexp(n)
  m = m * 2^53
  local hi = math.floor(m / 2^26)
  local lo = m - hi * 2^26
  return sign .. tostring(hi) .. '*2^26+' .. tostring(lo) .. '@' .. tostring(e)
end
local dump
dump = function(v)
  if v == cjson.null then return 'null' end
  local t = type(v)
  if t == 'string' then return 's' .. #v .. ':' .. v end
  if t == 'number' then return num(v) end
  if t == 'boolean' or t == 'nil' then return tostring(v) end
  if t == 'table' then
    local parts = {}
    for k, x in pairs(v) do parts[#parts + 1] = dump(k) .. '=' .. dump(x) end
    table.sort(parts)
    return '{' .. table.concat(parts, ',') .. '}'
  end
  return t
end
local function results(...) return {n = select('#', ...), ...} end
`

// wrapperReset puts cjson's settings back to their defaults, since in Redis
// they outlive the script that changes them.
const wrapperReset = `
cjson.encode_sparse_array(false, 2, 10)
cjson.encode_max_depth(1000)
cjson.decode_max_depth(1000)
cjson.encode_number_precision(14)
cjson.encode_keep_buffer(true)
cjson.encode_invalid_numbers(false)
cjson.decode_invalid_numbers(true)
`

// wrap makes the script that runs chunk and renders its outcome.
func wrap(chunk string) string {
	return wrapperPrelude + "local r = results(pcall(function()\n" + chunk + "\nend))\n" + wrapperReset + `
if not r[1] then return 'error: ' .. tostring(r[2]) end
local out = {'ok'}
for i = 2, r.n do out[#out + 1] = dump(r[i]) end
return table.concat(out, ' ')
`
}

// luaQuote writes s as a Lua string literal that means the same in any Lua.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, "\\%03d", c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// positionPrefix matches the position Lua puts before an error raised by
// Lua code, which names the script differently in Redis and here.
var positionPrefix = regexp.MustCompile(`^error: (user_script|<string>|\[string "[^"]*"\]):\d+: `)

// normalize removes what legitimately differs between the two outcomes.
func normalize(s string) string {
	return positionPrefix.ReplaceAllString(s, "error: ")
}

// runInRedis runs chunk in Redis and returns its rendered outcome.
func runInRedis(t *testing.T, chunk string) string {
	t.Helper()
	reply, err := redisCommand("EVAL", wrap(chunk), "0")
	if err != nil {
		t.Fatalf("EVAL: %v", err)
	}
	if !strings.HasPrefix(reply, "$") {
		t.Fatalf("chunk %q: Redis replied %q", chunk, reply)
	}
	return normalize(reply[1:])
}

// runLocally runs chunk in a new gopher-lua state after Open and returns
// its rendered outcome.
func runLocally(t *testing.T, chunk string) string {
	t.Helper()
	L := newTestState()
	defer L.Close()
	if err := L.DoString(wrap(chunk)); err != nil {
		t.Fatalf("chunk %q: %v", chunk, err)
	}
	return normalize(L.Get(-1).String())
}

// newTestState makes a gopher-lua state with the libraries, its stacks
// allowed to grow as deep as Lua 5.1's, for the deeply nested cases.
func newTestState() *lua.LState {
	L := lua.NewState(lua.Options{
		CallStackSize:       20000,
		RegistrySize:        1024 * 20,
		RegistryMaxSize:     1 << 20,
		MinimizeStackMemory: true,
	})
	Open(L)
	return L
}

// compareWithRedis runs each chunk in Redis and here and reports those
// whose outcomes differ.
func compareWithRedis(t *testing.T, chunks []string) {
	t.Helper()
	needRedis(t)
	for _, chunk := range chunks {
		want := runInRedis(t, chunk)
		got := runLocally(t, chunk)
		if got != want {
			t.Errorf("chunk:\n%s\nRedis: %q\nhere:  %q", chunk, clip(want), clip(got))
		}
	}
}

// clip shortens long outcomes in failure reports.
func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// TestRedisHarness checks that the wrapper renders values the same way on
// both sides, so that the other tests compare the libraries and not it.
func TestRedisHarness(t *testing.T) {
	compareWithRedis(t, []string{
		`return 1, -2.5, 0.1, 1/3, 1e300, 2^-1074, 0/0, 1/0, -1/0`,
		`return -0.0`,
		`return "a\0b", true, false, nil`,
		`return {1, 2, {x = "y"}, [10] = 5}`,
		`error("boom")`,
	})
}
