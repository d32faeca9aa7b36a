// Command wsbench compares WebSocket servers side by side: evloop's ws
// against gorilla/websocket on goroutines (a reader and a writer per
// connection) and nbio's websocket, all built into cmd/wsserver.
//
//	go run ./cmd/wsbench -runs 3                       # echo and broadcast
//
// Echo: -conns connections each send a 1 KiB binary message and wait for
// its echo, again and again for -duration: messages per second, per
// server CPU-second, and round-trip p50/p99. With -rate, the load is an
// open one instead: the connections send -rate messages a second in all,
// each at its own even pace; a message sent late because the echo before
// it came late counts from when it was due (so a server that falls behind
// shows it, as wrk2 counts), one sent on time from when it went: p50 and
// p99 of servers under the same load, where without -rate a faster server
// also gets more load.
//
// Broadcast: -fanout connections (10,000 by default) are opened and, once
// idle, the server's resident memory and goroutines are read (memory per
// idle WebSocket connection); then one of them asks for a broadcast, and
// the time until the last connection has the 1 KiB message is measured,
// -broadcasts times; with the server's CPU time per broadcast (-fanout 0
// skips it).
//
// Servers are measured in turn, round robin over the runs, a fresh
// server each time; medians are printed as markdown tables.
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"flag"
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
	"sync"
	"sync/atomic"
	"time"

	"github.com/evloop/evloop/bench/internal/proc"
	"github.com/evloop/evloop/bench/internal/serve"
)

const payloadSize = 1024

// settle is how long connections stay idle before memory is read.
var settle = 3 * time.Second

type echoResult struct{ rate, eff, p50, p99 float64 }

type fanResult struct {
	kibPerConn, goroutines float64
	last, cpuMs            float64 // median time until the last delivery, ms; server CPU per broadcast, ms
	lastP99                float64
}

func main() {
	impls := flag.String("impls", "evloop,gorilla,nbio", "servers to compare")
	runs := flag.Int("runs", 3, "runs (medians are reported)")
	conns := flag.Int("conns", 256, "echo connections")
	duration := flag.Duration("duration", 10*time.Second, "echo duration")
	fanout := flag.Int("fanout", 10000, "broadcast connections")
	broadcasts := flag.Int("broadcasts", 20, "broadcasts per run")
	rate := flag.Float64("rate", 0, "echo: messages a second in all, an open load (0: each connection sends as soon as it has its echo)")
	flag.Parse()
	bin, err := buildServer()
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(filepath.Dir(bin))
	names := strings.Split(*impls, ",")
	echoes := map[string][]echoResult{}
	fans := map[string][]fanResult{}
	for run := 1; run <= *runs; run++ {
		for _, name := range names {
			e, err := echoRun(bin, name, *conns, *duration, *rate)
			if err != nil {
				fail(fmt.Errorf("%s echo: %w", name, err))
			}
			fmt.Fprintf(os.Stderr, "run %d echo %-8s %9.0f msg/s %9.0f msg/CPU-s p50 %.3f p99 %.3f ms\n", run, name, e.rate, e.eff, e.p50, e.p99)
			echoes[name] = append(echoes[name], e)
		}
		for _, name := range names {
			if *fanout == 0 {
				break
			}
			f, err := fanRun(bin, name, *fanout, *broadcasts)
			if err != nil {
				fail(fmt.Errorf("%s broadcast: %w", name, err))
			}
			fmt.Fprintf(os.Stderr, "run %d broadcast %-8s idle %.2f KiB/conn, %0.f goroutines, last after %.2f ms (p99 %.2f), CPU %.2f ms\n",
				run, name, f.kibPerConn, f.goroutines, f.last, f.lastP99, f.cpuMs)
			fans[name] = append(fans[name], f)
		}
	}
	printTables(names, echoes, fans, *conns, *fanout, *runs, *rate)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "wsbench:", err)
	os.Exit(1)
}

func buildServer() (string, error) {
	return proc.Build("github.com/evloop/evloop/bench/cmd/wsserver")
}

func start(bin, name string) (*exec.Cmd, string, string, error) {
	port, err := proc.FreePort()
	if err != nil {
		return nil, "", "", err
	}
	dport, err := proc.FreePort()
	if err != nil {
		return nil, "", "", err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	debug := net.JoinHostPort("127.0.0.1", strconv.Itoa(dport))
	cmd, err := proc.Start([]string{bin, "-impl", name, "-addr", addr, "-debug-addr", debug}, addr, false)
	return cmd, addr, debug, err
}

// wsConn is a client connection that writes masked frames and reads the
// server's.
type wsConn struct {
	nc net.Conn
	br *bufio.Reader
}

func dialWS(addr string, src net.IP) (*wsConn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if src != nil {
		d.LocalAddr = &net.TCPAddr{IP: src}
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(nc, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", addr)
	br := bufio.NewReaderSize(nc, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if resp.StatusCode != 101 {
		nc.Close()
		return nil, fmt.Errorf("handshake: %s", resp.Status)
	}
	return &wsConn{nc: nc, br: br}, nil
}

// frame returns a masked client frame.
func frame(op byte, p []byte) []byte {
	b := []byte{0x80 | op}
	if len(p) < 126 {
		b = append(b, 0x80|byte(len(p)))
	} else {
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(len(p)))
	}
	var mask [4]byte
	rand.Read(mask[:])
	b = append(b, mask[:]...)
	start := len(b)
	b = append(b, p...)
	for i := range p {
		b[start+i] ^= mask[i&3]
	}
	return b
}

// readFrame reads one server frame and returns its payload length.
func (c *wsConn) readFrame(buf []byte) (int, error) {
	var h [2]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return 0, err
	}
	n := int(h[1] & 0x7F)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(c.br, l[:]); err != nil {
			return 0, err
		}
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(c.br, l[:]); err != nil {
			return 0, err
		}
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	if n > len(buf) {
		return 0, fmt.Errorf("frame of %d bytes", n)
	}
	_, err := io.ReadFull(c.br, buf[:n])
	return n, err
}

func echoRun(bin, name string, conns int, d time.Duration, rate float64) (echoResult, error) {
	cmd, addr, _, err := start(bin, name)
	if err != nil {
		return echoResult{}, err
	}
	defer proc.Stop(cmd)
	cs := make([]*wsConn, conns)
	for i := range cs {
		if cs[i], err = dialWS(addr, nil); err != nil {
			return echoResult{}, err
		}
		defer cs[i].nc.Close()
	}
	msg := frame(0x2, make([]byte, payloadSize))
	var count atomic.Int64
	var mu sync.Mutex
	var lat []float64
	run := func(dur time.Duration, record bool) error {
		begin := time.Now()
		stop := begin.Add(dur)
		errs := make(chan error, len(cs))
		var every time.Duration // each connection's pace under -rate
		if rate > 0 {
			every = time.Duration(float64(len(cs)) / rate * float64(time.Second))
		}
		for i, c := range cs {
			go func() {
				buf := make([]byte, 2*payloadSize)
				var mine []float64
				due := begin.Add(every * time.Duration(i) / time.Duration(len(cs))) // spread evenly
				for time.Now().Before(stop) {
					t0 := time.Now()
					if every > 0 {
						if due.After(stop) {
							break
						}
						t0, due = proc.WaitDue(due), due.Add(every)
					}
					if _, err := c.nc.Write(msg); err != nil {
						errs <- err
						return
					}
					if _, err := c.readFrame(buf); err != nil {
						errs <- err
						return
					}
					if record {
						count.Add(1)
						mine = append(mine, float64(time.Since(t0).Microseconds())/1000)
					}
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
				errs <- nil
			}()
		}
		for range cs {
			if err := <-errs; err != nil {
				return err
			}
		}
		return nil
	}
	if err := run(time.Second, false); err != nil { // warm up
		return echoResult{}, err
	}
	cpu0, _ := proc.CPUTime(cmd.Process.Pid)
	t0 := time.Now()
	if err := run(d, true); err != nil {
		return echoResult{}, err
	}
	elapsed := time.Since(t0).Seconds()
	cpu1, _ := proc.CPUTime(cmd.Process.Pid)
	slices.Sort(lat)
	r := echoResult{rate: float64(count.Load()) / elapsed}
	if cpu1 > cpu0 {
		r.eff = float64(count.Load()) / (cpu1 - cpu0)
	}
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r, nil
}

// sources counts the fan-out connections dialed by this process. Each
// source address gives about 28,000 ports, and the connections a run
// closes keep theirs in TIME_WAIT for a minute: successive runs take
// their connections from successive addresses, 127.0.0.2 to 127.0.0.251,
// 20,000 each.
var sources int

func nextSource() net.IP {
	ip := net.IPv4(127, 0, 0, byte(2+sources/20000%250))
	sources++
	return ip
}

func fanRun(bin, name string, n, broadcasts int) (fanResult, error) {
	cmd, addr, debug, err := start(bin, name)
	if err != nil {
		return fanResult{}, err
	}
	defer proc.Stop(cmd)
	time.Sleep(300 * time.Millisecond)
	rss0, _ := proc.RSSKiB(cmd.Process.Pid)
	cs := make([]*wsConn, n)
	for i := range cs {
		if cs[i], err = dialWS(addr, nextSource()); err != nil {
			return fanResult{}, fmt.Errorf("connection %d: %w", i, err)
		}
		defer cs[i].nc.Close()
	}
	time.Sleep(settle) // idle: let the server settle
	var r fanResult
	rss1, _ := proc.RSSKiB(cmd.Process.Pid)
	r.kibPerConn = float64(rss1-rss0) / float64(n)
	g, err := serve.Goroutines(debug)
	if err != nil {
		return r, err
	}
	r.goroutines = float64(g)

	// Readers: each connection waits for broadcast frames and reports when
	// it got one.
	got := make(chan time.Time, n)
	for _, c := range cs {
		go func() {
			buf := make([]byte, 2*payloadSize)
			for {
				if _, err := c.readFrame(buf); err != nil {
					return
				}
				got <- time.Now()
			}
		}()
	}
	trigger := frame(0x1, []byte("broadcast"))
	var lasts []float64
	cpu0, _ := proc.CPUTime(cmd.Process.Pid)
	for range broadcasts {
		t0 := time.Now()
		if _, err := cs[0].nc.Write(trigger); err != nil {
			return r, err
		}
		var last time.Time
		timeout := time.After(30 * time.Second)
		for range n {
			select {
			case t := <-got:
				last = t
			case <-timeout:
				return r, fmt.Errorf("a broadcast did not reach every connection")
			}
		}
		lasts = append(lasts, float64(last.Sub(t0).Microseconds())/1000)
	}
	cpu1, _ := proc.CPUTime(cmd.Process.Pid)
	r.cpuMs = (cpu1 - cpu0) * 1000 / float64(broadcasts)
	r.last = proc.Median(lasts)
	slices.Sort(lasts)
	r.lastP99 = lasts[len(lasts)*99/100]
	return r, nil
}

func printTables(names []string, echoes map[string][]echoResult, fans map[string][]fanResult, conns, fanout, runs int, rate float64) {
	load := ""
	if rate > 0 {
		load = fmt.Sprintf(", %.0f messages a second in all", rate)
	}
	fmt.Printf("\n### WebSocket echo, 1 KiB binary, %d connections%s (medians of %d runs)\n\n", conns, load, runs)
	fmt.Println("| server | msg/s | evloop ÷ it | msg per server CPU-s | evloop ÷ it | p50 ms | p99 ms |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	ours := proc.MedianOf(echoes["evloop"], func(r echoResult) float64 { return r.rate })
	ourEff := proc.MedianOf(echoes["evloop"], func(r echoResult) float64 { return r.eff })
	for _, n := range names {
		rate := proc.MedianOf(echoes[n], func(r echoResult) float64 { return r.rate })
		eff := proc.MedianOf(echoes[n], func(r echoResult) float64 { return r.eff })
		fmt.Printf("| %s | %.0f | %.2f | %.0f | %.2f | %.3f | %.3f |\n", n, rate, ours/rate, eff, ourEff/eff,
			proc.MedianOf(echoes[n], func(r echoResult) float64 { return r.p50 }), proc.MedianOf(echoes[n], func(r echoResult) float64 { return r.p99 }))
	}
	if fanout == 0 {
		return
	}
	fmt.Printf("\n### WebSocket broadcast of 1 KiB to %d idle connections (medians of %d runs)\n\n", fanout, runs)
	fmt.Println("| server | idle KiB per connection | goroutines | until the last has it, ms (median) | p99 ms | server CPU per broadcast, ms |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, n := range names {
		rs := fans[n]
		fmt.Printf("| %s | %.2f | %.0f | %.2f | %.2f | %.2f |\n", n,
			proc.MedianOf(rs, func(r fanResult) float64 { return r.kibPerConn }), proc.MedianOf(rs, func(r fanResult) float64 { return r.goroutines }),
			proc.MedianOf(rs, func(r fanResult) float64 { return r.last }), proc.MedianOf(rs, func(r fanResult) float64 { return r.lastP99 }),
			proc.MedianOf(rs, func(r fanResult) float64 { return r.cpuMs }))
	}
}
