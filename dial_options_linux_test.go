//go:build linux

package evloop

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// A wildcard LocalAddr (0.0.0.0 or ::, its port perhaps fixed) suits
// addresses of either family, as net.Dialer takes it: the socket is bound
// to its own family's wildcard.
func TestDialWildcardLocalAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "[::]:0") // dual-stack
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	client, ctx := dialingServer(t)
	for _, tc := range []struct {
		name, addr string
		local      net.Addr
	}{
		{"from 0.0.0.0 to ::1", net.JoinHostPort("::1", port), &net.TCPAddr{IP: net.IPv4zero}},
		{"from :: to 127.0.0.1", net.JoinHostPort("127.0.0.1", port), &net.TCPAddr{IP: net.IPv6unspecified}},
	} {
		nd := net.Dialer{LocalAddr: tc.local, Control: func(string, string, syscall.RawConn) error { return nil }}
		nc, nerr := nd.DialContext(ctx, "tcp", tc.addr)
		if nerr != nil {
			t.Fatalf("%s: net.Dialer: %v", tc.name, nerr)
		}
		nc.Close()
		c, err := client.DialWith(ctx, "tcp", tc.addr, DialOptions{LocalAddr: tc.local})
		if err != nil {
			t.Errorf("%s: DialWith: %v; net.Dialer connects", tc.name, err)
			continue
		}
		c.Submit(func() { c.Close() }) // the loop's to call
	}
}
