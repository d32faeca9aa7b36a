package ws_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop/http1"
	"github.com/evloop/evloop/internal/testcert"
	"github.com/evloop/evloop/internal/testpeer"
	"github.com/evloop/evloop/ws"
)

// A headless Chromium echoes messages of every length class, text and
// binary, through both upgrades (testdata/interop/page.html), over ws://
// and over wss:// from a page served over HTTPS. Its offer,
// "permessage-deflate; client_max_window_bits", is answered with no
// context takeover either way, which it keeps to across a run of the
// same message; the Origin hook sees the page's origin and the request's
// Host.
func TestChromium(t *testing.T) {
	browser := testpeer.Chromium()
	if browser == "" {
		t.Skip("chromium not installed")
	}
	t.Run("ws", func(t *testing.T) { testChromium(t, browser, false) })
	t.Run("wss", func(t *testing.T) { testChromium(t, browser, true) })
}

func testChromium(t *testing.T, browser string, overTLS bool) {
	var (
		mu      sync.Mutex
		origins []string
	)
	o := &ws.Options{
		Compression:    true,
		MaxMessageSize: 2 << 20,
		Subprotocols:   []string{"chat"},
		CheckOrigin: func(origin, host string) bool {
			mu.Lock()
			defer mu.Unlock()
			origins = append(origins, origin+" "+host)
			return true
		},
	}
	h := &echo{}
	result := make(chan string, 1)
	srv := &http1.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), TLSConfig: testcert.Server()}
	srv.HandleFastFunc("GET /fast", func(w *http1.Response, r *http1.Request) { ws.Upgrade(w, r, h, o) })
	srv.HandleFunc("GET /std", func(w http.ResponseWriter, r *http.Request) { ws.UpgradeHTTP(w, r, h, o) })
	srv.HandleFunc("GET /page", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "testdata/interop/page.html")
	})
	srv.HandleFunc("POST /result", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		result <- string(b)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	web, scheme, start := "http://", "ws://", srv.Start
	if overTLS {
		// Chromium is told to take the test's certificate.
		web, scheme = "https://", "wss://"
		start = func(ln net.Listener) error { return srv.StartTLS(ln, "", "") }
	}
	if err := start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--ignore-certificate-errors",
		"--user-data-dir="+t.TempDir(), web+addr+"/page?path=/fast&path=/std")
	// The page reports to /result and stays open: interrupted, Chromium
	// ends its own processes.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait()
	}()
	var got string
	select {
	case got = <-result:
	case <-ctx.Done():
		t.Fatal("the page reported nothing")
	}
	for _, path := range []string{"/fast", "/std"} {
		want := scheme + addr + path + `: 26 messages, extensions "` + noTakeover + `", protocol "chat"`
		if !strings.Contains(got, want+"\n") {
			t.Errorf("the page reported:\n%s\nwant a line %q", got, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := web + addr + " " + addr; len(origins) != 2 || origins[0] != want || origins[1] != want {
		t.Errorf("CheckOrigin saw %q; want %q twice", origins, want)
	}
}
