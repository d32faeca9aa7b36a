//go:build linux

package load

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/evloop/evloop/bench/internal/hist"
)

// Phases of a Gen, in order. Workers read the phase at the top of every
// loop iteration and are woken through their eventfd when it changes.
const (
	phConnect int32 = iota // opening connections, each echoes one message
	phRun                  // traffic, not yet measured (warm-up)
	phMeasure              // traffic, measured
	phStop                 // close everything and return
)

// Connection states.
const (
	stConnecting = iota // connect() in progress
	stHello             // connected, first message (seq 0) in flight
	stReady             // first message echoed
)

type conn struct {
	fd       int
	id       uint32
	state    int
	stream   Stream
	nextSeq  uint64  // next message to send
	inflight int     // messages written (at least in part) and not fully echoed
	sentAt   []int64 // send time of message seq, at seq % Depth
	out      []byte  // bytes the socket has not taken yet
	writing  bool    // EPOLLOUT is watched, out is not empty
}

type worker struct {
	g       *Gen
	ep, efd int
	conns   []*conn // by fd
	todo    []int   // indexes (in this process) of the connections to open
	next    int     // todo[next] is opened next
	opening int     // connections between connect() and their first echo
	ready   int
	started bool
	rbuf    []byte
	wbuf    []byte

	hist     *hist.H
	msgs     int64
	errors   int64
	firstErr error
	signaled bool
	readyc   chan error // one value: nil when every connection has echoed once
	done     chan struct{}
}

// Gen is a running load generator: connections open and idle until Measure
// or Close.
type Gen struct {
	cfg      Config
	phase    atomic.Int32
	base     time.Time
	workers  []*worker
	connectS float64

	maxMsgs   int64
	measured  atomic.Int64
	limitHit  chan struct{}
	limitOnce sync.Once
	closeOnce sync.Once
}

// Dial opens cfg.Conns connections, sends one message on each and waits for
// every echo, so that the server has accepted and served every connection
// before anything is measured. It fails if that takes longer than
// cfg.ConnectTimeout, or if this process cannot hold that many descriptors.
func Dial(cfg Config) (*Gen, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return nil, err
	}
	if need := uint64(cfg.Conns + 2*cfg.Workers + 32); need > rl.Cur {
		return nil, fmt.Errorf("%d connections need about %d descriptors, this process may hold %d: split them over several loadgen processes", cfg.Conns, need, rl.Cur)
	}
	g := &Gen{cfg: cfg, base: time.Now(), limitHit: make(chan struct{})}
	perWorkerOpening := max(1, cfg.MaxConnecting/cfg.Workers)
	for i := 0; i < cfg.Workers; i++ {
		w := &worker{
			g:      g,
			conns:  make([]*conn, rl.Cur),
			rbuf:   make([]byte, 64<<10),
			wbuf:   make([]byte, cfg.Depth*cfg.Size),
			hist:   hist.New(),
			readyc: make(chan error, 1),
			done:   make(chan struct{}),
		}
		for k := i; k < cfg.Conns; k += cfg.Workers {
			w.todo = append(w.todo, k)
		}
		var err error
		if w.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
			g.Close()
			return nil, err
		}
		if w.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
			unix.Close(w.ep)
			g.Close()
			return nil, err
		}
		if err := unix.EpollCtl(w.ep, unix.EPOLL_CTL_ADD, w.efd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(w.efd)}); err != nil {
			unix.Close(w.ep)
			unix.Close(w.efd)
			g.Close()
			return nil, err
		}
		g.workers = append(g.workers, w)
		go w.run(perWorkerOpening)
	}
	deadline := time.NewTimer(cfg.ConnectTimeout)
	defer deadline.Stop()
	for _, w := range g.workers {
		select {
		case err := <-w.readyc:
			if err != nil {
				g.Close()
				return nil, err
			}
		case <-deadline.C:
			g.Close()
			return nil, fmt.Errorf("connections not all up and echoing after %v", cfg.ConnectTimeout)
		}
	}
	g.connectS = time.Since(g.base).Seconds()
	return g, nil
}

func (g *Gen) setPhase(p int32) {
	g.phase.Store(p)
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	for _, w := range g.workers {
		_, _ = unix.Write(w.efd, one)
	}
}

func (g *Gen) now() int64 { return int64(time.Since(g.base)) }

// Measure runs traffic for warmup, then measures for duration or until
// maxMsgs messages have completed (whichever comes first; 0 means no
// limit), then stops and closes every connection. onStart and onEnd run
// right at the window's edges.
func (g *Gen) Measure(warmup, duration time.Duration, maxMsgs int64, onStart, onEnd func()) Result {
	g.maxMsgs = maxMsgs // read by the workers only in phMeasure, set before it
	g.setPhase(phRun)
	time.Sleep(warmup)
	cpu0 := cpuTime()
	t0 := time.Now()
	g.setPhase(phMeasure)
	if onStart != nil {
		onStart()
	}
	timer := time.NewTimer(duration)
	select {
	case <-timer.C:
	case <-g.limitHit:
		timer.Stop()
	}
	g.setPhase(phStop)
	window := time.Since(t0)
	cpu1 := cpuTime()
	if onEnd != nil {
		onEnd()
	}
	r := g.finish()
	r.WindowS = window.Seconds()
	r.CPUs = cpu1 - cpu0
	if r.WindowS > 0 {
		r.MsgsPerS = float64(r.Msgs) / r.WindowS
	}
	return r
}

// Close closes every connection and returns what was measured: for Idle,
// the round trips of the one message each connection exchanged.
func (g *Gen) Close() Result {
	g.setPhase(phStop)
	return g.finish()
}

func (g *Gen) finish() Result {
	g.closeOnce.Do(func() {
		for _, w := range g.workers {
			<-w.done
		}
	})
	h := hist.New()
	r := Result{Event: "result", Mode: g.cfg.Mode.String(), Conns: g.cfg.Conns, Size: g.cfg.Size,
		Depth: g.cfg.Depth, Workers: len(g.workers), ConnectS: g.connectS}
	for _, w := range g.workers {
		h.Merge(w.hist)
		r.Msgs += w.msgs
		r.Errors += w.errors
		if w.firstErr != nil && r.FirstError == "" {
			r.FirstError = w.firstErr.Error()
		}
	}
	if g.cfg.Mode == Idle {
		r.Msgs = int64(h.Count())
	}
	r.SetLatency(h)
	return r
}

func cpuTime() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// run is the worker's loop, on an OS thread of its own.
func (w *worker) run(maxOpening int) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(w.done)
	defer w.closeAll()
	events := make([]unix.EpollEvent, 512)
	for {
		w.openMore(maxOpening)
		ph := w.g.phase.Load()
		if ph == phStop {
			return
		}
		if ph >= phRun && !w.started {
			w.started = true
			now := w.g.now()
			for _, c := range w.conns {
				if c != nil && c.state == stReady {
					w.pump(c, now)
				}
			}
		}
		// Poll first without blocking (a raw system call); only when
		// nothing is ready, wait through the scheduler-aware call.
		n, err := pollNow(w.ep, events)
		if err == nil && n == 0 {
			n, err = unix.EpollWait(w.ep, events, 200)
		}
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			w.fail(fmt.Errorf("epoll_wait: %w", err))
			return
		}
		measuring := w.g.phase.Load() == phMeasure
		for i := 0; i < n; i++ {
			fd := int(events[i].Fd)
			ev := events[i].Events
			if fd == w.efd {
				var b [8]byte
				_, _ = unix.Read(w.efd, b[:])
				continue
			}
			c := w.conns[fd]
			if c == nil {
				continue
			}
			if c.state == stConnecting {
				w.connected(c)
				continue
			}
			if ev&unix.EPOLLOUT != 0 && c.writing {
				w.flush(c)
			}
			if ev&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP|unix.EPOLLRDHUP) != 0 && w.conns[fd] == c {
				w.readable(c, measuring)
			}
		}
	}
}

func (w *worker) openMore(maxOpening int) {
	for w.opening < maxOpening && w.next < len(w.todo) && w.g.phase.Load() == phConnect {
		i := w.todo[w.next]
		w.next++
		if err := w.open(i); err != nil {
			w.fail(err)
			w.next = len(w.todo)
			return
		}
	}
}

func (w *worker) open(i int) error {
	cfg := &w.g.cfg
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	// Let connect() pick the port for the whole 4-tuple rather than bind()
	// reserving one per source address.
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	src := cfg.srcFor(i)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: src.As4()}); err != nil {
		unix.Close(fd)
		return fmt.Errorf("bind %v: %w", src, err)
	}
	err = unix.Connect(fd, &unix.SockaddrInet4{Port: int(cfg.Server.Port()), Addr: cfg.Server.Addr().As4()})
	if err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return fmt.Errorf("connect %v from %v: %w", cfg.Server, src, err)
	}
	if fd >= len(w.conns) {
		unix.Close(fd)
		return fmt.Errorf("descriptor %d beyond the limit", fd)
	}
	c := &conn{fd: fd, id: cfg.ConnBase + uint32(i), state: stConnecting, sentAt: make([]int64, cfg.Depth)}
	c.stream = Stream{Conn: c.id, Size: cfg.Size}
	w.conns[fd] = c
	w.opening++
	if err := unix.EpollCtl(w.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLOUT, Fd: int32(fd)}); err != nil {
		w.drop(c)
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

func (w *worker) watch(c *conn, events uint32) {
	if err := unix.EpollCtl(w.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: events, Fd: int32(c.fd)}); err != nil {
		w.connErr(c, fmt.Errorf("epoll_ctl: %w", err))
	}
}

func (w *worker) connected(c *conn) {
	soerr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	if err != nil {
		w.connErr(c, fmt.Errorf("connect %v from %v: %w", w.g.cfg.Server, w.g.cfg.srcFor(int(c.id-w.g.cfg.ConnBase)), err))
		return
	}
	c.state = stHello
	w.watch(c, unix.EPOLLIN|unix.EPOLLRDHUP)
	if w.conns[c.fd] == c {
		w.pump(c, w.g.now())
	}
}

// pump writes as many new messages as c may have in flight.
func (w *worker) pump(c *conn, now int64) {
	if c.writing {
		return
	}
	cfg := &w.g.cfg
	want := 0
	switch c.state {
	case stHello:
		if c.nextSeq == 0 {
			want = 1
		}
	case stReady:
		if w.started && cfg.Mode != Idle && w.g.phase.Load() < phStop {
			want = cfg.Depth - c.inflight
		}
	}
	if want <= 0 {
		return
	}
	size := cfg.Size
	buf := w.wbuf[:want*size]
	for k := 0; k < want; k++ {
		seq := c.nextSeq + uint64(k)
		Fill(buf[k*size:(k+1)*size], c.id, seq)
		c.sentAt[seq%uint64(cfg.Depth)] = now
	}
	c.nextSeq += uint64(want)
	c.inflight += want
	n, err := rawWrite(c.fd, buf)
	if err == unix.EAGAIN {
		n, err = 0, nil
	}
	if err != nil {
		w.connErr(c, fmt.Errorf("write: %w", err))
		return
	}
	c.stream.Sent(n)
	if n < len(buf) {
		c.out = append(c.out[:0], buf[n:]...)
		c.writing = true
		w.watch(c, unix.EPOLLIN|unix.EPOLLOUT|unix.EPOLLRDHUP)
	}
}

func (w *worker) flush(c *conn) {
	n, err := rawWrite(c.fd, c.out)
	if err == unix.EAGAIN {
		return
	}
	if err != nil {
		w.connErr(c, fmt.Errorf("write: %w", err))
		return
	}
	c.stream.Sent(n)
	c.out = c.out[n:]
	if len(c.out) == 0 {
		c.out = c.out[:0]
		c.writing = false
		w.watch(c, unix.EPOLLIN|unix.EPOLLRDHUP)
		w.pump(c, w.g.now())
	}
}

func (w *worker) readable(c *conn, measuring bool) {
	n, err := rawRead(c.fd, w.rbuf)
	if err == unix.EAGAIN || err == unix.EINTR {
		return
	}
	if err != nil {
		w.connErr(c, fmt.Errorf("read: %w", err))
		return
	}
	if n == 0 {
		w.connErr(c, errors.New("the server closed the connection"))
		return
	}
	first := c.stream.Received()
	d, err := c.stream.Feed(w.rbuf[:n])
	if err != nil {
		w.connErr(c, err)
		return
	}
	if d == 0 {
		return
	}
	now := w.g.now()
	c.inflight -= d
	depth := uint64(w.g.cfg.Depth)
	if c.state == stHello {
		c.state = stReady
		w.opening--
		w.ready++
		if w.g.cfg.Mode == Idle {
			w.hist.Record(now - c.sentAt[0])
		}
		if w.ready == len(w.todo) && !w.signaled {
			w.signaled = true
			w.readyc <- nil
		}
		if w.started {
			w.pump(c, now)
		}
		return
	}
	if measuring {
		for k := 0; k < d; k++ {
			seq := first + uint64(k)
			w.hist.Record(now - c.sentAt[seq%depth])
		}
		w.msgs += int64(d)
		if max := w.g.maxMsgs; max > 0 && w.g.measured.Add(int64(d)) >= max {
			w.g.limitOnce.Do(func() { close(w.g.limitHit) })
		}
	}
	w.pump(c, now)
}

// connErr records a failed connection and closes it; errors after the
// generator was told to stop are not errors.
func (w *worker) connErr(c *conn, err error) {
	if w.g.phase.Load() != phStop {
		w.fail(err)
	}
	w.drop(c)
}

func (w *worker) fail(err error) {
	w.errors++
	if w.firstErr == nil {
		w.firstErr = err
	}
	if !w.signaled {
		w.signaled = true
		w.readyc <- err
	}
}

func (w *worker) drop(c *conn) {
	if w.conns[c.fd] != c {
		return
	}
	if c.state != stReady {
		w.opening--
	}
	w.conns[c.fd] = nil
	_ = unix.Close(c.fd) // also removes it from the epoll set
}

func (w *worker) closeAll() {
	for _, c := range w.conns {
		if c != nil {
			w.conns[c.fd] = nil
			_ = unix.Close(c.fd)
		}
	}
	_ = unix.Close(w.ep)
	_ = unix.Close(w.efd)
}

// ConnectSeconds is how long Dial took to open every connection and see
// its first echo.
func (g *Gen) ConnectSeconds() float64 { return g.connectS }
