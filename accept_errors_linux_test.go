package evloop

import (
	"os"
	"strings"
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
