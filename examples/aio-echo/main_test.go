package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	gaio "github.com/evloop/evloop/aio"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEcho(t *testing.T) {
	w, err := gaio.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); echoServer(w) }()
	go func() { defer wg.Done(); serve(w, ln) }()
	defer func() {
		ln.Close()
		w.Close()
		wg.Wait()
	}()
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		msg := bytes.Repeat([]byte("echo "), 1000)
		go c.Write(msg)
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("echo: %v", err)
		}
		c.Close()
	}
}

// outOfFiles is a listener whose first Accept fails as one does when the
// process has no file descriptor left.
type outOfFiles struct {
	net.Listener
	failed bool
}

func (l *outOfFiles) Accept() (net.Conn, error) {
	if !l.failed {
		l.failed = true
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// Running out of file descriptors is waited out, as net/http's Server
// waits it out: the server goes on accepting once some are free again.
func TestOutOfFiles(t *testing.T) {
	w, err := gaio.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var serveErr error
	served := make(chan struct{})
	go echoServer(w)
	go func() {
		defer close(served)
		serveErr = serve(w, &outOfFiles{Listener: ln})
	}()
	defer func() {
		ln.Close()
		<-served
		w.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("still there?"))
	got := make([]byte, len("still there?"))
	if _, err := io.ReadFull(c, got); err != nil {
		select {
		case <-served:
			t.Fatalf("serve = %v; want it to go on accepting", serveErr)
		default:
		}
		t.Fatalf("echo: %v", err)
	}
}
