package ws_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/internal/testcert"
	"github.com/evloop/evloop/internal/testpeer"
	"github.com/evloop/evloop/ws"
	"github.com/gorilla/websocket"
)

// startServerTLS is startServer over HTTPS, with the test certificate.
func startServerTLS(t *testing.T, h ws.Handler, o *ws.Options) string {
	t.Helper()
	_, addr := startServerWith(t, h, o, evloop.Options{}, testcert.Server())
	return addr
}

// TestEchoGorillaTLS: gorilla/websocket's client over wss://, with and
// without permessage-deflate, upgraded by fast and pooled handlers, and
// the close handshake.
func TestEchoGorillaTLS(t *testing.T) {
	e := &echo{}
	addr := startServerTLS(t, e, &ws.Options{Compression: true})
	for _, path := range []string{"/fast", "/std"} {
		for _, compress := range []bool{false, true} {
			d := &websocket.Dialer{EnableCompression: compress, TLSClientConfig: testcert.Client(), HandshakeTimeout: 5 * time.Second}
			c := dialGorilla(t, "wss://"+addr+path, d)
			c.EnableWriteCompression(compress)
			for _, size := range []int{0, 1, 125, 65536, 1 << 20} {
				msg := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
				if err := c.WriteMessage(websocket.BinaryMessage, msg); err != nil {
					t.Fatal(err)
				}
				op, got, err := c.ReadMessage()
				if err != nil || op != websocket.BinaryMessage || !bytes.Equal(got, msg) {
					t.Fatalf("%s compress=%v size %d: op %d, %d bytes, %v", path, compress, size, op, len(got), err)
				}
			}
			before := e.count()
			c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "bye"))
			if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, 4000) {
				t.Fatalf("close echo: %v", err)
			}
			if ce := e.nextClose(t, before); ce == nil || ce.Code != 4000 {
				t.Fatalf("OnClose: %v", ce)
			}
		}
	}
}

// TestDialTLS: the Dialer over wss://, to this package's server on HTTPS
// and to gorilla/websocket's on net/http's TLS, echoes and closes as over
// ws://; a certificate it does not trust, and a server without TLS, fail
// the dial.
func TestDialTLS(t *testing.T) {
	pongs := make(chan string, 16)
	gorilla := gorillaServerWith(t, &websocket.Upgrader{}, pongs, testcert.Server())
	own := startServerTLS(t, &echo{}, &ws.Options{Compression: true})
	d := &ws.Dialer{HandshakeTimeout: 10 * time.Second, TLSConfig: testcert.Client(), Engine: evloop.Options{Loops: 1}}
	t.Cleanup(func() { d.Close() })
	for _, url := range []string{"wss://" + gorilla + "/", "wss://" + own + "/fast", "https://" + own + "/std"} {
		r := newRecorder()
		c, resp, err := d.Dial(context.Background(), url, nil, r, &ws.Options{Compression: true})
		if err != nil {
			t.Fatalf("Dial %s: %v", url, err)
		}
		if resp.StatusCode != 101 {
			t.Fatalf("%s: %s", url, resp.Status)
		}
		big := strings.Repeat("wss ", 100_000)
		for _, msg := range []string{"hello", big} {
			c.Send(ws.Text, []byte(msg))
			if m := r.message(t); m.data != msg {
				t.Fatalf("%s: echo of %d bytes is %d", url, len(msg), len(m.data))
			}
		}
		c.CloseAsync(ws.CloseNormal, "done")
		r.closeCode(t, ws.CloseNormal)
	}

	plain := &ws.Dialer{HandshakeTimeout: 5 * time.Second, Engine: evloop.Options{Loops: 1}}
	t.Cleanup(func() { plain.Close() })
	if c, _, err := plain.Dial(context.Background(), "wss://"+own+"/fast", nil, newRecorder(), nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		if c != nil {
			c.CloseAsync(ws.CloseNormal, "")
		}
		t.Fatalf("a server whose certificate is not trusted: %v", err)
	}
	noTLS := serve(t, &echo{}, nil)
	if c, _, err := d.Dial(context.Background(), "wss://"+noTLS+"/fast", nil, newRecorder(), nil); err == nil {
		c.CloseAsync(ws.CloseNormal, "")
		t.Fatal("wss:// to a server without TLS connected")
	}
}

// TestNodeTLS: Node's ws client over wss://, trusting the test authority
// through NODE_EXTRA_CA_CERTS, with and without permessage-deflate.
func TestNodeTLS(t *testing.T) {
	modules := testpeer.NodeModules(t, "ws@8")
	_, _, caFile, err := testcert.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	addr := startServerTLS(t, &echo{}, &ws.Options{Compression: true, MaxMessageSize: 2 << 20})
	for _, config := range []string{`{"perMessageDeflate": false}`, `{"perMessageDeflate": {"threshold": 0}}`} {
		for _, path := range []string{"/fast", "/std"} {
			cmd := nodePeer(modules, "client", "wss://"+addr+path, config)
			cmd.Env = append(cmd.Env, "NODE_EXTRA_CA_CERTS="+caFile)
			out, err := cmd.CombinedOutput()
			var got struct {
				Error           string
				Messages, Pongs int
			}
			if jerr := json.Unmarshal(out, &got); jerr != nil || err != nil || got.Error != "" {
				t.Fatalf("node %s %s: %v, %v\n%s", path, config, err, jerr, out)
			}
			if got.Messages != 30 || got.Pongs != 3 {
				t.Errorf("%s %s: %d messages and %d pongs echoed; want 30 and 3", path, config, got.Messages, got.Pongs)
			}
		}
	}
}
