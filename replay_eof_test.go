//go:build unix

package evloop

import (
	"fmt"
	"io"
	"net"
	"testing"
)

// replayHandler writes the number of each OnReadEOF, and at the first
// replays the EOF and writes "after": with pause, as a protocol that took
// the connection over busy with its bytes would, reading paused and
// resumed on a timer.
type replayHandler struct {
	BaseHandler
	pause bool
	eofs  int
}

func (h *replayHandler) OnData(c *Conn) {}

func (h *replayHandler) OnReadEOF(c *Conn) {
	h.eofs++
	fmt.Fprint(connWriter{c}, h.eofs, " ")
	if h.eofs > 1 {
		c.Close()
		return
	}
	if h.pause {
		c.PauseReading()
		c.AfterFunc(0, c.ResumeReading)
	}
	c.ReplayEOF()
	c.Write([]byte("after "))
}

type connWriter struct{ c *Conn }

func (w connWriter) Write(b []byte) (int, error) { return w.c.Write(b) }

// TestReplayEOF: the peer's EOF, replayed by a handler that paused
// reading, is reported again once reading resumes, and only then; with
// reading not paused it is reported at once, within the call.
func TestReplayEOF(t *testing.T) {
	for _, v := range []struct {
		pause, tls bool
		want       string
	}{
		{true, false, "1 after 2 "},
		{true, true, "1 after 2 "}, // the client's close_notify its EOF
		{false, false, "1 2 "},     // "after": the connection closed
	} {
		t.Run(fmt.Sprintf("pause=%v,tls=%v", v.pause, v.tls), func(t *testing.T) {
			h := &replayHandler{pause: v.pause}
			var c interface {
				net.Conn
				CloseWrite() error
			}
			if v.tls {
				_, addr := serveTLS(t, h, Options{Loops: 1})
				c = dialTLS(t, addr, nil)
			} else {
				_, addr := serve(t, h, Options{Loops: 1})
				c = dial(t, addr).(*net.TCPConn)
			}
			c.CloseWrite()
			if got, err := io.ReadAll(c); err != nil || string(got) != v.want {
				t.Fatalf("read %q, %v; want %q", got, err, v.want)
			}
		})
	}
}
