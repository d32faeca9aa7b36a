package http1_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
)

// twin is one of the two servers a test expects the same answers of: an
// http1.Server and net/http's.
type twin struct {
	name, addr string
}

// serveTwins serves h with an http1.Server, adjusted by cfg, and with
// net/http's Server, adjusted by cfgStd; either may be nil.
func serveTwins(t *testing.T, h http.Handler, cfg func(*http1.Server), cfgStd func(*http.Server)) []twin {
	t.Helper()
	srv := &http1.Server{Handler: h}
	if cfg != nil {
		cfg(srv)
	}
	ev := serve(t, srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	if cfgStd != nil {
		cfgStd(hs)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		hs.Serve(ln)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			hs.Close()
		}
		<-served
	})
	return []twin{{"evloop", ev}, {"net/http", ln.Addr().String()}}
}

// peekHead returns the head of the next answer on c as it came: the
// status line and the fields, up to the empty line. It does not consume
// it.
func (c *rawConn) peekHead() string {
	c.t.Helper()
	for n := 4; n <= c.br.Size(); n++ {
		b, err := c.br.Peek(n)
		if err != nil {
			c.t.Fatalf("reading an answer's head: %q, %v", b, err)
		}
		if bytes.HasSuffix(b, []byte("\r\n\r\n")) {
			return string(b)
		}
	}
	c.t.Fatal("an answer's head longer than the reader's buffer")
	return ""
}

// get sends a GET for path and reads the answer: its head as it came,
// the response, and its body.
func (c *rawConn) get(path string) (string, *http.Response, string) {
	c.t.Helper()
	c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
	head := c.peekHead()
	resp, body := c.read("GET")
	return head, resp, body
}

// fields returns the values of head's name fields, as they came.
func fields(head, name string) []string {
	var vv []string
	for line := range strings.SplitSeq(head, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
			vv = append(vv, strings.TrimSpace(v))
		}
	}
	return vv
}

// The head of a pooled handler's answer holds the header as it was at
// WriteHeader: later changes go nowhere, but for the declared trailers'
// values, which go to the trailer. A Content-Length set late does not join
// the chunked framing.
func TestStdHeaderAtWriteHeader(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/length":
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Content-Length", "3")
			io.WriteString(w, "hello world")
			w.(http.Flusher).Flush()
			io.WriteString(w, "more")
		case "/after-write":
			io.WriteString(w, "x")
			w.Header().Set("X-Late", "1")
		case "/kept-map":
			header := w.Header()
			w.WriteHeader(http.StatusOK)
			header.Set("X-Late", "1")
			io.WriteString(w, "x")
		case "/trailer":
			w.Header().Set("Trailer", "X-Sum")
			io.WriteString(w, "data")
			w.Header().Set("X-Sum", "42")
		}
	})
	tests := []struct {
		path    string
		body    string
		absent  string // a field the head must not have
		trailer string // X-Sum in the trailer
	}{
		{path: "/length", body: "hello worldmore", absent: "Content-Length"},
		{path: "/after-write", body: "x", absent: "X-Late"},
		{path: "/kept-map", body: "x", absent: "X-Late"},
		{path: "/trailer", body: "data", absent: "X-Sum", trailer: "42"},
	}
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			for _, tc := range tests {
				head, resp, body := c.get(tc.path)
				if v := fields(head, tc.absent); v != nil {
					t.Errorf("GET %s: head has %s: %q", tc.path, tc.absent, v)
				}
				if body != tc.body || resp.Trailer.Get("X-Sum") != tc.trailer {
					t.Errorf("GET %s: body %q, trailer X-Sum %q; want %q, %q",
						tc.path, body, resp.Trailer.Get("X-Sum"), tc.body, tc.trailer)
				}
			}
		})
	}
}

// A handler that wrote its answer's head before reading a body sent with
// "Expect: 100-continue" gets no "100 Continue" sent: it cannot follow the
// final status. The connection closes after the answer, the body not
// having been read when its head went out.
func TestStdNoContinueAfterHead(t *testing.T) {
	firstRead := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "head-first;")
		w.(http.Flusher).Flush()
		b := make([]byte, 3)
		if _, err := io.ReadFull(r.Body, b[:1]); err != nil { // the rest is not sent yet
			t.Errorf("reading the body's first byte: %v", err)
		}
		firstRead <- struct{}{}
		if _, err := io.ReadFull(r.Body, b[1:]); err != nil {
			t.Errorf("reading the rest of the body: %v", err)
		}
		io.WriteString(w, "body="+string(b))
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
			if head := c.peekHead(); !strings.HasPrefix(head, "HTTP/1.1 200 ") {
				t.Fatalf("first answer: %q; want 200, no 100 Continue", head)
			}
			resp, err := http.ReadResponse(c.br, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.send("a")
			<-firstRead
			c.send("bc")
			b, err := io.ReadAll(resp.Body)
			if string(b) != "head-first;body=abc" || err != nil {
				t.Fatalf("body = %q, %v; want %q", b, err, "head-first;body=abc")
			}
			if !resp.Close {
				t.Error("the answer keeps the connection")
			}
			c.closed()
		})
	}
}

// A body sent with "Expect: 100-continue" that the handler does not read:
// the answer says "Connection: close" and the connection closes, whether
// or not the client sent the body; the bytes after the head are not read
// as a request. A body the handler read leaves the connection open.
func TestStdExpectContinueUnread(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/denied":
			http.Error(w, "denied", http.StatusUnauthorized)
		case "/read":
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, "read "+string(b))
		default:
			io.WriteString(w, "path "+r.URL.Path)
		}
	})
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST /denied HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
			resp, body := c.read("POST")
			if resp.StatusCode != 401 || !resp.Close {
				t.Fatalf("POST /denied: %d close=%v %q; want 401, Connection: close", resp.StatusCode, resp.Close, body)
			}
			c.send("abc" + smuggled)
			c.closed()

			c = dialRaw(t, s.addr)
			c.send("POST /read HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
			if resp, _ := c.read("POST"); resp.StatusCode != 100 {
				t.Fatalf("POST /read: %d; want 100 first", resp.StatusCode)
			}
			c.send("abc")
			if resp, body := c.read("POST"); body != "read abc" || resp.Close {
				t.Fatalf("POST /read: %q close=%v; want %q, kept", body, resp.Close, "read abc")
			}
			c.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			if _, body := c.read("GET"); body != "path /next" {
				t.Fatalf("GET /next: %q", body)
			}
		})
	}
}

// "Connection: close" set by a pooled handler is kept: the connection
// closes after the answer, and a request pipelined behind is not answered.
// The answer has one Connection field.
func TestStdHandlerConnectionClose(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bye":
			w.Header().Set("Connection", "close")
		case "/bad":
			// As http.ServeMux answers a request it cannot route.
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		io.WriteString(w, "path "+r.URL.Path)
	})
	tests := []struct {
		name, req string
		status    int
	}{
		{"HTTP/1.1", "GET /bye HTTP/1.1\r\nHost: x\r\n\r\n", 200},
		{"HTTP/1.0 keep-alive", "GET /bye HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 200},
		{"400", "GET /bad HTTP/1.1\r\nHost: x\r\n\r\n", 400},
	}
	for _, s := range serveTwins(t, mux, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			for _, tc := range tests {
				c := dialRaw(t, s.addr)
				c.send(tc.req + "GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
				head := c.peekHead()
				if resp, _ := c.read("GET"); resp.StatusCode != tc.status {
					t.Fatalf("%s: %d; want %d", tc.name, resp.StatusCode, tc.status)
				}
				if v := fields(head, "Connection"); len(v) != 1 || v[0] != "close" {
					t.Errorf("%s: Connection fields %q; want one, close", tc.name, v)
				}
				c.closed()
			}
		})
	}
}

// Past Server.ReadTimeout, a pooled handler's read of the body fails with
// a timeout error, and the answer it writes then is sent; the connection
// closes after it.
func TestStdReadTimeoutAnswered(t *testing.T) {
	const d = 200 * time.Millisecond
	readErrs := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		readErrs <- err
		if n != 3 {
			t.Errorf("read %d bytes of the body; want 3", n)
		}
		io.WriteString(w, "too slow")
	})
	servers := serveTwins(t, h,
		func(s *http1.Server) { s.ReadTimeout = d },
		func(s *http.Server) { s.ReadTimeout = d })
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
			if err := recvErr(t, readErrs); !isDeadlineError(err) {
				t.Fatalf("Read = %v; want a timeout with os.ErrDeadlineExceeded", err)
			}
			resp, body := c.read("POST")
			if resp.StatusCode != 200 || body != "too slow" || !resp.Close {
				t.Fatalf("answer: %d %q close=%v; want 200 %q, Connection: close", resp.StatusCode, body, resp.Close, "too slow")
			}
			c.closed()
		})
	}
}

// 204 and 304 answers have no Content-Length (nor, for 304, Content-Type)
// even when the handler set one, and keep the connection; 1xx answers
// leave out the fields that describe a body.
func TestStdNoBodyStatusFields(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2")
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		case "/103":
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "ok")
		}
	})
	tests := []struct {
		path   string
		status int
		absent []string
	}{
		{"/204", 204, []string{"Content-Length"}},
		{"/304", 304, []string{"Content-Length", "Content-Type"}},
		{"/103", 103, []string{"Content-Length"}},
	}
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			for _, tc := range tests {
				head, resp, _ := c.get(tc.path)
				if resp.StatusCode != tc.status || resp.Close {
					t.Fatalf("GET %s: %d close=%v; want %d, kept", tc.path, resp.StatusCode, resp.Close, tc.status)
				}
				for _, name := range tc.absent {
					if v := fields(head, name); v != nil {
						t.Errorf("GET %s: head has %s: %q", tc.path, name, v)
					}
				}
				if tc.status == 103 {
					if v := fields(head, "Link"); len(v) != 1 {
						t.Errorf("GET %s: Link fields %q; want the one set", tc.path, v)
					}
					if _, body := c.read("GET"); body != "ok" {
						t.Errorf("GET %s: final body %q", tc.path, body)
					}
				}
			}
		})
	}
}

// A HEAD answer's Content-Type is sniffed from what the handler wrote, as
// a GET answer's.
func TestStdHeadSniffed(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html><body>hi</body></html>")
		if r.URL.Path == "/flushed" {
			w.(http.Flusher).Flush()
		}
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			for _, path := range []string{"/", "/flushed"} {
				c.send("HEAD " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
				if resp, _ := c.read("HEAD"); resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
					t.Errorf("HEAD %s: Content-Type %q; want text/html; charset=utf-8", path, resp.Header.Get("Content-Type"))
				}
			}
		})
	}
}

// http.ResponseController's EnableFullDuplex succeeds: a pooled handler
// may read the body while it writes.
func TestStdEnableFullDuplex(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Errorf("EnableFullDuplex = %v; want nil", err)
		}
		io.WriteString(w, "hdr;")
		w.(http.Flusher).Flush()
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n")
			c.peekHead() // the answer began before the body came
			c.send("abc")
			if _, body := c.read("POST"); body != "hdr;abc" {
				t.Fatalf("body %q; want %q", body, "hdr;abc")
			}
		})
	}
}

// A body left unread, longer than the server drops to reach the next
// request: the answer, sent after the handler returned, says "Connection:
// close", and the connection closes.
func TestStdUnreadBodyTooLong(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" + strings.Repeat("a", 1000))
			if resp, body := c.read("POST"); body != "ignored" || !resp.Close {
				t.Fatalf("answer %q close=%v; want %q, Connection: close", body, resp.Close, "ignored")
			}
			c.closed()
		})
	}
}

// What is left of an unread body counts whether it arrived or not: a
// body of 300 KiB, of which 100 KiB came before the handler returned, is
// too long to drop, as it is for net/http's server.
func TestStdUnreadBodyPartlyArrived(t *testing.T) {
	const size, sent = 300 << 10, 100 << 10
	arrived := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-arrived
		io.WriteString(w, "ignored")
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send(fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size) + strings.Repeat("a", sent))
			arrived <- struct{}{}
			if resp, body := c.read("POST"); body != "ignored" || !resp.Close {
				t.Fatalf("answer %q close=%v; want %q, Connection: close", body, resp.Close, "ignored")
			}
			c.closed()
		})
	}
}

// A short chunked body left unread is dropped to reach the next request,
// which is served on the same connection.
func TestStdUnreadChunkedBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	var body strings.Builder
	for range 3 {
		body.WriteString("1000\r\n" + strings.Repeat("a", 4096) + "\r\n")
	}
	body.WriteString("0\r\n\r\n")
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + body.String() +
				"GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, body := c.read("POST"); body != "ignored" || resp.Close {
				t.Fatalf("answer %q close=%v; want %q, kept alive", body, resp.Close, "ignored")
			}
			if resp, body := c.read("GET"); body != "ignored" || resp.Close {
				t.Fatalf("next answer %q close=%v; want %q, kept alive", body, resp.Close, "ignored")
			}
		})
	}
}

// A chunked body left unread is dropped before the answer goes out, as
// net/http's server drops it, so that the answer's head can tell whether
// the connection stays open: the answer waits for the body's end.
func TestStdUnreadChunkedBodyHeld(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
			c.nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if b, err := c.br.Peek(1); err == nil {
				t.Fatalf("answered %q before the body's end", b)
			} else if !isTimeout(err) {
				t.Fatal(err)
			}
			c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			c.send("5\r\nworld\r\n0\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, body := c.read("POST"); body != "ignored" || resp.Close {
				t.Fatalf("answer %q close=%v; want %q, kept alive", body, resp.Close, "ignored")
			}
			if resp, body := c.read("GET"); body != "ignored" || resp.Close {
				t.Fatalf("next answer %q close=%v; want %q, kept alive", body, resp.Close, "ignored")
			}
		})
	}
}

// An unread chunked body longer than the server drops: the answer says
// "Connection: close", and the connection closes after it.
func TestStdUnreadChunkedBodyTooLong(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	chunk := "4000\r\n" + strings.Repeat("a", 16<<10) + "\r\n"
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			sent := make(chan struct{})
			go func() { // the server may stop reading before the end
				defer close(sent)
				io.WriteString(c.nc, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
				for range 20 { // 320 KiB
					if _, err := io.WriteString(c.nc, chunk); err != nil {
						return
					}
				}
				io.WriteString(c.nc, "0\r\n\r\n")
			}()
			if resp, body := c.read("POST"); body != "ignored" || !resp.Close {
				t.Fatalf("answer %q close=%v; want %q, Connection: close", body, resp.Close, "ignored")
			}
			c.closed()
			<-sent
		})
	}
}

// An unread chunked body cut short by the client's EOF, or malformed: the
// answer still goes out, with "Connection: close".
func TestStdUnreadChunkedBodyBroken(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			for _, tc := range []struct {
				name, rest string
				eof        bool
			}{
				{"eof", "", true},
				{"malformed", "zz\r\nhello\r\n", false},
			} {
				c := dialRaw(t, s.addr)
				c.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n" + tc.rest)
				if tc.eof {
					c.nc.(*net.TCPConn).CloseWrite()
				}
				if resp, body := c.read("POST"); body != "ignored" || !resp.Close {
					t.Fatalf("%s: answer %q close=%v; want %q, Connection: close", tc.name, body, resp.Close, "ignored")
				}
				c.closed()
			}
		})
	}
}

// An unread chunked body whose rest does not come within ReadTimeout: the
// answer goes out then, with "Connection: close".
func TestStdUnreadChunkedBodyTimeout(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") })
	const timeout = 300 * time.Millisecond
	servers := serveTwins(t, h, func(s *http1.Server) { s.ReadTimeout = timeout },
		func(s *http.Server) { s.ReadTimeout = timeout })
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
			if resp, body := c.read("POST"); body != "ignored" || !resp.Close {
				t.Fatalf("answer %q close=%v; want %q, Connection: close", body, resp.Close, "ignored")
			}
			c.closed()
		})
	}
}

// The answer does not wait for the end of an unread chunked body when the
// connection closes after it anyway, or when the handler enabled full
// duplex: net/http's server skips its drop before the head then too.
func TestStdUnreadChunkedBodyNotHeld(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/close":
			w.Header().Set("Connection", "close")
		case "/duplex":
			http.NewResponseController(w).EnableFullDuplex()
		}
		io.WriteString(w, "ignored")
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			for _, tc := range []struct {
				path  string
				close bool
			}{{"/close", true}, {"/duplex", false}} {
				c := dialRaw(t, s.addr)
				c.send("POST " + tc.path + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
				c.nc.SetReadDeadline(time.Now().Add(3 * time.Second))
				if resp, body := c.read("POST"); body != "ignored" || resp.Close != tc.close {
					t.Fatalf("%s: answer %q close=%v; want %q, close=%v", tc.path, body, resp.Close, "ignored", tc.close)
				}
			}
		})
	}
}

// A handler that set its own read deadline and left a chunked body
// unread: the answer still goes out, with "Connection: close", when the
// rest does not come (within IdleTimeout here, the read deadline for
// net/http's server).
func TestStdUnreadChunkedBodyReadDeadline(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		io.WriteString(w, "ignored")
	})
	const timeout = 200 * time.Millisecond
	servers := serveTwins(t, h, func(s *http1.Server) {
		s.ReadTimeout, s.ReadHeaderTimeout, s.IdleTimeout = timeout, timeout, timeout
	}, func(s *http.Server) { s.ReadTimeout = timeout })
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
			c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			if resp, body := c.read("POST"); body != "ignored" || !resp.Close {
				t.Fatalf("answer %q close=%v; want %q, Connection: close", body, resp.Close, "ignored")
			}
			c.closed()
		})
	}
}

// A chunked body over MaxBodyBytes: the handler reads the bytes up to the
// limit, then *http.MaxBytesError, as from http.MaxBytesReader.
func TestStdChunkedBodyLimit(t *testing.T) {
	const limit = 100
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var tooLarge *http.MaxBytesError
		if len(b) != limit || !errors.As(err, &tooLarge) {
			t.Errorf("ReadAll(r.Body) = %d bytes, %v; want %d, *http.MaxBytesError", len(b), err, limit)
		}
	})
	limited := func(s *http.Server) {
		s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			h.ServeHTTP(w, r)
		})
	}
	servers := serveTwins(t, h, func(s *http1.Server) { s.MaxBodyBytes = limit }, limited)
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" +
				strings.Repeat("a", limit+1) + "\r\n0\r\n\r\n")
			if resp, _ := c.read("POST"); resp.StatusCode != 200 || !resp.Close {
				t.Fatalf("answer %d close=%v; want 200, Connection: close", resp.StatusCode, resp.Close)
			}
			c.closed()
		})
	}
}

// "OPTIONS *" asks about the server, not a resource: the server answers
// it, 200 with an empty body, and the handler never sees it.
func TestStdOptionsStar(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	})
	check := func(t *testing.T, addr string) {
		c := dialRaw(t, addr)
		for _, req := range []string{
			"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
			"OPTIONS * HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
		} {
			c.send(req)
			head := c.peekHead()
			resp, body := c.read("OPTIONS")
			if resp.StatusCode != http.StatusOK || body != "" || resp.Close {
				t.Fatalf("OPTIONS *: %d %q close=%v; want 200, no body, kept", resp.StatusCode, body, resp.Close)
			}
			if v := fields(head, "Content-Length"); len(v) != 1 || v[0] != "0" {
				t.Errorf("OPTIONS *: Content-Length %q; want 0", v)
			}
		}
		// The connection serves the next request as usual.
		if _, resp, _ := c.get("/"); resp.StatusCode != http.StatusTeapot {
			t.Errorf("GET / after OPTIONS *: %d; want the handler's 418", resp.StatusCode)
		}
	}
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) { check(t, s.addr) })
	}
	t.Run("fast routes", func(t *testing.T) {
		srv := &http1.Server{}
		srv.HandleFastFunc("/", func(w *http1.Response, r *http1.Request) { w.WriteHeader(http.StatusTeapot) })
		check(t, serve(t, srv))
	})
}

// A handler's own Transfer-Encoding keeps its framing: "chunked" is
// chunked although the whole body is known when the handler returns, and
// "identity" sends the body without a length and closes the connection.
func TestStdHandlerTransferEncoding(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Transfer-Encoding", r.URL.Query().Get("te"))
		io.WriteString(w, "abc")
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			head, resp, body := c.get("/?te=chunked")
			if body != "abc" || fields(head, "Content-Length") != nil ||
				len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" || resp.Close {
				t.Fatalf("te=chunked: head %q, body %q; want chunked abc, kept", head, body)
			}
			head, resp, body = c.get("/?te=identity")
			if body != "abc" || fields(head, "Content-Length") != nil || fields(head, "Transfer-Encoding") != nil || !resp.Close {
				t.Fatalf("te=identity: head %q, body %q; want abc to the connection's end", head, body)
			}
			c.closed()
		})
	}
}

// A chunked request's trailer reaches a pooled handler as net/http's
// server gives it: the keys its Trailer field declares in Request.Trailer
// before the body is read (the field itself out of the header), their
// values, and any others sent, once the body is read to its end.
func TestStdRequestTrailer(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, declared := r.Trailer["X-Sum"]
		before := r.Trailer.Get("X-Sum")
		io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "declared=%v before=%q X-Sum=%q X-More=%q field=%q", declared, before,
			r.Trailer.Get("X-Sum"), r.Trailer.Values("X-More"), r.Header.Get("Trailer"))
	})
	const req = "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: x-sum\r\n\r\n" +
		"3\r\nabc\r\n0\r\nX-Sum:  42 \r\nx-more: a\r\nX-More: b\r\n\r\n"
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send(req)
			const want = `declared=true before="" X-Sum="42" X-More=["a" "b"] field=""`
			if _, body := c.read("POST"); body != want {
				t.Errorf("handler saw %s; want %s", body, want)
			}
		})
	}
}

// The read that takes the last bytes of a Content-Length body returns
// io.EOF with them, as net/http's body does.
func TestStdLastReadEOF(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 100)
		got := 0
		var err error
		for err == nil && got < 5 {
			var n int
			n, err = r.Body.Read(b)
			got += n
		}
		fmt.Fprintf(w, "%d %v", got, err)
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			c := dialRaw(t, s.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
			if _, body := c.read("POST"); body != "5 EOF" {
				t.Fatalf("the read of the last bytes gave %q; want %q", body, "5 EOF")
			}
		})
	}
}

// A Trailer field is read as net/http's server reads it: with a chunked
// body it leaves the header, and naming no field, Request.Trailer stays
// nil; naming one that may not be a trailer, the request is refused with
// 400. With another body it stays in the header, unread.
func TestStdDeclaredTrailer(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "nil=%v field=%q", r.Trailer == nil, r.Header.Get("Trailer"))
	})
	for _, s := range serveTwins(t, h, nil, nil) {
		t.Run(s.name, func(t *testing.T) {
			for _, tc := range []struct{ body, trailer, want string }{
				{"chunked", ",", `200 nil=true field=""`},
				{"chunked", "Content-Length", "400"},
				{"length", "Transfer-Encoding", `200 nil=true field="Transfer-Encoding"`},
				{"length", "X-Sum", `200 nil=true field="X-Sum"`},
			} {
				c := dialRaw(t, s.addr)
				if tc.body == "chunked" {
					c.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: " + tc.trailer + "\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
				} else {
					c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTrailer: " + tc.trailer + "\r\n\r\nabc")
				}
				resp, body := c.read("POST")
				got := strconv.Itoa(resp.StatusCode)
				if resp.StatusCode == 200 {
					got += " " + body
				}
				if got != tc.want {
					t.Errorf("%s body, Trailer: %s: %q; want %q", tc.body, tc.trailer, got, tc.want)
				}
			}
		})
	}
}
