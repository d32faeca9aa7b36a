package ws_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/internal/testpeer"
	"github.com/evloop/evloop/ws"
)

// fakeServer accepts connections and, after reading each one's request,
// serves it with serve, on goroutines the test waits for at its end.
// serve reports failures with t.Error.
func fakeServer(t *testing.T, serve func(nc net.Conn, br *bufio.Reader, req *http.Request)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(nc)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				serve(nc, br, req)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// answer101 is a valid answer to req, with extra header lines.
func answer101(req *http.Request, extra string) string {
	return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		ws.AcceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n" + extra + "\r\n"
}

// clientFrame reads a frame the client sent: its first byte, whether it
// was masked, its masking key, and its payload unmasked.
func clientFrame(br *bufio.Reader) (b0 byte, masked bool, mask [4]byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(br, h[:]); err != nil {
		return
	}
	b0, masked = h[0], h[1]&0x80 != 0
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var l [2]byte
		_, err = io.ReadFull(br, l[:])
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		_, err = io.ReadFull(br, l[:])
		n = binary.BigEndian.Uint64(l[:])
	}
	if err != nil {
		return
	}
	if masked {
		if _, err = io.ReadFull(br, mask[:]); err != nil {
			return
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(br, payload); err != nil {
		return
	}
	for i := range payload {
		payload[i] ^= mask[i%4]
	}
	return
}

// closeFrom reads the client's frames up to its close frame, checks that
// they are masked, and returns the close code (0 for none).
func closeFrom(br *bufio.Reader) (int, error) {
	for {
		b0, masked, _, p, err := clientFrame(br)
		if err != nil {
			return 0, err
		}
		if !masked {
			return 0, errors.New("client frame not masked")
		}
		if b0&0xF != 0x8 {
			continue
		}
		if len(p) < 2 {
			return 0, nil
		}
		return int(binary.BigEndian.Uint16(p)), nil
	}
}

// Answers that must not open a connection fail Dial with a
// *HandshakeError that gives the status and says why.
func TestDialBadAnswers(t *testing.T) {
	deflate := &ws.Options{Compression: true}
	cases := []struct {
		name   string
		answer func(req *http.Request) string
		o      *ws.Options
		status int
		reason string
	}{
		{"refused with a body", func(*http.Request) string {
			return "HTTP/1.1 403 Forbidden\r\nX-Why: policy\r\nContent-Length: 8\r\n\r\ngo away\n"
		}, nil, 403, "403 Forbidden"},
		{"200", func(*http.Request) string { return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" }, nil, 200, "200 OK"},
		{"redirect", func(*http.Request) string {
			return "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n"
		}, nil, 302, "302 Found"},
		{"wrong accept key", func(*http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
		}, nil, 101, "wrong Sec-WebSocket-Accept"},
		{"no accept key", func(*http.Request) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
		}, nil, 101, "wrong Sec-WebSocket-Accept"},
		{"no Upgrade", func(req *http.Request) string {
			return strings.Replace(answer101(req, ""), "Upgrade: websocket\r\n", "", 1)
		}, nil, 101, "without websocket in Upgrade"},
		{"no Connection", func(req *http.Request) string {
			return strings.Replace(answer101(req, ""), "Connection: Upgrade\r\n", "", 1)
		}, nil, 101, "without upgrade in Connection"},
		{"subprotocol not offered", func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Protocol: c\r\n")
		}, &ws.Options{Subprotocols: []string{"a", "b"}}, 101, `subprotocol "c", which was not offered`},
		{"subprotocol when none offered", func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Protocol: a\r\n")
		}, nil, 101, `subprotocol "a", which was not offered`},
		{"two subprotocols", func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Protocol: a, b\r\n")
		}, &ws.Options{Subprotocols: []string{"a", "b"}}, 101, "more than one subprotocol"},
		{"extension not offered", func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n")
		}, deflate, 101, `extension "x-webkit-deflate-frame", which was not offered`},
		{"permessage-deflate not offered", func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n")
		}, nil, 101, `extension "permessage-deflate", which was not offered`},
		{"permessage-deflate keeping its context", func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Extensions: permessage-deflate\r\n")
		}, deflate, 101, "without server_no_context_takeover"},
		{"permessage-deflate limiting the client's window", func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_max_window_bits=10\r\n")
		}, deflate, 101, "client_max_window_bits, which was not offered"},
		{"permessage-deflate twice", func(req *http.Request) string {
			return answer101(req, "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover, permessage-deflate; server_no_context_takeover\r\n")
		}, deflate, 101, "permessage-deflate twice"},
		{"not HTTP", func(*http.Request) string { return "SSH-2.0-OpenSSH_9.6\r\n" }, nil, 0, `not HTTP/1.x: "SSH-2.0`},
		{"malformed head", func(*http.Request) string { return "HTTP/1.1 abc\r\n\r\n" }, nil, 0, "malformed answer"},
	}
	d := newDialer(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
				io.WriteString(nc, tc.answer(req))
				io.Copy(io.Discard, br) // until the client closes
			})
			c, resp, err := d.Dial(context.Background(), "ws://"+addr+"/", nil, newRecorder(), tc.o)
			var herr *ws.HandshakeError
			if c != nil || !errors.As(err, &herr) {
				t.Fatalf("Dial = %v, %v; want a *HandshakeError", c, err)
			}
			if herr.Status != tc.status || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("Dial error %q, status %d; want %q, status %d", err, herr.Status, tc.reason, tc.status)
			}
			if tc.status == 0 {
				return
			}
			if resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("Dial's response %v, want status %d", resp, tc.status)
			}
			if tc.status == 302 && herr.Header.Get("Location") != "/elsewhere" {
				t.Fatalf("redirect's Location %q; want /elsewhere, not followed", herr.Header.Get("Location"))
			}
			if tc.status == 403 {
				body, _ := io.ReadAll(resp.Body)
				if string(body) != "go away\n" || herr.Header.Get("X-Why") != "policy" {
					t.Fatalf("refusal's body %q, header %v", body, herr.Header)
				}
			}
		})
	}

	t.Run("closed without an answer", func(t *testing.T) {
		addr := fakeServer(t, func(net.Conn, *bufio.Reader, *http.Request) {})
		_, _, err := d.Dial(context.Background(), "ws://"+addr+"/", nil, newRecorder(), nil)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Dial = %v, want io.ErrUnexpectedEOF", err)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		addr := testpeer.FreeAddr(t)
		if _, _, err := d.Dial(context.Background(), "ws://"+addr+"/", nil, newRecorder(), nil); err == nil {
			t.Fatal("Dial to a closed port succeeded")
		}
	})
}

// A refusal whose body does not all come within HandshakeTimeout fails
// Dial as a refusal, with its status and header fields, as one whose body
// the server cut short by closing does: Dial failed with the timeout's
// error, the refusal unsaid. HandshakeTimeout is 2 s, for the refusal's
// head to come within it on a loaded machine too.
func TestDialRefusalBodyStalls(t *testing.T) {
	addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
		io.WriteString(nc, "HTTP/1.1 403 Forbidden\r\nX-Why: policy\r\nContent-Length: 100\r\n\r\ngo away")
		io.Copy(io.Discard, br) // the rest never comes
	})
	d := &ws.Dialer{HandshakeTimeout: 2 * time.Second}
	t.Cleanup(func() { d.Close() })
	c, resp, err := d.Dial(context.Background(), "ws://"+addr+"/", nil, newRecorder(), nil)
	var herr *ws.HandshakeError
	if c != nil || !errors.As(err, &herr) || herr.Status != 403 || herr.Header.Get("X-Why") != "policy" {
		t.Fatalf("Dial = %v, %v; want a *HandshakeError with status 403 and its header fields", c, err)
	}
	if resp == nil || resp.StatusCode != 403 {
		t.Fatalf("Dial's response %v; want the refusal", resp)
	}
}

// Frames a server must not send fail the connection with the RFC's close
// code: the client sends a close frame with it, masked, and OnClose gets
// it. The bad frames come in the same write as the 101 answer.
func TestDialBadFrames(t *testing.T) {
	cases := []struct {
		name   string
		frame  []byte
		code   int
		reason string
	}{
		{"masked", []byte{0x81, 0x82, 1, 2, 3, 4, 'h' ^ 1, 'i' ^ 2}, ws.CloseProtocolError, "server frame masked"},
		{"reserved opcode", []byte{0x83, 0}, ws.CloseProtocolError, "reserved opcode"},
		{"RSV1 without deflate", []byte{0xC1, 1, 'a'}, ws.CloseProtocolError, "RSV1"},
		{"garbage", []byte("\x71\x7e\x7d garbage"), ws.CloseProtocolError, "reserved bits"},
		{"continuation first", []byte{0x80, 1, 'a'}, ws.CloseProtocolError, "continuation frame without a message"},
		{"fragmented ping", []byte{0x09, 0}, ws.CloseProtocolError, "fragmented control frame"},
		{"close code 999", []byte{0x88, 2, 0x03, 0xe7}, ws.CloseProtocolError, "invalid close code 999"},
		{"invalid UTF-8", []byte{0x81, 2, 0xff, 0xfe}, ws.CloseInvalidPayload, "not UTF-8"},
		{"16-bit length below 126", []byte{0x81, 126, 0, 2, 'h', 'i'}, ws.CloseProtocolError, "16-bit frame length below 126"},
		{"64-bit length below 65536", []byte{0x81, 127, 0, 0, 0, 0, 0, 0, 0, 2, 'h', 'i'}, ws.CloseProtocolError, "64-bit frame length below 65536"},
		{"64-bit length with its top bit set", []byte{0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 2, 'h', 'i'}, ws.CloseProtocolError, "most significant bit"},
		{"too big", append([]byte{0x82, 126, 0, 200}, make([]byte, 200)...), ws.CloseMessageTooBig, "too big"},
	}
	d := newDialer(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sent := make(chan int, 1)
			addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
				nc.Write(append([]byte(answer101(req, "")), tc.frame...))
				code, err := closeFrom(br)
				if err != nil {
					t.Errorf("reading the client's close: %v", err)
				}
				sent <- code
				if _, err := br.ReadByte(); err != io.EOF {
					t.Errorf("after its close frame the client sent more, or did not close: %v", err)
				}
			})
			r := newRecorder()
			dial(t, d, "ws://"+addr+"/", r, &ws.Options{MaxMessageSize: 100})
			if ce := r.closeCode(t, tc.code); !strings.Contains(ce.Reason, tc.reason) {
				t.Fatalf("OnClose reason %q, want %q", ce.Reason, tc.reason)
			}
			if code := <-sent; code != tc.code {
				t.Fatalf("client's close frame: code %d, want %d", code, tc.code)
			}
		})
	}
}

// What follows the 101 in the same write is read as frames: a message, a
// fragmented one with a ping between its fragments, a close. The client
// answers the pings, echoes the close, and waits for the server to close
// the TCP connection first (RFC 6455 section 7.1.1).
func TestDialFramesAfterAnswer(t *testing.T) {
	serverDone := make(chan struct{})
	addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
		defer close(serverDone)
		b := []byte(answer101(req, ""))
		b = ws.AppendFrame(b, true, ws.Text, []byte("first"), nil)
		b = ws.AppendFrame(b, false, ws.Text, []byte("frag"), nil)
		b = ws.AppendFrame(b, true, ws.Ping, []byte("p1"), nil)
		b = ws.AppendFrame(b, true, ws.Continuation, []byte("ment"), nil)
		b = ws.AppendFrame(b, true, ws.Ping, []byte("p2"), nil)
		nc.Write(b)
		for _, want := range []string{"p1", "p2"} {
			b0, masked, _, p, err := clientFrame(br)
			if err != nil || b0 != 0x8A || !masked || string(p) != want {
				t.Errorf("pong: %x masked=%v %q %v; want a masked pong %q", b0, masked, p, err, want)
				return
			}
		}
		nc.Write(ws.AppendFrame(nil, true, ws.CloseFrame, []byte{0x03, 0xe8, 'o', 'k'}, nil))
		if code, err := closeFrom(br); code != ws.CloseNormal || err != nil {
			t.Errorf("client's close: %d %v; want its echo of 1000", code, err)
			return
		}
		nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := br.ReadByte(); !isTimeout(err) {
			t.Errorf("after the close handshake the client did not wait for the server to close: %v", err)
		}
	})
	d := newDialer(t)
	r := newRecorder()
	dial(t, d, "ws://"+addr+"/", r, nil)
	for _, want := range []string{"first", "fragment"} {
		if m := r.message(t); m.op != ws.Text || m.data != want {
			t.Fatalf("message %v %q, want text %q", m.op, m.data, want)
		}
	}
	<-serverDone
	if ce := r.closeCode(t, ws.CloseNormal); ce.Reason != "ok" {
		t.Fatalf("close reason %q", ce.Reason)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Every frame a client sends is masked, each with a key of its own.
func TestDialMasks(t *testing.T) {
	masks := make(chan [4]byte, 16)
	addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
		io.WriteString(nc, answer101(req, ""))
		for range 6 {
			_, masked, mask, _, err := clientFrame(br)
			if err != nil || !masked {
				t.Errorf("frame: masked=%v, %v", masked, err)
				return
			}
			masks <- mask
		}
	})
	d := newDialer(t)
	c := dial(t, d, "ws://"+addr+"/", newRecorder(), nil)
	for range 4 {
		c.Send(ws.Binary, []byte("same payload"))
	}
	c.Submit(func() {
		c.WriteMessage(ws.Binary, []byte("same payload"))
		c.Ping(nil)
	})
	seen := map[[4]byte]bool{}
	for range 6 {
		seen[recv(t, masks, "frame at the server")] = true
	}
	if len(seen) != 6 {
		t.Fatalf("6 frames with %d distinct masking keys", len(seen))
	}
}

// A server that never answers: Dial gives up at HandshakeTimeout, or when
// its context ends.
func TestDialHandshakeTimeout(t *testing.T) {
	silent := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
		io.Copy(io.Discard, br)
	})
	halfway := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
		io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n")
		io.Copy(io.Discard, br)
	})
	d := &ws.Dialer{HandshakeTimeout: 200 * time.Millisecond}
	t.Cleanup(func() { d.Close() })
	for _, addr := range []string{silent, halfway} {
		start := time.Now()
		c, _, err := d.Dial(context.Background(), "ws://"+addr+"/", nil, newRecorder(), nil)
		if c != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Dial = %v, %v; want context.DeadlineExceeded", c, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("Dial gave up after %v, with a timeout of 200ms", took)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	d2 := &ws.Dialer{HandshakeTimeout: -1}
	t.Cleanup(func() { d2.Close() })
	if _, _, err := d2.Dial(ctx, "ws://"+silent+"/", nil, newRecorder(), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial = %v, want context.Canceled", err)
	}
}

// The opening handshake: the fields it must send, the caller's extra
// fields, and the requests it refuses to make.
func TestDialRequest(t *testing.T) {
	reqs := make(chan *http.Request, 4)
	addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
		reqs <- req
		io.WriteString(nc, answer101(req, "Sec-WebSocket-Protocol: b\r\n"))
		io.Copy(io.Discard, br)
	})
	d := newDialer(t)
	header := http.Header{
		"Origin":     {"http://example.com"},
		"User-Agent": {"evloop-test"},
		"X-Trace":    {"1", "2"},
		"Host":       {"example.com:8080"},
	}
	o := &ws.Options{Subprotocols: []string{"a", "b"}, Compression: true}
	var keys []string
	for range 2 {
		c, resp, err := d.Dial(context.Background(), "ws://"+addr+"/path?q=1#frag", header, newRecorder(), o)
		if err != nil {
			t.Fatal(err)
		}
		if c.Subprotocol() != "b" || c.Compressed() || resp.Header.Get("Sec-WebSocket-Protocol") != "b" {
			t.Fatalf("Subprotocol() = %q, Compressed() = %v", c.Subprotocol(), c.Compressed())
		}
		req := <-reqs
		h := req.Header
		switch {
		case req.Method != "GET" || req.RequestURI != "/path?q=1" || req.Proto != "HTTP/1.1":
			t.Fatalf("request line %s %s %s", req.Method, req.RequestURI, req.Proto)
		case req.Host != "example.com:8080":
			t.Fatalf("Host %q", req.Host)
		case h.Get("Upgrade") != "websocket" || h.Get("Connection") != "Upgrade" || h.Get("Sec-WebSocket-Version") != "13":
			t.Fatalf("handshake fields %v", h)
		case h.Get("Origin") != "http://example.com" || h.Get("User-Agent") != "evloop-test" || len(h["X-Trace"]) != 2:
			t.Fatalf("extra fields %v", h)
		case h.Get("Sec-WebSocket-Protocol") != "a, b":
			t.Fatalf("Sec-WebSocket-Protocol %q", h.Get("Sec-WebSocket-Protocol"))
		case h.Get("Sec-WebSocket-Extensions") != "permessage-deflate; server_no_context_takeover; client_no_context_takeover":
			t.Fatalf("Sec-WebSocket-Extensions %q", h.Get("Sec-WebSocket-Extensions"))
		}
		key, err := base64.StdEncoding.DecodeString(h.Get("Sec-WebSocket-Key"))
		if err != nil || len(key) != 16 {
			t.Fatalf("Sec-WebSocket-Key %q: %d bytes, %v", h.Get("Sec-WebSocket-Key"), len(key), err)
		}
		keys = append(keys, string(key))
	}
	if keys[0] == keys[1] {
		t.Fatal("two dials sent the same Sec-WebSocket-Key")
	}

	if _, _, err := d.Dial(context.Background(), "ws://user:secret@"+addr+"/", nil, newRecorder(), o); err != nil {
		t.Fatal(err)
	}
	if user, password, ok := (<-reqs).BasicAuth(); !ok || user != "user" || password != "secret" {
		t.Fatalf("basic authentication from the URL: %q %q %v", user, password, ok)
	}

	for _, tc := range []struct {
		url    string
		header http.Header
		want   string
	}{
		{"ftp://" + addr + "/", nil, `scheme "ftp"`},
		{"ws:///path", nil, "no host"},
		{"ws://" + addr + "/", http.Header{"Sec-WebSocket-Key": {"x"}}, "sets the Sec-Websocket-Key field itself"},
		{"ws://" + addr + "/", http.Header{"X-Bad": {"a\r\nInjected: yes"}}, "invalid header field value"},
		{"ws://" + addr + "/", http.Header{"Bad Name": {"x"}}, "invalid header field name"},
	} {
		c, _, err := d.Dial(context.Background(), tc.url, tc.header, newRecorder(), nil)
		if c != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("Dial(%q, %v) = %v; want an error saying %q", tc.url, tc.header, err, tc.want)
		}
	}
}

// What a server sends after its close frame is read and dropped, not
// kept until the server closes: a client whose engine keeps at most 64
// KiB unread takes 32 MiB of it, then sees the close.
func TestDialDropsAfterClose(t *testing.T) {
	junk := make([]byte, 32<<20)
	wrote := make(chan error, 1)
	addr := fakeServer(t, func(nc net.Conn, br *bufio.Reader, req *http.Request) {
		nc.Write(ws.AppendFrame([]byte(answer101(req, "")), true, ws.CloseFrame, []byte{0x03, 0xe8}, nil))
		if code, err := closeFrom(br); code != ws.CloseNormal || err != nil {
			t.Errorf("client's close: %d %v; want its echo of 1000", code, err)
		}
		_, err := nc.Write(junk)
		wrote <- err
	})
	d := &ws.Dialer{HandshakeTimeout: 10 * time.Second, Engine: evloop.Options{Loops: 1, MaxInbound: 64 << 10}}
	t.Cleanup(func() { d.Close() })
	r := newRecorder()
	dial(t, d, "ws://"+addr+"/", r, &ws.Options{CloseTimeout: 10 * time.Second})
	if err := recv(t, wrote, "the server's write"); err != nil {
		t.Fatalf("server's write of 32 MiB after its close frame: %v; want the client to take it", err)
	}
	r.closeCode(t, ws.CloseNormal)
}
