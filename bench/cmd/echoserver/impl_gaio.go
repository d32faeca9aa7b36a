package main

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/evloop/evloop/bench/internal/proactor"
	"github.com/xtaci/gaio"
)

func init() {
	impls["gaio"] = runGaio
	impls["gaio-default"] = runGaioDefault
}

// runGaio is gaio's proactor: the accept loop hands each connection to a
// watcher with a read request; one goroutine per watcher takes completions
// from WaitIO, answers each read with a write of the same bytes and each
// finished write with the next read. Reads use the watcher's shared swap
// buffer (nil buffer), so an idle connection holds no buffer; since that
// buffer is only valid until the next WaitIO and the write is asynchronous,
// the bytes are copied into a pooled buffer that lives until the write
// completes. With -loops N there are N watchers, connections dealt round
// robin.
//
// The swap buffer is gaio's knob for that trade: reads made between two
// WaitIO calls share it, and once it is full, reads fall back to a 16-byte
// buffer per request, so a 1 KiB message then takes 64 reads, writes and
// completions. The default (64 KiB) is full after 64 such messages, which a
// loaded server with hundreds of connections reaches in every cycle; the
// watcher is made with room for a full epoll batch (4,096 events) of 1 KiB
// messages instead. The three buffers are allocated once per watcher and
// only the pages used become resident.
func runGaio(ctx context.Context, cfg Config) error {
	return runProactor(ctx, cfg, func() (*gaio.Watcher, error) { return gaio.NewWatcherSize(gaioSwapSize) }, gaioResult)
}

const gaioSwapSize = 4 << 20

// runGaioDefault is runGaio with gaio's default swap buffers (64 KiB), as
// a program that does not tune them gets.
func runGaioDefault(ctx context.Context, cfg Config) error {
	return runProactor(ctx, cfg, gaio.NewWatcher, gaioResult)
}

func gaioResult(r gaio.OpResult) proactor.Result {
	return proactor.Result{Read: r.Operation == gaio.OpRead, Conn: r.Conn, Buf: r.Buffer, Size: r.Size, Err: r.Error}
}

// runProactor serves echo with cfg.Loops watchers made by newWatcher.
func runProactor[W proactor.Watcher[R], R any](ctx context.Context, cfg Config, newWatcher func() (W, error), conv func(R) proactor.Result) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	watchers := make([]W, cfg.Loops)
	for i := range watchers {
		w, err := newWatcher()
		if err != nil {
			ln.Close()
			return err
		}
		watchers[i] = w
		go proactor.Echo(w, conv)
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for i := 0; ; i++ {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if err := watchers[i%len(watchers)].Read(nil, c, nil); err != nil {
			c.Close()
		}
	}
	for _, w := range watchers {
		w.Close()
	}
	return nil
}
