package ws_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/ws"
	"github.com/gorilla/websocket"
)

// startServer runs an http1 server with h at /fast and /std, shut down
// when the test ends, and returns it with its address.
func startServer(t *testing.T, h ws.Handler, o *ws.Options) (*http1.Server, string) {
	t.Helper()
	srv := &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
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
	if err := srv.Start(ln); err != nil {
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
// that never reads is closed after CloseTimeout.
func TestServerShutdownGoingAway(t *testing.T) {
	e := &echo{}
	srv, addr := startServer(t, e, &ws.Options{CloseTimeout: 300 * time.Millisecond})

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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("Shutdown returned after %v, before the silent client's CloseTimeout", d)
	}

	err := recv(t, gorillaDone, "gorilla's close")
	if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("gorilla got %v, want close 1001", err)
	}
	r.closeCode(t, ws.CloseGoingAway)
	silent.expectClose(ws.CloseGoingAway)
	for i := range 3 {
		if ce := e.nextClose(t, i); ce == nil || ce.Code != ws.CloseGoingAway {
			t.Errorf("server's OnClose %d: %v, want 1001", i, ce)
		}
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
	if ce := e.nextClose(t, 0); ce == nil || ce.Code != ws.CloseGoingAway {
		t.Errorf("server's OnClose: %v, want 1001", ce)
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
