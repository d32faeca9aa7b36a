//go:build unix

// Command hello is a single-threaded HTTP/1.1 "Hello, World!" server written
// only with package events: one goroutine owns the listener, every
// connection and the loop, and pulls readiness events by key, as Ever's
// single-thread server does.
//
//	go run ./examples/hello -addr 127.0.0.1:8080
//	curl http://127.0.0.1:8080/
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/evloop/evloop/events"
	"github.com/evloop/evloop/examples/internal/hello"
	"golang.org/x/sys/unix"
)

// key names an event: readiness of an fd in one direction.
type key struct {
	fd    int
	write bool
}

// resumeAccept is the timer that resumes accepting after the process ran
// out of file descriptors.
var resumeAccept = key{fd: -1}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	s, err := newServer(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		s.l.Stop()
	}()
	slog.Info("hello: serving", "addr", s.addr.String(), "design", "single goroutine")
	if err := s.serve(); err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
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
	if err := l.WatchIO(key{fd: lfd}, lfd, events.Read, false); err != nil {
		l.Close()
		ln.Close()
		return nil, err
	}
	return &server{l: l, ln: ln, lfd: lfd, addr: ln.Addr(), conns: make(map[int]*hello.Conn)}, nil
}

// serve runs the loop on the calling goroutine until the loop is stopped,
// then closes every connection and the listener.
func (s *server) serve() error {
	defer s.ln.Close() // once the loop, closed first, has let go of its fd
	defer s.l.Close()
	buf := make([]byte, 64<<10)
	listener := key{fd: s.lfd}
	for k := range s.l.Events() {
		switch k {
		case listener:
			s.accept()
			continue
		case resumeAccept:
			s.l.WatchIO(listener, s.lfd, events.Read, false)
			continue
		}
		c := s.conns[k.fd]
		var st hello.Status
		if k.write {
			st = c.Flush()
		} else {
			st = c.Handle(buf)
		}
		switch st {
		case hello.Done:
			s.close(c)
		case hello.WantWrite:
			// Stop reading until the client takes what it was sent.
			s.l.Unwatch(key{fd: c.Fd})
			s.l.WatchIO(key{fd: c.Fd, write: true}, c.Fd, events.Write, true)
		case hello.WantRead:
			if k.write {
				s.l.WatchIO(key{fd: c.Fd}, c.Fd, events.Read, false)
			}
		}
	}
	for _, c := range s.conns {
		s.close(c)
	}
	return s.l.Err()
}

func (s *server) close(c *hello.Conn) {
	s.l.Unwatch(key{fd: c.Fd})
	s.l.Unwatch(key{fd: c.Fd, write: true})
	delete(s.conns, c.Fd)
	unix.Close(c.Fd)
}

// accept takes every pending connection and watches it for reading.
func (s *server) accept() {
	for {
		fd, err := hello.Accept(s.lfd)
		switch {
		case hello.OutOfFiles(err):
			// The listener stays readable while the backlog is full: pause
			// it, or the loop would spin, and try again in a moment. The
			// connections already open go on being served meanwhile.
			slog.Warn("hello: out of file descriptors; pausing accept", "conns", len(s.conns))
			s.l.Unwatch(key{fd: s.lfd})
			s.l.WatchTimer(resumeAccept, 100*time.Millisecond, 0)
			return
		case err != nil:
			if !errors.Is(err, unix.EAGAIN) { // EAGAIN: none left
				slog.Error("hello: accept", "err", err)
			}
			return
		}
		// Send each answer at once, not held back by Nagle's algorithm.
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if err := s.l.WatchIO(key{fd: fd}, fd, events.Read, false); err != nil {
			slog.Error("hello: watch", "err", err)
			unix.Close(fd)
			continue
		}
		s.conns[fd] = &hello.Conn{Fd: fd}
	}
}
