package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/evloop/evloop/bench/internal/proc"
)

// waitPort dials addr until it answers, the process exits or the time is
// up.
func waitPort(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("server exited before listening on %s", addr)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listening on %s after %v: %v", addr, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goroutines asks the server's stats listener for its goroutine count.
func goroutines(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0, err
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "goroutines=")
	if !ok {
		return 0, fmt.Errorf("stats: unexpected reply %q", line)
	}
	return strconv.Atoi(v)
}

// server is one running echo server process.
type server struct {
	cmd    *exec.Cmd
	pid    int
	addr   string
	stats  string // "" for servers without a stats listener
	log    *os.File
	exited chan struct{}
	err    error // set when exited is closed
}

func startServer(argv []string, addr, stats string, logf *os.File) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, pid: cmd.Process.Pid, addr: addr, stats: stats, log: logf, exited: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	if err := waitPort(addr, s.exited, 15*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%v%s", err, s.logTail())
	}
	return s, nil
}

// stop sends SIGTERM and waits; a server that has not exited within 5s is
// killed. It reports whether the exit was clean.
func (s *server) stop() error {
	select {
	case <-s.exited:
		return fmt.Errorf("server had already exited: %v%s", s.err, s.logTail())
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if s.err != nil {
			return fmt.Errorf("server exit after SIGTERM: %v%s", s.err, s.logTail())
		}
		return nil
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("server ignored SIGTERM for 5s; killed")
	}
}

func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

func (s *server) logTail() string {
	if s.log == nil {
		return ""
	}
	b, err := os.ReadFile(s.log.Name())
	if err != nil || len(b) == 0 {
		return ""
	}
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return "\nserver log: " + strings.TrimSpace(string(b))
}

// busySeconds is the CPU time of the whole machine spent on anything but
// idling (user, nice, system, irq, softirq and steal, all CPUs), from the
// "cpu" line of /proc/stat.
func busySeconds() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, err
		}
		busy += v
	}
	return float64(busy) / proc.ClockTicks, nil
}
