package ws_test

import (
	"bufio"
	"encoding/json"
	"errors"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/evloop/evloop/ws"
)

// The npm package ws, in Node, against this package both ways: its
// clients with each of its permessage-deflate settings against the
// server, and the Dialer against its servers (testdata/interop/peer.js).
// Each echo must come back byte for byte: every length boundary, text
// that compresses well and bytes that do not, runs of the same message
// (a side keeping its compression context when the negotiation said not
// to would corrupt the next one), messages fragmented by Node with pings
// between the fragments, and messages Node sent uncompressed.
func TestNode(t *testing.T) {
	modules := testpeer.NodeModules(t, "ws@8")
	t.Run("clients", func(t *testing.T) { testNodeClients(t, modules) })
	t.Run("servers", func(t *testing.T) { testNodeServers(t, modules) })
}

// nodePeer returns the command that runs peer.js with args.
func nodePeer(modules string, args ...string) *exec.Cmd {
	cmd := exec.Command("node", append([]string{filepath.Join("testdata", "interop", "peer.js")}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	return cmd
}

// The answer the server gives every permessage-deflate offer it accepts.
const noTakeover = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

func testNodeClients(t *testing.T, modules string) {
	addr := serve(t, &echo{}, &ws.Options{Compression: true, MaxMessageSize: 2 << 20, Subprotocols: []string{"chat", "superchat"}})
	for _, tc := range []struct {
		name   string
		config string
		answer string // the server's Sec-WebSocket-Extensions answer
		failed string // what Node fails the connection with, if it does
	}{
		{"no deflate", `{"perMessageDeflate": false}`, "", ""},
		// "permessage-deflate; client_max_window_bits"
		{"default", `{"perMessageDeflate": true}`, noTakeover, ""},
		{"threshold 0", `{"perMessageDeflate": {"threshold": 0}}`, noTakeover, ""},
		{"no context takeover asked", `{"perMessageDeflate": {"serverNoContextTakeover": true, "clientNoContextTakeover": true, "threshold": 0}}`, noTakeover, ""},
		{"server window 15", `{"perMessageDeflate": {"serverMaxWindowBits": 15, "threshold": 0}}`, noTakeover + "; server_max_window_bits=15", ""},
		// A smaller window is kept by compressing only the messages that
		// fit in it; Node's inflater, made with that window, fails any
		// back-reference past it.
		{"server window 10", `{"perMessageDeflate": {"serverMaxWindowBits": 10, "threshold": 0}}`, noTakeover + "; server_max_window_bits=10", ""},
		{"server window 9", `{"perMessageDeflate": {"serverMaxWindowBits": 9, "threshold": 0}}`, noTakeover + "; server_max_window_bits=9", ""},
		// The client keeps to its window (zlib makes 8 bits 9); the
		// server inflates any.
		{"client window 8", `{"perMessageDeflate": {"clientMaxWindowBits": 8, "threshold": 0}}`, noTakeover, ""},
		{"client window 12", `{"perMessageDeflate": {"clientMaxWindowBits": 12, "threshold": 0}}`, noTakeover, ""},
		{"server context takeover asked", `{"perMessageDeflate": {"serverNoContextTakeover": false, "threshold": 0}}`, noTakeover, ""},
		// Node refuses client_no_context_takeover in an answer when told
		// to keep its context, though a server may always send it (RFC
		// 7692 section 7.1.1.2): no server that pools its decompressors
		// can serve such a client with compression.
		{"client context takeover demanded", `{"perMessageDeflate": {"clientNoContextTakeover": false}}`, noTakeover, "Invalid Sec-WebSocket-Extensions header"},
		{"subprotocols", `{"perMessageDeflate": true, "protocols": ["x", "superchat", "chat"]}`, noTakeover, ""},
	} {
		for _, path := range []string{"/fast", "/std"} {
			t.Run(tc.name+path, func(t *testing.T) {
				out, err := nodePeer(modules, "client", "ws://"+addr+path, tc.config).CombinedOutput()
				var got struct {
					Answer, Protocol, Error string
					Messages, Pongs         int
				}
				if jerr := json.Unmarshal(out, &got); jerr != nil {
					t.Fatalf("node: %v, %v\n%s", err, jerr, out)
				}
				if tc.failed != "" {
					if !strings.Contains(got.Error, tc.failed) {
						t.Fatalf("node: %q; want it to fail with %q", out, tc.failed)
					}
					return
				}
				if err != nil || got.Error != "" {
					t.Fatalf("node: %v: %s", err, out)
				}
				if got.Answer != tc.answer {
					t.Errorf("answer %q; want %q", got.Answer, tc.answer)
				}
				if strings.Contains(tc.config, "protocols") && got.Protocol != "chat" {
					t.Errorf("subprotocol %q; want chat, the server's first choice", got.Protocol)
				}
				if got.Messages != 30 || got.Pongs != 3 {
					t.Errorf("%d messages and %d pongs echoed; want 30 and 3", got.Messages, got.Pongs)
				}
			})
		}
	}
}

// interopMessages are the messages the Dialer sends a peer to echo: every
// length boundary, text that compresses well, random bytes that do not,
// and a run of the same message.
func interopMessages() []received {
	var msgs []received
	rnd := mrand.NewChaCha8([32]byte{1})
	for _, n := range []int{0, 1, 125, 126, 127, 65535, 65536, 1 << 20} {
		b := make([]byte, n)
		rnd.Read(b)
		msgs = append(msgs, received{ws.Text, message(n)}, received{ws.Binary, string(b)})
	}
	for range 5 {
		msgs = append(msgs, received{ws.Text, message(4000)})
	}
	return msgs
}

func testNodeServers(t *testing.T, modules string) {
	d := newDialer(t)
	for _, tc := range []struct {
		name   string
		config string
		answer string // Node's Sec-WebSocket-Extensions answer
		status int    // Node's refusal, if it refuses
	}{
		{"no deflate", `{"perMessageDeflate": false}`, "", 0},
		{"default", `{"perMessageDeflate": true}`, noTakeover, 0},
		{"threshold 0", `{"perMessageDeflate": {"threshold": 0}}`, noTakeover, 0},
		{"no context takeover", `{"perMessageDeflate": {"serverNoContextTakeover": true, "clientNoContextTakeover": true, "threshold": 0}}`, noTakeover, 0},
		// A window the client did not ask for may be answered (RFC 7692
		// section 7.1.2.1); zlib compresses with 9 bits for 8.
		{"server window 8", `{"perMessageDeflate": {"serverMaxWindowBits": 8, "threshold": 0}}`, noTakeover + "; server_max_window_bits=8", 0},
		{"server window 11", `{"perMessageDeflate": {"serverMaxWindowBits": 11, "threshold": 0}}`, noTakeover + "; server_max_window_bits=11", 0},
		{"client context takeover asked", `{"perMessageDeflate": {"clientNoContextTakeover": false, "threshold": 0}}`, noTakeover, 0},
		// Node refuses the handshake, where RFC 7692 section 7.1 has a
		// server decline the offer it cannot accept: one without
		// client_max_window_bits when it wants to name the client's
		// window, one with server_no_context_takeover when told to keep
		// its context.
		{"client window 10", `{"perMessageDeflate": {"clientMaxWindowBits": 10}}`, "", 400},
		{"server context takeover demanded", `{"perMessageDeflate": {"serverNoContextTakeover": false}}`, "", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, stdout := startNodeServer(t, modules, tc.config)
			r := newRecorder()
			o := &ws.Options{Compression: true, CompressionThreshold: 1, MaxMessageSize: 2 << 20}
			c, resp, err := d.Dial(t.Context(), "ws://127.0.0.1:"+port+"/", nil, r, o)
			if tc.status != 0 {
				var herr *ws.HandshakeError
				if !errors.As(err, &herr) || herr.Status != tc.status {
					t.Fatalf("Dial = %v, %v; want a *HandshakeError with status %d", c, err, tc.status)
				}
				return
			}
			if err != nil {
				t.Fatalf("Dial = %v", err)
			}
			if offer := readLine(t, stdout); offer != "offer "+strconv.Quote(noTakeover) {
				t.Errorf("Node got the %s; want %q", offer, noTakeover)
			}
			if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != tc.answer || c.Compressed() != (tc.answer != "") {
				t.Errorf("answer %q, Compressed() = %v; want %q", got, c.Compressed(), tc.answer)
			}
			for i, m := range interopMessages() {
				c.Send(m.op, []byte(m.data))
				if got := r.message(t); got != m {
					t.Fatalf("message %d, %v of %d bytes: echoed as %v of %d", i, m.op, len(m.data), got.op, len(got.data))
				}
			}
			// Node's messages in fragments, compressed each with a sync
			// flush whose tail the last one alone leaves off.
			for _, n := range []int{0, 10, 70000, 100000} {
				c.Send(ws.Text, []byte("send "+strconv.Itoa(n)+" 7"))
				if got := r.message(t); got.op != ws.Text || got.data != strings.Repeat("z", n) {
					t.Fatalf("Node's message of %d bytes in 7 fragments: %v of %d bytes", n, got.op, len(got.data))
				}
			}
			c.Submit(func() { c.Ping([]byte("node?")) })
			if p := recv(t, r.pongs, "pong"); p != "node?" {
				t.Fatalf("pong %q", p)
			}
			c.CloseAsync(ws.CloseNormal, "")
			r.closeCode(t, ws.CloseNormal)
		})
	}
}

// startNodeServer runs peer.js as a server with config until the test
// ends, and returns its port and the rest of its output.
func startNodeServer(t *testing.T, modules, config string) (string, *bufio.Reader) {
	t.Helper()
	cmd := nodePeer(modules, "server", config)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the server exits at the end of its input
		cmd.Wait()
	})
	stdout := bufio.NewReader(out)
	port, ok := strings.CutPrefix(readLine(t, stdout), "listening ")
	if !ok {
		t.Fatalf("node did not listen")
	}
	return port, stdout
}

// readLine reads a line of a peer's output, without its newline.
func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line := make(chan string, 1)
	go func() {
		s, _ := r.ReadString('\n')
		line <- strings.TrimSuffix(s, "\n")
	}()
	select {
	case s := <-line:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no line from the peer")
	}
	return ""
}
