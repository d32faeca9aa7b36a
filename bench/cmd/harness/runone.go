package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/evloop/evloop/bench/internal/hist"
	"github.com/evloop/evloop/bench/internal/load"
	"github.com/evloop/evloop/bench/internal/proc"
)

// record is one run of one implementation in one scenario.
type record struct {
	Scenario string `json:"scenario"`
	Impl     string `json:"impl"`
	Run      int    `json:"run"`
	Mode     string `json:"mode"`
	Size     int    `json:"size"`
	Conns    int    `json:"conns"`
	Depth    int    `json:"depth"`
	Procs    int    `json:"loadgen_procs"`

	// echo scenarios
	WindowS      float64 `json:"window_s,omitempty"`
	Msgs         int64   `json:"msgs,omitempty"`
	MsgsPerS     float64 `json:"msgs_per_s,omitempty"`
	P50us        float64 `json:"p50_us,omitempty"`
	P99us        float64 `json:"p99_us,omitempty"`
	ServerCPUs   float64 `json:"server_cpu_s,omitempty"`
	MsgsPerCPUs  float64 `json:"msgs_per_server_cpu_s,omitempty"`
	LoadCPUShare float64 `json:"loadgen_cpu_share,omitempty"` // of the CPUs the load generators may use
	OtherCPUs    float64 `json:"other_cpu_s"`                 // everything else busy on the machine in the window, steal included

	// idle scenario
	RSSBaseKiB     int64   `json:"rss_base_kib,omitempty"`
	RSSKiB         int64   `json:"rss_kib,omitempty"`
	KiBPerConn     float64 `json:"kib_per_conn,omitempty"`
	GoroutinesBase int     `json:"goroutines_base"` // -1: no stats listener
	Goroutines     int     `json:"goroutines"`

	CleanExit bool   `json:"clean_exit"`
	Err       string `json:"error,omitempty"`
}

func (h *harness) runOne(sc scenario, impl string, r int, o options) (rec record) {
	rec = record{Scenario: sc.name, Impl: impl, Run: r + 1, Mode: sc.mode.String(), Size: sc.size,
		Conns: sc.conns, Depth: sc.depth, GoroutinesBase: -1, Goroutines: -1}
	fmt.Fprintf(h.log, "run %d/%d  %-26s %-8s ", r+1, o.runs, sc.name, impl)
	fail := func(err error) record {
		rec.Err = err.Error()
		h.failures = append(h.failures, fmt.Sprintf("%s, %s, run %d: %v", sc.name, impl, r+1, err))
		fmt.Fprintf(h.log, "FAILED: %v\n", err)
		return rec
	}
	port, err := proc.FreePort()
	if err != nil {
		return fail(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	argv := append([]string{}, h.serverPin...)
	stats := ""
	if impl == cImpl {
		argv = append(argv, h.bin("epoll_echo"), "-addr", addr)
	} else {
		sp, err := proc.FreePort()
		if err != nil {
			return fail(err)
		}
		stats = fmt.Sprintf("127.0.0.1:%d", sp)
		argv = append(argv, h.bin("echoserver"), "-impl", impl, "-addr", addr, "-loops", strconv.Itoa(h.loops), "-stats", stats)
	}
	logf, err := os.CreateTemp(h.tmp, impl+"-*.log")
	if err != nil {
		return fail(err)
	}
	defer logf.Close()
	srv, err := startServer(argv, addr, stats, logf)
	if err != nil {
		return fail(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = srv.stop()
		}
	}()

	spec := loadSpec{addr: addr, mode: sc.mode, conns: sc.conns, size: sc.size, depth: sc.depth,
		warmup: o.warmup, duration: o.duration, hold: 5 * time.Minute,
		perProc: o.perProc, perSrc: o.perSrc, srcFirst: h.srcNext}
	nproc := (sc.conns + o.perProc - 1) / o.perProc
	rec.Procs = nproc
	// Every run gets source addresses of its own, so that no run meets the
	// previous run's connections in TIME_WAIT.
	h.srcNext += nproc * ((o.perProc + o.perSrc - 1) / o.perSrc)
	if h.srcNext > 1<<20 {
		h.srcNext = 1
	}

	var cpu0, cpu1, busy0, busy1 float64
	var hookErr error
	hk := hooks{
		start: func() {
			cpu0, hookErr = proc.CPUTime(srv.pid)
			busy0, _ = busySeconds()
		},
		end: func() {
			var err error
			if cpu1, err = proc.CPUTime(srv.pid); err != nil && hookErr == nil {
				hookErr = err
			}
			busy1, _ = busySeconds()
		},
		idle: func() {
			time.Sleep(o.settle)
			var err error
			if rec.RSSKiB, err = proc.RSSKiB(srv.pid); err != nil {
				hookErr = err
			}
			if stats != "" {
				if rec.Goroutines, err = goroutines(stats); err != nil && hookErr == nil {
					hookErr = err
				}
			}
		},
	}
	if sc.mode == load.Idle {
		time.Sleep(200 * time.Millisecond) // let the server finish starting
		if rec.RSSBaseKiB, err = proc.RSSKiB(srv.pid); err != nil {
			return fail(err)
		}
		if stats != "" {
			if rec.GoroutinesBase, err = goroutines(stats); err != nil {
				return fail(err)
			}
		}
	}
	results, err := h.runLoad(spec, hk)
	if err != nil {
		if !srv.alive() {
			err = fmt.Errorf("%v; server died: %v%s", err, srv.err, srv.logTail())
		}
		return fail(err)
	}
	if hookErr != nil {
		return fail(hookErr)
	}

	stopped = true
	if err := srv.stop(); err != nil {
		h.failures = append(h.failures, fmt.Sprintf("%s, %s, run %d: did not exit cleanly: %v", sc.name, impl, r+1, err))
	} else {
		rec.CleanExit = true
	}

	if sc.mode == load.Idle {
		rec.KiBPerConn = float64(rec.RSSKiB-rec.RSSBaseKiB) / float64(sc.conns)
		fmt.Fprintf(h.log, "%.2f KiB/conn, goroutines %d\n", rec.KiBPerConn, rec.Goroutines)
		return rec
	}
	lat := hist.New()
	var loadCPU float64
	for _, res := range results {
		rec.Msgs += res.Msgs
		rec.MsgsPerS += res.MsgsPerS
		rec.WindowS = max(rec.WindowS, res.WindowS)
		loadCPU += res.CPUs
		lat.Merge(hist.FromSparse(res.Hist))
	}
	rec.P50us = float64(lat.Quantile(0.5)) / 1e3
	rec.P99us = float64(lat.Quantile(0.99)) / 1e3
	rec.ServerCPUs = cpu1 - cpu0
	rec.OtherCPUs = max(0, busy1-busy0-rec.ServerCPUs-loadCPU)
	if rec.ServerCPUs > 0 {
		rec.MsgsPerCPUs = float64(rec.Msgs) / rec.ServerCPUs
	}
	loadCPUs := runtime.NumCPU()
	if len(h.loadPin) > 0 {
		loadCPUs = cpuCount(h.loadPin[len(h.loadPin)-1])
	}
	if rec.WindowS > 0 {
		rec.LoadCPUShare = loadCPU / rec.WindowS / float64(loadCPUs)
	}
	fmt.Fprintf(h.log, "%9.0f msgs/s  p50 %7.1fµs  p99 %7.1fµs  server CPU %.2fs  %6.1fk msgs/CPU-s  loadgen CPU %3.0f%%  other %3.0f%%\n",
		rec.MsgsPerS, rec.P50us, rec.P99us, rec.ServerCPUs, rec.MsgsPerCPUs/1e3, 100*rec.LoadCPUShare, 100*rec.OtherCPUs/rec.WindowS)
	return rec
}
