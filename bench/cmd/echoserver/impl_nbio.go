package main

import (
	"context"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"
)

func init() { impls["nbio"] = runNbio }

// runNbio registers an OnData handler that writes the data straight back;
// nbio keeps what the socket does not take and flushes it when writable.
func runNbio(ctx context.Context, cfg Config) error {
	logging.SetLevel(logging.LevelError)
	engine := nbio.NewEngine(nbio.Config{
		Network: "tcp",
		Addrs:   []string{cfg.Addr},
		NPoller: cfg.Loops,
	})
	engine.OnData(func(c *nbio.Conn, data []byte) {
		if _, err := c.Write(data); err != nil {
			c.Close()
		}
	})
	if err := engine.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	engine.Stop()
	return nil
}
