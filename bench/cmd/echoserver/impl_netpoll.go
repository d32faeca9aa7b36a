package main

import (
	"context"

	"time"

	"github.com/cloudwego/netpoll"
)

func init() { impls["netpoll"] = runNetpoll }

// runNetpoll serves with netpoll's EventLoop: OnRequest runs when a
// connection has data, takes all of it without copying (Next) and writes it
// back through the connection's writer (WriteBinary, Flush), then releases
// the read buffer. cfg.Loops sets netpoll's number of pollers.
func runNetpoll(ctx context.Context, cfg Config) error {
	if err := netpoll.Configure(netpoll.Config{PollerNum: cfg.Loops}); err != nil {
		return err
	}
	ln, err := netpoll.CreateListener("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	loop, err := netpoll.NewEventLoop(netpollEcho)
	if err != nil {
		ln.Close()
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- loop.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = loop.Shutdown(sctx)
		return nil
	}
}

func netpollEcho(_ context.Context, c netpoll.Connection) error {
	r := c.Reader()
	n := r.Len()
	if n == 0 {
		return nil
	}
	buf, err := r.Next(n)
	if err != nil {
		return err
	}
	w := c.Writer()
	if _, err := w.WriteBinary(buf); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return r.Release()
}
