package ws_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/ws"
)

// serveHeldUpgrade serves /std, where a pooled net/http handler upgrades
// to h with o and then waits until release is closed (as one that
// registers the session in a database would), shut down when the test
// ends.
func serveHeldUpgrade(t *testing.T, h ws.Handler, o *ws.Options) (srv *http1.Server, addr string, release chan struct{}) {
	t.Helper()
	release = make(chan struct{})
	srv = &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv.HandleFunc("GET /std", func(w http.ResponseWriter, r *http.Request) {
		if err := ws.UpgradeHTTP(w, r, h, o); err != nil {
			t.Error(err)
		}
		<-release
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
	return srv, ln.Addr().String(), release
}

// A WebSocket upgraded by a pooled net/http handler whose client goes
// away (TCP FIN, no close frame) after the 101 but before the handler
// returned: OnClose must run with CloseAbnormal, as it does when the
// client leaves a moment later, and Shutdown must not wait for it.
func TestStdUpgradeClientGoneBeforeHandlerReturns(t *testing.T) {
	e := &echo{}
	srv, addr, release := serveHeldUpgrade(t, e, nil)
	c := dialRaw(t, addr, "/std", "")
	c.nc.Close() // the client leaves without a close frame
	time.Sleep(200 * time.Millisecond)
	close(release)

	deadline := time.Now().Add(10 * time.Second)
	for e.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if e.count() == 0 {
		t.Error("OnClose did not run: the connection the client left stays open")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v (it waited for the connection the client left)", err)
		srv.Close()
	}
}

// A client of a WebSocket upgraded by a pooled net/http handler, whose
// messages go to a worker pool, sends a message, its close frame and its
// FIN before the handler returns: once the message is handled, its close
// is answered with its code, as when they come after the switch, where
// the FIN, read before the switch, closed the connection at once, the
// close frame unread (1006).
func TestStdUpgradeCloseAndEOFBeforeSwitch(t *testing.T) {
	e := &echo{pooled: true}
	o := &ws.Options{Workers: 2}
	t.Cleanup(o.CloseWorkers) // after the server's shutdown
	_, addr, release := serveHeldUpgrade(t, e, o)
	c := dialRaw(t, addr, "/std", "")
	c.frame(0x81, []byte("hi"), false)
	c.frame(0x88, append([]byte{0x03, 0xE8}, "bye"...), false) // 1000
	c.nc.(*net.TCPConn).CloseWrite()
	time.Sleep(100 * time.Millisecond) // the FIN is read before the switch
	close(release)
	if b0, p := c.read(); b0&0xF != 0x1 || string(p) != "hi" {
		t.Fatalf("first frame: opcode %d, %q; want the echo of hi", b0&0xF, p)
	}
	c.expectClose(1000)
	if ce := e.nextClose(t, 0); ce == nil || ce.Code != 1000 || ce.Reason != "bye" {
		t.Fatalf("OnClose: %v; want the client's 1000 \"bye\"", ce)
	}
}
