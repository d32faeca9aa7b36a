package evloop

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/evloop/evloop/internal/buf"
	"github.com/evloop/evloop/internal/loop"
	"github.com/evloop/evloop/internal/poll"
	"github.com/evloop/evloop/internal/sock"
)

// LoadBalancing says how accepted connections are spread over the loops.
type LoadBalancing uint8

const (
	// RoundRobin: one acceptor hands connections to the loops in turn.
	RoundRobin LoadBalancing = iota
	// LeastConnections: one acceptor hands each connection to the loop
	// with the fewest.
	LeastConnections
	// SourceAddrHash: one acceptor hands each connection to the loop its
	// source address hashes to, so one client's connections share a loop.
	SourceAddrHash
	// ReusePort: every loop has its own listening socket on the address
	// (SO_REUSEPORT) and the kernel spreads connections. Linux balances;
	// most BSDs give every connection to one socket.
	ReusePort
)

// Options configure a Server. The zero value is ready to use.
type Options struct {
	// Loops is the number of event loops (default GOMAXPROCS).
	Loops int
	// LoadBalancing spreads accepted connections (default RoundRobin).
	LoadBalancing LoadBalancing
	// LockOSThread runs each loop on an OS thread of its own; PinLoops also
	// pins loop i to the i-th of the CPUs the process may run on, modulo
	// their number (Linux).
	LockOSThread bool
	PinLoops     bool
	// BlockingPoll makes an idle loop block its thread in epoll_wait rather
	// than park in the Go runtime's poller: steadier latency with several
	// loops whose clients are other processes (wrk's p99 at 256
	// connections on two loops 6 ms, against up to 207 ms parked), slower
	// wake-ups for goroutines of this process that wait on the runtime's
	// poller while every P is held by a blocked loop (an in-process
	// net.Conn client: 340µs a round trip against 24µs). With one loop it
	// bought nothing measurable (evkv under redis-benchmark). kqueue
	// always blocks.
	BlockingPoll bool
	// Nap is how long a loop that has just served events, and finds nothing
	// more ready, sleeps before it waits again (zero: never). What comes in
	// meanwhile is served in one batch, and clients on other CPUs do not
	// pay to wake a blocked loop for each request: a loop that answers
	// each request as it comes, one event or two a wait, costs such a
	// client more CPU in wake-ups than it spends answering. It suits loops
	// whose clients' CPU is the bottleneck: evkv (20µs) under
	// redis-benchmark served 1.1-1.2 times the requests a second for no
	// more CPU a request, with 50 clients and with 1,000; wrk at 50
	// connections got 1.05-1.10 times the answers for 2-3% less CPU an
	// answer, but at 256, where a wait already finds about ten events,
	// the same throughput for 3-6% more. A loop whose naps find fewer
	// than two events naps less and less often, down to one wait in 64. A
	// request that comes during a nap waits for its end. On Linux a nap of
	// up to 100µs is a system call the Go runtime does not see (which
	// holds the loop's P, and delays a garbage collection's pause by as
	// much).
	Nap time.Duration
	// Nagle leaves Nagle's algorithm on; by default TCP_NODELAY is set.
	Nagle bool
	// KeepAlive is the TCP keep-alive period (default 15s; negative: off).
	KeepAlive time.Duration
	// SendBuffer and RecvBuffer set the kernel's socket buffers (0: the
	// system's default).
	SendBuffer, RecvBuffer int
	// HighWater is the outbound queue length above which a connection
	// stops being read (default 1 MiB); LowWater, the length below which
	// reading resumes (default HighWater/4).
	HighWater, LowWater int
	// MaxOutbound bounds a connection's outbound queue: a Write past it
	// fails with ErrOutboundFull (default 64 MiB).
	MaxOutbound int
	// MaxConns, if positive, bounds the connections open at once: at it,
	// the listeners accept no more, and clients that connect wait in the
	// kernel's listen backlog (Listen's, the system's maximum) until a
	// connection closes, as behind net/http's netutil.LimitListener.
	// Dialed and adopted connections count, but are not refused.
	MaxConns int
	// MaxInbound bounds the bytes a handler may leave unconsumed; past it
	// the connection closes with ErrInboundFull (default 64 MiB).
	MaxInbound int
	// CloseTimeout bounds how long Close waits for the peer to take some
	// of the queued bytes before aborting (default 30s; negative:
	// forever): a peer that goes on taking them gets them all.
	CloseTimeout time.Duration
	// HandshakeTimeout bounds a TLS connection's handshake, from its
	// accept (default 10s; negative: none). A client that has not finished
	// it by then is disconnected.
	HandshakeTimeout time.Duration
	// DialFallbackDelay is how long Dial waits on a host name's first
	// address family before it races a dial to the other (RFC 8305's
	// Happy Eyeballs, as net.Dialer's FallbackDelay): default 300 ms;
	// negative, the addresses are tried in turn alone.
	DialFallbackDelay time.Duration
	// Logger receives recovered panics and accept failures, among them
	// the error that closed a listener (default slog.Default()).
	Logger *slog.Logger
	// BeforeFlush, if set, is called on each loop, with the loop's index,
	// at the end of every iteration, before the bytes its connections
	// queued in that iteration are written. An append-only log writes (and
	// syncs) there, so that no reply leaves before what it acknowledges is
	// stored. A Write made in BeforeFlush goes out in the same flush.
	BeforeFlush func(loop int)
}

func (o *Options) defaults() {
	if o.Loops <= 0 {
		o.Loops = runtime.GOMAXPROCS(0)
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.HighWater <= 0 {
		o.HighWater = 1 << 20
	}
	if o.LowWater <= 0 || o.LowWater > o.HighWater {
		o.LowWater = o.HighWater / 4
	}
	if o.MaxOutbound <= 0 {
		o.MaxOutbound = 64 << 20
	}
	if o.MaxInbound <= 0 {
		o.MaxInbound = 64 << 20
	}
	if o.CloseTimeout == 0 {
		o.CloseTimeout = 30 * time.Second
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.DialFallbackDelay == 0 {
		o.DialFallbackDelay = 300 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Server runs event loops and the connections placed on them: accepted
// from its listeners, dialed, or adopted. Its methods may be called from
// any goroutine.
type Server struct {
	h     Handler
	opts  Options
	loops []*loopState
	next  atomic.Uint32 // round-robin cursor
	seed  maphash.Seed

	mu        sync.Mutex
	listeners []*listener
	shutdown  bool
	draining  bool // Shutdown closed the listeners: no connection comes now
	deaf      bool // StopAccepting: listeners closed, new ones refused

	conns   atomic.Int64  // open connections, all loops
	drained chan struct{} // closed when conns reaches 0 once Shutdown closed the listeners
	paused  atomic.Int32  // listeners paused for want of fds, or at MaxConns
	stopped sync.Once

	handshakes sync.WaitGroup // TLS handshakes' goroutines
	handshaken chan struct{}  // closed once they have ended, after stopLoops
}

// loopState is what the reactor keeps per loop. Owned by the loop goroutine
// but for nconns.
type loopState struct {
	s      *Server
	index  int
	h      Handler
	l      *loop.Loop
	rbuf   []byte   // the loop's shared read buffer
	dirty  []*Conn  // written to in this iteration
	spare  []*Conn  // the other buffer of dirty
	more   []*Conn  // to read again: their last read filled its buffer
	more2  []*Conn  // the other buffer of more
	iov    [][]byte // scratch for writev
	nconns atomic.Int64

	// ServeOthers's: whether it is running, its read buffer and its
	// buffer of dirty.
	serving     bool
	rbufOthers  []byte
	othersDirty []*Conn

	// The write arena: Write copies into it while the connection's socket
	// is writable as far as anyone knows, and the end-of-iteration flush
	// writes straight from it. What a socket does not take is moved to
	// chunks of the connection's own before the arena is reused, so the
	// common write — queued and flushed in one iteration — never makes a
	// connection hold a buffer. wa[waN-1] is being filled, from waOff.
	wa    []*buf.Chunk
	waN   int
	waOff int

	// Drained outbound queues, kept for the next connection that writes:
	// an idle connection holds no queue, and steady writing allocates none.
	queues [][]segment
	noBufs []*Conn                     // to flush again after noBuffersRetry (retryWrite)
	dials  map[*Conn]chan<- dialResult // connections being dialed
	panics map[*Conn]*PanicError       // closing after a panic: OnClose's error
	tls    map[*Conn]*tlsState         // TLS connections' state (Conn.secure)
	eofs   map[*Conn]struct{}          // peers' EOFs kept while reading is paused (deliverEOF)

	// Accepted fds handed over by another loop's acceptor; one task, bound
	// once, takes a whole batch, so a hand-off allocates nothing.
	hmu    sync.Mutex
	handed []handed
	takeFn func()
}

// handed is an accepted fd handed over to a loop, with its listener's TLS
// configuration if it has one.
type handed struct {
	fd  int
	tls *tls.Config
}

// handOff gives an accepted, admitted fd to this loop. Any goroutine may
// call it.
func (ls *loopState) handOff(fd int, config *tls.Config) {
	ls.hmu.Lock()
	first := len(ls.handed) == 0
	ls.handed = append(ls.handed, handed{fd, config})
	ls.hmu.Unlock()
	if first && ls.l.Submit(ls.takeFn) != nil {
		ls.closeHanded() // the loop is stopping: it will take nothing more
	}
}

// take opens the handed-over fds. It runs on the loop.
func (ls *loopState) take() {
	if ls.s.isShutdown() {
		ls.closeHanded()
		return
	}
	for _, h := range ls.takeHanded() {
		ls.open(h.fd, h.tls)
	}
}

// closeHanded closes the handed-over fds when no loop will open them.
func (ls *loopState) closeHanded() {
	for _, h := range ls.takeHanded() {
		sock.Close(h.fd)
		ls.gone()
	}
}

func (ls *loopState) takeHanded() []handed {
	ls.hmu.Lock()
	defer ls.hmu.Unlock()
	fds := ls.handed
	ls.handed = nil
	return fds
}

const readBufferSize = 64 << 10

// NewServer starts the loops of a Server whose connections h handles. The
// server accepts nothing until Listen or Serve.
func NewServer(h Handler, opts Options) (*Server, error) {
	if h == nil {
		return nil, errors.New("evloop: nil handler")
	}
	opts.defaults()
	s := &Server{h: h, opts: opts, seed: maphash.MakeSeed(), drained: make(chan struct{})}
	for i := range opts.Loops {
		ls := &loopState{s: s, index: i, h: h, rbuf: make([]byte, readBufferSize), iov: make([][]byte, 0, 64), dials: make(map[*Conn]chan<- dialResult)}
		ls.takeFn = ls.take
		l, err := loop.New(loop.Options{
			LockOSThread:   opts.LockOSThread,
			PinCPU:         opts.PinLoops,
			BlockingPoll:   opts.BlockingPoll,
			Nap:            max(0, opts.Nap),
			CPU:            i,
			Logger:         opts.Logger,
			EndOfIteration: ls.flushDirty,
		})
		if errors.Is(err, poll.ErrUnsupported) {
			err = ErrUnsupported
		}
		if err == nil {
			ls.l = l
			err = l.Start()
		}
		if err != nil {
			if l != nil {
				l.Stop()
			}
			s.stopLoops()
			return nil, err
		}
		s.loops = append(s.loops, ls)
	}
	return s, nil
}

// Listen is NewServer followed by Server.Listen.
func Listen(network, addr string, h Handler, opts Options) (*Server, error) {
	s, err := NewServer(h, opts)
	if err != nil {
		return nil, err
	}
	if _, err := s.Listen(network, addr); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Listen starts accepting connections on a TCP ("tcp", "tcp4", "tcp6") or
// Unix ("unix") address and returns the address bound (with the port
// chosen, for port 0). With ReusePort, every loop listens; otherwise one
// loop accepts and hands connections out. A listener stops accepting for a
// while when the process runs out of descriptors, and for good when accept
// fails for a reason of its own (its socket closed or no longer
// listening): as net/http's Serve returns at such an error, it is closed,
// the error logged to Options.Logger and the address dropped from Addrs,
// while the other listeners and the connections go on.
func (s *Server) Listen(network, addr string) (net.Addr, error) {
	return s.listen(network, addr, nil)
}

// ListenTLS is Listen for TLS connections, whose server side config is,
// as tls.Listen's: it must have a certificate (Certificates,
// GetCertificate or GetConfigForClient), and must not be modified once
// given. A connection's OnOpen runs after its handshake; what it reads
// and writes is the plaintext, and Conn.ConnectionState tells the
// handshake's outcome. A handshake runs on a goroutine of its own, from
// the client's first whole record until it ends, for
// Options.HandshakeTimeout at most; a failed one is logged at the debug level. Close sends TLS's
// close_notify before the FIN, CloseWrite too, and a peer's close_notify
// is its EOF. Detach hands over the *tls.Conn.
func (s *Server) ListenTLS(network, addr string, config *tls.Config) (net.Addr, error) {
	if err := checkTLSConfig(config); err != nil {
		return nil, err
	}
	return s.listen(network, addr, config)
}

func (s *Server) listen(network, addr string, config *tls.Config) (net.Addr, error) {
	if s.opts.LoadBalancing != ReusePort || network == "unix" {
		return s.listenOne(network, addr, sock.ListenOptions{}, config)
	}
	var bound net.Addr
	for _, ls := range s.loops {
		if bound != nil {
			addr = bound.String() // port 0: the others join the first's port
		}
		fd, b, err := sock.Listen(network, addr, sock.ListenOptions{ReusePort: true})
		if err == nil {
			err = s.addListener(ls, fd, b, true, config)
		}
		if err != nil {
			if bound != nil {
				s.Unlisten(bound) // the group's first loops listen already
			}
			return nil, err
		}
		bound = b
	}
	return bound, nil
}

// ListenUnix is Listen on the Unix socket at path whose file gets perm's
// permissions (os.FileMode.Perm) before the socket listens, between bind
// and listen, as Redis applies unixsocketperm: a client perm shuts out
// cannot connect in the meantime, as it could between a Listen and an
// os.Chmod. perm 0 leaves the mode bind gave, 0777 less the umask. If the
// permissions cannot be set, the socket is closed and its file removed.
func (s *Server) ListenUnix(path string, perm os.FileMode) (net.Addr, error) {
	return s.listenOne("unix", path, sock.ListenOptions{Perm: perm}, nil)
}

// listenOne listens on one socket, which one loop accepts on.
func (s *Server) listenOne(network, addr string, o sock.ListenOptions, config *tls.Config) (net.Addr, error) {
	fd, bound, err := sock.Listen(network, addr, o)
	if err != nil {
		return nil, err
	}
	return bound, s.addListener(s.nextLoop(), fd, bound, false, config)
}

// Serve starts accepting connections from ln, a *net.TCPListener or
// *net.UnixListener (one that systemd handed over, say). The Server takes
// ln over: it works on a duplicate of its fd and closes ln. A listener of
// other than stream sockets ("unixpacket") is refused with ErrUnsupported.
// Serve returns once the listener is registered, not when it stops; what
// stops it is as for Listen.
func (s *Server) Serve(ln net.Listener) error {
	return s.serve(ln, nil)
}

// ServeTLS is Serve for TLS connections, as ListenTLS is Listen.
func (s *Server) ServeTLS(ln net.Listener, config *tls.Config) error {
	if err := checkTLSConfig(config); err != nil {
		return err
	}
	return s.serve(ln, config)
}

func (s *Server) serve(ln net.Listener, config *tls.Config) error {
	fd, err := dupFD(ln)
	if err != nil {
		return err
	}
	addr := ln.Addr()
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // the socket file is the Server's now
	}
	ln.Close()
	return s.addListener(s.nextLoop(), fd, addr, false, config)
}

// Adopt places an established connection, a *net.TCPConn or *net.UnixConn
// (one a TLS-less handshake or another process handed over, say), on a loop,
// where OnOpen runs for it. The Server takes c over: it works on a
// duplicate of its fd and closes c; socket options set on c stay. Only
// what is still in the socket reaches OnData: bytes already read from c,
// such as those a bufio.Reader holds (http.Hijacker's, say), are the
// caller's to handle, which Adopt cannot do. A conn that is not a stream
// socket (UDP, a Unix datagram) or has no fd of its own (a *tls.Conn,
// whose TLS state Adopt cannot take over) is refused with ErrUnsupported and left open, as is
// any conn once Shutdown began, with ErrClosed. A conn Adopt took is
// opened even if Shutdown begins before its loop gets to it; that
// Shutdown then closes it.
func (s *Server) Adopt(c net.Conn) error {
	fd, err := dupFD(c)
	if err != nil {
		return err
	}
	ls := s.pick(c.RemoteAddr())
	// Queued under s.mu, so that a Shutdown either refuses the conn or
	// finds it open on the loop: its closing pass, queued once it has set
	// s.shutdown, runs on each loop after what was queued before.
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		sock.Close(fd)
		return ErrClosed
	}
	ls.admit()
	err = ls.l.Submit(func() { ls.open(fd, nil) })
	s.mu.Unlock()
	if err != nil { // the loop is stopped: it opens nothing more
		sock.Close(fd)
		ls.gone()
		return ErrClosed
	}
	c.Close()
	return nil
}

// dupFD duplicates the fd of a stream socket's conn or listener; others
// (UDP, Unix datagrams or seqpackets) are ErrUnsupported.
func dupFD(v any) (int, error) {
	sc, ok := v.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("%w: %T has no file descriptor", ErrUnsupported, v)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	return sock.DupRaw(rc, func(fd int) error {
		if !sock.IsStream(fd) {
			return fmt.Errorf("%w: %T is not a stream socket", ErrUnsupported, v)
		}
		return nil
	})
}

func (s *Server) addListener(ls *loopState, fd int, addr net.Addr, keeps bool, config *tls.Config) error {
	errc := make(chan error, 1)
	if err := ls.l.Submit(func() { errc <- s.register(ls, fd, addr, keeps, config) }); err != nil {
		sock.Close(fd)
		return ErrClosed
	}
	if err := <-errc; err != nil {
		sock.Close(fd)
		return err
	}
	return nil
}

// register registers a listener on ls and publishes it, in one step under
// s.mu, so that Shutdown either sees the listener (and closes it) or
// refuses it. It runs on ls's loop. keeps: the listener is one of a
// ReusePort group, whose connections stay on the loop the kernel chose.
// config is a TLS listener's.
func (s *Server) register(ls *loopState, fd int, addr net.Addr, keeps bool, config *tls.Config) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown || s.deaf {
		return ErrClosed
	}
	ln := &listener{s: s, ls: ls, fd: fd, addr: addr, keeps: keeps, tls: config, file: socketFile(addr)}
	if err := ls.l.Register(fd, poll.Read, ln); err != nil {
		return err
	}
	s.listeners = append(s.listeners, ln)
	return nil
}

// ListenLoop is Listen for code that runs on loop i (a handler, a function
// given to Submit, a timer's), where Listen, which waits for the loops,
// would never return: the listener is registered on loop i before it
// returns, and loop i accepts its connections. Its socket is a plain one:
// with ReusePort it does not join the other loops' sockets of an address.
func (s *Server) ListenLoop(i int, network, addr string) (net.Addr, error) {
	return s.listenLoop(i, network, addr, nil)
}

// ListenLoopTLS is ListenLoop for TLS connections, as ListenTLS is Listen.
func (s *Server) ListenLoopTLS(i int, network, addr string, config *tls.Config) (net.Addr, error) {
	if err := checkTLSConfig(config); err != nil {
		return nil, err
	}
	return s.listenLoop(i, network, addr, config)
}

func (s *Server) listenLoop(i int, network, addr string, config *tls.Config) (net.Addr, error) {
	fd, bound, err := sock.Listen(network, addr, sock.ListenOptions{})
	if err != nil {
		return nil, err
	}
	if err := s.register(s.loops[i], fd, bound, false, config); err != nil {
		sock.Close(fd)
		return nil, err
	}
	return bound, nil
}

func (s *Server) isShutdown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shutdown
}

func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// Unlisten closes the listener bound to addr (as Listen or Addrs returned
// it) and returns once it is closed; the connections it accepted stay. A
// Unix socket's file is removed with it, as package net removes it, unless
// another socket has taken its path meanwhile. It
// fails with ErrNotListening if no listener has that address. With
// ReusePort, it closes every loop's listener of the address. Like
// StopAccepting, it waits for the loops: call it from another goroutine.
func (s *Server) Unlisten(addr net.Addr) error {
	return s.unlisten(addr, func(ln *listener) { s.onLoop(ln.ls, ln.close) })
}

// UnlistenLoop is Unlisten for code that runs on loop i: its listeners of
// addr close before it returns, those of other loops when their loops next
// run, so that the address may still be taken when it returns (a listener
// made by Listen may be on any loop; one made by ListenLoop(i) is on i).
func (s *Server) UnlistenLoop(i int, addr net.Addr) error {
	return s.unlisten(addr, func(ln *listener) {
		if ln.ls == s.loops[i] {
			ln.close()
		} else {
			ln.ls.l.Submit(ln.close)
		}
	})
}

// unlisten closes the listeners of addr with closeOne and unlists them.
func (s *Server) unlisten(addr net.Addr, closeOne func(*listener)) error {
	match := func(ln *listener) bool {
		return ln.addr.Network() == addr.Network() && ln.addr.String() == addr.String()
	}
	s.mu.Lock()
	var gone []*listener
	for _, ln := range s.listeners {
		if match(ln) {
			gone = append(gone, ln)
		}
	}
	s.mu.Unlock()
	if len(gone) == 0 {
		return fmt.Errorf("%w: %s", ErrNotListening, addr)
	}
	// Closed while still listed, so that a Shutdown that lists them
	// meanwhile closes them too (closing twice does nothing) rather than
	// stopping the loops with one neither has closed.
	for _, ln := range gone {
		closeOne(ln)
	}
	s.mu.Lock()
	// A new slice: StopAccepting and Shutdown range over the old one.
	s.listeners = slices.DeleteFunc(slices.Clone(s.listeners), func(ln *listener) bool { return slices.Contains(gone, ln) })
	s.mu.Unlock()
	return nil
}

// Addrs returns the addresses the Server listens on.
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	var addrs []net.Addr
	for _, ln := range s.listeners {
		addrs = append(addrs, ln.addr)
	}
	return addrs
}

// pick chooses the loop for a new connection from remote.
func (s *Server) pick(remote net.Addr) *loopState {
	if len(s.loops) == 1 {
		return s.loops[0]
	}
	switch s.opts.LoadBalancing {
	case LeastConnections:
		best := s.loops[0]
		for _, ls := range s.loops[1:] {
			if ls.nconns.Load() < best.nconns.Load() {
				best = ls
			}
		}
		return best
	case SourceAddrHash:
		if ta, ok := remote.(*net.TCPAddr); ok {
			// In its 16-byte form, which accept gives and Adopt may not:
			// one client's address hashes alike either way.
			return s.loops[maphash.Bytes(s.seed, ta.IP.To16())%uint64(len(s.loops))]
		}
	}
	return s.nextLoop()
}

// nextLoop is the round-robin choice.
func (s *Server) nextLoop() *loopState {
	return s.loops[s.next.Add(1)%uint32(len(s.loops))]
}

// open registers an accepted or adopted fd, already admitted, as a
// connection of this loop and runs OnOpen, or, with a TLS configuration,
// starts waiting for its handshake, after which OnOpen runs. It runs on
// the loop.
func (ls *loopState) open(fd int, config *tls.Config) *Conn {
	s := ls.s
	s.configure(fd)
	c := &Conn{ls: ls, fd: int32(fd), state: open}
	if err := ls.l.Register(fd, c.interest(), c); err != nil {
		s.opts.Logger.Error("evloop: registering a connection failed", "err", err)
		sock.Close(fd)
		ls.gone()
		return nil
	}
	if config != nil {
		c.prepareTLS(config, false)
		c.startHandshake(false)
		return c
	}
	c.flags |= fOpened
	c.runOnOpen()
	return c
}

// configure applies the socket options of Options to a connection's fd.
// Failures are harmless (TCP options on a Unix socket) and ignored.
func (s *Server) configure(fd int) {
	if !s.opts.Nagle {
		sock.SetNoDelay(fd, true)
	}
	if s.opts.KeepAlive > 0 {
		sock.SetKeepAlive(fd, s.opts.KeepAlive)
	}
	sock.SetBuffers(fd, s.opts.SendBuffer, s.opts.RecvBuffer)
}

// eachConn calls fn for every connection of the loop. It runs on the loop.
func (ls *loopState) eachConn(fn func(c *Conn)) {
	ls.l.Each(func(fd int, h loop.Handler) {
		if c, ok := h.(*Conn); ok {
			fn(c)
		}
	})
}

// admit counts a connection placed on this loop, from the moment it was
// accepted (or dialed, or adopted) — before the loop opens it, so that
// least-connections sees a burst of accepts as it lands, and Shutdown
// waits for fds still on their way to a loop.
func (ls *loopState) admit() {
	ls.nconns.Add(1)
	ls.s.conns.Add(1)
}

// reserve counts a connection a listener is about to accept, if there
// are fewer than Options.MaxConns; the loop that takes it counts it
// there (nconns). unreserve counts down one that did not come.
func (s *Server) reserve() bool {
	bound := int64(s.opts.MaxConns)
	if bound <= 0 {
		s.conns.Add(1)
		return true
	}
	for {
		n := s.conns.Load()
		if n >= bound {
			return false
		}
		if s.conns.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (s *Server) unreserve() {
	if s.conns.Add(-1) == 0 && s.isDraining() {
		s.markDrained()
	}
}

// gone counts down what admit counted, once the connection's fd is closed.
// It counts down for Shutdown and lets a listener paused for want of fds,
// or at MaxConns, try again.
func (ls *loopState) gone() {
	ls.nconns.Add(-1)
	s := ls.s
	s.unreserve()
	if s.paused.Load() > 0 {
		s.mu.Lock()
		for _, ln := range s.listeners {
			ln.ls.l.Submit(ln.resume)
		}
		s.mu.Unlock()
	}
}

// flushDirty writes out what this iteration queued: one write or writev
// per connection. It runs on the loop at the end of every iteration.
// Connections dirtied while it runs (by a completion writing to another
// connection, say) are flushed in the same pass.
func (ls *loopState) flushDirty() {
	ls.readMore()
	if f := ls.s.opts.BeforeFlush; f != nil {
		// Guarded, so that a panic in it does not keep this iteration's
		// writes, every connection's, from going out.
		ls.guard("BeforeFlush", func() { f(ls.index) })
	}
	for len(ls.dirty) > 0 {
		batch := ls.dirty
		ls.dirty = ls.spare[:0]
		for i, c := range batch {
			batch[i] = nil
			ls.flushOne(c)
		}
		ls.spare = batch[:0]
	}
	// Every connection that wrote into the arena was on the list and has
	// moved what it kept: the arena is free again. What a burst grew it
	// past arenaKeep goes back to the pool.
	ls.waN, ls.waOff = 0, 0
	if len(ls.wa) > arenaKeep {
		for i := arenaKeep; i < len(ls.wa); i++ {
			buf.Put(ls.wa[i])
			ls.wa[i] = nil
		}
		ls.wa = ls.wa[:arenaKeep]
	}
}

// flushOthers writes what the connections but except queued, for
// ServeOthers, as flushDirty writes it. except stays on the list, for the
// iteration's flush, and the write arena is not reused: except may have
// bytes in it. The list is swapped with a third buffer: ServeOthers may run
// while flushDirty goes through the other two.
func (ls *loopState) flushOthers(except *Conn) {
	kept := false
	for len(ls.dirty) > 0 {
		batch := ls.dirty
		ls.dirty = ls.othersDirty[:0]
		for i, c := range batch {
			batch[i] = nil
			if c == except {
				kept = true // still marked dirty: not listed again meanwhile
				continue
			}
			ls.flushOne(c)
		}
		ls.othersDirty = batch[:0]
	}
	if kept {
		ls.dirty = append(ls.dirty, except)
	}
}

// The write arena grows with what one iteration writes, up to
// arenaChunks (16 MiB), so that a burst of small writes to many
// connections — a broadcast — is packed into shared chunks instead of a
// chunk per connection; writes past it go to the connections' own chunks.
// Between iterations a loop keeps arenaKeep chunks (128 KiB).
const (
	arenaChunks = 1024
	arenaKeep   = 8
)

// arenaSegment returns an empty segment at the free end of the write arena,
// or one with a nil chunk if the arena is used up for this iteration.
func (ls *loopState) arenaSegment() segment {
	if ls.waN == 0 || ls.waOff == buf.ChunkSize {
		if ls.waN == arenaChunks {
			return segment{}
		}
		if ls.waN == len(ls.wa) {
			ls.wa = append(ls.wa, buf.Get())
		}
		ls.waN++
		ls.waOff = 0
	}
	ch := ls.wa[ls.waN-1]
	return segment{b: ch[ls.waOff:ls.waOff], chunk: ch, arena: true}
}

// grow appends to s as much of b as fits in s's chunk right after s's
// bytes, and returns how much that was.
func (ls *loopState) grow(s *segment, b []byte) int {
	if s.chunk == nil || s.done != nil {
		return 0
	}
	end := buf.ChunkSize - cap(s.b) + len(s.b) // where s ends in its chunk
	if s.arena && (ls.waN == 0 || s.chunk != ls.wa[ls.waN-1] || end != ls.waOff) {
		return 0 // another connection's bytes follow s in the arena
	}
	n := copy(s.chunk[end:], b)
	s.b = s.b[:len(s.b)+n]
	if s.arena {
		ls.waOff += n
	}
	return n
}

// maxQueues bounds how many drained outbound queues a loop keeps.
const maxQueues = 1024

func (ls *loopState) getQueue() []segment {
	if n := len(ls.queues); n > 0 {
		q := ls.queues[n-1]
		ls.queues[n-1] = nil
		ls.queues = ls.queues[:n-1]
		return q
	}
	return make([]segment, 0, 4)
}

func (ls *loopState) putQueue(q []segment) {
	if cap(q) <= 16 && len(ls.queues) < maxQueues {
		ls.queues = append(ls.queues, q[:0])
	}
}

// noBuffersRetry is how long a connection whose write met ENOBUFS waits
// to be flushed again, if no write readiness came first.
const noBuffersRetry = 10 * time.Millisecond

// retryWrite has c, whose write met ENOBUFS, flushed again after
// noBuffersRetry: write-armed, it is flushed at its next write readiness,
// which may never come while its socket has room. It runs on the loop.
func (ls *loopState) retryWrite(c *Conn) {
	if c.flags&fNoBuffers != 0 {
		return
	}
	c.flags |= fNoBuffers
	ls.noBufs = append(ls.noBufs, c)
	if len(ls.noBufs) == 1 {
		ls.l.AfterFunc(noBuffersRetry, ls.retryWrites)
	}
}

// retryWrites flushes the connections retryWrite listed, at the end of
// this iteration. It runs on the loop.
func (ls *loopState) retryWrites() {
	batch := ls.noBufs
	ls.noBufs = nil
	for _, c := range batch {
		c.flags &^= fNoBuffers
		if c.state == open || c.state == closing || c.state == handshaking {
			c.writable()
		}
	}
}

// readMore reads once more from each connection whose last read filled
// its buffer (Conn.read), before the iteration's answers are flushed. One
// that fills it again waits for the next iteration, whose wait on the
// poller then does not block, so that a connection with much to read
// takes turns with the others.
func (ls *loopState) readMore() {
	if len(ls.more) == 0 {
		return
	}
	batch := ls.more
	ls.more = ls.more2[:0]
	for i, c := range batch {
		batch[i] = nil
		if c.flags&fReadMore != 0 {
			ls.readOne(c)
		}
	}
	ls.more2 = batch[:0]
	if len(ls.more) > 0 {
		ls.l.Again()
	}
}

// readOne reads c again; a panic in its handler is handled as one in a
// readiness event's (HandlePanic), and spares the rest of the list.
func (ls *loopState) readOne(c *Conn) {
	defer func() {
		if v := recover(); v != nil {
			ls.s.opts.Logger.Error("evloop: panic recovered on the event loop", "in", "OnData", "panic", v, "stack", string(debug.Stack()))
			c.HandlePanic(int(c.fd), v)
		}
	}()
	c.flags &^= fReadMore
	if c.state != closed && c.reading() {
		c.read()
	}
}

// flushOne flushes c; a panic in a callback it reaches (a completion,
// OnBackPressure, OnClose) closes c and spares the rest of the batch.
func (ls *loopState) flushOne(c *Conn) {
	defer func() {
		if v := recover(); v != nil {
			ls.s.opts.Logger.Error("evloop: panic recovered while flushing", "panic", v, "stack", string(debug.Stack()))
			c.closeAfterPanic(v)
			if c.state != closed {
				// The flush, cut short, kept nothing of the loop's write
				// arena, which the next iteration reuses.
				c.keepOutbound()
			}
		}
	}()
	c.flushDirty()
}

// guard runs a callback of the application's, logging a panic instead of
// letting it escape. Used where the connection is already being torn down.
func (ls *loopState) guard(what string, fn func()) {
	defer func() {
		if v := recover(); v != nil {
			ls.s.opts.Logger.Error("evloop: panic recovered", "in", what, "panic", v, "stack", string(debug.Stack()))
		}
	}()
	fn()
}

// StopAccepting closes the server's listeners and returns once they are
// closed; Listen and Serve fail with ErrClosed afterwards. Connections,
// dialed and adopted ones included, are not affected. It is the first step
// of a shutdown that lets connections finish their work before Shutdown
// closes them. It waits for the loops, so it must not be called on one
// (from a handler, a timer or a task): there, hand it to a goroutine.
func (s *Server) StopAccepting() {
	s.mu.Lock()
	s.deaf = true
	listeners := s.listeners
	s.mu.Unlock()
	for _, ln := range listeners {
		s.onLoop(ln.ls, ln.close)
	}
}

// Shutdown stops accepting, closes every connection gracefully (their
// queued bytes are written first) and returns once every OnClose has run,
// then stops the loops. If ctx ends first, the connections still open are
// aborted, their OnClose runs with ErrShutdown, and Shutdown returns
// ctx.Err(). The goroutines of TLS handshakes under way end with their
// connections; one whose configuration's callback ignores its context
// (GetCertificate, say) is waited for while ctx lasts, and then Shutdown
// returns ctx.Err(), leaving it to end when the callback returns.
// Shutdown may be called more than once. It waits for the loops, so it
// must not be called on one (from a handler, a timer or a task): there,
// hand it to a goroutine.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.shutdown {
		// Another Shutdown (or Close) is under way: wait for it, or abort
		// what is left if this one's context ends first.
		s.mu.Unlock()
		return s.awaitDrained(ctx)
	}
	s.shutdown = true
	listeners := s.listeners
	s.mu.Unlock()
	for _, ln := range listeners {
		s.onLoop(ln.ls, ln.close)
	}
	// Until now a listener may have accepted a connection after the
	// last one closed: counted drained at that close, the server would
	// have stopped its loops with the new one open.
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	for _, ls := range s.loops {
		s.onLoop(ls, func() { ls.eachConn(func(c *Conn) { c.closeNow(false) }) })
	}
	if s.conns.Load() == 0 {
		s.markDrained()
	}
	err := s.awaitDrained(ctx)
	s.stopLoops()
	if herr := s.awaitHandshakes(ctx); err == nil {
		err = herr
	}
	return err
}

// awaitHandshakes waits, while ctx lasts, for the goroutines of the TLS
// handshakes to end. Every connection is closed by now, which ends its
// handshake, unless a callback of its configuration ignores the context
// crypto/tls gives it: an ACME client's GetCertificate may take minutes.
func (s *Server) awaitHandshakes(ctx context.Context) error {
	select {
	case <-s.handshaken:
		return nil
	default:
	}
	select {
	case <-s.handshaken:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitDrained waits until every connection is closed; if ctx ends first,
// it aborts the ones still open, waits for their OnClose and returns
// ctx.Err().
func (s *Server) awaitDrained(ctx context.Context) error {
	select {
	case <-s.drained:
		return nil
	case <-ctx.Done():
	}
	for _, ls := range s.loops {
		s.onLoop(ls, func() { ls.eachConn(func(c *Conn) { c.closeNow(true) }) })
	}
	<-s.drained
	return ctx.Err()
}

func (s *Server) markDrained() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.drained:
	default:
		close(s.drained)
	}
}

// Close shuts the server down at once: connections are aborted as by a
// Shutdown whose context has ended. Like Shutdown, it must not be called
// on a loop.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Shutdown(ctx)
	return nil
}

// Loops returns the number of the server's event loops.
func (s *Server) Loops() int { return len(s.loops) }

// Options returns the options the server runs with, the defaults filled
// in: a protocol on the engine sizes what it batches by HighWater and
// MaxOutbound, say.
func (s *Server) Options() Options { return s.opts }

// Submit runs fn on the goroutine of loop i (0 <= i < Loops()), where fn may
// use the methods of every Conn placed on that loop and set timers with
// AfterFunc and Every. Any goroutine may call it; it fails with ErrClosed
// once the loop is stopped.
func (s *Server) Submit(i int, fn func()) error {
	if s.loops[i].l.Submit(fn) != nil {
		return ErrClosed
	}
	return nil
}

// AfterFunc calls fn on the goroutine of loop i after d. Must be called on
// that loop's goroutine.
func (s *Server) AfterFunc(i int, d time.Duration, fn func()) Timer {
	l := s.loops[i].l
	return Timer{l: l, id: l.AfterFunc(d, fn)}
}

// Every calls fn on the goroutine of loop i every period, the first time
// after period. Must be called on that loop's goroutine.
func (s *Server) Every(i int, period time.Duration, fn func()) Timer {
	l := s.loops[i].l
	return Timer{l: l, id: l.Every(period, period, fn)}
}

// EachConn calls fn for every connection placed on loop i, those still
// being dialed or in their TLS handshake included: OnOpen has not run for
// them, Write and CloseWrite fail with ErrClosed, Close or Abort ends the
// dial or the handshake, and ConnectionState reports no TLS state yet. It must be called
// on that loop's goroutine: in a function given to Submit, say.
func (s *Server) EachConn(i int, fn func(c *Conn)) { s.loops[i].eachConn(fn) }

// onLoop runs fn on ls's loop and waits for it.
func (s *Server) onLoop(ls *loopState, fn func()) {
	done := make(chan struct{})
	if ls.l.Submit(func() { fn(); close(done) }) == nil {
		<-done
	}
}

func (s *Server) stopLoops() {
	s.stopped.Do(func() {
		for _, ls := range s.loops {
			ls.l.Stop()
		}
		// Every connection is closed: a handshake still under way has
		// been told, and its goroutine ends (awaitHandshakes).
		s.handshaken = make(chan struct{})
		go func() {
			s.handshakes.Wait()
			close(s.handshaken)
		}()
	})
}
