package ws_test

import (
	"bufio"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/ws"
	"github.com/gorilla/websocket"
)

// startServer runs an http1 server with h at /fast and /std, shut down
// when the test ends, and returns it with its address.
func startServer(t *testing.T, h ws.Handler, o *ws.Options) (*http1.Server, string) {
	t.Helper()
	return startServerEngine(t, h, o, evloop.Options{})
}

// startServerEngine is startServer with the server's engine options.
func startServerEngine(t *testing.T, h ws.Handler, o *ws.Options, eng evloop.Options) (*http1.Server, string) {
	t.Helper()
	return startServerWith(t, h, o, eng, nil)
}

// startServerWith is startServerEngine over HTTPS if config is not nil.
func startServerWith(t *testing.T, h ws.Handler, o *ws.Options, eng evloop.Options, config *tls.Config) (*http1.Server, string) {
	t.Helper()
	srv := &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Engine: eng, TLSConfig: config}
	srv.HandleFastFunc("GET /fast", func(w *http1.Response, r *http1.Request) {
		ws.Upgrade(w, r, h, o)
	})
	srv.HandleFunc("GET /std", func(w http.ResponseWriter, r *http.Request) {
		ws.UpgradeHTTP(w, r, h, o)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	start := srv.Start
	if config != nil {
		start = func(ln net.Listener) error { return srv.StartTLS(ln, "", "") }
	}
	if err := start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv, ln.Addr().String()
}

// Server.Shutdown sends every WebSocket 1001 and waits for the close
// handshakes: gorilla's and this package's clients answer, and a client
// that never reads is closed after CloseTimeout, 2 s, within which the
// others answer on a loaded machine too.
func TestServerShutdownGoingAway(t *testing.T) {
	const closeTimeout = 2 * time.Second
	e := &echo{}
	srv, addr := startServer(t, e, &ws.Options{CloseTimeout: closeTimeout})

	g := dialGorilla(t, "ws://"+addr+"/fast", nil)
	gorillaDone := make(chan error, 1)
	go func() {
		for {
			if _, _, err := g.ReadMessage(); err != nil {
				gorillaDone <- err
				return
			}
		}
	}()
	r := newRecorder()
	mine := dial(t, newDialer(t), "ws://"+addr+"/std", r, nil)
	mine.Send(ws.Text, []byte("before"))
	if m := r.message(t); m.data != "before" {
		t.Fatalf("echo %q", m.data)
	}
	silent := dialRaw(t, addr, "/std", "")

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d < closeTimeout {
		t.Errorf("Shutdown returned after %v, before the silent client's CloseTimeout", d)
	}

	err := recv(t, gorillaDone, "gorilla's close")
	if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("gorilla got %v, want close 1001", err)
	}
	r.closeCode(t, ws.CloseGoingAway)
	silent.expectClose(ws.CloseGoingAway)
	// The two clients that answered echo 1001; the silent one's
	// connection ended with no close frame from it (RFC 6455 section
	// 7.1.5).
	codes := map[int]int{}
	for i := range 3 {
		if ce := e.nextClose(t, i); ce != nil {
			codes[ce.Code]++
		}
	}
	if codes[ws.CloseGoingAway] != 2 || codes[ws.CloseAbnormal] != 1 {
		t.Errorf("server's OnClose codes: %v, want 1001 twice and 1006 once", codes)
	}
}

// A Shutdown whose context ends before the peers answer returns the
// context's error, with the connections closed.
func TestServerShutdownDeadline(t *testing.T) {
	e := &echo{}
	srv, addr := startServer(t, e, &ws.Options{CloseTimeout: time.Minute})
	silent := dialRaw(t, addr, "/std", "")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the deadline", err)
	}
	silent.expectClose(ws.CloseGoingAway)
	if ce := e.nextClose(t, 0); ce == nil || ce.Code != ws.CloseAbnormal {
		t.Errorf("server's OnClose: %v, want 1006 (the client never answered)", ce)
	}
}

// Dialer.Shutdown closes its connections with 1001 and waits for the
// server's answers; Dial fails afterwards.
func TestDialerShutdown(t *testing.T) {
	e := &echo{}
	addr := serve(t, e, nil)
	d := newDialer(t)
	rs := []*recorder{newRecorder(), newRecorder()}
	for i, r := range rs {
		path := []string{"/fast", "/std"}[i]
		dial(t, d, "ws://"+addr+path, r, nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for _, r := range rs {
		select {
		case ce := <-r.closed:
			if ce == nil || ce.Code != ws.CloseGoingAway {
				t.Errorf("client's OnClose: %v, want 1001", ce)
			}
		default:
			t.Error("Shutdown returned before OnClose")
		}
	}
	for i := range rs {
		if ce := e.nextClose(t, i); ce == nil || ce.Code != ws.CloseGoingAway {
			t.Errorf("server's OnClose %d: %v, want 1001", i, ce)
		}
	}
	if _, _, err := d.Dial(context.Background(), "ws://"+addr+"/fast", nil, newRecorder(), nil); err == nil {
		t.Fatal("Dial after Shutdown succeeded")
	}
}

// Server.Shutdown stops accepting first: a client that dials while
// Shutdown waits for a close handshake is refused. It dials once the
// silent client has Shutdown's close frame, which Shutdown sends once it
// stopped accepting.
func TestServerShutdownStopsAccepting(t *testing.T) {
	srv, addr := startServer(t, &echo{}, &ws.Options{CloseTimeout: 2 * time.Second})
	silent := dialRaw(t, addr, "/std", "") // never answers the close: Shutdown waits 2s
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	silent.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	if b0, p := silent.read(); b0&0xF != 0x8 || len(p) < 2 || int(binary.BigEndian.Uint16(p)) != ws.CloseGoingAway {
		t.Fatalf("frame %#x %q; want a close frame with 1001", b0, p)
	}
	if c, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+"/fast", nil); err == nil {
		c.Close()
		t.Errorf("an upgrade while Shutdown waits for a close handshake succeeded (status %d)", resp.StatusCode)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// Two Shutdowns at once both return when the last WebSocket closed.
func TestServerShutdownTwice(t *testing.T) {
	srv, addr := startServer(t, &echo{}, &ws.Options{CloseTimeout: 500 * time.Millisecond})
	dialRaw(t, addr, "/std", "") // silent: closed after CloseTimeout
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
			defer cancel()
			errs <- srv.Shutdown(ctx)
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("a Shutdown of two returned %v", err)
		}
	}
}

// A dial still connecting when Dialer.Shutdown begins fails, and does not
// hold Shutdown up.
func TestDialerShutdownDialInProgress(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux's dropping of a SYN past a full accept queue")
	}
	start := make(chan struct{})
	slow := slowAccept(t, serve(t, &echo{}, nil), start)
	d := newDialer(t)
	// A connection whose peer never answers the close keeps Shutdown
	// waiting for CloseTimeout, while the other dial connects.
	if _, _, err := d.Dial(context.Background(), "ws://"+mute(t)+"/", nil, newRecorder(), &ws.Options{CloseTimeout: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	dialErr := make(chan error, 1)
	go func() {
		_, _, err := d.Dial(context.Background(), "ws://"+slow+"/fast", nil, newRecorder(), nil)
		dialErr <- err
	}()
	time.Sleep(200 * time.Millisecond) // the SYN was dropped: connecting
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- d.Shutdown(ctx) }()
	time.Sleep(100 * time.Millisecond)
	close(start) // the SYN sent again, a second after the first, is accepted
	if err := recv(t, dialErr, "the dial's end"); err == nil {
		t.Error("a dial under way when Shutdown began succeeded")
	}
	if err := recv(t, shut, "Shutdown's end"); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// wsAccept is the Sec-WebSocket-Accept for key.
func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// mute runs a WebSocket server that answers the opening handshake and then
// ignores everything, the close frame included.
func mute(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "+
					wsAccept(req.Header.Get("Sec-WebSocket-Key"))+"\r\n\r\n")
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// slowAccept listens with a backlog of 0 and fills the accept queue, so
// that Linux drops a client's SYN and the client sends it again a second
// later; accepting (and relaying to upstream) starts when start is closed.
func slowAccept(t *testing.T, upstream string, start chan struct{}) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := syscall.Getsockname(fd)
	port := sa.(*syscall.SockaddrInet4).Port
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	filler, err := net.Dial("tcp", addr) // fills the accept queue
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		filler.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		<-start
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	return addr
}
