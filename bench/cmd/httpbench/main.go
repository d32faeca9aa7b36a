// Command httpbench compares HTTP/1.1 servers side by side with wrk:
// evloop's http1 against net/http, fasthttp, gnet (parsing every request)
// and nbio's nbhttp, all built into cmd/httpserver, and, as "c" in -impls,
// c/http_plaintext.c: a minimal C server that counts heads and answers
// them, the floor of a server that reads and writes once per wake-up
// (built with cc; run httpbench within bench/).
//
//	go run ./cmd/httpbench -runs 3 -duration 10s        # throughput and efficiency
//	go run ./cmd/httpbench -idle 10000                  # memory of idle connections
//	go run ./cmd/httpbench -tls -impls evloop,nethttp,fasthttp -pipeline off   # over HTTPS
//
// For each run, configuration and server in turn (round robin, so that
// the machine's noise falls on all alike), a fresh server is started, wrk
// warms it up for a second, then measures: requests per second, p50 and
// p99 latency, and the server's CPU time from /proc/PID/stat, giving
// requests per server CPU-second, and that time split into the server's
// own (user) and the kernel's work for it (system), per request. Medians
// of the runs are printed as markdown tables with each peer's ratio to
// evloop.
//
// -idle N opens N keep-alive connections per server, each making one
// request, from client processes of this binary spread over source
// addresses 127.0.0.2, 127.0.0.3, … (a process may hold 20,000 fds here),
// and reports the server's resident memory per connection, again after
// the server collected its garbage and gave the pages back
// (debug.FreeOSMemory, through its side listener), and its goroutines.
//
// -tls runs everything over HTTPS (TLS 1.3, an ECDSA P-256 certificate
// made for the run) with the servers that serve it: evloop, nethttp,
// fasthttp and nbio (with its own fork of crypto/tls); wrk negotiates
// HTTP/1.1.
package main

import (
	"bufio"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/evloop/evloop/bench/internal/proc"
	"github.com/evloop/evloop/bench/internal/serve"
)

// pipelineScript makes wrk send 16 requests per write.
const pipelineScript = `
init = function(args)
  local r = {}
  for i = 1, 16 do r[i] = wrk.format(nil, wrk.path) end
  req = table.concat(r)
end
request = function() return req end
`

// config is one wrk load.
type config struct {
	conns    int
	pipeline bool
	path     string
	rate     float64 // an open load of this many requests a second (openLoad), not wrk's
}

func (c config) String() string {
	s := fmt.Sprintf("%s, %d connections", c.path, c.conns)
	if c.pipeline {
		s += ", 16 pipelined"
	}
	if c.rate > 0 {
		s += fmt.Sprintf(", an open load of %.0f requests a second", c.rate)
	}
	return s
}

// result is one measurement.
type result struct {
	rps, eff, p50, p99 float64 // eff: requests per server CPU-second; latencies in ms
	user, system       float64 // the server's CPU time per request, in ns
	errors             string  // what wrk reported as errors, if anything
}

// cpuUse is a server's CPU time so far, in seconds.
type cpuUse struct{ user, system float64 }

func serverCPU(pid int) (cpuUse, error) {
	u, s, err := proc.CPUTimes(pid)
	return cpuUse{u, s}, err
}

// setCPU sets r's figures of the server's CPU time between before and
// after, over d at r.rps requests a second.
func (r *result) setCPU(before, after cpuUse, d time.Duration) {
	n := r.rps * d.Seconds()
	u, s := after.user-before.user, after.system-before.system
	if n <= 0 || u+s <= 0 {
		return
	}
	r.eff = n / (u + s)
	r.user, r.system = u*1e9/n, s*1e9/n
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-client" {
		idleClient(os.Args[2:])
		return
	}
	impls := flag.String("impls", "evloop,gnet,fasthttp,nbio,nethttp",
		`servers to compare; "label=impl flag ..." runs httpserver's impl with more flags under label ("nap=evloop -evloop-nap=20us")`)
	runs := flag.Int("runs", 3, "runs of each measurement (medians are reported)")
	duration := flag.Duration("duration", 10*time.Second, "wrk duration of each measurement")
	conns := flag.String("conns", "50,256", "connection counts")
	paths := flag.String("paths", "/plaintext", "paths to load")
	pipeline := flag.String("pipeline", "off,on", `without and/or with 16 pipelined requests ("": no wrk loads, -rate's alone)`)
	idle := flag.Int("idle", 0, "measure memory of this many idle connections instead")
	pin := flag.Bool("pin", false, "pin the server to CPU 0 (wrk gets the other)")
	useTLS := flag.Bool("tls", false, "over HTTPS (evloop, nethttp, fasthttp, nbio), with a certificate made for the run")
	rates := flag.String("rate", "", "also open loads of these many requests a second, comma-separated, unpipelined (openLoad: latency at one load for all)")
	flag.Parse()

	names := strings.Split(*impls, ",")
	bin, err := buildServer(names)
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(filepath.Dir(bin))
	if *useTLS {
		if err := proc.MakeCertificate(filepath.Dir(bin)); err != nil {
			fail(err)
		}
		tlsDir = filepath.Dir(bin)
	}
	if *idle > 0 {
		if err := idleRun(bin, names, *idle); err != nil {
			fail(err)
		}
		return
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		fail(fmt.Errorf("wrk not found: install Debian's wrk package"))
	}
	var configs []config
	for _, p := range strings.Split(*paths, ",") {
		for _, pl := range strings.Split(*pipeline, ",") {
			if pl == "" {
				break // -pipeline "": only the open loads of -rate
			}
			for _, c := range strings.Split(*conns, ",") {
				n, _ := strconv.Atoi(c)
				configs = append(configs, config{conns: n, pipeline: pl == "on", path: p})
			}
		}
		for _, r := range strings.Split(*rates, ",") {
			rate, _ := strconv.ParseFloat(r, 64)
			for _, c := range strings.Split(*conns, ",") {
				if n, _ := strconv.Atoi(c); rate > 0 {
					configs = append(configs, config{conns: n, path: p, rate: rate})
				}
			}
		}
	}
	script, err := os.CreateTemp("", "pipeline-*.lua")
	if err != nil {
		fail(err)
	}
	script.WriteString(pipelineScript)
	script.Close()
	defer os.Remove(script.Name())

	all := map[config]map[string][]result{}
	for run := 1; run <= *runs; run++ {
		for _, cfg := range configs {
			for _, name := range names {
				r, err := measure(bin, name, cfg, *duration, script.Name(), *pin)
				if err != nil {
					fail(fmt.Errorf("%s, %v: %w", name, cfg, err))
				}
				fmt.Fprintf(os.Stderr, "run %d %v %-9s %10.0f req/s %8.0f req/CPU-s (user %.0f, system %.0f ns/req) p50 %.3f p99 %.3f ms %s\n",
					run, cfg, name, r.rps, r.eff, r.user, r.system, r.p50, r.p99, r.errors)
				if all[cfg] == nil {
					all[cfg] = map[string][]result{}
				}
				all[cfg][name] = append(all[cfg][name], r)
			}
		}
	}
	pipelined := false
	for _, cfg := range configs {
		printTable(cfg, names, all[cfg], *runs)
		pipelined = pipelined || cfg.pipeline
	}
	if pipelined {
		fmt.Println("\nNo latency for pipelined loads: wrk times each batch of 16 as one request, then")
		fmt.Println("corrects for coordinated omission with an interval 16 times too short, so its")
		fmt.Println("percentiles are skewed, and read 0 when the correction's entries fall below the")
		fmt.Println("lowest sample.")
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "httpbench:", err)
	os.Exit(1)
}

// buildServer builds cmd/httpserver into a temporary directory, and the C
// server beside it if names has "c".
func buildServer(names []string) (string, error) {
	bin, err := proc.Build("github.com/evloop/evloop/bench/cmd/httpserver")
	if err != nil {
		return "", err
	}
	for _, name := range names {
		if impl, _ := implOf(name); impl == "c" {
			root, err := proc.BenchRoot()
			src := filepath.Join(root, "c", "http_plaintext.c")
			if err == nil {
				var out []byte
				out, err = exec.Command("cc", "-O2", "-o", cServer(bin), src).CombinedOutput()
				if err != nil {
					err = fmt.Errorf("building %s: %v\n%s", src, err, out)
				}
			}
			if err != nil {
				os.RemoveAll(filepath.Dir(bin))
				return "", err
			}
			break
		}
	}
	return bin, nil
}

// cServer is where buildServer puts the C server, beside httpserver.
func cServer(bin string) string { return filepath.Join(filepath.Dir(bin), "http_plaintext") }

// implOf splits a name of -impls into the server and its further flags:
// "nap=evloop -evloop-nap=20us" is evloop with -evloop-nap=20us.
func implOf(name string) (impl, flags string) {
	if label, spec, ok := strings.Cut(name, "="); ok && label != "" {
		impl, flags, _ = strings.Cut(strings.TrimSpace(spec), " ")
		return impl, flags
	}
	return name, ""
}

func startServer(bin, name string, pin bool, debug bool) (*exec.Cmd, string, string, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, "", "", err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	impl, flags := implOf(name)
	argv := append([]string{bin, "-impl", impl, "-addr", addr}, strings.Fields(flags)...)
	if tlsDir != "" {
		argv = append(argv, "-tls-cert", filepath.Join(tlsDir, "cert.pem"), "-tls-key", filepath.Join(tlsDir, "key.pem"))
	}
	if impl == "c" {
		if debug {
			return nil, "", "", fmt.Errorf("the C server has no debug address (goroutines) for -idle")
		}
		argv = append([]string{cServer(bin), "-addr", addr}, strings.Fields(flags)...)
	}
	debugAddr := ""
	if debug {
		dport, err := proc.FreePort()
		if err != nil {
			return nil, "", "", err
		}
		debugAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(dport))
		argv = append(argv, "-debug-addr", debugAddr)
	}
	cmd, err := proc.Start(argv, addr, pin)
	return cmd, addr, debugAddr, err
}

// measure runs one wrk load, or an open load, against a fresh server.
func measure(bin, name string, cfg config, d time.Duration, script string, pin bool) (result, error) {
	cmd, addr, _, err := startServer(bin, name, pin, false)
	if err != nil {
		return result{}, err
	}
	defer proc.Stop(cmd)
	if cfg.rate > 0 {
		return measureOpen(cmd, addr, cfg, d)
	}
	url := scheme() + addr + cfg.path
	args := []string{"-t1", "-c", strconv.Itoa(cfg.conns), "--latency"}
	if cfg.pipeline {
		args = append(args, "-s", script)
	}
	if _, err := wrk(append(args, "-d", "1s", url)); err != nil { // warm up
		return result{}, err
	}
	before, err := serverCPU(cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	out, err := wrk(append(args, "-d", d.String(), url))
	if err != nil {
		return result{}, err
	}
	after, err := serverCPU(cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	r, err := parseWrk(out)
	if err != nil {
		return result{}, err
	}
	r.setCPU(before, after, d)
	return r, nil
}

func wrk(args []string) (string, error) {
	out, err := exec.Command("wrk", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("wrk %v: %v\n%s", args, err, out)
	}
	return string(out), nil
}

var (
	rpsRE     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	latencyRE = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)\s*$`)
	errorsRE  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)`)
)

// parseWrk reads wrk's requests per second and latency percentiles (ms).
func parseWrk(out string) (result, error) {
	var r result
	m := rpsRE.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no Requests/sec in wrk's output:\n%s", out)
	}
	if e := errorsRE.FindString(out); e != "" && !strings.Contains(e, "connect 0, read 0, write 0, timeout 0") {
		// Reported with the figures, not fatal: a server that drops a
		// connection under load has its figures marked, not the run lost.
		r.errors = e
	}
	r.rps, _ = strconv.ParseFloat(m[1], 64)
	for _, l := range latencyRE.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(l[2], 64)
		switch l[3] {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		}
		if l[1] == "50" {
			r.p50 = v
		} else {
			r.p99 = v
		}
	}
	return r, nil
}

func printTable(cfg config, names []string, rs map[string][]result, runs int) {
	fmt.Printf("\n### %v (medians of %d runs)\n\n", cfg, runs)
	fmt.Println("| server | req/s | evloop ÷ it | req per server CPU-s | evloop ÷ it | user ns/req | system ns/req | p50 ms | p99 ms |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	med := func(name string, f func(result) float64) float64 { return proc.MedianOf(rs[name], f) }
	rps := func(r result) float64 { return r.rps }
	eff := func(r result) float64 { return r.eff }
	ours, ourEff := med("evloop", rps), med("evloop", eff)
	for _, name := range names {
		label := name
		for _, r := range rs[name] {
			if r.errors != "" {
				label = name + " (wrk: " + r.errors + ")"
			}
		}
		p50, p99 := "n/a", "n/a"
		if !cfg.pipeline {
			p50 = fmt.Sprintf("%.3f", med(name, func(r result) float64 { return r.p50 }))
			p99 = fmt.Sprintf("%.3f", med(name, func(r result) float64 { return r.p99 }))
		}
		user := med(name, func(r result) float64 { return r.user })
		system := med(name, func(r result) float64 { return r.system })
		fmt.Printf("| %s | %.0f | %.2f | %.0f | %.2f | %.0f | %.0f | %s | %s |\n", label,
			med(name, rps), ratio(ours, med(name, rps)), med(name, eff), ratio(ourEff, med(name, eff)), user, system, p50, p99)
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// idleRun measures the memory of n idle kept-alive connections per
// server.
func idleRun(bin string, names []string, n int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("\n### %d idle keep-alive connections, one request each\n\n", n)
	fmt.Println("| server | resident KiB before | after | KiB per connection | after a collection | goroutines before | after |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, name := range names {
		if err := idleOne(bin, self, name, n); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

const perClient = 9000 // connections per client process and source address

// idleClients counts the client processes started, each from a source
// address of its own: the connections of one server's run stay in
// TIME_WAIT, holding their ports, while the next server's are opened.
var idleClients int

func idleOne(bin, self, name string, n int) error {
	cmd, addr, debugAddr, err := startServer(bin, name, false, true)
	if err != nil {
		return err
	}
	defer proc.Stop(cmd)
	time.Sleep(500 * time.Millisecond)
	g0, err := serve.Goroutines(debugAddr)
	if err != nil {
		return err
	}
	rss0, err := proc.RSSKiB(cmd.Process.Pid)
	if err != nil {
		return err
	}
	var clients []*exec.Cmd
	defer func() {
		for _, c := range clients {
			proc.Stop(c)
		}
	}()
	for i := 0; n > 0; i++ {
		k := min(n, perClient)
		n -= k
		c := exec.Command(self, "-client", addr, strconv.Itoa(k), fmt.Sprintf("127.0.0.%d", 2+idleClients%250), strconv.FormatBool(tlsDir != ""))
		idleClients++
		out, err := c.StdoutPipe()
		if err != nil {
			return err
		}
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			return err
		}
		clients = append(clients, c)
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "open") {
			return fmt.Errorf("client %d: %q %v", i, line, err)
		}
	}
	time.Sleep(3 * time.Second) // let the server settle
	rss1, err := proc.RSSKiB(cmd.Process.Pid)
	if err != nil {
		return err
	}
	g1, err := serve.Goroutines(debugAddr)
	if err != nil {
		return err
	}
	// And what it keeps: its garbage collected, the pages given back.
	if err := serve.FreeOSMemory(debugAddr); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	rss2, err := proc.RSSKiB(cmd.Process.Pid)
	if err != nil {
		return err
	}
	total := countConns(clients)
	fmt.Printf("| %s | %d | %d | %.2f | %.2f | %d | %d |\n", name, rss0, rss1,
		float64(rss1-rss0)/float64(total), float64(rss2-rss0)/float64(total), g0, g1)
	return nil
}

// countConns is the number of connections the clients hold.
func countConns(clients []*exec.Cmd) int {
	n := 0
	for _, c := range clients {
		k, _ := strconv.Atoi(c.Args[3])
		n += k
	}
	return n
}

// idleClient opens n connections to addr from source address src, over
// TLS if told, makes one request on each, prints "open", and holds them
// until killed.
func idleClient(args []string) {
	addr, src := args[0], args[2]
	n, _ := strconv.Atoi(args[1])
	overTLS := len(args) > 3 && args[3] == "true"
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		var c net.Conn
		var err error
		if overTLS {
			// The run's own certificate, on loopback: not checked.
			c, err = tls.DialWithDialer(&d, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
		} else {
			c, err = d.Dial("tcp", addr)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "dial:", err)
			os.Exit(1)
		}
		fmt.Fprintf(c, "GET /plaintext HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "request:", err)
			os.Exit(1)
		}
		resp.Body.Close()
		conns = append(conns, c)
	}
	fmt.Println("open", len(conns))
	select {}
}

// tlsDir holds the certificate and key of a -tls run.
var tlsDir string

// scheme is the URL scheme the servers are loaded over.
func scheme() string {
	if tlsDir != "" {
		return "https://"
	}
	return "http://"
}
