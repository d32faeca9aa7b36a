// Command echo is a TCP echo server on evloop's reactor face.
//
//	go run ./examples/echo -addr 127.0.0.1:7000
//	nc 127.0.0.1 7000
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/evloop/evloop"
)

// echo writes back whatever it reads.
type echo struct{ evloop.BaseHandler }

func (echo) OnData(c *evloop.Conn) {
	b, _ := c.Next(-1)
	c.Write(b)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7000", "address to listen on")
	loops := flag.Int("loops", 0, "event loops (0: one per CPU)")
	reusePort := flag.Bool("reuseport", false, "one listening socket per loop (SO_REUSEPORT)")
	flag.Parse()
	opts := evloop.Options{Loops: *loops}
	if *reusePort {
		opts.LoadBalancing = evloop.ReusePort
	}
	srv, err := evloop.Listen("tcp", *addr, echo{}, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
	slog.Info("echo: serving", "addr", srv.Addrs()[0].String())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	<-sigs
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "echo: shutdown:", err)
	}
}
