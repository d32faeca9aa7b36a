package http1_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
)

// keepAliveSetter is what http1's Server and net/http's have in common
// for these tests.
type keepAliveSetter interface{ SetKeepAlivesEnabled(bool) }

// SetKeepAlivesEnabled(false), as net/http's: idle connections close at
// once; a connection still waiting for its first request, younger than 5
// s, is answered and then closed, as is a new one; a request under way
// when the call came gets "Connection: close" and its connection closes
// after the answer, and so does one whose head went out before the call,
// without the field. Enabled again, connections serve more than one
// request.
func TestSetKeepAlivesEnabled(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			<-release
		case "/flushed":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-release
		}
		io.WriteString(w, "ok")
	})
	var servers []keepAliveSetter
	twins := serveTwins(t, h,
		func(s *http1.Server) { servers = append(servers, s) },
		func(s *http.Server) { servers = append(servers, s) })
	for i, s := range twins {
		t.Run(s.name, func(t *testing.T) {
			idle, fresh, slow, flushed := dialRaw(t, s.addr), dialRaw(t, s.addr), dialRaw(t, s.addr), dialRaw(t, s.addr)
			if head, _, _ := idle.get("/"); fields(head, "Connection") != nil {
				t.Fatalf("before: %q", head)
			}
			slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
			flushed.send("GET /flushed HTTP/1.1\r\nHost: x\r\n\r\n")
			flushedHead := flushed.peekHead() // written before the call
			servers[i].SetKeepAlivesEnabled(false)
			idle.closedWithin(5 * time.Second)
			release <- struct{}{}
			release <- struct{}{}
			slowHead := slow.peekHead()
			if _, body := slow.read("GET"); body != "ok" || !strings.EqualFold(strings.Join(fields(slowHead, "Connection"), ","), "close") {
				t.Errorf("the request under way: %q, %q; want ok with Connection: close", slowHead, body)
			}
			slow.closed()
			if _, body := flushed.read("GET"); body != "ok" || fields(flushedHead, "Connection") != nil {
				t.Errorf("the request whose head went out before: %q, %q; want ok, with no Connection field", flushedHead, body)
			}
			flushed.closed()
			for name, c := range map[string]*rawConn{"a connection with no request yet": fresh, "a new connection": dialRaw(t, s.addr)} {
				if head, _, body := c.get("/"); body != "ok" || !strings.EqualFold(strings.Join(fields(head, "Connection"), ","), "close") {
					t.Errorf("%s: %q, %q; want ok with Connection: close", name, head, body)
				}
				c.closed()
			}
			servers[i].SetKeepAlivesEnabled(true)
			again := dialRaw(t, s.addr)
			for range 2 {
				if head, _, body := again.get("/"); body != "ok" || fields(head, "Connection") != nil {
					t.Fatalf("enabled again: %q, %q", head, body)
				}
			}
		})
	}
}

// The fast routes follow SetKeepAlivesEnabled too: a connection that has
// waited more than 5 s for its first request is idle to it; the server's
// own answer held until a chunked body's end says "Connection: close" and
// closes its connection, if they were disabled meanwhile; and a fast
// handler that disables them answers with "Connection: close".
func TestSetKeepAlivesEnabledFast(t *testing.T) {
	t.Parallel() // it waits 5 s
	srv := &http1.Server{}
	srv.HandleFastFunc("GET /", func(w *http1.Response, r *http1.Request) { w.WriteString("ok") })
	srv.HandleFastFunc("GET /disable", func(w *http1.Response, r *http1.Request) {
		srv.SetKeepAlivesEnabled(false)
		w.WriteString("ok")
	})
	addr := serve(t, srv)
	idle, waited, held := dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)
	idle.get("/")
	held.send("POST /nope HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
	time.Sleep(5500 * time.Millisecond)
	fresh := dialRaw(t, addr)
	srv.SetKeepAlivesEnabled(false)
	idle.closedWithin(5 * time.Second)
	waited.closedWithin(5 * time.Second)
	held.send("0\r\n\r\n")
	if resp, _ := held.read("POST"); resp.StatusCode != http.StatusMethodNotAllowed || !resp.Close {
		t.Errorf("the answer held for the body's end: %d, Close %v; want 405 with Connection: close", resp.StatusCode, resp.Close)
	}
	held.closed()
	for _, c := range []*rawConn{fresh, dialRaw(t, addr)} {
		if head, _, body := c.get("/"); body != "ok" || strings.Join(fields(head, "Connection"), ",") != "close" {
			t.Errorf("%q, %q; want ok with Connection: close", head, body)
		}
		c.closed()
	}
	srv.SetKeepAlivesEnabled(true)
	again := dialRaw(t, addr)
	for range 2 {
		if head, _, body := again.get("/"); body != "ok" || fields(head, "Connection") != nil {
			t.Fatalf("enabled again: %q, %q", head, body)
		}
	}
	if head, _, body := again.get("/disable"); body != "ok" || strings.Join(fields(head, "Connection"), ",") != "close" {
		t.Errorf("a fast handler that disabled them: %q, %q; want ok with Connection: close", head, body)
	}
	again.closed()
}

// RegisterOnShutdown's functions run, each on a goroutine, when Shutdown
// begins, once the listeners are closed (a dial from them is refused), at
// every call of Shutdown, also on a server never started, and not at
// Close, as net/http's.
func TestRegisterOnShutdown(t *testing.T) {
	type server interface {
		RegisterOnShutdown(func())
		Shutdown(context.Context) error
		Close() error
	}
	var servers []server
	twins := serveTwins(t, http.NotFoundHandler(),
		func(s *http1.Server) { servers = append(servers, s) },
		func(s *http.Server) { servers = append(servers, s) })
	closed := &http1.Server{}
	serve(t, closed)
	never := &http1.Server{} // never served: Shutdown still calls them
	for _, tc := range []struct {
		name  string
		s     server
		addr  string // dialed from the functions, if set
		close bool
	}{
		{"evloop", servers[0], twins[0].addr, false},
		{"net/http", servers[1], twins[1].addr, false},
		{"evloop, Close", closed, "", true},
		{"evloop, never served", never, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls, accepted atomic.Int64
			ran := make(chan struct{}, 8)
			for range 2 {
				tc.s.RegisterOnShutdown(func() {
					if tc.addr != "" {
						if c, err := net.Dial("tcp", tc.addr); err == nil {
							c.Close()
							accepted.Add(1)
						}
					}
					calls.Add(1)
					select {
					case ran <- struct{}{}:
					default: // the cleanup's Shutdown, after the test
					}
				})
			}
			want := 0
			if tc.close {
				tc.s.Close()
			} else {
				for range 2 {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					if err := tc.s.Shutdown(ctx); err != nil {
						t.Fatal(err)
					}
					cancel()
					want += 2
				}
			}
			for range want {
				select {
				case <-ran:
				case <-time.After(10 * time.Second):
					t.Fatalf("%d of %d calls", calls.Load(), want)
				}
			}
			time.Sleep(200 * time.Millisecond) // none more comes
			if got := calls.Load(); got != int64(want) {
				t.Errorf("%d calls; want %d", got, want)
			}
			if n := accepted.Load(); n > 0 {
				t.Errorf("%d dials from the functions were accepted; want the listeners closed before they run", n)
			}
		})
	}
}
