// Command evgate is a GraphQL subscription gateway: clients subscribe over
// WebSocket (graphql-transport-ws, or the legacy graphql-ws), and each
// subscription is fed by events of NATS subjects (or Redis channels) that
// the schema's directives name, as in Cosmo Router's event-driven
// subscriptions.
//
//	go run ./cmd/evgate                           # demo schema, embedded NATS
//	go run ./cmd/evgate --schema my.graphql --nats nats://n1:4222,nats://n2:4222
//
// With no --nats, evgate starts a NATS server in its own process (with
// JetStream), listening on --nats-listen for the publishers. Several
// evgates on one NATS cluster each deliver every event to their own
// clients.
//
// Introspection queries (__schema, __type) are answered at /graphql, for
// GraphiQL and code generators, unless --no-introspection.
//
// /metrics serves Prometheus metrics and /healthz says whether the NATS
// connection is up (200, or 503 while it is lost and being retried, or
// while no --nats server answers yet at start: evgate serves meanwhile,
// and a subscription made before NATS is reached fails after the
// upstream timeout, as one made while the connection is lost; a --nats
// whose name does not resolve or whose server refuses evgate's
// credentials stops the start);
// profiles (/debug/pprof) are served only on --debug-listen, apart from
// the clients' address. The token and JWT secret may come from
// EVGATE_TOKEN and EVGATE_JWT_SECRET rather than the command line, which
// other users of the machine can read. SIGTERM and SIGINT shut down
// gracefully: clients get 1001, and one that has not answered within 5 s
// (one that stopped reading) is reset; evgate exits with 0 once every
// connection is closed, or with 1 if that takes longer than 10 s, saying
// that what was still open was aborted. With --tls-cert and --tls-key,
// SIGHUP reads the two files again (a renewed certificate serves the next
// handshakes, no connection dropped; files that do not load leave the one
// in use, with a warning); otherwise SIGHUP is ignored, as SIGPIPE is.
package main

import (
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/evloop/evloop/gateway"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
)

//go:embed demo.graphql
var demoSchema string

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "evgate:", err)
		os.Exit(1)
	}
}

type options struct {
	listen     string
	schema     string
	natsURLs   string
	natsListen string
	redisAddr  string
	demo       bool
	token      string
	jwtSecret  string
	origins    string
	debug      string
	noIntro    bool
	tlsCert    string
	tlsKey     string
	maxConns   int
	maxFields  int
	maxDepth   int
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("evgate", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to serve GraphQL on (WebSocket and POST at /graphql)")
	fs.StringVar(&o.schema, "schema", "", "SDL file with the event directives (default: the demo schema)")
	fs.StringVar(&o.natsURLs, "nats", "", "NATS servers to use, comma-separated (default: an embedded server)")
	fs.StringVar(&o.natsListen, "nats-listen", "127.0.0.1:4222", `where the embedded NATS server listens for publishers ("" for none)`)
	fs.StringVar(&o.redisAddr, "redis", "", "Redis (or evkv) address for @edfs__redis* fields")
	fs.BoolVar(&o.demo, "demo", true, "with the demo schema, publish a tick on demo.tick each second")
	fs.StringVar(&o.token, "token", os.Getenv("EVGATE_TOKEN"), "accept only clients whose connection_init (or POST's Authorization: Bearer) carries this token (default $EVGATE_TOKEN)")
	fs.StringVar(&o.jwtSecret, "jwt-secret", os.Getenv("EVGATE_JWT_SECRET"), "accept only clients whose connection_init (or POST's Authorization: Bearer) carries a JWT signed with this HMAC secret (default $EVGATE_JWT_SECRET)")
	fs.StringVar(&o.debug, "debug-listen", "", `address to serve /debug/pprof on ("": none); keep it private`)
	fs.BoolVar(&o.noIntro, "no-introspection", false, "refuse queries of __schema and __type, for a schema kept from clients (__typename is still answered)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "PEM file of the certificate (its chain after it) to serve https:// and wss:// with; needs --tls-key")
	fs.StringVar(&o.tlsKey, "tls-key", "", "PEM file of --tls-cert's private key")
	fs.IntVar(&o.maxConns, "max-conns", 0, "connections open at once, past which clients wait to be accepted until one closes (0: no bound but the process's file descriptors)")
	fs.IntVar(&o.maxFields, "max-fields", 500, "fields an operation's document may have in all; past it the operation gets an error")
	fs.IntVar(&o.maxDepth, "max-depth", 100, "how deep an operation's fields may nest, fragments where spread; past it the operation gets an error")
	fs.StringVar(&o.origins, "allow-origin", "", `browser origins allowed to connect or publish, comma-separated ("*": any; default: the gateway's own)`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.maxConns < 0 {
		return fmt.Errorf("--max-conns %d: want 0 (no bound) or more", o.maxConns)
	}
	if o.maxFields < 1 || o.maxDepth < 1 {
		return fmt.Errorf("--max-fields %d, --max-depth %d: want 1 or more", o.maxFields, o.maxDepth)
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	log := slog.Default()
	// Caught from the start, so that a signal while the embedded NATS
	// server starts still shuts down gracefully (its directory removed).
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)

	name := "demo schema"
	var schema *gateway.Schema
	var err error
	if o.schema != "" {
		name = o.schema
		schema, err = gateway.LoadSchemaFile(o.schema)
	} else {
		schema, err = gateway.ParseSchema(demoSchema)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}

	var cert *certificate
	if o.tlsCert != "" {
		if cert, err = loadCertificate(o.tlsCert, o.tlsKey); err != nil {
			return fmt.Errorf("--tls-cert, --tls-key: %w", err)
		}
	}
	nc, stopNATS, err := connectNATS(o, log)
	if err != nil {
		return err
	}
	defer stopNATS()
	host, _ := os.Hostname()
	src, err := gateway.NewNATSSource(nc, host+"/"+o.listen)
	if err != nil {
		return err
	}
	cfg := gateway.Config{Schema: schema, NATS: map[string]gateway.Source{"default": src}, NoIntrospection: o.noIntro, MaxConns: o.maxConns,
		MaxFields: o.maxFields, MaxDepth: o.maxDepth, Logger: log}
	if cert != nil {
		cfg.TLSConfig = &tls.Config{GetCertificate: cert.get}
		stopReload := make(chan struct{})
		defer close(stopReload)
		cert.reloadOnHangup(log, stopReload)
	}
	if o.redisAddr != "" {
		rdb := redis.NewClient(&redis.Options{Addr: o.redisAddr})
		defer rdb.Close()
		cfg.Redis = map[string]gateway.Source{"default": gateway.NewRedisSource(rdb)}
	}
	switch {
	case o.token != "" && o.jwtSecret != "":
		return errors.New("--token and --jwt-secret exclude each other")
	case o.token != "":
		cfg.Authenticate = gateway.TokenAuth(o.token)
	case o.jwtSecret != "":
		cfg.Authenticate = gateway.JWTAuth([]byte(o.jwtSecret))
	}
	if o.origins != "" {
		cfg.CheckOrigin = gateway.AllowOrigins(strings.Split(o.origins, ","))
	}
	g, err := gateway.New(cfg)
	if err != nil {
		return err
	}
	if err := serveOperations(g, nc); err != nil {
		return err
	}
	if o.debug != "" {
		stopDebug, err := serveDebug(o.debug, log)
		if err != nil {
			return err
		}
		defer stopDebug()
	}
	if ctx.Err() != nil {
		return nil // a signal while starting
	}
	if o.demo && o.schema == "" {
		go publishTicks(ctx, nc)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	web, sock := "http://", "ws://"
	if o.tlsCert != "" {
		web, sock = "https://", "wss://"
		err = g.StartTLS(ln, "", "") // the certificate through cfg.TLSConfig
	} else {
		err = g.Start(ln)
	}
	if err != nil {
		return err
	}
	log.Info("evgate serving", "page", web+ln.Addr().String()+"/", "graphql", sock+ln.Addr().String()+"/graphql", "schema", name)
	<-ctx.Done()
	log.Info("evgate shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := g.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w: what had not closed within %v was aborted", err, shutdownGrace)
	}
	return nil
}

// shutdownGrace bounds a graceful shutdown: the connections still open
// then are aborted.
const shutdownGrace = 10 * time.Second

// connectNATS connects to the --nats servers, or starts an embedded one.
func connectNATS(o options, log *slog.Logger) (*nats.Conn, func(), error) {
	if o.natsURLs != "" {
		if err := checkNATSURLs(o.natsURLs); err != nil {
			return nil, nil, err
		}
		var mu sync.Mutex
		lastErr := ""
		opts := []nats.Option{nats.Name("evgate"), nats.MaxReconnects(-1),
			nats.ConnectHandler(func(nc *nats.Conn) {
				log.Info("NATS connected", "url", nc.ConnectedUrlRedacted())
			}),
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				log.Warn("NATS connection lost: reconnecting; subscriptions wait", "err", err)
			}),
			nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
				// Why the servers cannot be reached, once until it changes.
				mu.Lock()
				defer mu.Unlock()
				if err != nil && err.Error() != lastErr {
					lastErr = err.Error()
					log.Warn("NATS connection attempt failed", "err", err)
				}
			}),
			nats.ReconnectHandler(func(nc *nats.Conn) {
				log.Info("NATS connection back", "url", nc.ConnectedUrlRedacted())
			}),
			nats.ClosedHandler(func(*nats.Conn) { log.Info("NATS connection closed") })}
		nc, err := nats.Connect(o.natsURLs, opts...)
		if errors.Is(err, nats.ErrNoServers) {
			// No server answers yet (refused, timed out): evgate may start
			// before NATS does (a machine's boot, a cluster's rollout), and
			// waits for it as for a lost one. A name that does not resolve,
			// refused credentials or a server that is not NATS fail at once.
			log.Warn("NATS not reachable: retrying; /healthz answers 503 until it is", "nats", o.natsURLs, "err", err)
			nc, err = nats.Connect(o.natsURLs, append(opts, nats.RetryOnFailedConnect(true))...)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("nats %s: %w", o.natsURLs, err)
		}
		return nc, nc.Close, nil
	}
	ns, stopServer, err := startNATS(o.natsListen)
	if err != nil {
		return nil, nil, err
	}
	if o.natsListen != "" {
		log.Info("embedded NATS server", "url", ns.ClientURL())
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Name("evgate"))
	if err != nil {
		stopServer()
		return nil, nil, err
	}
	return nc, func() { nc.Close(); stopServer() }, nil
}

// checkNATSURLs checks --nats: URLs of the schemes nats.go dials (nats,
// tls, ws, wss), or host:port, which it takes for nats://; nats.go would
// take any other scheme for nats:// too, and a typo would wait for ever.
func checkNATSURLs(urls string) error {
	for u := range strings.SplitSeq(urls, ",") {
		u = strings.TrimSpace(u)
		scheme, _, ok := strings.Cut(u, "://")
		scheme = strings.ToLower(scheme)
		switch {
		case !ok:
		case scheme == "nats", scheme == "tls", scheme == "ws", scheme == "wss":
		default:
			return fmt.Errorf("nats %s: unknown scheme %q (nats, tls, ws or wss)", u, scheme)
		}
	}
	return nil
}

// publishTicks publishes {"n":…, "time":…} on demo.tick each second.
func publishTicks(ctx context.Context, nc *nats.Conn) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			nc.Publish("demo.tick", fmt.Appendf(nil, `{"n":%d,"time":%q}`, n, now.UTC().Format(time.RFC3339)))
		}
	}
}
