//go:build unix

package evloop

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
)

// BenchmarkEcho is one connection's ping-pong over loopback: the client
// writes a message and reads its echo, against evloop and against a
// goroutine-per-connection net server in the same process. Allocations are
// the whole process's, client included.
func BenchmarkEcho(b *testing.B) {
	for _, size := range []int{64, 1 << 10, 16 << 10} {
		b.Run(fmt.Sprintf("size=%d/impl=evloop", size), func(b *testing.B) {
			srv, err := Listen("tcp", "127.0.0.1:0", &echoHandler{}, Options{Loops: 1, Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Shutdown(context.Background())
			pingPong(b, srv.Addrs()[0].String(), size)
		})
		b.Run(fmt.Sprintf("size=%d/impl=net", size), func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer c.Close()
						io.Copy(c, c)
					}()
				}
			}()
			pingPong(b, ln.Addr().String(), size)
		})
	}
}

func pingPong(b *testing.B, addr string, size int) {
	{
		{
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			msg := make([]byte, size)
			got := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, got); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkWrite measures queueing small writes and flushing them in one
// writev at the end of the iteration, on the loop.
func BenchmarkWrite(b *testing.B) {
	conns := make(chan *Conn, 1)
	srv, err := Listen("tcp", "127.0.0.1:0", &funcHandler{open: func(c *Conn) { conns <- c }}, Options{Loops: 1, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	client, err := net.Dial("tcp", srv.Addrs()[0].String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	go io.Copy(io.Discard, client)
	c := <-conns
	msg := make([]byte, 128)
	b.SetBytes(int64(len(msg)) * 16)
	b.ReportAllocs()
	done := make(chan struct{})
	var step func()
	n := 0
	step = func() {
		for range 16 {
			c.Write(msg)
		}
		n++
		if n == b.N {
			close(done)
			return
		}
		c.Submit(step)
	}
	b.ResetTimer()
	c.Submit(step)
	<-done
}
