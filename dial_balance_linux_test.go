//go:build linux

package evloop

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// blackhole returns the address of a TCP listener whose accept queue is
// full and never drained: a connect to it stays in SYN_SENT, so a Dial to it
// stays connecting.
func blackhole(t *testing.T) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(fd)
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*unix.SockaddrInet4).Port}).String()
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return addr // the queue is full: SYNs are dropped
		}
		t.Cleanup(func() { c.Close() })
		if i > 64 {
			t.Skip("could not fill the accept queue")
		}
	}
}

// A Conn still being dialed is registered on its loop, so EachConn hands it
// to the application; its Abort or Close ends the dial, and Dial returns
// ErrClosed, where Close returned ErrClosed, as for a closed connection,
// and did nothing: the dial went on, and OnOpen ran if it connected.
func TestEndOfConnectingConnEndsDial(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(c *Conn) error
	}{
		{"Abort", (*Conn).Abort},
		{"Close", (*Conn).Close},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := blackhole(t)
			srv, err := NewServer(&echoHandler{}, Options{Loops: 1, Logger: quietLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			dialed := make(chan error, 1)
			go func() {
				_, err := srv.Dial(ctx, "tcp", addr)
				dialed <- err
			}()
			// Wait until the dialing Conn is registered, then end every Conn
			// of the loop, as an application's "drop all connections" does.
			var ended []error
			for deadline := time.Now().Add(10 * time.Second); len(ended) == 0 && time.Now().Before(deadline); {
				done := make(chan struct{})
				srv.Submit(0, func() {
					srv.EachConn(0, func(c *Conn) { ended = append(ended, tc.end(c)) })
					close(done)
				})
				<-done
				time.Sleep(5 * time.Millisecond)
			}
			if len(ended) == 0 {
				t.Fatal("the dial never showed up in EachConn")
			}
			if ended[0] != nil {
				t.Errorf("%s of a Conn being dialed = %v; want nil", tc.name, ended[0])
			}
			select {
			case err := <-dialed:
				if !errors.Is(err, ErrClosed) {
					t.Errorf("Dial = %v; want ErrClosed", err)
				}
			case <-time.After(3 * time.Second):
				t.Fatalf("Dial did not return 3s after %s of its connecting Conn", tc.name)
			}
		})
	}
}

// loopRecorder reports the loop each connection opens on.
type loopRecorder struct {
	BaseHandler
	opened chan int
}

func (h *loopRecorder) OnOpen(c *Conn) { h.opened <- c.Loop() }

// SourceAddrHash puts one client's connections on one loop, accepted or
// adopted: an IPv4 address hashes alike in its 4- and 16-byte forms.
func TestSourceAddrHashAdoptAndAcceptAgree(t *testing.T) {
	// A plain Go listener whose accepted conns we adopt: their peer is
	// 127.0.0.1, as is every client of the evloop listener.
	gl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer gl.Close()
	mismatches := 0
	const servers = 4
	for range servers {
		h := &loopRecorder{opened: make(chan int, 16)}
		srv, err := NewServer(h, Options{Loops: 8, LoadBalancing: SourceAddrHash, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		addr, err := srv.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		nc, err := net.Dial("tcp4", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		accepted := <-h.opened

		cl, err := net.Dial("tcp4", gl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		sc, err := gl.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if ip := sc.RemoteAddr().(*net.TCPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Fatalf("peer %v", ip)
		}
		if err := srv.Adopt(sc); err != nil {
			t.Fatal(err)
		}
		adopted := <-h.opened
		if adopted != accepted {
			mismatches++
			t.Logf("client 127.0.0.1: accepted on loop %d, adopted on loop %d", accepted, adopted)
		}
		nc.Close()
		cl.Close()
		srv.Close()
	}
	if mismatches > 0 {
		t.Fatalf("%d of %d servers put one client IP's accepted and adopted connections on different loops", mismatches, servers)
	}
}

// PinLoops pins the loops among the CPUs the process may run on: confined
// to the last CPU (the test runs itself again so), its loop is pinned
// there, not to CPU 0.
func TestPinLoopsStaysInAffinityMask(t *testing.T) {
	if os.Getenv("R3_PIN_CHILD") == "1" {
		var allowed unix.CPUSet
		if err := unix.SchedGetaffinity(0, &allowed); err != nil {
			t.Fatal(err)
		}
		srv, err := NewServer(BaseHandler{}, Options{Loops: 1, PinLoops: true, Logger: quietLogger()})
		if err != nil {
			t.Fatalf("NewServer with PinLoops in a process confined to CPUs %v: %v", cpus(allowed), err)
		}
		defer srv.Close()
		got := make(chan unix.CPUSet, 1)
		srv.Submit(0, func() {
			var s unix.CPUSet
			unix.SchedGetaffinity(0, &s)
			got <- s
		})
		pinned := <-got
		for _, c := range cpus(pinned) {
			if !allowed.IsSet(c) {
				t.Fatalf("loop 0 pinned to CPUs %v; the process may run only on %v", cpus(pinned), cpus(allowed))
			}
		}
		return
	}
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	// The child inherits the affinity of the thread that forks it.
	runtime.LockOSThread() // never unlocked: the thread exits with the test's goroutine
	var one unix.CPUSet
	one.Set(runtime.NumCPU() - 1)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPinLoopsStaysInAffinityMask$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "R3_PIN_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child confined to CPU %d: %v\n%s", runtime.NumCPU()-1, err, out)
	}
}

func cpus(s unix.CPUSet) []int {
	var l []int
	for i := range 1024 {
		if s.IsSet(i) {
			l = append(l, i)
		}
	}
	return l
}

// LeastConnections spreads a burst of concurrent Dials over the loops, as
// it does a burst of accepts: a dial counts on its loop from the moment
// the loop is chosen, where it counted only once the loop registered it,
// and 400 simultaneous Dials over 4 loops put about 395 on loop 0.
func TestDialBurstLeastConnections(t *testing.T) {
	_, addr := serve(t, &echoHandler{}, Options{Loops: 1})
	const loops, dials = 4, 400
	client, err := NewServer(BaseHandler{}, Options{Loops: loops, LoadBalancing: LeastConnections, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	perLoop := make([]int, loops)
	start := make(chan struct{})
	for range dials {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c, err := client.Dial(context.Background(), "tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			perLoop[c.Loop()]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	for _, n := range perLoop {
		if n < dials/loops/2 || n > 2*dials/loops {
			t.Fatalf("connections per loop %v after %d simultaneous Dials; want about %d each", perLoop, dials, dials/loops)
		}
	}
}
