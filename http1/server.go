package http1

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/internal/drain"
	"github.com/evloop/evloop/internal/workpool"
)

// Defaults of a Server's settings.
const (
	DefaultReadHeaderTimeout = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxBodyBytes      = 10 << 20
	DefaultWorkers           = 1024
)

// Server serves HTTP/1.1 (and 1.0) on evloop's event loops. Requests are
// answered by the handler of the route they match: a FastHandler runs on
// the loop that owns the connection; an http.Handler (Handle, or Handler
// for every request no route matches) runs on a bounded pool of worker
// goroutines and answers through the loop. Set the fields and add routes
// before serving; a Server serves once.
//
// Connections are kept alive, requests may be pipelined (answers go out in
// order), request bodies may be sent with Content-Length or chunked, and
// responses of pooled handlers are streamed (chunked when their length is
// not known). An idle connection holds no buffer and no goroutine; a
// connection that sends a head slowly costs a timer.
type Server struct {
	// Handler answers the requests no route matches, on the worker pool.
	// Nil means a 404 for every such request, answered on the loop.
	Handler http.Handler

	// Name, if set, is sent as the Server header of every response.
	Name string

	// Limits bound a request's head (default 1 MiB, 100 fields): past
	// them the answer is 431.
	Limits Limits
	// MaxBodyBytes bounds a request's body (default 10 MiB; negative: no
	// limit for pooled handlers). A longer Content-Length is refused with
	// 413 before the handler runs; a chunked body that grows past it fails
	// the handler's Body.Read with *http.MaxBytesError and the connection
	// closes after the response. A FastHandler receives its body whole, in
	// memory: for fast routes the limit always applies (10 MiB when
	// MaxBodyBytes is negative), and a chunked body that grows past it is
	// refused with 413 too.
	MaxBodyBytes int64

	// ReadHeaderTimeout bounds the time from a request's first byte to
	// the end of its head (default ReadTimeout if set, else 30s; negative:
	// none); for a head pipelined behind answers a slow client is still
	// taking, from when they are written (see IdleTimeout). A client that
	// takes longer gets 408 and the connection closes. It also bounds a
	// new connection's wait for its first byte, where it is shorter than
	// IdleTimeout, as net/http's server bounds its first read: a client
	// that connects and sends nothing is closed then, without an answer.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the time from a request's first byte to the end
	// of its body (default: none). A pooled handler may replace it for its
	// request with http.ResponseController's SetReadDeadline.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of a request's head to
	// the end of its pooled handler's answer, as net/http's does: a write
	// past it fails, and the connection is reset (default: none), as it
	// is when it passes with some of the answer still queued after the
	// handler returned. A handler may move it with
	// http.ResponseController's SetWriteDeadline. A fast handler's answer
	// is queued at once, so it does not apply there.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a kept-alive connection waits for its
	// next request (default 2 minutes; negative: forever), from when the
	// previous answers are all written, as net/http's server waits for
	// the next request once its writes returned. An answer with a write
	// deadline must be written by then. One without (a fast handler's,
	// the server's own, a pooled one without WriteTimeout) is waited for
	// as long as the client takes some of it: the connection closes once
	// the client took none of it for IdleTimeout (ReadHeaderTimeout when
	// the start of a head came) after the wait for the next request
	// timed out, and is reset Engine.CloseTimeout later if the answer
	// still cannot go out.
	IdleTimeout time.Duration
	// Timeouts are checked ten times a second: one fires up to 0.2 s late.

	// Workers bounds the goroutines that run pooled handlers (default
	// 1024). Requests beyond it wait, in arrival order, without a
	// goroutine.
	Workers int

	// Engine configures the event loops. Its MaxInbound, if zero, is set to
	// fit a head and a fast route's body.
	Engine evloop.Options

	// Logger receives handler panics and serving errors (default
	// slog.Default()).
	Logger *slog.Logger

	// TLSConfig configures ServeTLS, StartTLS and ListenAndServeTLS, as
	// net/http's Server's does: it is cloned, and its NextProtos offer
	// http/1.1 (h2 is left out: the loops speak HTTP/1.1 only). TLS
	// handshakes run on goroutines of their own, bounded by
	// Engine.HandshakeTimeout (default 10s); established connections are
	// the loops' as plain ones, and a pooled handler's Request.TLS says
	// what the handshake agreed.
	TLSConfig *tls.Config

	// BaseContext, if set, returns the context that pooled requests'
	// contexts derive from (Request.Context), as net/http's Server's
	// does: called once, with the listener Serve or Start was given,
	// before the first connection is accepted; a nil context fails Serve
	// and Start. The contexts are cancelled when it is, when their
	// clients go away, and when Shutdown gives up on their requests.
	BaseContext func(net.Listener) context.Context

	// ConnContext, if set, returns the context the pooled requests of a
	// connection derive theirs from, given the server's (BaseContext's), as
	// net/http's Server's does: called once, as the connection is accepted,
	// on its loop, where it must not block; c identifies the connection
	// and is not to be written to or closed by it. A nil context drops the
	// connection.
	ConnContext func(ctx context.Context, c *evloop.Conn) context.Context

	// ConnState, if set, is called as a connection changes state, as
	// net/http's Server's is: http.StateNew once accepted, StateActive when
	// the first bytes of a request arrive, StateIdle once it waits for the
	// next request with nothing of it received, every answer queued and
	// none held up by a client slow to take it (written at the end of the
	// loop's iteration; a pipelined burst, or a request that comes before
	// the last answer is queued, is one stretch of activity; a body being
	// dropped keeps it active), and, once, StateClosed when it closes, or
	// StateHijacked when it is handed on (Hijack, or a switch to a Protocol
	// such as a WebSocket upgrade), after which it is not called again for
	// the connection. It runs on the connection's loop and must not block;
	// c identifies the connection until StateClosed or StateHijacked
	// (c.RemoteAddr is nil by StateClosed: a hook that keeps figures by
	// address takes it at StateNew) and is not to be written to or closed
	// by it.
	ConnState func(c *evloop.Conn, state http.ConnState)

	routes router

	mu        sync.Mutex
	srv       *evloop.Server
	highWater int // the engine's HighWater (conn.serve)
	loops     []*loopState
	pool      *workpool.Pool
	started   bool
	ctx       context.Context // Request.Context's parent
	cancel    context.CancelFunc
	served    context.Context // done once Shutdown or Close is: Serve returns
	finish    context.CancelFunc
	active    drain.Count            // pooled requests not finished
	date      atomic.Pointer[[]byte] // loop 0's Date field, for the workers
	closing   atomic.Bool            // Shutdown began; read by workers too
	// noKeepAlives: SetKeepAlivesEnabled(false); read by workers too.
	noKeepAlives atomic.Bool
	onShutdown   []func() // RegisterOnShutdown's, under mu

	leaving   drain.Count // connections served by a Protocol that is a Shutdowner
	finishing drain.Count // requests for fast routes arriving when Shutdown began
}

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown
// or Close.
var ErrServerClosed = http.ErrServerClosed

// HandleFast routes the requests that match pattern to h, which runs on
// the loop. A pattern is "[METHOD ]PATH": a PATH ending in "/" matches
// every path under it, any other matches itself; of the patterns that
// match the request's method and path, the one with the longest path
// wins, and a pattern naming GET matches HEAD too. A path that matches
// only patterns of other methods is answered 405 with an Allow field
// naming their methods. Paths are matched as http.ServeMux matches
// them: percent-decoded (an escaped slash stays within its segment); a
// path that is not clean (empty, "." or ".." segments) is redirected to
// its clean form, and a subtree's root without its slash ("/static") to
// the subtree ("/static/"), with 307 and the query kept; a malformed
// escape is refused with 400. Handler alone, without patterns, gets the
// path as it came. A fast handler's Request.Path is the path as sent.
func (s *Server) HandleFast(pattern string, h FastHandler) {
	s.routes.add(pattern, route{fast: h})
}

// HandleFastFunc is HandleFast for a function.
func (s *Server) HandleFastFunc(pattern string, f func(*Response, *Request)) {
	s.HandleFast(pattern, FastHandlerFunc(f))
}

// Handle routes the requests that match pattern (as for HandleFast) to h,
// which runs on the worker pool.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.routes.add(pattern, route{std: h})
}

// HandleFunc is Handle for a function.
func (s *Server) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	s.Handle(pattern, http.HandlerFunc(f))
}

// ListenAndServe listens on the TCP address addr and serves until Shutdown
// or Close, returning ErrServerClosed once they are done, as Serve does.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// ListenAndServeTLS is ListenAndServe for HTTPS, with the certificate and
// key of certFile and keyFile (PEM), as ServeTLS takes them.
func (s *Server) ListenAndServeTLS(addr, certFile, keyFile string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.ServeTLS(ln, certFile, keyFile)
}

// ServeTLS is Serve for HTTPS. As net/http's, it loads the certificate
// and key of certFile and keyFile (PEM; the certificate file may hold the
// chain after it) unless both are empty, when TLSConfig must have a
// certificate (Certificates, GetCertificate or GetConfigForClient).
func (s *Server) ServeTLS(ln net.Listener, certFile, keyFile string) error {
	if err := s.StartTLS(ln, certFile, keyFile); err != nil {
		return err
	}
	<-s.served.Done()
	return ErrServerClosed
}

// StartTLS is Start for HTTPS, with the certificate as ServeTLS takes it.
func (s *Server) StartTLS(ln net.Listener, certFile, keyFile string) error {
	config, err := s.tlsConfig(certFile, keyFile)
	if err != nil {
		ln.Close()
		return err
	}
	return s.start(ln, config)
}

// tlsConfig is the TLS configuration of ServeTLS: TLSConfig's clone, with
// http/1.1 among its application protocols and h2 not, and the
// certificate of certFile and keyFile if given.
func (s *Server) tlsConfig(certFile, keyFile string) (*tls.Config, error) {
	config := &tls.Config{}
	if s.TLSConfig != nil {
		config = s.TLSConfig.Clone()
	}
	config.NextProtos = slices.DeleteFunc(slices.Clone(config.NextProtos), func(p string) bool { return p == "h2" })
	if !slices.Contains(config.NextProtos, "http/1.1") {
		config.NextProtos = append(config.NextProtos, "http/1.1")
	}
	if certFile != "" || keyFile != "" || len(config.Certificates) == 0 && config.GetCertificate == nil && config.GetConfigForClient == nil {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		config.Certificates = append([]tls.Certificate{cert}, config.Certificates...)
	}
	return config, nil
}

// Serve serves the connections ln accepts until Shutdown or Close, and
// returns ErrServerClosed once they are done: every connection closed
// (net/http's Serve returns as soon as Shutdown begins). The loops take
// ln's fd over; ln is closed. On a server shut down already, Serve closes
// ln and returns ErrServerClosed.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.Start(ln); err != nil {
		return err
	}
	<-s.served.Done()
	return ErrServerClosed
}

// Start serves the connections ln accepts, as Serve does, but returns at
// once; Shutdown or Close stop it. On a server shut down already, it
// closes ln and returns ErrServerClosed.
func (s *Server) Start(ln net.Listener) error {
	return s.start(ln, nil)
}

// start serves ln's connections, with TLS if config is not nil.
func (s *Server) start(ln net.Listener, config *tls.Config) error {
	base := context.Background()
	if s.BaseContext != nil { // called without the lock, as it may ask the server
		if base = s.BaseContext(ln); base == nil {
			ln.Close()
			return errors.New("http1: BaseContext returned a nil context")
		}
	}
	if err := s.init(base); err != nil {
		ln.Close()
		return err
	}
	serve := s.srv.Serve
	if config != nil {
		serve = func(ln net.Listener) error { return s.srv.ServeTLS(ln, config) }
	}
	if err := serve(ln); err != nil {
		s.Close()
		return err
	}
	return nil
}

// Addrs returns the addresses the server listens on.
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Addrs()
}

func (s *Server) init(base context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing.Load():
		return ErrServerClosed
	case s.started:
		return errors.New("http1: Server already serving")
	}
	if s.ReadHeaderTimeout == 0 {
		s.ReadHeaderTimeout = DefaultReadHeaderTimeout
		if s.ReadTimeout > 0 {
			s.ReadHeaderTimeout = s.ReadTimeout // as net/http
		}
	}
	if s.IdleTimeout == 0 {
		s.IdleTimeout = DefaultIdleTimeout
	}
	if s.MaxBodyBytes == 0 {
		s.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if s.Workers <= 0 {
		s.Workers = DefaultWorkers
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	opts := s.Engine
	if opts.MaxInbound == 0 {
		opts.MaxInbound = s.Limits.maxHeaderBytes() + int(s.fastBodyLimit()) + 64<<10
	}
	if opts.Logger == nil {
		opts.Logger = s.Logger
	}
	beforeFlush := opts.BeforeFlush
	opts.BeforeFlush = func(loop int) {
		s.loops[loop].caught = false // the iteration ends (catchUp)
		if beforeFlush != nil {
			beforeFlush(loop)
		}
	}
	srv, err := evloop.NewServer(s, opts)
	if err != nil {
		return err
	}
	s.srv = srv
	s.highWater = srv.Options().HighWater
	s.ctx, s.cancel = context.WithCancel(base)
	s.served, s.finish = context.WithCancel(context.Background())
	s.pool = workpool.New(s.Workers)
	s.loops = make([]*loopState, srv.Loops())
	start := time.Now()
	for i := range s.loops {
		ls := &loopState{s: s, index: i, start: start}
		ls.tick()
		s.loops[i] = ls
		srv.Submit(i, func() { srv.Every(i, tickEvery, ls.tick) })
	}
	s.started = true
	return nil
}

// fastBodyLimit is the most body bytes a fast route buffers.
func (s *Server) fastBodyLimit() int64 {
	if s.MaxBodyBytes > 0 {
		return s.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// Shutdown stops accepting, lets the requests under way finish and their
// answers go out (those arriving too, within their timeouts), closes every
// connection (idle ones at once, the others after their current
// response), and returns once all are closed; if ctx
// ends first, the rest are aborted and ctx.Err() is returned. The contexts
// of pooled requests still running then are cancelled. Connections
// switched to a Protocol that is a Shutdowner (WebSockets) are told with
// OnShutdown and given until ctx ends to close; the others switched are
// closed with the rest. Shutdown may be called more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.shutdown(ctx, true)
}

// shutdown is Shutdown; hooks says whether RegisterOnShutdown's functions
// run, which Close leaves out, as net/http's does.
func (s *Server) shutdown(ctx context.Context, hooks bool) error {
	s.mu.Lock()
	s.closing.Store(true)
	srv := s.srv
	s.mu.Unlock()
	if srv != nil {
		srv.StopAccepting()
	}
	if hooks {
		s.mu.Lock()
		for _, f := range s.onShutdown {
			go f()
		}
		s.mu.Unlock()
	}
	if srv == nil {
		return nil
	}
	// Each loop closes its idle connections and tells its Shutdowners;
	// from then on, a connection that switches is told as it does.
	var told sync.WaitGroup
	for i, ls := range s.loops {
		told.Add(1)
		err := srv.Submit(i, func() {
			defer told.Done()
			ls.shuttingDown = true
			srv.EachConn(i, func(c *evloop.Conn) {
				switch x := c.Context().(type) {
				case *conn:
					switch {
					case x.idle():
						c.Close()
					case x.holds():
						x.close() // its answer goes now, without waiting for the body's end
					case !x.awaited && x.std == nil && !x.dropping() && (x.arriving() || x.phase == flushing):
						// A request arriving (the start of a head, if
						// flushing): it is answered (with Connection:
						// close), then the connection closes, unless its
						// timeout or ctx comes first.
						x.awaited = true
						s.finishing.Add(1)
					}
				case Shutdowner:
					x.OnShutdown(c)
				}
			})
		})
		if err != nil {
			told.Done()
		}
	}
	told.Wait()
	// Let the requests arriving be answered, pooled requests finish, and
	// Shutdowners close, before the loops close what is left. In that
	// order: an arriving request may go to a pooled handler, which may
	// switch its connection to a Shutdowner, each counted before the
	// one before it is done.
	err := s.finishing.Wait(ctx)
	if err == nil {
		err = s.active.Wait(ctx)
	}
	if err == nil {
		err = s.leaving.Wait(ctx)
	}
	if serr := srv.Shutdown(ctx); err == nil {
		err = serr
	}
	s.cancel()
	s.finish()
	s.pool.Close()
	return err
}

// Close stops the server at once: connections are aborted and the contexts
// of pooled requests cancelled.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.shutdown(ctx, false)
	return nil
}

// RegisterOnShutdown registers f to be called, on a goroutine of its
// own, when Shutdown begins (after the listeners close), as net/http's
// Server's: to tell the connections a handler took over (hijacked ones,
// long polls) that the server is going. Close does not call it, and each
// call of Shutdown calls it again.
func (s *Server) RegisterOnShutdown(f func()) {
	s.mu.Lock()
	s.onShutdown = append(s.onShutdown, f)
	s.mu.Unlock()
}

// SetKeepAlivesEnabled controls whether connections are kept for more
// requests, as net/http's Server's: they are by default. Disabled, every
// answer from then on says "Connection: close" and its connection closes
// after it (a request under way too, whose answer was begun), and the
// idle connections are closed, each by its loop, right after the call:
// those that served a request, and, as net/http's, those that have waited
// more than 5 s for their first (a younger one may have its first request
// on the way: it is answered and closed). A server that is shutting down
// is the only one that should disable them.
func (s *Server) SetKeepAlivesEnabled(v bool) {
	s.noKeepAlives.Store(!v)
	if v {
		return
	}
	s.mu.Lock()
	srv, loops := s.srv, s.loops
	s.mu.Unlock()
	if srv == nil {
		return
	}
	for i := range loops {
		// Not waited for: the call may come from a handler on a loop.
		srv.Submit(i, func() {
			ls := loops[i]
			ls.catchUp()
			srv.EachConn(i, func(c *evloop.Conn) {
				// A body being dropped is dropped first: serve closes then.
				if x, ok := c.Context().(*conn); ok && x.idle() && !x.dropping() && (x.begun || ls.now-x.began > ceilTicks(newConnWait)) {
					c.Close()
				}
			})
		})
	}
}

// newConnWait is how long a connection waits for its first request before
// SetKeepAlivesEnabled(false) takes it for idle, as net/http's (Issue
// 22682).
const newConnWait = 5 * time.Second

// closesConns reports whether connections close after their current
// answer: Shutdown began, or keep-alives are disabled.
func (s *Server) closesConns() bool { return s.closing.Load() || s.noKeepAlives.Load() }

// closesConns is the server's, where the loop's own mark of the shutdown
// is at hand.
func (ls *loopState) closesConns() bool { return ls.shuttingDown || ls.s.noKeepAlives.Load() }

// loopState is what the server keeps per loop, owned by the loop.
type loopState struct {
	s     *Server
	index int
	start time.Time
	now   int64 // ticks since start, updated by tick and catchUp
	// caught says catchUp read the clock in this iteration of the loop.
	caught bool
	sec    int64  // the Unix second date was made in
	date   []byte // "Date: ...\r\n", updated by tick

	// head200 is the start of a 200 answer the server dates: the status
	// line, the Date field and the Server field, rebuilt by tick.
	head200 []byte

	req    Request // the head being handled
	resp   Response
	fields []byte // a fast handler's header fields
	body   []byte // a fast handler's response body
	iov    [2][]byte

	// out batches the answers written on the loop to one connection,
	// outc, while serve answers what it has buffered: a pipelined burst
	// costs one copy into the outbound queue, not one per answer. Nothing
	// is left in it when the loop goes on to other work (see flushOut).
	out  []byte
	outc *conn

	// answering is the connection whose fast handler is running, and
	// answerAt where its answer begins in out: if the handler panics,
	// what it sent of its answer (a 1xx) is cut from the batch.
	answering *conn
	answerAt  int

	// route is the last route set matched by exact path: a loop's
	// requests mostly go where the previous one went.
	route *routeSet

	// connCtx holds what Server.ConnContext returned for each connection
	// (only while it is set), until it closes or is handed on: the parent
	// of its pooled requests' contexts, kept here so that a connection
	// without it costs no more.
	connCtx map[*conn]context.Context

	timeouts     timeouts
	deadlines    deadlines // pooled handlers' read and write deadlines
	shuttingDown bool

	// free holds the states of closed (or switched) connections for new
	// ones: a server taking many connections makes less garbage, so its
	// heap, and its resident memory, grow less.
	free []*conn
}

// maxFree bounds a loop's free connection states.
const maxFree = 1024

func (ls *loopState) newConn() *conn {
	if n := len(ls.free); n > 0 {
		hc := ls.free[n-1]
		ls.free[n-1] = nil
		ls.free = ls.free[:n-1]
		return hc
	}
	return new(conn)
}

// recycle keeps hc for a new connection; nothing may refer to it.
func (ls *loopState) recycle(hc *conn) {
	ls.timeouts.remove(hc) // on no list by now; were it, zeroed, the list would break
	if len(ls.free) < maxFree {
		*hc = conn{}
		ls.free = append(ls.free, hc)
	}
}

// tickEvery is the period of a loop's clock, by which timeouts and
// deadlines are counted.
const tickEvery = 100 * time.Millisecond

// tick advances the loop's clock and, when the second changed, its Date
// field, and times out the connections whose deadline passed.
func (ls *loopState) tick() {
	now := time.Now()
	ls.now = int64(now.Sub(ls.start) / tickEvery)
	defer ls.deadlines.expire(ls.now)
	defer ls.timeouts.expire(ls.now)
	if now.Unix() == ls.sec {
		return
	}
	ls.sec = now.Unix()
	ls.date = append(ls.date[:0], "Date: "...)
	ls.date = now.UTC().AppendFormat(ls.date, http.TimeFormat)
	ls.date = append(ls.date, "\r\n"...)
	ls.head200 = ls.appendStart(ls.head200[:0], http.StatusOK, 0)
	if ls.index == 0 {
		date := slices.Clone(ls.date)
		ls.s.date.Store(&date)
	}
}

// OnOpen implements evloop.Handler.
func (s *Server) OnOpen(c *evloop.Conn) {
	ls := s.loops[c.Loop()]
	hc := ls.newConn()
	hc.ls, hc.c = ls, c
	hc.p.Limits = s.Limits
	c.SetContext(hc)
	if s.ConnContext != nil {
		ctx := s.ConnContext(s.ctx, c)
		if ctx == nil {
			s.Logger.Error("http1: ConnContext returned a nil context: connection dropped", "remote", c.RemoteAddr())
			hc.reported = uint8(http.StateClosed) + 1 // never told new: not told closed
			c.Abort()
			return
		}
		if ls.connCtx == nil {
			ls.connCtx = make(map[*conn]context.Context)
		}
		ls.connCtx[hc] = ctx
	}
	hc.connState(http.StateNew)
	hc.waitFirst()
}

// OnData implements evloop.Handler.
func (s *Server) OnData(c *evloop.Conn) {
	switch x := c.Context().(type) {
	case *conn:
		x.serve()
	case Protocol:
		x.OnData(c)
	}
}

// OnReadEOF implements evloop.ReadEOFHandler: a client that half-closes
// after its request still gets the answer.
func (s *Server) OnReadEOF(c *evloop.Conn) {
	switch x := c.Context().(type) {
	case *conn:
		x.readEOF()
	case Protocol:
		c.SetContext(nil) // OnClose runs once, even if it panics
		defer c.Close()   // the protocol's peer is done: close
		s.closeProtocol(x, c, nil)
	}
}

// closeProtocol calls p's OnClose, and accounts for the connection once p
// is through with it: at once, or when a LateCloser says so.
func (s *Server) closeProtocol(p Protocol, c *evloop.Conn, err error) {
	if lc, ok := p.(LateCloser); ok {
		lc.OnCloseThen(c, err, func() { s.protocolClosed(p) })
		return
	}
	s.protocolClosed(p)
	p.OnClose(c, err)
}

// OnBackPressure implements evloop.BackPressureHandler: a connection
// whose client does not read its answers is not served more requests
// until they drain; a protocol switched to learns of it if it asks.
func (s *Server) OnBackPressure(c *evloop.Conn, paused bool) {
	switch x := c.Context().(type) {
	case *conn:
		x.backPressure(paused)
	case evloop.BackPressureHandler:
		x.OnBackPressure(c, paused)
	}
}

// OnWritten implements evloop.WrittenHandler: a connection whose answers
// a slow client was taking waits for its next request from now
// (conn.written); a protocol switched to learns of it if it asks.
func (s *Server) OnWritten(c *evloop.Conn) {
	switch x := c.Context().(type) {
	case *conn:
		x.written()
	case evloop.WrittenHandler:
		x.OnWritten(c)
	}
}

// OnHandshakeError implements evloop.HandshakeErrorHandler: a plain
// HTTP request sent to the HTTPS port is answered 400, in the clear, as
// net/http answers it.
func (s *Server) OnHandshakeError(remote net.Addr, err error) []byte {
	var re tls.RecordHeaderError
	if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
		return plainRequestAnswer
	}
	return nil
}

// plainRequestAnswer is net/http's answer to a plain request on a TLS port.
var plainRequestAnswer = []byte("HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")

// looksLikeHTTP reports whether the five bytes a TLS record's header would
// be are the start of an HTTP request, as net/http tells them.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// OnClose implements evloop.Handler.
func (s *Server) OnClose(c *evloop.Conn, err error) {
	switch x := c.Context().(type) {
	case *conn:
		x.closed(err)
	case Protocol:
		s.closeProtocol(x, c, err)
	}
}

// LateCloser may be implemented by a Protocol whose work for a connection
// goes on after the connection closed (a message being handled on another
// goroutine): OnCloseThen is called instead of OnClose, and calls done
// once the protocol is through with the connection, on any goroutine.
// Shutdown waits for it as for the connection.
type LateCloser interface {
	OnCloseThen(c *evloop.Conn, err error, done func())
}

// protocolClosed accounts for a connection p served, closed.
func (s *Server) protocolClosed(p Protocol) {
	if _, ok := p.(Shutdowner); ok {
		s.leaving.Add(-1)
	}
}

// Protocol is what serves a connection after a handler switched it to
// another protocol (101 Switching Protocols, as a WebSocket upgrade does).
// Its methods run on the connection's loop, as evloop.Handler's do: OnOpen
// once the 101 answer is queued, OnData when bytes arrive (at once, after
// OnOpen, if bytes after the upgrade request are buffered already),
// OnClose once. The Protocol value is the connection's state: the
// connection's context holds it, so a Protocol does not call
// Conn.SetContext.
type Protocol interface {
	OnOpen(c *evloop.Conn)
	OnData(c *evloop.Conn)
	OnClose(c *evloop.Conn, err error)
}

// Shutdowner is a Protocol that ends its connections itself when the
// server shuts down, as a WebSocket does with a close frame (1001, going
// away) and the peer's answer. OnShutdown runs on the connection's loop
// when Shutdown begins, or when the connection switches while it is under
// way; Shutdown then waits for those connections to close until its
// context ends. The connections of a Protocol that is not a Shutdowner
// are closed with the rest, once Shutdown is done waiting, after their
// queued bytes.
type Shutdowner interface {
	Protocol
	OnShutdown(c *evloop.Conn)
}
