//go:build unix

package evloop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoHandler writes back what it reads and reports closes.
type echoHandler struct {
	BaseHandler
	mu     sync.Mutex
	closes map[*Conn]int
	errs   []error
	opens  int
}

func (h *echoHandler) OnOpen(c *Conn) {
	h.mu.Lock()
	h.opens++
	h.mu.Unlock()
}

func (h *echoHandler) OnData(c *Conn) {
	b, _ := c.Next(-1)
	c.Write(b)
}

func (h *echoHandler) OnClose(c *Conn, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closes == nil {
		h.closes = make(map[*Conn]int)
	}
	h.closes[c]++
	h.errs = append(h.errs, err)
}

func (h *echoHandler) closeCounts() (conns, maxPerConn int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.closes {
		maxPerConn = max(maxPerConn, n)
	}
	return len(h.closes), maxPerConn
}

// syncBuffer is a log sink safe for loop goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// dialingServer returns a Server of one loop and no listener, closed when
// the test ends, for a test's dials, and a context of 5 seconds for them.
func dialingServer(t *testing.T) (*Server, context.Context) {
	t.Helper()
	client, err := NewServer(&funcHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return client, ctx
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// serve starts a server for h on a loopback port and shuts it down when
// the test ends.
func serve(t *testing.T, h Handler, opts Options) (*Server, string) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	srv, err := Listen("tcp", "127.0.0.1:0", h, opts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return srv, srv.Addrs()[0].String()
}

func dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes msg and reads as many bytes back, writing from a
// goroutine so that a large message cannot deadlock against its echo.
func roundTrip(c net.Conn, msg []byte) ([]byte, error) {
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(msg)
		errc <- err
	}()
	got := make([]byte, len(msg))
	_, rerr := io.ReadFull(c, got)
	if werr := <-errc; werr != nil {
		return got, werr
	}
	return got, rerr
}

func TestEchoOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"default", Options{}},
		{"one loop", Options{Loops: 1}},
		{"four loops round-robin", Options{Loops: 4}},
		{"least connections", Options{Loops: 3, LoadBalancing: LeastConnections}},
		{"source hash", Options{Loops: 3, LoadBalancing: SourceAddrHash}},
		{"reuseport", Options{Loops: 3, LoadBalancing: ReusePort}},
		{"locked threads", Options{Loops: 2, LockOSThread: true}},
		{"blocking poll", Options{Loops: 2, BlockingPoll: true}},
		{"small buffers and marks", Options{Loops: 2, SendBuffer: 64 << 10, RecvBuffer: 64 << 10, HighWater: 8192, LowWater: 1024}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, addr := serve(t, &echoHandler{}, tc.opts)
			var wg sync.WaitGroup
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := dial(t, addr)
					for _, size := range []int{1, 100, 64 << 10, 1 << 20} {
						msg := bytes.Repeat([]byte{byte(i)}, size)
						got, err := roundTrip(c, msg)
						if err != nil || !bytes.Equal(got, msg) {
							t.Errorf("echo of %d bytes: %v (equal %v)", size, err, bytes.Equal(got, msg))
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

// TestUnixSocket serves Unix sockets: one from Listen, one from
// ListenUnix, whose file has the permissions asked for and is removed
// when the listener closes.
func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	srv, err := Listen("unix", dir+"/s", &echoHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	addr, err := srv.ListenUnix(dir+"/perm", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dir + "/perm"); err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ListenUnix's file: %v, %v; want a socket with mode 0600", fi.Mode(), err)
	}
	for _, path := range []string{dir + "/s", dir + "/perm"} {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := roundTrip(c, []byte("over unix")); err != nil || string(got) != "over unix" {
			t.Fatalf("%s: echo = %q, %v", path, got, err)
		}
		c.Close()
	}
	if err := srv.Unlisten(addr); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir + "/perm"); !os.IsNotExist(err) {
		t.Errorf("ListenUnix's file after Unlisten: %v", err)
	}
	if _, err := srv.ListenUnix(dir+"/no/such/dir", 0o600); err == nil {
		t.Error("ListenUnix in a missing directory: no error")
	}
}

// TestUnixSocketReplaced closes a Unix listener whose path another
// server took meanwhile (it removed the file and listened there, as a
// restart's new process does): the other's file stays, and its clients
// connect.
func TestUnixSocketReplaced(t *testing.T) {
	path := t.TempDir() + "/s"
	srv, err := Listen("unix", path, &echoHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	other, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	srv.Shutdown(context.Background())
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the other server's socket after the first's Shutdown: %v", err)
	}
	c.Close()
}

func TestListenErrors(t *testing.T) {
	_, addr := serve(t, &echoHandler{}, Options{Loops: 1})
	tests := []struct{ network, addr string }{
		{"tcp", "127.0.0.1:notaport"},
		{"tcp", "256.0.0.1:0"},
		{"udp", "127.0.0.1:0"},
		{"tcp", addr}, // in use
		{"unix", "/nonexistent/dir/sock"},
	}
	for _, tc := range tests {
		srv, err := Listen(tc.network, tc.addr, &echoHandler{}, Options{Loops: 1, Logger: quietLogger()})
		if err == nil {
			srv.Close()
			t.Errorf("Listen(%q, %q) = nil error", tc.network, tc.addr)
		}
	}
	if _, err := NewServer(nil, Options{}); err == nil {
		t.Error("NewServer(nil handler) = nil error")
	}
}

// StopAccepting closes the listeners; the connections go on until
// Shutdown.
func TestStopAccepting(t *testing.T) {
	srv, err := Listen("tcp", "127.0.0.1:0", &echoHandler{}, Options{Loops: 2, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := srv.Addrs()[0].String()
	c := dial(t, addr)
	srv.StopAccepting()
	if nc, err := net.Dial("tcp", addr); err == nil {
		nc.Close()
		t.Fatal("a connection was accepted after StopAccepting")
	}
	if got, err := roundTrip(c, []byte("still here")); err != nil || string(got) != "still here" {
		t.Fatalf("echo after StopAccepting = %q, %v", got, err)
	}
	if _, err := srv.Listen("tcp", "127.0.0.1:0"); !errors.Is(err, ErrClosed) {
		t.Errorf("Listen after StopAccepting = %v; want ErrClosed", err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
		t.Fatalf("client after Shutdown: %q, %v; want EOF", b, err)
	}
}

// Unlisten closes one listener; the others, and the connections it
// accepted, go on.
func TestUnlisten(t *testing.T) {
	for _, lb := range []LoadBalancing{RoundRobin, ReusePort} {
		srv, err := Listen("tcp", "127.0.0.1:0", &echoHandler{}, Options{Loops: 2, LoadBalancing: lb, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		first := srv.Addrs()[0]
		second, err := srv.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		sock := filepath.Join(t.TempDir(), "s")
		unixAddr, err := srv.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		c := dial(t, first.String())
		if err := srv.Unlisten(first); err != nil {
			t.Fatalf("%v: Unlisten = %v", lb, err)
		}
		if nc, err := net.Dial("tcp", first.String()); err == nil {
			nc.Close()
			t.Fatalf("%v: a connection was accepted after Unlisten", lb)
		}
		if got, err := roundTrip(c, []byte("still here")); err != nil || string(got) != "still here" {
			t.Fatalf("%v: echo after Unlisten = %q, %v", lb, got, err)
		}
		if got, err := roundTrip(dial(t, second.String()), []byte("other")); err != nil || string(got) != "other" {
			t.Fatalf("%v: echo on the other listener = %q, %v", lb, got, err)
		}
		if err := srv.Unlisten(first); !errors.Is(err, ErrNotListening) {
			t.Errorf("%v: second Unlisten = %v; want ErrNotListening", lb, err)
		}
		if err := srv.Unlisten(unixAddr); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: the socket file after Unlisten: %v", lb, err)
		}
		if got := srv.Addrs(); len(got) == 0 || slices.ContainsFunc(got, func(a net.Addr) bool { return a.String() == first.String() }) {
			t.Errorf("%v: Addrs after Unlisten = %v", lb, got)
		}
		srv.Close()
	}
}

// ListenLoop and UnlistenLoop work from a loop's own goroutine, where
// Listen and Unlisten would wait for it forever.
func TestListenLoop(t *testing.T) {
	srv, err := Listen("tcp", "127.0.0.1:0", &echoHandler{}, Options{Loops: 2, LoadBalancing: ReusePort, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	first := srv.Addrs()[0]
	onLoop := func(fn func()) {
		done := make(chan struct{})
		srv.Submit(0, func() { fn(); close(done) })
		<-done
	}
	var added net.Addr
	onLoop(func() {
		added, err = srv.ListenLoop(0, "tcp", "127.0.0.1:0")
		if err == nil {
			err = srv.UnlistenLoop(0, first) // on both loops
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := roundTrip(dial(t, added.String()), []byte("new")); err != nil || string(got) != "new" {
		t.Fatalf("echo on ListenLoop's listener = %q, %v", got, err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		nc, err := net.Dial("tcp", first.String())
		if err != nil {
			break
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("the first address still accepts after UnlistenLoop")
		}
	}
	onLoop(func() { err = srv.UnlistenLoop(0, first) })
	if !errors.Is(err, ErrNotListening) {
		t.Errorf("UnlistenLoop again = %v; want ErrNotListening", err)
	}
	// A listener of loop 0 is closed when UnlistenLoop(0) returns: its
	// address can be listened on again at once.
	onLoop(func() {
		if err = srv.UnlistenLoop(0, added); err == nil {
			_, err = srv.ListenLoop(0, "tcp", added.String())
		}
	})
	if err != nil {
		t.Errorf("listening again on the address UnlistenLoop closed: %v", err)
	}
}

// Unlisten racing Shutdown or StopAccepting: every listener ends closed,
// and nothing panics.
func TestUnlistenDuringShutdown(t *testing.T) {
	for round := range 20 {
		srv, err := Listen("tcp", "127.0.0.1:0", &echoHandler{}, Options{Loops: 2, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if _, err := srv.Listen("tcp", "127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
		}
		addrs := srv.Addrs()
		var wg sync.WaitGroup
		wg.Go(func() {
			for _, a := range addrs {
				srv.Unlisten(a)
			}
		})
		if round%2 == 0 {
			srv.StopAccepting()
		}
		srv.Shutdown(context.Background())
		wg.Wait()
		for _, a := range addrs {
			if nc, err := net.Dial("tcp", a.String()); err == nil {
				nc.Close()
				t.Fatalf("round %d: %v still accepts", round, a)
			}
		}
	}
}

func TestShutdownTwiceAndAfter(t *testing.T) {
	srv, err := Listen("tcp", "127.0.0.1:0", &echoHandler{}, Options{Loops: 2, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown = %v", err)
	}
	if _, err := srv.Listen("tcp", "127.0.0.1:0"); !errors.Is(err, ErrClosed) {
		t.Errorf("Listen after Shutdown = %v; want ErrClosed", err)
	}
	if _, err := srv.Dial(context.Background(), "tcp", "127.0.0.1:1"); err == nil {
		t.Error("Dial after Shutdown = nil error")
	}
}

// TestShutdownWaitsForConnAcceptedAfterLastClose: Shutdown returns once
// every OnClose has run. Its last connection gone (reset by the peer)
// before its listener closed, and a client accepted in between, it
// counted the server drained at the reset, stopped the loop with the new
// connection still closing, and that one's OnClose never ran.
func TestShutdownWaitsForConnAcceptedAfterLastClose(t *testing.T) {
	var opened, closed atomic.Int32
	opens := make(chan struct{}, 2)
	h := &funcHandler{
		open:  func(*Conn) { opened.Add(1); opens <- struct{}{} },
		close: func(*Conn, error) { closed.Add(1) },
	}
	srv, addr := serve(t, h, Options{Loops: 1})
	first := dial(t, addr)
	<-opens
	// Hold the loop, so that Shutdown's closing of the listener waits.
	release := make(chan struct{})
	held := make(chan struct{})
	srv.Submit(0, func() { close(held); <-release })
	<-held
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shut <- srv.Shutdown(ctx)
	}()
	for deadline := time.Now().Add(5 * time.Second); !srv.isShutdown(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Shutdown did not begin")
		}
	}
	// Ready for the loop's next wait, in this order: the reset of the
	// last connection, then a new client in the listener's backlog.
	first.(*net.TCPConn).SetLinger(0)
	first.Close()
	second := dial(t, addr)
	close(release)
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if o, c := opened.Load(), closed.Load(); o != c {
		t.Fatalf("after Shutdown: OnOpen ran %d times, OnClose %d; want as many", o, c)
	}
	second.Close()
}

// TestUnlistenLoopInOnOpen: a listener that UnlistenLoop closes in the
// OnOpen of a connection it just accepted accepts nothing more, where its
// accept batch went on with the closed fd: it logged the closing as the
// listener's failure, and accepted from whatever socket took the fd's
// number meanwhile (here another listener of the process), stealing that
// socket's client.
func TestUnlistenLoopInOnOpen(t *testing.T) {
	var logs syncBuffer
	var opened atomic.Int32
	others := make(chan []io.Closer, 1)
	h := &funcHandler{open: func(c *Conn) {
		if opened.Add(1) > 1 {
			return
		}
		if err := c.Server().UnlistenLoop(0, c.LocalAddr()); err != nil {
			t.Errorf("UnlistenLoop: %v", err)
		}
		// The process listens elsewhere: its socket takes the lowest
		// free fd, the number the listener had, and a client connects.
		other, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Error(err)
			others <- nil
			return
		}
		peer, err := net.Dial("tcp", other.Addr().String())
		if err != nil {
			t.Error(err)
			others <- []io.Closer{other}
			return
		}
		others <- []io.Closer{other, peer}
	}}
	srv, addr := serve(t, h, Options{Loops: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	dial(t, addr)
	for _, c := range <-others {
		defer c.Close()
	}
	done := make(chan struct{})
	srv.Submit(0, func() { close(done) }) // after the accept batch
	<-done
	if n := opened.Load(); n != 1 {
		t.Errorf("OnOpen ran %d times after UnlistenLoop closed the listener; want 1", n)
	}
	if s := logs.String(); strings.Contains(s, "accept failed") {
		t.Errorf("UnlistenLoop's close logged as a failure:\n%s", s)
	}
}
