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

	"github.com/evloop/evloop/internal/testpeer"
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
	return listenConfig(t, Config{Bind: bind, Port: testpeer.FreePort(t), Logger: quietLogger()})
}

// listenConfig starts a server of cfg, shut down when the test ends, and
// returns what ListenBind does.
func listenConfig(t *testing.T, cfg Config) (*Server, []net.Addr, error) {
	t.Helper()
	s, err := New(cfg)
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

// CONFIG SET bind and port move the listeners, as Redis's do: the old
// ones close, connections stay, a pipelined command after it is answered
// after it; addresses that cannot all be listened on leave the old ones
// (and the other parameters set with them) as they were.
func TestConfigSetBind(t *testing.T) {
	_, addrs, err := listenConfig(t, Config{Bind: "127.0.0.1", Port: testpeer.FreePort(t, "127.0.0.1", "127.0.0.2"), Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(addrs[0].(*net.TCPAddr).Port)
	accepts := func(host, port string) bool {
		nc, err := net.Dial("tcp", net.JoinHostPort(host, port))
		if err == nil {
			nc.Close()
		}
		return err == nil
	}
	rc := dialRaw(t, addrs[0].String())
	// A subscriber's change, a message published after it: the reply
	// comes first, in RESP3 as in RESP2.
	sub := dialRaw(t, addrs[0].String())
	sub.do("HELLO", "3")
	sub.do("SUBSCRIBE", "ch")
	sub.send("CONFIG", "SET", "bind", "127.0.0.1")
	rc.do("PUBLISH", "ch", "m")
	if got := sub.read(); got != "+OK\r\n" {
		t.Errorf("a subscriber's CONFIG SET bind answered %q before its OK", got)
	}
	rc.c.Write([]byte("*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$4\r\nbind\r\n$9\r\n127.0.0.2\r\n*1\r\n$4\r\nPING\r\n"))
	if got := rc.read() + rc.read(); got != "+OK\r\n+PONG\r\n" {
		t.Fatalf("CONFIG SET bind, PING = %q", got)
	}
	if accepts("127.0.0.1", port) || !accepts("127.0.0.2", port) {
		t.Errorf("after CONFIG SET bind 127.0.0.2: 127.0.0.1 accepts %v, 127.0.0.2 %v", accepts("127.0.0.1", port), accepts("127.0.0.2", port))
	}
	for _, tc := range []struct{ args, want string }{
		{"bind|127.0.0.1 192.0.2.1", "-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.\r\n"},
		{"slowlog-max-len|5|bind|192.0.2.1", "-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.\r\n"},
		{"port|0", "-ERR CONFIG SET failed (possibly related to argument 'port') - evkv has no Unix socket (unixsocket) or TLS port (tls-port): port 0 would leave it unreachable\r\n"},
		{"bind|" + strings.Repeat("127.0.0.1 ", 17), "-ERR CONFIG SET failed (possibly related to argument 'bind') - Too many bind addresses specified.\r\n"},
	} {
		if got := rc.do(append([]string{"CONFIG", "SET"}, strings.Split(tc.args, "|")...)...); got != tc.want {
			t.Errorf("CONFIG SET %s = %q; want %q", tc.args, got, tc.want)
		}
	}
	if !accepts("127.0.0.2", port) || accepts("127.0.0.1", port) {
		t.Error("after failed changes, the listeners are not the old ones")
	}
	if got := rc.do("CONFIG", "GET", "slowlog-max-len"); !strings.Contains(got, "\r\n128\r\n") {
		t.Errorf("slowlog-max-len after a failed CONFIG SET with bind = %q; want 128 restored", got)
	}
	port2 := strconv.Itoa(testpeer.FreePort(t, "127.0.0.1", "127.0.0.2"))
	if got := rc.do("CONFIG", "SET", "port", port2); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET port = %q", got)
	}
	if accepts("127.0.0.2", port) || !accepts("127.0.0.2", port2) {
		t.Error("CONFIG SET port: not listening on the new port alone")
	}
	if got := rc.do("CONFIG", "GET", "port"); !strings.Contains(got, port2) {
		t.Errorf("CONFIG GET port = %q", got)
	}
	rc.do("MULTI")
	rc.do("CONFIG", "SET", "bind", "127.0.0.1")
	if got := rc.do("EXEC"); got != "*1\r\n+OK\r\n" {
		t.Errorf("CONFIG SET bind in a transaction = %q", got)
	}
	if accepts("127.0.0.2", port2) || !accepts("127.0.0.1", port2) {
		t.Error("CONFIG SET bind in a transaction: not listening on the new address alone")
	}
	if got := rc.do("PING"); got != "+PONG\r\n" {
		t.Errorf("the connection after it all: PING = %q", got)
	}
}
