package main

import (
	"net/http"
	"net/http/pprof"

	"github.com/evloop/evloop/gateway"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveOperations adds /metrics (Prometheus: the gateway's counters, Go's
// goroutines and heap, the process's memory) and /debug/pprof.
func serveOperations(g *gateway.Gateway) error {
	reg := prometheus.NewRegistry()
	if err := g.RegisterMetrics(reg); err != nil {
		return err
	}
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return err
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return err
	}
	g.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	g.Handle("GET /debug/pprof/", http.HandlerFunc(pprof.Index))
	g.Handle("GET /debug/pprof/cmdline", http.HandlerFunc(pprof.Cmdline))
	g.Handle("GET /debug/pprof/profile", http.HandlerFunc(pprof.Profile))
	g.Handle("GET /debug/pprof/symbol", http.HandlerFunc(pprof.Symbol))
	g.Handle("GET /debug/pprof/trace", http.HandlerFunc(pprof.Trace))
	return nil
}
