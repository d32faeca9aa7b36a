package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testcert"
	"github.com/gorilla/websocket"
)

// With --tls-cert and --tls-key, the page, POST /graphql and the WebSocket
// are served over TLS; a plain client is not answered, and a key without
// a certificate does not start.
func TestTLS(t *testing.T) {
	bin := build(t)
	certFile, keyFile, _, err := testcert.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	_, log := start(t, bin, "--listen", addr, "--nats-listen", "", "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.Contains(log.String(), "wss://"+addr+"/graphql") {
		t.Fatalf("the log does not name wss://:\n%s", log)
	}
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, TLSClientConfig: testcert.Client()}
	c, _, err := d.Dial("wss://"+addr+"/graphql", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	c.WriteMessage(websocket.TextMessage, []byte(`{"type":"connection_init"}`))
	c.WriteMessage(websocket.TextMessage, []byte(`{"id":"t","type":"subscribe","payload":{"query":"subscription { tick { n } }"}}`))
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
	if resp, err := plain.Get("http://" + addr + "/"); err == nil {
		resp.Body.Close()
		t.Fatalf("a plain request was answered %s", resp.Status)
	}

	out, err := exec.Command(bin, "--listen", freeAddr(t), "--nats-listen", "", "--tls-key", keyFile).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--tls-cert and --tls-key go together") {
		t.Fatalf("a key without a certificate: %v\n%s", err, out)
	}
}
