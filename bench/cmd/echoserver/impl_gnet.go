package main

import (
	"context"

	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/logging"
)

func init() { impls["gnet"] = runGnet }

// gnetEcho is gnet's event handler: OnTraffic takes everything buffered
// and writes it back; gnet's own outbound buffer absorbs short writes.
type gnetEcho struct {
	gnet.BuiltinEventEngine
	booted chan gnet.Engine
}

func (h *gnetEcho) OnBoot(eng gnet.Engine) gnet.Action {
	h.booted <- eng
	return gnet.None
}

func (h *gnetEcho) OnTraffic(c gnet.Conn) gnet.Action {
	buf, err := c.Next(-1)
	if err != nil {
		return gnet.Close
	}
	if _, err := c.Write(buf); err != nil {
		return gnet.Close
	}
	return gnet.None
}

func runGnet(ctx context.Context, cfg Config) error {
	h := &gnetEcho{booted: make(chan gnet.Engine, 1)}
	done := make(chan struct{})
	defer close(done)
	go func() {
		var eng gnet.Engine
		select {
		case eng = <-h.booted:
		case <-done:
			return
		}
		select {
		case <-ctx.Done():
			_ = eng.Stop(context.Background())
		case <-done:
		}
	}()
	return gnet.Run(h, "tcp://"+cfg.Addr,
		gnet.WithMulticore(cfg.Loops > 1),
		gnet.WithNumEventLoop(cfg.Loops),
		gnet.WithLogLevel(logging.ErrorLevel),
	)
}
