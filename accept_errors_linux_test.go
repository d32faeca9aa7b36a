package evloop

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evloop/evloop/internal/loop"
	"github.com/evloop/evloop/internal/poll"
	"golang.org/x/sys/unix"
)

// TestAcceptConnectionErrors: the errors accept(2) passes on for the
// connection it takes — it went away, a firewall refused it, its network
// failed, which the Linux man page says to treat as EAGAIN — are passed
// over without a word above debug, and the next connection is accepted,
// where all but ECONNABORTED and EPROTO were logged as the listener's
// failure.
func TestAcceptConnectionErrors(t *testing.T) {
	errnos := []unix.Errno{
		unix.ECONNABORTED, unix.EPERM, unix.ENETDOWN, unix.EPROTO,
		unix.ENOPROTOOPT, unix.EHOSTDOWN, unix.ENONET, unix.EHOSTUNREACH,
		unix.EOPNOTSUPP, unix.ENETUNREACH,
	}
	saved := acceptConn
	t.Cleanup(func() { acceptConn = saved }) // after the Shutdown below
	acceptConn = func(fd int) (int, error) { // on the listener's loop
		if len(errnos) > 0 {
			e := errnos[0]
			errnos = errnos[1:]
			return -1, os.NewSyscallError("accept4", e)
		}
		return saved(fd)
	}
	var logs syncBuffer
	_, addr := serve(t, &echoHandler{}, Options{Loops: 1, Logger: slogTo(&logs)})
	c := dial(t, addr)
	if got, err := roundTrip(c, []byte("ping")); err != nil || string(got) != "ping" {
		t.Fatalf("echo after accept errors = %q, %v; want ping", got, err)
	}
	if s := logs.String(); s != "" {
		t.Errorf("accept errors of single connections logged:\n%s", s)
	}
}

// TestResumeRegistrationFails: a listener paused for want of descriptors
// that the poller will not take back when it resumes (ENOMEM) stays paused
// and tries again after its backoff, where it stopped accepting for good
// after one log line.
func TestResumeRegistrationFails(t *testing.T) {
	savedAccept, savedRegister := acceptConn, registerListener
	t.Cleanup(func() { acceptConn, registerListener = savedAccept, savedRegister }) // after the Shutdown below
	outOfFiles := true
	acceptConn = func(fd int) (int, error) { // on the listener's loop, as the others
		if outOfFiles {
			outOfFiles = false
			return -1, os.NewSyscallError("accept4", unix.EMFILE)
		}
		return savedAccept(fd)
	}
	refusals := 2
	registerListener = func(l *loop.Loop, fd int, in poll.Interest, h loop.Handler) error {
		if refusals > 0 {
			refusals--
			return os.NewSyscallError("epoll_ctl", unix.ENOMEM)
		}
		return savedRegister(l, fd, in, h)
	}
	var logs syncBuffer
	_, addr := serve(t, &echoHandler{}, Options{Loops: 1, Logger: slogTo(&logs)})
	c := dial(t, addr)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if got, err := roundTrip(c, []byte("ping")); err != nil || string(got) != "ping" {
		t.Fatalf("echo once accepting resumed = %q, %v; want ping\n%s", got, err, logs.String())
	}
	if n := strings.Count(logs.String(), "resuming accept failed"); n != 2 {
		t.Errorf("logged %d failures to resume; want 2:\n%s", n, logs.String())
	}
}

// TestListenerAcceptFails: a listener whose accept fails for a reason of
// its own (EINVAL: its socket no longer listens) is closed and unlisted
// after one error line, as net/http's Serve returns at its first such
// error; the server's other listener and its connections go on. Before,
// the level-triggered listener failed and logged at every iteration of
// its loop. An fd that accept says is not open (EBADF) is not closed
// again: its number may be another file's by then.
func TestListenerAcceptFails(t *testing.T) {
	for _, errno := range []unix.Errno{unix.EINVAL, unix.EBADF, unix.ENOTSOCK} {
		t.Run(errno.Error(), func(t *testing.T) {
			saved := acceptConn
			t.Cleanup(func() { acceptConn = saved }) // after the Shutdown below
			var bad atomic.Int64
			bad.Store(-1)
			var fails atomic.Int32
			acceptConn = func(fd int) (int, error) { // on the listener's loop
				if int64(fd) == bad.Load() {
					fails.Add(1)
					return -1, os.NewSyscallError("accept4", errno)
				}
				return saved(fd)
			}
			var logs syncBuffer
			srv, addr := serve(t, &echoHandler{}, Options{Loops: 1, Logger: slogTo(&logs)})
			other, err := srv.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			c := dial(t, other.String())
			srv.mu.Lock()
			for _, ln := range srv.listeners {
				if ln.addr.String() == addr {
					bad.Store(int64(ln.fd))
				}
			}
			srv.mu.Unlock()

			// The kernel takes the connection into the backlog, and the
			// listener turns readable.
			if nc, err := net.DialTimeout("tcp", addr, 10*time.Second); err == nil {
				nc.Close()
			}
			waitFor(t, "the failed listener unlisted", func() bool { return len(srv.Addrs()) == 1 })
			if a := srv.Addrs(); a[0].String() != other.String() {
				t.Errorf("Addrs after accept failed = %v; want [%s]", a, other)
			}
			// Each round trip is an iteration of the loop, at least.
			for range 20 {
				if got, err := roundTrip(c, []byte("ping")); err != nil || string(got) != "ping" {
					t.Fatalf("echo on the other listener's connection = %q, %v; want ping", got, err)
				}
			}
			if n := fails.Load(); n != 1 {
				t.Errorf("failing accept called %d times; want 1", n)
			}
			if n := strings.Count(logs.String(), "accept failed"); n != 1 {
				t.Errorf("logged %d accept failures; want 1:\n%.2000s", n, logs.String())
			}
			if err := srv.Unlisten(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1).To16(), Port: portOf(t, addr)}); !errors.Is(err, ErrNotListening) {
				t.Errorf("Unlisten of the failed listener = %v; want ErrNotListening", err)
			}
			c2 := dial(t, other.String())
			if got, err := roundTrip(c2, []byte("pong")); err != nil || string(got) != "pong" {
				t.Errorf("echo on a new connection to the other listener = %q, %v; want pong", got, err)
			}
			fd := int(bad.Load())
			listening := listensOn(fd, addr)
			switch {
			case errno == unix.EBADF && !listening:
				t.Errorf("fd %d that accept called not open was closed", fd)
			case errno == unix.EBADF:
				unix.Close(fd) // open all along: accept only said it was not
			case listening:
				t.Errorf("fd %d of the failed listener still open", fd)
			}
		})
	}
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return int(ap.Port())
}

// listensOn reports whether fd is a socket listening on addr (its number
// may have been reused by another fd since the listener's closed).
func listensOn(fd int, addr string) bool {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if err != nil || v == 0 {
		return false
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return false
	}
	la, ok := sa.(*unix.SockaddrInet4)
	return ok && netip.AddrPortFrom(netip.AddrFrom4(la.Addr), uint16(la.Port)).String() == addr
}

// TestResumeWarnsOncePerBackoff: while the poller will not take a paused
// listener back, the connections that close, each of which has the
// listener try to resume, add no warning of their own: one is logged per
// backoff, where each close logged one (and doubled the backoff).
func TestResumeWarnsOncePerBackoff(t *testing.T) {
	savedAccept, savedRegister := acceptConn, registerListener
	t.Cleanup(func() { acceptConn, registerListener = savedAccept, savedRegister }) // after the Shutdown below
	var outOfFiles, refuse atomic.Bool
	acceptConn = func(fd int) (int, error) { // on the listener's loop, as the others
		if outOfFiles.CompareAndSwap(true, false) {
			return -1, os.NewSyscallError("accept4", unix.EMFILE)
		}
		return savedAccept(fd)
	}
	var attempts atomic.Int32
	registerListener = func(l *loop.Loop, fd int, in poll.Interest, h loop.Handler) error {
		attempts.Add(1)
		if refuse.Load() {
			return os.NewSyscallError("epoll_ctl", unix.ENOMEM)
		}
		return savedRegister(l, fd, in, h)
	}
	var logs syncBuffer
	srv, addr := serve(t, &echoHandler{}, Options{Loops: 1, Logger: slogTo(&logs)})
	const n = 64
	conns := dialEchoed(t, addr, n)
	refusing := time.Now()
	refuse.Store(true)
	outOfFiles.Store(true)
	late := dial(t, addr) // its accept fails with EMFILE: the listener pauses
	waitFor(t, "the listener paused", func() bool { return srv.paused.Load() == 1 })
	// Each backoff's end tries again too, so the count may have moved on.
	before := attempts.Load()
	for _, c := range conns {
		c.Close()
	}
	waitFor(t, "a resume for every close", func() bool { return attempts.Load() >= before+n })
	refuse.Store(false)
	refused := time.Since(refusing)
	if got, err := roundTrip(late, []byte("ping")); err != nil || string(got) != "ping" {
		t.Fatalf("echo once accepting resumed = %q, %v; want ping", got, err)
	}
	// A backoff's end that fails logs one, and they come as often as the
	// backoffs, which a loaded machine makes more of by taking longer over
	// the closes; one more for a timer's rounding.
	want := backoffsWithin(refused) + 1
	if w := strings.Count(logs.String(), "resuming accept failed"); w > want {
		t.Errorf("%d closes while resuming failed, for %v, logged %d warnings; want one per backoff, %d at most", n, refused, w, want)
	}
}

// backoffsWithin is how many of a paused listener's backoffs, 10 ms
// doubled up to 1 s, end within d of its pause.
func backoffsWithin(d time.Duration) int {
	n := 0
	for b, sum := 10*time.Millisecond, 10*time.Millisecond; sum <= d; sum += b {
		n++
		b = min(2*b, time.Second)
	}
	return n
}

// TestAcceptStillFailingWarnsOncePerBackoff: while accept goes on failing
// for want of descriptors (ENFILE: the system's, which a close of the
// process's own does not give back), the connections that close, each of
// which has the paused listener try again, add no warning of their own:
// one is logged per backoff, where each close logged one (and doubled the
// backoff).
func TestAcceptStillFailingWarnsOncePerBackoff(t *testing.T) {
	savedAccept := acceptConn
	t.Cleanup(func() { acceptConn = savedAccept }) // after the Shutdown below
	var outOfFiles atomic.Bool
	var attempts atomic.Int32
	acceptConn = func(fd int) (int, error) { // on the listener's loop
		if outOfFiles.Load() {
			attempts.Add(1)
			return -1, os.NewSyscallError("accept4", unix.ENFILE)
		}
		return savedAccept(fd)
	}
	var logs syncBuffer
	srv, addr := serve(t, &echoHandler{}, Options{Loops: 1, Logger: slogTo(&logs)})
	const n = 64
	conns := dialEchoed(t, addr, n)
	failing := time.Now()
	outOfFiles.Store(true)
	late := dial(t, addr) // its accept fails: the listener pauses
	waitFor(t, "the listener paused", func() bool { return srv.paused.Load() == 1 })
	// Each backoff's end tries again too, so the count may have moved on.
	before := attempts.Load()
	for _, c := range conns {
		c.Close()
	}
	waitFor(t, "an accept for every close", func() bool { return attempts.Load() >= before+n })
	outOfFiles.Store(false)
	failed := time.Since(failing)
	if got, err := roundTrip(late, []byte("ping")); err != nil || string(got) != "ping" {
		t.Fatalf("echo once accepting resumed = %q, %v; want ping", got, err)
	}
	// The pause logs one, and each backoff's end that fails one more, as
	// often as the backoffs come (see TestResumeWarnsOncePerBackoff).
	want := 1 + backoffsWithin(failed) + 1
	if w := strings.Count(logs.String(), "out of file descriptors"); w > want {
		t.Errorf("%d closes while accept failed, for %v, logged %d warnings; want one per backoff, %d at most", n, failed, w, want)
	}
}

// dialEchoed dials n clients of an echo server at addr, each answered once.
func dialEchoed(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dial(t, addr)
		if _, err := roundTrip(conns[i], []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	return conns
}
