package kv

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/redis/go-redis/v9"
)

// TestUnixSocketPort0 serves a Unix socket with port 0, as Redis's
// unixsocket: no TCP listener, a socket file left at the path replaced,
// the new one's permissions unixsocketperm's, its clients named by the
// path and flagged U in CLIENT LIST, as Redis's; CONFIG SET port opens a
// TCP listener and port 0 closes it again; the file goes at shutdown.
func TestUnixSocketPort0(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kv.sock")
	left, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	left.(*net.UnixListener).SetUnlinkOnClose(false)
	left.Close() // a killed server's socket file

	s, err := New(Config{UnixSocket: path, UnixSocketPerm: 0o700, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	shut := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	}
	t.Cleanup(shut)
	addrs, err := s.ListenBind()
	if err != nil || len(addrs) != 1 || addrs[0].Network() != "unix" || addrs[0].String() != path {
		t.Fatalf("ListenBind = %v, %v; want %s alone", addrs, err, path)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket file: %v, %v; want a socket with mode 0700", fi, err)
	}

	c := goRedis(t, path, func(o *redis.Options) { o.Network = "unix"; o.PoolSize = 1 })
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); v != "v" || err != nil {
		t.Errorf("GET = %q, %v; want v", v, err)
	}
	for name, want := range map[string]string{"unixsocket": path, "unixsocketperm": "700", "port": "0"} {
		if got := c.ConfigGet(ctx, name).Val()[name]; got != want {
			t.Errorf("CONFIG GET %s = %q; want %q", name, got, want)
		}
	}
	if err := c.ConfigSet(ctx, "unixsocket", "/tmp/other.sock").Err(); err == nil || !strings.Contains(err.Error(), "can't set immutable config") {
		t.Errorf("CONFIG SET unixsocket: %v; want the immutable config error", err)
	}
	list := c.ClientList(ctx).Val()
	if want := "addr=" + path + ":0 laddr=" + path + ":0 "; !strings.Contains(list, want) || !strings.Contains(list, " flags=U ") {
		t.Errorf("CLIENT LIST = %q; want %q and flags=U", list, want)
	}
	err = c.ConfigSet(ctx, "bind", "127.0.0.1").Err()
	s.bindMu.Lock()
	bound := s.bound
	s.bindMu.Unlock()
	if err != nil || len(bound) != 0 {
		t.Errorf("CONFIG SET bind with port 0: %v, listening on %v; want OK and no TCP listener", err, bound)
	}

	port := strconv.Itoa(testpeer.FreePort(t))
	if err := c.ConfigSet(ctx, "port", port).Err(); err != nil {
		t.Fatalf("CONFIG SET port %s: %v", port, err)
	}
	tcp := goRedis(t, net.JoinHostPort("127.0.0.1", port))
	if err := tcp.Ping(ctx).Err(); err != nil {
		t.Errorf("PING on TCP after CONFIG SET port %s: %v", port, err)
	}
	if err := c.ConfigSet(ctx, "port", "0").Err(); err != nil {
		t.Fatalf("CONFIG SET port 0: %v", err)
	}
	if conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port)); err == nil {
		conn.Close()
		t.Errorf("TCP port %s still listened on after CONFIG SET port 0", port)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("PING on the Unix socket after CONFIG SET port 0: %v", err)
	}

	c.Close()
	shut()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("socket file after Shutdown: %v; want it removed", err)
	}
}

// A Unix socket's client is named as Redis names it: "unix:<path>" in
// what monitors see, "<path>:0" in SLOWLOG and for CLIENT KILL to match.
// Before, monitors and SLOWLOG showed the socket's empty peer address and
// CLIENT KILL ADDR <path>:0 matched no client.
func TestUnixSocketClientNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.sock")
	if _, _, err := listenConfig(t, Config{UnixSocket: path, Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	mon, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	mon.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(mon)
	mon.Write([]byte("MONITOR\r\n"))
	if line, err := br.ReadString('\n'); line != "+OK\r\n" {
		t.Fatalf("MONITOR: %q, %v", line, err)
	}
	c := goRedis(t, path, func(o *redis.Options) { o.Network = "unix"; o.PoolSize = 1 })
	ctx := context.Background()
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "a", "b", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the monitor: %v", err)
		}
		if strings.Contains(line, `"set"`) {
			if want := " [0 unix:" + path + `] "set" "a" "b"`; !strings.Contains(line, want) {
				t.Errorf("monitor line %q; want it to hold %q", line, want)
			}
			break
		}
	}
	if e := c.SlowLogGet(ctx, 1).Val(); len(e) != 1 || e[0].ClientAddr != path+":0" {
		t.Errorf("SLOWLOG GET 1 = %+v; want the client at %s:0", e, path)
	}
	if n, err := c.ClientKillByFilter(ctx, "ADDR", path+":0", "SKIPME", "yes").Result(); n != 1 || err != nil {
		t.Errorf("CLIENT KILL ADDR %s:0 SKIPME yes = %d, %v; want the monitor killed", path, n, err)
	}
}

// TestUnixSocketClientKillAddr: CLIENT KILL finds a Unix socket's
// clients by the addr and laddr CLIENT LIST gives them, the socket's path
// and port 0, as Redis's does, also on a socket that Listen opened rather
// than the unixsocket setting. Before, CLIENT LIST named them so but
// CLIENT KILL looked for an empty address, and killed none.
func TestUnixSocketClientKillAddr(t *testing.T) {
	for _, tc := range []struct {
		name       string
		fromConfig bool // the unixsocket setting's socket, else Listen's
	}{
		{name: "unixsocket", fromConfig: true},
		{name: "Listen", fromConfig: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kv.sock")
			var cfg Config
			if tc.fromConfig {
				cfg.UnixSocket = path
			}
			s, _ := startServer(t, cfg)
			var err error
			if tc.fromConfig {
				_, err = s.ListenBind()
			} else {
				_, err = s.Listen("unix", path)
			}
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			unixClient := func() *redis.Client {
				return goRedis(t, path, func(o *redis.Options) { o.Network = "unix"; o.PoolSize = 1 })
			}
			killer := unixClient()
			for _, by := range []string{"addr", "laddr"} {
				victim := unixClient()
				info, err := victim.ClientInfo(ctx).Result()
				if err != nil || info.Addr != path+":0" || info.LAddr != path+":0" {
					t.Fatalf("CLIENT INFO = %+v, %v; want addr and laddr %s:0", info, err, path)
				}
				if n, err := killer.Do(ctx, "CLIENT", "KILL", by, path+":0").Int(); n != 1 || err != nil {
					t.Errorf("CLIENT KILL %s %s:0 = %d, %v; want 1", by, path, n, err)
				}
			}
		})
	}
}
