package main

import (
	"context"

	"github.com/evloop/evloop/aio"
	"github.com/evloop/evloop/bench/internal/proactor"
)

func init() { impls["aio"] = runAio }

// runAio is evloop's proactor face running the very program runGaio runs:
// aio is a drop-in for gaio. Its swap buffers are gaio's default size;
// aio takes another buffer when one is full rather than fall back to
// 16-byte reads, so it needs no room for a whole batch.
func runAio(ctx context.Context, cfg Config) error {
	return runProactor(ctx, cfg, aio.NewWatcher,
		func(r aio.OpResult) proactor.Result {
			return proactor.Result{Read: r.Operation == aio.OpRead, Conn: r.Conn, Buf: r.Buffer, Size: r.Size, Err: r.Error}
		})
}
