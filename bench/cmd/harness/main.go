// Command harness runs the echo servers of bench/ side by side under the
// same load and prints one table: throughput, round-trip latency, the
// server's CPU time and messages per server CPU-second, and, for idle
// connections, resident memory per connection and goroutines.
//
//	cd bench && go run ./cmd/harness                      # every scenario, a few minutes
//	go run ./cmd/harness -quick -impls net                # well under a minute
//	go run ./cmd/harness -impls net,gnet,c-epoll -conns 1000 -sizes 64 -modes pingpong -idle 0 -runs 3
//
// Each run starts a fresh server process (bin/echoserver or the C server,
// built first), optionally pinned with taskset to other CPUs than the load
// generators, waits for its port, runs bin/loadgen (several processes when
// the connections do not fit one process's descriptors), and reads the
// server's utime+stime from /proc/PID/stat at the edges of the measured
// window. Implementations alternate between runs; the table shows medians.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/evloop/evloop/bench/internal/load"
	"github.com/evloop/evloop/bench/internal/proc"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

// cImpl is the name of the C epoll server in -impls and in the table.
const cImpl = "c-epoll"

type harness struct {
	root, binDir string
	loadPin      []string // command prefix pinning the load generators
	serverPin    []string // the same for servers
	loops        int
	log          io.Writer
	tmp          string
	srcNext      int // next source address, counted from 127.0.0.1
	failures     []string
	records      []record
}

func (h *harness) bin(name string) string { return filepath.Join(h.binDir, name) }

type options struct {
	impls, ref           string
	sizes, conns, modes  string
	idle                 string
	depth                int
	warmup, duration     time.Duration
	runs                 int
	pin                  string
	serverCPUs, loadCPUs string
	loops                int
	perProc, perSrc      int
	quick                bool
	binDir, jsonOut      string
	skipBuild, listImpls bool
	settle               time.Duration
	noisy                float64
	noisyRetries         int
}

func run(args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("harness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.impls, "impls", "all", "comma-separated implementations; all = every one echoserver -list knows, and "+cImpl)
	fs.StringVar(&o.ref, "ref", "", "reference implementation for the ratios (default evloop when present, else net)")
	fs.StringVar(&o.sizes, "sizes", "64,1024", "message sizes in bytes")
	fs.StringVar(&o.conns, "conns", "1,100,1000,8192", "connection counts for the echo scenarios")
	fs.StringVar(&o.modes, "modes", "pingpong,pipelined", "echo modes: pingpong, pipelined; empty for none")
	fs.StringVar(&o.idle, "idle", "10000", "connection counts for the idle scenario; 0 or empty for none")
	fs.IntVar(&o.depth, "depth", 16, "messages in flight per connection, pipelined")
	fs.DurationVar(&o.warmup, "warmup", 300*time.Millisecond, "load before each measured window")
	fs.DurationVar(&o.duration, "duration", time.Second, "measured window of each run")
	fs.DurationVar(&o.settle, "settle", 500*time.Millisecond, "idle: wait this long after the last connection echoed before reading RSS")
	fs.IntVar(&o.runs, "runs", 1, "runs of every scenario and implementation; the table shows medians")
	fs.StringVar(&o.pin, "pin", "auto", "pin servers and load generators to different CPUs with taskset: auto (when there are 2+ CPUs), on, off")
	fs.StringVar(&o.serverCPUs, "server-cpus", "0", "CPU list for servers when pinned (taskset -c)")
	fs.StringVar(&o.loadCPUs, "load-cpus", "1", "CPU list for load generators when pinned")
	fs.IntVar(&o.loops, "loops", 0, "event loops per server (0: as many as the server's CPUs)")
	fs.IntVar(&o.perProc, "per-proc", 16000, "connections per loadgen process at most (a process may hold 20,000 descriptors)")
	fs.IntVar(&o.perSrc, "per-src", 20000, "connections per source address at most")
	fs.BoolVar(&o.quick, "quick", false, "tiny counts, for CI: 64 B, 1 and 10 connections, 200ms windows, 50 idle connections")
	fs.StringVar(&o.binDir, "bin", "", "where to build the binaries (default bench/bin)")
	fs.BoolVar(&o.skipBuild, "no-build", false, "use the binaries already in -bin")
	fs.StringVar(&o.jsonOut, "json", "", "also write every run's figures to this file as JSON")
	fs.Float64Var(&o.noisy, "noisy", 0.10, "a run in which the rest of the machine used more than this share of one CPU is noisy")
	fs.IntVar(&o.noisyRetries, "noisy-retries", 2, "run a noisy echo run again, up to this many times (the last try counts)")
	fs.BoolVar(&o.listImpls, "list", false, "build, print the implementations and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.quick {
		o.sizes, o.conns, o.modes, o.idle = "64", "1,10", "pingpong,pipelined", "50"
		o.depth, o.warmup, o.duration, o.settle = 4, 50*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond
		o.noisyRetries = 0
		if o.runs > 1 {
			o.runs = 1
		}
	}
	if o.runs < 1 {
		return fmt.Errorf("-runs must be at least 1")
	}

	root, err := proc.BenchRoot()
	if err != nil {
		return err
	}
	h := &harness{root: root, binDir: o.binDir, log: stderr, srcNext: 1}
	if h.binDir == "" {
		h.binDir = filepath.Join(root, "bin")
	}
	if h.binDir, err = filepath.Abs(h.binDir); err != nil {
		return err
	}
	if h.tmp, err = os.MkdirTemp("", "evloop-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(h.tmp)

	wantC := o.impls == "all" || slices.Contains(strings.Split(o.impls, ","), cImpl)
	if !o.skipBuild {
		if err := h.build(wantC); err != nil {
			return err
		}
	}
	known, err := h.implementations()
	if err != nil {
		return err
	}
	impls := known
	if o.impls != "all" {
		impls = nil
		for _, n := range strings.Split(o.impls, ",") {
			n = strings.TrimSpace(n)
			if !slices.Contains(known, n) {
				return fmt.Errorf("unknown implementation %q; have %v", n, known)
			}
			impls = append(impls, n)
		}
	}
	if o.listImpls {
		fmt.Fprintln(stdout, strings.Join(known, "\n"))
		return nil
	}
	ref := o.ref
	if ref == "" {
		ref = "net"
		if slices.Contains(impls, "evloop") {
			ref = "evloop"
		}
	}

	pinned, pinNote, err := h.setupPinning(o)
	if err != nil {
		return err
	}
	h.loops = o.loops
	if h.loops <= 0 {
		h.loops = runtime.NumCPU()
		if pinned {
			h.loops = cpuCount(o.serverCPUs)
		}
	}

	scens, err := scenarios(o)
	if err != nil {
		return err
	}
	start := time.Now()
	for _, sc := range scens {
		for r := 0; r < o.runs; r++ {
			// Alternate: each run starts with the next implementation.
			for i := range impls {
				impl := impls[(i+r)%len(impls)]
				rec := h.runOne(sc, impl, r, o)
				for try := 0; try < o.noisyRetries && rec.Err == "" && rec.WindowS > 0 && rec.OtherCPUs/rec.WindowS > o.noisy; try++ {
					fmt.Fprintf(h.log, "  noisy (other %.0f%% of a CPU): again\n", 100*rec.OtherCPUs/rec.WindowS)
					rec = h.runOne(sc, impl, r, o)
				}
				h.records = append(h.records, rec)
			}
		}
	}
	elapsed := time.Since(start)

	fmt.Fprintf(stdout, "evloop bench: %d CPUs, Go %s, %s; %s; server loops=%d; %d run(s) each, medians; %v measured window, %v warm-up; pipelined depth %d; ratios against %s; took %v\n\n",
		runtime.NumCPU(), strings.TrimPrefix(runtime.Version(), "go"), time.Now().Format("2006-01-02"), pinNote, h.loops, o.runs, o.duration, o.warmup, o.depth, ref, elapsed.Round(time.Second))
	printTable(stdout, h.records, scens, impls, ref)
	if len(h.failures) > 0 {
		fmt.Fprintln(stdout, "\nfailures:")
		for _, f := range h.failures {
			fmt.Fprintln(stdout, "  "+f)
		}
	}
	if o.jsonOut != "" {
		if err := writeJSON(o.jsonOut, h.records); err != nil {
			return err
		}
	}
	if len(h.failures) > 0 {
		return fmt.Errorf("%d run(s) failed", len(h.failures))
	}
	return nil
}

func (h *harness) build(withC bool) error {
	if err := os.MkdirAll(h.binDir, 0o755); err != nil {
		return err
	}
	steps := [][]string{
		{"go", "build", "-o", h.bin("echoserver"), "./cmd/echoserver"},
		{"go", "build", "-o", h.bin("loadgen"), "./cmd/loadgen"},
	}
	if withC {
		steps = append(steps, []string{"cc", "-O2", "-o", h.bin("epoll_echo"), "c/epoll_echo.c"})
	}
	for _, s := range steps {
		fmt.Fprintln(h.log, "build:", strings.Join(s, " "))
		cmd := exec.Command(s[0], s[1:]...)
		cmd.Dir = h.root
		if out, err := cmd.CombinedOutput(); err != nil {
			if s[0] == "cc" {
				fmt.Fprintf(h.log, "build: the C server does not build, leaving it out: %v\n%s", err, out)
				continue
			}
			return fmt.Errorf("%s: %v\n%s", strings.Join(s, " "), err, out)
		}
	}
	return nil
}

// implementations asks echoserver which implementations it has, and adds
// the C server when its binary is there.
func (h *harness) implementations() ([]string, error) {
	out, err := exec.Command(h.bin("echoserver"), "-list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s -list: %v", h.bin("echoserver"), err)
	}
	names := strings.Fields(string(out))
	if _, err := os.Stat(h.bin("epoll_echo")); err == nil {
		names = append(names, cImpl)
	}
	return names, nil
}

func (h *harness) setupPinning(o options) (bool, string, error) {
	pin := false
	switch o.pin {
	case "on":
		pin = true
	case "off":
	case "auto":
		pin = runtime.NumCPU() >= 2
	default:
		return false, "", fmt.Errorf("-pin is auto, on or off")
	}
	if pin {
		if _, err := exec.LookPath("taskset"); err != nil {
			if o.pin == "on" {
				return false, "", fmt.Errorf("-pin on needs taskset (util-linux)")
			}
			return false, "not pinned (no taskset)", nil
		}
		h.serverPin = []string{"taskset", "-c", o.serverCPUs}
		h.loadPin = []string{"taskset", "-c", o.loadCPUs}
		return true, fmt.Sprintf("pinned with taskset: servers on CPU %s, load generators on CPU %s", o.serverCPUs, o.loadCPUs), nil
	}
	return false, "not pinned: servers and load generators share every CPU", nil
}

// cpuCount counts the CPUs in a taskset list such as "0", "0,2" or "0-3".
func cpuCount(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, ok := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		if err1 != nil {
			continue
		}
		b := a
		if ok {
			if v, err := strconv.Atoi(strings.TrimSpace(hi)); err == nil {
				b = v
			}
		}
		if b >= a {
			n += b - a + 1
		}
	}
	return max(n, 1)
}

// scenario is one row group of the table.
type scenario struct {
	name  string
	mode  load.Mode
	size  int
	conns int
	depth int
}

func scenarios(o options) ([]scenario, error) {
	ints := func(flagName, s string) ([]int, error) {
		var v []int
		for _, f := range strings.Split(s, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			n, err := strconv.Atoi(f)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("-%s: bad number %q", flagName, f)
			}
			if n > 0 {
				v = append(v, n)
			}
		}
		return v, nil
	}
	sizes, err := ints("sizes", o.sizes)
	if err != nil {
		return nil, err
	}
	conns, err := ints("conns", o.conns)
	if err != nil {
		return nil, err
	}
	idle, err := ints("idle", o.idle)
	if err != nil {
		return nil, err
	}
	// The server is one process: it cannot hold more connections than its
	// descriptor limit (the same as ours) allows.
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil {
		most := int(rl.Cur) - 100
		for _, c := range append(slices.Clone(conns), idle...) {
			if c > most {
				return nil, fmt.Errorf("%d connections: a server process may hold %d descriptors, so at most about %d connections", c, rl.Cur, most)
			}
		}
	}
	var out []scenario
	for _, m := range strings.Split(o.modes, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		mode, err := load.ParseMode(m)
		if err != nil || mode == load.Idle {
			return nil, fmt.Errorf("-modes: %q is not pingpong or pipelined", m)
		}
		for _, size := range sizes {
			for _, c := range conns {
				sc := scenario{mode: mode, size: size, conns: c, depth: 1}
				label := "pingpong"
				if mode == load.Pipelined {
					sc.depth = o.depth
					label = fmt.Sprintf("pipelined×%d", o.depth)
				}
				sc.name = fmt.Sprintf("%s %s c=%d", label, sizeName(size), c)
				out = append(out, sc)
			}
		}
	}
	for _, c := range idle {
		out = append(out, scenario{name: fmt.Sprintf("idle c=%d", c), mode: load.Idle, size: 64, conns: c, depth: 1})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenarios selected")
	}
	return out, nil
}

func sizeName(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%dKiB", n/1024)
	}
	return fmt.Sprintf("%dB", n)
}
