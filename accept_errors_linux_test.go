package evloop

import (
	"os"
	"testing"

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
