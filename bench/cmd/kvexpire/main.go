// Command kvexpire measures how fast evkv and Redis reclaim keys whose
// TTL has passed when no client touches them: their active expiry. Each
// run starts a fresh server, loads -keys keys with SET key v PXAT T,
// every one expiring at the same instant T, -ttl after the load began
// (a run whose load takes longer is tried again),
// then polls DBSIZE every -poll until it is 0 and reports the seconds
// from T to the first poll that saw 0 (to within -poll), with the
// server's CPU time over those seconds. Meanwhile one client sends a
// PING every -probe and times its answer: the latency a client sees at
// rest (from the load's end to T, the keys there and none stale) and
// while the keys are reclaimed. -probe 0 sends none; the loops then
// iterate only for the servers' own timers and the DBSIZE polls.
//
//	cd bench && go run ./cmd/kvexpire                     # 1,000,000 keys, 3 runs a server
//	go run ./cmd/kvexpire -probe 0                        # without the PING client
//	go run ./cmd/kvexpire -also before=/tmp/evkv-old      # another evkv build beside
//
// The servers run pinned to CPU 0 (redis-server from Debian's package with
// persistence off; evkv built from ../cmd/evkv), the clients on CPU 1.
// Runs alternate which server goes first; the table gives medians, and
// the ratios are medians of each run's own ratios.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evloop/evloop/bench/internal/hist"
	"github.com/evloop/evloop/bench/internal/proc"
)

type server struct {
	name string
	argv func(port int) []string
}

// result is one run against one server.
type result struct {
	load      time.Duration // the load's length
	atT       int64         // DBSIZE at the first poll after T
	toZero    time.Duration // T to the first poll that saw 0
	cpu       float64       // the server's CPU seconds from T to then
	rest, exp *hist.H       // PING round trips before T, and after it
}

func main() {
	keys := flag.Int("keys", 1000000, "keys loaded")
	ttl := flag.Duration("ttl", 5*time.Second, "from the load's start to the keys' expiry")
	runs := flag.Int("runs", 3, "runs a server")
	poll := flag.Duration("poll", 100*time.Millisecond, "DBSIZE poll interval")
	probe := flag.Duration("probe", time.Millisecond, "PING interval of the latency client (0: none)")
	only := flag.String("servers", "", "comma-separated `names` of the servers to run (default all)")
	pin := flag.Bool("pin", true, "pin servers to CPU 0 and the clients to CPU 1")
	var also []server
	flag.Func("also", "`name=path` of another evkv binary to run in turn (repeatable)", func(v string) error {
		name, bin, ok := strings.Cut(v, "=")
		if !ok || name == "" || bin == "" || name == "redis" || name == "evkv" {
			return errors.New("want name=path with a name other than redis and evkv")
		}
		also = append(also, evkvServer(name, bin))
		return nil
	})
	flag.Parse()
	if *pin && os.Getenv("KVEXPIRE_PINNED") == "" {
		// The clients, this process, on CPU 1: run again under taskset,
		// which pins every thread, where sched_setaffinity here would pin
		// only the calling one.
		taskset, err := exec.LookPath("taskset")
		if err == nil {
			os.Setenv("KVEXPIRE_PINNED", "1")
			err = unix.Exec(taskset, append([]string{"taskset", "-c", "1", os.Args[0]}, os.Args[1:]...), os.Environ())
		}
		fmt.Fprintln(os.Stderr, "kvexpire: pinning to CPU 1:", err)
		os.Exit(1)
	}
	if err := run(*keys, *ttl, *runs, *poll, *probe, *pin, *only, also); err != nil {
		fmt.Fprintln(os.Stderr, "kvexpire:", err)
		os.Exit(1)
	}
}

func evkvServer(name, bin string) server {
	return server{name, func(port int) []string {
		return []string{bin, "--port", strconv.Itoa(port), "--appendonly", "no"}
	}}
}

func run(keys int, ttl time.Duration, runs int, poll, probe time.Duration, pin bool, only string, also []server) error {
	root, err := proc.BenchRoot()
	if err != nil {
		return err
	}
	evkv, err := proc.BuildIn(root+"/..", "./cmd/evkv")
	if err != nil {
		return err
	}
	redisBin, err := exec.LookPath("redis-server")
	if err != nil {
		return errors.New("redis-server is not installed (apt-get install redis-server)")
	}
	servers := append([]server{
		{"redis", func(port int) []string {
			return []string{redisBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", os.TempDir()}
		}},
		evkvServer("evkv", evkv),
	}, also...)
	if only != "" {
		names := strings.Split(only, ",")
		servers = slices.DeleteFunc(servers, func(s server) bool { return !slices.Contains(names, s.name) })
	}
	fmt.Printf("# kvexpire %s: %d keys expiring %v after the load's start, DBSIZE every %v, PING every %v, %d run(s), %s\n",
		time.Now().Format(time.DateOnly), keys, ttl, poll, probe, runs, runtime.Version())
	all := make([][]result, len(servers))
	for r := range runs {
		for i := range servers {
			k := (i + r) % len(servers)
			res, err := runOnce(servers[k], keys, ttl, poll, probe, pin)
			for try := 1; errors.Is(err, errSlowLoad) && try < 3; try++ {
				fmt.Printf("run %d %-8s %v: again\n", r+1, servers[k].name, err)
				res, err = runOnce(servers[k], keys, ttl, poll, probe, pin)
			}
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", servers[k].name, r+1, err)
			}
			fmt.Printf("run %d %-8s load %.2fs, DBSIZE %d at T, 0 after %.2fs, CPU %.2fs; PING p50/p99/max at rest %s, while expiring %s\n",
				r+1, servers[k].name, res.load.Seconds(), res.atT, res.toZero.Seconds(), res.cpu, quantiles(res.rest), quantiles(res.exp))
			all[k] = append(all[k], res)
		}
	}
	fmt.Printf("\n| server | seconds to 0 | ÷ Redis | CPU s | PING p99 ms at rest | PING p99 ms while expiring | PING max ms while expiring |\n")
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|\n")
	for i, srv := range servers {
		rs := all[i]
		ratios := make([]float64, len(rs))
		for j := range rs {
			ratios[j] = rs[j].toZero.Seconds() / all[0][j].toZero.Seconds() // the first server's, Redis's by default
		}
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %s | %s | %s |\n", srv.name,
			proc.MedianOf(rs, func(r result) float64 { return r.toZero.Seconds() }),
			proc.Median(ratios),
			proc.MedianOf(rs, func(r result) float64 { return r.cpu }),
			medianMs(rs, func(r result) *hist.H { return r.rest }, 0.99),
			medianMs(rs, func(r result) *hist.H { return r.exp }, 0.99),
			medianMs(rs, func(r result) *hist.H { return r.exp }, 1))
	}
	return nil
}

func ms(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }

func quantiles(h *hist.H) string {
	if h == nil || h.Count() == 0 {
		return "-"
	}
	return ms(h.Quantile(0.5)) + "/" + ms(h.Quantile(0.99)) + "/" + ms(h.Max()) + " ms"
}

// medianMs is the median over runs of quantile q (1: the maximum) of the
// histogram f picks.
func medianMs(rs []result, f func(result) *hist.H, q float64) string {
	if f(rs[0]) == nil {
		return "-"
	}
	return ms(int64(proc.MedianOf(rs, func(r result) float64 {
		if q == 1 {
			return float64(f(r).Max())
		}
		return float64(f(r).Quantile(q))
	})))
}

// errSlowLoad is a load that took longer than -ttl: the keys began to
// expire before it ended. The run is tried again, twice at most.
var errSlowLoad = errors.New("the load took longer than -ttl")

func runOnce(srv server, keys int, ttl, poll, probe time.Duration, pin bool) (res result, err error) {
	port, err := proc.FreePort()
	if err != nil {
		return res, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd, err := proc.Start(srv.argv(port), addr, pin)
	if err != nil {
		return res, err
	}
	defer proc.Stop(cmd)
	start := time.Now()
	at := start.Add(ttl)
	if err := load(addr, keys, at.UnixMilli()); err != nil {
		return res, err
	}
	res.load = time.Since(start)
	if res.load >= ttl {
		return res, fmt.Errorf("%w: %v", errSlowLoad, res.load.Round(time.Millisecond))
	}
	at = time.UnixMilli(at.UnixMilli()) // the instant the keys expire, to the millisecond

	var rest, exp *hist.H
	stop := make(chan struct{})
	probed := make(chan error, 1)
	if probe > 0 {
		rest, exp = hist.New(), hist.New()
		go func() { probed <- pings(addr, probe, at, rest, exp, stop) }()
	}
	dbsize, err := dialRESP(addr)
	if err != nil {
		return res, err
	}
	defer dbsize.Close()
	time.Sleep(time.Until(at))
	cpu0, err := proc.CPUTime(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	first := true
	for deadline := at.Add(2 * time.Minute); ; {
		n, err := dbsize.int("DBSIZE")
		if err != nil {
			return res, err
		}
		now := time.Now()
		if first {
			res.atT, first = n, false
		}
		if n == 0 {
			res.toZero = now.Sub(at)
			break
		}
		if now.After(deadline) {
			return res, fmt.Errorf("%d keys left 2 minutes after their expiry", n)
		}
		time.Sleep(poll)
	}
	cpu1, err := proc.CPUTime(cmd.Process.Pid)
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	close(stop)
	if probe > 0 {
		if err := <-probed; err != nil {
			return res, err
		}
	}
	res.rest, res.exp = rest, exp
	return res, nil
}

// load sets keys key:0 ... with PXAT at over one pipelined connection,
// its replies read as they come.
func load(addr string, keys int, at int64) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	read := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(c, 1<<20)
		for range keys {
			line, err := r.ReadSlice('\n')
			if err != nil {
				read <- err
				return
			}
			if string(line) != "+OK\r\n" {
				read <- fmt.Errorf("SET answered %q", line)
				return
			}
		}
		read <- nil
	}()
	w := bufio.NewWriterSize(c, 1<<20)
	ms := strconv.FormatInt(at, 10)
	var b []byte
	for i := range keys {
		k := strconv.Itoa(i)
		b = append(b[:0], "*5\r\n$3\r\nSET\r\n$"...)
		b = strconv.AppendInt(b, int64(len(k)+4), 10)
		b = append(b, "\r\nkey:"...)
		b = append(b, k...)
		b = append(b, "\r\n$1\r\nv\r\n$4\r\nPXAT\r\n$"...)
		b = strconv.AppendInt(b, int64(len(ms)), 10)
		b = append(b, "\r\n"...)
		b = append(b, ms...)
		b = append(b, "\r\n"...)
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return <-read
}

// pings sends a PING every interval, each once the answer to the last is
// in, until stop, and records the round trips before at in rest, the
// others in exp. A PING that is late for want of the last answer counts
// from when it was due.
func pings(addr string, interval time.Duration, at time.Time, rest, exp *hist.H, stop <-chan struct{}) error {
	c, err := dialRESP(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	for due := time.Now(); ; due = due.Add(interval) {
		select {
		case <-stop:
			return nil
		default:
		}
		t := proc.WaitDue(due)
		if err := c.simple("PING", "PONG"); err != nil {
			return err
		}
		d := time.Since(t).Nanoseconds()
		if t.Before(at) {
			rest.Record(d)
		} else {
			exp.Record(d)
		}
	}
}

// respConn is a connection for one command at a time.
type respConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRESP(addr string) (*respConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &respConn{c, bufio.NewReader(c)}, nil
}

func (c *respConn) Close() error { return c.c.Close() }

func (c *respConn) reply(cmd string) (string, error) {
	if _, err := io.WriteString(c.c, cmd+"\r\n"); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	return strings.TrimSuffix(line, "\r\n"), err
}

// simple sends cmd, inline, and wants +want.
func (c *respConn) simple(cmd, want string) error {
	line, err := c.reply(cmd)
	if err == nil && line != "+"+want {
		err = fmt.Errorf("%s answered %q", cmd, line)
	}
	return err
}

// int sends cmd, inline, and returns its integer answer.
func (c *respConn) int(cmd string) (int64, error) {
	line, err := c.reply(cmd)
	if err != nil {
		return 0, err
	}
	n, ok := strings.CutPrefix(line, ":")
	if !ok {
		return 0, fmt.Errorf("%s answered %q", cmd, line)
	}
	return strconv.ParseInt(n, 10, 64)
}
