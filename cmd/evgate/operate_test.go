package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/gorilla/websocket"
	"github.com/nats-io/nats-server/v2/server"
)

// Profiles, and the command line that may hold --token, are served only
// on --debug-listen, not to the clients' address, where anyone who could
// reach it read the token at /debug/pprof/cmdline.
func TestProfilesApart(t *testing.T) {
	bin := build(t)
	addr, debug := testpeer.FreeAddr(t), testpeer.FreeAddr(t)
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
	addr := testpeer.FreeAddr(t)
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
	natsAddr := testpeer.FreeAddr(t)
	upstream, _ := start(t, bin, "--listen", testpeer.FreeAddr(t), "--nats-listen", natsAddr)
	addr, log := startOnNATS(t, bin, natsAddr)
	waitHealth(t, log, addr, http.StatusOK, "healthy start")
	stopGracefully(upstream)
	waitHealth(t, log, addr, http.StatusServiceUnavailable, "503 once NATS is gone")
	if !strings.Contains(log.String(), "NATS connection lost") {
		t.Errorf("the loss is not logged:\n%s", log.String())
	}
}

// NATS servers not yet reachable at start are waited for: evgate serves,
// says so, and answers 503 at /healthz until they come up; it exited at
// once, where a boot or a rollout may start it before NATS.
func TestNATSLateStart(t *testing.T) {
	bin := build(t)
	natsAddr := testpeer.FreeAddr(t)
	addr, log := startOnNATS(t, bin, natsAddr)
	waitHealth(t, log, addr, http.StatusServiceUnavailable, "503 before NATS is up")
	if !strings.Contains(log.String(), "NATS not reachable") {
		t.Errorf("the wait is not logged:\n%s", log.String())
	}
	start(t, bin, "--listen", testpeer.FreeAddr(t), "--nats-listen", natsAddr)
	waitHealth(t, log, addr, http.StatusOK, "200 once NATS is up")
	if !strings.Contains(log.String(), "NATS connected") {
		t.Errorf("the connection is not logged:\n%s", log.String())
	}
}

// startOnNATS starts evgate on the NATS server at natsAddr, without
// waiting for it to serve, and returns its address and its log.
func startOnNATS(t *testing.T, bin, natsAddr string) (string, *testpeer.Output) {
	t.Helper()
	addr := testpeer.FreeAddr(t)
	cmd := exec.Command(bin, "--listen", addr, "--nats", "nats://"+natsAddr, "--demo=false")
	log := new(testpeer.Output)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopGracefully(cmd) })
	return addr, log
}

// waitHealth waits up to 15 s for evgate at addr to answer /healthz with
// status, failing with what and evgate's log if it does not.
func waitHealth(t *testing.T, log *testpeer.Output, addr string, status int, what string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); healthz(addr) != status; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s:\n%s", what, log.String())
		}
	}
}

// healthz returns the status of evgate's /healthz at addr, 0 if it does
// not answer.
func healthz(addr string) int {
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A --nats that cannot work stops the start with the reason, as it did
// before servers not yet up were waited for: credentials the server
// refuses, a name that does not resolve, a scheme nats.go does not know.
func TestNATSBadURLFailsFast(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, Username: "u", Password: "p", NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	port := strconv.Itoa(ns.Addr().(*net.TCPAddr).Port)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, url := range []string{"nats://u:wrong@127.0.0.1:" + port, "nats://no-such-host.invalid:4222", "foo://127.0.0.1:4222"} {
		if nc, stop, err := connectNATS(options{natsURLs: url}, log); err == nil {
			connected := nc.IsConnected()
			stop()
			t.Errorf("connectNATS(%q) = nil error (connected %v); want the reason it cannot work", url, connected)
		}
	}
	nc, stop, err := connectNATS(options{natsURLs: "nats://u:p@127.0.0.1:" + port}, log)
	if err != nil || !nc.IsConnected() {
		t.Fatalf("connectNATS with the right credentials: %v", err)
	}
	stop()
}
