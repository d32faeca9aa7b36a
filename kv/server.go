package kv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/resp"
)

// Config is the server's configuration. The zero value serves 16 empty
// databases without persistence or password.
type Config struct {
	// Bind is the addresses ListenBind listens on, separated by spaces as
	// in Redis's bind ("127.0.0.1 -::1"), and Port their port (default
	// 127.0.0.1 and 0: a free port, or, with a UnixSocket, none). Listen
	// takes an address of its own.
	Bind string
	Port int
	// UnixSocket, if set, is the path of a Unix socket ListenBind listens
	// on as well, as Redis's unixsocket: a socket file left there (by a
	// server killed, say) is removed first, and the new one given
	// UnixSocketPerm's permissions, unless that is 0 (unixsocketperm).
	// With a UnixSocket, Port 0 means no TCP listener, as in Redis.
	UnixSocket     string
	UnixSocketPerm os.FileMode
	// TLSPort, if not 0, is the port at Bind's addresses where ListenBind
	// listens for TLS clients too, as Redis's tls-port, with the PEM files
	// TLSCertFile (the certificate, its chain after it) and TLSKeyFile;
	// TLSAuthClients, as Redis's tls-auth-clients, is "yes" (default: a
	// client must show a certificate that TLSCACertFile's authorities
	// signed), "optional" (one shown is checked) or "no". With a TLSPort,
	// Port 0 means no plain TCP listener, as in Redis. CONFIG SET changes
	// them as Redis's: the files read again, the TLS listeners moved.
	TLSPort        int
	TLSCertFile    string
	TLSKeyFile     string
	TLSCACertFile  string
	TLSAuthClients string
	// RequirePass, if set, is the password AUTH must give before any other
	// command is served.
	RequirePass string
	// Databases is the number of databases SELECT chooses from (default 16).
	Databases int
	// MaxClients bounds the connected clients (default 10000).
	MaxClients int
	// ProtoMaxBulkLen bounds a bulk string in a request (default 512 MiB).
	ProtoMaxBulkLen int
	// QueryBufferLimit bounds the bytes of a client's requests buffered
	// while incomplete (default 1 GiB, Redis's client-query-buffer-limit,
	// which CONFIG SET changes): a client past it is closed.
	// It, not a count, bounds a request of many arguments: one may have up
	// to math.MaxInt32 of them, as in Redis 7.0.
	QueryBufferLimit int
	// AppendOnly logs every change to Dir/AppendFilename and replays the
	// file at start.
	AppendOnly bool
	// AppendFsync is when the log is synced: "always" (before a reply
	// acknowledges the change), "everysec" (default) or "no". With
	// "always", a write or sync of the log that fails stops the server,
	// as Redis exits (see Server.Err); otherwise the write commands are
	// refused with MISCONF until the log takes writes again.
	AppendFsync string
	// Dir is the directory of the log and of the RDB file, dbfilename
	// (default the working directory).
	Dir string
	// AppendFilename is the log's file name (default "appendonly.aof").
	AppendFilename string
	// NotifyKeyspaceEvents selects the keyspace events published, in
	// Redis's notation ("KEA", "Ex", ...); empty publishes none.
	NotifyKeyspaceEvents string
	// Nap is how long the loop sleeps when it has served requests and
	// finds no more, so that the next ones are served together and their
	// clients do not each wake it (evloop.Options.Nap). Zero means 20µs,
	// which under redis-benchmark gave 1.1-1.2 times the requests a second
	// for the same CPU a request, a request that comes during a nap
	// waiting for its end; negative means never.
	Nap time.Duration
	// Settings are other parameters, by their CONFIG SET names, applied
	// at start as CONFIG SET applies them: {"slowlog-log-slower-than":
	// "0"}. A name CONFIG SET does not know or cannot change, or one with
	// a field of its own above, is an error: a *SettingError.
	Settings map[string]string
	// Logger receives the server's log (default slog.Default()).
	Logger *slog.Logger
	// LogLevel, if not nil, is the level Logger's handler logs from: the
	// loglevel parameter sets it (debug, verbose, notice, warning,
	// nothing), as in Redis.
	LogLevel *slog.LevelVar
}

// A SettingError is an entry of Config.Settings that New could not apply.
type SettingError struct {
	Name string // as given in Settings
	Err  error
}

func (e *SettingError) Error() string { return "kv: setting " + e.Name + ": " + e.Err.Error() }

func (e *SettingError) Unwrap() error { return e.Err }

// ownFields are the parameters Config has fields for.
var ownFields = []string{"bind", "port", "unixsocket", "unixsocketperm", "requirepass", "databases", "maxclients", "proto-max-bulk-len",
	"client-query-buffer-limit", "appendonly", "appendfsync", "dir", "appendfilename", "notify-keyspace-events",
	"tls-port", "tls-cert-file", "tls-key-file", "tls-ca-cert-file", "tls-auth-clients"}

func (c *Config) defaults() {
	if c.TLSAuthClients == "" {
		c.TLSAuthClients = "yes"
	}
	if c.Nap == 0 {
		c.Nap = 20 * time.Microsecond
	}
	if c.Databases <= 0 {
		c.Databases = 16
	}
	if c.MaxClients <= 0 {
		c.MaxClients = 10000
	}
	if c.ProtoMaxBulkLen <= 0 {
		c.ProtoMaxBulkLen = 512 << 20
	}
	if c.QueryBufferLimit <= 0 {
		c.QueryBufferLimit = 1 << 30
	}
	if c.AppendFsync == "" {
		c.AppendFsync = "everysec"
	}
	if c.Dir == "" {
		c.Dir = "."
	}
	if c.AppendFilename == "" {
		c.AppendFilename = "appendonly.aof"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Bind == "" {
		c.Bind = "127.0.0.1"
	}
}

// Server is a Redis-compatible server. Its keyspace, clients and every
// other piece of state belong to one event loop goroutine: commands run
// there one at a time, as in Redis, without locks. Its exported methods
// may be called from any goroutine.
type Server struct {
	cfg      Config
	log      *slog.Logger
	ev       *evloop.Server
	listenMu sync.Mutex // Listen's, which makes ev
	// bound is what ListenBind and rebind listen on, and boundTLS its TLS
	// listeners, under bindMu.
	bindMu   sync.Mutex
	bound    []net.Addr
	boundTLS []net.Addr
	tls      *tls.Config // the TLS listeners', with a TLSPort: it hands out tlsCur
	tlsCur   atomic.Pointer[tls.Config]
	tlsDirty struct{ files, port bool } // CONFIG SET changed them: applyTLS applies them
	events   notifyFlags                // notify-keyspace-events

	// The loop's own.
	stopped  bool   // Shutdown closed the file: no command runs
	logLevel string // loglevel, as set
	dbs      []*db
	clients  map[int64]*client
	nextID   int64
	w        resp.Writer // replies of the client being served
	ow       resp.Writer // messages to other clients
	errMark  int64       // stats.errorReplies when the last command was counted

	monitors   []*client  // MONITOR's clients
	monitorBuf []byte     // the line sent to them
	geoFound   []geoFound // a geo search's points, the buffer kept for the next

	memStartup, memPeak int64     // the heap's live bytes at start and at most
	recentBuffers       recentMax // the biggest client buffers of the last seconds
	bw                  []byte    // s.w's buffer while a blocked client is answered; see answer
	cur                 *client
	curArgs             [][]byte // the arguments of the command running, for CLIENT LIST's argv-mem
	ms                  int64    // the time of the command being run, Unix ms
	start               time.Time
	runID               string        // INFO's run_id
	replID              string        // INFO's master_replid
	epoch               time.Time     // a recent wall and monotonic reading; see tick
	mono                time.Duration // when the command being run started, since epoch
	// ticked is set once the clock has been read in this loop iteration:
	// the commands of every connection served in it then take their start
	// from the end of the one before, not from a read of their own.
	ticked   bool
	stats    stats
	expiry   activeExpiry
	evict    eviction
	limits   encodingLimits // the compact encodings' thresholds
	cmdStats []cmdStat      // by command id
	slowlog  slowlog
	latency  latencyMonitor
	// latency-tracking and latency-tracking-info-percentiles: per-command
	// histograms, and the percentiles INFO latencystats shows of them.
	latencyTracking    bool
	latencyPercentiles []float64
	prop               propagation
	aof                *aof
	// rewriteGen is the generation of the last rewrite of the log, which
	// marks the entries it has written: the server's, not a log's, so that
	// the entries a rewrite of an earlier log marked are not taken for
	// written by the first rewrite of a log turned on again.
	rewriteGen     uint16
	lastRewriteErr error // the last rewrite's failure, nil if it succeeded
	snap           rdbState
	channels       subscribers
	patterns       subscribers
	shards         subscribers // shard channels'
	track          tracker     // client-side caching (CLIENT TRACKING)
	scripts        scripting   // EVAL's
	pause          pauseState  // CLIENT PAUSE
	running        int         // commands running: 1, or 2 in EXEC or a script
	ready          []readyKey  // keys of blocked clients that received data
	warmer         warmer
	replay         bool // replaying the log: nothing is propagated or sent
	inExec         bool // running EXEC's queue

	bg *bgsave // the background save running, if any
	// writing is set while a command that may write runs, or a blocked
	// client is served, during a background save: the keys looked up are
	// preserved (see bgsave).
	writing bool
	// rewriteScheduled is set when a rewrite was asked for while a
	// background save ran: the cron starts it once the save is over.
	rewriteScheduled bool

	// autoRewritePerc and autoRewriteMin are auto-aof-rewrite-percentage
	// and auto-aof-rewrite-min-size (see aof.cron).
	autoRewritePerc, autoRewriteMin int64
	// protectedMode is protected-mode: without a password, clients not at
	// 127.0.0.1 or ::1 are refused, as Redis 7.0 refuses them.
	protectedMode bool
	// keepAlive is tcp-keepalive, in seconds (0: off), for the
	// connections accepted after it is set.
	keepAlive int64
	// loadTruncated is aof-load-truncated: a log that ends in a command
	// cut short is cut there (yes, the default) or stops the start.
	loadTruncated bool
	// outputLimits is client-output-buffer-limit; closing, the clients
	// that passed theirs in this iteration of the loop.
	outputLimits [3][3]int64
	closing      []*client
	// hllSparseMax is hll-sparse-max-bytes: the size past which a sparse
	// HyperLogLog becomes dense.
	hllSparseMax int64
	// inert holds the inertParams set, by name.
	inert map[string]string

	shutdownOnce sync.Once
	done         chan struct{} // closed by SHUTDOWN, or by stop
	failMu       sync.Mutex
	failure      error // why stop stopped the server
}

type stats struct {
	connections       int64
	commands          int64
	expiredKeys       int64
	evictedKeys       int64
	evictedScripts    int64 // scripts EVAL loaded, evicted from the cache
	rejectedConns     int64
	outputLimitCloses int64 // clients closed for their output buffers
	errorReplies      int64
	errorCodes        map[string]int64 // error replies by code, as INFO errorstats
	keyspaceHits      int64
	keyspaceMiss      int64
	netIn, netOut     int64
	aofRewrites       int64 // rewrites of the log completed
	dirty             int64 // changes since start
	protoErrors       int64
}

// New returns a server with cfg, its state loaded from the append-only
// file if cfg.AppendOnly and the file exists.
func New(cfg Config) (*Server, error) {
	cfg.defaults()
	nf, err := parseNotify(cfg.NotifyKeyspaceEvents)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := tlsConfig(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		events:   nf,
		clients:  make(map[int64]*client),
		channels: subscribers{m: make(map[string]map[*client]struct{})},
		patterns: subscribers{m: make(map[string]map[*client]struct{})},
		shards:   subscribers{m: make(map[string]map[*client]struct{})},
		start:    time.Now(),
		runID:    newReplID(),
		replID:   newReplID(),
		done:     make(chan struct{}),
		cmdStats: make([]cmdStat, numCommands),
		slowlog:  newSlowlog(),
		logLevel: "notice",

		latencyTracking:    true,
		latencyPercentiles: []float64{50, 99, 99.9},
		autoRewritePerc:    100,
		autoRewriteMin:     64 << 20,
		protectedMode:      true,
		loadTruncated:      true,
		keepAlive:          300,
		outputLimits:       defaultOutputLimits,
		hllSparseMax:       3000,
	}
	s.track.maxKeys = 1_000_000
	if tlsCfg != nil {
		s.useTLS(tlsCfg)
	}
	s.epoch = s.start
	s.setExpireEffort(1)
	s.evict.samples, s.evict.tenacity, s.evict.lfuLogFactor, s.evict.lfuDecayTime = 5, 10, 10, 1
	s.limits = defaultLimits
	s.w.OnError, s.ow.OnError = s.countError, s.countError
	var inert []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Settings)) {
		p := findParam(strings.ToLower(name))
		switch {
		case p == nil:
			return nil, &SettingError{name, errors.New("unknown setting")}
		case slices.Contains(ownFields, p.name):
			return nil, &SettingError{name, errors.New("has a field of its own in Config")}
		case p.set == nil && strings.EqualFold(strings.TrimSpace(cfg.Settings[name]), p.get(s)):
			continue // evkv's fixed value, given: nothing to do
		case p.set == nil:
			return nil, &SettingError{name, errors.New("cannot be set: evkv has it fixed at " + strconv.Quote(p.get(s)))}
		}
		if err := p.set(s, cfg.Settings[name]); err != nil {
			return nil, &SettingError{name, err}
		}
		if ip := findInert(p.name); ip != nil && !ip.byHost && !slices.Contains(actingParams, p.name) {
			inert = append(inert, p.name)
		}
	}
	if len(inert) > 0 {
		s.log.Warn("kv: settings taken for compatibility with Redis, with no effect here", "settings", strings.Join(inert, " "))
	}
	for i := range cfg.Databases {
		s.dbs = append(s.dbs, newDB(s, i))
	}
	s.memStartup = readHeap().objects // before the log's data, as Redis's
	s.memPeak = s.memStartup
	s.snap.lastSave = s.start
	s.snap.lastBgsaveTime = -1
	// As in Redis, the log wins: the RDB file is loaded only without it.
	if cfg.AppendOnly {
		if err := s.openLog(); err != nil {
			return nil, err
		}
	} else if err := s.loadSnapshot(); err != nil {
		return nil, err
	}
	return s, nil
}

// Listen starts serving on network and addr ("tcp", "127.0.0.1:6379"; or
// "unix" and a path) and returns the address it listens on. It may be
// called again for more addresses; all are served by the one loop.
func (s *Server) Listen(network, addr string) (net.Addr, error) {
	return s.listen(func(ev *evloop.Server) (net.Addr, error) { return ev.Listen(network, addr) })
}

// listen starts the engine if it has not started, then listens with it.
func (s *Server) listen(on func(*evloop.Server) (net.Addr, error)) (net.Addr, error) {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	if s.ev == nil {
		ev, err := evloop.NewServer(s, evloop.Options{
			Loops:       1,
			KeepAlive:   -1,          // set by OnOpen, from tcp-keepalive
			MaxInbound:  math.MaxInt, // serve checks client-query-buffer-limit
			HighWater:   4 << 20,
			MaxOutbound: 1 << 30,
			Nap:         s.cfg.Nap,
			Logger:      s.log,
			BeforeFlush: func(int) { s.beforeFlush() },
		})
		if err != nil {
			return nil, err
		}
		a, err := on(ev)
		if err != nil {
			ev.Close()
			return nil, err
		}
		s.ev = ev
		ev.Submit(0, func() {
			s.ev.Every(0, cronPeriod, s.cron)
			if s.aof != nil {
				s.aof.startSyncer()
			}
		})
		return a, nil
	}
	return on(s.ev)
}

// maxBindAddrs is how many addresses bind may name, as in Redis.
const maxBindAddrs = 16

// ListenBind listens on the Config's Bind addresses at its Port, as Redis
// reads bind: addresses separated by spaces, an IPv6 one (with a colon)
// for IPv6 alone, "*" for every IPv4 address and "::*" for every IPv6
// one; one with a leading "-" is skipped if the system does not have it,
// and any is skipped if the system lacks its address family. Port 0
// takes a free port, which the addresses after the first share, unless
// the Config has a UnixSocket: then there is no TCP listener, as Redis
// has none for port 0. The UnixSocket is listened on after the TCP
// addresses, and TLSPort's listeners between the two. It returns the
// addresses listened on; if one fails otherwise, or none is left, it fails
// and listens on none it started. CONFIG SET bind and port move the TCP
// listeners (not Listen's), as Redis's move its own, bind the TLS ones
// too.
func (s *Server) ListenBind() ([]net.Addr, error) {
	var addrs, tlsAddrs []net.Addr
	unlisten := func() {
		for _, b := range slices.Concat(addrs, tlsAddrs) {
			s.ev.Unlisten(b)
		}
	}
	if !s.tcpOff(s.cfg.Port) {
		var err error
		if addrs, err = s.listenOn(s.cfg.Bind, s.cfg.Port, false, nil); err != nil {
			return nil, err
		}
	}
	if s.tls != nil {
		var err error
		if tlsAddrs, err = s.listenOn(s.cfg.Bind, s.cfg.TLSPort, false, s.tls); err != nil {
			unlisten()
			return nil, err
		}
	}
	all := slices.Concat(addrs, tlsAddrs)
	if s.cfg.UnixSocket != "" {
		a, err := s.listenUnix(s.cfg.UnixSocket, s.cfg.UnixSocketPerm)
		if err != nil {
			unlisten()
			return nil, err
		}
		all = append(all, a)
	}
	s.bindMu.Lock()
	s.bound = append(s.bound, addrs...)
	s.boundTLS = append(s.boundTLS, tlsAddrs...)
	s.bindMu.Unlock()
	return all, nil
}

// tcpOff reports whether port, with the Config's UnixSocket and TLSPort,
// means no plain TCP listener: port 0 with a Unix socket or a TLS port, as
// in Redis.
func (s *Server) tcpOff(port int) bool {
	return port == 0 && (s.cfg.UnixSocket != "" || s.tls != nil)
}

// listenUnix listens on a Unix socket at path, as Redis does for its
// unixsocket: a socket file there is removed first (one of another kind
// is left, and the listen fails), and the new one's permissions set to
// perm unless it is 0.
func (s *Server) listenUnix(path string, perm os.FileMode) (net.Addr, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	// The mode is set before the socket listens, as Redis sets it.
	a, err := s.listen(func(ev *evloop.Server) (net.Addr, error) { return ev.ListenUnix(path, perm) })
	if err != nil {
		return nil, &BindError{Addr: path, Err: err}
	}
	return a, nil
}

// listenOn listens on bind's addresses at port, as ListenBind does, from
// the loop's goroutine if onLoop is set, for TLS clients with config if
// not nil.
func (s *Server) listenOn(bind string, port int, onLoop bool, config *tls.Config) ([]net.Addr, error) {
	listen := func(network, addr string) (net.Addr, error) {
		if onLoop {
			return s.ev.ListenLoopTLS(0, network, addr, config)
		}
		return s.listen(func(ev *evloop.Server) (net.Addr, error) { return ev.ListenTLS(network, addr, config) })
	}
	if config == nil {
		listen = s.Listen
		if onLoop {
			listen = func(network, addr string) (net.Addr, error) { return s.ev.ListenLoop(0, network, addr) }
		}
	}
	unlisten := func(a net.Addr) error { return s.ev.Unlisten(a) }
	if onLoop {
		unlisten = func(a net.Addr) error { return s.ev.UnlistenLoop(0, a) }
	}
	addrs := bindAddrs(bind)
	if len(addrs) > maxBindAddrs {
		return nil, errors.New("too many bind addresses specified (at most 16)")
	}
	var bound []net.Addr
	for _, a := range addrs {
		hostPort := net.JoinHostPort(a.host, strconv.Itoa(port))
		var got net.Addr
		var err error
		if a.host == "" {
			// A lone "-": no address, which Redis cannot resolve either
			// (and which would mean every address to the system).
			err = errors.New("no address")
		} else {
			got, err = listen(a.network, hostPort)
		}
		switch {
		case err == nil:
			bound = append(bound, got)
			if ta, ok := got.(*net.TCPAddr); ok && port == 0 {
				port = ta.Port
			}
		case a.host != "" && (a.optional && errors.Is(err, syscall.EADDRNOTAVAIL) || unsupportedFamily(err)):
			s.log.Warn("kv: could not listen; skipped", "bind", a.word, "err", err)
		default:
			for _, b := range bound {
				unlisten(b)
			}
			return nil, &BindError{Addr: hostPort, Err: err}
		}
	}
	if len(bound) == 0 {
		return nil, fmt.Errorf("configured to listen nowhere: no address of bind %q could be listened on", bind)
	}
	return bound, nil
}

// rebind listens on bind's addresses at port in place of those ListenBind
// and rebind listened on before, for CONFIG SET bind and port, as Redis
// does it: the old ones are closed first (the new may be the same), and
// listened on again if the new cannot all be. It runs on the loop, which
// it holds for the system calls (and a host name's look-up), as Redis's
// one thread does.
func (s *Server) rebind(bind string, port int) error {
	return s.relisten(&s.bound, bind, port, nil)
}

// rebindTLS is rebind for the TLS listeners, at the port they listen on:
// a tls-port set in the same CONFIG SET is not yet applied (applyTLS
// moves them there once all its settings are taken), and a rollback of
// bind must not move them to one that is refused.
func (s *Server) rebindTLS(bind string) error {
	port := s.cfg.TLSPort
	s.bindMu.Lock()
	if ta, ok := firstAddr(s.boundTLS).(*net.TCPAddr); ok {
		port = ta.Port
	}
	s.bindMu.Unlock()
	return s.relisten(&s.boundTLS, bind, port, s.tls)
}

// relisten is rebind for the listeners in *bound, TLS ones with config.
func (s *Server) relisten(bound *[]net.Addr, bind string, port int, config *tls.Config) error {
	s.bindMu.Lock()
	old := *bound
	*bound = nil
	s.bindMu.Unlock()
	if ta, ok := firstAddr(old).(*net.TCPAddr); ok && port == 0 && (config != nil || !s.tcpOff(port) || s.cfg.Port == 0) {
		// A free port was taken: the new addresses keep it. Plain
		// listeners at port 0 took one too (no Unix socket or TLS
		// when they started), even if TLS came since; only CONFIG
		// SET port 0, from another port, closes them.
		port = ta.Port
	}
	for _, a := range old {
		s.ev.UnlistenLoop(0, a)
	}
	if config == nil && s.tcpOff(port) {
		s.log.Info("kv: not listening on plain TCP (port 0)", "unixsocket", s.cfg.UnixSocket, "tls-port", s.cfg.TLSPort)
		return nil
	}
	addrs, err := s.listenOn(bind, port, true, config)
	if err != nil {
		s.log.Warn("kv: could not listen on the new addresses; listening on the old again", "bind", bind, "port", port, "tls", config != nil, "err", err)
		var back []net.Addr
		for _, a := range old {
			var got net.Addr
			var err error
			if config != nil {
				got, err = s.ev.ListenLoopTLS(0, a.Network(), a.String(), config)
			} else {
				got, err = s.ev.ListenLoop(0, a.Network(), a.String())
			}
			if err == nil {
				back = append(back, got)
			} else {
				s.log.Error("kv: could not listen on an old address again", "addr", a, "err", err)
			}
		}
		addrs = back
	} else {
		s.log.Info("kv: listening", "bind", bind, "port", port, "tls", config != nil)
	}
	s.bindMu.Lock()
	*bound = append(*bound, addrs...)
	s.bindMu.Unlock()
	return err
}

func firstAddr(addrs []net.Addr) net.Addr {
	if len(addrs) == 0 {
		return nil
	}
	return addrs[0]
}

// bindAddr is one of bind's addresses, as ListenBind listens on it.
type bindAddr struct {
	word     string // as bind gives it
	network  string // "tcp4" or "tcp6"
	host     string
	optional bool
}

// bindAddrs reads bind's addresses.
func bindAddrs(bind string) []bindAddr {
	var out []bindAddr
	for _, w := range strings.Fields(bind) {
		a := bindAddr{word: w, network: "tcp4", host: strings.TrimPrefix(w, "-")}
		a.optional = len(a.host) < len(w)
		switch {
		case a.host == "*":
			a.host = "0.0.0.0"
		case a.host == "::*":
			a.host, a.network = "::", "tcp6"
		case strings.Contains(a.host, ":"):
			a.network = "tcp6"
		}
		out = append(out, a)
	}
	return out
}

// BindError is ListenBind's failure to listen on one of bind's addresses.
type BindError struct {
	Addr string // host:port, or a Unix socket's path
	Err  error
}

func (e *BindError) Error() string { return "cannot listen on " + e.Addr + ": " + e.Err.Error() }
func (e *BindError) Unwrap() error { return e.Err }

// unsupportedFamily reports an error of a socket whose protocol or address
// family the system lacks (IPv6 turned off, say), which Redis skips.
func unsupportedFamily(err error) bool {
	for _, e := range []syscall.Errno{syscall.EAFNOSUPPORT, syscall.EPROTONOSUPPORT,
		syscall.ESOCKTNOSUPPORT, syscall.EPFNOSUPPORT, syscall.ENOPROTOOPT} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Done is closed when a client asks the server to SHUTDOWN, or when the
// server stops because it cannot go on (see Err); the program then calls
// Shutdown.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err reports why the server stopped, once Done is closed, when it was not
// asked to: with appendfsync always, a write or sync of the append-only
// file failed (a full disk), and as Redis exits then, it closed every
// client at once, without the replies that would have acknowledged what
// the file lacks, and stopped accepting. Err is nil while the server
// serves, and after a SHUTDOWN.
func (s *Server) Err() error {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return s.failure
}

// Shutdown stops running commands, writes and syncs the append-only file
// and closes it, then stops accepting and closes every client: a command
// whose reply went out is in the file, as Redis writes its file after the
// last command it runs; one that came after is not run. With save points
// (the save parameter), or after SHUTDOWN SAVE, the keyspace is saved to
// the RDB file first, as Redis saves it when it shuts down.
func (s *Server) Shutdown(ctx context.Context) error {
	var errs []error
	if s.ev != nil {
		flushed := make(chan error, 1)
		if s.ev.Submit(0, func() {
			s.stopped = true
			flushed <- errors.Join(s.saveOnShutdown(), s.closeLog())
		}) == nil {
			select {
			case err := <-flushed:
				errs = append(errs, err)
			case <-ctx.Done():
				errs = append(errs, ctx.Err())
			}
		}
		errs = append(errs, s.ev.Shutdown(ctx))
	} else {
		errs = append(errs, s.saveOnShutdown(), s.closeLog())
	}
	return errors.Join(errs...)
}

// requestShutdown is SHUTDOWN's end: the program is told through Done.
func (s *Server) requestShutdown() {
	s.shutdownOnce.Do(func() { close(s.done) })
}

// stop ends serving for err, which the server cannot go on from, as Redis
// exits on it: the listeners close, every client is closed at once, what
// was queued for it dropped, and the program is told through Done and
// Err. It runs on the loop.
func (s *Server) stop(err error) {
	s.failMu.Lock()
	stopped := s.failure != nil
	if !stopped {
		s.failure = err
	}
	s.failMu.Unlock()
	if stopped {
		return
	}
	s.log.Error("kv: stopping: the server cannot go on", "err", err)
	if s.ev != nil {
		for _, a := range s.ev.Addrs() {
			s.ev.UnlistenLoop(0, a)
		}
	}
	for _, c := range s.sortedClients() {
		c.conn.Abort()
	}
	s.requestShutdown()
}

// cronPeriod is how often cron runs, as Redis's at its default hz of 10.
const cronPeriod = 100 * time.Millisecond

// cron runs ten times a second on the loop: expiry and the log's upkeep.
func (s *Server) cron() {
	old := s.epoch
	s.epoch = time.Now()
	s.mono -= s.epoch.Sub(old) // the command being timed, if any, from the new epoch
	s.tick()
	start := s.epoch
	s.slowExpire(start, cronPeriod)
	s.handleReady()
	if s.aof != nil {
		s.aof.cron(start)
	}
	s.saveCron(start)
	if s.track.clients > 0 {
		s.limitTable()
	}
	s.clientsPaused() // a pause whose time is up ends here
	if s.evict.max > 0 {
		s.performEvictions() // what a command's ran out of time for, or a CONFIG SET left
	}
	s.notePeak(readHeap().objects)
	// As Redis's clientsCron: a client past its soft limit that is sent
	// nothing more is closed when its seconds are up; the biggest buffers
	// are noted for INFO.
	var in, out int
	for _, c := range s.clients {
		in, out = max(in, c.conn.InboundBuffered()), max(out, c.conn.OutboundBuffered())
		if c.softLimitSince != 0 {
			s.checkOutput(c)
		}
	}
	s.recentBuffers.note(s.ms/1000, int64(in), int64(out))
}

// recentMax keeps the biggest client input and output buffers seen in each
// of the last 8 seconds, as Redis's clientsCronTrackExpansiveClients does
// for INFO's client_recent_max_input_buffer and _output_buffer.
type recentMax struct {
	sec     [8]int64 // the second each slot is of
	in, out [8]int64
}

func (r *recentMax) note(now, in, out int64) {
	i := now % int64(len(r.sec))
	if r.sec[i] != now {
		r.sec[i], r.in[i], r.out[i] = now, 0, 0
	}
	r.in[i], r.out[i] = max(r.in[i], in), max(r.out[i], out)
}

// max returns the biggest buffers of the last 8 seconds' slots.
func (r *recentMax) max() (in, out int64) {
	for i := range r.sec {
		in, out = max(in, r.in[i]), max(out, r.out[i])
	}
	return in, out
}

// beforeFlush runs at the end of every loop iteration, before replies are
// written: a fast expiry cycle if one is due, as Redis's beforeSleep runs
// it before its writes; BCAST clients are sent the keys changed with their
// prefixes; then the log gets this iteration's changes, the expired keys'
// deletions among them, first.
func (s *Server) beforeFlush() {
	s.fastExpireLater()
	if len(s.track.changed) > 0 {
		s.broadcast()
	}
	s.ticked = false
	for i, c := range s.closing {
		c.conn.Abort()
		s.closing[i] = nil
	}
	s.closing = s.closing[:0]
	if s.aof != nil {
		s.aof.flush()
	}
}

// tick reads the clock for a command: it sets s.ms and returns the time
// since the epoch. A read of the monotonic clock is one vDSO call where
// time.Now is two, and on a virtual machine each costs as much as a simple
// command; the cron takes the epoch again ten times a second, so s.ms
// follows the wall clock when it is set.
func (s *Server) tick() time.Duration {
	d := time.Since(s.epoch)
	s.ms = (s.epoch.UnixNano() + int64(d)) / int64(time.Millisecond)
	return d
}

// now returns the time of the command being run, Unix milliseconds.
func (s *Server) now() int64 {
	if s.ms == 0 {
		return time.Now().UnixMilli()
	}
	return s.ms
}

// deniedProtected is Redis 7.0's answer to a client refused by protected
// mode, word for word.
const deniedProtected = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. " +
	"In this mode connections are only accepted from the loopback interface. " +
	"If you want to connect from external computers to Redis you may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. " +
	"2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. " +
	"4) Setup a an authentication password for the default user. " +
	"NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// loopbackPeer reports whether a client at addr is one protected mode
// admits: at 127.0.0.1 or ::1 (not the rest of 127.0.0.0/8, as Redis 7.0
// compares the address's text), or on a Unix socket.
func loopbackPeer(addr net.Addr) bool {
	a, ok := addr.(*net.TCPAddr)
	if !ok {
		return true
	}
	return a.IP.Equal(net.IPv4(127, 0, 0, 1)) || a.IP.Equal(net.IPv6loopback)
}

// clock is the access clock of OBJECT IDLETIME: seconds since start.
func (s *Server) clock() uint32 { return uint32((s.now() - s.start.UnixMilli()) / 1000) }

// OnOpen admits a client, or refuses it past MaxClients, or, in protected
// mode without a password, when it is not on the loopback interface.
func (s *Server) OnOpen(conn *evloop.Conn) {
	refuse := ""
	switch {
	case len(s.clients) >= s.cfg.MaxClients:
		refuse = "-ERR max number of clients reached\r\n"
	case s.protectedMode && s.cfg.RequirePass == "" && !loopbackPeer(conn.RemoteAddr()):
		refuse = deniedProtected
	}
	if refuse != "" {
		s.stats.rejectedConns++
		conn.Write([]byte(refuse))
		conn.Close()
		return
	}
	if s.keepAlive > 0 {
		// As Redis's: the first probe after the period, then one every
		// third of it, three unanswered ending the connection.
		conn.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: time.Duration(s.keepAlive) * time.Second,
			Interval: time.Duration(max(s.keepAlive/3, 1)) * time.Second, Count: 3})
	}
	s.nextID++
	c := newClient(s, conn, s.nextID)
	s.clients[c.id] = c
	s.stats.connections++
	conn.SetContext(c)
}

// OnData runs the requests that arrived, in order, and writes their
// replies with one Write.
func (s *Server) OnData(conn *evloop.Conn) {
	c, _ := conn.Context().(*client)
	if c == nil {
		conn.Discard(conn.InboundBuffered())
		return
	}
	if s.scripts.run != nil {
		s.serveWhileBusy(c) // from inside a busy script
		return
	}
	s.serve(c)
}

// replyBatch is how many bytes of replies serve holds before it queues
// them on the connection.
const replyBatch = 256 << 10

// serve runs c's buffered requests until they run out, c blocks or c is to
// be closed.
func (s *Server) serve(c *client) {
	if s.stopped {
		return // shutting down: the file is closed, so no command runs
	}
	b, _ := c.conn.Peek(-1)
	if !s.ticked {
		s.mono, s.ticked = s.tick(), true
	}
	s.cur = c
	s.w.Proto = c.proto
	if !c.blocked() && !c.postponed && c.flags&flagCloseAfterReply == 0 {
		s.warmer.warm(c.db, b)
	}
	// mark is where the reply of the command being run begins in s.w.
	off, mark := 0, 0
	defer func() {
		if s.cur == c {
			if v := recover(); v != nil {
				s.abandon(c, mark)
				panic(v) // the connection closes with a *evloop.PanicError
			}
		}
	}()
	// c.closed: closed while its command ran (the server stopped).
	for off < len(b) && !c.blocked() && !c.postponed && c.flags&flagCloseAfterReply == 0 && !c.closeASAP && !c.closed {
		mark = len(s.w.Buf)
		c.parser.Unauthenticated = s.cfg.RequirePass != "" && !c.authenticated
		args, n, err := c.parser.Command(b[off:])
		if err == resp.ErrIncomplete {
			break
		}
		if err != nil {
			s.stats.protoErrors++
			s.w.Error("ERR " + err.Error())
			c.flags |= flagCloseAfterReply
			off = len(b)
			break
		}
		off += n
		if len(args) > 0 {
			s.stats.netIn += int64(n)
			s.call(c, args)
			if c.postponed {
				// Held back by CLIENT PAUSE: run again, with the rest
				// of the pipeline, when the pause ends.
				off -= n
				s.stats.netIn -= int64(n)
				break
			}
			s.w.Proto = c.proto
			if len(c.pendingInval) > 0 {
				s.sendPendingInvalidations(c) // after the reply, or as it blocks
			}
			if !c.blocked() {
				s.endCommand(c, mark)
			} else {
				// What was pushed to it while it blocked stays in s.w, to
				// be sent: its place there means nothing to the reply
				// written when it is answered, in another buffer.
				c.pushed = c.pushed[:0]
			}
			if len(s.ready) > 0 {
				// Clients blocked on a key this command gave data are
				// served before the next, as Redis's processCommand
				// serves them: that one may take the data back (a DEL, an
				// eviction).
				s.handleReady()
			}
		}
		if len(s.w.Buf) >= replyBatch {
			// A long pipeline's replies go out as they come, so that
			// the output buffer limits see them.
			s.send(c, s.w.Buf)
			resetWriter(&s.w)
		}
	}
	c.conn.Discard(off)
	c.parser.Release()
	s.cur = nil
	s.flushReply(c)
	if !c.closed && c.conn.InboundBuffered() > s.cfg.QueryBufferLimit {
		// As Redis's readQueryFromClient: closed at once, without a reply.
		s.log.Warn("kv: closing a client that reached the query buffer's limit (client-query-buffer-limit)", "client", s.describe(c, time.Now()))
		c.conn.Abort()
	}
	s.handleReady()
}

// abandon runs when a command of c's panicked, before the panic closes
// c: the replies of the commands before it are sent, the part of a reply
// it wrote (from mark on) is not, and nothing of it stays for the next
// client. A transaction it was in is closed in the log, which then holds
// the commands of it that ran before (what the one that panicked changed
// is in memory, not in the log). c is forgotten at once.
func (s *Server) abandon(c *client, mark int) {
	s.w.Buf = s.w.Buf[:mark]
	s.cur, s.running = nil, 0
	s.flushReply(c)
	s.ow.Reset()
	if s.inExec {
		s.inExec = false
		s.endExec()
	}
	s.forget(c)
}

// endCommand ends a command of c's whose reply begins at mark in s.w,
// as Redis's resetClient ends one (a blocked client's once it is
// answered): a reply CLIENT REPLY silences is dropped, but for the
// messages pushed to c meanwhile, CLIENT REPLY SKIP's silence, which
// lasts one command, begins or ends, and so does CLIENT CACHING's word.
func (s *Server) endCommand(c *client, mark int) {
	if c.silenced() {
		end := mark
		for i := 0; i < len(c.pushed); i += 2 {
			end += copy(s.w.Buf[end:], s.w.Buf[c.pushed[i]:c.pushed[i+1]])
		}
		s.w.Buf = s.w.Buf[:end]
	}
	c.pushed = c.pushed[:0]
	c.nextCommand()
	if c.flags&flagMulti == 0 && !c.cmdClient {
		c.track &^= trackCaching // CLIENT CACHING's word was for this command, or transaction
	}
}

// resetWriter empties w (the replies' or the messages' writer) once what
// it held is queued on a connection, and lets its buffer go when a large
// reply grew it past twice replyBatch, so that the server does not hold
// the largest reply or message it ever sent.
func resetWriter(w *resp.Writer) {
	if cap(w.Buf) > 2*replyBatch {
		w.Buf = nil
		return
	}
	w.Reset()
}

// flushReply writes what the writer holds for c.
func (s *Server) flushReply(c *client) {
	if len(s.w.Buf) > 0 {
		s.send(c, s.w.Buf)
		resetWriter(&s.w)
	}
	if c.flags&flagCloseAfterReply != 0 {
		s.closeClient(c)
	}
}

// closeClient closes c gracefully, its queued replies written first, and
// forgets it at once, as Redis's freeClient frees a client: it is out of
// CLIENT LIST, no longer blocked, watching or subscribed, while its
// connection's close completes (for up to a second, or CloseTimeout).
func (s *Server) closeClient(c *client) {
	s.forget(c)
	c.conn.Close()
}

// send queues b for c, unless c is to be closed, and checks c's output
// buffer limits.
func (s *Server) send(c *client, b []byte) {
	if c.closeASAP {
		return // as Redis: nothing more for a client to be closed
	}
	s.stats.netOut += int64(len(b))
	if _, err := c.conn.Write(b); errors.Is(err, evloop.ErrOutboundFull) {
		// Past evloop's bound on any client (MaxOutbound): a reply
		// dropped would put the client out of step, so it goes.
		s.closeSoon(c, "its output buffer reached evkv's limit of any client's")
		return
	}
	s.checkOutput(c)
}

// checkOutput closes c (at the end of the loop's iteration, dropping what
// is queued for it) if its output buffer has passed its class's
// client-output-buffer-limit: the hard limit, or the soft one for longer
// than its seconds, as Redis's checkClientOutputBufferLimits checks. A
// client subscribed to a channel or pattern is of the pubsub class, any
// other normal. A buffer is the bytes queued and not yet taken by the
// kernel, less the 16 KiB a Redis client holds in a buffer of its own,
// which Redis does not count.
func (s *Server) checkOutput(c *client) {
	used := int64(c.conn.OutboundBuffered()) - uncountedOutput
	if used <= 0 {
		return
	}
	class := 0
	if c.subscriptions() > 0 {
		class = 2
	}
	l := &s.outputLimits[class]
	hard := l[0] > 0 && used >= l[0]
	soft := l[1] > 0 && used >= l[1]
	if !soft {
		c.softLimitSince = 0
	} else if now := s.now() / 1000; c.softLimitSince == 0 {
		c.softLimitSince, soft = now, false
	} else if now-c.softLimitSince <= l[2] {
		soft = false
	}
	if hard || soft {
		s.closeSoon(c, "overcoming of output buffer limits")
	}
}

// uncountedOutput is the size of a Redis client's own reply buffer
// (PROTO_REPLY_CHUNK_BYTES), whose bytes its output buffer limits leave out.
const uncountedOutput = 16 << 10

// closeSoon marks c to be closed before the loop flushes, for why: what
// is queued for it is dropped, as Redis's freeClientAsync drops it, and it
// is sent nothing more nor served.
func (s *Server) closeSoon(c *client, why string) {
	if !s.markClosing(c) {
		return
	}
	s.stats.outputLimitCloses++
	s.log.Warn("kv: client scheduled to be closed ASAP", "reason", why, "client", s.describe(c, time.Now()))
}

// markClosing marks c to be closed before the loop flushes, as closeSoon
// does, and reports whether it was not marked already.
func (s *Server) markClosing(c *client) bool {
	if c.closeASAP {
		return false
	}
	c.closeASAP = true
	s.closing = append(s.closing, c)
	return true
}

// to returns the writer for a message to c, and a function that sends it:
// the current client's writer if c is being served (its message then goes
// in order with its replies), else the writer for other clients. A
// message that is no push is dropped while CLIENT REPLY silences c; a
// push (a pub/sub message or subscription's reply) is sent whatever
// CLIENT REPLY says, as Redis's CLIENT_PUSHING has it.
func (s *Server) to(c *client, push bool) (*resp.Writer, func()) {
	if c == s.cur {
		w := &s.w
		if run := s.scripts.run; run != nil && run.calling {
			w = &run.outer // not into the reply of the script's command
		}
		if !push || !c.silenced() {
			return w, func() {}
		}
		from := len(w.Buf)
		return w, func() { c.pushed = append(c.pushed, from, len(w.Buf)) }
	}
	s.ow.Reset()
	s.ow.Proto = c.proto
	return &s.ow, func() {
		if len(s.ow.Buf) > 0 && !s.replay && (push || !c.silenced()) {
			s.send(c, s.ow.Buf)
		}
		resetWriter(&s.ow)
	}
}

// OnClose forgets the client: its subscriptions, watches and blocking.
func (s *Server) OnClose(conn *evloop.Conn, err error) {
	c, _ := conn.Context().(*client)
	if c == nil {
		return
	}
	conn.SetContext(nil)
	if c == s.cur {
		// Closed while its commands ran (serve's abandon has handled a
		// panic): what it had written of its replies must not reach the
		// next client served.
		s.w.Reset()
		s.cur, s.inExec = nil, false
	}
	s.forget(c)
}

// forget takes c out of the clients and out of what it waits for,
// watches or subscribes to: when it closes, or at once when the server
// closes it (closeClient) or its code panicked, while the close completes
// (the replies queued before are still being written, for up to a second
// or CloseTimeout).
func (s *Server) forget(c *client) {
	if c.closed {
		return
	}
	s.unblock(c)
	s.unwatchAll(c)
	s.unsubscribeAll(c)
	s.stopMonitor(c)
	s.disableTracking(c)
	s.unpostpone(c)
	delete(s.clients, c.id)
	c.closed = true
}

// memoryUsed reports the Go heap in use, for INFO.
func memoryUsed() (heap, sys uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.Sys
}

// rss reports the resident set size from /proc, or 0.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, res int64
	if _, err := fmt.Sscan(string(b), &size, &res); err != nil {
		return 0
	}
	return res * int64(os.Getpagesize())
}
