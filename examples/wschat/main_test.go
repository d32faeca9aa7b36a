package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/testpeer"
	"github.com/gorilla/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T) string {
	t.Helper()
	srv := newServer()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return ln.Addr().String()
}

// readUntil reads messages until one contains want.
func readUntil(t *testing.T, c *websocket.Conn, want string) {
	t.Helper()
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %q: %v", want, err)
		}
		if strings.Contains(string(msg), want) {
			return
		}
	}
}

// join enters the room at addr and reads until its own joining is
// announced, with wait for that and the reads after it.
func join(t *testing.T, addr string, wait time.Duration) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(wait))
	readUntil(t, c, "joined")
	return c
}

func TestChat(t *testing.T) {
	addr := start(t)
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "new WebSocket") {
		t.Fatalf("page: %d", resp.StatusCode)
	}
	var clients []*websocket.Conn
	for range 3 {
		clients = append(clients, join(t, addr, 10*time.Second))
	}
	clients[0].WriteMessage(websocket.TextMessage, []byte("hello, room"))
	for _, c := range clients {
		readUntil(t, c, ": hello, room")
	}
}

// A member's message shows as one line after its name: line breaks and
// the like in it are spaces, so that it cannot fake another line. Before,
// "hi\n* guest2 left" showed the room saying guest2 had left.
func TestMessageIsOneLine(t *testing.T) {
	addr := start(t)
	c := join(t, addr, 10*time.Second)
	for _, tc := range []struct{ send, want string }{
		{"hi\n* guest2 left", "guest1: hi * guest2 left"},
		{"a\r\nb\tc\x00d\u0085e", "guest1: a  b c d e"},
		{"x\u2028y\u2029z", "guest1: x y z"},
		{"abc\u202edef\u2066g\u2069", "guest1: abc def g "},
		{"ünïcödé, 世界 ✓", "guest1: ünïcödé, 世界 ✓"},
	} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(tc.send)); err != nil {
			t.Fatal(err)
		}
		_, got, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("sent %q: the room shows %q; want %q", tc.send, got, tc.want)
		}
	}
}

// The npm package ws, in Node, chats with a Go client.
func TestNodeClient(t *testing.T) {
	modules := testpeer.NodeModules(t, "ws@8")
	addr := start(t)
	script := `
const WebSocket = require("ws");
const ws = new WebSocket(process.argv[1], {perMessageDeflate: true});
ws.on("open", () => ws.send("hi from node " + "x".repeat(200)));
ws.on("message", (data) => {
  const s = data.toString();
  if (s.includes(": hi from node")) { console.log("ok", ws.extensions); ws.close(1000); }
});
ws.on("close", (code) => process.exit(code === 1000 ? 0 : 1));
ws.on("error", (e) => { console.error(e); process.exit(2); });
setTimeout(() => process.exit(3), 10000);
`
	goClient, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer goClient.Close()
	goClient.SetReadDeadline(time.Now().Add(10 * time.Second))
	cmd := exec.Command("node", "-e", script, "ws://"+addr+"/ws")
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok") || !strings.Contains(string(out), "permessage-deflate") {
		t.Fatalf("node: %v\n%s", err, out)
	}
	readUntil(t, goClient, ": hi from node")
}

// A headless Chromium opens the page, whose script connects to the room.
func TestChromium(t *testing.T) {
	browser := testpeer.Chromium()
	if browser == "" {
		t.Skip("chromium not installed")
	}
	addr := start(t)
	watcher := join(t, addr, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=5000", "--dump-dom", "http://"+addr+"/")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	dom := string(out)
	if !strings.Contains(dom, `id="status" class="sys">connected<`) || !strings.Contains(dom, "guest2 joined") {
		t.Fatalf("the page did not connect:\n%s", dom)
	}
	// The watcher saw the browser join.
	readUntil(t, watcher, "guest2 joined")
}

// A member that does not read is dropped once its backlog passes
// maxBacklog, rather than buffered for without end, and the others go on
// chatting.
func TestSlowMemberDropped(t *testing.T) {
	addr := start(t)
	// The kernel's buffers for the slow member are kept small, so that what
	// they hold counts for little beside the backlog.
	d := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return c, err
	}}
	slow, _, err := d.Dial("ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	readUntil(t, slow, "guest1 joined")
	talker, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer talker.Close()
	talker.SetReadDeadline(time.Now().Add(30 * time.Second))
	talker.SetWriteDeadline(time.Now().Add(30 * time.Second))
	// Four times the backlog, past what the kernel's buffers add to it.
	const n = 4 * maxBacklog / (60 << 10)
	msg := strings.Repeat("x", 60<<10)
	go func() {
		for i := range n {
			if talker.WriteMessage(websocket.TextMessage, []byte(strconv.Itoa(i)+msg)) != nil {
				return
			}
		}
	}()
	readUntil(t, talker, ": "+strconv.Itoa(n-1)+"x") // every message went round
	slow.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := 0
	for {
		_, m, err := slow.ReadMessage()
		if err != nil {
			if got == n {
				t.Fatalf("slow member read all %d messages, then %v; want it dropped", n, err)
			}
			return
		}
		if strings.HasPrefix(string(m), "guest2: ") {
			got++
		}
	}
}
