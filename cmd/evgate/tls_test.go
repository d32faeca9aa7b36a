package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testcert"
	"github.com/evloop/evloop/internal/testpeer"
	"github.com/gorilla/websocket"
)

// With --tls-cert and --tls-key, the page, POST /graphql and the WebSocket
// are served over TLS; a plain request is answered 400, and a key without
// a certificate does not start.
func TestTLS(t *testing.T) {
	bin := build(t)
	certFile, keyFile, _, err := testcert.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addr := testpeer.FreeAddr(t)
	_, log := start(t, bin, "--listen", addr, "--nats-listen", "", "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.Contains(log.String(), "wss://"+addr+"/graphql") {
		t.Fatalf("the log does not name wss://:\n%s", log)
	}
	c := dialSubscribe(t, websocket.Dialer{TLSClientConfig: testcert.Client()}, "wss://"+addr+"/graphql", "subscription { tick { n } }")
	for _, want := range []string{`{"type":"connection_ack"}`, `{"id":"t","type":"next","payload":{"data":{"tick":{"n":`} {
		_, b, err := c.ReadMessage()
		if err != nil || !strings.HasPrefix(string(b), want) {
			t.Fatalf("got %q, %v; want %s…", b, err, want)
		}
	}

	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: testcert.Client()}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post("https://"+addr+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"data":{"__typename":"Query"}}` || resp.TLS == nil || resp.TLS.Version != tls.VersionTLS13 {
		t.Fatalf("POST over TLS: %q", b)
	}
	plain := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	if resp, err := plain.Get("http://" + addr + "/"); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a plain request: %v, %v; want net/http's 400", resp, err)
	} else {
		resp.Body.Close()
	}

	refused(t, bin, "--tls-cert and --tls-key go together", "--listen", testpeer.FreeAddr(t), "--nats-listen", "", "--tls-key", keyFile)
}

// SIGHUP reads --tls-cert and --tls-key again: the next handshakes get the
// new certificate while a subscriber connected before goes on receiving;
// files that do not load leave the certificate in use, with a warning.
func TestTLSReload(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	certFile, keyFile, _, err := testcert.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	addr := testpeer.FreeAddr(t)
	cmd, log := start(t, bin, "--listen", addr, "--nats-listen", "", "--tls-cert", certFile, "--tls-key", keyFile)
	served := func() string {
		t.Helper()
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if name := served(); name != "localhost" {
		t.Fatalf("served %q", name)
	}
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, TLSClientConfig: testcert.Client()}
	ws, _, err := d.Dial("wss://"+addr+"/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"connection_init"}`))
	ws.WriteMessage(websocket.TextMessage, []byte(`{"id":"t","type":"subscribe","payload":{"query":"subscription { tick { n } }"}}`))
	ws.ReadMessage() // the ack

	// Another pair in the files' place: the test's client certificate,
	// which names "client".
	other := t.TempDir()
	otherCert, otherKey, err := testcert.WriteClientFiles(other)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{otherCert, certFile}, {otherKey, keyFile}} {
		b, err := os.ReadFile(p[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(5 * time.Second); served() != "client"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the new certificate is not served:\n%s", log)
		}
	}
	if _, b, err := ws.ReadMessage(); err != nil || !strings.Contains(string(b), `"tick"`) {
		t.Fatalf("the subscriber after the reload: %q, %v", b, err)
	}

	os.WriteFile(certFile, []byte("not a certificate"), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), "TLS certificate not reloaded"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no warning for files that do not load:\n%s", log)
		}
	}
	if name := served(); name != "client" {
		t.Fatalf("after a failed reload, served %q", name)
	}
}
