package main

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"

	"github.com/evloop/evloop"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPush(t *testing.T) {
	srv, err := evloop.Listen("tcp", "127.0.0.1:0", push{every: 10 * time.Millisecond}, evloop.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	c, err := net.Dial("tcp", srv.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewScanner(c)
	var last time.Time
	for i := range 3 {
		if !r.Scan() {
			t.Fatalf("push %d: %v", i, r.Err())
		}
		ts, err := time.Parse(time.RFC3339Nano, r.Text())
		if err != nil || !ts.After(last) {
			t.Fatalf("push %d: %q, %v", i, r.Text(), err)
		}
		last = ts
	}
}
