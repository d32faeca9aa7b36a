package main

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/xtaci/gaio"
)

func init() { impls["gaio"] = runGaio }

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
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	watchers := make([]*gaio.Watcher, cfg.Loops)
	for i := range watchers {
		w, err := gaio.NewWatcherSize(gaioSwapSize)
		if err != nil {
			ln.Close()
			return err
		}
		watchers[i] = w
		go gaioLoop(w)
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

const gaioSwapSize = 4 << 20

func gaioLoop(w *gaio.Watcher) {
	var pool bufPool
	for {
		results, err := w.WaitIO()
		if err != nil {
			return // watcher closed
		}
		for _, res := range results {
			switch res.Operation {
			case gaio.OpRead:
				if res.Error != nil || res.Size == 0 {
					_ = w.Free(res.Conn)
					continue
				}
				out := pool.get(res.Size)
				copy(out, res.Buffer[:res.Size])
				if err := w.Write(nil, res.Conn, out); err != nil {
					pool.put(out)
					_ = w.Free(res.Conn)
				}
			case gaio.OpWrite:
				pool.put(res.Buffer)
				if res.Error != nil {
					_ = w.Free(res.Conn)
					continue
				}
				if err := w.Read(nil, res.Conn, nil); err != nil {
					_ = w.Free(res.Conn)
				}
			}
		}
	}
}

// bufPool is a free list of buffers by power-of-two size class, used only
// by the goroutine that owns it.
type bufPool struct {
	free [32][][]byte
}

func sizeClass(n int) int {
	c := 6 // 64 bytes at least
	for 1<<c < n {
		c++
	}
	return c
}

func (p *bufPool) get(n int) []byte {
	c := sizeClass(n)
	if l := len(p.free[c]); l > 0 {
		b := p.free[c][l-1]
		p.free[c] = p.free[c][:l-1]
		return b[:n]
	}
	return make([]byte, n, 1<<c)
}

func (p *bufPool) put(b []byte) {
	c := sizeClass(cap(b))
	if cap(b) != 1<<c || len(p.free[c]) >= 1024 {
		return
	}
	p.free[c] = append(p.free[c], b[:0])
}
