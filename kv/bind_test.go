package kv

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBindAddrs(t *testing.T) {
	got := bindAddrs(" 127.0.0.1  -::1 * -::* localhost ::")
	want := []bindAddr{
		{"127.0.0.1", "tcp4", "127.0.0.1", false},
		{"-::1", "tcp6", "::1", true},
		{"*", "tcp4", "0.0.0.0", false},
		{"-::*", "tcp6", "::", true},
		{"localhost", "tcp4", "localhost", false},
		{"::", "tcp6", "::", false},
	}
	if len(got) != len(want) {
		t.Fatalf("bindAddrs = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("address %d = %+v; want %+v", i, got[i], want[i])
		}
	}
}

// listenBind starts a server on bind's addresses at a free port.
func listenBind(t *testing.T, bind string) (*Server, []net.Addr, error) {
	t.Helper()
	s, err := New(Config{Bind: bind, Port: freePort(t), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	addrs, err := s.ListenBind()
	return s, addrs, err
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Every address of bind is listened on, as Redis listens; a missing
// optional one is skipped, a missing one that is not fails the start and
// leaves nothing listening.
func TestListenBind(t *testing.T) {
	const bind = "127.0.0.1 -::1 127.0.0.3 -192.0.2.1"
	s, addrs, err := listenBind(t, bind)
	if err != nil {
		t.Fatal(err)
	}
	want := 3
	if ln, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		ln.Close()
	} else {
		want = 2 // no IPv6 here: -::1 is skipped too
	}
	if len(addrs) != want {
		t.Fatalf("listening on %v; want %d addresses", addrs, want)
	}
	for _, a := range addrs {
		if a.(*net.TCPAddr).Port != s.cfg.Port {
			t.Errorf("%v: not the configured port %d", a, s.cfg.Port)
		}
		c := goRedis(t, a.String())
		if got, err := c.Ping(context.Background()).Result(); err != nil || got != "PONG" {
			t.Errorf("PING at %v = %q, %v", a, got, err)
		}
	}
	c := goRedis(t, addrs[0].String())
	if got, err := c.ConfigGet(context.Background(), "bind").Result(); err != nil || got["bind"] != bind {
		t.Errorf("CONFIG GET bind = %v, %v; want %q", got, err, bind)
	}

	// A port of 0: the addresses after the first share its port.
	s2, err := New(Config{Bind: "127.0.0.1 127.0.0.2", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Shutdown(context.Background())
	if addrs, err := s2.ListenBind(); err != nil || len(addrs) != 2 || addrs[0].(*net.TCPAddr).Port != addrs[1].(*net.TCPAddr).Port {
		t.Errorf("port 0: listening on %v, %v; want one port for both", addrs, err)
	}

	for _, tc := range []struct {
		bind, err string
		errno     error
	}{
		{bind: "127.0.0.1 192.0.2.1", errno: syscall.EADDRNOTAVAIL}, // not optional
		{bind: "127.0.0.1 127.0.0.1", errno: syscall.EADDRINUSE},
		{bind: "-192.0.2.1", err: `configured to listen nowhere: no address of bind "-192.0.2.1" could be listened on`},
		{bind: "127.0.0.1 -", err: ": no address"}, // not every address
		{bind: strings.Repeat("127.0.0.1 ", 17), err: "too many bind addresses specified (at most 16)"},
	} {
		s, addrs, err := listenBind(t, tc.bind)
		var be *BindError
		switch {
		case err == nil:
			t.Errorf("bind %q: listening on %v; want an error", tc.bind, addrs)
		case tc.errno != nil && (!errors.As(err, &be) || !errors.Is(err, tc.errno)):
			t.Errorf("bind %q: %v; want a BindError of %v", tc.bind, err, tc.errno)
		case tc.errno == nil && !strings.Contains(err.Error(), tc.err):
			t.Errorf("bind %q: %v; want %q", tc.bind, err, tc.err)
		}
		// What it listened on before the failure is closed again.
		if nc, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.cfg.Port))); err == nil {
			nc.Close()
			t.Errorf("bind %q: 127.0.0.1 still accepts after the failure", tc.bind)
		}
	}
}
