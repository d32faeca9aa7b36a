package kv

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// serverSocket returns the fd of the server's end of c, which a test's
// server holds in this same process.
func serverSocket(t *testing.T, c net.Conn) int {
	t.Helper()
	local, remote := c.LocalAddr().(*net.TCPAddr), c.RemoteAddr().(*net.TCPAddr)
	for fd := 3; fd < 1<<16; fd++ {
		sa, err := unix.Getsockname(fd)
		if err != nil {
			continue
		}
		pa, err := unix.Getpeername(fd)
		if err != nil {
			continue
		}
		s4, ok1 := sa.(*unix.SockaddrInet4)
		p4, ok2 := pa.(*unix.SockaddrInet4)
		if ok1 && ok2 && s4.Port == remote.Port && p4.Port == local.Port && net.IP(p4.Addr[:]).Equal(local.IP) {
			return fd
		}
	}
	t.Fatalf("no socket of the server's end of %v", local)
	return -1
}

// tcp-keepalive sets the accepted connections' keep-alive as Redis's
// does: the first probe after the period, then one a third of it, three
// in all; 0 turns it off; CONFIG SET applies to the connections accepted
// after it.
func TestTCPKeepAlive(t *testing.T) {
	_, addr := startServer(t, Config{})
	type got struct{ on, idle, intvl, cnt int }
	check := func(want got) {
		t.Helper()
		rc := dialRaw(t, addr)
		rc.do("PING") // accepted and opened
		fd := serverSocket(t, rc.c)
		var g got
		g.on, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		if g.on != 0 {
			g.idle, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
			g.intvl, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL)
			g.cnt, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT)
		}
		if g != want {
			t.Errorf("keep-alive on, idle, interval, count = %+v; want %+v", g, want)
		}
	}
	check(got{1, 300, 100, 3})
	rc := dialRaw(t, addr)
	rc.do("CONFIG", "SET", "tcp-keepalive", "2")
	check(got{1, 2, 1, 3})
	rc.do("CONFIG", "SET", "tcp-keepalive", "0")
	check(got{})
}
