package main

import (
	"context"
	"time"

	"github.com/evloop/evloop"
)

func init() { impls["evloop"] = runEvloop }

// evloopEcho is evloop's reactor handler: OnData takes everything buffered
// and queues it back; the loop writes it at the end of its iteration.
type evloopEcho struct{ evloop.BaseHandler }

func (evloopEcho) OnData(c *evloop.Conn) {
	b, _ := c.Next(-1)
	if _, err := c.Write(b); err != nil {
		c.Close()
	}
}

func runEvloop(ctx context.Context, cfg Config) error {
	srv, err := evloop.Listen("tcp", cfg.Addr, evloopEcho{}, evloop.Options{Loops: cfg.Loops})
	if err != nil {
		return err
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return nil
}
