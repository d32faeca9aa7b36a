// Command push is a server that pushes the time to every client once a
// second, on evloop's reactor face: each connection has a timer on its
// loop, and no goroutine of its own. A client that does not read is skipped
// rather than buffered for, so memory stays bounded however slow it is.
//
//	go run ./examples/push -addr 127.0.0.1:7001
//	nc 127.0.0.1 7001
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/evloop/evloop"
	"github.com/evloop/evloop/examples/internal/shutdown"
)

// maxBacklog is how many unsent bytes a client may have before its pushes
// are skipped.
const maxBacklog = 64 << 10

type push struct {
	evloop.BaseHandler
	every time.Duration
}

func (p push) OnOpen(c *evloop.Conn) {
	var tick func()
	tick = func() {
		if c.OutboundBuffered() < maxBacklog {
			c.Write(time.Now().AppendFormat(nil, time.RFC3339Nano+"\n"))
		}
		c.AfterFunc(p.every, tick)
	}
	c.AfterFunc(p.every, tick)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7001", "address to listen on")
	every := flag.Duration("every", time.Second, "push interval")
	flag.Parse()
	if *every <= 0 {
		fmt.Fprintln(os.Stderr, "push: -every must be positive")
		os.Exit(2)
	}
	srv, err := evloop.Listen("tcp", *addr, push{every: *every}, evloop.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "push:", err)
		os.Exit(1)
	}
	slog.Info("push: serving", "addr", srv.Addrs()[0].String(), "every", *every)
	shutdown.OnSignal(srv.Shutdown)
}
