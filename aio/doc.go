// Package aio is evloop's proactor face: the application submits reads and
// writes on net.Conns and collects their completions, and no goroutine
// waits on any one connection. Its API is that of github.com/xtaci/gaio —
// a program written for gaio builds and behaves the same after changing its
// import path to this package — and it runs on evloop's engine: one event
// loop per Watcher, on the same poller as the other faces.
//
// # Conventions
//
// A net.Conn submitted once is delegated to the Watcher: the Watcher works
// on a duplicate of its file descriptor and closes the original, so the
// conn's own Read and Write fail from then on, while socket options set
// before (SetNoDelay, SetLinger, buffer sizes, keep-alive) stay. Only stream
// sockets are taken (TCP, Unix): other conns, and conns that give no raw
// conn, complete with ErrUnsupported.
//
// Operations on one conn complete in the order they were submitted, reads
// among reads and writes among writes, but for one whose deadline passes:
// it completes then, ahead of those submitted before it, as in gaio. The
// application decides when to submit the next read or write, which is all
// the back-pressure there is: nothing is read that no read asked for, and
// nothing is queued that no write submitted.
//
// A Read with a nil buffer reads into the Watcher's swap buffers; the bytes
// it returns stay valid until the next call to WaitIO. A deadline that passes
// completes its operation with ErrDeadline (and whatever it had read or
// written so far). ReadFull fills the whole buffer or fails.
//
// Free closes a conn at once: its pending operations complete with
// io.ErrClosedPipe, as gaio's do. A conn the application forgot — no pending
// operation, no reference left — is closed when the garbage collector finds
// it; GetGC counts those found and closed. A Watcher the application forgot
// is closed the same way, but Close is the way to release it.
//
// WaitIO is meant for one goroutine; Read, Write and the others may be
// called from any.
//
// # Where it differs from gaio
//
// The loop never blocks on the application: completions queue until WaitIO
// takes them, rather than stalling the loop once a channel is full. Reads
// into the swap buffers never fall back to 16-byte reads when a buffer runs
// out; another buffer is taken instead. gaio takes any conn with a raw fd,
// a UDP one too, whose datagrams its reads return as a stream's bytes (an
// empty one as io.EOF); here such a conn completes with ErrUnsupported and
// stays the application's. A Read with an empty, non-nil buffer reads into
// the swap buffers rather than completing with io.EOF. A write that meets
// ENOBUFS (the kernel short of mbufs, on macOS and the BSDs) is tried
// again, as gaio tries it, at the next write readiness, and after 10 ms if
// none comes first, where gaio waits for readiness alone. Free of a conn
// never submitted closes it, where gaio takes it over and keeps its
// duplicate open, the peer seeing no end, until the garbage collector finds
// the conn. gaio runs on Windows too; evloop's engine has epoll and kqueue
// alone, and on a system with neither NewWatcher returns an error.
package aio
