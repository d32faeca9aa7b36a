//go:build unix

package evloop

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Dial's failures are what net.Dialer's are: a *net.OpError whose Op is
// "dial", with the network and the address dialed, wrapping the system's
// error (errors.Is finds its errno), where a refused connect was a bare
// "connect: connection refused" that named no address.
func TestDialErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	missing := filepath.Join(t.TempDir(), "missing.sock")
	long := "/" + strings.Repeat("x", 200)
	client, err := NewServer(BaseHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cases := []struct {
		name          string
		network, addr string
		wantAddr      string // "" for none
		errno         syscall.Errno
	}{
		{"refused", "tcp", refused, refused, syscall.ECONNREFUSED},
		{"unix, no socket file", "unix", missing, missing, syscall.ENOENT},
		{"unix, path too long", "unix", long, long, syscall.EINVAL},
		{"unknown network", "udp", "127.0.0.1:1", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.Dial(context.Background(), tc.network, tc.addr)
			var oe *net.OpError
			if c != nil || !errors.As(err, &oe) {
				t.Fatalf("Dial(%q, %q) = %v, %v (%T); want a *net.OpError", tc.network, tc.addr, c, err, err)
			}
			gotAddr := ""
			if oe.Addr != nil {
				gotAddr = oe.Addr.String()
			}
			if oe.Op != "dial" || oe.Net != tc.network || gotAddr != tc.wantAddr {
				t.Errorf("Dial's error: Op %q, Net %q, Addr %q; want dial, %q, %q", oe.Op, oe.Net, gotAddr, tc.network, tc.wantAddr)
			}
			if tc.errno != 0 && !errors.Is(err, tc.errno) {
				t.Errorf("Dial = %v; want errors.Is %v", err, tc.errno)
			}
		})
	}
}
