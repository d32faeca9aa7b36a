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

// A WebSocket upgraded by a pooled net/http handler whose client goes
// away (TCP FIN, no close frame) after the 101 but before the handler
// returned: OnClose must run with CloseAbnormal, as it does when the
// client leaves a moment later, and Shutdown must not wait for it.
func TestStdUpgradeClientGoneBeforeHandlerReturns(t *testing.T) {
	e := &echo{}
	release := make(chan struct{})
	srv := &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv.HandleFunc("GET /std", func(w http.ResponseWriter, r *http.Request) {
		if err := ws.UpgradeHTTP(w, r, e, nil); err != nil {
			t.Error(err)
		}
		<-release // e.g. the handler registers the session in a database
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ln); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, ln.Addr().String(), "/std", "")
	c.nc.Close() // the client leaves without a close frame
	time.Sleep(200 * time.Millisecond)
	close(release)

	deadline := time.Now().Add(3 * time.Second)
	for e.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if e.count() == 0 {
		t.Error("OnClose did not run: the connection the client left stays open")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v (it waited for the connection the client left)", err)
		srv.Close()
	}
}
