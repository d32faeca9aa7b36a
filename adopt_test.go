//go:build unix

package evloop

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Adopt and Serve take stream sockets only: a UDP or Unix datagram conn,
// a TLS conn and a Unix seqpacket listener are refused with ErrUnsupported
// and left open, where the datagram sockets were taken over and served as
// streams (OnOpen ran; a datagram of zero bytes read as the peer's EOF).
func TestAdoptRefusesWhatIsNotAStream(t *testing.T) {
	var opens atomic.Int32
	srv, err := NewServer(&funcHandler{open: func(*Conn) { opens.Add(1) }}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()

	udp, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	gram, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "gram"), Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer gram.Close()
	tcpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcpLn.Close()
	raw, err := net.Dial("tcp", tcpLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	tlsConn := tls.Client(raw, &tls.Config{InsecureSkipVerify: true})
	for _, tc := range []struct {
		name string
		c    net.Conn
	}{
		{"udp", udp},
		{"unixgram", gram},
		{"tls", tlsConn},
	} {
		if err := srv.Adopt(tc.c); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Adopt of a %s conn = %v; want ErrUnsupported", tc.name, err)
		}
	}
	if _, err := udp.Write([]byte("x")); err != nil {
		t.Errorf("the refused UDP conn was closed: Write = %v", err)
	}

	seq, err := net.Listen("unixpacket", filepath.Join(dir, "seq"))
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	if err := srv.Serve(seq); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Serve of a unixpacket listener = %v; want ErrUnsupported", err)
	}
	// A task on the loop runs after the adoptions it would have opened.
	done := make(chan struct{})
	srv.Submit(0, func() { close(done) })
	<-done
	if n := opens.Load(); n != 0 {
		t.Fatalf("OnOpen ran %d times for refused conns", n)
	}
}

// Adopt while a Shutdown waits for connections to close fails with
// ErrClosed, as Dial does, where it returned nil and the loop closed the
// conn without OnOpen.
func TestAdoptDuringShutdown(t *testing.T) {
	var opens atomic.Int32
	srv, err := Listen("tcp", "127.0.0.1:0", &funcHandler{open: func(*Conn) { opens.Add(1) }}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// A client that never sends its EOF keeps the Shutdown waiting
	// (lingerTimeout) for its connection's close.
	client := dial(t, srv.Addrs()[0].String())
	waitFor(t, "the connection to open", func() bool { return opens.Load() == 1 })
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	waitFor(t, "Shutdown to begin", srv.isShutdown)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := srv.Adopt(nc); !errors.Is(err, ErrClosed) {
		t.Errorf("Adopt during Shutdown = %v; want ErrClosed", err)
	}
	client.Close()
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if n := opens.Load(); n != 1 {
		t.Fatalf("OnOpen ran %d times; want once, for the served connection", n)
	}
}

// TestAdoptRacingShutdown: of Adopts made as Shutdown begins, each either
// places its conn, whose OnOpen and OnClose then run before Shutdown
// returns, or fails with ErrClosed and leaves the conn open; no descriptor
// is left behind. An Adopt that passed its check just before Shutdown began
// returned nil, and the loop then closed the conn without OnOpen.
func TestAdoptRacingShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fds := -1
	if runtime.GOOS == "linux" {
		fds = openFDs(t)
	}
	const rounds, conns = 30, 32
	for round := range rounds {
		var opens, closes atomic.Int32
		srv, err := NewServer(&funcHandler{
			open:  func(*Conn) { opens.Add(1) },
			close: func(*Conn, error) { closes.Add(1) },
		}, Options{Loops: 2, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		var clients, peers []net.Conn
		for range conns {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			p, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			clients, peers = append(clients, c), append(peers, p)
		}
		var adopted atomic.Int32
		refused := make([]bool, conns)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Go(func() {
				<-start
				switch err := srv.Adopt(c); {
				case err == nil:
					adopted.Add(1)
				case errors.Is(err, ErrClosed):
					refused[i] = true
				default:
					t.Errorf("Adopt = %v; want nil or ErrClosed", err)
				}
			})
		}
		close(start)
		srv.Close()
		wg.Wait()
		if a, o, c := adopted.Load(), opens.Load(), closes.Load(); o != a || c != a {
			t.Fatalf("round %d: %d Adopts returned nil; OnOpen ran %d times, OnClose %d; want %d each", round, a, o, c, a)
		}
		for i, c := range clients {
			if refused[i] {
				if _, err := c.Write([]byte("x")); err != nil {
					t.Errorf("round %d: a conn Adopt refused was closed: Write = %v", round, err)
				}
			}
			c.Close()
		}
		for _, p := range peers {
			p.Close()
		}
	}
	if fds >= 0 {
		if n := openFDs(t); n != fds {
			t.Errorf("%d descriptors open after the rounds; want %d, as before", n, fds)
		}
	}
}
