package ws_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/ws"
	"github.com/gorilla/websocket"
)

// newDialer returns a Dialer with one loop, closed when the test ends.
func newDialer(t *testing.T) *ws.Dialer {
	t.Helper()
	d := &ws.Dialer{HandshakeTimeout: 10 * time.Second, Engine: evloop.Options{Loops: 1}}
	t.Cleanup(func() { d.Close() })
	return d
}

type received struct {
	op   ws.Opcode
	data string
}

// recorder is a client's Handler: it hands what it sees to the test.
type recorder struct {
	msgs   chan received
	pongs  chan string
	closed chan *ws.CloseError
}

func newRecorder() *recorder {
	return &recorder{msgs: make(chan received, 64), pongs: make(chan string, 16), closed: make(chan *ws.CloseError, 1)}
}

func (r *recorder) OnOpen(*ws.Conn) {}

func (r *recorder) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	r.msgs <- received{op, string(data)}
}

func (r *recorder) OnPong(c *ws.Conn, payload []byte) { r.pongs <- string(payload) }

func (r *recorder) OnClose(c *ws.Conn, err error) {
	var ce *ws.CloseError
	errors.As(err, &ce)
	r.closed <- ce
}

// recv waits for what ch brings.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

func (r *recorder) message(t *testing.T) received {
	t.Helper()
	return recv(t, r.msgs, "message")
}

// closeCode waits for OnClose and checks its code.
func (r *recorder) closeCode(t *testing.T, code int) *ws.CloseError {
	t.Helper()
	ce := recv(t, r.closed, "OnClose")
	if ce == nil || ce.Code != code {
		t.Fatalf("OnClose got %v, want code %d", ce, code)
	}
	return ce
}

// dial opens a client connection that the test closes at its end.
func dial(t *testing.T, d *ws.Dialer, url string, h ws.Handler, o *ws.Options) *ws.Conn {
	t.Helper()
	c, resp, err := d.Dial(context.Background(), url, nil, h, o)
	if err != nil {
		t.Fatalf("Dial(%s) = %v, %v", url, resp, err)
	}
	if resp.StatusCode != 101 {
		t.Fatalf("Dial(%s): status %d", url, resp.StatusCode)
	}
	return c
}

func message(size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString("héllo wörld ")
	}
	s := b.String()[:size]
	return strings.ToValidUTF8(s, "x")[:size]
}

// Dialer.Net is each connect's: the server sees the connection come from
// its LocalAddr.
func TestDialNet(t *testing.T) {
	addr := serve(t, &echo{}, nil)
	d := newDialer(t)
	d.Net.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}
	var seen string
	d.Net.Control = func(network, address string, _ syscall.RawConn) error {
		seen = network + " " + address
		return nil
	}
	r := newRecorder()
	c := dial(t, d, "ws://"+addr+"/fast", r, nil)
	got := make(chan net.Addr, 1)
	c.Submit(func() { got <- c.Conn().LocalAddr() })
	if a, _ := (<-got).(*net.TCPAddr); a == nil || !a.IP.Equal(net.IPv4(127, 0, 0, 2)) {
		t.Errorf("the connection's local address = %v; want 127.0.0.2", a)
	}
	if seen != "tcp4 "+addr {
		t.Errorf("Control saw %q; want %q", seen, "tcp4 "+addr)
	}
	c.CloseAsync(ws.CloseNormal, "")
}

// The client against this package's server: both upgrades, compression
// negotiated or not, messages of every length class sent from a goroutine
// (Send) and from the loop (WriteMessage).
func TestDialEcho(t *testing.T) {
	addr := serve(t, &echo{}, &ws.Options{Compression: true})
	d := newDialer(t)
	for _, path := range []string{"/fast", "/std"} {
		for _, compress := range []bool{false, true} {
			r := newRecorder()
			c := dial(t, d, "ws://"+addr+path, r, &ws.Options{Compression: compress, CompressionThreshold: 64})
			if c.Compressed() != compress {
				t.Fatalf("%s: Compressed() = %v, want %v", path, c.Compressed(), compress)
			}
			for _, size := range []int{0, 1, 125, 126, 127, 65535, 65536, 300_000} {
				msg := message(size)
				for _, op := range []ws.Opcode{ws.Text, ws.Binary} {
					c.Send(op, []byte(msg))
					if m := r.message(t); m.op != op || m.data != msg {
						t.Fatalf("%s compress=%v: Send %v of %d bytes echoed as %v of %d", path, compress, op, size, m.op, len(m.data))
					}
					c.Submit(func() { c.WriteMessage(op, []byte(msg)) })
					if m := r.message(t); m.op != op || m.data != msg {
						t.Fatalf("%s compress=%v: WriteMessage %v of %d bytes echoed as %v of %d", path, compress, op, size, m.op, len(m.data))
					}
				}
			}
			c.Submit(func() { c.Ping([]byte("are you there")) })
			if p := recv(t, r.pongs, "pong"); p != "are you there" {
				t.Fatalf("pong %q", p)
			}
			c.CloseAsync(4000, "bye")
			if ce := r.closeCode(t, 4000); ce.Reason != "bye" {
				t.Fatalf("close reason %q", ce.Reason)
			}
		}
	}
}

// closer closes the connection with the code a message names.
type closer struct{ echo }

func (cl *closer) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	if string(data) == "close" {
		c.Close(4001, "as asked")
		return
	}
	c.WriteMessage(op, data)
}

// Close handshakes begun by either side end with the code on both.
func TestDialCloseHandshake(t *testing.T) {
	srvSide := &closer{}
	addr := serve(t, srvSide, nil)
	d := newDialer(t)

	r := newRecorder()
	c := dial(t, d, "ws://"+addr+"/fast", r, nil)
	c.Send(ws.Text, []byte("close"))
	if ce := r.closeCode(t, 4001); ce.Reason != "as asked" {
		t.Fatalf("server's close: reason %q", ce.Reason)
	}
	if ce := srvSide.nextClose(t, 0); ce.Code != 4001 {
		t.Fatalf("server's OnClose: %v", ce)
	}

	r = newRecorder()
	c = dial(t, d, "ws://"+addr+"/fast", r, &ws.Options{CloseTimeout: time.Second})
	c.CloseAsync(ws.CloseNormal, "")
	r.closeCode(t, ws.CloseNormal)
	if ce := srvSide.nextClose(t, 1); ce.Code != ws.CloseNormal {
		t.Fatalf("server's OnClose: %v", ce)
	}
	errc := make(chan error, 1)
	c.Submit(func() { errc <- c.WriteMessage(ws.Text, []byte("late")) })
	if err := <-errc; !errors.Is(err, ws.ErrClosed) {
		t.Fatalf("WriteMessage after the close = %v, want ErrClosed", err)
	}
}

// Close refuses, sending nothing, a code a close frame may not carry and
// a reason that is not UTF-8; a reason too long for a control frame is
// cut at a character boundary, and OnClose has it cut as it was sent.
func TestCloseArguments(t *testing.T) {
	srvSide := &echo{}
	addr := serve(t, srvSide, nil)
	d := newDialer(t)
	r := newRecorder()
	c := dial(t, d, "ws://"+addr+"/fast", r, nil)
	closeOn := func(code int, reason string) error {
		errc := make(chan error, 1)
		c.Submit(func() { errc <- c.Close(code, reason) })
		return <-errc
	}
	for _, tc := range []struct {
		code   int
		reason string
	}{
		{0, ""}, {999, ""}, {1004, ""}, {ws.CloseNoStatus, ""}, {ws.CloseAbnormal, ""}, {1015, ""},
		{1016, ""}, {2999, ""}, {5000, ""},
		{ws.CloseNormal, "\xff"}, {ws.CloseNormal, "bye \xe2\x82"}, {4000, "\xed\xa0\x80"},
	} {
		want := ws.ErrCloseCode
		if tc.code == ws.CloseNormal || tc.code == 4000 {
			want = ws.ErrCloseReason
		}
		if err := closeOn(tc.code, tc.reason); err != want {
			t.Fatalf("Close(%d, %q) = %v; want %v", tc.code, tc.reason, err, want)
		}
		if err := c.CloseAsync(tc.code, tc.reason); err != want {
			t.Fatalf("CloseAsync(%d, %q) = %v; want %v", tc.code, tc.reason, err, want)
		}
	}
	c.Send(ws.Text, []byte("still open"))
	if m := r.message(t); m.data != "still open" {
		t.Fatalf("echo after the refused closes: %q", m.data)
	}
	long := strings.Repeat("€", 50) // 150 bytes
	if err := closeOn(4000, long); err != nil {
		t.Fatalf("Close(4000, 150 bytes) = %v", err)
	}
	if ce := srvSide.nextClose(t, 0); ce.Code != 4000 || ce.Reason != long[:123] {
		t.Fatalf("server's OnClose: %v; want 4000 and the reason's first 41 characters", ce)
	}
	if ce := r.closeCode(t, 4000); ce.Reason != long[:123] {
		t.Fatalf("client's OnClose: reason of %d bytes; want the 123 it sent", len(ce.Reason))
	}
}

// A client's messages past MaxMessageSize fail with 1009; its Workers
// deliver in order; its Group broadcasts reach it masked.
func TestDialOptions(t *testing.T) {
	g := &ws.Group{}
	addr := serve(t, &echo{}, &ws.Options{MaxMessageSize: 1 << 20})
	d := newDialer(t)

	r := newRecorder()
	c := dial(t, d, "ws://"+addr+"/fast", r, &ws.Options{MaxMessageSize: 1000})
	c.Send(ws.Binary, make([]byte, 1000))
	if m := r.message(t); len(m.data) != 1000 {
		t.Fatalf("echo of 1000 bytes: %d", len(m.data))
	}
	c.Send(ws.Binary, make([]byte, 1001))
	r.closeCode(t, ws.CloseMessageTooBig)

	o := &ws.Options{Workers: 2}
	t.Cleanup(o.CloseWorkers)
	r = newRecorder()
	c = dial(t, d, "ws://"+addr+"/fast", r, o)
	for i := range 50 {
		c.Send(ws.Text, []byte(strings.Repeat("m", i)))
	}
	for i := range 50 {
		if m := r.message(t); len(m.data) != i {
			t.Fatalf("pooled message %d: %d bytes", i, len(m.data))
		}
	}

	// A Group with a client member: the echo server masks nothing, so the
	// frame's masking shows in what it echoes back intact.
	r = newRecorder()
	c = dial(t, d, "ws://"+addr+"/fast", r, nil)
	added := make(chan struct{})
	c.Submit(func() { g.Add(c); close(added) })
	<-added
	done := make(chan struct{})
	g.Broadcast(ws.Text, []byte("to all"), nil, func() { close(done) })
	<-done
	if m := r.message(t); m.data != "to all" {
		t.Fatalf("broadcast echoed as %q", m.data)
	}
	c.Submit(func() { g.Remove(c) })
}

// gorillaServer serves gorilla/websocket's Upgrader on net/http: each
// connection echoes, pings once with "ping?" and closes with 4002 when
// told "close".
func gorillaServer(t *testing.T, up *websocket.Upgrader, pongs chan<- string) string {
	t.Helper()
	return gorillaServerWith(t, up, pongs, nil)
}

// gorillaServerWith is gorillaServer over TLS with config if not nil.
func gorillaServerWith(t *testing.T, up *websocket.Upgrader, pongs chan<- string, config *tls.Config) string {
	t.Helper()
	var wg sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		wg.Add(1)
		defer wg.Done()
		defer c.Close()
		c.SetPongHandler(func(p string) error { pongs <- p; return nil })
		c.WriteControl(websocket.PingMessage, []byte("ping?"), time.Now().Add(time.Second))
		for {
			op, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if string(msg) == "close" {
				c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4002, "gorilla says bye"))
				continue
			}
			if string(msg) == "fragmented" {
				w, _ := c.NextWriter(websocket.TextMessage)
				for range 10 {
					w.Write(bytes.Repeat([]byte("f"), 5000))
				}
				w.Close()
				continue
			}
			c.WriteMessage(op, msg)
		}
	}))
	if config != nil {
		srv.TLS = config
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(func() { srv.Close(); wg.Wait() })
	return srv.Listener.Addr().String()
}

// The client against gorilla/websocket's server on net/http.
func TestDialGorilla(t *testing.T) {
	pongs := make(chan string, 16)
	up := &websocket.Upgrader{EnableCompression: true, Subprotocols: []string{"chat", "superchat"}}
	addr := gorillaServer(t, up, pongs)
	d := newDialer(t)
	for _, compress := range []bool{false, true} {
		r := newRecorder()
		o := &ws.Options{Compression: compress, Subprotocols: []string{"superchat", "chat"}, CompressionThreshold: 1}
		c := dial(t, d, "ws://"+addr+"/", r, o)
		if c.Compressed() != compress || c.Subprotocol() != "chat" {
			t.Fatalf("compress=%v: Compressed() = %v, Subprotocol() = %q", compress, c.Compressed(), c.Subprotocol())
		}
		// gorilla's ping is answered.
		if p := recv(t, pongs, "pong at gorilla's end"); p != "ping?" {
			t.Fatalf("pong %q", p)
		}
		for _, size := range []int{0, 125, 126, 65536, 200_000} {
			msg := message(size)
			c.Send(ws.Text, []byte(msg))
			if m := r.message(t); m.op != ws.Text || m.data != msg {
				t.Fatalf("compress=%v: %d bytes echoed as %d", compress, size, len(m.data))
			}
		}
		c.Send(ws.Text, []byte("fragmented"))
		if m := r.message(t); m.data != strings.Repeat("f", 50000) {
			t.Fatalf("fragmented message: %d bytes", len(m.data))
		}
		c.Send(ws.Text, []byte("close"))
		if ce := r.closeCode(t, 4002); ce.Reason != "gorilla says bye" {
			t.Fatalf("reason %q", ce.Reason)
		}
	}

	// Closed by the client: gorilla reads the code.
	up2 := &websocket.Upgrader{}
	got := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up2.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		_, _, err = c.ReadMessage()
		got <- err
	}))
	defer srv.Close()
	r := newRecorder()
	c := dial(t, d, "ws://"+strings.TrimPrefix(srv.URL, "http://")+"/", r, nil)
	c.CloseAsync(4003, "client says bye")
	if err := recv(t, got, "close at gorilla's end"); !websocket.IsCloseError(err, 4003) {
		t.Fatalf("gorilla read %v, want close 4003", err)
	}
	r.closeCode(t, 4003)
}

// A host name is looked up and its addresses tried in turn (localhost may
// be ::1 first, where nothing listens); after Close, Dial fails.
func TestDialLifecycle(t *testing.T) {
	addr := serve(t, &echo{}, nil)
	_, port, _ := strings.Cut(addr, ":")
	d := &ws.Dialer{}
	r := newRecorder()
	c, _, err := d.Dial(context.Background(), "ws://localhost:"+port+"/fast", nil, r, nil)
	if err != nil {
		t.Fatalf("Dial(localhost) = %v", err)
	}
	c.Send(ws.Text, []byte("by name"))
	if m := r.message(t); m.data != "by name" {
		t.Fatalf("echo %q", m.data)
	}
	d.Close()
	r.closeCode(t, ws.CloseAbnormal) // Close ends connections without a close handshake
	if _, _, err := d.Dial(context.Background(), "ws://"+addr+"/fast", nil, newRecorder(), nil); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Dial after Close = %v, want net.ErrClosed", err)
	}
}

// A server may answer a permessage-deflate offer with
// server_max_window_bits, named in the offer or not (RFC 7692 section
// 7.1.2.1): the client inflates any window, so it takes the answer, and
// the server's compressed messages.
func TestDialDeflateWindow(t *testing.T) {
	msg := []byte(message(100))
	z := deflated(t, msg) // shorter than 126 bytes: a 7-bit length
	for _, ext := range []string{
		"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15",
		`permessage-deflate; server_max_window_bits="10"; server_no_context_takeover`,
	} {
		addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
			b := []byte(answer101(req, "Sec-WebSocket-Extensions: "+ext+"\r\n"))
			b = append(b, 0xC1, byte(len(z))) // FIN, RSV1, text
			nc.Write(append(b, z...))
			closeFrom(br)
		})
		d := newDialer(t)
		r := newRecorder()
		c := dial(t, d, "ws://"+addr+"/", r, &ws.Options{Compression: true})
		if !c.Compressed() {
			t.Fatalf("answer %q: Compressed() = false", ext)
		}
		if m := r.message(t); m.op != ws.Text || m.data != string(msg) {
			t.Fatalf("answer %q: message %v of %d bytes; want text of %d", ext, m.op, len(m.data), len(msg))
		}
		c.CloseAsync(ws.CloseNormal, "")
	}
}
