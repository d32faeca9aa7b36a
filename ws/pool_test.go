package ws_test

import (
	"bytes"
	"errors"
	"net"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/evloop/evloop/ws"
)

// dialPooled serves h with Options.Workers set to workers (0: on the
// loop), and dials it.
func dialPooled(t *testing.T, h ws.Handler, workers int) *rawConn {
	t.Helper()
	o := &ws.Options{Workers: workers}
	t.Cleanup(o.CloseWorkers) // after the server's shutdown
	return dialRaw(t, serve(t, h, o), "/fast", "")
}

// journal is a pooled handler that echoes with Send and records what
// happened, in order.
type journal struct {
	mu     sync.Mutex
	events []string
	closed chan struct{}
}

func (j *journal) OnOpen(*ws.Conn) {}

func (j *journal) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	j.record("message " + string(data))
	c.Send(op, data)
}

func (j *journal) OnClose(c *ws.Conn, err error) {
	var ce *ws.CloseError
	errors.As(err, &ce)
	j.record("close " + strconv.Itoa(ce.Code))
	close(j.closed)
}

func (j *journal) record(event string) {
	j.mu.Lock()
	j.events = append(j.events, event)
	j.mu.Unlock()
}

// expect checks that the events recorded are want, in order.
func (j *journal) expect(t *testing.T, want ...string) {
	t.Helper()
	j.mu.Lock()
	defer j.mu.Unlock()
	if !slices.Equal(j.events, want) {
		t.Fatalf("events %q; want %q", j.events, want)
	}
}

// Two messages and a close frame in one write, with Workers: the messages
// are handled and answered, in order, before the close frame is acted on.
func TestPooledMessagesBeforeClose(t *testing.T) {
	j := &journal{closed: make(chan struct{})}
	c := dialPooled(t, j, 2)
	var b bytes.Buffer
	frames := &rawConn{t: t, nc: nopConn{&b}}
	frames.frame(0x81, []byte("one"), false)
	frames.frame(0x81, []byte("two"), false)
	frames.frame(0x88, []byte{0x03, 0xe8}, false)
	c.nc.Write(b.Bytes())
	for _, want := range []string{"one", "two"} {
		if b0, p := c.read(); b0 != 0x81 || string(p) != want {
			t.Fatalf("frame %#x %q; want the echo of %q", b0, p, want)
		}
	}
	c.expectClose(1000)
	c.nc.Close()
	recv(t, j.closed, "OnClose")
	j.expect(t, "message one", "message two", "close 1000")
}

// watcher is a pooled handler that reports when the message it was handed
// is collected, and answers "handled".
type watcher struct {
	echo
	freed chan struct{}
}

func (w *watcher) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	runtime.AddCleanup(&data[0], func(freed chan struct{}) { close(freed) }, w.freed)
	c.Send(ws.Text, []byte("handled"))
}

// Once its message was handled, an idle pooled connection does not keep
// it.
func TestPooledIdleHoldsNoMessage(t *testing.T) {
	w := &watcher{freed: make(chan struct{})}
	c := dialPooled(t, w, 1)
	c.frame(0x82, make([]byte, 64<<10), false)
	if b0, p := c.read(); b0 != 0x81 || string(p) != "handled" {
		t.Fatalf("frame %#x %q; want \"handled\"", b0, p)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-w.freed:
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the handled message is still referenced by its idle connection")
		}
	}
}

// slowJournal records the start and end of each message, and ends one
// only once its connection's loop saw the connection closed, so that the
// close comes while the message is on the pool.
type slowJournal struct {
	journal
	started chan struct{}
}

func (j *slowJournal) OnMessage(c *ws.Conn, op ws.Opcode, data []byte) {
	j.record("start " + string(data))
	close(j.started)
	deadline := time.Now().Add(30 * time.Second)
	for !closedOnLoop(c) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	j.record("end " + string(data))
}

// closedOnLoop asks c's loop whether c's connection is closed.
func closedOnLoop(c *ws.Conn) bool {
	closed := make(chan bool, 1)
	if c.Submit(func() { closed <- c.Conn().Closed() }) != nil {
		return true // the loop stopped
	}
	return <-closed
}

// The peer resets the connection, without a close frame, while its message
// is on the pool: OnClose waits for OnMessage to return, and runs last.
func TestPooledCloseWaitsForMessage(t *testing.T) {
	j := &slowJournal{journal{closed: make(chan struct{})}, make(chan struct{})}
	c := dialPooled(t, j, 1)
	c.frame(0x81, []byte("one"), false)
	recv(t, j.started, "OnMessage")
	c.nc.(*net.TCPConn).SetLinger(0) // a reset, seen even while reading waits
	c.nc.Close()
	recv(t, j.closed, "OnClose")
	j.expect(t, "start one", "end one", "close 1006")
}
