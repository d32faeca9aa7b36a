//go:build unix

// Command hello-workers is the HTTP/1.1 "Hello, World!" server of
// examples/hello in Ever's worker-thread design: one goroutine owns the
// loop and accepts; when a connection is readable it goes on a queue that N
// worker goroutines pull from; a worker reads, answers and writes, then
// hands the connection back with Emit, and the loop watches it again.
//
// Every fd is watched one-shot, so a connection is never with two workers at
// once, and only the loop goroutine watches, unwatches or closes fds, so a
// closed fd number cannot be reused under a worker's feet.
//
//	go run ./examples/hello-workers -addr 127.0.0.1:8080 -workers 4
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/evloop/evloop/events"
	"github.com/evloop/evloop/examples/internal/hello"
	"golang.org/x/sys/unix"
)

// What a key says about its connection.
type kind uint8

const (
	readable  kind = iota // the one-shot read watch fired
	writable              // the one-shot write watch fired
	wantRead              // a worker is done with it: watch for reading
	wantWrite             // a worker could not write everything: watch for writing
	finished              // a worker is done with it for good: close it
	listening             // the listener is readable
	resume                // time to accept again after running out of fds
)

type key struct {
	fd   int
	kind kind
}

// handBack is what a worker asks of the loop after Handle or Flush.
var handBack = [...]kind{hello.WantRead: wantRead, hello.WantWrite: wantWrite, hello.Done: finished}

type job struct {
	c     *hello.Conn
	flush bool // writable, not readable
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "worker goroutines")
	flag.Parse()
	s, err := newServer(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hello-workers:", err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		s.l.Stop()
	}()
	slog.Info("hello-workers: serving", "addr", s.addr.String(), "workers", *workers)
	if err := s.serve(max(*workers, 1)); err != nil {
		fmt.Fprintln(os.Stderr, "hello-workers:", err)
		os.Exit(1)
	}
}

type server struct {
	l     *events.Loop[key]
	ln    net.Listener
	lfd   int // ln's fd
	addr  net.Addr
	conns map[int]*hello.Conn
}

func newServer(addr string) (*server, error) {
	ln, lfd, err := hello.Listen(addr)
	if err != nil {
		return nil, err
	}
	l, err := events.New[key]()
	if err != nil {
		ln.Close()
		return nil, err
	}
	if err := l.WatchIO(key{fd: lfd, kind: listening}, lfd, events.Read, false); err != nil {
		l.Close()
		ln.Close()
		return nil, err
	}
	return &server{l: l, ln: ln, lfd: lfd, addr: ln.Addr(), conns: make(map[int]*hello.Conn)}, nil
}

// serve runs the loop on the calling goroutine, with workers worker
// goroutines, until the loop is stopped; then it waits for the workers and
// closes every connection and the listener.
func (s *server) serve(workers int) error {
	defer s.ln.Close() // once the loop, closed first, has let go of its fd
	defer s.l.Close()
	jobs := make(chan job, 1024)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(s.l, jobs)
		}()
	}
	listener := key{fd: s.lfd, kind: listening}
	for k := range s.l.Events() {
		c := s.conns[k.fd]
		switch k.kind {
		case listening:
			if s.accept() {
				s.l.Unwatch(listener)
				s.l.WatchTimer(key{kind: resume}, 100*time.Millisecond, 0)
			}
		case resume:
			s.l.WatchIO(listener, s.lfd, events.Read, false)
		case readable, writable:
			jobs <- job{c: c, flush: k.kind == writable}
		case wantRead:
			s.l.WatchIO(key{fd: c.Fd, kind: readable}, c.Fd, events.Read, true)
		case wantWrite:
			s.l.WatchIO(key{fd: c.Fd, kind: writable}, c.Fd, events.Write, true)
		case finished:
			delete(s.conns, c.Fd)
			unix.Close(c.Fd)
		}
	}
	close(jobs)
	wg.Wait() // workers may hold connections: close them only after
	for fd := range s.conns {
		unix.Close(fd)
	}
	return s.l.Err()
}

// work serves connections from jobs and hands each back to the loop.
func work(l *events.Loop[key], jobs <-chan job) {
	buf := make([]byte, 64<<10)
	for j := range jobs {
		var st hello.Status
		if j.flush {
			st = j.c.Flush()
		} else {
			st = j.c.Handle(buf)
		}
		// ErrStopped: the loop is shutting down and closes every fd itself.
		_ = l.Emit(key{fd: j.c.Fd, kind: handBack[st]})
	}
}

// accept takes every pending connection and watches it for reading. It
// reports whether the process ran out of file descriptors, in which case
// the caller pauses the listener, which would otherwise stay readable.
func (s *server) accept() (outOfFds bool) {
	for {
		fd, err := hello.Accept(s.lfd)
		switch {
		case hello.OutOfFiles(err):
			slog.Warn("hello-workers: out of file descriptors; pausing accept", "conns", len(s.conns))
			return true
		case err != nil:
			if !errors.Is(err, unix.EAGAIN) { // EAGAIN: none left
				slog.Error("hello-workers: accept", "err", err)
			}
			return false
		}
		// Send each answer at once, not held back by Nagle's algorithm.
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if err := s.l.WatchIO(key{fd: fd, kind: readable}, fd, events.Read, true); err != nil {
			slog.Error("hello-workers: watch", "err", err)
			unix.Close(fd)
			continue
		}
		s.conns[fd] = &hello.Conn{Fd: fd}
	}
}
