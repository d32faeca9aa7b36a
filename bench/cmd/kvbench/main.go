// Command kvbench runs redis-benchmark against evkv and against Redis
// itself, side by side in one run, and prints requests per second, p50 and
// p99 latency, and requests per second of the server's own CPU time, with
// each figure's ratio to Redis's; then resident memory with a million
// keys of 16-byte values, with a million list items and with small sets
// and hashes; with -bigargs, the CPU one request of many arguments costs;
// with -wide, the time of commands over many keys or arguments. Beside
// redis-benchmark's tests, -tests takes valueTests: commands on one big
// value (APPEND, SETRANGE and BITFIELD of a long string, GEOSEARCH).
//
//	cd bench && go run ./cmd/kvbench                       # the full run: -n 1000000, minutes
//	go run ./cmd/kvbench -n 100000 -runs 3 -tests set,get   # quicker
//	go run ./cmd/kvbench -configs "" -memkeys 0 -memitems 0 -bigargs 1000000 -runs 9   # one big RPUSH
//	go run ./cmd/kvbench -configs "" -memkeys 0 -memitems 0 -memsmall 0 -wide 50000 -runs 3   # commands over many keys
//	go run ./cmd/kvbench -n 100000 -runs 3 -configs P1 -tests append_100b,setrange_1mib,bitfield_1mib -memkeys 0 -memitems 0 -memsmall 0
//	go run ./cmd/kvbench -n 300000 -runs 3 -configs P1,P16 -tests set,get -d 1000 -serverargs "--maxmemory 32mb --maxmemory-policy allkeys-lru" -memkeys 0 -memitems 0 -memsmall 0   # evicting
//
// Each server runs as its own process pinned to CPU 0 (redis-server from
// Debian's package with persistence off; evkv built from ../cmd/evkv),
// redis-benchmark pinned to CPU 1. In a run every server is started fresh
// and each test runs against them back to back, the first one alternating
// and the others stopped (SIGSTOP) while one is measured; the tables show
// medians of the runs, and the ratios are medians of the runs' own ratios.
// Server CPU is utime+stime from /proc/PID/stat before and after each
// redis-benchmark run.
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/evloop/evloop/bench/internal/proc"
)

const allTests = "set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,mset"

// valueTests are tests of -tests beside redis-benchmark's own: commands
// on one big value, set up first (setup, inline): a string a server may
// edit in place or copy whole at each command, a geo set searched.
var valueTests = map[string]struct{ setup, command []string }{
	// A value that grows by 100 bytes a command: -n 100000 makes 10 MB.
	"append_100b": {[]string{"DEL log"}, []string{"APPEND", "log", strings.Repeat("x", 100)}},
	// 12 bytes written in the middle of a 1 MiB value.
	"setrange_1mib": {[]string{"DEL big", "SETRANGE big 1048575 x"}, []string{"SETRANGE", "big", "524288", "__rand_int__"}},
	// A counter in a 1 MiB bitmap, changed by every command.
	"bitfield_1mib": {[]string{"DEL big", "SETRANGE big 1048575 x"}, []string{"BITFIELD", "big", "INCRBY", "u8", "#524288", "1"}},
	// The ten closest of the about 200 points within 10 km, among
	// 100,000 over 4 by 4 degrees around Palermo.
	"geosearch_10km": {geoPoints(100000), []string{"GEOSEARCH", "geo", "FROMLONLAT", "13.4", "38.1", "BYRADIUS", "10", "km", "ASC", "COUNT", "10"}},
	// A script sent whole every time, its digest computed each time: one
	// INCR on one of 100,000 counters.
	"eval_incr": {nil, []string{"EVAL", "return redis.call('INCR', KEYS[1])", "1", "ctr:__rand_int__"}},
	// A rate limiter by its digest, as clients run scripts: an INCR, a
	// PEXPIRE the first time, a comparison.
	"evalsha_ratelimit": {[]string{"SCRIPT LOAD \"" + rateLimit + "\""},
		[]string{"EVALSHA", rateLimitSHA, "1", "rl:__rand_int__", "60000", "100"}},
}

// rateLimit is evalsha_ratelimit's script, rateLimitSHA its digest.
const (
	rateLimit    = "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end if n > tonumber(ARGV[2]) then return 0 end return n"
	rateLimitSHA = "49bce3dbd64f14bef0e97508b660e5d882628975"
)

// geoPoints are the GEOADDs of n points spread evenly at random (the same
// each run) over 4 by 4 degrees around (13.4, 38.1).
func geoPoints(n int) []string {
	rng := rand.New(rand.NewPCG(7, 7))
	cmds := []string{"DEL geo"}
	for i := range n {
		cmds = append(cmds, fmt.Sprintf("GEOADD geo %.6f %.6f m%d", 11.4+4*rng.Float64(), 36.1+4*rng.Float64(), i))
	}
	return cmds
}

// tlsDir holds -tls's certificate and key; tlsPorts are the servers'
// TLS ports by their plain ports (setups and checks go over the plain one).
var (
	tlsDir   string
	tlsPorts = map[int]int{}
)

// valueSize and serverArgs are -d and -serverargs.
var (
	valueSize  = 3
	serverArgs []string
)

type server struct {
	name string
	argv func(port int) []string
}

type config struct {
	name      string
	clients   int
	pipelined int
}

// result is one test's figures.
type result struct {
	rps, p50, p99, cpuRPS float64
}

func main() {
	n := flag.Int("n", 1000000, "requests per test (redis-benchmark -n)")
	runs := flag.Int("runs", 1, "runs per server; tables show medians")
	tests := flag.String("tests", allTests, "redis-benchmark -t, and valueTests' names")
	configs := flag.String("configs", "P1,P16,c1000", "load shapes: P1 (-c 50 -P 1), P16 (-c 50 -P 16), c1000 (-c 1000 -P 1); empty for none")
	memKeys := flag.Int("memkeys", 1000000, "keys for the memory comparison (0: skip)")
	memItems := flag.Int("memitems", 1000000, "list items for the list memory comparison (0: skip)")
	memSmall := flag.Int("memsmall", 100000, "small sets and hashes for their memory comparison (0: skip)")
	bigArgs := flag.Int("bigargs", 0, "items of one RPUSH to time, arriving in 64 KiB writes, -runs times per server (0: skip)")
	wide := flag.Int("wide", 0, "keys or arguments of the commands over many (wideCases) to time, -runs times per server (0: skip)")
	pin := flag.Bool("pin", true, "pin servers to CPU 0 and redis-benchmark to CPU 1 with taskset")
	useTLS := flag.Bool("tls", false, "redis-benchmark over TLS (--tls), every server given a tls-port (tls-auth-clients no) and a certificate made for the run")
	flag.IntVar(&valueSize, "d", 3, "value size of redis-benchmark's tests (redis-benchmark -d)")
	flag.Func("serverargs", "`arguments` given to every server, space-separated (\"--maxmemory 32mb --maxmemory-policy allkeys-lru\")", func(v string) error {
		serverArgs = strings.Fields(v)
		return nil
	})
	var also []server
	flag.Func("also", "`name=path` of another evkv binary to run in turn with the others and compare with this tree's (repeatable)", func(v string) error {
		name, bin, ok := strings.Cut(v, "=")
		if !ok || name == "" || bin == "" || name == "redis" || name == "evkv" {
			return fmt.Errorf("want name=path with a name other than redis and evkv")
		}
		for _, a := range also {
			if a.name == name {
				return fmt.Errorf("two -also builds named %q", name)
			}
		}
		also = append(also, evkvServer(name, bin))
		return nil
	})
	flag.Parse()
	if *useTLS {
		dir, err := os.MkdirTemp("", "kvbench-tls")
		if err == nil {
			defer os.RemoveAll(dir)
			err = proc.MakeCertificate(dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "kvbench:", err)
			os.Exit(1)
		}
		tlsDir = dir
	}
	if err := run(*n, *runs, strings.Split(*tests, ","), strings.Split(*configs, ","), *memKeys, *memItems, *memSmall, *bigArgs, *wide, *pin, also); err != nil {
		fmt.Fprintln(os.Stderr, "kvbench:", err)
		os.Exit(1)
	}
}

func run(n, runs int, tests, configNames []string, memKeys, memItems, memSmall, bigArgs, wide int, pin bool, also []server) error {
	evkv, err := buildEvkv()
	if err != nil {
		return err
	}
	redisBin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("redis-server is not installed (apt-get install redis-server)")
	}
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		return fmt.Errorf("redis-benchmark is not installed (apt-get install redis-tools)")
	}
	servers := []server{
		{"redis", func(port int) []string {
			return append([]string{redisBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--maxclients", "10000", "--dir", os.TempDir()}, serverArgs...)
		}},
		evkvServer("evkv", evkv),
	}
	servers = append(servers, also...)
	shapes := map[string]config{"P1": {"-c 50 -P 1", 50, 1}, "P16": {"-c 50 -P 16", 50, 16}, "c1000": {"-c 1000 -P 1", 1000, 1}}
	fmt.Printf("# kvbench %s: -n %d, %d run(s), medians\n", time.Now().Format(time.DateOnly), n, runs)
	for _, cn := range configNames {
		if cn == "" {
			continue
		}
		cfg, ok := shapes[cn]
		if !ok {
			return fmt.Errorf("unknown config %q", cn)
		}
		all := map[string]map[string][]result{} // server -> test -> runs
		for r := range runs {
			res, err := benchRun(servers, cfg, n, tests, pin, r)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", cfg.name, r+1, err)
			}
			for name, byTest := range res {
				if all[name] == nil {
					all[name] = map[string][]result{}
				}
				for t, v := range byTest {
					all[name][t] = append(all[name][t], v)
				}
			}
		}
		fmt.Printf("\n## redis-benchmark %s\n\n", cfg.name)
		printTable(tests, all, "redis", "evkv", "Redis", "evkv")
		for _, srv := range also {
			fmt.Printf("\n### %s against this tree's evkv, %s\n\n", srv.name, cfg.name)
			printTable(tests, all, "evkv", srv.name, "evkv", srv.name)
		}
	}
	if memKeys > 0 {
		fmt.Printf("\n## Resident memory with %d keys of 16-byte values\n\n| server | RSS | per key |\n|---|---:|---:|\n", memKeys)
		val := strings.Repeat("v", 16)
		for _, srv := range servers {
			_, rss, err := memoryOnce(srv, memKeys, func(w io.Writer, i int) {
				k := fmt.Sprintf("key:%012d", i)
				fmt.Fprintf(w, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$16\r\n%s\r\n", len(k), k, val)
			})
			if err != nil {
				return err
			}
			fmt.Printf("| %s | %.1f MiB | %.0f B |\n", srv.name, float64(rss)/(1<<20), float64(rss)/float64(memKeys))
		}
	}
	if memItems > 0 {
		lists := []memLoad{
			{"one list of 3-byte items", func(w io.Writer, i int) {
				fmt.Fprintf(w, "*3\r\n$5\r\nRPUSH\r\n$4\r\nlist\r\n$3\r\n%03d\r\n", i%1000)
			}},
			{"lists of 100 20-byte items", func(w io.Writer, i int) {
				k := fmt.Sprintf("list:%08d", i/100)
				fmt.Fprintf(w, "*3\r\n$5\r\nRPUSH\r\n$%d\r\n%s\r\n$20\r\nelement:%012d\r\n", len(k), k, i)
			}},
		}
		fmt.Printf("\n## Resident memory of %d list items, above the empty server's\n\n| items | server | RSS growth | per item |\n|---|---|---:|---:|\n", memItems)
		if err := memoryGrowth(servers, memItems, lists); err != nil {
			return err
		}
	}
	if memSmall > 0 {
		if err := smallMemory(servers, memSmall); err != nil {
			return err
		}
	}
	if bigArgs > 0 {
		if err := bigCommands(servers, bigArgs, runs, pin); err != nil {
			return err
		}
	}
	if wide > 0 {
		return wideCommands(servers, wide, runs, pin)
	}
	return nil
}

// bigCommands starts every server and sends each, in turn, runs RPUSHes
// of n one-byte items, every one arriving in writes of 64 KiB as a
// client's socket delivers a big request; it prints the server CPU and the
// time until the reply of each command, medians, with CPU's ratio to
// Redis's (the first server's).
func bigCommands(servers []server, n, runs int, pin bool) error {
	req := fmt.Appendf(nil, "*%d\r\n$5\r\nRPUSH\r\n$3\r\nbig\r\n", n+2)
	for range n {
		req = append(req, "$1\r\nx\r\n"...)
	}
	type conn struct {
		pid int
		c   net.Conn
		r   *bufio.Reader
	}
	procs, stop, err := startAll(servers, pin)
	defer stop()
	if err != nil {
		return err
	}
	conns := make([]conn, len(servers))
	for i, p := range procs {
		c, err := net.Dial("tcp", p.addr())
		if err != nil {
			return err
		}
		defer c.Close()
		conns[i] = conn{p.cmd.Process.Pid, c, bufio.NewReader(c)}
	}
	cpu := make([][]float64, len(servers))
	wall := make([][]float64, len(servers))
	for r := range runs {
		for k := range servers {
			i := (k + r) % len(servers) // who goes first alternates
			c := conns[i]
			if _, err := c.c.Write([]byte("DEL big\r\n")); err != nil {
				return err
			}
			if _, err := c.r.ReadString('\n'); err != nil {
				return err
			}
			cpu0, err := proc.CPUTime(c.pid)
			if err != nil {
				return err
			}
			start := time.Now()
			for b := req; len(b) > 0; {
				k := min(64<<10, len(b))
				if _, err := c.c.Write(b[:k]); err != nil {
					return err
				}
				b = b[k:]
			}
			reply, err := c.r.ReadString('\n')
			if err != nil {
				return err
			}
			if want := fmt.Sprintf(":%d\r\n", n); reply != want {
				return fmt.Errorf("%s: RPUSH replied %q; want %q", servers[i].name, reply, want)
			}
			took := time.Since(start)
			time.Sleep(time.Second) // a collector's cycle the command started counts too
			cpu1, err := proc.CPUTime(c.pid)
			if err != nil {
				return err
			}
			cpu[i] = append(cpu[i], (cpu1-cpu0)*1000)
			wall[i] = append(wall[i], float64(took.Microseconds())/1000)
		}
	}
	fmt.Printf("\n## One RPUSH of %d one-byte items in 64 KiB writes, medians of %d\n\n| server | CPU ms | ratio | reply after ms |\n|---|---:|---:|---:|\n", n, runs)
	for i, srv := range servers {
		var ratios []float64 // each run's, as the other tables' ratios
		for r, v := range cpu[i] {
			if cpu[0][r] > 0 { // under a tick, for a small -bigargs
				ratios = append(ratios, v/cpu[0][r])
			}
		}
		fmt.Printf("| %s | %.0f | %.2f | %.0f |\n", srv.name, proc.Median(cpu[i]), proc.Median(ratios), proc.Median(wall[i]))
	}
	return nil
}

func evkvServer(name, bin string) server {
	return server{name, func(port int) []string {
		return append([]string{bin, "--port", strconv.Itoa(port), "--appendonly", "no"}, serverArgs...)
	}}
}

func buildEvkv() (string, error) {
	dir, err := os.MkdirTemp("", "kvbench")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "evkv")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/evkv")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building evkv: %v\n%s", err, out)
	}
	return bin, nil
}

// startServer starts srv pinned to CPU 0 and waits for its port.
func startServer(srv server, pin bool) (*exec.Cmd, int, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, 0, err
	}
	argv := srv.argv(port)
	if tlsDir != "" {
		tp, err := proc.FreePort()
		if err != nil {
			return nil, 0, err
		}
		tlsPorts[port] = tp
		argv = append(argv, "--tls-port", strconv.Itoa(tp), "--tls-cert-file", filepath.Join(tlsDir, "cert.pem"),
			"--tls-key-file", filepath.Join(tlsDir, "key.pem"), "--tls-auth-clients", "no")
	}
	if pin {
		argv = append([]string{"taskset", "-c", "0"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd, port, nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, 0, fmt.Errorf("%s did not start", srv.name)
}

// benchRun starts a fresh process of every server and runs the tests in
// turn against each: a test runs against one server, then at once against
// the next, so that the machine's drift over minutes falls on both figures
// of a pair alike. Which server goes first alternates from test to test
// and from run to run. It measures each server's CPU per test.
func benchRun(servers []server, cfg config, n int, tests []string, pin bool, run int) (map[string]map[string]result, error) {
	procs, stop, err := startAll(servers, pin)
	defer stop()
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]result{}
	for _, p := range procs {
		out[p.srv.name] = map[string]result{}
	}
	for i, t := range tests {
		order := slices.Clone(procs)
		if (i+run)%2 == 1 {
			slices.Reverse(order)
		}
		for _, p := range order {
			// The others are stopped meanwhile, so that their background
			// work (Redis's cron, a Go runtime's) takes nothing from the
			// CPU they share with the one measured.
			signalOthers(procs, p.cmd, syscall.SIGSTOP)
			r, err := benchTest(p.cmd.Process.Pid, p.port, cfg, n, t, pin, out[p.srv.name])
			signalOthers(procs, p.cmd, syscall.SIGCONT)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.srv.name, err)
			}
			out[p.srv.name][t] = r
		}
	}
	return out, nil
}

// running is a server's process in a run.
type running struct {
	srv  server
	cmd  *exec.Cmd
	port int
}

// addr is the server's address to dial.
func (p running) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// startAll starts servers, in order; stop kills those started, also when
// one failed to start.
func startAll(servers []server, pin bool) (procs []running, stop func(), err error) {
	stop = func() {
		for _, p := range procs {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	}
	for _, srv := range servers {
		cmd, port, err := startServer(srv, pin)
		if err != nil {
			return procs, stop, err
		}
		procs = append(procs, running{srv, cmd, port})
	}
	return procs, stop, nil
}

// signalOthers sends sig to every server of procs but the one running cmd.
func signalOthers(procs []running, cmd *exec.Cmd, sig syscall.Signal) {
	for _, p := range procs {
		if p.cmd != cmd {
			p.cmd.Process.Signal(sig)
		}
	}
}

// benchTest runs redis-benchmark's test t against the server at port
// (process pid), whose earlier results are done, and measures its CPU.
func benchTest(pid, port int, cfg config, n int, t string, pin bool, done map[string]result) (result, error) {
	before, err := proc.CPUTime(pid)
	if err != nil {
		return result{}, err
	}
	argv := []string{"redis-benchmark", "-p", strconv.Itoa(port), "-n", strconv.Itoa(n), "-c", strconv.Itoa(cfg.clients),
		"-P", strconv.Itoa(cfg.pipelined), "-r", "100000", "-d", strconv.Itoa(valueSize), "--csv"}
	if tlsDir != "" {
		argv[2] = strconv.Itoa(tlsPorts[port])
		argv = append(argv, "--tls", "--cacert", filepath.Join(tlsDir, "cert.pem"))
	}
	if et, ok := valueTests[t]; ok {
		if err := inline(port, et.setup); err != nil {
			return result{}, fmt.Errorf("%s's setup: %v", t, err)
		}
		argv = append(argv, et.command...)
	} else {
		argv = append(argv, "-t", t)
	}
	if pin {
		argv = append([]string{"taskset", "-c", "1"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("redis-benchmark -t %s: %v: %s%s", t, err, raw, stderr.String())
	}
	after, err := proc.CPUTime(pid)
	if err != nil {
		return result{}, err
	}
	r, err := parseCSV(raw)
	if err != nil {
		return result{}, fmt.Errorf("redis-benchmark -t %s: %v\n%s", t, err, raw)
	}
	cpu := after - before
	// redis-benchmark fills the list with n LPUSHes before an LRANGE test;
	// their share of the server's time is taken as the LPUSH test's, when
	// it ran.
	if fill, ok := done["lpush"]; ok && strings.HasPrefix(t, "lrange") && fill.cpuRPS > 0 {
		cpu -= float64(n) / fill.cpuRPS
	}
	if cpu > 0 {
		r.cpuRPS = float64(n) / cpu
	}
	return r, nil
}

// inline sends the server at port commands, inline, in one pipeline,
// and reads each reply's first line (replies of one line each), refusing
// errors.
func inline(port int, commands []string) error {
	c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer c.Close()
	sent := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(c)
		for _, cmd := range commands {
			w.WriteString(cmd + "\r\n")
		}
		sent <- w.Flush()
	}()
	r := bufio.NewReader(c)
	for _, cmd := range commands {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if strings.HasPrefix(line, "-") {
			return fmt.Errorf("%s: %s", cmd, strings.TrimSpace(line))
		}
	}
	return <-sent
}

// parseCSV reads redis-benchmark's --csv line:
// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
// The last row is the test's: an LRANGE test's output starts with the row
// of the LPUSHes that filled the list.
func parseCSV(raw []byte) (result, error) {
	rows, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil {
		return result{}, err
	}
	for _, row := range slices.Backward(rows) {
		if len(row) < 7 || row[0] == "test" {
			continue
		}
		rps, err1 := strconv.ParseFloat(row[1], 64)
		p50, err2 := strconv.ParseFloat(row[4], 64)
		p99, err3 := strconv.ParseFloat(row[6], 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return result{}, fmt.Errorf("bad csv row %q", row)
		}
		return result{rps: rps, p50: p50, p99: p99}, nil
	}
	return result{}, fmt.Errorf("no result row")
}

// printTable prints, per test, the medians of server b's runs beside
// server a's, with b's ratios to a; names label the columns.
func printTable(tests []string, all map[string]map[string][]result, a, b, aName, bName string) {
	fmt.Printf("| test | %[1]s rps | %[2]s rps | ratio | %[1]s p50/p99 ms | %[2]s p50/p99 ms | %[1]s rps/CPU-s | %[2]s rps/CPU-s | ratio |\n", aName, bName)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	type medians struct{ rps, p50, p99, cpu float64 }
	of := func(rs []result) medians {
		return medians{
			proc.MedianOf(rs, func(x result) float64 { return x.rps }),
			proc.MedianOf(rs, func(x result) float64 { return x.p50 }),
			proc.MedianOf(rs, func(x result) float64 { return x.p99 }),
			proc.MedianOf(rs, func(x result) float64 { return x.cpuRPS }),
		}
	}
	// ratio is the median of the runs' ratios: a run measures both servers
	// on a test seconds apart.
	ratio := func(xs, ys []result, f func(result) float64) float64 {
		var v []float64
		for i := range min(len(xs), len(ys)) {
			if f(xs[i]) > 0 && f(ys[i]) > 0 {
				v = append(v, f(ys[i])/f(xs[i]))
			}
		}
		return proc.Median(v)
	}
	for _, t := range tests {
		xs, ys := all[a][t], all[b][t]
		x, y := of(xs), of(ys)
		fmt.Printf("| %s | %.0f | %.0f | %.2f | %.3f / %.3f | %.3f / %.3f | %.0f | %.0f | %.2f |\n", t, x.rps, y.rps,
			ratio(xs, ys, func(r result) float64 { return r.rps }),
			x.p50, x.p99, y.p50, y.p99, x.cpu, y.cpu,
			ratio(xs, ys, func(r result) float64 { return r.cpuRPS }))
	}
}

// smallMemory compares the resident memory of n small aggregates of each
// kind, the compact encodings' case: sets of 10 integers (intsets) and
// hashes of 10 short fields (listpacks).
func smallMemory(servers []server, n int) error {
	kinds := []memLoad{
		{"sets of 10 integers", func(w io.Writer, i int) {
			k := fmt.Sprintf("set:%08d", i)
			fmt.Fprintf(w, "*12\r\n$4\r\nSADD\r\n$%d\r\n%s\r\n", len(k), k)
			for j := range 10 {
				m := strconv.Itoa(i*10 + j)
				fmt.Fprintf(w, "$%d\r\n%s\r\n", len(m), m)
			}
		}},
		{"hashes of 10 8-byte fields", func(w io.Writer, i int) {
			k := fmt.Sprintf("hash:%08d", i)
			fmt.Fprintf(w, "*22\r\n$4\r\nHSET\r\n$%d\r\n%s\r\n", len(k), k)
			for j := range 10 {
				fmt.Fprintf(w, "$8\r\nfield:%02d\r\n$8\r\n%08d\r\n", j, i)
			}
		}},
	}
	fmt.Printf("\n## Resident memory of %d small aggregates, above the empty server's\n\n| keys | server | RSS growth | per key |\n|---|---|---:|---:|\n", n)
	return memoryGrowth(servers, n, kinds)
}

// memLoad is a memory comparison's load: line writes its i-th command.
type memLoad struct {
	name string
	line func(w io.Writer, i int)
}

// memoryGrowth prints, for each load and server, the resident memory n of
// the load's commands add to a fresh server, in all and per command.
func memoryGrowth(servers []server, n int, loads []memLoad) error {
	for _, l := range loads {
		for _, srv := range servers {
			before, after, err := memoryOnce(srv, n, l.line)
			if err != nil {
				return err
			}
			grown := after - before
			fmt.Printf("| %s | %s | %.1f MiB | %.1f B |\n", l.name, srv.name, float64(grown)/(1<<20), float64(grown)/float64(n))
		}
	}
	return nil
}

// memoryOnce starts srv, sends it the n commands line writes through
// redis-cli --pipe, and returns its resident memory before and after.
func memoryOnce(srv server, n int, line func(w io.Writer, i int)) (before, after int64, err error) {
	cmd, port, err := startServer(srv, false)
	if err != nil {
		return 0, 0, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if before, err = proc.RSSKiB(cmd.Process.Pid); err != nil {
		return 0, 0, err
	}
	pr, pw := io.Pipe()
	cli := exec.Command("redis-cli", "-p", strconv.Itoa(port), "--pipe")
	cli.Stdin = pr
	cli.Stdout = io.Discard
	if err := cli.Start(); err != nil {
		return 0, 0, err
	}
	go func() {
		w := bufio.NewWriterSize(pw, 1<<20)
		for i := range n {
			line(w, i)
		}
		w.Flush()
		pw.Close()
	}()
	if err := cli.Wait(); err != nil {
		return 0, 0, fmt.Errorf("redis-cli --pipe: %v", err)
	}
	time.Sleep(2 * time.Second) // let a collector finish its cycle
	after, err = proc.RSSKiB(cmd.Process.Pid)
	return before << 10, after << 10, err
}
