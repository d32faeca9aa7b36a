package main

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/evloop/evloop/bench/internal/hist"
	"github.com/evloop/evloop/bench/internal/proc"
	"github.com/evloop/evloop/bench/internal/subclient"
)

//go:embed bench.graphql
var benchSchema string

type config struct {
	impls                     []string
	runs, triggers, perProc   int
	rates                     []int
	duration, settle, drain   time.Duration
	openTimeout, readyTimeout time.Duration // 0: from the client count
}

// bench is what the measurements share: the binaries, the schema file and
// the NATS server.
type bench struct {
	cfg    config
	bins   map[string]string // evgate, gatebaseline, gateclient
	dirs   []string
	schema string
	ns     *server.Server
	nc     *nats.Conn // the publisher
}

// rest is a server's state with every client subscribed and idle.
type rest struct {
	goroutines, heapMiB, liveMiB, rssMiB float64
	heapKiB, liveKiB, rssKiB             float64 // per connection, over the server before any
	mismatched                           int     // probes not projected onto the selection
	example                              string
}

// phase is one event rate's figures.
type phase struct {
	rate                   int
	events, complete       int   // published; delivered to every subscriber
	expected, delivered    int64 // deliveries
	lastP50, lastP99       float64
	allP50, allP99         float64 // ms
	perSec                 float64 // deliveries per second, from the first publish to the last delivery seen
	cpu, clientCPU         float64 // seconds
	closed, bad, errs      int
	example, serverMetrics string
}

type result struct {
	rest   rest
	phases []phase
}

func newBench(cfg config) (*bench, error) {
	b := &bench{cfg: cfg, bins: map[string]string{}}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/evloop/evloop").Output()
	if err != nil {
		return nil, fmt.Errorf("finding the evloop module: %w", err)
	}
	for _, p := range []struct{ dir, pkg string }{
		{strings.TrimSpace(string(root)), "./cmd/evgate"},
		{"", "github.com/evloop/evloop/bench/cmd/gatebaseline"},
		{"", "github.com/evloop/evloop/bench/cmd/gateclient"},
	} {
		bin, err := proc.BuildIn(p.dir, p.pkg)
		if err != nil {
			b.close()
			return nil, err
		}
		b.dirs = append(b.dirs, filepath.Dir(bin))
		b.bins[filepath.Base(bin)] = bin
	}
	b.schema = filepath.Join(b.dirs[0], "bench.graphql")
	if err := os.WriteFile(b.schema, []byte(benchSchema), 0o644); err != nil {
		b.close()
		return nil, err
	}
	b.ns, err = server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		b.close()
		return nil, err
	}
	go b.ns.Start()
	if !b.ns.ReadyForConnections(10 * time.Second) {
		b.close()
		return nil, errors.New("the NATS server did not start")
	}
	if b.nc, err = nats.Connect(b.ns.ClientURL(), nats.Name("gatebench")); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *bench) close() {
	if b.nc != nil {
		b.nc.Close()
	}
	if b.ns != nil {
		b.ns.Shutdown()
	}
	for _, d := range b.dirs {
		os.RemoveAll(d)
	}
}

// argv is server name's command line: listening on addr, its profiles
// served on debug (evgate serves them apart; the baseline on addr, whatever
// debug is).
func (b *bench) argv(name, addr, debug string) []string {
	switch name {
	case "evloop":
		return []string{b.bins["evgate"], "--listen", addr, "--debug-listen", debug, "--schema", b.schema, "--nats", b.ns.ClientURL(), "--demo=false"}
	case "baseline":
		return []string{b.bins["gatebaseline"], "--listen", addr, "--schema", b.schema, "--nats", b.ns.ClientURL()}
	}
	return nil
}

// measure starts server name, subscribes n clients and runs every phase.
func (b *bench) measure(name string, n, run int) (result, error) {
	var r result
	if b.argv(name, "", "") == nil {
		return r, fmt.Errorf("unknown server %q (evloop, baseline)", name)
	}
	port, err := proc.FreePort()
	if err != nil {
		return r, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	debug := addr
	if name == "evloop" {
		if port, err = proc.FreePort(); err != nil {
			return r, err
		}
		debug = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	log, err := os.CreateTemp("", "gatebench-server-*.log")
	if err != nil {
		return r, err
	}
	defer os.Remove(log.Name())
	defer log.Close()
	srv, err := proc.StartLogged(b.argv(name, addr, debug), addr, false, log)
	if err != nil {
		return r, err
	}
	defer func() {
		proc.Stop(srv)
		reportLog(name, log.Name())
	}()
	time.Sleep(500 * time.Millisecond)
	if err := collect(debug); err != nil {
		return r, err
	}
	rss0, err := proc.RSSKiB(srv.Process.Pid)
	if err != nil {
		return r, err
	}
	m0, err := metrics(addr)
	if err != nil {
		return r, err
	}

	cs, err := b.startClients(addr, n)
	defer func() {
		for _, c := range cs {
			proc.Stop(c.cmd)
		}
	}()
	if err != nil {
		return r, err
	}
	if r.rest, err = b.subscribe(cs, n); err != nil {
		return r, err
	}
	time.Sleep(b.cfg.settle)
	m1, err := metrics(addr)
	if err != nil {
		return r, err
	}
	rss1, err := proc.RSSKiB(srv.Process.Pid)
	if err != nil {
		return r, err
	}
	r.rest.goroutines = m1["go_goroutines"]
	r.rest.heapMiB = m1["go_memstats_heap_inuse_bytes"] / (1 << 20)
	r.rest.rssMiB = float64(rss1) / 1024
	r.rest.heapKiB = (m1["go_memstats_heap_inuse_bytes"] - m0["go_memstats_heap_inuse_bytes"]) / 1024 / float64(n)
	r.rest.rssKiB = float64(rss1-rss0) / float64(n)
	if err := collect(debug); err != nil {
		return r, err
	}
	m2, err := metrics(addr)
	if err != nil {
		return r, err
	}
	r.rest.liveMiB = m2["go_memstats_heap_inuse_bytes"] / (1 << 20)
	r.rest.liveKiB = (m2["go_memstats_heap_inuse_bytes"] - m0["go_memstats_heap_inuse_bytes"]) / 1024 / float64(n)
	fmt.Fprintf(os.Stderr, "run %d %d clients %-8s at rest: %.0f goroutines, heap %.1f MiB (%.2f KiB/conn), after two collections %.1f MiB (%.2f KiB/conn), RSS %.1f MiB (%.2f KiB/conn); %d of %d probes not projected onto the selection %s\n",
		run, n, name, r.rest.goroutines, r.rest.heapMiB, r.rest.heapKiB, r.rest.liveMiB, r.rest.liveKiB, r.rest.rssMiB, r.rest.rssKiB, r.rest.mismatched, n, r.rest.example)

	seq := int64(0)
	for _, rate := range b.cfg.rates {
		p, err := b.phase(srv, addr, cs, n, rate, &seq)
		if err != nil {
			return r, fmt.Errorf("%d/s: %w", rate, err)
		}
		fmt.Fprintf(os.Stderr, "run %d %d clients %-8s %d/s: %d of %d events to every subscriber, %d of %d deliveries; last p50 %.2f p99 %.2f ms, all p50 %.2f p99 %.2f ms; %.0f deliveries/s; CPU server %.2f s, clients %.2f s%s\n",
			run, n, name, rate, p.complete, p.events, p.delivered, p.expected, p.lastP50, p.lastP99, p.allP50, p.allP99, p.perSec, p.cpu, p.clientCPU, p.notes())
		r.phases = append(r.phases, p)
	}
	return r, nil
}

// notes says what went wrong in a phase, if anything.
func (p phase) notes() string {
	var s string
	if p.closed+p.bad+p.errs > 0 {
		s += fmt.Sprintf("; %d connections closed, %d bad messages, %d errors: %s", p.closed, p.bad, p.errs, p.example)
	}
	if p.serverMetrics != "" {
		s += "; server: " + p.serverMetrics
	}
	return s
}

// reportLog copies the server's warnings and errors to stderr.
func reportLog(name, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "WARN") || strings.Contains(line, "ERROR") || strings.Contains(line, "panic") {
			if n++; n <= 5 {
				fmt.Fprintf(os.Stderr, "  %s log: %s\n", name, line)
			}
		}
	}
	if n > 5 {
		fmt.Fprintf(os.Stderr, "  %s log: %d more such lines\n", name, n-5)
	}
}

// collect makes the server collect garbage twice, through its
// /debug/pprof/heap?gc=1 (both servers serve net/http/pprof): what
// sync.Pools hold survives one collection.
func collect(addr string) error {
	c := http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for range 2 {
		resp, err := c.Get("http://" + addr + "/debug/pprof/heap?gc=1")
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s/debug/pprof/heap: %s", addr, resp.Status)
		}
	}
	return nil
}

// metrics reads a server's /metrics: the value of each metric without
// labels.
func metrics(addr string) (map[string]float64, error) {
	c := http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) != 2 || strings.HasPrefix(f[0], "#") || strings.Contains(f[0], "{") {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			m[f[0]] = v
		}
	}
	for _, k := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes"} {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("%s/metrics has no %s", addr, k)
		}
	}
	return m, s.Err()
}

// client is one gateclient process.
type client struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // its standard output
	conns int         // its share
	first int         // index of its first connection
}

func (c *client) pid() int { return c.cmd.Process.Pid }

// line waits for c's next line.
func (c *client) line(timeout time.Duration) (string, error) {
	select {
	case l, ok := <-c.lines:
		if !ok {
			return "", fmt.Errorf("client of connections %d.. exited: %v", c.first, c.cmd.Wait())
		}
		return l, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("client of connections %d.. said nothing for %v", c.first, timeout)
	}
}

// ask sends cmd and decodes the JSON line that answers it into v.
func (c *client) ask(cmd string, v any) error {
	if _, err := fmt.Fprintln(c.stdin, cmd); err != nil {
		return err
	}
	l, err := c.line(60 * time.Second)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(l), v)
}

// startClients starts the client processes for n connections to addr and
// waits until each has opened and subscribed its share.
func (b *bench) startClients(addr string, n int) ([]*client, error) {
	var cs []*client
	for first, i := 0, 0; first < n; first, i = first+b.cfg.perProc, i+1 {
		k := min(b.cfg.perProc, n-first)
		if i+2 > 254 {
			return cs, fmt.Errorf("%d clients need more than 253 source addresses", n)
		}
		cmd := exec.Command(b.bins["gateclient"], "-addr", addr, "-conns", strconv.Itoa(k), "-first", strconv.Itoa(first),
			"-src", fmt.Sprintf("127.0.0.%d", i+2), "-triggers", strconv.Itoa(b.cfg.triggers), "-timeout", "30m")
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return cs, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return cs, err
		}
		if err := cmd.Start(); err != nil {
			return cs, err
		}
		c := &client{cmd: cmd, stdin: stdin, lines: make(chan string, 16), conns: k, first: first}
		go func() {
			s := bufio.NewScanner(stdout)
			s.Buffer(nil, 64<<20)
			for s.Scan() {
				c.lines <- s.Text()
			}
			close(c.lines)
		}()
		cs = append(cs, c)
	}
	timeout := b.cfg.openTimeout
	if timeout == 0 {
		timeout = 60*time.Second + time.Duration(n)*5*time.Millisecond
	}
	for _, c := range cs {
		l, err := c.line(timeout)
		if err != nil {
			return cs, err
		}
		if l != fmt.Sprintf("open %d", c.conns) {
			return cs, fmt.Errorf("client said %q, want open %d", l, c.conns)
		}
	}
	return cs, nil
}

// subscribe publishes probes on every trigger until every client says
// every subscription has received one.
func (b *bench) subscribe(cs []*client, n int) (rest, error) {
	var r rest
	timeout := b.cfg.readyTimeout
	if timeout == 0 {
		timeout = 60*time.Second + time.Duration(n)*5*time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	ready := make([]bool, len(cs))
	left := len(cs)
	var buf []byte
	for probe := int64(-1); left > 0; probe-- {
		if time.Now().After(deadline) {
			return r, fmt.Errorf("%d client processes still had subscriptions without a probe after %v", left, timeout)
		}
		for k := range b.cfg.triggers {
			buf = subclient.AppendEvent(buf[:0], k, probe, time.Now().UnixNano())
			if err := b.nc.Publish(subclient.Subject(k), buf); err != nil {
				return r, err
			}
		}
		b.nc.Flush()
		wait := time.After(200 * time.Millisecond)
	poll:
		for {
			for i, c := range cs {
				if ready[i] {
					continue
				}
				select {
				case l, ok := <-c.lines:
					if !ok {
						return r, fmt.Errorf("client exited: %v", c.cmd.Wait())
					}
					var rd subclient.Ready
					if j, ok := strings.CutPrefix(l, "ready "); !ok || json.Unmarshal([]byte(j), &rd) != nil {
						return r, fmt.Errorf("client said %q, want ready", l)
					}
					ready[i] = true
					left--
					r.mismatched += rd.Mismatched
					if r.example == "" && rd.Example != "" {
						r.example = "(e.g. " + rd.Example + ")"
					}
				default:
				}
			}
			select {
			case <-wait:
				break poll
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	return r, nil
}

// phase publishes events at rate per second for the configured duration
// and collects every delivery.
func (b *bench) phase(srv *exec.Cmd, addr string, cs []*client, n, rate int, seq *int64) (phase, error) {
	p := phase{rate: rate}
	var discard subclient.Report
	for _, c := range cs { // forget late probes
		if err := c.ask("report", &discard); err != nil {
			return p, err
		}
	}
	subs := make([]int64, b.cfg.triggers) // subscribers per trigger
	for i := range n {
		subs[i%b.cfg.triggers]++
	}
	cpuS0, _ := proc.CPUTime(srv.Process.Pid)
	cpuC0 := clientsCPU(cs)
	p.events = int(float64(rate) * b.cfg.duration.Seconds())
	first := *seq
	interval := time.Second / time.Duration(rate)
	var buf []byte
	t0 := time.Now()
	for e := range p.events {
		if d := time.Until(t0.Add(time.Duration(e) * interval)); d > 0 {
			time.Sleep(d)
		}
		k := e % b.cfg.triggers
		buf = subclient.AppendEvent(buf[:0], k, first+int64(e), time.Now().UnixNano())
		if err := b.nc.Publish(subclient.Subject(k), buf); err != nil {
			return p, err
		}
		p.expected += subs[k]
	}
	*seq += int64(p.events)
	b.nc.Flush()
	published := time.Now()

	var got, seen int64 = 0, -1
	progress := time.Now()
	for {
		got = 0
		for _, c := range cs {
			var cnt subclient.Count
			if err := c.ask("count", &cnt); err != nil {
				return p, err
			}
			got += cnt.Received
		}
		now := time.Now()
		if got != seen {
			seen, progress = got, now
		}
		if got >= p.expected || now.Sub(progress) > 10*time.Second || now.Sub(published) > b.cfg.drain {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := progress.Sub(t0)
	cpuS1, _ := proc.CPUTime(srv.Process.Pid)
	p.cpu, p.clientCPU = cpuS1-cpuS0, clientsCPU(cs)-cpuC0
	p.perSec = float64(got) / elapsed.Seconds()

	type stat struct{ count, max int64 }
	events := map[int64]*stat{}
	all := hist.New()
	for _, c := range cs {
		var rep subclient.Report
		if err := c.ask("report", &rep); err != nil {
			return p, err
		}
		p.delivered += rep.Received
		p.closed, p.bad, p.errs = p.closed+rep.Closed, p.bad+rep.Bad, p.errs+rep.Errors
		if p.example == "" {
			p.example = rep.Example
		}
		all.Merge(hist.FromSparse(rep.Latency))
		for _, e := range rep.Events {
			s := events[e[0]]
			if s == nil {
				s = &stat{}
				events[e[0]] = s
			}
			s.count += e[1]
			s.max = max(s.max, e[2])
		}
	}
	var lasts []float64
	for e := range p.events {
		if s := events[first+int64(e)]; s != nil && s.count == subs[e%b.cfg.triggers] {
			lasts = append(lasts, float64(s.max)/1e6)
		}
	}
	p.complete = len(lasts)
	p.lastP50, p.lastP99 = quantile(lasts, 0.50), quantile(lasts, 0.99)
	p.allP50, p.allP99 = float64(all.Quantile(0.50))/1e6, float64(all.Quantile(0.99))/1e6
	if m, err := metrics(addr); err == nil {
		for _, k := range []string{"evgate_events_dropped_total", "evgate_slow_consumers_total", "evgate_events_invalid_total"} {
			if m[k] > 0 {
				p.serverMetrics += fmt.Sprintf("%s %.0f ", k, m[k])
			}
		}
	}
	return p, nil
}

// quantile returns the nearest-rank quantile q of v (0 if empty).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(float64(len(s))*q+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func clientsCPU(cs []*client) float64 {
	var t float64
	for _, c := range cs {
		if v, err := proc.CPUTime(c.pid()); err == nil {
			t += v
		}
	}
	return t
}
