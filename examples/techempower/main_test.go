package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEndpoints(t *testing.T) {
	srv := newServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ln); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for path, want := range map[string][2]string{
		"/plaintext": {"text/plain", "Hello, World!"},
		"/json":      {"application/json", `{"message":"Hello, World!"}` + "\n"},
	} {
		resp, err := c.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want[0] || string(body) != want[1] ||
			resp.Header.Get("Server") != "evloop" || resp.Header.Get("Date") == "" {
			t.Fatalf("%s: %d %v %q", path, resp.StatusCode, resp.Header, body)
		}
	}
}
