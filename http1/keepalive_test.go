package http1_test

import (
	"context"
	"io"
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
// after the answer. Enabled again, connections serve more than one
// request.
func TestSetKeepAlivesEnabled(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
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
			idle, fresh, slow := dialRaw(t, s.addr), dialRaw(t, s.addr), dialRaw(t, s.addr)
			if head, _, _ := idle.get("/"); fields(head, "Connection") != nil {
				t.Fatalf("before: %q", head)
			}
			slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
			time.Sleep(100 * time.Millisecond) // the handler runs
			servers[i].SetKeepAlivesEnabled(false)
			idle.closedWithin(5 * time.Second)
			release <- struct{}{}
			if head, _, body := slow.get(""); body != "ok" || !strings.EqualFold(strings.Join(fields(head, "Connection"), ","), "close") {
				t.Errorf("the request under way: %q, %q; want ok with Connection: close", head, body)
			}
			slow.closed()
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

// The fast routes follow SetKeepAlivesEnabled too, and a connection that
// has waited more than 5 s for its first request is idle to it.
func TestSetKeepAlivesEnabledFast(t *testing.T) {
	t.Parallel() // it waits 5 s
	srv := &http1.Server{}
	srv.HandleFastFunc("/", func(w *http1.Response, r *http1.Request) { w.WriteString("ok") })
	addr := serve(t, srv)
	idle, waited := dialRaw(t, addr), dialRaw(t, addr)
	idle.get("/")
	time.Sleep(5500 * time.Millisecond)
	fresh := dialRaw(t, addr)
	srv.SetKeepAlivesEnabled(false)
	idle.closedWithin(5 * time.Second)
	waited.closedWithin(5 * time.Second)
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
}

// RegisterOnShutdown's functions run, each on a goroutine, when Shutdown
// begins, at every call of it, and not at Close, as net/http's.
func TestRegisterOnShutdown(t *testing.T) {
	type server interface {
		RegisterOnShutdown(func())
		Shutdown(context.Context) error
		Close() error
	}
	var servers []server
	serveTwins(t, http.NotFoundHandler(),
		func(s *http1.Server) { servers = append(servers, s) },
		func(s *http.Server) { servers = append(servers, s) })
	closed := &http1.Server{}
	serve(t, closed)
	never := &http1.Server{} // never served: Shutdown still calls them
	for _, tc := range []struct {
		name  string
		s     server
		close bool
		want  int64
	}{
		{"evloop", servers[0], false, 2},
		{"net/http", servers[1], false, 2},
		{"evloop, Close", closed, true, 0},
		{"evloop, never served", never, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			ran := make(chan struct{}, 2)
			for range 2 {
				tc.s.RegisterOnShutdown(func() {
					calls.Add(1)
					select {
					case ran <- struct{}{}:
					default: // the cleanup's Shutdown, after the test
					}
				})
			}
			if tc.close {
				tc.s.Close()
			} else {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := tc.s.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for range tc.want {
				select {
				case <-ran:
				case <-time.After(10 * time.Second):
					t.Fatalf("%d of %d functions ran", calls.Load(), tc.want)
				}
			}
			time.Sleep(50 * time.Millisecond)
			if got := calls.Load(); got != tc.want {
				t.Errorf("%d functions ran; want %d", got, tc.want)
			}
		})
	}
}
