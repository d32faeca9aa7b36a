package evloop

import (
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSetKeepAlive: Options.KeepAlive sets an accepted connection's
// keep-alive, Conn.SetKeepAlive replaces it in OnOpen, a negative period
// turns it off.
func TestSetKeepAlive(t *testing.T) {
	type got struct{ on, idle int }
	for _, tc := range []struct {
		name   string
		option time.Duration
		set    time.Duration // 0: not called
		want   got
	}{
		{"option", 20 * time.Second, 0, got{1, 20}},
		{"replaced", 20 * time.Second, 7 * time.Second, got{1, 7}},
		{"turned off", 20 * time.Second, -1, got{0, 20}},
		{"turned on", -1, 9 * time.Second, got{1, 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := make(chan got, 1)
			h := &funcHandler{open: func(c *Conn) {
				if tc.set != 0 {
					if err := c.SetKeepAlive(tc.set); err != nil {
						t.Error(err)
					}
				}
				on, _ := unix.GetsockoptInt(int(c.fd), unix.SOL_SOCKET, unix.SO_KEEPALIVE)
				idle, _ := unix.GetsockoptInt(int(c.fd), unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
				c.Close()
				res <- got{on, idle}
			}}
			_, addr := serve(t, h, Options{Loops: 1, KeepAlive: tc.option})
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			g := <-res
			if g.on != tc.want.on || tc.want.on == 1 && g.idle != tc.want.idle {
				t.Errorf("SO_KEEPALIVE %d, TCP_KEEPIDLE %d; want %d, %d", g.on, g.idle, tc.want.on, tc.want.idle)
			}
			c.Read(make([]byte, 1)) // until the server's close
		})
	}
}

// TestSetKeepAliveConfig: the idle time, interval and count are set as
// net.TCPConn's SetKeepAliveConfig sets them: zero for the defaults,
// negative to leave the system's.
func TestSetKeepAliveConfig(t *testing.T) {
	type got struct{ on, idle, intvl, cnt int }
	sysCnt := -1 // the system's, read from a fresh socket
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0); err == nil {
		sysCnt, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT)
		unix.Close(fd)
	}
	for _, tc := range []struct {
		name string
		cfg  net.KeepAliveConfig
		want got
	}{
		{"as Redis sets it", net.KeepAliveConfig{Enable: true, Idle: 300 * time.Second, Interval: 100 * time.Second, Count: 3}, got{1, 300, 100, 3}},
		{"defaults", net.KeepAliveConfig{Enable: true}, got{1, 15, 15, 9}},
		{"rounded up", net.KeepAliveConfig{Enable: true, Idle: 1500 * time.Millisecond, Interval: -1, Count: -1}, got{1, 2, 20, sysCnt}},
		{"off", net.KeepAliveConfig{Idle: 5 * time.Second}, got{0, 20, 20, sysCnt}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := make(chan got, 1)
			h := &funcHandler{open: func(c *Conn) {
				if err := c.SetKeepAliveConfig(tc.cfg); err != nil {
					t.Error(err)
				}
				var g got
				fd := int(c.fd)
				g.on, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE)
				g.idle, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
				g.intvl, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL)
				g.cnt, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT)
				c.Close()
				res <- g
			}}
			// The option's 20 s (idle time and interval) is in place
			// before: a negative field, and "off", leave it.
			_, addr := serve(t, h, Options{Loops: 1, KeepAlive: 20 * time.Second})
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			g := <-res
			if g != tc.want {
				t.Errorf("SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT = %+v; want %+v", g, tc.want)
			}
			c.Read(make([]byte, 1)) // until the server's close
		})
	}
}
