package main

import (
	"bufio"
	"net"
	"sync"
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
