//go:build unix

package evloop

import (
	"bufio"
	"bytes"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// holdHandler answers lines: "hold" keeps its connection's OnData
// running, calling ServeOthers, until release is closed; any other line
// is echoed. It records what ServeOthers reported when called from the
// handlers of the echoed lines.
type holdHandler struct {
	BaseHandler
	holding chan struct{} // closed once a hold began
	release chan struct{}
	served  atomic.Int64 // ServeOthers calls that reported true

	mu     sync.Mutex
	nested []bool
}

func (h *holdHandler) OnData(c *Conn) {
	b, _ := c.Peek(-1)
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return
		}
		line := string(b[:i])
		b = b[i+1:]
		c.Discard(i + 1)
		if line != "hold" {
			ok := c.ServeOthers() // from inside the hold's: refused
			h.mu.Lock()
			h.nested = append(h.nested, ok)
			h.mu.Unlock()
			c.Write([]byte("echo:" + line + "\n"))
			continue
		}
		c.Write([]byte("held\n"))
		close(h.holding)
		deadline := time.After(20 * time.Second)
	hold:
		for {
			select {
			case <-h.release:
				break hold
			case <-deadline:
				break hold
			default:
			}
			if c.ServeOthers() {
				h.served.Add(1)
			}
			time.Sleep(time.Millisecond)
		}
		c.Write([]byte("done\n"))
	}
}

// TestServeOthers: while one connection's OnData holds the loop, calling
// ServeOthers, the loop's other connections are read, answered and
// accepted; the held connection is not read meanwhile, and the bytes its
// handler has not yet taken, which were in the loop's shared read buffer,
// are intact when it goes on; its own replies go out once it returns.
func TestServeOthers(t *testing.T) {
	h := &holdHandler{holding: make(chan struct{}), release: make(chan struct{})}
	_, addr := serve(t, h, Options{Loops: 1})
	a := dial(t, addr)
	b := dial(t, addr) // accepted before the hold
	if _, err := b.Write([]byte("warm\n")); err != nil {
		t.Fatal(err)
	}
	rb := bufio.NewReader(b)
	if line, err := rb.ReadString('\n'); line != "echo:warm\n" || err != nil {
		t.Fatalf("before the hold: %q, %v", line, err)
	}

	// "after" comes in the same read as "hold": it waits in the shared
	// read buffer while the others are read.
	if _, err := a.Write([]byte("hold\nafter\n")); err != nil {
		t.Fatal(err)
	}
	<-h.holding
	if _, err := a.Write([]byte("more\n")); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		msg := "ping" + string(rune('0'+i)) + "\n"
		if _, err := b.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		if line, err := rb.ReadString('\n'); line != "echo:"+msg || err != nil {
			t.Fatalf("while held: %q, %v", line, err)
		}
	}
	c := dial(t, addr) // accepted during the hold
	if _, err := c.Write([]byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); line != "echo:new\n" || err != nil {
		t.Fatalf("accepted while held: %q, %v", line, err)
	}
	a.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, _ := a.Read(make([]byte, 64)); n != 0 {
		t.Fatalf("the held connection got %d bytes before its handler returned", n)
	}
	if h.served.Load() == 0 {
		t.Fatal("ServeOthers never reported serving")
	}

	close(h.release)
	a.SetReadDeadline(time.Now().Add(10 * time.Second))
	ra := bufio.NewReader(a)
	for _, want := range []string{"held\n", "done\n", "echo:after\n", "echo:more\n"} {
		if line, err := ra.ReadString('\n'); line != want || err != nil {
			t.Fatalf("after the hold: %q, %v; want %q", line, err, want)
		}
	}
	h.mu.Lock()
	nested := slices.Clone(h.nested)
	h.mu.Unlock()
	for i, ok := range nested[1:4] { // the three pings', then "new"'s
		if ok {
			t.Errorf("ServeOthers from a handler it ran (line %d) reported true", i)
		}
	}
	if !nested[0] {
		// "warm"'s call came from an ordinary OnData: it served.
		t.Error("ServeOthers from an ordinary handler reported false")
	}
}

// TestServeOthersClosed: ServeOthers on a closed connection does nothing.
func TestServeOthersClosed(t *testing.T) {
	got := make(chan bool, 1)
	h := &funcHandler{data: func(c *Conn) {
		c.Next(-1)
		c.Abort()
		got <- c.ServeOthers()
	}}
	_, addr := serve(t, h, Options{Loops: 1})
	conn := dial(t, addr)
	conn.Write([]byte("x"))
	if <-got {
		t.Error("ServeOthers on a closed connection reported true")
	}
}

// TestServeOthersFromFlush: ServeOthers called while the iteration's
// writes are flushed (from OnBackPressure, once a connection's queue
// drained) reads the others as from a handler; one whose read filled
// the buffer is read on at once, not when some other event wakes the
// loop.
func TestServeOthersFromFlush(t *testing.T) {
	const size = 100 << 10
	var read atomic.Int64
	hold, held := make(chan struct{}), make(chan struct{})
	var holder atomic.Pointer[Conn]
	h := &funcHandler{
		data: func(c *Conn) {
			if holder.Load() == nil {
				holder.Store(c)
				c.Discard(c.InboundBuffered())
				c.Write(make([]byte, 100)) // past HighWater: drained in the flush
				return
			}
			read.Add(int64(c.Discard(c.InboundBuffered())))
		},
		bp: func(c *Conn, paused bool) {
			if paused || c != holder.Load() {
				return
			}
			close(held)
			<-hold
			deadline := time.Now().Add(10 * time.Second)
			for read.Load() == 0 && time.Now().Before(deadline) {
				c.ServeOthers()
				time.Sleep(time.Millisecond)
			}
		},
	}
	_, addr := serve(t, h, Options{Loops: 1, HighWater: 50})
	a := dial(t, addr)
	if _, err := a.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	<-held
	b := dial(t, addr)
	if _, err := b.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // all of it in b's socket at the server
	close(hold)
	deadline := time.Now().Add(10 * time.Second)
	for read.Load() < size && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := read.Load(); n != size {
		t.Fatalf("read %d bytes of the other connection's %d", n, size)
	}
}

// TestServeOthersPausedReset: a connection whose reading is paused,
// reset by its peer while its handler calls ServeOthers, is closed once
// the handler returns, as when the reset comes between handlers: the
// error ServeOthers kept for it is not lost.
func TestServeOthersPausedReset(t *testing.T) {
	holding, release := make(chan struct{}), make(chan struct{})
	closed := make(chan error, 1)
	h := &funcHandler{
		data: func(c *Conn) {
			c.Discard(c.InboundBuffered())
			c.PauseReading()
			close(holding)
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				select {
				case <-release:
					return
				default:
				}
				c.ServeOthers()
				time.Sleep(time.Millisecond)
			}
		},
		close: func(c *Conn, err error) { closed <- err },
	}
	_, addr := serve(t, h, Options{Loops: 1})
	a := dial(t, addr)
	if _, err := a.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	<-holding
	a.(*net.TCPConn).SetLinger(0)
	a.Close()                         // a reset
	time.Sleep(50 * time.Millisecond) // reported while the handler serves the others
	close(release)
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("the connection reset while its handler served the others was not closed")
	}
}
