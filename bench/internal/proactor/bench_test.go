package proactor

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/evloop/evloop/aio"
	"github.com/xtaci/gaio"
)

// The two proactors side by side, each serving echo with Echo:
//
//	go test -run='^$' -bench=. -benchmem -count=5 ./internal/proactor/

type impl struct {
	name  string
	serve func(tb testing.TB) (addr string, stop func())
}

var impls = []impl{
	{"gaio", func(tb testing.TB) (string, func()) {
		return serve(tb, func() (*gaio.Watcher, error) { return gaio.NewWatcherSize(4 << 20) },
			func(r gaio.OpResult) Result {
				return Result{Read: r.Operation == gaio.OpRead, Conn: r.Conn, Buf: r.Buffer, Size: r.Size, Err: r.Error}
			})
	}},
	{"gaio-default", func(tb testing.TB) (string, func()) {
		return serve(tb, gaio.NewWatcher,
			func(r gaio.OpResult) Result {
				return Result{Read: r.Operation == gaio.OpRead, Conn: r.Conn, Buf: r.Buffer, Size: r.Size, Err: r.Error}
			})
	}},
	{"aio", func(tb testing.TB) (string, func()) {
		return serve(tb, aio.NewWatcher,
			func(r aio.OpResult) Result {
				return Result{Read: r.Operation == aio.OpRead, Conn: r.Conn, Buf: r.Buffer, Size: r.Size, Err: r.Error}
			})
	}},
}

// serve starts an echo server on a watcher; stop closes it.
func serve[W Watcher[R], R any](tb testing.TB, newWatcher func() (W, error), conv func(R) Result) (string, func()) {
	w, err := newWatcher()
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); Echo(w, conv) }()
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			w.Read(nil, c, nil)
		}
	}()
	return ln.Addr().String(), func() {
		ln.Close()
		w.Close()
		wg.Wait()
	}
}

func echoOnce(c net.Conn, out, in []byte) error {
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(out)
		errc <- err
	}()
	if _, err := io.ReadFull(c, in); err != nil {
		return err
	}
	return <-errc
}

// BenchmarkEcho64K sends 64 KiB blocks through the echo server, one
// connection, and reads each back: bytes per second of echo.
func BenchmarkEcho64K(b *testing.B) {
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			addr, stop := im.serve(b)
			defer stop()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			out, in := bytes.Repeat([]byte("0123456789abcdef"), 4096), make([]byte, 64<<10)
			b.SetBytes(int64(len(out)))
			b.ResetTimer()
			for range b.N {
				if err := echoOnce(c, out, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEcho8K connects 8,192 clients at once, each echoing 1 KiB and
// closing: one op is all 8,192.
func BenchmarkEcho8K(b *testing.B) {
	const clients = 8192
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			addr, stop := im.serve(b)
			defer stop()
			out := bytes.Repeat([]byte("x"), 1024)
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				var failed sync.Once
				for range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						c, err := net.Dial("tcp", addr)
						if err == nil {
							err = echoOnce(c, out, make([]byte, len(out)))
							c.Close()
						}
						if err != nil {
							failed.Do(func() { b.Error(err) })
						}
					}()
				}
				wg.Wait()
			}
		})
	}
}
