package main

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/gorilla/websocket"
)

// Profiles, and the command line that may hold --token, are served only
// on --debug-listen, not to the clients' address, where anyone who could
// reach it read the token at /debug/pprof/cmdline.
func TestProfilesApart(t *testing.T) {
	bin := build(t)
	addr, debug := freeAddr(t), freeAddr(t)
	start(t, bin, "--listen", addr, "--nats-listen", "", "--token", "s3cret-token", "--debug-listen", debug)
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://" + addr + "/debug/pprof/cmdline"); code == http.StatusOK || strings.Contains(body, "s3cret-token") {
		t.Errorf("GET /debug/pprof/cmdline on the clients' address: %d %q", code, body)
	}
	if code, _ := get("http://" + debug + "/debug/pprof/cmdline"); code != http.StatusOK {
		t.Errorf("GET /debug/pprof/cmdline on --debug-listen: %d; want 200", code)
	}
	if code, body := get("http://" + addr + "/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz with the embedded NATS server: %d %q; want 200", code, body)
	}
}

// SIGHUP leaves evgate serving (a closed terminal, a supervisor's reload);
// it killed it: clients got 1006, and the embedded NATS server's
// directory was left behind.
func TestSIGHUPIgnored(t *testing.T) {
	bin := build(t)
	addr := freeAddr(t)
	cmd, _ := start(t, bin, "--listen", addr, "--nats-listen", "")
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
	c, _, err := d.Dial("ws://"+addr+"/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"connection_init"}`))
	c.ReadMessage() // connection_ack
	cmd.Process.Signal(syscall.SIGHUP)
	time.Sleep(300 * time.Millisecond)
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"ping"}`))
	if _, m, err := c.ReadMessage(); err != nil || string(m) != `{"type":"pong"}` {
		t.Fatalf("after SIGHUP: %q, %v; want a pong", m, err)
	}
}

// A NATS server that goes away is reported: logged, and /healthz answers
// 503 until the connection is back; it went unnoticed.
func TestNATSLossReported(t *testing.T) {
	bin := build(t)
	natsAddr := freeAddr(t)
	upstream, _ := start(t, bin, "--listen", freeAddr(t), "--nats-listen", natsAddr)
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--listen", addr, "--nats", "nats://"+natsAddr, "--demo=false")
	log := new(testpeer.Output)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopGracefully(cmd) })
	health := func() int {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s:\n%s", what, log.String())
			}
		}
	}
	waitFor("healthy start", func() bool { return health() == http.StatusOK })
	stopGracefully(upstream)
	waitFor("503 from /healthz", func() bool { return health() == http.StatusServiceUnavailable })
	if !strings.Contains(log.String(), "NATS connection lost") {
		t.Errorf("the loss is not logged:\n%s", log.String())
	}
}
