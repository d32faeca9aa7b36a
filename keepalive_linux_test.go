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
