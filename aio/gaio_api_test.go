package aio_test

import (
	"net"
	"reflect"
	"testing"
	"time"

	gaio "github.com/evloop/evloop/aio"
)

// Every exported identifier of gaio v1.2.22, used as its programs use
// them, with its signatures as gaio spells them: a program written for
// gaio builds against aio once its import path changes, or this file does
// not.
var (
	_ func() (*gaio.Watcher, error)    = gaio.NewWatcher
	_ func(int) (*gaio.Watcher, error) = gaio.NewWatcherSize

	// The methods, promoted from gaio's embedded *watcher, are in the
	// method sets of Watcher and *Watcher.
	_ func(gaio.Watcher) error                                            = gaio.Watcher.Close
	_ func(*gaio.Watcher) (err error)                                     = (*gaio.Watcher).Close
	_ func(*gaio.Watcher) (r []gaio.OpResult, err error)                  = (*gaio.Watcher).WaitIO
	_ func(*gaio.Watcher, interface{}, net.Conn, []byte) error            = (*gaio.Watcher).Read
	_ func(*gaio.Watcher, interface{}, net.Conn, []byte, time.Time) error = (*gaio.Watcher).ReadTimeout
	_ func(*gaio.Watcher, interface{}, net.Conn, []byte, time.Time) error = (*gaio.Watcher).ReadFull
	_ func(*gaio.Watcher, interface{}, net.Conn, []byte) error            = (*gaio.Watcher).Write
	_ func(*gaio.Watcher, interface{}, net.Conn, []byte, time.Time) error = (*gaio.Watcher).WriteTimeout
	_ func(*gaio.Watcher, net.Conn) error                                 = (*gaio.Watcher).Free
	_ func(*gaio.Watcher) (found uint32, closed uint32)                   = (*gaio.Watcher).GetGC
	_ func(*gaio.Watcher, int) (err error)                                = (*gaio.Watcher).SetPollerAffinity
	_ func(*gaio.Watcher, int) (err error)                                = (*gaio.Watcher).SetLoopAffinity
	_ interface {
		WaitIO() ([]gaio.OpResult, error)
	} = gaio.Watcher{}
	_ interface {
		Read(interface{}, net.Conn, []byte) error
	} = (*gaio.Watcher)(nil)
	_ struct{ *gaio.Watcher } // embedded, as servers do
	_ chan gaio.Signal        // gaio's poller hands its loop these
	_ = gaio.Signal{}

	// OpResult, field by field in gaio's order: a conversion from a struct
	// of the same fields compiles only if they are the same.
	_ = gaio.OpResult(struct {
		Operation    gaio.OpType
		Context      interface{}
		Conn         net.Conn
		Buffer       []byte
		IsSwapBuffer bool
		Size         int
		Error        error
	}{})
)

// TestGaioAPI checks the values of gaio's identifiers: its error
// messages, its constants, and that Signal, as gaio's, is not comparable,
// so that code written against aio builds against gaio too.
func TestGaioAPI(t *testing.T) {
	errs := []struct {
		name string
		err  error
		want string
	}{
		{"ErrUnsupported", gaio.ErrUnsupported, "unsupported connection type"},
		{"ErrNoRawConn", gaio.ErrNoRawConn, "net.Conn does implement net.RawConn"},
		{"ErrWatcherClosed", gaio.ErrWatcherClosed, "watcher closed"},
		{"ErrPollerClosed", gaio.ErrPollerClosed, "poller closed"},
		{"ErrConnClosed", gaio.ErrConnClosed, "connection closed"},
		{"ErrDeadline", gaio.ErrDeadline, "operation exceeded deadline"},
		{"ErrEmptyBuffer", gaio.ErrEmptyBuffer, "empty buffer"},
		{"ErrCPUID", gaio.ErrCPUID, "no such core"},
	}
	for _, e := range errs {
		if got := e.err.Error(); got != e.want {
			t.Errorf("%s.Error() = %q; want %q", e.name, got, e.want)
		}
	}
	consts := []struct {
		name      string
		got, want int
	}{
		{"OpRead", int(gaio.OpRead), 0},
		{"OpWrite", int(gaio.OpWrite), 1},
		{"EV_READ", gaio.EV_READ, 0x1},
		{"EV_WRITE", gaio.EV_WRITE, 0x2},
	}
	for _, c := range consts {
		if c.got != c.want {
			t.Errorf("%s = %d; want %d", c.name, c.got, c.want)
		}
	}
	// An untyped constant, as gaio's: it mixes with int8 and uint32 alike.
	var ev int8 = gaio.EV_READ | gaio.EV_WRITE
	var mask uint32 = gaio.EV_WRITE
	if ev != 3 || mask != 2 {
		t.Errorf("EV_READ|EV_WRITE as int8 = %d, EV_WRITE as uint32 = %d; want 3, 2", ev, mask)
	}
	if reflect.TypeFor[gaio.Signal]().Comparable() {
		t.Error("Signal is comparable; gaio's is not")
	}
}
