//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

// Package sock makes listening sockets and accepts connections as raw,
// non-blocking, close-on-exec file descriptors, for code that drives them
// from an event loop instead of through the Go runtime's poller.
//
// It never logs; it returns errors wrapped with os.NewSyscallError.
package sock

import (
	"errors"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ListenOptions tune Listen. The zero value is ready to use.
type ListenOptions struct {
	// Backlog is the accept queue's length; 0 or less asks for the most the
	// system allows (the kernel lowers a larger backlog to its limit,
	// somaxconn on Linux).
	Backlog int
	// ReusePort sets SO_REUSEPORT, so that several sockets, one per event
	// loop, can listen on one address and the kernel spreads connections.
	ReusePort bool
	// Perm, if not 0, gives a Unix socket's file these permissions between
	// bind and listen, so that no client they shut out can connect in the
	// meantime (a connect before listen is refused); 0 leaves the mode
	// bind gave it, 0777 less the umask. Abstract sockets have no file.
	Perm os.FileMode
}

// listenFD is listen(2): a variable for the tests, which look at the
// socket's file as it is about to listen.
var listenFD = unix.Listen

// Listen opens a non-blocking listening socket. network is "tcp", "tcp4",
// "tcp6" or "unix"; addr is as for net.Listen: "tcp" with no host listens on
// IPv6 and IPv4 where the system can, on IPv4 alone where it cannot. It
// returns the fd and the address it is bound to, with the port chosen for
// port 0.
func Listen(network, addr string, o ListenOptions) (int, net.Addr, error) {
	backlog := o.Backlog
	if backlog <= 0 {
		backlog = 1<<16 - 1
	}
	var (
		sa     unix.Sockaddr
		family int
	)
	switch network {
	case "tcp", "tcp4", "tcp6":
		ta, err := net.ResolveTCPAddr(network, addr)
		if err != nil {
			return -1, nil, err
		}
		sa, family = tcpSockaddr(network, ta)
	case "unix":
		sa, family = &unix.SockaddrUnix{Name: addr}, unix.AF_UNIX
	default:
		return -1, nil, net.UnknownNetworkError(network)
	}
	fd, err := socket(family)
	if err != nil && family == unix.AF_INET6 && network == "tcp" {
		// No IPv6 here: a wildcard "tcp" address falls back to IPv4.
		if sa6 := sa.(*unix.SockaddrInet6); sa6.Addr == [16]byte{} {
			sa, family = &unix.SockaddrInet4{Port: sa6.Port}, unix.AF_INET
			fd, err = socket(family)
		}
	}
	if err != nil {
		return -1, nil, err
	}
	if family != unix.AF_UNIX {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			unix.Close(fd)
			return -1, nil, os.NewSyscallError("setsockopt", err)
		}
		if o.ReusePort {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
				unix.Close(fd)
				return -1, nil, os.NewSyscallError("setsockopt", err)
			}
		}
	}
	if family == unix.AF_INET6 {
		// "tcp6" is IPv6 alone; "tcp" on the IPv6 wildcard takes IPv4 too,
		// where the system allows dual-stack sockets (OpenBSD does not).
		v6only := 0
		if network == "tcp6" {
			v6only = 1
		}
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, v6only); err != nil && v6only == 1 {
			unix.Close(fd)
			return -1, nil, os.NewSyscallError("setsockopt", err)
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, nil, os.NewSyscallError("bind", err)
	}
	// The file bind made for a Unix socket, removed if the socket fails.
	file := ""
	if family == unix.AF_UNIX && addr != "" && addr[0] != '@' {
		file = addr
	}
	fail := func(err error) (int, net.Addr, error) {
		unix.Close(fd)
		if file != "" {
			os.Remove(file)
		}
		return -1, nil, err
	}
	if file != "" && o.Perm != 0 {
		if err := unix.Chmod(file, uint32(o.Perm.Perm())); err != nil {
			return fail(&os.PathError{Op: "chmod", Path: file, Err: err})
		}
	}
	if err := listenFD(fd, backlog); err != nil {
		return fail(os.NewSyscallError("listen", err))
	}
	bound, err := unix.Getsockname(fd)
	if err != nil {
		return fail(os.NewSyscallError("getsockname", err))
	}
	return fd, Addr(bound), nil
}

func tcpSockaddr(network string, ta *net.TCPAddr) (unix.Sockaddr, int) {
	ip4 := ta.IP.To4()
	if ta.IP == nil && network == "tcp" && runtime.GOOS == "openbsd" {
		network = "tcp4" // no dual-stack sockets there: the wildcard is IPv4
	}
	if network == "tcp4" || (ip4 != nil && network != "tcp6") {
		sa := &unix.SockaddrInet4{Port: ta.Port}
		if ip4 != nil {
			copy(sa.Addr[:], ip4)
		}
		return sa, unix.AF_INET
	}
	sa := &unix.SockaddrInet6{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To16())
	if ta.Zone != "" {
		if ifi, err := net.InterfaceByName(ta.Zone); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		}
	}
	return sa, unix.AF_INET6
}

// Addr converts a socket address to a net.Addr (nil if unknown).
func Addr(sa unix.Sockaddr) net.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]).To16(), Port: sa.Port}
	case *unix.SockaddrInet6:
		a := &net.TCPAddr{IP: net.IP(sa.Addr[:]), Port: sa.Port}
		if sa.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(sa.ZoneId)); err == nil {
				a.Zone = ifi.Name
			}
		}
		return a
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: sa.Name, Net: "unix"}
	}
	return nil
}

// Dial starts a non-blocking connect to a TCP or Unix address. It returns
// the fd at once; the connection is made when the fd turns writable, and
// ConnectError then says whether it failed.
func Dial(network, addr string, o DialOptions) (int, error) {
	var (
		sa     unix.Sockaddr
		family int
	)
	switch network {
	case "tcp", "tcp4", "tcp6":
		ta, err := net.ResolveTCPAddr(network, addr)
		if err != nil {
			return -1, err
		}
		if ta.IP == nil {
			// No host: this system, as for net.Dial, over the network's
			// own family.
			ta.IP = net.IPv4(127, 0, 0, 1)
			if network == "tcp6" {
				ta.IP = net.IPv6loopback
			}
		}
		sa, family = tcpSockaddr(network, ta)
	case "unix":
		sa, family = &unix.SockaddrUnix{Name: addr}, unix.AF_UNIX
	default:
		return -1, net.UnknownNetworkError(network)
	}
	fd, err := socket(family)
	if err != nil {
		return -1, err
	}
	if o.Control != nil {
		if err := o.Control(fd); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	if o.LocalAddr != nil {
		if err := bindLocal(fd, family, o.LocalAddr); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	for {
		err = unix.Connect(fd, sa)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return -1, os.NewSyscallError("connect", err)
	}
	return fd, nil
}

// DialOptions tune Dial. The zero value is ready to use.
type DialOptions struct {
	// LocalAddr, if not nil, is bound before the connect: a *net.TCPAddr
	// of the remote address's family (a nil IP or port 0 left to the
	// system), or a *net.UnixAddr.
	LocalAddr net.Addr
	// Control, if not nil, is called with the socket before it is bound
	// and connected; its error fails the dial.
	Control func(fd int) error
}

// bindLocal binds fd, a socket of family, to local.
func bindLocal(fd, family int, local net.Addr) error {
	var sa unix.Sockaddr
	switch a := local.(type) {
	case *net.TCPAddr:
		ip := a.IP
		if ip.IsUnspecified() {
			ip = nil // the wildcard of the socket's family, as net binds it
		}
		switch ip4 := ip.To4(); {
		case family == unix.AF_INET && (ip == nil || ip4 != nil):
			sa4 := &unix.SockaddrInet4{Port: a.Port}
			copy(sa4.Addr[:], ip4)
			sa = sa4
		case family == unix.AF_INET6 && (ip == nil || ip4 == nil):
			sa6 := &unix.SockaddrInet6{Port: a.Port}
			copy(sa6.Addr[:], ip.To16())
			sa = sa6
		}
	case *net.UnixAddr:
		if family == unix.AF_UNIX {
			sa = &unix.SockaddrUnix{Name: a.Name}
		}
	}
	if sa == nil {
		return &net.AddrError{Err: "local address of another network or family", Addr: local.String()}
	}
	if err := unix.Bind(fd, sa); err != nil {
		return os.NewSyscallError("bind", err)
	}
	return nil
}

// ConnectError returns the outcome of a non-blocking connect on fd, once it
// is writable.
func ConnectError(fd int) error {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return os.NewSyscallError("getsockopt", err)
	}
	if v != 0 {
		return os.NewSyscallError("connect", unix.Errno(v))
	}
	return nil
}

// SelfConnected reports whether fd, a connected socket, is connected to
// itself: a TCP socket whose local address is its peer's. A connect to a
// loopback port in the ephemeral range that nothing listens on makes one
// when the kernel picks that very port as the source (TCP's simultaneous
// open); package net closes such a socket and connects again
// (golang.org/issue/2690).
func SelfConnected(fd int) bool {
	local, err := unix.Getsockname(fd)
	if err != nil {
		return false
	}
	switch local := local.(type) {
	case *unix.SockaddrInet4:
		peer, err := unix.Getpeername(fd)
		p, ok := peer.(*unix.SockaddrInet4)
		return err == nil && ok && p.Port == local.Port && p.Addr == local.Addr
	case *unix.SockaddrInet6:
		peer, err := unix.Getpeername(fd)
		p, ok := peer.(*unix.SockaddrInet6)
		return err == nil && ok && p.Port == local.Port && p.Addr == local.Addr
	}
	return false
}

// SocketError returns the socket's pending error (SO_ERROR), a reset
// say, as read would report it; nil if there is none.
func SocketError(fd int) error {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return os.NewSyscallError("getsockopt", err)
	}
	if v != 0 {
		return os.NewSyscallError("read", unix.Errno(v))
	}
	return nil
}

// SetKeepAlive turns TCP keep-alive on with the given idle time and probe
// interval (0: the system's), or off for a negative period.
func SetKeepAlive(fd int, period time.Duration) error {
	return SetKeepAliveConfig(fd, net.KeepAliveConfig{Enable: period >= 0, Idle: period, Interval: period, Count: -1})
}

// SetKeepAliveConfig sets TCP keep-alive as cfg says; a field of zero or
// less leaves the system's value (where package net would put its own).
// Times are rounded up to whole seconds.
func SetKeepAliveConfig(fd int, cfg net.KeepAliveConfig) error {
	if !cfg.Enable {
		return setInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 0)
	}
	if err := setInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1); err != nil {
		return err
	}
	secs := func(d time.Duration) int {
		if d <= 0 {
			return 0
		}
		return int((d + time.Second - 1) / time.Second)
	}
	return setKeepAliveTimes(fd, secs(cfg.Idle), secs(cfg.Interval), max(cfg.Count, 0))
}

// SetBuffers sets the kernel's send and receive buffer sizes (0: leave).
func SetBuffers(fd, send, recv int) error {
	if send > 0 {
		if err := setInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, send); err != nil {
			return err
		}
	}
	if recv > 0 {
		return setInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, recv)
	}
	return nil
}

// SetLingerZero makes the next close of fd reset the connection (RST)
// instead of sending what is queued and a FIN.
func SetLingerZero(fd int) error {
	if err := unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0}); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	return nil
}

func setInt(fd, level, opt, v int) error {
	if err := unix.SetsockoptInt(fd, level, opt, v); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	return nil
}

// LocalAddr returns fd's local address, or nil.
func LocalAddr(fd int) net.Addr {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return nil
	}
	return Addr(sa)
}

// RemoteAddr returns fd's peer address, or nil.
func RemoteAddr(fd int) net.Addr {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return nil
	}
	return Addr(sa)
}

// SetNoDelay turns Nagle's algorithm off (on) for a TCP socket.
func SetNoDelay(fd int, noDelay bool) error {
	v := 0
	if noDelay {
		v = 1
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, v); err != nil {
		return os.NewSyscallError("setsockopt", err)
	}
	return nil
}

// ErrAgain is what Read, Write and Writev return for EAGAIN: the fd is not
// ready, and readiness will say when it is.
var ErrAgain = unix.EAGAIN

// ErrNoBuffers is ENOBUFS, which a write on macOS and the BSDs returns when
// the kernel is short of mbufs for a moment (mbuf(9)): nothing was written,
// and the write may succeed when tried again.
var ErrNoBuffers = unix.ENOBUFS

// ErrAddrNotAvail is EADDRNOTAVAIL, which a TCP connect may fail with when
// the source port the kernel picked is in use after all: a connect made
// again may succeed, and package net makes it again.
var ErrAddrNotAvail = unix.EADDRNOTAVAIL

// Read reads from fd into p, retrying on EINTR. It returns 0, nil at EOF,
// and 0 with an error.
func Read(fd int, p []byte) (int, error) {
	for {
		n, err := read(fd, p)
		if err != unix.EINTR {
			return ioResult("read", n, err)
		}
	}
}

// Write writes p to fd, retrying on EINTR; it may write less than p.
func Write(fd int, p []byte) (int, error) {
	for {
		n, err := write(fd, p)
		if err != unix.EINTR {
			return ioResult("write", n, err)
		}
	}
}

// maxIovecs bounds the buffers of one writev: IOV_MAX is 1024 on Linux,
// macOS and the BSDs, which fail a longer call with EINVAL.
const maxIovecs = 1024

// Writev writes the buffers to fd in one call, retrying on EINTR; it may
// write less than all of them.
func Writev(fd int, bufs [][]byte) (int, error) {
	for {
		n, err := writev(fd, bufs)
		if err != unix.EINTR {
			return ioResult("writev", n, err)
		}
	}
}

// ioResult is an I/O call's count, never negative (the system call's -1
// on an error is 0), and its error mapped by ioError.
func ioResult(op string, n int, err error) (int, error) {
	if err != nil {
		return 0, ioError(op, err)
	}
	return n, nil
}

// ioError maps an I/O call's error: nil stays nil, EAGAIN is ErrAgain, and
// the rest are wrapped with the call's name.
func ioError(op string, err error) error {
	switch err {
	case nil:
		return nil
	case unix.EAGAIN:
		return ErrAgain
	}
	return os.NewSyscallError(op, err)
}

// Close closes fd.
func Close(fd int) error {
	if err := unix.Close(fd); err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}

// ShutdownWrite shuts down fd's sending side: the peer reads EOF.
func ShutdownWrite(fd int) error {
	if err := unix.Shutdown(fd, unix.SHUT_WR); err != nil {
		return os.NewSyscallError("shutdown", err)
	}
	return nil
}

// IsOutOfFiles reports whether err says the process or system has run out
// of what a new connection needs: file descriptors, or kernel memory for
// its buffers. Accepting again at once would fail again.
func IsOutOfFiles(err error) bool {
	for _, e := range []error{unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// IsStream reports whether fd is a stream socket (TCP, or a Unix stream).
func IsStream(fd int) bool {
	t, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	return err == nil && t == unix.SOCK_STREAM
}

// DupRaw returns a close-on-exec, non-blocking duplicate of rc's fd. If
// check is not nil it vets the fd first, and its error is returned.
func DupRaw(rc syscall.RawConn, check func(fd int) error) (int, error) {
	fd := -1
	var err error
	if cerr := rc.Control(func(raw uintptr) {
		if check != nil {
			if err = check(int(raw)); err != nil {
				return
			}
		}
		fd, err = Dup(int(raw))
	}); cerr != nil {
		return -1, cerr
	}
	return fd, err
}

// Dup returns a close-on-exec, non-blocking duplicate of fd.
func Dup(fd int) (int, error) {
	syscall.ForkLock.RLock()
	nfd, err := unix.Dup(fd)
	if err == nil {
		unix.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, os.NewSyscallError("dup", err)
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return -1, os.NewSyscallError("setnonblock", err)
	}
	return nfd, nil
}

// IsTemporary reports whether an Accept error concerns only the connection
// being accepted, so that accepting the next one may go on at once: it went
// away before it was taken (ECONNABORTED), a firewall refused it (EPERM), or
// it brought a network error of its own, which accept(2) on Linux passes on
// and says to treat as EAGAIN (ENETDOWN, EPROTO, ENOPROTOOPT, EHOSTDOWN,
// ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH). Running out of
// descriptors is IsOutOfFiles, not this.
func IsTemporary(err error) bool {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case unix.EAGAIN, unix.EINTR, unix.ECONNABORTED, unix.EPERM,
		unix.ENETDOWN, unix.EPROTO, unix.ENOPROTOOPT, unix.EHOSTDOWN,
		unix.EHOSTUNREACH, unix.EOPNOTSUPP, unix.ENETUNREACH:
		return true
	}
	return isNoNet(errno)
}

// FileConn returns a net.Conn of Go's own on a duplicate of fd, which
// stays the caller's to close.
func FileConn(fd int) (net.Conn, error) {
	dup, err := Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	return net.FileConn(f) // on a duplicate of its own
}

// IsBadFD reports whether err says the fd is not an open file descriptor
// (EBADF): something closed it, and its number may be another file's by
// now.
func IsBadFD(err error) bool { return errors.Is(err, unix.EBADF) }
