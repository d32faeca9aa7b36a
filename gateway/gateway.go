package gateway

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/internal/workpool"
	"github.com/evloop/evloop/ws"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Config configures a Gateway. Schema is required; the rest have working
// zero values.
type Config struct {
	// Schema is the GraphQL schema with its event directives.
	Schema *Schema
	// NATS and Redis are the event sources by provider ID (the providerId
	// argument of the directives, "default" when not given). Every
	// provider the schema names must be here.
	NATS  map[string]Source
	Redis map[string]Source

	// Upstream, if set, is the URL of a GraphQL service that resolves the
	// fields an event does not carry: for a subscription whose root type
	// is a Federation entity (@key), or a list of them, every selected
	// field that is not a key field or marked @external is fetched with
	// _entities, once per event for all of a trigger's selection sets and
	// all the event's entities (again in parts when the upstream refuses
	// the request whole, as the package doc says).
	Upstream string
	// ForwardHeaders names connection_init fields (at its top level or
	// under "headers", without regard to case) sent to the upstream as
	// request header fields. Subscribers whose values differ do not share
	// a trigger.
	ForwardHeaders []string

	// Authenticate, if set, checks connection_init's payload: an error
	// closes the connection with 4403. A POST /graphql is checked with
	// the payload {"headers": {"Authorization": <its Authorization
	// field>}} (no "headers" without one): an error answers 401.
	Authenticate func(payload map[string]any) error
	// CheckOrigin decides whether a browser's Origin may connect or
	// publish with POST (default: the Origin's host is the request's
	// Host). A refused request gets 403.
	CheckOrigin func(origin, host string) bool

	// InitTimeout bounds the wait for connection_init (default 3s, as
	// graphql-ws): past it the connection is closed with 4408.
	InitTimeout time.Duration
	// KeepAlive is the legacy protocol's "ka" period (default 15s).
	KeepAlive time.Duration
	// MaxMessageSize bounds a client's message (default 64 KiB): past it
	// the connection is closed with 1009.
	MaxMessageSize int
	// MaxSubscriptions bounds a connection's operations at once (default
	// 100): past it a subscribe gets an error message.
	MaxSubscriptions int
	// MaxFields and MaxDepth bound a document before it is validated, as
	// Cosmo Router's parser limits do: the fields it has in all, each
	// fragment's once (default 500), and how deep they nest, inline
	// fragments counted, fragments' where they are spread (default 100).
	// The validation compares the fields a selection gathers pairwise, so
	// what that would cost is bounded too, by MaxFields squared (one
	// selection of MaxFields fields). Past any, the operation gets an
	// error; unbounded, one 64 KiB message could hold a worker for
	// minutes.
	MaxFields, MaxDepth int
	// MaxOutbound bounds the bytes queued for one connection (default 1
	// MiB): a client that lets more pile up for 100 ms, or 4 times as
	// much at any time, is closed with CloseSlowConsumer.
	MaxOutbound int
	// MaxConns, if positive, bounds the connections open at once,
	// WebSocket and HTTP alike: past it, clients wait to be accepted
	// until one closes (evloop.Options.MaxConns).
	MaxConns int
	// UpstreamTimeout bounds the start of an upstream subscription
	// (default 10s): past it, its subscribers get an error.
	UpstreamTimeout time.Duration
	// Workers bounds the goroutines that resolve events and publish
	// (default 4 per CPU).
	Workers int

	// NoPage leaves out the page at "/" where a person subscribes and
	// publishes.
	NoPage bool
	// NoIntrospection refuses queries of __schema and __type, as a
	// deployment that does not publish its schema wants; __typename is
	// still answered, alone in a query (a health check's) or in a
	// selection.
	NoIntrospection bool

	// TLSConfig configures StartTLS, as http1.Server's TLSConfig.
	TLSConfig *tls.Config

	// Logger receives the gateway's warnings (default slog.Default()).
	Logger *slog.Logger
}

// Gateway serves GraphQL subscriptions over WebSocket on evloop's loops,
// resolved from events of NATS or Redis, and mutations that publish
// events. Its methods may be called from any goroutine.
type Gateway struct {
	cfg    Config
	schema *Schema
	http   *http1.Server
	wsOpts ws.Options
	engine *engine
	pool   *workpool.Pool
	docs   cache[*parsed]    // documents by their text
	ops    cache[*operation] // operations by their request's payload
	stats  Stats
	// upstream resolves entities' fields, if configured.
	upstream *upstream

	mu       sync.Mutex
	sessions sessions
}

// New returns a Gateway for cfg. It fails if the schema names a provider
// that cfg does not have.
func New(cfg Config) (*Gateway, error) {
	if cfg.Schema == nil {
		return nil, errors.New("gateway: no schema")
	}
	if cfg.InitTimeout <= 0 {
		cfg.InitTimeout = defaultInitTimeout
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = 64 << 10
	}
	if cfg.MaxSubscriptions <= 0 {
		cfg.MaxSubscriptions = 100
	}
	if cfg.MaxFields <= 0 {
		cfg.MaxFields = defaultMaxFields
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = defaultMaxDepth
	}
	if cfg.MaxOutbound <= 0 {
		cfg.MaxOutbound = 1 << 20
	}
	if cfg.UpstreamTimeout <= 0 {
		cfg.UpstreamTimeout = 10 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4 * numCPU()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	sources := map[providerKey]Source{}
	for _, k := range cfg.Schema.providers() {
		var src Source
		switch k.kind {
		case NATS:
			src = cfg.NATS[k.id]
		case Redis:
			src = cfg.Redis[k.id]
		}
		if src == nil {
			return nil, fmt.Errorf("gateway: the schema uses %s provider %q, which is not configured", k.kind, k.id)
		}
		sources[k] = src
	}
	g := &Gateway{cfg: cfg, schema: cfg.Schema, pool: workpool.New(cfg.Workers)}
	g.docs.max = 1024
	g.ops.max = 4096
	if cfg.Upstream != "" {
		g.upstream = &upstream{url: cfg.Upstream, client: &http.Client{Timeout: cfg.UpstreamTimeout}}
	}
	g.sessions = sessions{g: g, loops: map[int]*loopSessions{}}
	g.wsOpts = ws.Options{
		Subprotocols:   []string{ProtocolTransportWS, ProtocolLegacyWS},
		CheckOrigin:    cfg.CheckOrigin,
		MaxMessageSize: cfg.MaxMessageSize,
	}
	e, err := newEngine(g.pool, sources, cfg.Logger, &g.stats)
	if err != nil {
		return nil, err
	}
	e.maxOutbound = cfg.MaxOutbound
	e.upstreamTimeout = cfg.UpstreamTimeout
	e.up = g.upstream
	g.engine = e
	g.http = &http1.Server{Name: "evgate", Logger: cfg.Logger, TLSConfig: cfg.TLSConfig}
	g.http.Engine.MaxConns = cfg.MaxConns
	g.http.HandleFastFunc("GET /graphql", func(w *http1.Response, r *http1.Request) {
		ws.Upgrade(w, r, g, &g.wsOpts)
	})
	g.http.HandleFunc("POST /graphql", g.serveHTTP)
	if !cfg.NoPage {
		g.http.HandleFastFunc("GET /", servePage)
	}
	return g, nil
}

// Handle adds a route to the gateway's HTTP server (a page, metrics,
// profiles), served on its worker pool. Routes must be added before
// serving.
func (g *Gateway) Handle(pattern string, h http.Handler) { g.http.Handle(pattern, h) }

// Stats returns the gateway's counters.
func (g *Gateway) Stats() *Stats { return &g.stats }

// ListenAndServe listens on addr and serves until Shutdown.
func (g *Gateway) ListenAndServe(addr string) error { return g.http.ListenAndServe(addr) }

// Start serves the connections ln accepts and returns at once.
func (g *Gateway) Start(ln net.Listener) error { return g.http.Start(ln) }

// StartTLS is Start over TLS (https:// and wss://), with the certificate
// and key of certFile and keyFile (PEM), or, both empty, Config.TLSConfig's.
func (g *Gateway) StartTLS(ln net.Listener, certFile, keyFile string) error {
	return g.http.StartTLS(ln, certFile, keyFile)
}

// Addrs returns the addresses the gateway listens on.
func (g *Gateway) Addrs() []net.Addr { return g.http.Addrs() }

// Shutdown completes every subscription, closes every WebSocket with 1001,
// stops serving and ends the upstream subscriptions: the context of a
// Subscribe still under way is cancelled, and a subscription its source
// completes all the same is ended when it does. It returns once the
// connections are closed and the sources have ended every upstream
// subscription, or with ctx's error when ctx ends first.
func (g *Gateway) Shutdown(ctx context.Context) error {
	g.sessions.each((*session).goingAway)
	err := g.http.Shutdown(ctx)
	if err2 := g.engine.stop(ctx); err == nil {
		err = err2
	}
	g.pool.Close()
	return err
}

// publish runs a mutation: its arguments, as JSON, go to its rendered
// subject. It returns the execution result.
func (g *Gateway) publish(op *operation) []byte {
	subject, err := op.bind.subjects[0].render(op.args)
	if err != nil {
		return appendErrorsResult(nil, err.Error())
	}
	data, err := json.Marshal(op.args)
	if err != nil {
		return appendErrorsResult(nil, err.Error())
	}
	src := g.engine.sources[providerKey{op.bind.kind, op.bind.provider}]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.callPublish(ctx, src, subject, data); err != nil {
		g.cfg.Logger.Warn("gateway: publish failed", "subject", subject, "err", err)
		return appendErrorsResult(nil, "publish failed: "+err.Error())
	}
	g.stats.Published.Add(1)
	return op.proj.appendResult(nil, map[string]any{"__typename": "edfs__PublishResult", "success": true})
}

// callPublish calls src.Publish. A panic in it is its error: a faulty
// Source fails the one mutation, not the process (publishing runs on the
// worker pool, where nothing else would recover it).
func (g *Gateway) callPublish(ctx context.Context, src Source, subject string, data []byte) (err error) {
	defer func() {
		if v := recover(); v != nil {
			g.cfg.Logger.Error("gateway: panic in a source's Publish", "subject", subject, "panic", v, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return src.Publish(ctx, subject, data)
}

// serveHTTP answers POST /graphql: mutations publish, introspection
// queries are answered; subscriptions need a WebSocket. The request must be application/json, come from an Origin
// CheckOrigin allows (if it has one), and pass Authenticate (if set).
//
// The answer is application/graphql-response+json if the Accept field
// prefers it, else application/json, and its status follows
// GraphQL-over-HTTP: a well-formed request that fails to parse or
// validate (or asks for a subscription) is 400 in the first, 200 in the
// second, which legacy clients read errors from whatever the status.
func (g *Gateway) serveHTTP(w http.ResponseWriter, r *http.Request) {
	requestError := http.StatusOK
	if prefersGraphQLResponse(r.Header.Values("Accept")) {
		w.Header().Set("Content-Type", "application/graphql-response+json; charset=utf-8")
		requestError = http.StatusBadRequest
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	reply := func(status int, errs gqlerror.List) {
		b, _ := json.Marshal(map[string]any{"errors": errs})
		w.WriteHeader(status)
		w.Write(b)
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin, r.Host) {
		reply(http.StatusForbidden, gqlerror.List{gqlerror.Errorf("origin %q not allowed", origin)})
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		reply(http.StatusUnsupportedMediaType, gqlerror.List{gqlerror.Errorf("the body must be application/json")})
		return
	}
	if g.cfg.Authenticate != nil {
		p := map[string]any{}
		if a := r.Header.Get("Authorization"); a != "" {
			p["headers"] = map[string]any{"Authorization": a}
		}
		if err := g.cfg.Authenticate(p); err != nil {
			w.Header().Set("WWW-Authenticate", "Bearer")
			reply(http.StatusUnauthorized, gqlerror.List{gqlerror.Errorf("Unauthorized")})
			return
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(g.cfg.MaxMessageSize)+1))
	if err != nil {
		reply(http.StatusBadRequest, gqlerror.List{gqlerror.Errorf("reading the request failed")})
		return
	}
	if len(body) > g.cfg.MaxMessageSize {
		reply(http.StatusRequestEntityTooLarge, gqlerror.List{gqlerror.Errorf("request too large")})
		return
	}
	req, err := decodeRequest(body)
	if err != nil || req.Query == "" {
		reply(http.StatusBadRequest, gqlerror.List{gqlerror.Errorf("the body must be a JSON object with a query string")})
		return
	}
	op, errs := g.prepare(req)
	switch {
	case errs != nil:
		reply(requestError, errs)
		return
	case op.kind == ast.Subscription:
		reply(requestError, gqlerror.List{gqlerror.Errorf("subscriptions are served over WebSocket (graphql-transport-ws or graphql-ws)")})
		return
	case op.kind == ast.Query:
		w.Write(op.result)
		return
	}
	w.Write(g.publish(op))
}

// prefersGraphQLResponse reports whether the Accept fields rank
// application/graphql-response+json at least as high as application/json
// (each at the weight of the most specific range that matches it, RFC 9110
// section 12.5.1), and above zero.
func prefersGraphQLResponse(accept []string) bool {
	const (
		exact = iota + 1 // the media type itself
		sub              // application/*
		all              // */*
	)
	type weight struct {
		q    float64
		rank int // 0: no range matched
	}
	var gql, js weight
	take := func(w *weight, q float64, rank int) {
		if w.rank == 0 || rank < w.rank {
			*w = weight{q, rank}
		}
	}
	for _, field := range accept {
		for _, r := range strings.Split(field, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
			if err != nil {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(v, 64); err != nil || q < 0 || q > 1 {
					continue
				}
			}
			switch mt {
			case "application/graphql-response+json":
				take(&gql, q, exact)
			case "application/json":
				take(&js, q, exact)
			case "application/*":
				take(&gql, q, sub)
				take(&js, q, sub)
			case "*/*":
				take(&gql, q, all)
				take(&js, q, all)
			}
		}
	}
	// A wildcard alone names neither: the legacy type is the default.
	return gql.rank == exact && gql.q > 0 && gql.q >= js.q
}
