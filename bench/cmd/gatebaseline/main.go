// Command gatebaseline is evgate's subscription path written the way a Go
// GraphQL gateway first is, for cmd/gatebench to compare with evgate: the
// design of the first version in Cosmo's article on scaling subscriptions
// with epoll.
//
//	gatebaseline --listen 127.0.0.1:8080 --schema bench.graphql --nats nats://127.0.0.1:4222
//
// Clients connect over WebSocket at /graphql (gorilla/websocket) and speak
// graphql-ws's protocol, graphql-transport-ws: connection_init and
// connection_ack, subscribe, next, error, complete, ping and pong. Each
// subscription root field is bound to NATS subjects by
// @edfs__natsSubscribe(subjects: [...]), with {{ args.x }} templates.
//
// # Goroutines
//
// A goroutine per connection reads its socket (net/http's handler
// goroutine, which keeps the connection after the upgrade). A goroutine
// per subscription waits on its channel, projects each event onto the
// subscription's selection set and writes it, under the connection's
// write lock. Subscriptions with the same root field and subjects share a
// trigger: one NATS subscription whose messages go to the trigger's
// channel, and a fan-out goroutine that decodes each event once and sends
// it to every subscriber's channel (blocking while one is full). nats.go
// runs a goroutine per NATS subscription.
//
// /metrics serves Go's and the process's metrics (go_goroutines,
// go_memstats_heap_inuse_bytes, process_resident_memory_bytes, ...) with
// the same Prometheus collectors evgate registers, and /debug/pprof/ the
// profiles, as evgate does.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gatebaseline:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gatebaseline", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve /graphql and /metrics on")
	schemaFile := fs.String("schema", "", "SDL file with @edfs__natsSubscribe fields (required)")
	natsURL := fs.String("nats", nats.DefaultURL, "NATS server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *schemaFile == "" {
		return fmt.Errorf("--schema is required")
	}
	sdl, err := os.ReadFile(*schemaFile)
	if err != nil {
		return err
	}
	schema, err := loadSchema(string(sdl))
	if err != nil {
		return fmt.Errorf("%s: %w", *schemaFile, err)
	}
	nc, err := nats.Connect(*natsURL, nats.Name("gatebaseline"))
	if err != nil {
		return fmt.Errorf("nats %s: %w", *natsURL, err)
	}
	defer nc.Close()
	g := newGateway(schema, nc)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /graphql", g.serveWS)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /debug/pprof/", pprof.Index) // as evgate
	return http.ListenAndServe(*listen, mux)
}
