package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/gorilla/websocket"
)

// build compiles evgate once for the tests.
func build(t *testing.T) string {
	t.Helper()
	return testpeer.GoBuild(t, ".", "evgate")
}

// start runs evgate with args and waits until it serves. Its log may be
// read while evgate runs.
func start(t *testing.T, bin string, args ...string) (*exec.Cmd, *testpeer.Output) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	log := new(testpeer.Output)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopGracefully(cmd) })
	ready := make(chan bool, 1)
	go func() {
		s := bufio.NewScanner(pr)
		for s.Scan() {
			fmt.Fprintln(log, s.Text())
			if strings.Contains(s.Text(), "evgate serving") {
				ready <- true
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(15 * time.Second):
		t.Fatalf("evgate did not start:\n%s", log.String())
	}
	return cmd, log
}

// The demo: with no flags but addresses, a client sees the ticks the
// embedded NATS server carries; SIGTERM completes it and closes with 1001.
func TestDemoTicksAndSIGTERM(t *testing.T) {
	bin := build(t)
	addr := testpeer.FreeAddr(t)
	cmd, _ := start(t, bin, "--listen", addr, "--nats-listen", testpeer.FreeAddr(t))
	c := dialSubscribe(t, websocket.Dialer{}, "ws://"+addr+"/graphql", "subscription { tick { n time } }")
	var msgs []string
	for len(msgs) < 2 {
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("ReadMessage: %v (so far %q)", err, msgs)
		}
		msgs = append(msgs, string(b))
	}
	if msgs[0] != `{"type":"connection_ack"}` || !strings.HasPrefix(msgs[1], `{"id":"t","type":"next","payload":{"data":{"tick":{"n":`) {
		t.Fatalf("messages = %q", msgs)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	sawComplete := false
	for {
		_, b, err := c.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != 1001 || !sawComplete {
				t.Fatalf("closed with %d (complete seen: %v); want complete, then 1001", ce.Code, sawComplete)
			}
			break
		}
		if err != nil {
			t.Fatalf("ReadMessage: %v", err)
		}
		sawComplete = sawComplete || string(b) == `{"id":"t","type":"complete"}`
	}
	c.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("evgate exited with %v after SIGTERM", err)
	}
}

// A taken port, for the gateway or the embedded NATS server, fails the
// start at once saying so. Before, a taken --nats-listen was reported
// after 10 s as a server that "did not start".
func TestPortTaken(t *testing.T) {
	bin := build(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().String()
	for _, args := range [][]string{
		{"--listen", taken, "--nats-listen", ""},
		{"--listen", testpeer.FreeAddr(t), "--nats-listen", taken},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "address already in use") {
			t.Errorf("evgate %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func TestBadSchema(t *testing.T) {
	bin := build(t)
	path := filepath.Join(t.TempDir(), "bad.graphql")
	os.WriteFile(path, []byte("type Subscription { x: Int }"), 0o644)
	refused(t, bin, "Subscription.x", "--schema", path, "--nats-listen", "")
}

// refused runs evgate with args and checks that it fails at once, saying
// want.
func refused(t *testing.T, bin, want string, args ...string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("evgate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// stopGracefully ends cmd with SIGTERM, so that its embedded NATS
// server's directory is removed, or kills it after 10 s.
func stopGracefully(cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// --max-conns bounds the connections open at once: a client past it
// waits to be accepted until one closes. A negative bound is refused.
func TestMaxConns(t *testing.T) {
	bin := build(t)
	refused(t, bin, "--max-conns -1", "--max-conns", "-1", "--nats-listen", "")
	addr := testpeer.FreeAddr(t)
	start(t, bin, "--listen", addr, "--nats-listen", "", "--max-conns", "1")
	url := "ws://" + addr + "/graphql"
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
	first, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	waiting := d
	waiting.HandshakeTimeout = 500 * time.Millisecond
	if c, _, err := waiting.Dial(url, nil); err == nil {
		c.Close()
		t.Fatal("a client past --max-conns 1 was served")
	}
	first.Close()
	second, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("a client after the first closed: %v", err)
	}
	second.Close()
}

// dialSubscribe dials the gateway at url (ws:// or wss://) with d, speaking
// graphql-transport-ws, and sends connection_init and a subscribe of query
// with the id "t". The connection reads within 10 s, and is closed when
// the test ends.
func dialSubscribe(t *testing.T, d websocket.Dialer, url, query string) *websocket.Conn {
	t.Helper()
	d.Subprotocols = []string{"graphql-transport-ws"}
	d.HandshakeTimeout = 5 * time.Second
	c, _, err := d.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"connection_init"}`))
	c.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"id":"t","type":"subscribe","payload":{"query":%q}}`, query))
	return c
}

// --max-fields and --max-depth bound an operation's document: past them
// the operation gets an error naming the bound; bounds under 1 are
// refused.
func TestDocumentLimitFlags(t *testing.T) {
	bin := build(t)
	refused(t, bin, "--max-fields 0", "--max-fields", "0", "--nats-listen", "")
	addr := testpeer.FreeAddr(t)
	start(t, bin, "--listen", addr, "--nats-listen", "", "--max-fields", "2", "--max-depth", "5")
	c := dialSubscribe(t, websocket.Dialer{}, "ws://"+addr+"/graphql", "subscription { tick { n time } }")
	for _, want := range []string{`{"type":"connection_ack"}`,
		`{"id":"t","type":"error","payload":[{"message":"The document has 3 fields, past this gateway's limit of 2."}]}`} {
		if _, b, err := c.ReadMessage(); err != nil || string(b) != want {
			t.Fatalf("read %s, %v; want %s", b, err, want)
		}
	}
}
