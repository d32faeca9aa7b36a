package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/evloop/evloop/gateway"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveOperations adds /metrics (Prometheus: the gateway's counters, Go's
// goroutines and heap, the process's memory) and /healthz: 200 while nc
// is connected, 503 while it is not.
func serveOperations(g *gateway.Gateway, nc *nats.Conn) error {
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
	g.Handle("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !nc.IsConnected() {
			http.Error(w, "NATS: "+nc.Status().String(), http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	}))
	return nil
}

// serveDebug serves /debug/pprof on addr, apart from the clients' address:
// profiles and the command line (which may hold a secret) are for the
// operator alone. The function it returns stops it.
func serveDebug(addr string, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("debug-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	log.Info("profiles served", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() { srv.Close() }, nil
}
