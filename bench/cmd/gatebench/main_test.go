package main

import (
	"testing"
	"time"
)

// A short run of the whole harness against both servers: 200 clients,
// two phases of a second.
func TestQuick(t *testing.T) {
	cfg := config{
		impls: []string{"evloop", "baseline"}, runs: 1, triggers: 10, perProc: 100,
		rates: []int{5, 200}, duration: time.Second, settle: 100 * time.Millisecond, drain: 20 * time.Second,
		openTimeout: 20 * time.Second, readyTimeout: 20 * time.Second,
	}
	b, err := newBench(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	results := map[string][]result{}
	for _, name := range cfg.impls {
		r, err := b.measure(name, 200, 1)
		if err != nil {
			t.Fatalf("measure(%s) = %v", name, err)
		}
		if r.rest.goroutines <= 0 || r.rest.heapMiB <= 0 || r.rest.rssMiB <= 0 {
			t.Errorf("%s at rest: %+v; want goroutines, heap and RSS", name, r.rest)
		}
		for _, p := range r.phases {
			if p.complete != p.events || p.delivered != p.expected || p.lastP99 <= 0 || p.allP99 <= 0 {
				t.Errorf("%s at %d/s: %d of %d events complete, %d of %d deliveries, p99 %.2f/%.2f ms%s",
					name, p.rate, p.complete, p.events, p.delivered, p.expected, p.lastP99, p.allP99, p.notes())
			}
		}
		switch {
		case name == "baseline" && r.rest.mismatched != 0:
			t.Errorf("baseline: %d probes not projected onto the selection %s", r.rest.mismatched, r.rest.example)
		case r.rest.mismatched != 0:
			t.Logf("%s: %d probes not projected onto the selection %s", name, r.rest.mismatched, r.rest.example)
		}
		results[name] = append(results[name], r)
	}
	printTables(cfg, 200, results)
}

func TestQuantile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, tc := range []struct{ q, want float64 }{{0.5, 5}, {0.99, 10}, {0.1, 1}, {0, 1}} {
		if got := quantile(v, tc.q); got != tc.want {
			t.Errorf("quantile(1..10, %v) = %v; want %v", tc.q, got, tc.want)
		}
	}
	if got := quantile(nil, 0.5); got != 0 {
		t.Errorf("quantile(nil) = %v; want 0", got)
	}
}
