//go:build linux

package load

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// echoServer serves on a loopback port; mangle may change what is echoed.
func echoServer(t *testing.T, mangle func([]byte)) netip.AddrPort {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						mangle(buf[:n])
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

func TestGenPingPongAndPipelined(t *testing.T) {
	srv := echoServer(t, func([]byte) {})
	for _, mode := range []Mode{PingPong, Pipelined} {
		g, err := Dial(Config{Server: srv, Conns: 8, Size: 100, Mode: mode, Depth: 4, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		r := g.Measure(20*time.Millisecond, 5*time.Second, 500, nil, nil)
		if r.Errors != 0 || r.Msgs < 500 || r.P50us <= 0 || r.P99us < r.P50us {
			t.Fatalf("%v: %+v", mode, r)
		}
		if r.WindowS > 4 {
			t.Fatalf("%v: the message limit did not end the window (%.1fs)", mode, r.WindowS)
		}
	}
}

func TestGenIdle(t *testing.T) {
	srv := echoServer(t, func([]byte) {})
	g, err := Dial(Config{Server: srv, Conns: 20, Size: 64, Mode: Idle})
	if err != nil {
		t.Fatal(err)
	}
	if r := g.Close(); r.Errors != 0 || r.Msgs != 20 {
		t.Fatalf("%+v", r)
	}
}

func TestGenReportsWrongEcho(t *testing.T) {
	n := 0
	srv := echoServer(t, func(p []byte) {
		// every connection's first message comes back right, later ones not
		if n++; n > 4 {
			p[len(p)-1] ^= 0xff
		}
	})
	g, err := Dial(Config{Server: srv, Conns: 4, Size: 64, Mode: PingPong, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := g.Measure(0, 300*time.Millisecond, 0, nil, nil)
	if r.Errors == 0 || !strings.Contains(r.FirstError, "differs") {
		t.Fatalf("a corrupted echo was not reported: %+v", r)
	}
}

func TestGenRefusesNonLoopback(t *testing.T) {
	if _, err := Dial(Config{Server: netip.MustParseAddrPort("192.0.2.1:7"), Conns: 1, Size: 1}); err == nil {
		t.Fatal("a non-loopback server was accepted")
	}
	if _, err := Dial(Config{Server: netip.MustParseAddrPort("127.0.0.1:7"), Conns: 1, Size: 1, Src: netip.MustParseAddr("10.0.0.1")}); err == nil {
		t.Fatal("a non-loopback source was accepted")
	}
}

func TestGenRefusesTooManyDescriptors(t *testing.T) {
	if _, err := Dial(Config{Server: netip.MustParseAddrPort("127.0.0.1:7"), Conns: 1 << 22, Size: 1, PerSrc: 1 << 22}); err == nil || !strings.Contains(err.Error(), "several loadgen processes") {
		t.Fatalf("4M connections in one process: %v", err)
	}
}

func TestSourceAddresses(t *testing.T) {
	c := Config{Server: netip.MustParseAddrPort("127.0.0.1:7"), Conns: 50000, Size: 1, PerSrc: 20000, Src: netip.MustParseAddr("127.0.0.255")}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]string{0: "127.0.0.255", 19999: "127.0.0.255", 20000: "127.0.1.0", 49999: "127.0.1.1"} {
		if got := c.srcFor(i).String(); got != want {
			t.Errorf("connection %d from %s, want %s", i, got, want)
		}
	}
	c.Src = netip.MustParseAddr("127.255.255.255")
	if err := c.Check(); err == nil {
		t.Error("source addresses past 127.255.255.255 accepted")
	}
}
