//go:build linux

package evloop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stressDump prints the state of every connection still open on srv.
func stressDump(t *testing.T, srv *Server) {
	for i := range srv.Loops() {
		done := make(chan struct{})
		srv.Submit(i, func() {
			defer close(done)
			srv.EachConn(i, func(c *Conn) {
				fd := int(c.fd)
				inq, _ := unix.IoctlGetInt(fd, unix.SIOCINQ)
				outq, _ := unix.IoctlGetInt(fd, unix.SIOCOUTQ)
				in, _ := c.ls.l.Interest(fd)
				onMore, onDirty := 0, 0
				for _, m := range c.ls.more {
					if m == c {
						onMore++
					}
				}
				// fDirty with onDirty 0 would be a flush lost; with 1, the
				// connection wrote in this iteration, whose flush comes
				// after this task.
				for _, d := range c.ls.dirty {
					if d == c {
						onDirty++
					}
				}
				st := c.Context().(*stressState)
				if ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
					t.Logf("  tcp_info: state %d probes %d backoff %d rto %d unacked %d snd_mss %d rcv_mss %d snd_cwnd %d snd_wnd %d last_data_sent %d last_ack_recv %d",
						ti.State, ti.Probes, ti.Backoff, ti.Rto, ti.Unacked, ti.Snd_mss, ti.Rcv_mss, ti.Snd_cwnd, ti.Snd_wnd, ti.Last_data_sent, ti.Last_ack_recv)
				}
				t.Logf("loop %d fd %d: state %d flags %#x interest %#x outLen %d in %d kernel inq %d outq %d onMore %d onDirty %d paused %t",
					i, fd, c.state, c.flags, in, c.outLen, len(c.in), inq, outq, onMore, onDirty, st.paused)
			})
		})
		<-done
	}
}

type stressState struct {
	resume Timer
	paused bool
}

// stressHandler echoes, pausing and resuming reading at random (with a
// timer, or at once within the same OnData), leaving bytes unconsumed at
// random, and closes after the peer's EOF once the echo is queued.
type stressHandler struct {
	closed atomic.Int64
	bad    atomic.Int64
}

func (h *stressHandler) OnOpen(c *Conn) { c.SetContext(&stressState{}) }

func (h *stressHandler) echo(c *Conn, all bool) {
	n := c.InboundBuffered()
	if !all && n > 1 && rand.IntN(4) == 0 {
		n = rand.IntN(n) // leave some for later
	}
	b, _ := c.Next(n)
	if len(b) > 0 {
		if _, err := c.Write(b); err != nil {
			h.bad.Add(1)
		}
	}
}

func (h *stressHandler) OnData(c *Conn) {
	st := c.Context().(*stressState)
	if st.paused {
		h.bad.Add(1) // OnData while paused
	}
	h.echo(c, false)
	switch rand.IntN(8) {
	case 0: // pause, resume later
		st.paused = true
		c.PauseReading()
		st.resume = c.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, func() {
			st.paused = false
			c.ResumeReading()
			h.echo(c, true) // what was left is ours to handle
		})
	case 1: // pause and resume in the same call
		c.PauseReading()
		c.ResumeReading()
	case 2: // resume twice, pause twice, then resume
		c.PauseReading()
		c.PauseReading()
		c.ResumeReading()
		c.ResumeReading()
	}
}

func (h *stressHandler) OnReadEOF(c *Conn) {
	h.echo(c, true)
	c.Close()
}

func (h *stressHandler) OnClose(c *Conn, err error) {
	if err != nil {
		h.bad.Add(1)
	}
	h.closed.Add(1)
}

func TestStressEdgeTriggered(t *testing.T) {
	const conns = 200
	h := &stressHandler{}
	srv, addr := serve(t, h, Options{Loops: 2, HighWater: 8 << 10, LowWater: 2 << 10, SendBuffer: 32 << 10})
	var wg sync.WaitGroup
	var dumpOnce sync.Once
	errs := make(chan error, conns)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			// The message is made before the dial and the deadline: 200
			// of them at once, under the race detector on a loaded
			// machine, took up to 24 s, which left some echoes 6 s of
			// their 30.
			size := r.IntN(384 << 10)
			if r.IntN(10) == 0 {
				size = r.IntN(4) // tiny, or nothing at all before the FIN
			}
			msg := make([]byte, size)
			for k := 0; k < len(msg); k += 8 {
				var w [8]byte
				binary.LittleEndian.PutUint64(w[:], r.Uint64())
				copy(msg[k:], w[:])
			}
			nc, err := net.DialTimeout("tcp", addr, 30*time.Second) // as long as the echo may take: 200 dials at once on a busy machine
			if err != nil {
				errs <- err
				return
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(30 * time.Second))
			werr := make(chan error, 1)
			go func() {
				wr := rand.New(rand.NewPCG(uint64(i)+1, 7))
				b := msg
				for len(b) > 0 {
					n := min(len(b), 1+wr.IntN(48<<10))
					if _, err := nc.Write(b[:n]); err != nil {
						werr <- err
						return
					}
					b = b[n:]
					if wr.IntN(4) == 0 {
						time.Sleep(time.Duration(wr.IntN(2000)) * time.Microsecond)
					}
				}
				werr <- nc.(*net.TCPConn).CloseWrite()
			}()
			var got bytes.Buffer
			buf := make([]byte, 512+r.IntN(32<<10))
			t0 := time.Now()
			var lastStart, lastRet time.Duration
			var lastN int
			var trace []string
			for {
				lastStart = time.Since(t0)
				n, err := nc.Read(buf)
				lastRet, lastN = time.Since(t0), n
				trace = append(trace, fmt.Sprintf("read %v-%v n=%d err=%v", lastStart, lastRet, n, err))
				got.Write(buf[:n])
				if err == io.EOF {
					break
				}
				if err != nil {
					var cinq int
					if rc, e := nc.(*net.TCPConn).SyscallConn(); e == nil {
						rc.Control(func(fd uintptr) { cinq, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
					}
					dumpOnce.Do(func() {
						if len(trace) > 12 {
							trace = trace[len(trace)-12:]
						}
						for _, l := range trace {
							t.Log("trace:", l)
						}
						stressDump(t, srv)
						port := nc.LocalAddr().(*net.TCPAddr).Port
						out, _ := exec.Command("ss", "-tinoem", fmt.Sprintf("( sport = :%d or dport = :%d )", port, port)).CombinedOutput()
						t.Logf("ss:\n%s", out)
						for k := range srv.Loops() {
							st1 := srv.loops[k].l.Stats()
							time.Sleep(200 * time.Millisecond)
							st2 := srv.loops[k].l.Stats()
							t.Logf("loop %d: %d iterations, %d events in 200ms", k, st2.Iterations-st1.Iterations, st2.Events-st1.Events)
						}
						buf := make([]byte, 1<<20)
						n := runtime.Stack(buf, true)
						os.WriteFile("/tmp/stress_goroutines.txt", buf[:n], 0o644)
					})
					errs <- fmt.Errorf("conn %d: read after %d of %d bytes (client inq %d, local %v; last Read began %v returned %v with %d): %w", i, got.Len(), size, cinq, nc.LocalAddr(), lastStart, lastRet, lastN, err)
					<-werr
					return
				}
				if r.IntN(16) == 0 {
					d := time.Duration(r.IntN(1000)) * time.Microsecond
					st := time.Since(t0)
					time.Sleep(d)
					trace = append(trace, fmt.Sprintf("sleep(%v) %v-%v", d, st, time.Since(t0)))
				}
			}
			if err := <-werr; err != nil {
				errs <- fmt.Errorf("conn %d: write: %w", i, err)
				return
			}
			if !bytes.Equal(got.Bytes(), msg) {
				errs <- fmt.Errorf("conn %d: echo of %d bytes differs (%d received)", i, size, got.Len())
			}
		}()
	}
	wg.Wait()
	close(errs)

	for err := range errs {
		t.Error(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for h.closed.Load() != conns && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := h.closed.Load(); n != conns {
		t.Errorf("%d of %d connections closed on the server", n, conns)
	}
	if n := h.bad.Load(); n != 0 {
		t.Errorf("%d handler anomalies (OnData while paused, write errors, OnClose errors)", n)
	}
}
