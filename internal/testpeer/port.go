package testpeer

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// given holds the ports FreePort has returned in this process: a test
// running in parallel with the one given a port must not be given it
// too before the program it was for has bound it.
var given struct {
	sync.Mutex
	ports map[int]bool
}

// FreePort returns a TCP port free at each of hosts (127.0.0.1 if none),
// for a program the test starts to listen on.
//
// The port lies below the system's ephemeral range. A port taken with
// Listen(":0") and closed again is free for the kernel to hand out to
// the next bind to port 0 or connect anywhere on the machine, and the
// tests of other packages, run at the same time, make thousands of
// those; a port outside that range goes only to a bind that names it.
func FreePort(t testing.TB, hosts ...string) int {
	t.Helper()
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1"}
	}
	lo, hi := portRange()
	for range 1000 {
		port := 0 // the kernel's choice, if there is no range to pick from
		if hi > lo {
			port = lo + rand.IntN(hi-lo+1)
		}
		if p, ok := listenAll(hosts, port); ok && take(p) {
			return p
		}
	}
	t.Fatalf("no port free at %v", hosts)
	return 0
}

// take reports whether port was not given before, and marks it given.
func take(port int) bool {
	given.Lock()
	defer given.Unlock()
	if given.ports[port] {
		return false
	}
	if given.ports == nil {
		given.ports = make(map[int]bool)
	}
	given.ports[port] = true
	return true
}

// FreeAddr returns "127.0.0.1:port" for a port of FreePort's.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}

// listenAll reports whether port (0: one the kernel picks at the first
// host) can be listened on at every host, and which it is.
func listenAll(hosts []string, port int) (int, bool) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for _, h := range hosts {
		ln, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(port)))
		if err != nil {
			return 0, false
		}
		lns = append(lns, ln)
		port = ln.Addr().(*net.TCPAddr).Port
	}
	return port, true
}

// portRange returns the ports FreePort picks from: the widest stretch of
// at least 1,000 ports outside the system's ephemeral range, or 0, 0.
func portRange() (lo, hi int) {
	// Where the system does not say, FreeBSD's range (10000–65535), the
	// widest of the BSDs' and macOS's.
	el, eh := 10000, 65535
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			l, err1 := strconv.Atoi(f[0])
			h, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && l <= h {
				el, eh = l, h
			}
		}
	}
	below, above := el-1-1024, 65535-(eh+1)
	switch {
	case below >= 1000 && below >= above:
		return 1024, el - 1
	case above >= 1000:
		return eh + 1, 65535
	}
	return 0, 0
}
