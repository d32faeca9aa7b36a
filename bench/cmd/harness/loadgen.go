package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/evloop/evloop/bench/internal/load"
)

// loadSpec is one load run, possibly over several loadgen processes.
type loadSpec struct {
	addr     string
	mode     load.Mode
	conns    int
	size     int
	depth    int
	warmup   time.Duration
	duration time.Duration
	hold     time.Duration // idle
	perProc  int
	perSrc   int
	srcFirst int // the first process's first source address is 127.0.0.srcFirst (counting on past .255)
}

// hooks are called at the edges of the measured window (echo modes) or
// once every connection is up and idle (idle mode).
type hooks struct {
	start, end func()
	idle       func()
}

type lgLine struct {
	event string
	raw   []byte
}

type lgProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan lgLine
	stderr bytes.Buffer
	exited chan struct{}
	err    error
}

func (p *lgProc) next(want string, timeout time.Duration) (lgLine, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				<-p.exited
				return lgLine{}, fmt.Errorf("loadgen ended before %q: %v: %s", want, p.err, strings.TrimSpace(p.stderr.String()))
			}
			if l.event == want {
				return l, nil
			}
		case <-t.C:
			return lgLine{}, fmt.Errorf("no %q from loadgen within %v", want, timeout)
		}
	}
}

// srcAddr is 127.0.0.1 + (n-1), carried into the higher bytes.
func srcAddr(n int) string {
	v := uint32(127<<24) + uint32(n)
	return fmt.Sprintf("%d.%d.%d.%d", v>>24, v>>16&255, v>>8&255, v&255)
}

// runLoad starts ceil(conns/perProc) loadgen processes, each with its own
// source addresses, lets them all connect, starts them together and
// collects their results.
func (h *harness) runLoad(s loadSpec, hk hooks) ([]load.Result, error) {
	nproc := (s.conns + s.perProc - 1) / s.perProc
	srcPerProc := (s.perProc + s.perSrc - 1) / s.perSrc
	connectTimeout := 60 * time.Second
	limit := connectTimeout + s.warmup + s.duration + s.hold + 60*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()

	var procs []*lgProc
	defer func() {
		for _, p := range procs {
			_ = p.stdin.Close()
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
	}()
	for k := 0; k < nproc; k++ {
		n := s.perProc
		if k == nproc-1 {
			n = s.conns - k*s.perProc
		}
		args := append(append([]string{}, h.loadPin...), h.bin("loadgen"),
			"-addr", s.addr, "-mode", s.mode.String(), "-conns", strconv.Itoa(n),
			"-size", strconv.Itoa(s.size), "-depth", strconv.Itoa(s.depth),
			"-warmup", s.warmup.String(), "-duration", s.duration.String(), "-hold", s.hold.String(),
			"-src", srcAddr(s.srcFirst+k*srcPerProc), "-per-src", strconv.Itoa(s.perSrc),
			"-conn-base", strconv.Itoa(k*s.perProc), "-connect-timeout", connectTimeout.String(), "-sync")
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		p := &lgProc{cmd: cmd, lines: make(chan lgLine, 16), exited: make(chan struct{})}
		cmd.Stderr = &p.stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		procs = append(procs, p)
		go func() {
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				var e struct {
					Event string `json:"event"`
				}
				raw := append([]byte(nil), sc.Bytes()...)
				if json.Unmarshal(raw, &e) == nil {
					p.lines <- lgLine{event: e.Event, raw: raw}
				}
			}
			close(p.lines)
			p.err = cmd.Wait()
			close(p.exited)
		}()
	}
	for _, p := range procs {
		if _, err := p.next("ready", connectTimeout+10*time.Second); err != nil {
			return nil, err
		}
	}
	if s.mode == load.Idle {
		if hk.idle != nil {
			hk.idle()
		}
		for _, p := range procs {
			fmt.Fprintln(p.stdin, "close")
		}
	} else {
		for _, p := range procs {
			fmt.Fprintln(p.stdin, "go")
		}
		for i, p := range procs {
			if _, err := p.next("measure-start", s.warmup+30*time.Second); err != nil {
				return nil, err
			}
			if i == 0 && hk.start != nil {
				hk.start()
			}
		}
		for _, p := range procs {
			if _, err := p.next("measure-end", s.duration+30*time.Second); err != nil {
				return nil, err
			}
		}
		if hk.end != nil {
			hk.end()
		}
	}
	var results []load.Result
	for _, p := range procs {
		l, err := p.next("result", 60*time.Second)
		if err != nil {
			return nil, err
		}
		var r load.Result
		if err := json.Unmarshal(l.raw, &r); err != nil {
			return nil, err
		}
		if r.Errors > 0 {
			return nil, fmt.Errorf("loadgen: %d errors, first: %s", r.Errors, r.FirstError)
		}
		results = append(results, r)
	}
	return results, nil
}
