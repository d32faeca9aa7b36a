// Command gatebench compares GraphQL subscription gateways side by side:
// evgate (cmd/evgate, on evloop's loops; "evloop" in the tables) against
// cmd/gatebaseline (gorilla/websocket, a goroutine per connection and per
// subscription, a channel per trigger), both fed by one NATS server.
//
//	go run ./cmd/gatebench -runs 3                        # 10,000 and 19,900 clients, 1 and 1,000 events/s
//	go run ./cmd/gatebench -clients 200 -runs 1 -duration 2s
//
// The harness starts a NATS server in its own process (loopback, a random
// port), builds evgate and the baseline and, for each server and each
// -clients count, starts a fresh server with the bench schema
// (bench.graphql), then client processes (cmd/gateclient, -per-proc
// connections each, from source addresses 127.0.0.2, 127.0.0.3, ...). Each
// connection subscribes to employeeUpdated(id: k) for one of -triggers ids,
// so each trigger has clients/triggers subscribers. Probes are published
// until every subscription has received one (which also checks that the
// event was projected onto the selection); after -settle, the server's
// goroutines and heap in use (its /metrics: go_goroutines,
// go_memstats_heap_inuse_bytes) and resident memory (/proc/PID/status
// VmRSS) are read at rest.
//
// Then, for each -rates R, events are published at R per second in all,
// round robin over the triggers, for -duration, each carrying its publish
// time. Latency is from publish to receipt by the client (all processes
// read the same clock): per event, until the last of its subscribers has
// it (over the events every subscriber got), and over all deliveries.
// The phase ends when every delivery arrived, or after -drain, or 10 s
// without progress. The server's CPU time is read around each phase.
//
// Servers alternate between runs (run r starts with the r-th); the tables
// give medians of -runs runs and evloop ÷ baseline ratios. Progress goes to
// stderr, the tables to stdout. Everything is on loopback, and every wait
// is bounded.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	clients := flag.String("clients", "10000,19900", "client connections, one measurement per count")
	runs := flag.Int("runs", 3, "runs (medians are reported)")
	rates := flag.String("rates", "1,1000", "events per second, in all, one phase each")
	duration := flag.Duration("duration", 10*time.Second, "publishing time per phase")
	triggers := flag.Int("triggers", 10, "distinct subscriptions (triggers)")
	perProc := flag.Int("per-proc", 2500, "connections per client process (each on its own source address)")
	settle := flag.Duration("settle", 3*time.Second, "rest before memory is read")
	drain := flag.Duration("drain", 240*time.Second, "longest wait for deliveries after publishing ends")
	impls := flag.String("impls", "evloop,baseline", "servers to compare")
	flag.Parse()
	cfg := config{
		triggers: *triggers, perProc: *perProc, duration: *duration, settle: *settle, drain: *drain,
		impls: strings.Split(*impls, ","), runs: *runs,
	}
	var err error
	if cfg.rates, err = ints(*rates); err != nil {
		fail(err)
	}
	counts, err := ints(*clients)
	if err != nil {
		fail(err)
	}
	fmt.Printf("# go run ./cmd/gatebench %s   (%s)\n", strings.Join(os.Args[1:], " "), time.Now().Format(time.DateOnly))
	b, err := newBench(cfg)
	if err != nil {
		fail(err)
	}
	defer b.close()
	for _, n := range counts {
		results := map[string][]result{}
		for run := 1; run <= cfg.runs; run++ {
			for i := range cfg.impls {
				name := cfg.impls[(i+run-1)%len(cfg.impls)]
				r, err := b.measure(name, n, run)
				if err != nil {
					fail(fmt.Errorf("%s, %d clients, run %d: %w", name, n, run, err))
				}
				results[name] = append(results[name], r)
			}
		}
		printTables(cfg, n, results)
	}
}

func ints(s string) ([]int, error) {
	var v []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want positive integers separated by commas", s)
		}
		v = append(v, n)
	}
	return v, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gatebench:", err)
	os.Exit(1)
}
