package kv

import (
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/resp"
)

// fromAddr sends PING to addr from the local address src and returns all
// the server sent before it closed the connection or, after a reply, went
// quiet.
func fromAddr(t *testing.T, src, addr string) string {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, src, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	// A whole reply, however long a loaded machine takes to send it; then
	// whatever follows it until the server closes or is quiet 300 ms.
	var b []byte
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		n, err := c.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			return string(b) // EOF, a reset, or no reply
		}
		if _, _, err := resp.Parse(b); err == nil {
			break
		}
	}
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	rest, _ := io.ReadAll(c) // EOF, a reset, or the deadline
	return string(b) + string(rest)
}

// TestProtectedMode: without a password, a client at an address other
// than 127.0.0.1 or ::1 (here 127.0.0.2) gets Redis 7.0's DENIED, word for
// word, and is disconnected and counted in rejected_connections; with
// protected-mode no, or a password, it is served.
func TestProtectedMode(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{})
	raddr := "" // Redis, when it is installed, must answer the same
	if _, err := exec.LookPath("redis-server"); err == nil {
		raddr = redisServer(t)
	}
	check := func(what, src, want string) {
		t.Helper()
		if got := fromAddr(t, src, addr); got != want {
			t.Errorf("%s from %s: %.80q; want %.80q", what, src, got, want)
		}
		if raddr == "" {
			return
		}
		if got := fromAddr(t, src, raddr); got != want {
			t.Errorf("Redis, %s from %s: %.80q; want %.80q", what, src, got, want)
		}
	}
	check("protected", "127.0.0.2", deniedProtected)
	check("protected", "127.0.0.1", "+PONG\r\n")
	c := dialRaw(t, addr)
	if got := c.do("INFO", "stats"); !strings.Contains(got, "rejected_connections:1\r\n") {
		t.Errorf("INFO stats after a denial: %s", got)
	}
	var rc *rawConn
	if raddr != "" {
		rc = dialRaw(t, raddr)
	}
	both := func(args ...string) {
		t.Helper()
		got := c.do(args...)
		if rc != nil {
			if want := rc.do(args...); got != want {
				t.Errorf("%q: evkv replied %q; Redis %q", args, got, want)
			}
		}
	}
	both("CONFIG", "SET", "protected-mode", "maybe")
	both("CONFIG", "SET", "protected-mode", "no")
	both("CONFIG", "GET", "protected-mode")
	check("not protected", "127.0.0.2", "+PONG\r\n")
	both("CONFIG", "SET", "protected-mode", "yes")
	both("CONFIG", "SET", "requirepass", "pw")
	check("protected with a password", "127.0.0.2", "-NOAUTH Authentication required.\r\n")
}
