package http1_test

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
)

// Serve returns ErrServerClosed once Shutdown is done, after the request
// under way was answered, not as Shutdown begins (net/http's Serve returns
// at once); Start and Serve on a server shut down fail with it too, and
// close the listener.
func TestServeReturnsAfterShutdown(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	srv := &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		io.WriteString(w, "done")
	})
	if srv.Addrs() != nil {
		t.Fatalf("Addrs before Serve = %v; want nil", srv.Addrs())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	c := dialRaw(t, ln.Addr().String())
	c.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	recvT(t, entered, "the handler")
	if addrs := srv.Addrs(); len(addrs) != 1 || addrs[0].String() != ln.Addr().String() {
		t.Fatalf("Addrs = %v; want [%v]", addrs, ln.Addr())
	}

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- srv.Shutdown(ctx)
	}()
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v while Shutdown waited for the handler", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if resp, body := c.read("GET"); body != "done" || !resp.Close {
		t.Fatalf("answer %q, close=%v; want done, close", body, resp.Close)
	}
	if err := recvT(t, shut, "Shutdown"); err != nil {
		t.Fatalf("Shutdown = %v; want nil", err)
	}
	if err := recvT(t, served, "Serve"); err != http1.ErrServerClosed {
		t.Fatalf("Serve = %v; want ErrServerClosed", err)
	}

	for name, run := range map[string]func(net.Listener) error{"Start": srv.Start, "Serve": srv.Serve} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := run(ln); err != http1.ErrServerClosed {
			t.Fatalf("%s after Shutdown = %v; want ErrServerClosed", name, err)
		}
		if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("%s after Shutdown left the listener open: Accept = %v", name, err)
		}
	}
}

// recvT waits for what ch brings.
func recvT[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s after 10 s", what)
		panic("unreachable")
	}
}
