// Package proactor is the echo server both proactor libraries run in the
// benchmarks: gaio's and evloop's aio, one program for the two APIs.
package proactor

import "net"

// Watcher is the API gaio and evloop's aio share; R is the package's
// OpResult.
type Watcher[R any] interface {
	WaitIO() ([]R, error)
	Read(ctx any, conn net.Conn, buf []byte) error
	Write(ctx any, conn net.Conn, buf []byte) error
	Free(conn net.Conn) error
	Close() error
}

// Result is what the echo loop needs of a result, in either package.
type Result struct {
	Read bool
	Conn net.Conn
	Buf  []byte
	Size int
	Err  error
}

// Echo takes w's completions until it is closed: each read is answered
// with a write of the same bytes (copied: a swap buffer lasts only until
// the next WaitIO), each finished write with the next read.
func Echo[W Watcher[R], R any](w W, conv func(R) Result) {
	var pool bufPool
	for {
		results, err := w.WaitIO()
		if err != nil {
			return // watcher closed
		}
		for _, r := range results {
			res := conv(r)
			if res.Read {
				if res.Err != nil || res.Size == 0 {
					_ = w.Free(res.Conn)
					continue
				}
				out := pool.get(res.Size)
				copy(out, res.Buf[:res.Size])
				if err := w.Write(nil, res.Conn, out); err != nil {
					pool.put(out)
					_ = w.Free(res.Conn)
				}
				continue
			}
			pool.put(res.Buf)
			if res.Err != nil {
				_ = w.Free(res.Conn)
				continue
			}
			if err := w.Read(nil, res.Conn, nil); err != nil {
				_ = w.Free(res.Conn)
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
