package evloop

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"slices"
	"time"

	"github.com/evloop/evloop/internal/loop"
	"github.com/evloop/evloop/internal/poll"
	"github.com/evloop/evloop/internal/sock"
)

// listener is a listening socket registered on one loop.
type listener struct {
	s      *Server
	ls     *loopState
	fd     int
	addr   net.Addr
	closed bool
	lost   bool        // accept found fd not open: its number is not ours to close
	keeps  bool        // one of a ReusePort group: what it accepts stays on its loop
	tls    *tls.Config // a TLS listener's
	file   os.FileInfo // a Unix socket's file as the listener began; nil if none

	// Accept pauses when the process runs out of fds: the listener stays
	// readable, and accepting again at once would spin. It resumes when a
	// connection closes, or after backoff.
	paused  bool
	backoff time.Duration
	retry   loop.TimerID // the backoff's end; zero once it came
}

// acceptConn is sock.Accept, and registerListener the registration of a
// paused listener that resumes; tests replace them to make these fail.
var (
	acceptConn       = sock.Accept
	registerListener = (*loop.Loop).Register
)

// acceptBatch bounds the accepts per readiness event, so that a flood of
// connections does not starve the loop's established ones.
const acceptBatch = 128

// HandleIO accepts the pending connections. It runs on the listener's loop.
func (ln *listener) HandleIO(fd int, ev poll.Flags) {
	s := ln.s
	for range acceptBatch {
		if ln.closed {
			// Closed by the OnOpen of a connection it accepted
			// (UnlistenLoop): its fd's number may be another file's now.
			return
		}
		if !s.reserve() {
			ln.hold()
			return
		}
		nfd, err := acceptConn(ln.fd)
		if err != nil {
			s.unreserve()
		}
		switch {
		case err == nil:
		case errors.Is(err, sock.ErrAgain):
			return
		case sock.IsOutOfFiles(err):
			ln.pause(err)
			return
		case sock.IsTemporary(err):
			// That connection's trouble (it went away before we took it,
			// a firewall refused it), not the listener's: on to the next.
			s.opts.Logger.Debug("evloop: accept dropped a connection", "addr", ln.addr, "err", err)
			continue
		default:
			ln.fail(err)
			return
		}
		ln.backoff = 0
		if ln.retry != 0 {
			ln.ls.l.CancelTimer(ln.retry) // accepting again: no backoff now
			ln.retry = 0
		}
		var remote net.Addr
		if s.opts.LoadBalancing == SourceAddrHash {
			remote = sock.RemoteAddr(nfd)
		}
		target := ln.ls // the kernel chose this loop
		if !ln.keeps {
			target = s.pick(remote)
		}
		target.nconns.Add(1) // reserve counted it in all
		if target == ln.ls {
			target.open(nfd, ln.tls)
			continue
		}
		target.handOff(nfd, ln.tls)
	}
}

// fail stops a listener whose accept failed for a reason of its own,
// neither the connection's nor a shortage of descriptors: its socket no
// longer listens (EINVAL), is not a socket (ENOTSOCK) or not open (EBADF),
// or something unforeseen. Accepting again would fail again, and the
// level-triggered listener would be reported readable at every wait. As
// net/http's Serve returns at the first such error and closes its
// listener, the listener is closed and unlisted (Addrs no longer has it)
// and the error logged once; the other listeners and every connection go
// on. An fd that accept says is not open is not closed again: its number
// may already be another file's. It runs on the listener's loop.
func (ln *listener) fail(err error) {
	s := ln.s
	s.opts.Logger.Error("evloop: accept failed; listener closed", "addr", ln.addr, "err", err)
	ln.lost = sock.IsBadFD(err)
	ln.close()
	s.mu.Lock()
	// A new slice: StopAccepting and Shutdown range over the old one.
	s.listeners = slices.DeleteFunc(slices.Clone(s.listeners), func(l *listener) bool { return l == ln })
	s.mu.Unlock()
}

// pause stops accepting until a connection closes or the backoff ends.
// Failing again before the backoff's end (a close had it resume), it
// waits for that end as it was, and says nothing, as resume does.
func (ln *listener) pause(err error) {
	if !ln.park() {
		return
	}
	if ln.retry == 0 {
		ln.retryLater("evloop: out of file descriptors; accepting paused", err)
	}
}

// hold stops accepting while the server is at Options.MaxConns: clients
// wait in the listen backlog until a connection closes (gone resumes the
// listener). One that closed as the listener paused, before gone could
// see the pause, is made up for here.
func (ln *listener) hold() {
	if !ln.park() {
		return
	}
	s := ln.s
	s.opts.Logger.Debug("evloop: at MaxConns; accepting paused", "addr", ln.addr, "conns", s.conns.Load())
	if s.conns.Load() < int64(s.opts.MaxConns) {
		ln.ls.l.Submit(ln.resume)
	}
}

// park stops accepting for pause and hold: the listener leaves the
// poller and counts as paused, so that a closing connection resumes it
// (gone). It reports false if it was paused or closed already.
func (ln *listener) park() bool {
	if ln.paused || ln.closed {
		return false
	}
	ln.paused = true
	ln.s.paused.Add(1)
	ln.ls.l.Unregister(ln.fd)
	return true
}

// retryLater has a paused listener resume after a backoff: twice the last
// one, from 10 ms up to 1 s.
func (ln *listener) retryLater(msg string, err error) {
	ln.backoff = min(max(2*ln.backoff, 10*time.Millisecond), time.Second)
	ln.s.opts.Logger.Warn(msg, "addr", ln.addr, "err", err, "retry", ln.backoff, "conns", ln.s.conns.Load())
	ln.retry = ln.ls.l.AfterFunc(ln.backoff, ln.retryDue)
}

// retryDue is the backoff's end: the listener tries to resume.
func (ln *listener) retryDue() {
	ln.retry = 0
	ln.resume()
}

// resume accepts again after a pause: at the backoff's end, or sooner when
// a connection closes. A listener the poller will not take back (out of
// memory, say) stays paused. Failing at the backoff's end, it tries again
// after a longer one, with a warning; failing sooner, it waits for the
// backoff's end as it was, and says nothing, so that while connections
// close one by one a warning is logged once a backoff, not once a close.
// It runs on the listener's loop.
func (ln *listener) resume() {
	if !ln.paused || ln.closed {
		return
	}
	if err := registerListener(ln.ls.l, ln.fd, poll.Read, ln); err != nil {
		if ln.retry == 0 {
			ln.retryLater("evloop: resuming accept failed; accepting still paused", err)
		}
		return
	}
	ln.paused = false
	ln.s.paused.Add(-1)
	ln.HandleIO(ln.fd, poll.Readable) // an accept cancels the backoff's timer
}

// close stops the listener for good. It runs on the listener's loop.
func (ln *listener) close() {
	if ln.closed {
		return
	}
	ln.ls.l.CancelTimer(ln.retry)
	if ln.paused {
		ln.paused = false
		ln.s.paused.Add(-1)
	} else {
		ln.ls.l.Unregister(ln.fd)
	}
	ln.closed = true
	if !ln.lost {
		sock.Close(ln.fd)
	}
	ln.removeSocketFile()
}

// socketFile returns the file of a Unix socket listening at addr, nil for
// another address or an abstract socket ("@name").
func socketFile(addr net.Addr) os.FileInfo {
	ua, ok := addr.(*net.UnixAddr)
	if !ok || ua.Name == "" || ua.Name[0] == '@' {
		return nil
	}
	fi, err := os.Lstat(ua.Name)
	if err != nil {
		return nil
	}
	return fi
}

// removeSocketFile removes a Unix socket's file once its listener closed,
// as package net does, if the file is still the one the listener began
// with: a server started meanwhile on the same path (a restart whose new
// process came up first, say) has put its own there, which stays.
func (ln *listener) removeSocketFile() {
	if ln.file == nil {
		return
	}
	name := ln.addr.(*net.UnixAddr).Name
	if fi, err := os.Lstat(name); err == nil && os.SameFile(fi, ln.file) {
		_ = os.Remove(name)
	}
}
