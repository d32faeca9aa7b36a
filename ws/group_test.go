package ws_test

import (
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/ws"
	"github.com/gorilla/websocket"
)

// groupClient is a Dialer's handler that joins a Group in OnOpen.
type groupClient struct {
	*recorder
	g *ws.Group
}

func (gc *groupClient) OnOpen(c *ws.Conn) { gc.g.Add(c) }

// A Group whose members come from two servers, a listener's and a
// Dialer's, each with a loop numbered 0, writes to each member on its own
// loop (the race detector watches), and every member gets every message.
func TestGroupMembersOfTwoServers(t *testing.T) {
	g := &ws.Group{}
	_, addr := startServerEngine(t, &echo{group: g}, nil, evloop.Options{Loops: 1})
	s := dialRaw(t, addr, "/fast", "")
	s.frame(0x81, []byte("hi"), false) // its echo proves the Add ran
	if b0, p := s.read(); b0 != 0x81 || string(p) != "hi" {
		t.Fatalf("echo %#x %q", b0, p)
	}
	d := newDialer(t) // one loop: numbered 0 too
	r := &groupClient{recorder: newRecorder(), g: g}
	dial(t, d, "ws://"+addr+"/fast", r, nil) // OnOpen has run when Dial returns
	const n = 20
	for range n {
		done := make(chan struct{})
		g.Broadcast(ws.Text, []byte("to all"), nil, func() { close(done) })
		<-done
	}
	for i := range n {
		if b0, p := s.read(); b0 != 0x81 || string(p) != "to all" {
			t.Fatalf("server member, message %d: %#x %q", i, b0, p)
		}
	}
	for i := range n {
		if m := recv(t, r.msgs, "a broadcast"); m.op != ws.Text || m.data != "to all" {
			t.Fatalf("client member, message %d: %v %q", i, m.op, m.data)
		}
	}
}

// A member whose outbound queue cannot take a broadcast is closed after
// the messages queued before it, rather than left open with one missing,
// and told why: 1008 in a close frame.
func TestBroadcastOutboundFullCloses(t *testing.T) {
	g := &ws.Group{}
	_, addr := startServerEngine(t, &echo{group: g}, nil, evloop.Options{MaxOutbound: 64 << 10, SendBuffer: 8 << 10})
	c := dialRaw(t, addr, "/fast", "")
	if err := c.nc.(*net.TCPConn).SetReadBuffer(8 << 10); err != nil {
		t.Fatal(err)
	}
	c.frame(0x81, []byte("joined"), false)
	if b0, p := c.read(); b0 != 0x81 || string(p) != "joined" {
		t.Fatalf("echo %#x %q", b0, p)
	}
	const n = 8
	for i := range n {
		done := make(chan struct{})
		g.Broadcast(ws.Binary, bytes.Repeat([]byte{byte('a' + i)}, 20000), nil, func() { close(done) })
		<-done
	}
	done := make(chan struct{})
	g.Broadcast(ws.Text, []byte("last"), nil, func() { close(done) })
	<-done
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := c.readUntilOverflow()
	if got == n {
		t.Fatalf("all %d messages fit: the queue never filled", n)
	}
}

// heldMember is a pooled handler in a Group whose messages wait for the
// test to release them.
type heldMember struct {
	echo
	started chan struct{}
	release chan struct{}
}

func (h *heldMember) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	h.started <- struct{}{}
	<-h.release
}

// Two pooled connections of one loop still handling a message when the
// server's Shutdown gave up on them: their OnClose runs once the messages
// are handled, each on its worker, the loop being stopped, and each
// removes its connection from the Group at the same time (the race
// detector watches).
func TestGroupRemoveAfterLoopStopped(t *testing.T) {
	g := &ws.Group{}
	h := &heldMember{echo: echo{group: g}, started: make(chan struct{}, 2), release: make(chan struct{})}
	o := &ws.Options{Workers: 2, CloseTimeout: 100 * time.Millisecond}
	t.Cleanup(o.CloseWorkers)
	srv, addr := startServerEngine(t, h, o, evloop.Options{Loops: 1})
	for range 2 {
		c := dialRaw(t, addr, "/fast", "")
		c.frame(0x82, []byte("held"), false)
	}
	recv(t, h.started, "OnMessage")
	recv(t, h.started, "OnMessage")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	srv.Shutdown(ctx)
	close(h.release)
	h.nextClose(t, 1)
	done := make(chan struct{})
	g.Broadcast(ws.Text, []byte("to nobody"), nil, func() { close(done) })
	recv(t, done, "Broadcast's done")
}

// leavingClient is a Dialer's handler that joins a Group in OnOpen,
// leaves it in OnClose, and hands the test its connection's Server.
type leavingClient struct {
	*recorder
	g    *ws.Group
	srvs chan *evloop.Server
}

func (lc *leavingClient) OnOpen(c *ws.Conn) {
	lc.g.Add(c)
	lc.srvs <- c.Conn().Server()
}

func (lc *leavingClient) OnClose(c *ws.Conn, err error) {
	lc.g.Remove(c)
	lc.recorder.OnClose(c, err)
}

// A Group whose members came from Dialers since closed, and left it,
// holds none of those Dialers' servers (their loops and buffers).
func TestGroupForgetsClosedDialers(t *testing.T) {
	for _, join := range []bool{false, true} {
		g := &ws.Group{}
		addr := serve(t, &echo{}, nil)
		const n = 5
		collected := make(chan struct{}, n)
		for range n {
			d := &ws.Dialer{Engine: evloop.Options{Loops: 1}}
			lc := &leavingClient{recorder: newRecorder(), g: g, srvs: make(chan *evloop.Server, 1)}
			if !join {
				lc.g = &ws.Group{}
			}
			dial(t, d, "ws://"+addr+"/fast", lc, nil)
			runtime.AddCleanup(<-lc.srvs, func(ch chan struct{}) { ch <- struct{}{} }, collected)
			d.Close()
			recv(t, lc.closed, "OnClose")
		}
		g.Broadcast(ws.Text, []byte("to nobody"), nil, nil)
		deadline := time.Now().Add(5 * time.Second)
		for got := 0; got < n; {
			runtime.GC()
			select {
			case <-collected:
				got++
				continue
			case <-time.After(10 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("joined %v: %d of %d closed Dialers' servers collected", join, got, n)
			}
		}
		runtime.KeepAlive(g)
	}
}

// A Group none of whose members takes a broadcast compressed — none
// negotiated permessage-deflate, or their clients' windows
// (server_max_window_bits) are smaller than the message — sends it
// uncompressed and compresses it for nobody: what Broadcast allocates is
// about the frame, not a compressed one besides.
func TestBroadcastCompressesForDeflateMembersOnly(t *testing.T) {
	for _, offer := range []string{
		"", // no compression
		"Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=10\r\n",
	} {
		g := &ws.Group{}
		o := &ws.Options{Compression: true}
		addr := serve(t, &echo{group: g}, o)
		c := dialRaw(t, addr, "/fast", offer)
		c.frame(0x81, []byte("joined"), false)
		if b0, p := c.read(); b0 != 0x81 || string(p) != "joined" {
			t.Fatalf("echo %#x %q", b0, p)
		}
		msg := make([]byte, 1<<20)
		mrand.NewChaCha8([32]byte{}).Read(msg) // deflate makes it no shorter
		got := make(chan []byte)
		go func() {
			_, p := c.read()
			got <- p
		}()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		done := make(chan struct{})
		g.Broadcast(ws.Binary, msg, o, func() { close(done) })
		recv(t, done, "Broadcast's done")
		runtime.ReadMemStats(&after)
		if p := recv(t, got, "the broadcast"); !bytes.Equal(p, msg) {
			t.Fatalf("offer %q: member got %d bytes, not the message", offer, len(p))
		}
		// The frame, and what the member's queue and reader took: a
		// compressed frame besides came to 9 MiB, deflate's buffers included.
		if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
			t.Errorf("offer %q: Broadcast of %d bytes to one member it goes to uncompressed allocated %d bytes; want under 4 MiB", offer, len(msg), n)
		}
	}
}

// Several goroutines broadcast at once, with compression taken by some
// members and not others, while connections join and leave (with a close
// handshake or without): every member that stays gets every message of
// each goroutine, in the order it broadcast them.
func TestBroadcastOrderWhileMembersChurn(t *testing.T) {
	g := &ws.Group{}
	o := &ws.Options{Compression: true, CompressionThreshold: 16}
	_, addr := startServerEngine(t, &echo{group: g}, o, evloop.Options{Loops: 2})
	const senders, per = 3, 200
	// join connects a member and returns what it receives after its echo
	// of "joined", which proves it is in the group.
	join := func(compress bool, got chan<- string) (*websocket.Conn, error) {
		d := &websocket.Dialer{EnableCompression: compress}
		c, _, err := d.Dial("ws://"+addr+"/fast", nil)
		if err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		c.WriteMessage(websocket.TextMessage, []byte("joined"))
		for {
			_, p, err := c.ReadMessage()
			if err != nil {
				c.Close()
				return nil, err
			}
			if string(p) == "joined" {
				break
			}
		}
		go func() {
			defer close(got)
			for {
				_, p, err := c.ReadMessage()
				if err != nil {
					return
				}
				got <- string(p)
			}
		}()
		return c, nil
	}
	var stay []chan string
	for i := range 6 {
		got := make(chan string, senders*per+1)
		c, err := join(i%2 == 0, got)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		stay = append(stay, got)
	}
	stop := make(chan struct{})
	churned := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				churned <- nil
				return
			default:
			}
			c, err := join(i%2 == 0, make(chan string, senders*per+1))
			if err != nil {
				churned <- err
				return
			}
			if i%2 == 0 {
				c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""), time.Now().Add(time.Second))
			}
			c.Close()
		}
	}()
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				g.Broadcast(ws.Text, []byte(fmt.Sprintf("%d %d %s", s, i, strings.Repeat("x", i%40))), o, nil)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-churned; err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	g.Broadcast(ws.Text, []byte("end"), o, func() { close(done) })
	recv(t, done, "Broadcast's done")
	for k, got := range stay {
		next := make([]int, senders)
		for p := range got {
			if p == "end" {
				break
			}
			var s, i int
			fmt.Sscan(p, &s, &i)
			if i != next[s] {
				t.Fatalf("member %d: message %d of goroutine %d after %d", k, i, s, next[s]-1)
			}
			next[s]++
		}
		for s, n := range next {
			if n != per {
				t.Fatalf("member %d: %d messages of goroutine %d, want %d", k, n, s, per)
			}
		}
	}
}

// Broadcast compresses the frame for servers' members as its Options
// say, not as the members' own: the message goes compressed to a member
// opened with a threshold above its length when Broadcast's threshold is
// below it, and the other way round.
func TestBroadcastOptions(t *testing.T) {
	g := &ws.Group{}
	addr := serve(t, &echo{group: g}, &ws.Options{Compression: true, CompressionThreshold: 1 << 20})
	c := dialRaw(t, addr, "/fast", "Sec-WebSocket-Extensions: permessage-deflate\r\n")
	c.frame(0x81, []byte("joined"), false)
	if b0, p := c.read(); b0 != 0x81 || string(p) != "joined" {
		t.Fatalf("echo %#x %q", b0, p)
	}
	// A member that limited the server's window to 512 bytes gets the
	// 1000-byte message as it is, compressed or not for the others.
	small := dialRaw(t, addr, "/fast", "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=9\r\n")
	small.frame(0x81, []byte("joined"), false)
	if b0, p := small.read(); b0 != 0x81 || string(p) != "joined" {
		t.Fatalf("echo %#x %q", b0, p)
	}
	msg := []byte(strings.Repeat("broadcast ", 100))
	for _, tc := range []struct {
		threshold int
		b0        byte
	}{
		{16, 0xc1},   // FIN, RSV1: compressed
		{4096, 0x81}, // FIN: as it is
	} {
		if err := g.Broadcast(ws.Text, msg, &ws.Options{CompressionThreshold: tc.threshold}, nil); err != nil {
			t.Fatalf("Broadcast = %v", err)
		}
		if b0, p := small.read(); b0 != 0x81 || !bytes.Equal(p, msg) {
			t.Fatalf("Broadcast with threshold %d to a member with a 512-byte window: %#x, %d bytes; want it plain", tc.threshold, b0, len(p))
		}
		b0, p := c.read()
		if b0 != tc.b0 {
			t.Fatalf("Broadcast with threshold %d: first byte %#x; want %#x", tc.threshold, b0, tc.b0)
		}
		if b0 == 0xc1 {
			p, _ = io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(p), bytes.NewReader([]byte{0, 0, 0xff, 0xff, 1, 0, 0, 0xff, 0xff}))))
		}
		if !bytes.Equal(p, msg) {
			t.Fatalf("Broadcast with threshold %d: member got %q", tc.threshold, p)
		}
	}
}
