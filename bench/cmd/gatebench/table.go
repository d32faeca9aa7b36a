package main

import (
	"fmt"

	"github.com/evloop/evloop/bench/internal/proc"
)

// printTables prints the medians of n clients' runs: at rest, then each
// rate, with an evloop ÷ baseline row when both ran.
func printTables(cfg config, n int, results map[string][]result) {
	ratio := func(f func(result) float64) string {
		a, b := results["evloop"], results["baseline"]
		if len(a) == 0 || len(b) == 0 {
			return "–"
		}
		x, y := proc.MedianOf(a, f), proc.MedianOf(b, f)
		if y == 0 {
			return "–"
		}
		return fmt.Sprintf("%.3f", x/y)
	}
	both := len(results["evloop"]) > 0 && len(results["baseline"]) > 0
	fmt.Printf("\n### %d clients, %d triggers of %d subscribers: at rest (medians of %d runs)\n\n", n, cfg.triggers, n/cfg.triggers, cfg.runs)
	fmt.Println("| server | goroutines | heap in use MiB | after 2 GCs MiB | resident MiB | heap KiB/conn | after 2 GCs KiB/conn | resident KiB/conn | probes not projected |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	restCols := []func(result) float64{
		func(r result) float64 { return r.rest.goroutines },
		func(r result) float64 { return r.rest.heapMiB },
		func(r result) float64 { return r.rest.liveMiB },
		func(r result) float64 { return r.rest.rssMiB },
		func(r result) float64 { return r.rest.heapKiB },
		func(r result) float64 { return r.rest.liveKiB },
		func(r result) float64 { return r.rest.rssKiB },
		func(r result) float64 { return float64(r.rest.mismatched) },
	}
	formats := []string{"%.0f", "%.1f", "%.1f", "%.1f", "%.2f", "%.2f", "%.2f", "%.0f"}
	for _, name := range cfg.impls {
		fmt.Printf("| %s |", name)
		for i, f := range restCols {
			fmt.Printf(" "+formats[i]+" |", proc.MedianOf(results[name], f))
		}
		fmt.Println()
	}
	if both {
		fmt.Print("| evloop ÷ baseline |")
		for _, f := range restCols[:len(restCols)-1] {
			fmt.Printf(" %s |", ratio(f))
		}
		fmt.Println(" |")
	}

	fmt.Printf("\n### %d clients: events for %v at each rate, publish to receipt (medians of %d runs)\n\n", n, cfg.duration, cfg.runs)
	fmt.Println("| rate | server | last of an event's subscribers p50 ms | p99 ms | every delivery p50 ms | p99 ms | events to all | deliveries lost | deliveries/s | server CPU s | clients CPU s |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, rate := range cfg.rates {
		cols := []func(result) float64{
			func(r result) float64 { return r.phases[i].lastP50 },
			func(r result) float64 { return r.phases[i].lastP99 },
			func(r result) float64 { return r.phases[i].allP50 },
			func(r result) float64 { return r.phases[i].allP99 },
			func(r result) float64 { return float64(r.phases[i].complete) },
			func(r result) float64 { return float64(r.phases[i].expected - r.phases[i].delivered) },
			func(r result) float64 { return r.phases[i].perSec },
			func(r result) float64 { return r.phases[i].cpu },
			func(r result) float64 { return r.phases[i].clientCPU },
		}
		formats := []string{"%.2f", "%.2f", "%.2f", "%.2f", "%.0f", "%.0f", "%.0f", "%.2f", "%.2f"}
		events := 0
		for _, name := range cfg.impls {
			fmt.Printf("| %d/s | %s |", rate, name)
			for j, f := range cols {
				if j == 4 {
					events = results[name][0].phases[i].events
					fmt.Printf(" %.0f/%d |", proc.MedianOf(results[name], f), events)
					continue
				}
				fmt.Printf(" "+formats[j]+" |", proc.MedianOf(results[name], f))
			}
			fmt.Println()
		}
		if both {
			fmt.Printf("| %d/s | evloop ÷ baseline |", rate)
			for j, f := range cols {
				if j == 4 || j == 5 {
					fmt.Print(" |")
					continue
				}
				fmt.Printf(" %s |", ratio(f))
			}
			fmt.Println()
		}
	}
}
