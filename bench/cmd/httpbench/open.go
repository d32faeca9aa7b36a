package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/evloop/evloop/bench/internal/proc"
)

// openLoad sends rate requests a second in all for path over conns
// keep-alive connections to addr, each connection at its own even pace,
// for d, and returns the answers per second and the p50 and p99 latency
// in ms. A request sent late because the answer before it came late is
// counted from when it was due, so that a server that falls behind shows
// it, as wrk2 counts; one sent on time, from when it went. Every server
// gets the same load, where wrk's closed load gives a faster server more
// of it (and its own client's queueing in the tail).
func openLoad(addr, path string, conns int, rate float64, d time.Duration) (result, error) {
	every := time.Duration(float64(conns) / rate * float64(time.Second))
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")
	cs := make([]net.Conn, conns)
	for i := range cs {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return result{}, err
		}
		defer c.Close()
		cs[i] = c
	}
	var (
		mu   sync.Mutex
		lat  []float64
		errs = make(chan error, conns)
	)
	begin := time.Now()
	stop := begin.Add(d)
	for i, c := range cs {
		go func() {
			br := bufio.NewReaderSize(c, 4096)
			var mine []float64
			due := begin.Add(every * time.Duration(i) / time.Duration(conns)) // spread evenly
			var err error
			for ; !due.After(stop); due = due.Add(every) {
				start := proc.WaitDue(due)
				if _, err = c.Write(req); err != nil {
					break
				}
				if err = readAnswer(br); err != nil {
					break
				}
				mine = append(mine, float64(time.Since(start).Microseconds())/1000)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
			errs <- err
		}()
	}
	var first error
	for range cs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return result{}, first
	}
	slices.Sort(lat)
	r := result{rps: float64(len(lat)) / time.Since(begin).Seconds()}
	if len(lat) > 0 {
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r, nil
}

// readAnswer reads one answer, framed by Content-Length, and checks that
// it is a 200.
func readAnswer(br *bufio.Reader) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("answer %q", line)
	}
	length := -1
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if name, value, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
			length, err = strconv.Atoi(string(bytes.TrimSpace(value)))
			if err != nil {
				return fmt.Errorf("Content-Length %q", value)
			}
		}
	}
	if length < 0 {
		return fmt.Errorf("an answer without Content-Length")
	}
	_, err = br.Discard(length)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// measureOpen runs an open load against the server cmd runs on addr,
// after a second's warm-up.
func measureOpen(cmd *exec.Cmd, addr string, cfg config, d time.Duration) (result, error) {
	if _, err := openLoad(addr, cfg.path, cfg.conns, cfg.rate, time.Second); err != nil {
		return result{}, err
	}
	before, err := serverCPU(cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	r, err := openLoad(addr, cfg.path, cfg.conns, cfg.rate, d)
	if err != nil {
		return result{}, err
	}
	after, err := serverCPU(cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	r.setCPU(before, after, d)
	return r, nil
}
