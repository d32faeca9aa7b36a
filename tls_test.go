//go:build unix

package evloop

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testcert"
)

// serveTLS starts a server for h with a TLS listener on a loopback port,
// shut down when the test ends.
func serveTLS(t *testing.T, h Handler, opts Options) (*Server, string) {
	t.Helper()
	return serveTLSConfig(t, h, opts, testcert.Server())
}

// serveTLSConfig is serveTLS with a TLS configuration of the test's.
func serveTLSConfig(t *testing.T, h Handler, opts Options, config *tls.Config) (*Server, string) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	srv, err := NewServer(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.ListenTLS("tcp", "127.0.0.1:0", config)
	if err != nil {
		srv.Close()
		t.Fatalf("ListenTLS: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return srv, addr.String()
}

// dialTLS connects to a TLS server with crypto/tls, its handshake done.
func dialTLS(t testing.TB, addr string, config *tls.Config) *tls.Conn {
	t.Helper()
	if config == nil {
		config = testcert.Client()
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, config)
	if err != nil {
		t.Fatalf("tls.Dial: %v", err)
	}
	c.SetDeadline(time.Now().Add(60 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// closeRecorder records OnClose's errors.
type closeRecorder struct {
	ch chan error
}

func newCloseRecorder() *closeRecorder { return &closeRecorder{ch: make(chan error, 64)} }

func (r *closeRecorder) record(c *Conn, err error) {
	r.ch <- err
}

func (r *closeRecorder) next(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no OnClose")
		return nil
	}
}

func TestTLSEcho(t *testing.T) {
	for _, v := range []struct {
		name string
		max  uint16
	}{{"TLS1.2", tls.VersionTLS12}, {"TLS1.3", tls.VersionTLS13}} {
		t.Run(v.name, func(t *testing.T) {
			states := make(chan tls.ConnectionState, 8)
			h := &funcHandler{
				open: func(c *Conn) {
					cs, ok := c.ConnectionState()
					if !ok {
						t.Error("ConnectionState: no TLS")
					}
					states <- cs
				},
				data: func(c *Conn) {
					b, _ := c.Next(-1)
					c.Write(b)
				},
			}
			_, addr := serveTLS(t, h, Options{Loops: 2})
			cfg := testcert.Client()
			cfg.MaxVersion = v.max
			cfg.ServerName = "localhost"
			for range 3 {
				c := dialTLS(t, addr, cfg)
				cs := <-states
				if !cs.HandshakeComplete || cs.Version != v.max || cs.ServerName != "localhost" {
					t.Fatalf("ConnectionState: complete %v, version %x, name %q", cs.HandshakeComplete, cs.Version, cs.ServerName)
				}
				for _, size := range []int{1, 100, 16 << 10, 16<<10 + 1, 1 << 20, 5 << 20} {
					msg := make([]byte, size)
					rand.Read(msg)
					got, err := roundTrip(c, msg)
					if err != nil || !bytes.Equal(got, msg) {
						t.Fatalf("%d bytes: echo differs (%v)", size, err)
					}
				}
			}
		})
	}
}

// TestTLSFirstRequestWithHandshake: a client's first bytes after its
// handshake, come with its last handshake message or right after it, are
// delivered, and so is a request that waits in the socket while nobody
// reads.
func TestTLSFirstRequestWithHandshake(t *testing.T) {
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		c.Write(bytes.ToUpper(b))
	}}
	_, addr := serveTLS(t, h, Options{Loops: 1})
	for range 20 {
		raw, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c := tls.Client(raw, testcert.Client())
		c.SetDeadline(time.Now().Add(10 * time.Second))
		// Write starts the handshake and sends the bytes right after it.
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 5)
		if _, err := io.ReadFull(c, got); err != nil || string(got) != "HELLO" {
			t.Fatalf("got %q, %v", got, err)
		}
		c.Close()
	}
}

// TestTLSCloseNotify: Close sends TLS's close_notify ahead of the FIN,
// after what was queued; a peer's close_notify is its EOF.
func TestTLSCloseNotify(t *testing.T) {
	closes := newCloseRecorder()
	h := &funcHandler{
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			if string(b) == "bye" {
				c.Write([]byte("last words"))
				c.Close()
				return
			}
			c.Write(b)
		},
		close: closes.record,
	}
	_, addr := serveTLS(t, h, Options{Loops: 1})

	// TLS 1.2, whose alerts' record type shows: the last record the
	// client receives is an alert.
	cfg := testcert.Client()
	cfg.MaxVersion = tls.VersionTLS12
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingConn{Conn: raw}
	c := tls.Client(rec, cfg)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("bye"))
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "last words" {
		t.Fatalf("read %q, %v; want the last words and EOF", got, err)
	}
	if typ := rec.lastRecordType(); typ != 21 {
		t.Fatalf("last record's type %d, want an alert (21)", typ)
	}
	c.Close()
	if err := closes.next(t); err != nil {
		t.Fatalf("OnClose: %v, want nil", err)
	}

	// The client's close_notify.
	c = dialTLS(t, addr, nil)
	if got, err := roundTrip(c, []byte("ping")); err != nil || string(got) != "ping" {
		t.Fatal(got, err)
	}
	c.Close()
	if err := closes.next(t); err != io.EOF {
		t.Fatalf("OnClose after the client's close_notify: %v, want io.EOF", err)
	}
}

// recordingConn keeps what it reads, to tell TLS records apart.
type recordingConn struct {
	net.Conn
	mu  sync.Mutex
	got []byte
}

func (r *recordingConn) Read(b []byte) (int, error) {
	n, err := r.Conn.Read(b)
	r.mu.Lock()
	r.got = append(r.got, b[:n]...)
	r.mu.Unlock()
	return n, err
}

func (r *recordingConn) lastRecordType() byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var typ byte
	for p := r.got; len(p) >= 5; {
		typ = p[0]
		n := 5 + (int(p[3])<<8 | int(p[4]))
		if n > len(p) {
			return 0
		}
		p = p[n:]
	}
	return typ
}

// TestTLSWrites: CloseWrite's close_notify ends the peer's reading while
// the connection goes on reading; AsyncWrite from another goroutine and
// WriteLast are encrypted in their turn.
func TestTLSWrites(t *testing.T) {
	done := make(chan error, 4)
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		switch string(b) {
		case "async":
			go c.AsyncWrite([]byte("from a goroutine;"), func(err error) { done <- err })
		case "last":
			c.WriteLast([]byte("last;"))
			if _, err := c.Write([]byte("x")); !errors.Is(err, ErrClosed) {
				done <- errors.New("a Write after WriteLast did not fail")
			}
		case "shut":
			c.Write([]byte("shut;"))
			c.CloseWrite()
		default:
			c.Write(b)
		}
	}}
	_, addr := serveTLS(t, h, Options{Loops: 1})

	c := dialTLS(t, addr, nil)
	c.Write([]byte("async"))
	want := "from a goroutine;"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != want {
		t.Fatalf("got %q, %v", got, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("AsyncWrite's done: %v", err)
	}
	c.Write([]byte("shut"))
	if got, err := io.ReadAll(c); err != nil || string(got) != "shut;" {
		t.Fatalf("after CloseWrite read %q, %v", got, err)
	}

	c = dialTLS(t, addr, nil)
	c.Write([]byte("last"))
	got = make([]byte, 5)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "last;" {
		t.Fatalf("got %q, %v", got, err)
	}
	select {
	case err := <-done:
		t.Fatal(err)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestTLSBadClients: a client that speaks no TLS, one that distrusts the
// certificate, one that sends a broken record once established, one that
// stops part way through its handshake and one that sends nothing are each
// closed, with no OnOpen for those that never finished a handshake, while
// an established connection goes on being served. HandshakeTimeout is 2
// s, which the good clients' handshakes, under the race detector on a
// loaded machine, need room for.
func TestTLSBadClients(t *testing.T) {
	const handshake = 2 * time.Second
	var mu sync.Mutex
	opens := 0
	closes := newCloseRecorder()
	h := &funcHandler{
		open: func(c *Conn) {
			mu.Lock()
			opens++
			mu.Unlock()
		},
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			c.Write(b)
		},
		close: closes.record,
	}
	srv, addr := serveTLS(t, h, Options{Loops: 2, HandshakeTimeout: handshake})
	good := dialTLS(t, addr, nil)
	check := func() {
		t.Helper()
		if got, err := roundTrip(good, []byte("still here")); err != nil || string(got) != "still here" {
			t.Fatalf("the good connection: %q, %v", got, err)
		}
	}

	// Plain HTTP: crypto/tls answers with an alert or closes.
	plain := dial(t, addr)
	plain.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	if _, err := io.ReadAll(plain); err != nil {
		t.Fatalf("plain client: %v, want the connection closed", err)
	}
	check()

	// A client that does not trust the certificate.
	if c, err := tls.Dial("tcp", addr, &tls.Config{}); err == nil {
		c.Close()
		t.Fatal("a client without the authority completed a handshake")
	}
	check()

	// Part of a ClientHello, then nothing: closed at the timeout, timed
	// from before the dial, as the server times it from its accept.
	// Nothing at all, the same time: closed at the timeout too.
	start := time.Now()
	part := dial(t, addr)
	silent := dial(t, addr)
	part.Write([]byte{22, 3, 1, 0, 200, 1, 0, 0})
	if _, err := io.ReadAll(part); err != nil {
		t.Fatalf("part of a hello: %v", err)
	}
	if d := time.Since(start); d < handshake {
		t.Fatalf("a client part way through its handshake was closed after %v, before the timeout (%v)", d, handshake)
	}
	if _, err := io.ReadAll(silent); err != nil {
		t.Fatalf("silent client: %v", err)
	}
	check()

	// A broken record once established: this connection alone closes,
	// with crypto/tls's error.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	bad := tls.Client(raw, testcert.Client())
	bad.SetDeadline(time.Now().Add(10 * time.Second))
	if got, err := roundTrip(bad, []byte("fine")); err != nil || string(got) != "fine" {
		t.Fatal(got, err)
	}
	raw.Write([]byte{23, 3, 3, 0, 40})
	raw.Write(bytes.Repeat([]byte{0xaa}, 40))
	if err := closes.next(t); err == nil || !strings.Contains(err.Error(), "tls") {
		t.Fatalf("OnClose after a broken record: %v, want crypto/tls's error", err)
	}
	check()

	mu.Lock()
	n := opens
	mu.Unlock()
	if n != 2 {
		t.Fatalf("%d OnOpens, want 2 (the good and the broken-record connections)", n)
	}
	// Every connection closed, the loops keep no TLS state.
	good.Close()
	closes.next(t)
	for i := range srv.Loops() {
		kept := make(chan int)
		srv.Submit(i, func() { kept <- len(srv.loops[i].tls) })
		if n := <-kept; n != 0 {
			t.Fatalf("loop %d keeps the TLS state of %d closed connections", i, n)
		}
	}
}

// TestTLSShutdownDuringHandshake: a handshake still under way when the
// server shuts down ends, its goroutine too (goleak checks).
func TestTLSShutdownDuringHandshake(t *testing.T) {
	srv, err := NewServer(&funcHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.ListenTLS("tcp", "127.0.0.1:0", testcert.Server())
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr.String())
	c.Write(clientHello(t)) // the goroutine starts, answers and waits
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTLSDetach: Detach hands over the *tls.Conn, which goes on where the
// loop left off.
func TestTLSDetach(t *testing.T) {
	detached := make(chan net.Conn, 1)
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		if string(b) != "detach" {
			return
		}
		nc, rest, err := c.Detach()
		if err != nil || len(rest) != 0 {
			t.Errorf("Detach: %v, %q", err, rest)
			return
		}
		detached <- nc
	}}
	_, addr := serveTLS(t, h, Options{Loops: 1})
	c := dialTLS(t, addr, nil)
	c.Write([]byte("detach"))
	nc := <-detached
	defer nc.Close()
	if _, ok := nc.(*tls.Conn); !ok {
		t.Fatalf("Detach gave a %T", nc)
	}
	go func() {
		b := make([]byte, 64)
		n, _ := nc.Read(b)
		nc.Write(bytes.ToUpper(b[:n]))
	}()
	if got, err := roundTrip(c, []byte("blocking now")); err != nil || string(got) != "BLOCKING NOW" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestListenTLSNeedsCertificate(t *testing.T) {
	srv, err := NewServer(&funcHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, cfg := range []*tls.Config{nil, {}} {
		if _, err := srv.ListenTLS("tcp", "127.0.0.1:0", cfg); err == nil {
			t.Fatal("ListenTLS took a configuration without a certificate")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := srv.ServeTLS(ln, &tls.Config{}); err == nil {
		t.Fatal("ServeTLS took a configuration without a certificate")
	}
}

// TestTLSDial: DialWith's TLSConfig makes a TLS client, against
// crypto/tls's server and against ListenTLS's, Dial returning after the
// handshake and OnOpen; the name checked is the address's host unless
// ServerName says another.
func TestTLSDial(t *testing.T) {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", testcert.Server())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var served sync.WaitGroup
	defer served.Wait()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			served.Add(1)
			go func() {
				defer served.Done()
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	_, evAddr := serveTLS(t, &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		c.Write(b)
	}}, Options{Loops: 1})

	replies := make(chan []byte, 16)
	opened := make(chan bool, 4)
	client, err := NewServer(&funcHandler{
		open: func(c *Conn) {
			cs, ok := c.ConnectionState()
			opened <- ok && cs.HandshakeComplete
		},
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			replies <- bytes.Clone(b)
		},
	}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, addr := range []string{ln.Addr().String(), evAddr} {
		cfg := testcert.Client()
		cfg.ServerName = ""
		c, err := client.DialWith(ctx, "tcp", addr, DialOptions{TLSConfig: cfg})
		if err != nil {
			t.Fatalf("DialWith %s: %v", addr, err)
		}
		if !<-opened {
			t.Fatal("OnOpen ran before the handshake was done")
		}
		msg := make([]byte, 300<<10)
		rand.Read(msg)
		c.AsyncWrite(msg, nil)
		var got []byte
		for len(got) < len(msg) {
			select {
			case b := <-replies:
				got = append(got, b...)
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: %d of %d bytes echoed", addr, len(got), len(msg))
			}
		}
		if !bytes.Equal(got, msg) {
			t.Fatal("echo differs")
		}
		c.Submit(func() { c.Close() })
	}
	// By the name of a host the certificate names.
	port := evAddr[strings.LastIndexByte(evAddr, ':'):]
	if _, err := client.DialWith(ctx, "tcp4", "localhost"+port, DialOptions{TLSConfig: &tls.Config{RootCAs: testcert.Pool()}}); err != nil {
		t.Fatalf("DialWith localhost: %v", err)
	}
	<-opened
}

// TestTLSDialFailures: a certificate the client does not trust, a server
// that never answers the handshake, and a context that ends during it fail
// the dial, with no OnOpen or OnClose. The client trusts no authority (an
// empty pool, not the system's, whose first load takes a second or more
// under the race detector on a loaded machine), and HandshakeTimeout is 2
// s, which the handshake with the server it does not trust needs room for
// there too.
func TestTLSDialFailures(t *testing.T) {
	const handshake = 2 * time.Second
	_, evAddr := serveTLS(t, &funcHandler{}, Options{Loops: 1})
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close() // its connections, accepted by the kernel, never answered

	calls := make(chan string, 8)
	client, err := NewServer(&funcHandler{
		open:  func(*Conn) { calls <- "open" },
		close: func(*Conn, error) { calls <- "close" },
	}, Options{Loops: 1, Logger: quietLogger(), HandshakeTimeout: handshake})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()

	_, err = client.DialWith(ctx, "tcp", evAddr, DialOptions{TLSConfig: &tls.Config{RootCAs: x509.NewCertPool()}})
	var verr *tls.CertificateVerificationError
	if !errors.As(err, &verr) {
		t.Fatalf("an untrusted certificate: %v, want a *tls.CertificateVerificationError", err)
	}
	start := time.Now()
	if _, err = client.DialWith(ctx, "tcp", silent.Addr().String(), DialOptions{TLSConfig: testcert.Client()}); !errors.Is(err, ErrHandshakeTimeout) {
		t.Fatalf("a silent server: %v, want ErrHandshakeTimeout", err)
	}
	if d := time.Since(start); d < handshake {
		t.Fatalf("the handshake timed out after %v, before HandshakeTimeout (%v)", d, handshake)
	}
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err = client.DialWith(cctx, "tcp", silent.Addr().String(), DialOptions{TLSConfig: testcert.Client()}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a context ending during the handshake: %v", err)
	}
	select {
	case call := <-calls:
		t.Fatalf("%s ran for a dial that failed", call)
	case <-time.After(50 * time.Millisecond):
	}
}

// handshakeErrors is a funcHandler that answers failed handshakes.
type handshakeErrors struct {
	funcHandler
	answer func(remote net.Addr, err error) []byte
}

func (h *handshakeErrors) OnHandshakeError(remote net.Addr, err error) []byte {
	return h.answer(remote, err)
}

// TestTLSHandshakeErrorHandler: what OnHandshakeError returns reaches a
// client whose handshake failed, in the clear; a panic there is logged
// and the connection closed, the loop going on.
func TestTLSHandshakeErrorHandler(t *testing.T) {
	h := &handshakeErrors{funcHandler: funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		c.Write(b)
	}}}
	h.answer = func(remote net.Addr, err error) []byte {
		var re tls.RecordHeaderError
		switch {
		case remote == nil:
			return []byte("no address")
		case !errors.As(err, &re):
			return nil
		case string(re.RecordHeader[:]) == "PANIC":
			panic("in OnHandshakeError")
		}
		return append([]byte("not TLS: "), re.RecordHeader[:]...)
	}
	_, addr := serveTLS(t, h, Options{Loops: 1})
	c := dial(t, addr)
	c.Write([]byte("hello, plain world"))
	if got, err := io.ReadAll(c); err != nil || string(got) != "not TLS: hello" {
		t.Fatalf("got %q, %v", got, err)
	}
	c = dial(t, addr)
	c.Write([]byte("PANIC!"))
	if got, err := io.ReadAll(c); err != nil || len(got) != 0 {
		t.Fatalf("after a panic: %q, %v", got, err)
	}
	good := dialTLS(t, addr, nil)
	if got, err := roundTrip(good, []byte("fine")); err != nil || string(got) != "fine" {
		t.Fatalf("%q, %v", got, err)
	}
}

// TestTLSConnectionStateDuringHandshake: EachConn hands handshaking
// connections too; ConnectionState on one says no TLS state yet, where
// crypto/tls's handshake lock, held by the handshake's goroutine while it
// waits for the loop to bring it bytes, would block the loop for good.
func TestTLSConnectionStateDuringHandshake(t *testing.T) {
	srv, addr := serveTLS(t, &funcHandler{}, Options{Loops: 1})
	c := dial(t, addr)
	c.Write(clientHello(t)) // the goroutine starts, answers and waits
	time.Sleep(50 * time.Millisecond)
	done := make(chan int, 1)
	seen := make(chan *Conn, 1)
	srv.Submit(0, func() {
		n := 0
		srv.EachConn(0, func(c *Conn) {
			seen <- c
			if _, ok := c.ConnectionState(); ok {
				n++
			}
		})
		done <- n
	})
	select {
	case n := <-done:
		if n != 0 {
			t.Fatalf("ConnectionState of a handshaking connection reported TLS state")
		}
	case <-time.After(3 * time.Second):
		(<-seen).tlsState().w.close() // the handshake fails, and the loop goes on
		t.Fatal("ConnectionState of a handshaking connection blocked the loop")
	}
}

// slowVerify is a server configuration whose VerifyConnection takes a
// while (a revocation check, say): the client's Finished, and what it
// sends after it, arrive while the handshake's goroutine is still busy.
func slowVerify(d time.Duration) *tls.Config {
	config := testcert.Server()
	config.VerifyConnection = func(tls.ConnectionState) error {
		time.Sleep(d)
		return nil
	}
	return config
}

// dialTLS13 connects with TLS 1.3, whose client sends its first bytes
// right after its Finished, without waiting for the server.
func dialTLS13(t *testing.T, addr string) (*tls.Conn, *net.TCPConn) {
	t.Helper()
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	cfg := testcert.Client()
	cfg.MinVersion = tls.VersionTLS13
	c := tls.Client(raw, cfg)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := c.Handshake(); err != nil {
		t.Fatal(err)
	}
	return c, raw.(*net.TCPConn)
}

// TestTLSDetachInOnOpen: Detach in OnOpen hands over, with the *tls.Conn,
// the bytes read after the client's last handshake message and not yet
// decrypted.
func TestTLSDetachInOnOpen(t *testing.T) {
	h := &funcHandler{open: func(c *Conn) {
		nc, rest, err := c.Detach()
		if err != nil {
			t.Errorf("Detach: %v", err)
			return
		}
		go func() {
			defer nc.Close()
			nc.Write(rest)
			io.Copy(nc, nc)
		}()
	}}
	_, addr := serveTLSConfig(t, h, Options{Loops: 1}, slowVerify(100*time.Millisecond))
	c, _ := dialTLS13(t, addr)
	msg := bytes.Repeat([]byte("0123456789abcdef"), 8<<10)
	go c.Write(msg)
	got := make([]byte, len(msg))
	if n, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo of the detached connection: %d bytes, %v", n, err)
	}
}

// TestTLSRequestAndFINWithHandshake: a client that sends its request and
// shuts down its writing side right after its handshake gets its answer:
// the FIN, read while the handshake's goroutine has yet to finish, is the
// EOF after the request, not the end of the handshake.
func TestTLSRequestAndFINWithHandshake(t *testing.T) {
	closes := newCloseRecorder()
	h := &funcHandler{
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			c.Write(bytes.ToUpper(b))
		},
		close: closes.record,
	}
	_, addr := serveTLSConfig(t, h, Options{Loops: 1}, slowVerify(100*time.Millisecond))
	c, raw := dialTLS13(t, addr)
	c.Write([]byte("hello"))
	raw.CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "HELLO" {
		t.Fatalf("read %q, %v; want HELLO and EOF", got, err)
	}
	if err := closes.next(t); err != io.EOF {
		t.Fatalf("OnClose: %v, want io.EOF", err)
	}

	// Part of a ClientHello and the FIN: the handshake fails at once, not
	// at its timeout.
	part := dial(t, addr)
	part.Write([]byte{22, 3, 1, 0, 200, 1, 0, 0})
	part.(*net.TCPConn).CloseWrite()
	start := time.Now()
	if _, err := io.ReadAll(part); err != nil {
		t.Fatalf("part of a hello: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a client that sent part of a hello and its FIN was closed after %v", d)
	}
}

// TestTLSLargeFirstRequest: a client's first request, sent right after
// its Finished, may be larger than what a handshake may bring before the
// handshake's goroutine takes it: the loop stops reading until the
// handshake is done rather than close the connection.
func TestTLSLargeFirstRequest(t *testing.T) {
	const size = 1 << 20
	got := 0
	h := &funcHandler{data: func(c *Conn) {
		got += c.Discard(c.InboundBuffered())
		if got == size {
			c.Write([]byte("ok"))
		}
	}}
	_, addr := serveTLSConfig(t, h, Options{Loops: 1}, slowVerify(200*time.Millisecond))
	c, _ := dialTLS13(t, addr)
	go c.Write(make([]byte, size))
	b := make([]byte, 2)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "ok" {
		t.Fatalf("read %q, %v; want ok", b, err)
	}
}

// listenTLSUnmanaged starts a server with a TLS listener on a loopback
// port, which the test shuts down itself.
func listenTLSUnmanaged(t *testing.T, opts Options, config *tls.Config) (*Server, net.Addr) {
	t.Helper()
	srv, err := NewServer(&funcHandler{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.ListenTLS("tcp", "127.0.0.1:0", config)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	return srv, addr
}

// TestTLSHandshakeContextEnds: the context crypto/tls hands the
// configuration's callbacks (ClientHelloInfo's) ends with the connection:
// at the handshake's timeout, and at Close, which returns at once though a
// handshake waits in GetCertificate (an ACME client's, say).
func TestTLSHandshakeContextEnds(t *testing.T) {
	config := testcert.Server()
	cert := config.Certificates[0]
	config.Certificates = nil
	called, ended := make(chan struct{}, 2), make(chan error, 2)
	config.GetCertificate = func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		called <- struct{}{}
		select {
		case <-hello.Context().Done():
			ended <- hello.Context().Err()
			return nil, hello.Context().Err()
		case <-time.After(20 * time.Second):
			ended <- nil
			return &cert, nil
		}
	}
	srv, addr := listenTLSUnmanaged(t, Options{Loops: 1, Logger: quietLogger(), HandshakeTimeout: 200 * time.Millisecond}, config)
	dial := func() {
		go func() {
			if c, err := tls.Dial("tcp", addr.String(), testcert.Client()); err == nil {
				c.Close()
			}
		}()
		<-called
	}
	dial()
	if err := <-ended; err == nil {
		srv.Close()
		t.Fatal("the handshake's context did not end at its timeout")
	}
	dial()
	start := time.Now()
	srv.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Close took %v, waiting for GetCertificate", d)
	}
}

// alertRecords counts the alert records (type 21) in b, a stream of TLS
// records.
func alertRecords(b []byte) int {
	n := 0
	for len(b) >= 5 {
		size := 5 + (int(b[3])<<8 | int(b[4]))
		if size > len(b) {
			break
		}
		if b[0] == 21 {
			n++
		}
		b = b[size:]
	}
	return n
}

// TestTLSNothingAfterFatalAlert: a connection that a broken record ends
// sends crypto/tls's fatal alert and nothing after it, no close_notify.
func TestTLSNothingAfterFatalAlert(t *testing.T) {
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		c.Write(b)
	}}
	_, addr := serveTLS(t, h, Options{Loops: 1})
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	cfg := testcert.Client()
	cfg.MaxVersion = tls.VersionTLS12 // whose alerts' record type shows
	c := tls.Client(raw, cfg)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if got, err := roundTrip(c, []byte("fine")); err != nil || string(got) != "fine" {
		t.Fatal(got, err)
	}
	raw.Write([]byte{23, 3, 3, 0, 40})
	raw.Write(bytes.Repeat([]byte{0xaa}, 40))
	rest, _ := io.ReadAll(raw)
	if n := alertRecords(rest); n != 1 {
		t.Fatalf("%d alerts after a broken record, want 1, the fatal one", n)
	}
}

// TestTLSPausedInOnOpen: a connection paused in OnOpen is not handed the
// request that came with the client's last handshake message until it
// resumes, as a plain one is not handed what came before its resumption.
func TestTLSPausedInOnOpen(t *testing.T) {
	resumed := make(chan time.Time, 1)
	h := pausedInOnOpen(200*time.Millisecond, func() { resumed <- time.Now() })
	_, addr := serveTLSConfig(t, h, Options{Loops: 1}, slowVerify(100*time.Millisecond))
	c, _ := dialTLS13(t, addr)
	c.Write([]byte("first"))
	got := make([]byte, 5)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "FIRST" {
		t.Fatalf("got %q, %v", got, err)
	}
	select {
	case <-resumed:
	default:
		t.Fatal("the request was handed over before ResumeReading")
	}
}

// TestTLSOutboundLimit: Options.MaxOutbound bounds the encrypted bytes
// queued, which are more than the plaintext written.
func TestTLSOutboundLimit(t *testing.T) {
	const limit = 64 << 10
	results := make(chan string, 4)
	h := &funcHandler{data: func(c *Conn) {
		c.Discard(c.InboundBuffered())
		_, err := c.Write(make([]byte, limit))
		results <- fmt.Sprint(err, " ", c.OutboundBuffered())
		_, err = c.Write(make([]byte, limit-2<<10))
		results <- fmt.Sprint(err, " ", c.OutboundBuffered() <= limit)
	}}
	_, addr := serveTLS(t, h, Options{Loops: 1, MaxOutbound: limit})
	c := dialTLS(t, addr, nil)
	c.Write([]byte("go"))
	if got := <-results; got != fmt.Sprint(ErrOutboundFull, " ", 0) {
		t.Fatalf("a write of MaxOutbound plaintext bytes: %s", got)
	}
	if got := <-results; got != "<nil> true" {
		t.Fatalf("a smaller write: %s", got)
	}
}

// TestTLSOutboundLimitWritev: MaxOutbound bounds the encrypted bytes a
// Writev queues too: one of many small buffers, more than a chunk in all,
// whose every buffer was sealed into a record of its own, passed the bound
// by the records' overhead, which the bound reckons per KiB.
func TestTLSOutboundLimitWritev(t *testing.T) {
	const limit = 64 << 10
	type result struct {
		err    error
		queued int
	}
	results := make(chan result, 1)
	h := &funcHandler{data: func(c *Conn) {
		c.Discard(c.InboundBuffered())
		bs := make([][]byte, 3000)
		for i := range bs {
			bs[i] = make([]byte, 16)
		}
		_, err := c.Writev(bs) // 48,000 bytes
		results <- result{err, c.OutboundBuffered()}
	}}
	_, addr := serveTLS(t, h, Options{Loops: 1, MaxOutbound: limit})
	c := dialTLS(t, addr, nil)
	c.Write([]byte("go"))
	if r := <-results; r.err == nil && r.queued > limit {
		t.Fatalf("Writev of 3,000 buffers of 16 bytes queued %d bytes; MaxOutbound is %d", r.queued, limit)
	}
}

// TestTLSBackPressureAbort: a handler that aborts its connection in
// OnBackPressure, as a TLS write crosses Options.HighWater, has its
// AsyncWrite completed with ErrAborted, and its Writev of several
// buffers returns as a plain connection's does, where the next buffer's
// encryption found the connection's TLS state gone and panicked.
func TestTLSBackPressureAbort(t *testing.T) {
	const high = 32 << 10
	results := make(chan string, 4)
	h := &funcHandler{
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			switch string(b) {
			case "async":
				c.AsyncWrite(make([]byte, 2*high), func(err error) { results <- fmt.Sprint(err) })
			case "writev":
				func() {
					defer func() {
						if v := recover(); v != nil {
							results <- fmt.Sprint("panic: ", v)
						}
					}()
					_, err := c.Writev([][]byte{make([]byte, 2*high), make([]byte, 2*high)})
					results <- fmt.Sprint(err)
				}()
			}
		},
		bp: func(c *Conn, paused bool) {
			if paused {
				c.Abort()
			}
		},
	}
	_, addr := serveTLS(t, h, Options{Loops: 1, HighWater: high})
	for _, v := range []struct{ req, want string }{{"async", ErrAborted.Error()}, {"writev", "<nil>"}} {
		c := dialTLS(t, addr, nil)
		c.Write([]byte(v.req))
		select {
		case got := <-results:
			if got != v.want {
				t.Fatalf("%s: %s, want %s", v.req, got, v.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no outcome", v.req)
		}
	}
}

// TestTLSDialInsecureServerName: a dial that skips verification still
// names the host dialed in its ClientHello (SNI), as tls.Dial names it,
// for a server that picks its certificate by name.
func TestTLSDialInsecureServerName(t *testing.T) {
	names := make(chan string, 2)
	cfg := testcert.Server()
	cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		names <- hello.ServerName
		return nil, nil
	}
	_, addr := serveTLSConfig(t, &funcHandler{}, Options{Loops: 1}, cfg)
	port := addr[strings.LastIndexByte(addr, ':'):]
	client, err := NewServer(&funcHandler{}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := client.DialWith(context.Background(), "tcp4", "localhost"+port, DialOptions{TLSConfig: &tls.Config{InsecureSkipVerify: true}})
	if err != nil {
		t.Fatal(err)
	}
	c.Submit(func() { c.Close() })
	if got := <-names; got != "localhost" {
		t.Fatalf("SNI %q, want localhost", got)
	}
}

// batchConn holds what is written while hold is set, to send it in one
// write: a TLS client's request and close_notify reach the server in one
// read.
type batchConn struct {
	net.Conn
	hold bool
	buf  []byte
}

func (b *batchConn) Write(p []byte) (int, error) {
	if b.hold {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	return b.Conn.Write(p)
}

func (b *batchConn) flush() error {
	b.hold = false
	b.Conn.SetWriteDeadline(time.Time{}) // crypto/tls's CloseWrite ends it
	_, err := b.Conn.Write(b.buf)
	return err
}

// TestTLSPausedEOF: the peer's EOF, a close_notify read with the request
// or a FIN read during the handshake, reaches a connection paused by its
// handler once reading resumes, after the request, as a plain
// connection's EOF does, where the connection closed while the handler
// was busy with the request, whose answer was lost.
func TestTLSPausedEOF(t *testing.T) {
	answer := func(c *Conn) {
		b, _ := c.Next(-1)
		if len(b) == 0 {
			return
		}
		b = bytes.ToUpper(b)
		c.PauseReading()
		c.AfterFunc(100*time.Millisecond, func() {
			c.Write(b)
			c.ResumeReading()
		})
	}
	t.Run("CloseNotifyInOnData", func(t *testing.T) {
		closes := newCloseRecorder()
		_, addr := serveTLS(t, &funcHandler{data: answer, close: closes.record}, Options{Loops: 1})
		raw, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		bc := &batchConn{Conn: raw}
		c := tls.Client(bc, testcert.Client())
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := c.Handshake(); err != nil {
			t.Fatal(err)
		}
		bc.hold = true
		c.Write([]byte("hello"))
		c.CloseWrite()
		bc.flush()
		if got, err := io.ReadAll(c); err != nil || string(got) != "HELLO" {
			t.Fatalf("read %q, %v; want HELLO and EOF", got, err)
		}
		if err := closes.next(t); err != io.EOF {
			t.Fatalf("OnClose: %v, want io.EOF", err)
		}
	})
	for _, fin := range []bool{true, false} {
		name := "CloseNotifyWithHandshake"
		if fin {
			name = "FINWithHandshake"
		}
		t.Run(name, func(t *testing.T) {
			h := pausedInOnOpen(100*time.Millisecond, func() {})
			_, addr := serveTLSConfig(t, h, Options{Loops: 1}, slowVerify(100*time.Millisecond))
			c, raw := dialTLS13(t, addr)
			c.Write([]byte("hello"))
			if fin {
				raw.CloseWrite()
			} else {
				c.CloseWrite()
			}
			if got, err := io.ReadAll(c); err != nil || string(got) != "HELLO" {
				t.Fatalf("read %q, %v; want HELLO and EOF", got, err)
			}
		})
	}
}

// TestTLSOutboundLimitCBC: MaxOutbound bounds the encrypted bytes queued
// under a CBC cipher suite too, whose records carry an IV, a MAC and
// padding, more than an AEAD's nonce and tag: one-byte writes, a record
// each, after a first write whose record's size the client chooses, until
// the limit refuses one.
func TestTLSOutboundLimitCBC(t *testing.T) {
	const limit = 64 << 10
	results := make(chan string, 4)
	h := &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		var first int
		fmt.Sscan(string(b), &first)
		_, err := c.Write(make([]byte, first))
		for err == nil {
			_, err = c.Write([]byte{0})
		}
		results <- fmt.Sprint(c.OutboundBuffered(), " ", err)
	}}
	_, addr := serveTLS(t, h, Options{Loops: 1, MaxOutbound: limit})
	cfg := testcert.Client()
	cfg.MaxVersion = tls.VersionTLS12
	cfg.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}
	// A record of p bytes takes 21 + p + 21 rounded up to 16: a one-byte
	// write's takes 53, and first writes 16 bytes apart end the one-byte
	// ones at every distance from the limit.
	for j := range 53 {
		c := dialTLS(t, addr, cfg)
		if cs := c.ConnectionState(); cs.CipherSuite != tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA {
			t.Fatalf("cipher suite %s", tls.CipherSuiteName(cs.CipherSuite))
		}
		fmt.Fprint(c, 11+16*j)
		var queued int
		got := <-results
		fmt.Sscan(got, &queued)
		if queued > limit || !strings.HasSuffix(got, ErrOutboundFull.Error()) {
			t.Fatalf("a first write of %d bytes: queued, error: %s; want at most %d bytes queued, ErrOutboundFull", 11+16*j, got, limit)
		}
		c.Close()
	}
}

// TestTLSDialStopsAtHandshake: a name with several addresses is dialed
// address after address until one connects, but a TLS handshake that
// fails there ends the dial, as tls.Dial's, where the next address was
// connected to and shaken hands with again.
func TestTLSDialStopsAtHandshake(t *testing.T) {
	_, addr := serveTLS(t, &funcHandler{}, Options{Loops: 1})
	_, port, _ := net.SplitHostPort(addr)
	second, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", port))
	if err != nil {
		t.Skip("127.0.0.2 not listenable at the same port:", err)
	}
	defer second.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := second.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	saved := lookupIP
	lookupIP = func(ctx context.Context, network, host string) ([]net.IP, error) {
		return []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2)}, nil
	}
	t.Cleanup(func() { lookupIP = saved })
	client, ctx := dialingServer(t)
	_, err = client.DialWith(ctx, "tcp4", net.JoinHostPort("twice.test", port), DialOptions{TLSConfig: &tls.Config{}})
	var verr *tls.CertificateVerificationError
	if !errors.As(err, &verr) {
		t.Fatalf("DialWith: %v, want the certificate's refusal", err)
	}
	select {
	case <-accepted:
		t.Fatal("the second address was dialed after the first's handshake failed")
	case <-time.After(100 * time.Millisecond):
	}
}

// TestTLSPartialHelloNoGoroutine: a client that sends part of its first
// record and stalls has no handshake goroutine until the record is whole;
// then its handshake goes on as any other.
func TestTLSPartialHelloNoGoroutine(t *testing.T) {
	srv, addr := serveTLS(t, &funcHandler{data: func(c *Conn) {
		b, _ := c.Next(-1)
		c.Write(b)
	}}, Options{Loops: 1})
	started := func() (n int) {
		done := make(chan int)
		srv.Submit(0, func() {
			k := 0
			srv.EachConn(0, func(c *Conn) {
				if st := c.tlsState(); st != nil && st.started {
					k++
				}
			})
			done <- k
		})
		return <-done
	}
	// A whole ClientHello, recorded from crypto/tls's client.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rec := &splitConn{Conn: raw, first: 9, held: make(chan struct{}), release: make(chan struct{})} // the header and 4 bytes, then the rest
	c := tls.Client(rec, testcert.Client())
	c.SetDeadline(time.Now().Add(10 * time.Second))
	hs := make(chan error, 1)
	go func() { hs <- c.Handshake() }()
	<-rec.held
	time.Sleep(50 * time.Millisecond)
	if n := started(); n != 0 {
		t.Fatalf("%d handshake goroutines for a partial hello", n)
	}
	close(rec.release)
	if err := <-hs; err != nil {
		t.Fatal(err)
	}
	if got, err := roundTrip(c, []byte("whole")); err != nil || string(got) != "whole" {
		t.Fatalf("%q, %v", got, err)
	}
}

// splitConn writes the first bytes of its first write, then waits for
// release before the rest.
type splitConn struct {
	net.Conn
	first   int
	once    sync.Once
	held    chan struct{}
	release chan struct{}
}

func (s *splitConn) Write(b []byte) (int, error) {
	split := false
	s.once.Do(func() { split = true })
	if !split || len(b) <= s.first {
		return s.Conn.Write(b)
	}
	n, err := s.Conn.Write(b[:s.first])
	if err != nil {
		return n, err
	}
	close(s.held)
	<-s.release
	m, err := s.Conn.Write(b[s.first:])
	return n + m, err
}

// clientHello returns the first flight of crypto/tls's client, a whole
// ClientHello record: sent alone, it starts a server's handshake goroutine,
// which answers and waits for the rest.
func clientHello(t testing.TB) []byte {
	t.Helper()
	client, server := net.Pipe()
	defer server.Close()
	go func() {
		tls.Client(client, testcert.Client()).Handshake()
		client.Close()
	}()
	b := make([]byte, 16<<10)
	server.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := server.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	return b[:n]
}

// TestTLSOversizedFirstRecord: a first record longer than TLS allows is
// refused at once, not left to wait for bytes the loop would stop reading.
func TestTLSOversizedFirstRecord(t *testing.T) {
	_, addr := serveTLS(t, &funcHandler{}, Options{Loops: 1, HandshakeTimeout: 5 * time.Second})
	c := dial(t, addr)
	go c.Write(append([]byte{22, 3, 1, 0xff, 0xff}, make([]byte, 70<<10)...))
	start := time.Now()
	io.ReadAll(c)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("closed after %v, at the handshake's timeout", d)
	}
}

// pausedInOnOpen is a handler that pauses reading in OnOpen, resumes it
// after d (calling resumed first), and answers what it reads in capitals.
func pausedInOnOpen(d time.Duration, resumed func()) *funcHandler {
	return &funcHandler{
		open: func(c *Conn) {
			c.PauseReading()
			c.AfterFunc(d, func() {
				resumed()
				c.ResumeReading()
			})
		},
		data: func(c *Conn) {
			b, _ := c.Next(-1)
			c.Write(bytes.ToUpper(b))
		},
	}
}

// TestTLSTruncatedRecord: a FIN in the middle of a record ends the
// connection with io.ErrUnexpectedEOF, as crypto/tls reports it, and
// the part of the record is not handed on; at a record's boundary a FIN
// without close_notify is the peer's EOF (TestTLSRequestAndFINWithHandshake).
// Whether it comes once the connection is open or with the client's last
// handshake message.
func TestTLSTruncatedRecord(t *testing.T) {
	for _, v := range []struct {
		name   string
		config *tls.Config
	}{{"open", testcert.Server()}, {"handshaking", slowVerify(100 * time.Millisecond)}} {
		t.Run(v.name, func(t *testing.T) {
			closes := newCloseRecorder()
			got := make(chan string, 8)
			h := &funcHandler{
				data: func(c *Conn) {
					b, _ := c.Next(-1)
					got <- string(b)
					c.Write(b)
				},
				close: closes.record,
			}
			_, addr := serveTLSConfig(t, h, Options{Loops: 1}, v.config)
			raw, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			held := &batchConn{Conn: raw}
			cfg := testcert.Client()
			cfg.MinVersion = tls.VersionTLS13
			c := tls.Client(held, cfg)
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if err := c.Handshake(); err != nil {
				t.Fatal(err)
			}
			if v.name == "open" {
				if b, err := roundTrip(c, []byte("whole")); err != nil || string(b) != "whole" {
					t.Fatalf("round trip: %q, %v", b, err)
				}
				<-got
			}
			held.hold = true
			c.Write([]byte("cut short"))
			record := held.buf
			raw.Write(record[:len(record)-3])
			raw.(*net.TCPConn).CloseWrite()
			if err := closes.next(t); err != io.ErrUnexpectedEOF {
				t.Fatalf("OnClose: %v, want io.ErrUnexpectedEOF", err)
			}
			select {
			case b := <-got:
				t.Fatalf("OnData handed %q from a record cut short", b)
			default:
			}
		})
	}
}

// TestTLSShutdownStuckGetCertificate: Shutdown returns at its context's
// end with its error, and Close at once, though a handshake's
// GetCertificate ignores the context it is given (an ACME client
// issuing a certificate, say); the handshake's goroutine ends when
// GetCertificate returns.
func TestTLSShutdownStuckGetCertificate(t *testing.T) {
	for _, name := range []string{"Shutdown", "Close"} {
		t.Run(name, func(t *testing.T) {
			config := testcert.Server()
			cert := config.Certificates[0]
			config.Certificates = nil
			called, release := make(chan struct{}, 1), make(chan struct{})
			config.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
				called <- struct{}{}
				<-release
				return &cert, nil
			}
			srv, addr := listenTLSUnmanaged(t, Options{Loops: 1, Logger: quietLogger()}, config)
			dialed := make(chan struct{})
			go func() {
				defer close(dialed)
				if c, err := tls.Dial("tcp", addr.String(), testcert.Client()); err == nil {
					c.Close()
				}
			}()
			<-called
			stuck := time.AfterFunc(10*time.Second, func() { close(release) })
			start := time.Now()
			if name == "Shutdown" {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				if err := srv.Shutdown(ctx); err != context.DeadlineExceeded {
					t.Errorf("Shutdown: %v, want context.DeadlineExceeded", err)
				}
			} else {
				srv.Close()
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("%s took %v, waiting for GetCertificate", name, d)
			}
			if stuck.Stop() {
				close(release)
			}
			<-dialed
		})
	}
}
