package main

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"time"
)

func init() { impls["net"] = runNet }

// runNet is the standard library's way: a goroutine per connection, each
// blocked in Read and writing back what it read. (io.Copy(c, c) would splice
// through a pipe pair per connection, three descriptors each, so the loop is
// written out.)
func runNet(ctx context.Context, cfg Config) error {
	runtime.GOMAXPROCS(cfg.Loops)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	go func() {
		<-ctx.Done()
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			time.Sleep(5 * time.Millisecond) // EMFILE and the like: back off
			continue
		}
		mu.Lock()
		if ctx.Err() != nil {
			mu.Unlock()
			c.Close()
			break
		}
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			echoConn(c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
			c.Close()
		}()
	}
	wg.Wait()
	return nil
}

func echoConn(c net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
