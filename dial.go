package evloop

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"slices"
	"syscall"
	"time"

	"github.com/evloop/evloop/internal/poll"
	"github.com/evloop/evloop/internal/sock"
)

// lookupIP looks host names up for Dial, and dialSocket starts its
// connects; tests replace them.
var (
	lookupIP   = net.DefaultResolver.LookupIP
	dialSocket = sock.Dial
)

// resolve looks up a TCP address's host name within ctx and returns the
// addresses to try in turn, each with one of the name's IPs in its place:
// for "tcp" the IPv4 ones first, as net.ResolveTCPAddr prefers them. Other
// addresses are returned as they are.
func resolve(ctx context.Context, network, addr string) ([]string, error) {
	var ipNet string
	switch network {
	case "tcp":
		ipNet = "ip"
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	}
	host, port, err := net.SplitHostPort(addr)
	if ipNet == "" || err != nil || host == "" {
		return []string{addr}, nil // sock.Dial reports what is wrong with it
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return []string{addr}, nil
	}
	ips, err := lookupIP(ctx, ipNet, host)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	if network == "tcp" {
		v6 := func(ip net.IP) int {
			if ip.To4() != nil {
				return 0
			}
			return 1
		}
		slices.SortStableFunc(ips, func(a, b net.IP) int { return cmp.Compare(v6(a), v6(b)) })
	}
	addrs := make([]string, len(ips))
	for i, ip := range ips {
		addrs[i] = net.JoinHostPort(ip.String(), port)
	}
	return addrs, nil
}

// partialDeadline is the deadline for the first of n addresses still to
// try before deadline: an equal share of the time left, but at least 2
// seconds where that much is left, as net.Dialer shares it.
func partialDeadline(now, deadline time.Time, n int) time.Time {
	const saneMinimum = 2 * time.Second
	left := deadline.Sub(now)
	share := left / time.Duration(n)
	if share < saneMinimum {
		share = min(left, saneMinimum)
	}
	return now.Add(share)
}

type dialResult struct {
	c   *Conn
	err error
}

// Dial connects to a TCP or Unix address from one of the Server's loops
// and returns the connection once it is established, after OnOpen ran for
// it on the loop; the Server's Handler serves it like an accepted one. A
// host name's addresses are tried one at a time, for "tcp" the IPv4 ones
// first, until one connects; under a deadline each gets an equal share of
// the time left, at least 2 seconds, as net.Dialer shares it. When the
// name has addresses of both families, those of the other family are
// tried the same way, racing the first, once the first family has failed
// or Options.DialFallbackDelay has passed, as net.Dialer races them (RFC
// 8305); the first to connect wins, and one that connects after it is
// closed (its OnOpen and OnClose run). If all fail, the first's error is
// returned. A socket that connected to itself, as a loopback connect to a
// port nothing listens on may, is closed and the address dialed again, as
// net.Dial does; so is a TCP connect that failed with EADDRNOTAVAIL, as
// Linux's may when the source port it picked is in use: twice at most in
// all. Dial fails as net.Dialer does, with a *net.OpError whose Op is
// "dial", naming the network and address and wrapping the cause (a
// refused connect's syscall.ECONNREFUSED, say); if ctx ends first, the
// attempt is abandoned and the cause is ctx.Err(). It fails with ErrClosed
// once the Server is shut down, and with a *PanicError if OnOpen panicked.
// Dial waits for a loop, so it must not be called on one (from a handler):
// there, hand the dial to a goroutine of its own.
func (s *Server) Dial(ctx context.Context, network, addr string) (*Conn, error) {
	return s.DialWith(ctx, network, addr, DialOptions{})
}

// DialOptions are what a dial may be given beyond its address, as
// net.Dialer's fields of the same names.
type DialOptions struct {
	// LocalAddr, if not nil, is the address the socket is bound to before
	// it connects: a *net.TCPAddr for TCP (a nil IP or port 0 left to the
	// system), a *net.UnixAddr for Unix. A host name's addresses of
	// another family than its IP are not tried.
	LocalAddr net.Addr
	// Control, if not nil, is called with each socket before it is bound
	// and connected, as net.Dialer calls its Control: network is "tcp4",
	// "tcp6" or "unix", address the address connected to, and c's
	// Control runs a function with the fd (c's Read and Write fail). Its
	// error fails that connect.
	Control func(network, address string, c syscall.RawConn) error
	// TLSConfig, if not nil, makes the connection a TLS client's, as
	// tls.Dial's: Dial returns once the handshake is done too (within
	// Options.HandshakeTimeout and ctx), OnOpen running after it. Without
	// a ServerName, the host name of the address dialed is sent (SNI) and
	// checked, as tls.Dial sends and checks it. The TLS connection is as
	// ListenTLS's.
	TLSConfig *tls.Config
}

// DialWith is Dial with options.
func (s *Server) DialWith(ctx context.Context, network, addr string, o DialOptions) (*Conn, error) {
	if o.TLSConfig != nil && o.TLSConfig.ServerName == "" {
		// Sent as SNI even when the certificate is not verified, as
		// tls.Dial sends it: a server may pick its certificate by it.
		host := addr
		if h, _, err := net.SplitHostPort(addr); err == nil {
			host = h
		}
		o.TLSConfig = o.TLSConfig.Clone()
		o.TLSConfig.ServerName = host
	}
	addrs, err := resolve(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d := &dialing{s: s, network: network, o: o}
	if addrs, err = d.suitable(addr, addrs); err != nil {
		return nil, err
	}
	if s.opts.DialFallbackDelay > 0 && network == "tcp" {
		if primaries, fallbacks := partition(addrs); len(fallbacks) > 0 {
			return d.parallel(ctx, primaries, fallbacks)
		}
	}
	return d.serial(ctx, addrs)
}

// dialing is one call of DialWith.
type dialing struct {
	s       *Server
	network string
	o       DialOptions
}

// suitable returns those of addrs that a socket bound to LocalAddr can
// connect to: with an IP there, those of its family, as net.Dialer keeps
// them. None is an error.
func (d *dialing) suitable(addr string, addrs []string) ([]string, error) {
	la, ok := d.o.LocalAddr.(*net.TCPAddr)
	if !ok || la.IP == nil || la.IP.IsUnspecified() {
		// A wildcard suits either family, as net.Dialer has it.
		return addrs, nil
	}
	local4 := la.IP.To4() != nil
	kept := slices.DeleteFunc(slices.Clone(addrs), func(a string) bool {
		ap, err := netip.ParseAddrPort(a)
		return err == nil && ap.Addr().Unmap().Is4() != local4
	})
	if len(kept) == 0 {
		return nil, &net.OpError{Op: "dial", Net: d.network, Source: la, Err: &net.AddrError{Err: "no suitable address found", Addr: addr}}
	}
	return kept, nil
}

// partition splits resolved addresses into those of the first one's
// family and the others.
func partition(addrs []string) (primaries, fallbacks []string) {
	family := func(a string) bool {
		ap, err := netip.ParseAddrPort(a)
		return err == nil && ap.Addr().Unmap().Is4()
	}
	first := family(addrs[0])
	for _, a := range addrs {
		if family(a) == first {
			primaries = append(primaries, a)
		} else {
			fallbacks = append(fallbacks, a)
		}
	}
	return primaries, fallbacks
}

// parallel dials primaries in turn, and fallbacks in turn beside them
// from when the primaries have failed or DialFallbackDelay has passed.
// It returns the first connection made, once the other dial has ended
// (closing what it connected), or the primaries' error.
func (d *dialing) parallel(ctx context.Context, primaries, fallbacks []string) (*Conn, error) {
	type outcome struct {
		c       *Conn
		err     error
		primary bool
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan outcome, 2)
	start := func(addrs []string, primary bool) {
		go func() {
			c, err := d.serial(ctx, addrs)
			results <- outcome{c, err, primary}
		}()
	}
	start(primaries, true)
	running := 1
	fallback := time.NewTimer(d.s.opts.DialFallbackDelay)
	defer fallback.Stop()
	fallbackC := fallback.C
	var primaryErr, fallbackErr error
	for {
		select {
		case <-fallbackC:
			fallbackC = nil
			start(fallbacks, false)
			running++
		case r := <-results:
			running--
			if r.err == nil {
				cancel()
				for ; running > 0; running-- {
					if late := <-results; late.c != nil {
						late.c.Submit(func() { late.c.Close() })
					}
				}
				return r.c, nil
			}
			if r.primary {
				primaryErr = r.err
			} else {
				fallbackErr = r.err
			}
			if fallbackC != nil { // the primaries failed before the delay
				fallbackC = nil
				start(fallbacks, false)
				running++
			}
			if running == 0 {
				return nil, cmp.Or(primaryErr, fallbackErr)
			}
		}
	}
}

// serial dials addrs in turn until one connects, sharing ctx's deadline
// among them, and returns the connection or the first error.
func (d *dialing) serial(ctx context.Context, addrs []string) (*Conn, error) {
	var first error
	for i, a := range addrs {
		if err := ctx.Err(); err != nil {
			// Done already: fail before connecting, as net.Dialer does.
			return nil, d.error(a, err)
		}
		actx := ctx
		if deadline, ok := ctx.Deadline(); ok && i < len(addrs)-1 {
			var cancel context.CancelFunc
			actx, cancel = context.WithDeadline(ctx, partialDeadline(time.Now(), deadline, len(addrs)-i))
			defer cancel()
		}
		c, err := d.dial(actx, a)
		if err == nil {
			return c, nil
		}
		err = d.error(a, err)
		if first == nil {
			first = err
		}
		var oe *net.OpError
		var he handshakeError
		if !errors.As(err, &oe) || errors.As(err, &he) || errors.Is(err, ErrHandshakeTimeout) {
			// ErrClosed, a panic in OnOpen: no other address helps; nor
			// after a connect, a TLS handshake's failure, as tls.Dial
			// tries the addresses for the connect alone.
			return nil, err
		}
	}
	return nil, first
}

// handshakeError is a dialed connection's failed TLS handshake, which
// ends the dial: other addresses are not tried.
type handshakeError struct{ error }

func (e handshakeError) Unwrap() error { return e.error }

// error is err as net.Dialer reports a failed dial: a *net.OpError
// naming the network, the local address if one was given, and the
// address. The engine's own outcomes, ErrClosed, ErrShutdown and a
// *PanicError from OnOpen, are returned as they are.
func (d *dialing) error(addr string, err error) error {
	var pe *PanicError
	if errors.Is(err, ErrClosed) || errors.Is(err, ErrShutdown) || errors.As(err, &pe) {
		return err
	}
	var a net.Addr
	switch d.network {
	case "tcp", "tcp4", "tcp6":
		if ap, perr := netip.ParseAddrPort(addr); perr == nil {
			a = net.TCPAddrFromAddrPort(ap)
		}
	case "unix":
		a = &net.UnixAddr{Name: addr, Net: d.network}
	}
	return &net.OpError{Op: "dial", Net: d.network, Source: d.o.LocalAddr, Addr: a, Err: err}
}

// errSelfConnect fails a dial whose socket connected to itself.
var errSelfConnect = errors.New("connected to itself")

// redials is how many times a dial that connected to itself, or met a
// spurious EADDRNOTAVAIL, is made again before it fails: twice, as
// net.Dial makes it.
const redials = 2

// dial connects to a resolved address. A connection to itself (see
// sock.SelfConnected) is closed and dialed again, as net.Dial does
// (golang.org/issue/2690); after redials more such connections, where
// net.Dial would return the last, it fails with errSelfConnect. A TCP
// connect that fails with EADDRNOTAVAIL is made again too, as net.Dial
// makes it: Linux, picking the source port, sometimes picks one in use
// (spuriousENOTAVAIL in net/tcpsock_posix.go).
func (d *dialing) dial(ctx context.Context, addr string) (*Conn, error) {
	for i := 0; ; i++ {
		c, err := d.once(ctx, addr)
		if i == redials || !redialable(d.network, err) {
			return c, err
		}
	}
}

// redialable reports whether a dial that failed with err is made again.
func redialable(network string, err error) bool {
	return err == errSelfConnect || network != "unix" && errors.Is(err, sock.ErrAddrNotAvail)
}

// once makes one connection to a resolved address.
func (d *dialing) once(ctx context.Context, addr string) (*Conn, error) {
	s := d.s
	if s.isShutdown() {
		return nil, ErrClosed // the loop would close the fd: do not connect
	}
	fd, err := dialSocket(d.network, addr, d.sockOptions(addr))
	if err != nil {
		return nil, err
	}
	// Counted on its loop from the moment the loop is chosen, as an
	// accepted connection is, so that LeastConnections sees a burst of
	// dials as they are placed.
	ls := s.pick(nil)
	ls.admit()
	res := make(chan dialResult, 1)
	var c *Conn
	if err := ls.l.Submit(func() {
		if s.isShutdown() {
			sock.Close(fd)
			ls.gone()
			res <- dialResult{err: ErrClosed}
			return
		}
		nc := &Conn{ls: ls, fd: int32(fd), state: connecting}
		if err := ls.l.Register(fd, poll.Write, nc); err != nil {
			sock.Close(fd)
			ls.gone()
			res <- dialResult{err: err}
			return
		}
		if d.o.TLSConfig != nil {
			nc.prepareTLS(d.o.TLSConfig, true)
		}
		c = nc // only a registered Conn may be finalized below
		ls.dials[c] = res
	}); err != nil {
		sock.Close(fd)
		ls.gone()
		return nil, ErrClosed
	}
	select {
	case r := <-res:
		return r.c, r.err
	case <-ctx.Done():
		ls.l.Submit(func() {
			// The registering task ran before this one: c is set, and if it
			// is no longer connecting, its result is already in res;
			// otherwise finalize sends it.
			if c != nil && (c.state == connecting || c.state == handshaking) {
				c.finalize(ctx.Err())
			}
		})
		if r := <-res; r.c != nil {
			return r.c, nil // connected just before the cancellation took effect
		}
		return nil, ctx.Err()
	}
}

// sockOptions are the options of a connect to addr.
func (d *dialing) sockOptions(addr string) sock.DialOptions {
	o := sock.DialOptions{LocalAddr: d.o.LocalAddr}
	if control := d.o.Control; control != nil {
		network := d.network // "unix"
		if network != "unix" {
			// The family connected over, as net.Dialer names it; an
			// address with no host is this system's, over IPv4 but
			// for "tcp6" (sock.Dial).
			ap, err := netip.ParseAddrPort(addr)
			if err == nil && ap.Addr().Unmap().Is4() || err != nil && network != "tcp6" {
				network = "tcp4"
			} else {
				network = "tcp6"
			}
		}
		o.Control = func(fd int) error { return control(network, addr, rawFD(fd)) }
	}
	return o
}

// rawFD is a socket being dialed as the syscall.RawConn that
// DialOptions.Control is given: Control runs a function with it; there is
// nothing to read or write yet.
type rawFD int

func (fd rawFD) Control(f func(fd uintptr)) error { f(uintptr(fd)); return nil }

func (rawFD) Read(func(fd uintptr) bool) error { return errNotConnected }

func (rawFD) Write(func(fd uintptr) bool) error { return errNotConnected }

var errNotConnected = errors.New("evloop: the socket is not connected yet")

// connected finishes a dial when the fd turns writable. It runs on the loop.
func (c *Conn) connected() {
	res := c.ls.dials[c]
	delete(c.ls.dials, c)
	err := sock.ConnectError(int(c.fd))
	if err == nil && sock.SelfConnected(int(c.fd)) {
		err = errSelfConnect
	}
	if err != nil {
		c.finalize(err)
		res <- dialResult{err: err}
		return
	}
	c.state = open
	c.ls.s.configure(int(c.fd))
	if c.secure {
		// Dial waits for the handshake: handshakeDone answers it.
		c.ls.dials[c] = res
		c.startHandshake(true)
		c.updateInterest()
		return
	}
	c.flags |= fOpened
	if err := c.ls.l.Modify(int(c.fd), c.interest()); err != nil {
		c.finalize(err)
		res <- dialResult{err: err}
		return
	}
	if panicked := c.runOnOpen(); panicked != nil {
		res <- dialResult{err: &PanicError{Value: panicked}} // Dial returns it
		return
	}
	res <- dialResult{c: c}
}
