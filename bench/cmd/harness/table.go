package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/evloop/evloop/bench/internal/proc"
)

// summary is the medians of one implementation in one scenario.
type summary struct {
	ok, runs                                int
	msgsPerS, p50, p99, cpu, eff, loadShare float64
	kibPerConn, goroutines                  float64
	other                                   float64 // other CPU use, share of one CPU
	hasGoroutines                           bool
}

func summarize(recs []record) summary {
	var s summary
	var tput, p50, p99, cpu, eff, ls, kib, gr, oth []float64
	for _, r := range recs {
		s.runs++
		if r.Err != "" {
			continue
		}
		s.ok++
		tput = append(tput, r.MsgsPerS)
		p50 = append(p50, r.P50us)
		p99 = append(p99, r.P99us)
		cpu = append(cpu, r.ServerCPUs)
		eff = append(eff, r.MsgsPerCPUs)
		ls = append(ls, r.LoadCPUShare)
		if r.WindowS > 0 {
			oth = append(oth, r.OtherCPUs/r.WindowS)
		}
		kib = append(kib, r.KiBPerConn)
		if r.Goroutines >= 0 {
			gr = append(gr, float64(r.Goroutines))
		}
	}
	s.msgsPerS, s.p50, s.p99, s.cpu, s.eff, s.loadShare = proc.Median(tput), proc.Median(p50), proc.Median(p99), proc.Median(cpu), proc.Median(eff), proc.Median(ls)
	s.kibPerConn = proc.Median(kib)
	s.other = proc.Median(oth)
	if len(gr) > 0 {
		s.hasGoroutines, s.goroutines = true, proc.Median(gr)
	}
	return s
}

// printTable prints the one table: a row per scenario and implementation.
func printTable(w io.Writer, recs []record, scens []scenario, impls []string, ref string) {
	head := []string{"scenario", "impl", "msgs/s", "p50 µs", "p99 µs", "srv CPU s", "lg CPU", "other", "k msgs/srv CPU-s", "tput ×ref", "eff ×ref", "idle KiB/conn", "goroutines", "mem ×ref"}
	rows := [][]string{head}
	for _, sc := range scens {
		sums := map[string]summary{}
		for _, impl := range impls {
			var rs []record
			for _, r := range recs {
				if r.Scenario == sc.name && r.Impl == impl {
					rs = append(rs, r)
				}
			}
			sums[impl] = summarize(rs)
		}
		rs, haveRef := sums[ref]
		haveRef = haveRef && rs.ok > 0
		ratio := func(a, b float64) string {
			if !haveRef || b == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f", a/b)
		}
		for _, impl := range impls {
			s := sums[impl]
			row := []string{sc.name, impl}
			if s.ok < s.runs {
				row[1] = fmt.Sprintf("%s (%d/%d ok)", impl, s.ok, s.runs)
			}
			dash := func(n int) {
				for i := 0; i < n; i++ {
					row = append(row, "-")
				}
			}
			switch {
			case s.ok == 0:
				row = append(row, "FAIL")
				dash(len(head) - 3)
			case sc.conns > 0 && sc.mode.String() != "idle":
				lg := fmt.Sprintf("%.0f%%", 100*s.loadShare)
				if s.loadShare >= 0.95 {
					lg += "!" // the load generator was the bottleneck
				}
				oth := fmt.Sprintf("%.0f%%", 100*s.other)
				if s.other >= 0.10 {
					oth += "!" // something else was busy: noise
				}
				row = append(row, fmt.Sprintf("%.0f", s.msgsPerS), fmt.Sprintf("%.0f", s.p50), fmt.Sprintf("%.0f", s.p99),
					fmt.Sprintf("%.2f", s.cpu), lg, oth, fmt.Sprintf("%.1f", s.eff/1e3),
					ratio(s.msgsPerS, rs.msgsPerS), ratio(s.eff, rs.eff))
				dash(3)
			default:
				row = append(row, "-", "-", "-", "-", "-", "-", "-", "-", "-", fmt.Sprintf("%.2f", s.kibPerConn))
				if s.hasGoroutines {
					row = append(row, fmt.Sprintf("%.0f", s.goroutines))
				} else {
					row = append(row, "n/a")
				}
				row = append(row, ratio(s.kibPerConn, rs.kibPerConn))
			}
			rows = append(rows, row)
		}
	}
	widths := make([]int, len(head))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for n, r := range rows {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i < 2 {
				b.WriteString(" " + c + pad + " |")
			} else {
				b.WriteString(" " + pad + c + " |")
			}
		}
		fmt.Fprintln(w, b.String())
		if n == 0 {
			b.Reset()
			b.WriteString("|")
			for i := range r {
				if i < 2 {
					b.WriteString(strings.Repeat("-", widths[i]+2) + "|")
				} else {
					b.WriteString(strings.Repeat("-", widths[i]+1) + ":|")
				}
			}
			fmt.Fprintln(w, b.String())
		}
	}
	fmt.Fprintln(w, "\nlg CPU: the load generators' CPU use as a share of the CPUs they may run on; \"!\" marks runs the load generator, not the server, may have limited.")
	fmt.Fprintln(w, "other: CPU time of everything else on the machine in the window (other processes, interrupts, hypervisor steal), as a share of one CPU; \"!\" marks 10% or more: a noisy run.")
	fmt.Fprintln(w, "k msgs/srv CPU-s: thousand echoed messages per second of server CPU time (utime+stime from /proc/PID/stat, 10 ms ticks) in the measured window.")
	fmt.Fprintln(w, "idle KiB/conn: (VmRSS with the idle connections - VmRSS before connecting) / connections; goroutines from the server's stats port.")
}

func writeJSON(path string, recs []record) error {
	b, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
