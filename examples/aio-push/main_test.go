package main

import (
	"bufio"
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

func TestPush(t *testing.T) {
	w, err := gaio.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conns, stop := make(chan net.Conn), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); push(w, conns, 10*time.Millisecond, stop) }()
	defer func() {
		close(stop)
		wg.Wait()
		w.Close()
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		conns <- s
		clients = append(clients, c)
	}
	for _, c := range clients {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		for range 3 {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if _, err := time.Parse(time.RFC3339Nano, line[:len(line)-1]); err != nil {
				t.Fatalf("pushed %q: %v", line, err)
			}
		}
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
	conns, stop := make(chan net.Conn), make(chan struct{})
	var acceptErr error
	accepted := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); push(w, conns, 10*time.Millisecond, stop) }()
	go func() {
		defer close(accepted)
		acceptErr = accept(&outOfFiles{Listener: ln}, conns)
	}()
	defer func() {
		ln.Close()
		<-accepted
		close(stop)
		wg.Wait()
		w.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		select {
		case <-accepted:
			t.Fatalf("accept = %v; want it to go on accepting", acceptErr)
		default:
		}
		t.Fatalf("push: %v", err)
	}
}
