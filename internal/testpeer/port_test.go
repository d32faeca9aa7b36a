package testpeer

import (
	"net"
	"runtime"
	"strconv"
	"testing"
)

// FreePort's ports lie outside the range the kernel hands out and can be
// listened on at every host asked for.
func TestFreePort(t *testing.T) {
	lo, hi := portRange()
	if hi <= lo {
		t.Skip("no stretch of ports outside the ephemeral range here")
	}
	hosts := []string{"127.0.0.1"}
	if runtime.GOOS == "linux" {
		hosts = append(hosts, "127.0.0.2") // the rest of 127/8 is the loopback's there
	}
	for range 20 {
		port := FreePort(t, hosts...)
		if port < lo || port > hi {
			t.Fatalf("FreePort = %d, outside %d–%d", port, lo, hi)
		}
		for _, h := range hosts {
			ln, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(port)))
			if err != nil {
				t.Fatalf("listen on FreePort's %d at %s: %v", port, h, err)
			}
			ln.Close()
		}
	}
}
