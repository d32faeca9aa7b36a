package http1_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/http1"
)

// connStates records the states a server's ConnState hook reports, by the
// client's address.
type connStates struct {
	mu     sync.Mutex
	states map[string][]http.ConnState
	addrs  map[*evloop.Conn]string
	ended  chan string // a client's address, at its connection's last state
}

func newConnStates() *connStates {
	return &connStates{states: make(map[string][]http.ConnState), ended: make(chan string, 16)}
}

// recordConn records c's state by the address c had at StateNew: its
// RemoteAddr is nil by StateClosed.
func (cs *connStates) recordConn(c *evloop.Conn, st http.ConnState) {
	cs.mu.Lock()
	if cs.addrs == nil {
		cs.addrs = make(map[*evloop.Conn]string)
	}
	if st == http.StateNew {
		cs.addrs[c] = c.RemoteAddr().String()
	}
	remote := cs.addrs[c]
	if st == http.StateClosed || st == http.StateHijacked {
		delete(cs.addrs, c)
	}
	cs.mu.Unlock()
	cs.record(remote, st)
}

func (cs *connStates) record(remote string, st http.ConnState) {
	cs.mu.Lock()
	cs.states[remote] = append(cs.states[remote], st)
	cs.mu.Unlock()
	if st == http.StateClosed || st == http.StateHijacked {
		cs.ended <- remote
	}
}

// expect checks the states reported for c's connection, once it ended,
// against want.
func (cs *connStates) expect(t *testing.T, c *rawConn, want []http.ConnState) {
	t.Helper()
	if got := cs.of(t, c.nc.LocalAddr().String()); !slices.Equal(got, want) {
		t.Errorf("states %v; want %v", got, want)
	}
}

// idle waits until the connection from client is idle: a request sent
// before the server saw the previous one through (its pooled handler's
// end reaches the loop after the answer) continues the activity, as a
// pipelined one does.
func (cs *connStates) idle(t *testing.T, client string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
		cs.mu.Lock()
		st := cs.states[client]
		cs.mu.Unlock()
		if len(st) > 0 && st[len(st)-1] == http.StateIdle {
			return
		}
	}
	t.Fatalf("connection from %s not idle", client)
}

// of waits for the last state of the connection from client and returns
// every state reported for it.
func (cs *connStates) of(t *testing.T, client string) []http.ConnState {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case a := <-cs.ended:
			if a == client {
				cs.mu.Lock()
				defer cs.mu.Unlock()
				return slices.Clone(cs.states[client])
			}
		case <-deadline:
			cs.mu.Lock()
			defer cs.mu.Unlock()
			t.Fatalf("connection from %s not closed: states %v", client, cs.states[client])
			return nil
		}
	}
}

// ConnState reports a connection's states as net/http's server's does, for
// pooled and fast handlers alike: new, active while a request is read and
// answered, idle between requests, and closed or hijacked at the end.
func TestConnState(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hijack" {
			nc, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			io.WriteString(nc, "HTTP/1.1 204 No Content\r\n\r\n")
			nc.Close()
			return
		}
		io.WriteString(w, "ok")
	})
	ev, std := newConnStates(), newConnStates()
	twins := serveTwins(t, h, func(s *http1.Server) {
		s.HandleFastFunc("GET /fast", func(w *http1.Response, r *http1.Request) { w.WriteString("ok") })
		s.ConnState = ev.recordConn
	}, func(s *http.Server) {
		s.ConnState = func(c net.Conn, st http.ConnState) { std.record(c.RemoteAddr().String(), st) }
	})
	const (
		New      = http.StateNew
		Active   = http.StateActive
		Idle     = http.StateIdle
		Closed   = http.StateClosed
		Hijacked = http.StateHijacked
	)
	for _, tc := range []struct {
		name string
		run  func(c *rawConn, idle func())
		want []http.ConnState
	}{
		{"none", func(c *rawConn, idle func()) {}, []http.ConnState{New, Closed}},
		{"one", func(c *rawConn, idle func()) { c.get("/"); idle() }, []http.ConnState{New, Active, Idle, Closed}},
		{"pooled then fast", func(c *rawConn, idle func()) { c.get("/"); idle(); c.get("/fast"); idle() }, []http.ConnState{New, Active, Idle, Active, Idle, Closed}},
		{"fast then pooled", func(c *rawConn, idle func()) { c.get("/fast"); idle(); c.get("/"); idle() }, []http.ConnState{New, Active, Idle, Active, Idle, Closed}},
		{"connection close", func(c *rawConn, idle func()) {
			c.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
			c.read("GET")
			c.closed()
		}, []http.ConnState{New, Active, Closed}},
		{"part of a head", func(c *rawConn, idle func()) {
			c.send("GET / HT")
			time.Sleep(50 * time.Millisecond)
		}, []http.ConnState{New, Active, Closed}},
		{"malformed", func(c *rawConn, idle func()) {
			c.send("GET / HTTP/1.1\r\nHost: x\r\nBad Field: 1\r\n\r\n")
			if resp, _ := c.read("GET"); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d; want 400", resp.StatusCode)
			}
			c.closed()
		}, []http.ConnState{New, Active, Closed}},
		{"hijack", func(c *rawConn, idle func()) {
			c.send("GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
			c.read("GET")
		}, []http.ConnState{New, Active, Hijacked}},
	} {
		for i, tw := range twins {
			cs := [...]*connStates{ev, std}[i]
			t.Run(tc.name+"/"+tw.name, func(t *testing.T) {
				c := dialRaw(t, tw.addr)
				tc.run(c, func() { cs.idle(t, c.nc.LocalAddr().String()) })
				c.nc.Close()
				cs.expect(t, c, tc.want)
			})
		}
	}
}

// A pipelined burst is one stretch of activity: the connection is idle
// once the last answer is written (net/http's server, which reads one
// request at a time, reports idle between them).
func TestConnStatePipelined(t *testing.T) {
	cs := newConnStates()
	srv := testServer()
	srv.ConnState = cs.recordConn
	c := dialRaw(t, serve(t, srv))
	c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
	for range 3 {
		c.read("GET")
	}
	c.nc.Close()
	want := []http.ConnState{http.StateNew, http.StateActive, http.StateIdle, http.StateClosed}
	cs.expect(t, c, want)
}

// Pooled requests' contexts derive from BaseContext's, given the listener
// served, and are cancelled with it while the server goes on serving; a
// nil context fails Start.
func TestBaseContext(t *testing.T) {
	type key struct{}
	base, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "base"))
	defer cancel()
	var given net.Addr
	srv := &http1.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			if r.URL.Path == "/wait" {
				select {
				case <-ctx.Done():
				case <-time.After(5 * time.Second):
				}
			}
			fmt.Fprintf(w, "%v %v", ctx.Value(key{}), ctx.Err())
		}),
		BaseContext: func(ln net.Listener) context.Context {
			given = ln.Addr()
			return base
		},
	}
	addr := serve(t, srv)
	if given == nil || given.String() != addr {
		t.Fatalf("BaseContext given a listener on %v; want %s", given, addr)
	}
	c := dialRaw(t, addr)
	if _, _, body := c.get("/"); body != "base <nil>" {
		t.Fatalf("request context: %q; want base's value, not cancelled", body)
	}
	c.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(50 * time.Millisecond)
	cancel()
	if _, body := c.read("GET"); body != "base context canceled" {
		t.Fatalf("request context after BaseContext's cancel: %q; want it cancelled", body)
	}
	if _, _, body := c.get("/"); body != "base context canceled" {
		t.Fatalf("after BaseContext's cancel: %q; want the server still serving, with a cancelled context", body)
	}

	// BaseContext may ask the server, as net/http's may: it is not called
	// under the server's lock, which it deadlocked on.
	var asking *http1.Server
	asking = &http1.Server{BaseContext: func(ln net.Listener) context.Context {
		asking.Addrs()
		return context.Background()
	}}
	serve(t, asking)

	bad := &http1.Server{BaseContext: func(net.Listener) context.Context { return nil }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Start(ln); err == nil {
		bad.Close()
		t.Fatal("Start with a nil BaseContext = nil; want an error")
	}
	if nc, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		nc.Close()
		t.Error("the listener of a failed Start still accepts")
	}
}

// A request whose body the server does not wait for (its own 404 answered
// early) is reported active, and a body a pooled handler left unread keeps
// the connection active while it is dropped, as net/http's: the first was
// never reported active, the second went idle and active again with each
// piece of the body.
func TestConnStateBodies(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "ok")
	})
	ev, std := newConnStates(), newConnStates()
	twins := serveTwins(t, h, func(s *http1.Server) {
		s.HandleFastFunc("POST /fast", func(w *http1.Response, r *http1.Request) { w.WriteString("ok") })
		s.HandleFunc("POST /{$}", h.ServeHTTP)
		s.Handler = nil // the server's own 404 elsewhere
		s.ConnState = ev.recordConn
	}, func(s *http.Server) {
		s.ConnState = func(c net.Conn, st http.ConnState) { std.record(c.RemoteAddr().String(), st) }
	})
	for i, tw := range twins {
		cs := [...]*connStates{ev, std}[i]
		t.Run("own answer/"+tw.name, func(t *testing.T) {
			c := dialRaw(t, tw.addr)
			c.send("POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345")
			time.Sleep(100 * time.Millisecond) // the client gives up on the rest
			c.nc.Close()
			if got := cs.of(t, c.nc.LocalAddr().String()); !slices.Contains(got, http.StateActive) {
				t.Errorf("states %v: a request was read and answered, but never active", got)
			}
		})
		t.Run("dropped body/"+tw.name, func(t *testing.T) {
			c := dialRaw(t, tw.addr)
			c.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345")
			time.Sleep(100 * time.Millisecond)
			c.send("67890")
			c.read("POST")
			time.Sleep(100 * time.Millisecond)
			c.nc.Close()
			want := []http.ConnState{http.StateNew, http.StateActive, http.StateIdle, http.StateClosed}
			cs.expect(t, c, want)
		})
	}
}

// Pooled requests' contexts derive from ConnContext's for their
// connection, which derives from BaseContext's; a nil one drops that
// connection alone.
func TestConnContext(t *testing.T) {
	type key struct{}
	var n atomic.Int64
	srv := &http1.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, r.Context().Value(key{}))
		}),
		BaseContext: func(net.Listener) context.Context {
			return context.WithValue(context.Background(), key{}, "base")
		},
		ConnContext: func(ctx context.Context, c *evloop.Conn) context.Context {
			i := n.Add(1)
			if i == 3 {
				return nil
			}
			return context.WithValue(ctx, key{}, fmt.Sprint(ctx.Value(key{}), " conn ", i))
		},
	}
	addr := serve(t, srv)
	for i := 1; i <= 2; i++ {
		c := dialRaw(t, addr)
		for range 2 {
			if _, _, body := c.get("/"); body != fmt.Sprint("base conn ", i) {
				t.Fatalf("connection %d's request saw %q", i, body)
			}
		}
	}
	// Dropped with a reset, which the dial itself may meet.
	if nc, err := net.Dial("tcp", addr); err == nil {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if b, err := io.ReadAll(nc); len(b) > 0 {
			t.Fatalf("a connection whose ConnContext is nil answered %q (%v)", b, err)
		}
		nc.Close()
	}
	if _, _, body := dialRaw(t, addr).get("/"); body != "base conn 4" {
		t.Fatalf("the next connection's request saw %q", body)
	}
}
