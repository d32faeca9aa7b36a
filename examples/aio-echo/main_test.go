package main

import (
	"bytes"
	"io"
	"net"
	"sync"
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
