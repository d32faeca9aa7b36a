//go:build unix

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

	"golang.org/x/sys/unix"
)

// Listen opens a non-blocking listening socket. network is "tcp", "tcp4",
// "tcp6" or "unix"; addr is as for net.Listen: "tcp" with no host listens on
// IPv6 and IPv4 where the system can, on IPv4 alone where it cannot. A
// backlog of 0 or less asks for the most the system allows (the kernel
// lowers a larger backlog to its limit, somaxconn on Linux). It returns the
// fd and the address it is bound to, with the port chosen for port 0.
func Listen(network, addr string, backlog int) (int, net.Addr, error) {
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
	if err := unix.Listen(fd, backlog); err != nil {
		unix.Close(fd)
		return -1, nil, os.NewSyscallError("listen", err)
	}
	bound, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, nil, os.NewSyscallError("getsockname", err)
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

// IsTemporary reports whether an Accept error is one to retry after the next
// readiness event (or, for fd exhaustion, after descriptors free up), rather
// than a failed listener.
func IsTemporary(err error) bool {
	for _, e := range []error{unix.EAGAIN, unix.EINTR, unix.ECONNABORTED, unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM, unix.EPROTO} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
